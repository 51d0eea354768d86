"""node-pool documents against each Cozystack release's own schemas.

Cozystack's tenant Kubernetes application requires fields of every node
group (``ephemeralStorage`` up to v1.3.x, ``diskSize`` from v1.4.0, ...), and
Helm validates ``values.schema.json`` without filling defaults in. So every
document ``pciname node-pool`` (library, CLI, gRPC) generates is validated
here, as given, against a STRICT copy of that release's upstream schema (the
vendored inputs of the extraction, tests/cozystack_util.py): no unknown
field anywhere, no default relied on. For every release pciname knows, not
a sample; KubernetesNodes objects against that app's schema (v1.6.0+).
"""

from __future__ import annotations

import copy
import json

import grpc
import pytest
import yaml
from hypothesis import given, settings, strategies as st

import pciname
from pciname.cli import main
from pciname.client import RemoteInvalidArgument
from pciname.cozystack import releases as cozystack
from pciname.cozystack.node_pool import node_pool
from pciname.errors import PcinameError, UnknownCozystackRelease
from pciname.server._proto import pciname_pb2 as pb
from tests import cozystack_util as upstream
from tests.cli_run import pciname as run

A10 = "nvidia.com/GA102GL_A10"
T4 = "nvidia.com/TU104GL_TESLA_T4"

TAGS = upstream.tags()
NEWEST = TAGS[-1]
NODES_TAGS = [t for t in TAGS if upstream.nodes_schema(t) is not None]
NO_NODES_TAGS = [t for t in TAGS if upstream.nodes_schema(t) is None]


def errors_of(values, tag=NEWEST) -> list[str]:
    return upstream.errors_of(values, tag)


def assert_valid(values, tag=NEWEST) -> None:
    assert errors_of(values, tag) == []


def nodes_errors(spec, tag=NEWEST) -> list[str]:
    return upstream.errors_of(spec, tag, "kubernetes-nodes")


def disk_of(tag: str) -> str:
    """What the release's own schema calls a node's disk."""
    fields = upstream.values_schema(tag)["properties"]["nodeGroups"]["additionalProperties"]["properties"]
    (disk,) = [f for f in ("diskSize", "ephemeralStorage") if f in fields]
    return disk


def default_groups(tag: str):
    """The schema's own default nodeGroups (md0), or a md0 group made from
    its field defaults where the schema has no example group (v1.6.0+)."""
    node_groups = upstream.values_schema(tag)["properties"]["nodeGroups"]
    if node_groups.get("default"):
        return copy.deepcopy(node_groups["default"])
    group = node_pool("md0", [(T4, 1)], cozystack=tag, roles=["ingress-nginx"]).data["nodeGroups"]
    return group


def merge_patch(target, patch):
    """RFC 7386 JSON merge patch, as ``kubectl patch --type merge`` applies it."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    out = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            out.pop(key, None)
        else:
            out[key] = merge_patch(out.get(key), value)
    return out


# -- each release's schema and the facts taken from it --------------------------------------


def test_every_release_is_known_and_the_disk_field_moved_in_v1_4_0():
    assert list(cozystack.releases()) == TAGS and TAGS[0] == "v1.0.0"
    for tag in TAGS:
        expected = "ephemeralStorage" if cozystack._key(tag) < (1, 4, 0) else "diskSize"
        assert disk_of(tag) == expected == cozystack.get_release(tag).disk_field, tag


@pytest.mark.parametrize("tag", TAGS)
def test_facts_are_the_schema_defaults(tag):
    group_schema = upstream.values_schema(tag)["properties"]["nodeGroups"]["additionalProperties"]
    properties = group_schema["properties"]
    release = cozystack.get_release(tag)
    defaults = release.defaults()
    assert properties[defaults.disk_field]["default"] == defaults.disk_size
    assert properties["instanceType"]["default"] == defaults.instance_type
    assert properties["maxReplicas"]["default"] == defaults.max_replicas
    assert properties["minReplicas"]["default"] == defaults.min_replicas
    assert sorted(group_schema["required"]) == sorted(release.required)
    assert set(release.fields) == set(properties)
    for quantity in (properties[defaults.disk_field], *properties["resources"]["properties"].values()):
        assert quantity["pattern"] == cozystack.QUANTITY_PATTERN
    md0 = upstream.values_schema(tag)["properties"]["nodeGroups"].get("default", {}).get("md0")
    if md0 is not None:  # the schema's own example group passes the strict copy
        assert (md0[defaults.disk_field], md0["instanceType"], md0["maxReplicas"], md0["minReplicas"]) == (
            defaults.disk_size,
            defaults.instance_type,
            defaults.max_replicas,
            defaults.min_replicas,
        )
        assert_valid({"nodeGroups": {"md0": md0}}, tag)


@pytest.mark.parametrize("tag", TAGS)
def test_the_issue_example_validates_for_every_release(tag, capsys):
    """`pciname node-pool gpu 10de:2236=2 --cozystack TAG` validates against
    TAG's own node-group schema, made strict."""
    code, out, err = run("node-pool", "gpu", "10de:2236=2", "--cozystack", tag)
    assert (code, err) == (0, "")
    values = yaml.safe_load(out)
    assert_valid(values, tag)
    group = values["nodeGroups"]["gpu"]
    assert group[disk_of(tag)] == "20Gi" and group["gpus"] == [{"name": A10}] * 2
    assert ("resources" in group) == ("resources" in cozystack.get_release(tag).required)
    # ... and no other release's disk field; the other one fails this release.
    other = "diskSize" if disk_of(tag) == "ephemeralStorage" else "ephemeralStorage"
    renamed = copy.deepcopy(values)
    renamed["nodeGroups"]["gpu"][other] = renamed["nodeGroups"]["gpu"].pop(disk_of(tag))
    assert any(other in e for e in errors_of(renamed, tag))


@pytest.mark.parametrize("tag", NODES_TAGS)
def test_kubernetes_nodes_validates_for_every_release_with_the_app(tag, capsys):
    code, out, err = run(
        "node-pool",
        "gpu",
        "10de:2236=2",
        "--cozystack",
        tag,
        "--format",
        "kubernetes-nodes",
        "--cluster",
        "demo",
    )
    assert code == 0
    app = cozystack.get_release(tag).kubernetes_nodes
    assert ("app-not-installed" in err) == (not app.installed_by_iaas_bundle)
    document = yaml.safe_load(out)
    assert document["apiVersion"] == "apps.cozystack.io/v1alpha1" and document["kind"] == "KubernetesNodes"
    assert document["metadata"] == {"name": "demo-gpu"}
    assert document["spec"]["cluster"] == "demo" and document["spec"]["gpus"] == [{"name": A10}] * 2
    assert nodes_errors(document["spec"], tag) == []
    # With every field set too.
    code, out, _ = run(
        "node-pool",
        "gpu",
        "10de:2236",
        "--cozystack",
        tag,
        "--format",
        "kubernetes-nodes",
        "--cluster",
        "demo",
        "--cpu",
        "4",
        "--memory",
        "16Gi",
        "--role",
        "gpu",
        "--disk-size",
        "50Gi",
        "--instance-type",
        "u1.xlarge",
        "--min-replicas",
        "1",
        "--max-replicas",
        "2",
    )
    spec = yaml.safe_load(out)["spec"]
    assert spec["diskSize"] == "50Gi" and spec["resources"] == {"cpu": "4", "memory": "16Gi"}
    assert nodes_errors(spec, tag) == []
    # The patch of that object is its spec, which merges into it.
    code, out, _ = run(
        "node-pool",
        "gpu",
        "10de:2236",
        "--cozystack",
        tag,
        "--format",
        "patch",
        "--cluster",
        "demo",
        "--fragment",
    )
    assert json.loads(out) == {"spec": {"gpus": [{"name": A10}]}}
    assert nodes_errors(merge_patch(spec, json.loads(out)["spec"]), tag) == []


def test_kubernetes_nodes_facts_are_cozystack_code():
    app = cozystack.get_release(NODES_TAGS[0]).kubernetes_nodes
    assert (app.api_version, app.kind, app.plural, app.release_prefix) == (
        "apps.cozystack.io/v1alpha1",
        "KubernetesNodes",
        "kubernetesnodeses",
        "kubernetes-nodes-",
    )
    assert NODES_TAGS[0] == "v1.6.0"


@pytest.mark.parametrize("tag", NO_NODES_TAGS[-1:] + NO_NODES_TAGS[:1])
def test_kubernetes_nodes_before_the_app_is_one_line_exit_2(tag, capsys):
    code, out, err = run(
        "node-pool", "gpu", "10de:2236", "--cozystack", tag, "--format", "kubernetes-nodes", "--cluster", "demo"
    )
    assert (code, out) == (2, "")
    assert (
        err
        == f"pciname: error: Cozystack {tag} has no KubernetesNodes application (from v1.6.0): use format values or patch, a node group of the Kubernetes application\n"
    )


@pytest.mark.parametrize("tag", TAGS)
def test_cozystack_profile_implies_its_release_and_its_plugin(tag, capsys):
    release = cozystack.get_release(tag)
    via_profile = run("node-pool", "gpu", "10de:2941", "-p", f"cozystack@{tag}")
    via_flag = run("node-pool", "gpu", "10de:2941", "--cozystack", tag)
    via_plugin = run(
        "node-pool", "gpu", "10de:2941", "-p", f"v{release.plugin_release.lstrip('v')}", "--cozystack", tag
    )
    assert via_profile == via_flag == via_plugin
    assert_valid(yaml.safe_load(via_flag[1]), tag)


def test_without_cozystack_the_output_is_the_newest_release(capsys):
    assert run("node-pool", "gpu", "10de:2236=2") == run(
        "node-pool", "gpu", "10de:2236=2", "--cozystack", NEWEST, "-p", "latest"
    )
    assert cozystack.newest().version == NEWEST


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--cozystack", "1.9"], "malformed Cozystack version '1.9': use vX.Y.Z, v1.0.0 to " + NEWEST + ", or latest"),
        (["--cozystack", "v9.0.0"], "unknown Cozystack release 'v9.0.0': pciname knows v1.0.0 to " + NEWEST),
        (
            ["--cozystack", "v1.4.0", "-p", "cozystack@v1.3.0"],
            "profile cozystack@v1.3.0 is Cozystack v1.3.0, but Cozystack v1.4.0 was asked for",
        ),
        (["--cluster", "demo"], "--cluster goes with --format kubernetes-nodes or patch"),
        (["--format", "kubernetes-nodes"], "--format kubernetes-nodes needs --cluster NAME"),
        (["--format", "kubernetes-nodes", "--cluster", "Demo"], "cluster 'Demo' is not a name"),
        (["--format", "kubernetes-nodes", "--cluster", "d" * 40], "has more than 53 characters"),
    ],
)
def test_cozystack_usage_errors(capsys, argv, message):
    code, out, err = run("node-pool", "gpu", "10de:2236", *argv)
    assert (code, out) == (2, "")
    assert message in err and len(err.strip().splitlines()) == 1


def test_library_release_errors():
    with pytest.raises(UnknownCozystackRelease, match="v1.0.0 to"):
        node_pool("gpu", [(A10, 1)], cozystack="v0.9.0")
    with pytest.raises(PcinameError, match="malformed"):
        node_pool("gpu", [(A10, 1)], cozystack="one")
    assert pciname.resolve("10de:2941", "cozystack@v1.3.0").resource_name == "nvidia.com/GB100_GB200_SKU"
    assert pciname.resolve("10de:2941", "cozystack@latest").resource_name == "nvidia.com/GB100_HGX_GB200"


def test_the_strict_schema_can_fail():
    """The checks below mean something: a gpus-only group (what node-pool
    printed before), the other release's disk field, and a wrong type are
    all refused."""
    complete = node_pool("gpu", [(A10, 1)], cozystack="v1.3.0").data
    assert_valid(complete, "v1.3.0")
    gpus_only = {"nodeGroups": {"gpu": {"gpus": [{"name": A10}]}}}
    assert {"'ephemeralStorage' is a required property", "'resources' is a required property"} <= set(
        errors_of(gpus_only, "v1.3.0")
    )
    assert "'diskSize' is a required property" in errors_of(gpus_only, NEWEST)
    assert errors_of(complete, NEWEST)  # what v1.3.0 takes, v1.6.x refuses
    wrong = copy.deepcopy(complete)
    wrong["nodeGroups"]["gpu"]["maxReplicas"] = "10"
    assert errors_of(wrong, "v1.3.0")
    stray = copy.deepcopy(complete)
    stray["nodeGroups"]["gpu"]["gpus"][0]["count"] = 2
    assert errors_of(stray, "v1.3.0")
    assert errors_of({"nodeGroup": {}})  # a misspelt top-level key
    assert nodes_errors({"cluster": "demo", "ephemeralStorage": "20Gi"}, NODES_TAGS[0])


def test_cozystack_object_facts():
    assert cozystack.API_VERSION == "apps.cozystack.io/v1alpha1"
    assert cozystack.KIND == "Kubernetes"
    assert cozystack.RESOURCE == "kuberneteses.apps.cozystack.io"


# -- the library -----------------------------------------------------------------------------


def test_default_group_is_complete_and_valid():
    snippet = node_pool("gpu", [("10de:2236", 2), (T4, 1)])
    assert snippet.data == {
        "nodeGroups": {
            "gpu": {
                "minReplicas": 0,
                "maxReplicas": 10,
                "instanceType": "u1.medium",
                "diskSize": "20Gi",
                "gpus": [{"name": A10}, {"name": A10}, {"name": T4}],
            }
        }
    }
    assert_valid(snippet.data)


def test_every_field_as_given():
    snippet = node_pool(
        "big",
        [(A10, 4)],
        instance_type="u1.2xlarge",
        min_replicas=1,
        max_replicas=3,
        ephemeral_storage="100Gi",
        roles=["gpu", "ingress-nginx", "gpu"],
        cpu="16",
        memory="64Gi",
    )
    group = snippet.data["nodeGroups"]["big"]
    assert group == {
        "minReplicas": 1,
        "maxReplicas": 3,
        "instanceType": "u1.2xlarge",
        "diskSize": "100Gi",
        "resources": {"cpu": "16", "memory": "64Gi"},
        "roles": ["gpu", "ingress-nginx"],
        "gpus": [{"name": A10}] * 4,
    }
    assert_valid(snippet.data)


def test_fragment_merges_into_the_schema_example_group():
    fragment = node_pool("md0", [(A10, 2)], fragment=True).data
    assert fragment == {"nodeGroups": {"md0": {"gpus": [{"name": A10}, {"name": A10}]}}}
    assert errors_of(fragment)  # alone, it is not a group
    for tag in TAGS:
        example = {"nodeGroups": default_groups(tag)}
        merged = merge_patch(example, fragment)
        assert merged["nodeGroups"]["md0"]["instanceType"] == "u1.medium"
        assert merged["nodeGroups"]["md0"]["gpus"] == [{"name": A10}, {"name": A10}]
        assert_valid(merged, tag)


def test_patch_is_the_spec_of_the_kubernetes_object():
    values = node_pool("gpu", [(A10, 1)], max_replicas=2).data
    patch = node_pool("gpu", [(A10, 1)], max_replicas=2, format="patch").data
    assert patch == {"spec": values}
    assert_valid(patch["spec"])
    # Applied to a tenant cluster's object with its default md0 group: both groups, both valid.
    existing = {
        "apiVersion": cozystack.API_VERSION,
        "kind": cozystack.KIND,
        "metadata": {"name": "test", "namespace": "tenant-test"},
        "spec": {"nodeGroups": default_groups(NEWEST), "host": ""},
    }
    patched = merge_patch(existing, patch)
    assert sorted(patched["spec"]["nodeGroups"]) == ["gpu", "md0"]
    assert_valid(patched["spec"])
    # A fragment patch replaces the gpus list of a group that exists, and keeps the rest.
    fragment = node_pool("md0", [(T4, 1)], fragment=True, format="patch").data
    patched = merge_patch(patched, fragment)
    assert patched["spec"]["nodeGroups"]["md0"]["gpus"] == [{"name": T4}]
    assert patched["spec"]["nodeGroups"]["md0"]["roles"] == ["ingress-nginx"]
    assert_valid(patched["spec"])


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"min_replicas": 3, "max_replicas": 2}, "minReplicas 3 is more than maxReplicas 2"),
        ({"min_replicas": -1}, "minReplicas -1 is out of range"),
        ({"max_replicas": 2**31}, "out of range"),
        ({"max_replicas": 0}, "maxReplicas 0"),
        ({"max_replicas": True}, "not a whole number"),
        ({"ephemeral_storage": "20GB"}, "diskSize '20GB' is not a Kubernetes quantity"),
        ({"disk_size": "-20Gi"}, "more than zero"),
        ({"disk_size": "0", "cozystack": "v1.3.0"}, "ephemeralStorage '0' must be more than zero"),
        ({"disk_size": "1Gi", "ephemeral_storage": "1Gi"}, "the same field"),
        ({"cpu": "two"}, "cpu 'two' is not a Kubernetes quantity"),
        ({"memory": ""}, "memory '' is not a Kubernetes quantity"),
        ({"instance_type": ""}, "not an instance type name"),
        ({"instance_type": "U1.Medium"}, "not an instance type name"),
        ({"roles": ["a b"]}, "not a node role name"),
        ({"roles": "gpu"}, "not a list of role names"),
        ({"fragment": True, "cpu": "2"}, "a fragment carries gpus only: it takes no cpu"),
        ({"format": "kubevirt"}, "unknown format 'kubevirt': use one of values, patch, kubernetes-nodes"),
        ({"format": "kubernetes-nodes"}, "needs the name of its cluster"),
        ({"format": "kubernetes-nodes", "cluster": "demo", "fragment": True}, "a whole pool"),
    ],
)
def test_bad_fields_are_refused(kwargs, message):
    with pytest.raises(PcinameError, match=message.replace("(", r"\(")):
        node_pool("gpu", [(A10, 1)], **kwargs)


# -- a property: whatever the fields, valid output or a clear refusal -----------------------

quantities = st.builds(
    lambda number, suffix: f"{number}{suffix}",
    st.one_of(st.integers(0, 10**6).map(str), st.decimals(0, 1000, places=2, allow_nan=False).map(str)),
    st.sampled_from(["", "Ki", "Mi", "Gi", "Ti", "m", "k", "M", "G", "e3", "GB", "gi", " "]),
)
instance_types = st.one_of(
    st.from_regex(r"\A[a-z0-9]{1,4}(\.[a-z0-9]{1,8})?\Z"),
    st.sampled_from(["u1.medium", "u1.2xlarge", "", "U1", "u1..x", "-u1", "u1 medium"]),
)
roles = st.lists(
    st.one_of(st.from_regex(r"\A[a-z][a-z0-9-]{0,10}[a-z0-9]\Z"), st.sampled_from(["", "a b", "x/y"])), max_size=3
)


@settings(max_examples=150, deadline=None)
@given(
    low=st.one_of(st.none(), st.integers(-2, 12)),
    high=st.one_of(st.none(), st.integers(-2, 12)),
    disk=st.one_of(st.none(), quantities),
    cpu=st.one_of(st.none(), quantities),
    instance_type=st.one_of(st.none(), instance_types),
    role_list=st.one_of(st.none(), roles),
    fmt=st.sampled_from(["values", "patch"]),
    tag=st.sampled_from(TAGS),
)
def test_any_fields_give_a_valid_group_or_a_clear_error(low, high, disk, cpu, instance_type, role_list, fmt, tag):
    kwargs = dict(
        min_replicas=low, max_replicas=high, disk_size=disk, cpu=cpu, instance_type=instance_type, roles=role_list
    )
    try:
        data = node_pool("gpu", [(A10, 1)], format=fmt, cozystack=tag, **kwargs).data
    except PcinameError as error:
        assert "\n" not in str(error)
        lo = 0 if low is None else low
        hi = 10 if high is None else high
        bad_range = not (0 <= lo <= hi and hi >= 1)
        bad_value = any(v is not None and not _accepted(v) for v in (disk, cpu))
        bad_type = instance_type is not None and not cozystack._DNS_SUBDOMAIN.match(instance_type.strip())
        bad_role = role_list is not None and any(not cozystack._ROLE.match(r.strip()) for r in role_list)
        assert bad_range or bad_value or bad_type or bad_role, str(error)
        return
    values = data["spec"] if fmt == "patch" else data
    assert_valid(values, tag)
    group = values["nodeGroups"]["gpu"]
    assert group["minReplicas"] == (0 if low is None else low)
    assert group["maxReplicas"] == (10 if high is None else high)
    assert group[disk_of(tag)] == ("20Gi" if disk is None else disk.strip())
    required = "resources" in cozystack.get_release(tag).required
    assert group.get("resources") == ({"cpu": cpu.strip()} if cpu is not None else {} if required else None)
    assert group["gpus"] == [{"name": A10}]


def _accepted(quantity: str) -> bool:
    try:
        cozystack.check_quantity(quantity, "q")
    except PcinameError:
        return False
    return True


# -- the CLI ----------------------------------------------------------------------------------

FLAG_CASES = [
    ([], {}),
    (["--instance-type", "u1.xlarge"], {"instanceType": "u1.xlarge"}),
    (["--min-replicas", "2"], {"minReplicas": 2}),
    (["--max-replicas", "3"], {"maxReplicas": 3}),
    (["--disk-size", "60Gi"], {"diskSize": "60Gi"}),
    (["--ephemeral-storage", "61Gi"], {"diskSize": "61Gi"}),
    (["--disk-size", "62Gi", "--cozystack", "v1.3.6"], {"ephemeralStorage": "62Gi"}),
    (["--role", "gpu", "--role", "ingress-nginx"], {"roles": ["gpu", "ingress-nginx"]}),
    (["--cpu", "8"], {"resources": {"cpu": "8"}}),
    (["--memory", "32Gi"], {"resources": {"memory": "32Gi"}}),
    (["--cpu", "500m", "--memory", "4Gi"], {"resources": {"cpu": "500m", "memory": "4Gi"}}),
]


@pytest.mark.parametrize("flags, expected", FLAG_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
@pytest.mark.parametrize("output", ["yaml", "json"])
def test_cli_every_flag_validates(capsys, flags, expected, output):
    code, out, err = run("node-pool", "gpu", "10de:2236=2", *flags, "-o", output)
    assert (code, err) == (0, "")
    values = yaml.safe_load(out) if output == "yaml" else json.loads(out)
    assert_valid(values, "v1.3.6" if "v1.3.6" in flags else NEWEST)
    group = values["nodeGroups"]["gpu"]
    for key, value in expected.items():
        assert group[key] == value
    assert group["gpus"] == [{"name": A10}] * 2


def test_cli_patch_defaults_to_json_and_its_spec_validates(capsys):
    code, out, err = run("node-pool", "gpu", "10de:2236", "--format", "patch", "--max-replicas", "2")
    assert (code, err) == (0, "")
    patch = json.loads(out)
    assert list(patch) == ["spec"]
    assert_valid(patch["spec"])
    assert patch["spec"]["nodeGroups"]["gpu"]["maxReplicas"] == 2
    code, out, _ = run("node-pool", "gpu", "10de:2236", "--format", "patch", "--fragment", "-o", "yaml")
    assert yaml.safe_load(out) == {"spec": {"nodeGroups": {"gpu": {"gpus": [{"name": A10}]}}}}


def test_cli_fragment_is_gpus_only_and_merges(capsys):
    code, out, err = run("node-pool", "md0", "10de:2236", "--fragment")
    assert (code, err) == (0, "")
    fragment = yaml.safe_load(out)
    assert fragment == {"nodeGroups": {"md0": {"gpus": [{"name": A10}]}}}
    assert_valid(merge_patch({"nodeGroups": default_groups(NEWEST)}, fragment))


def test_cli_include_broken_still_reports_with_patch(capsys):
    code, out, err = run("node-pool", "gpu", "nvidia.com/BAD_", "10de:2236", "--format", "patch", "--include-broken")
    assert code == 1
    assert "broken nvidia.com/BAD_: invalid-resource-name" in err
    assert_valid(json.loads(out)["spec"])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--min-replicas", "5", "--max-replicas", "4"], "minReplicas 5 is more than maxReplicas 4"),
        (["--min-replicas", "-1"], "minReplicas -1 is out of range"),
        (["--max-replicas", "x"], "invalid int value: 'x'"),
        (["--disk-size", "20GB"], "diskSize '20GB' is not a Kubernetes quantity"),
        (["--disk-size", "20GB", "--cozystack", "v1.0.0"], "ephemeralStorage '20GB' is not a Kubernetes quantity"),
        (["--memory=-4Gi"], "memory '-4Gi' must be more than zero"),
        (["--instance-type", "U1 medium"], "not an instance type name"),
        (["--role", ""], "is not a node role name"),
        (["--fragment", "--cpu", "2", "--role", "gpu"], "--fragment emits gpus only: it takes no --role, --cpu"),
        (["--format", "kubevirt"], "invalid choice: 'kubevirt'"),
    ],
)
def test_cli_bad_values_exit_2_with_one_line(capsys, argv, message):
    code, out, err = run("node-pool", "gpu", "10de:2236", *argv)
    assert (code, out) == (2, "")
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_help_names_every_flag(capsys):
    with pytest.raises(SystemExit):
        main(["node-pool", "--help"])
    text = capsys.readouterr().out
    for flag in (
        "--instance-type",
        "--min-replicas",
        "--max-replicas",
        "--disk-size",
        "--ephemeral-storage",
        "--role",
        "--cpu",
        "--memory",
        "--fragment",
        "--format",
        "kuberneteses.apps.cozystack.io",
        "--cozystack",
        "--cluster",
        "kubernetes-nodes",
    ):
        assert flag in text


# -- gRPC on loopback --------------------------------------------------------------------------


RPC_CASES = [
    ({}, []),
    ({"fragment": True}, ["--fragment"]),
    ({"format": "patch"}, ["--format", "patch"]),
    ({"format": "patch", "fragment": True}, ["--format", "patch", "--fragment"]),
    (
        {
            "instance_type": "u1.xlarge",
            "min_replicas": 1,
            "max_replicas": 2,
            "ephemeral_storage": "40Gi",
            "roles": ["gpu"],
            "cpu": "4",
            "memory": "16Gi",
        },
        [
            "--instance-type",
            "u1.xlarge",
            "--min-replicas",
            "1",
            "--max-replicas",
            "2",
            "--disk-size",
            "40Gi",
            "--role",
            "gpu",
            "--cpu",
            "4",
            "--memory",
            "16Gi",
        ],
    ),
    ({"min_replicas": 0, "max_replicas": 1}, ["--min-replicas", "0", "--max-replicas", "1"]),
]


@pytest.mark.parametrize("kwargs, flags", RPC_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
def test_grpc_gives_what_the_cli_prints(client, capsys, kwargs, flags):
    answer = client.node_pool("gpu", ["10de:2236=2", T4], ["GRID T4-1Q"], **kwargs)
    fmt = kwargs.get("format", "values")
    assert answer.format == fmt
    assert answer.gpus == [A10, A10, T4, "nvidia.com/GRID_T4-1Q"]
    assert answer.left_out == [] and answer.profile
    _, yaml_out, _ = run("node-pool", "gpu", "10de:2236=2", T4, "--mdev", "GRID T4-1Q", *flags, "-o", "yaml")
    _, json_out, _ = run("node-pool", "gpu", "10de:2236=2", T4, "--mdev", "GRID T4-1Q", *flags, "-o", "json")
    assert (answer.yaml, answer.json) == (yaml_out, json_out)
    document = json.loads(answer.json)
    values = document["spec"] if fmt == "patch" else document
    if kwargs.get("fragment"):
        # Merged into a group "gpu" that exists, as the schema's default md0 group is.
        existing = {"nodeGroups": {"gpu": default_groups(NEWEST)["md0"]}}
        values = merge_patch(existing, values)
        assert values["nodeGroups"]["gpu"]["gpus"] == [{"name": name} for name in answer.gpus]
    assert_valid(values)


def test_grpc_reports_what_it_left_out(client):
    answer = client.node_pool("gpu", ["nvidia.com/BAD_", "10de:2236"])
    assert answer.gpus == [A10]
    assert [(s.item, [w.code for w in s.reasons]) for s in answer.left_out] == [
        ("nvidia.com/BAD_", ["invalid-resource-name"])
    ]


def _code(stub, request):
    try:
        stub.NodePool(request, timeout=20)
    except grpc.RpcError as error:
        return error.code(), error.details()
    return grpc.StatusCode.OK, ""


@pytest.mark.parametrize(
    "request_message, needle",
    [
        (pb.NodePoolRequest(group="gpu"), "no devices and no mdev_types"),
        (pb.NodePoolRequest(group="", devices=["10de:2236"]), "node group name is empty"),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236=0"]), "malformed count"),
        (
            pb.NodePoolRequest(group="gpu", devices=["10de:2236"], min_replicas=4, max_replicas=3),
            "minReplicas 4 is more than maxReplicas 3",
        ),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], max_replicas=2**40), "out of range"),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], ephemeral_storage="lots"), "not a Kubernetes quantity"),
        (
            pb.NodePoolRequest(group="gpu", devices=["10de:2236"], fragment=True, instance_type="u1.large"),
            "fragment emits gpus only: it takes no instance_type",
        ),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], format="kubevirt"), "unknown format 'kubevirt'"),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], profile="auto"), "profile auto"),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], cpu="x" * 100_000), "cpu"),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], roles=["ok", "not ok"]), "not a node role name"),
    ],
)
def test_grpc_bad_input_is_invalid_argument(stub, request_message, needle):
    code, details = _code(stub, request_message)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in details and "\n" not in details and len(details) < 1100


def test_client_raises_the_one_line_error(client):
    with pytest.raises(RemoteInvalidArgument, match="minReplicas 3 is more than maxReplicas 1"):
        client.node_pool("gpu", ["10de:2236"], min_replicas=3, max_replicas=1)


@pytest.mark.parametrize(
    "field, request_message",
    [
        ("group", pb.NodePoolRequest(group="g" * 100_000, devices=["10de:2236"])),
        ("devices[1]", pb.NodePoolRequest(group="gpu", devices=["10de:2236", "1" * 100_000])),
        ("profile", pb.NodePoolRequest(group="gpu", devices=["10de:2236"], profile="latest" + " " * 100_000)),
        ("instance_type", pb.NodePoolRequest(group="gpu", devices=["10de:2236"], instance_type="u" * 100_000)),
        ("roles[0]", pb.NodePoolRequest(group="gpu", devices=["10de:2236"], roles=["r" * 100_000])),
    ],
)
def test_grpc_oversized_fields_are_cut_in_the_error(stub, field, request_message):
    code, details = _code(stub, request_message)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details.startswith(f"{field} is too long") and "…(" in details and len(details) < 300


def test_grpc_malformed_protobuf_is_invalid_argument(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        call = channel.unary_unary("/pciname.v1.PciName/NodePool", request_serializer=None, response_deserializer=None)
        with pytest.raises(grpc.RpcError) as failed:
            call(b"\x0a\x02\xff\xfe", timeout=20)  # group: not UTF-8
    assert failed.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert failed.value.details().startswith("malformed request: not a valid pciname.v1.")


@pytest.mark.parametrize("tag", ["v1.3.6", "v1.4.5", NODES_TAGS[0], NEWEST])
def test_grpc_cozystack_release_is_what_the_cli_prints(client, capsys, tag):
    answer = client.node_pool("gpu", ["10de:2941=2"], cozystack=tag)
    _, yaml_out, _ = run("node-pool", "gpu", "10de:2941=2", "--cozystack", tag)
    assert answer.yaml == yaml_out and answer.profile == f"cozystack@{tag}"
    assert_valid(yaml.safe_load(answer.yaml), tag)
    if tag in NODES_TAGS:
        answer = client.node_pool("gpu", ["10de:2236"], cozystack=tag, format="kubernetes-nodes", cluster="demo")
        _, yaml_out, _ = run(
            "node-pool",
            "gpu",
            "10de:2236",
            "--cozystack",
            tag,
            "--format",
            "kubernetes-nodes",
            "--cluster",
            "demo",
        )
        assert answer.yaml == yaml_out and answer.gpus == [A10]
        assert nodes_errors(yaml.safe_load(answer.yaml)["spec"], tag) == []


@pytest.mark.parametrize(
    "request_message, code, needle",
    [
        (
            pb.NodePoolRequest(group="gpu", devices=["10de:2236"], cozystack="1.x"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "malformed Cozystack version '1.x': use vX.Y.Z, v1.0.0 to",
        ),
        (
            pb.NodePoolRequest(group="gpu", devices=["10de:2236"], cozystack="v0.1.0"),
            grpc.StatusCode.NOT_FOUND,
            "unknown Cozystack release 'v0.1.0': pciname knows v1.0.0 to",
        ),
        (
            pb.NodePoolRequest(
                group="gpu", devices=["10de:2236"], cozystack="v1.5.0", format="kubernetes-nodes", cluster="demo"
            ),
            grpc.StatusCode.INVALID_ARGUMENT,
            "has no KubernetesNodes application",
        ),
        (
            pb.NodePoolRequest(group="gpu", devices=["10de:2236"], format="kubernetes-nodes"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "format kubernetes-nodes needs cluster NAME",
        ),
    ],
)
def test_grpc_bad_cozystack_release(stub, request_message, code, needle):
    got, details = _code(stub, request_message)
    assert got == code and needle in details and "\n" not in details
