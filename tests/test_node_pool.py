"""node-pool documents against Cozystack's own tenant values schema.

Cozystack's tenant Kubernetes application requires ``ephemeralStorage``,
``instanceType``, ``maxReplicas``, ``minReplicas`` and ``resources`` of every
node group, and Helm validates ``values.schema.json`` without filling
defaults in. So every document ``pciname node-pool`` (library, CLI, gRPC)
generates is validated here, as given, against a STRICT copy of the vendored
upstream schema (tests/data/cozystack-kubernetes-values.schema.json, source
in the sidecar .source.txt): no unknown field anywhere, no default relied on.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import grpc
import jsonschema
import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from pciname.cli import main
from pciname.client import Client, RemoteInvalidArgument
from pciname.errors import PcinameError
from pciname.kube import cozystack
from pciname.kube.generate import node_pool
from pciname.server._proto import pciname_pb2 as pb
from pciname.server._proto import pciname_pb2_grpc as pb_grpc

from .server_util import packaged_server

DATA = Path(__file__).resolve().parent / "data"
SCHEMA_FILE = DATA / "cozystack-kubernetes-values.schema.json"
SOURCE_FILE = DATA / "cozystack-kubernetes-values.schema.source.txt"
A10 = "nvidia.com/GA102GL_A10"
T4 = "nvidia.com/TU104GL_TESLA_T4"

UPSTREAM = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
GROUP_SCHEMA = UPSTREAM["properties"]["nodeGroups"]["additionalProperties"]


def strict(schema):
    """The schema with ``additionalProperties: false`` on every object that
    declares none (unless it keeps unknown fields on purpose:
    ``x-kubernetes-preserve-unknown-fields``), and without defaults, so
    nothing validates by leaning on them."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            node.pop("default", None)
            is_object = node.get("type") == "object" or "properties" in node
            if is_object and "additionalProperties" not in node and not node.get("x-kubernetes-preserve-unknown-fields"):
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


STRICT = strict(UPSTREAM)
# The schema declares no $schema; Helm's validator reads it as draft 7, and
# 2020-12 is checked too so nothing passes through a draft's leniency.
VALIDATORS = [cls(STRICT) for cls in (jsonschema.Draft7Validator, jsonschema.Draft202012Validator)]


def errors_of(values) -> list[str]:
    found = set()
    for validator in VALIDATORS:
        found.update(e.message for e in validator.iter_errors(values))
    return sorted(found)


def assert_valid(values) -> None:
    assert errors_of(values) == []


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


def run(capsys, *argv):
    """(exit code, stdout, stderr) of ``pciname ARGV``; argparse's usage
    errors exit through SystemExit."""
    try:
        code = main([str(a) for a in argv])
    except SystemExit as exited:
        code = exited.code
    out, err = capsys.readouterr()
    return code, out, err


# -- the vendored schema and the facts taken from it ---------------------------------------


def test_the_vendored_schema_names_its_source():
    source = SOURCE_FILE.read_text(encoding="utf-8")
    assert cozystack.SCHEMA_COMMIT in source and cozystack.SCHEMA_PATH in source
    assert "Apache-2.0" in source and "cozystack/cozystack" in source


def test_facts_are_the_schema_defaults():
    properties = GROUP_SCHEMA["properties"]
    defaults = cozystack.NODE_GROUP_DEFAULTS
    assert properties["ephemeralStorage"]["default"] == defaults.ephemeral_storage
    assert properties["instanceType"]["default"] == defaults.instance_type
    assert properties["maxReplicas"]["default"] == defaults.max_replicas
    assert properties["minReplicas"]["default"] == defaults.min_replicas
    assert tuple(sorted(GROUP_SCHEMA["required"])) == tuple(sorted(cozystack.REQUIRED_FIELDS))
    for quantity in (properties["ephemeralStorage"], *properties["resources"]["properties"].values()):
        assert quantity["pattern"] == cozystack.QUANTITY_PATTERN
    # The schema's own default group agrees with the facts, and passes the strict copy.
    md0 = UPSTREAM["properties"]["nodeGroups"]["default"]["md0"]
    assert (md0["ephemeralStorage"], md0["instanceType"], md0["maxReplicas"], md0["minReplicas"]) == (
        defaults.ephemeral_storage,
        defaults.instance_type,
        defaults.max_replicas,
        defaults.min_replicas,
    )
    assert_valid({"nodeGroups": {"md0": md0}})


def test_the_strict_schema_can_fail():
    """The checks below mean something: a gpus-only group (what node-pool
    printed before), an unknown field (the diskSize of the issue is
    ephemeralStorage in the schema) and a wrong type are all refused."""
    complete = node_pool("gpu", [(A10, 1)]).data
    assert_valid(complete)
    gpus_only = {"nodeGroups": {"gpu": {"gpus": [{"name": A10}]}}}
    assert {"'ephemeralStorage' is a required property", "'resources' is a required property"} <= set(
        errors_of(gpus_only)
    )
    renamed = copy.deepcopy(complete)
    renamed["nodeGroups"]["gpu"]["diskSize"] = renamed["nodeGroups"]["gpu"].pop("ephemeralStorage")
    assert any("diskSize" in e for e in errors_of(renamed))
    wrong = copy.deepcopy(complete)
    wrong["nodeGroups"]["gpu"]["maxReplicas"] = "10"
    assert errors_of(wrong)
    stray = copy.deepcopy(complete)
    stray["nodeGroups"]["gpu"]["gpus"][0]["count"] = 2
    assert errors_of(stray)
    assert errors_of({"nodeGroup": {}})  # a misspelt top-level key


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
                "ephemeralStorage": "20Gi",
                "resources": {},
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
        "ephemeralStorage": "100Gi",
        "resources": {"cpu": "16", "memory": "64Gi"},
        "roles": ["gpu", "ingress-nginx"],
        "gpus": [{"name": A10}] * 4,
    }
    assert_valid(snippet.data)


def test_fragment_merges_into_the_schema_example_group():
    fragment = node_pool("md0", [(A10, 2)], fragment=True).data
    assert fragment == {"nodeGroups": {"md0": {"gpus": [{"name": A10}, {"name": A10}]}}}
    assert errors_of(fragment)  # alone, it is not a group
    example = {"nodeGroups": copy.deepcopy(UPSTREAM["properties"]["nodeGroups"]["default"])}
    merged = merge_patch(example, fragment)
    assert merged["nodeGroups"]["md0"]["instanceType"] == "u1.medium"
    assert merged["nodeGroups"]["md0"]["gpus"] == [{"name": A10}, {"name": A10}]
    assert_valid(merged)


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
        "spec": {"nodeGroups": copy.deepcopy(UPSTREAM["properties"]["nodeGroups"]["default"]), "host": ""},
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
        ({"ephemeral_storage": "20GB"}, "not a Kubernetes quantity"),
        ({"ephemeral_storage": "-20Gi"}, "more than zero"),
        ({"ephemeral_storage": "0"}, "more than zero"),
        ({"cpu": "two"}, "cpu 'two' is not a Kubernetes quantity"),
        ({"memory": ""}, "memory '' is not a Kubernetes quantity"),
        ({"instance_type": ""}, "not an instance type name"),
        ({"instance_type": "U1.Medium"}, "not an instance type name"),
        ({"roles": ["a b"]}, "not a node role name"),
        ({"roles": "gpu"}, "not a list of role names"),
        ({"fragment": True, "cpu": "2"}, "a fragment carries gpus only: it takes no cpu"),
        ({"format": "kubevirt"}, "unknown format 'kubevirt': use one of values, patch"),
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
roles = st.lists(st.one_of(st.from_regex(r"\A[a-z][a-z0-9-]{0,10}[a-z0-9]\Z"), st.sampled_from(["", "a b", "x/y"])), max_size=3)


@settings(max_examples=150, deadline=None)
@given(
    low=st.one_of(st.none(), st.integers(-2, 12)),
    high=st.one_of(st.none(), st.integers(-2, 12)),
    disk=st.one_of(st.none(), quantities),
    cpu=st.one_of(st.none(), quantities),
    instance_type=st.one_of(st.none(), instance_types),
    role_list=st.one_of(st.none(), roles),
    fmt=st.sampled_from(["values", "patch"]),
)
def test_any_fields_give_a_valid_group_or_a_clear_error(low, high, disk, cpu, instance_type, role_list, fmt):
    kwargs = dict(
        min_replicas=low, max_replicas=high, ephemeral_storage=disk, cpu=cpu, instance_type=instance_type, roles=role_list
    )
    try:
        data = node_pool("gpu", [(A10, 1)], format=fmt, **kwargs).data
    except PcinameError as error:
        assert "\n" not in str(error)
        lo = 0 if low is None else low
        hi = 10 if high is None else high
        bad_range = not (0 <= lo <= hi and hi >= 1)
        bad_value = any(
            v is not None and not _accepted(v)
            for v in (disk, cpu)
        )
        bad_type = instance_type is not None and not cozystack._DNS_SUBDOMAIN.match(instance_type.strip())
        bad_role = role_list is not None and any(not cozystack._ROLE.match(r.strip()) for r in role_list)
        assert bad_range or bad_value or bad_type or bad_role, str(error)
        return
    values = data["spec"] if fmt == "patch" else data
    assert_valid(values)
    group = values["nodeGroups"]["gpu"]
    assert group["minReplicas"] == (0 if low is None else low)
    assert group["maxReplicas"] == (10 if high is None else high)
    assert group["ephemeralStorage"] == ("20Gi" if disk is None else disk.strip())
    assert group["resources"] == ({} if cpu is None else {"cpu": cpu.strip()})
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
    (["--disk-size", "60Gi"], {"ephemeralStorage": "60Gi"}),
    (["--ephemeral-storage", "61Gi"], {"ephemeralStorage": "61Gi"}),
    (["--role", "gpu", "--role", "ingress-nginx"], {"roles": ["gpu", "ingress-nginx"]}),
    (["--cpu", "8"], {"resources": {"cpu": "8"}}),
    (["--memory", "32Gi"], {"resources": {"memory": "32Gi"}}),
    (["--cpu", "500m", "--memory", "4Gi"], {"resources": {"cpu": "500m", "memory": "4Gi"}}),
]


@pytest.mark.parametrize("flags, expected", FLAG_CASES, ids=lambda v: " ".join(v) if isinstance(v, list) else "")
@pytest.mark.parametrize("output", ["yaml", "json"])
def test_cli_every_flag_validates(capsys, flags, expected, output):
    code, out, err = run(capsys, "node-pool", "gpu", "10de:2236=2", *flags, "-o", output)
    assert (code, err) == (0, "")
    values = yaml.safe_load(out) if output == "yaml" else json.loads(out)
    assert_valid(values)
    group = values["nodeGroups"]["gpu"]
    for key, value in expected.items():
        assert group[key] == value
    assert group["gpus"] == [{"name": A10}] * 2


def test_cli_patch_defaults_to_json_and_its_spec_validates(capsys):
    code, out, err = run(capsys, "node-pool", "gpu", "10de:2236", "--format", "patch", "--max-replicas", "2")
    assert (code, err) == (0, "")
    patch = json.loads(out)
    assert list(patch) == ["spec"]
    assert_valid(patch["spec"])
    assert patch["spec"]["nodeGroups"]["gpu"]["maxReplicas"] == 2
    code, out, _ = run(capsys, "node-pool", "gpu", "10de:2236", "--format", "patch", "--fragment", "-o", "yaml")
    assert yaml.safe_load(out) == {"spec": {"nodeGroups": {"gpu": {"gpus": [{"name": A10}]}}}}


def test_cli_fragment_is_gpus_only_and_merges(capsys):
    code, out, err = run(capsys, "node-pool", "md0", "10de:2236", "--fragment")
    assert (code, err) == (0, "")
    fragment = yaml.safe_load(out)
    assert fragment == {"nodeGroups": {"md0": {"gpus": [{"name": A10}]}}}
    assert_valid(merge_patch({"nodeGroups": copy.deepcopy(UPSTREAM["properties"]["nodeGroups"]["default"])}, fragment))


def test_cli_include_broken_still_reports_with_patch(capsys):
    code, out, err = run(capsys, "node-pool", "gpu", "nvidia.com/BAD_", "10de:2236", "--format", "patch", "--include-broken")
    assert code == 1
    assert "broken nvidia.com/BAD_: invalid-resource-name" in err
    assert_valid(json.loads(out)["spec"])


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--min-replicas", "5", "--max-replicas", "4"], "minReplicas 5 is more than maxReplicas 4"),
        (["--min-replicas", "-1"], "minReplicas -1 is out of range"),
        (["--max-replicas", "x"], "invalid int value: 'x'"),
        (["--disk-size", "20GB"], "ephemeralStorage '20GB' is not a Kubernetes quantity"),
        (["--memory=-4Gi"], "memory '-4Gi' must be more than zero"),
        (["--instance-type", "U1 medium"], "not an instance type name"),
        (["--role", ""], "is not a node role name"),
        (["--fragment", "--cpu", "2", "--role", "gpu"], "--fragment emits gpus only: it takes no --role, --cpu"),
        (["--format", "kubevirt"], "invalid choice: 'kubevirt'"),
    ],
)
def test_cli_bad_values_exit_2_with_one_line(capsys, argv, message):
    code, out, err = run(capsys, "node-pool", "gpu", "10de:2236", *argv)
    assert (code, out) == (2, "")
    assert message in err
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err


def test_cli_help_names_every_flag(capsys):
    with pytest.raises(SystemExit):
        main(["node-pool", "--help"])
    text = capsys.readouterr().out
    for flag in ("--instance-type", "--min-replicas", "--max-replicas", "--disk-size", "--ephemeral-storage",
                 "--role", "--cpu", "--memory", "--fragment", "--format", "kuberneteses.apps.cozystack.io"):
        assert flag in text


# -- gRPC on loopback --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with packaged_server(tmp_path_factory.mktemp("node-pool-cache")) as server:
        yield server


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield pb_grpc.PciNameStub(channel)


@pytest.fixture(scope="module")
def client(server):
    with Client(f"127.0.0.1:{server.port}", timeout=20) as c:
        yield c


RPC_CASES = [
    ({}, []),
    ({"fragment": True}, ["--fragment"]),
    ({"format": "patch"}, ["--format", "patch"]),
    ({"format": "patch", "fragment": True}, ["--format", "patch", "--fragment"]),
    (
        {"instance_type": "u1.xlarge", "min_replicas": 1, "max_replicas": 2, "ephemeral_storage": "40Gi",
         "roles": ["gpu"], "cpu": "4", "memory": "16Gi"},
        ["--instance-type", "u1.xlarge", "--min-replicas", "1", "--max-replicas", "2", "--disk-size", "40Gi",
         "--role", "gpu", "--cpu", "4", "--memory", "16Gi"],
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
    _, yaml_out, _ = run(capsys, "node-pool", "gpu", "10de:2236=2", T4, "--mdev", "GRID T4-1Q", *flags, "-o", "yaml")
    _, json_out, _ = run(capsys, "node-pool", "gpu", "10de:2236=2", T4, "--mdev", "GRID T4-1Q", *flags, "-o", "json")
    assert (answer.yaml, answer.json) == (yaml_out, json_out)
    document = json.loads(answer.json)
    values = document["spec"] if fmt == "patch" else document
    if kwargs.get("fragment"):
        # Merged into a group "gpu" that exists, as the schema's default md0 group is.
        existing = {"nodeGroups": {"gpu": copy.deepcopy(UPSTREAM["properties"]["nodeGroups"]["default"]["md0"])}}
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
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], min_replicas=4, max_replicas=3),
         "minReplicas 4 is more than maxReplicas 3"),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], max_replicas=2**40), "out of range"),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], ephemeral_storage="lots"), "not a Kubernetes quantity"),
        (pb.NodePoolRequest(group="gpu", devices=["10de:2236"], fragment=True, instance_type="u1.large"),
         "a fragment carries gpus only: it takes no instance_type"),
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
