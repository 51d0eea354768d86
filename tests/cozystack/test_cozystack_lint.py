"""lint reads KubernetesNodes objects, and the HelmReleases Cozystack's
aggregated API server writes for them, and flags node-group fields the chosen
Cozystack release does not have (field-not-in-release), for every release:
the groups earlier pciname versions printed (ephemeralStorage) are refused
from v1.4.0, and what node-pool prints now for a release is clean for it.
CLI, library and gRPC on loopback."""

from __future__ import annotations

import grpc
import pytest

from pciname.base.render import dump_yaml
from pciname.cli import main
from pciname.cozystack import releases as cozystack
from pciname.cozystack.node_pool import node_pool
from pciname.lint.linter import FIELD_NOT_IN_RELEASE, lint_text
from pciname.server._proto import pciname_pb2 as pb
from tests import cozystack_util as upstream

TAGS = upstream.tags()
A10 = "nvidia.com/GA102GL_A10"

#: What `pciname node-pool gpu 10de:2236` printed before per-release facts.
OLD_GROUP = """nodeGroups:
  gpu:
    minReplicas: 0
    maxReplicas: 10
    instanceType: u1.medium
    ephemeralStorage: 20Gi
    resources: {}
    gpus:
    - name: nvidia.com/GA102GL_A10
"""


def codes(findings):
    return [f.code for f in findings]


def text_of(data) -> str:
    import io

    out = io.StringIO()
    dump_yaml(data, out)
    return out.getvalue()


@pytest.mark.parametrize("tag", TAGS)
def test_old_groups_are_flagged_exactly_where_the_release_refuses_them(tag):
    findings = lint_text(OLD_GROUP, "old.yaml", "latest", cozystack=tag)
    refused = "ephemeralStorage" not in cozystack.get_release(tag).fields
    assert refused == (cozystack._key(tag) >= (1, 4, 0))
    if not refused:
        assert findings == []
        return
    (finding,) = findings
    assert (finding.code, finding.line, finding.path, finding.value, finding.expected) == (
        FIELD_NOT_IN_RELEASE,
        6,
        "nodeGroups.gpu.ephemeralStorage",
        "ephemeralStorage",
        "diskSize",
    )
    assert (
        f"Cozystack {tag}'s node groups have no field ephemeralStorage: it calls a node's disk diskSize"
        in finding.message
    )
    # and the strict upstream schema of that release agrees
    import yaml

    assert upstream.errors_of(yaml.safe_load(OLD_GROUP), tag)


@pytest.mark.parametrize("tag", TAGS)
def test_what_node_pool_prints_now_is_clean_for_its_release(tag):
    data = node_pool("gpu", [("10de:2236", 2)], cozystack=tag, roles=["gpu"], cpu="4", memory="8Gi").data
    assert lint_text(text_of(data), "new.yaml", f"cozystack@{tag}", cozystack=tag) == []
    if cozystack.get_release(tag).kubernetes_nodes is not None:
        obj = node_pool("gpu", [("10de:2236", 1)], cozystack=tag, format="kubernetes-nodes", cluster="demo").data
        assert lint_text(text_of(obj), "pool.yaml", f"cozystack@{tag}", cozystack=tag) == []


def test_kubernetes_nodes_names_and_fields_are_checked():
    text = """apiVersion: apps.cozystack.io/v1alpha1
kind: KubernetesNodes
metadata:
  name: demo-gpu
spec:
  cluster: demo
  ephemeralStorage: 20Gi
  nodeLabels: {}
  gpus:
  - name: nvidia.com/GA102GL_A1O
  - name: nvidia.com/GA102GL_A10
"""
    findings = lint_text(text, "pool.yaml", "latest", cozystack="v1.6.2")
    assert [(f.line, f.code, f.path, f.expected) for f in findings] == [
        (7, FIELD_NOT_IN_RELEASE, "spec.ephemeralStorage", "diskSize"),
        (8, FIELD_NOT_IN_RELEASE, "spec.nodeLabels", None),
        (
            10,
            "unknown-resource-name",
            "spec.gpus[0].name",
            ["nvidia.com/GA102GL_A10", "nvidia.com/GA102GL_A10M", "nvidia.com/GA102GL_A10G"],
        ),
    ]
    assert "Cozystack v1.6.2's KubernetesNodes has no field nodeLabels, and refuses the group" in findings[1].message
    # v1.4.0 spells the disk diskSize too, and diskSize is wrong before.
    assert codes(lint_text(OLD_GROUP.replace("ephemeralStorage", "diskSize"), "g.yaml", cozystack="v1.3.6")) == [
        FIELD_NOT_IN_RELEASE
    ]


def test_cli_cozystack_flag(tmp_path, capsys):
    path = tmp_path / "old.yaml"
    path.write_text(OLD_GROUP)
    assert main(["lint", str(path), "--cozystack", "v1.3.6"]) == 0
    assert main(["lint", str(path), "-p", "cozystack@v1.3.6"]) == 0  # the profile implies its release
    assert main(["lint", str(path), "-p", "cozystack@v1.4.0"]) == 1
    capsys.readouterr()
    assert main(["lint", str(path), "-p", "cozystack@v1.4.0", "--cozystack", "v1.3.6"]) == 2
    assert "profile cozystack@v1.4.0 is Cozystack v1.4.0, but Cozystack v1.3.6 was asked for" in capsys.readouterr().err
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"{path}:6: field-not-in-release: nodeGroups.gpu.ephemeralStorage: Cozystack {TAGS[-1]}'s" in out
    code = main(["lint", str(path), "--cozystack", "v2"])
    err = capsys.readouterr().err
    assert code == 2 and err.startswith("pciname: error: malformed Cozystack version 'v2'") and err.count("\n") == 1


def test_grpc_lint_takes_the_release(stub):
    request = pb.LintRequest(files=[pb.LintFile(name="old.yaml", text=OLD_GROUP)], cozystack="v1.4.0")
    answer = stub.Lint(request, timeout=20)
    assert [(f.code, f.path) for f in answer.findings] == [(FIELD_NOT_IN_RELEASE, "nodeGroups.gpu.ephemeralStorage")]
    clean = stub.Lint(
        pb.LintRequest(files=[pb.LintFile(name="old.yaml", text=OLD_GROUP)], cozystack="v1.3.0"), timeout=20
    )
    assert list(clean.findings) == []
    for version, code in (("1.x", grpc.StatusCode.INVALID_ARGUMENT), ("v0.0.1", grpc.StatusCode.NOT_FOUND)):
        with pytest.raises(grpc.RpcError) as caught:
            stub.Lint(pb.LintRequest(files=[pb.LintFile(name="a.yaml", text=OLD_GROUP)], cozystack=version), timeout=20)
        assert caught.value.code() == code and "v1.0.0 to" in caught.value.details()


# -- the HelmRelease Cozystack's aggregated API server writes for a KubernetesNodes object --------


def helm_release_of(obj, kind_label: str = "KubernetesNodes", api_version: str = "helm.toolkit.fluxcd.io/v2"):
    """The HelmRelease Cozystack's aggregated API server writes for an
    application object, as pkg/registry/apps/application/rest.go
    (convertApplicationToHelmRelease) builds it: named by the release prefix,
    labelled with the application's kind, group and name, its spec as
    ``spec.values``."""
    name = obj["metadata"]["name"]
    return {
        "apiVersion": api_version,
        "kind": "HelmRelease",
        "metadata": {
            "name": f"kubernetes-nodes-{name}",
            "namespace": "tenant-foo",
            "labels": {
                cozystack.APPLICATION_KIND_LABEL: kind_label,
                "apps.cozystack.io/application.group": "apps.cozystack.io",
                "apps.cozystack.io/application.name": name,
            },
        },
        "spec": {
            "chartRef": {"kind": "ExternalArtifact", "name": "cozystack-kubernetes-nodes", "namespace": "cozy-system"},
            "interval": "5m0s",
            "valuesFrom": [{"kind": "Secret", "name": "cozystack-values"}],
            "values": obj["spec"],
        },
    }


OLD_POOL = {
    "apiVersion": "apps.cozystack.io/v1alpha1",
    "kind": "KubernetesNodes",
    "metadata": {"name": "demo-gpu"},
    "spec": {
        "cluster": "demo",
        "minReplicas": 0,
        "ephemeralStorage": "20Gi",
        "nodeLabels": {},
        "gpus": [{"name": "nvidia.com/GA102GL_A1O"}, {"name": A10}],
    },
}


def _seen(findings, prefix: str):
    return [(f.code, f.path.removeprefix(prefix), f.value, f.expected) for f in findings]


@pytest.mark.parametrize("tag", TAGS)
def test_kubernetes_nodes_helmrelease_is_checked_as_its_object_is(tag):
    """Every release: the HelmRelease's spec.values get exactly the findings
    the KubernetesNodes object's spec gets (names; fields against the
    release's KubernetesNodes schema, where it has one), and the strict
    upstream schema of that release agrees on the fields."""
    as_object = lint_text(text_of(OLD_POOL), "pool.yaml", "latest", cozystack=tag)
    as_release = lint_text(text_of(helm_release_of(OLD_POOL)), "hr.yaml", "latest", cozystack=tag)
    assert _seen(as_release, "spec.values.") == _seen(as_object, "spec.")
    assert all(f.path.startswith("spec.values.") for f in as_release)
    assert "unknown-resource-name" in codes(as_release)
    fields = [f.value for f in as_release if f.code == FIELD_NOT_IN_RELEASE]
    schema = upstream.nodes_schema(tag)
    if schema is None:
        assert fields == []  # no such application in this release: nothing to compare with
    else:
        assert fields == ["ephemeralStorage", "nodeLabels"]
        errors = upstream.errors_of(OLD_POOL["spec"], tag, "nodes")
        assert all(any(repr(f) in e for e in errors) for f in fields), errors
        obj = node_pool("gpu", [("10de:2236", 1)], cozystack=tag, format="kubernetes-nodes", cluster="demo").data
        release = helm_release_of(obj)
        assert upstream.errors_of(release["spec"]["values"], tag, "nodes") == []
        assert lint_text(text_of(release), "hr.yaml", f"cozystack@{tag}", cozystack=tag) == []


def test_kubernetes_nodes_helmrelease_lines_and_messages():
    findings = lint_text(text_of(helm_release_of(OLD_POOL)), "hr.yaml", "latest", cozystack="v1.6.2")
    assert [(f.line, f.code, f.path, f.expected) for f in findings] == [
        (22, FIELD_NOT_IN_RELEASE, "spec.values.ephemeralStorage", "diskSize"),
        (23, FIELD_NOT_IN_RELEASE, "spec.values.nodeLabels", None),
        (
            25,
            "unknown-resource-name",
            "spec.values.gpus[0].name",
            ["nvidia.com/GA102GL_A10", "nvidia.com/GA102GL_A10M", "nvidia.com/GA102GL_A10G"],
        ),
    ]
    assert "Cozystack v1.6.2's KubernetesNodes has no field nodeLabels" in findings[1].message


@pytest.mark.parametrize(
    "change",
    ["another application", "no label", "another group", "no apiVersion", "not a HelmRelease", "values not a mapping"],
)
def test_only_a_labelled_flux_helmrelease_is_read_as_a_pool(change):
    """Told by its API group and label, as the admission policy tells it; a
    HelmRelease of another application with the same values is not read."""
    release = helm_release_of(OLD_POOL)
    if change == "another application":
        release["metadata"]["labels"][cozystack.APPLICATION_KIND_LABEL] = "Kubernetes"
    elif change == "no label":
        del release["metadata"]["labels"][cozystack.APPLICATION_KIND_LABEL]
    elif change == "another group":
        release["apiVersion"] = "example.com/v2"
    elif change == "no apiVersion":
        del release["apiVersion"]
    elif change == "not a HelmRelease":
        release["kind"] = "HelmChart"
    else:
        release["spec"]["values"] = [OLD_POOL["spec"]]
    assert lint_text(text_of(release), "hr.yaml", "latest", cozystack="v1.6.2") == []
    # and the labelled one, inside a List, is
    listed = {"apiVersion": "v1", "kind": "List", "items": [release, helm_release_of(OLD_POOL)]}
    found = lint_text(text_of(listed), "list.yaml", "latest", cozystack="v1.6.2")
    assert {f.path for f in found} == {
        "items[1].spec.values.ephemeralStorage",
        "items[1].spec.values.nodeLabels",
        "items[1].spec.values.gpus[0].name",
    }
