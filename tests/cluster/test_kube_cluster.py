"""Live-cluster features: the real kubernetes client against a local fake API
server (127.0.0.1, ephemeral port) that records every request."""

from __future__ import annotations

import json
import os
import socket

import pytest

from pciname.cluster.kube import connect, read_cluster
from pciname.kubevirt.objects import advertised, apply_body, management
from pciname.kubevirt.resources import resource_kind
from pciname.policy.audit import audit, gpu_options, infer_profiles
from tests.cli_run import pciname as run
from tests.conftest import LATEST
from tests.fake_kube import TOKEN, FakeKube, conflict_status, kubevirt, node
from tests.kube_documents import A10, GRID, T4_OLD, cluster_nodes


@pytest.fixture
def fake():
    """This module's own fake API server, one a test (it overrides conftest's)."""
    server = FakeKube(
        nodes=cluster_nodes(),
        kubevirts=[kubevirt({"pciHostDevices": [A10, T4_OLD], "mediatedDevices": [GRID]})],
    ).start()
    yield server
    server.stop()


# -- pure functions --------------------------------------------------------------


def test_resource_kinds():
    assert resource_kind("nvidia.com/GA102GL_A10") == "pci"
    assert resource_kind("nvidia.com/2335") == "pci"
    assert resource_kind("nvidia.com/GRID_T4-1Q") == "mdev"
    assert resource_kind("nvidia.com/gpu") == "container"
    assert resource_kind("nvidia.com/mig-1g.10gb") == "container"
    assert resource_kind("devices.kubevirt.io/kvm") == "other"


def test_advertised_counts_capacity_and_allocatable():
    found = advertised(cluster_nodes())
    assert found["nvidia.com/GA102GL_A10"] == {"gpu-a10-1": 2, "gpu-a10-2": 3}
    assert "nvidia.com/AD104GL_L4" not in found  # 0 after its plugin went away
    assert "devices.kubevirt.io/kvm" not in found


def test_management_detection():
    assert management(kubevirt({}))["manager"] is None
    cozy = kubevirt(
        {},
        namespace="cozy-kubevirt",
        labels={
            "app.kubernetes.io/managed-by": "Helm",
            "helm.toolkit.fluxcd.io/name": "kubevirt",
            "helm.toolkit.fluxcd.io/namespace": "cozy-kubevirt",
        },
        annotations={"meta.helm.sh/release-name": "kubevirt", "meta.helm.sh/release-namespace": "cozy-kubevirt"},
        managed_fields=[
            {
                "manager": "helm-controller",
                "operation": "Update",
                "apiVersion": "kubevirt.io/v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {
                    "f:spec": {"f:configuration": {"f:permittedHostDevices": {".": {}, "f:pciHostDevices": {}}}}
                },
            },
            {
                "manager": "virt-operator",
                "operation": "Update",
                "apiVersion": "kubevirt.io/v1",
                "fieldsType": "FieldsV1",
                "fieldsV1": {"f:status": {}},
            },
        ],
    )
    info = management(cozy)
    assert info["manager"] == "cozystack"
    assert info["field_managers"] == ["helm-controller"]
    assert any("Flux HelmRelease cozy-kubevirt/kubevirt" in e for e in info["evidence"])
    assert any(e == "namespace cozy-kubevirt" for e in info["evidence"])
    assert management(kubevirt({}, labels={"cozystack.io/system": "true"}))["manager"] == "cozystack"
    hco = kubevirt(
        {},
        namespace="openshift-cnv",
        owner_references=[
            {
                "apiVersion": "hco.kubevirt.io/v1beta1",
                "kind": "HyperConverged",
                "name": "kubevirt-hyperconverged",
                "uid": "x",
            }
        ],
    )
    assert management(hco)["manager"] == "hyperconverged"
    # Another manager alone is no refusal (server-side apply reports the conflict).
    other = kubevirt(
        {},
        managed_fields=[
            {
                "manager": "kubectl-client-side-apply",
                "fieldsV1": {"f:spec": {"f:configuration": {"f:permittedHostDevices": {}}}},
            }
        ],
    )
    assert management(other) == {"manager": None, "evidence": [], "field_managers": ["kubectl-client-side-apply"]}


def test_infer_profiles():
    inferred = infer_profiles(
        ["nvidia.com/GH100H100_SXM5_80GB", "nvidia.com/GA102GL_A10", "nvidia.com/GRID_T4-1Q", "nvidia.com/gpu"]
    )
    assert inferred["names"] == ["nvidia.com/GA102GL_A10", "nvidia.com/GH100H100_SXM5_80GB"]
    assert [n.partition("@")[2] for n in inferred["consistent"]] == ["v1.2.2", "v1.2.3", "v1.2.4"]
    assert inferred["chosen"] == "kubevirt-gpu-device-plugin@v1.2.4"
    assert "gpu-operator@v23.9.2" in inferred["gpu_operator"] and "gpu-operator@v24.3.0" not in inferred["gpu_operator"]
    assert inferred["unexplained"][LATEST] == ["nvidia.com/GH100H100_SXM5_80GB"]
    old = infer_profiles(["nvidia.com/TU104GL_Tesla_T4"])
    assert [n.partition("@")[2] for n in old["consistent"]] == ["v1.0.0", "v1.0.1"]
    nothing = infer_profiles(["nvidia.com/GRID_T4-1Q"])
    assert nothing["names"] == [] and nothing["chosen"] is None


def test_audit_pure():
    report = audit(kubevirt({"pciHostDevices": [A10, T4_OLD], "mediatedDevices": [GRID]}), cluster_nodes(), "auto")
    assert report["profile"] == LATEST and report["profile_source"] == "inferred"
    got = sorted((f["code"], f["resource_name"]) for f in report["findings"])
    assert got == [
        ("advertised-not-permitted", "nvidia.com/TU104GL_TESLA_T4"),
        ("permitted-not-advertised", "nvidia.com/TU104GL_Tesla_T4"),
        ("wrong-resource-name", "nvidia.com/TU104GL_Tesla_T4"),
    ]
    wrong = next(f for f in report["findings"] if f["code"] == "wrong-resource-name")
    assert wrong["path"] == "spec.configuration.permittedHostDevices.pciHostDevices[1].resourceName"
    assert wrong["expected"] == "nvidia.com/TU104GL_TESLA_T4"
    rows = {r["resource_name"]: r for r in report["advertised"]}
    assert rows["nvidia.com/gpu"]["kind"] == "container" and not rows["nvidia.com/gpu"]["permitted"]
    assert rows["nvidia.com/GRID_T4-1Q"]["permitted"]
    assert report["permitted"][0]["nodes"] == {"gpu-a10-1": 2, "gpu-a10-2": 3}
    # Under v1.0.1 the old spelling is right and the node advertising the new one is the odd one out.
    old = audit(kubevirt({"pciHostDevices": [T4_OLD]}), cluster_nodes()[2:3], "v1.0.1")
    assert [(f["code"], f["resource_name"]) for f in old["findings"]] == [
        ("permitted-not-advertised", "nvidia.com/TU104GL_Tesla_T4"),
        ("advertised-not-permitted", "nvidia.com/GRID_T4-1Q"),
        ("advertised-not-permitted", "nvidia.com/TU104GL_TESLA_T4"),
    ]


def test_gpu_options_pure():
    kv = kubevirt(
        {
            "pciHostDevices": [
                A10,
                {**A10, "pciVendorSelector": "10DE:2237", "resourceName": "nvidia.com/GA102GL_A10G"},
                T4_OLD,
            ],
            "mediatedDevices": [GRID],
        }
    )
    options = gpu_options(kv, cluster_nodes())
    assert options[0] == {
        "resource_name": "nvidia.com/GA102GL_A10",
        "kind": "pci",
        "selectors": ["10DE:2236"],
        "devices": ["10de:2236"],
        "models": ["NVIDIA GA102GL [A10]"],
        "allocatable": 5,
        "nodes": [{"name": "gpu-a10-1", "allocatable": 2}, {"name": "gpu-a10-2", "allocatable": 3}],
    }
    assert [o["resource_name"] for o in options] == [
        "nvidia.com/GA102GL_A10",
        "nvidia.com/GA102GL_A10G",
        "nvidia.com/TU104GL_Tesla_T4",
        "nvidia.com/GRID_T4-1Q",
    ]
    assert options[1]["allocatable"] == 0 and options[1]["nodes"] == []
    assert options[3]["models"] == ["GRID T4-1Q"] and options[3]["allocatable"] == 16


def test_apply_body_is_minimal():
    kv = kubevirt({"pciHostDevices": [T4_OLD]})
    assert apply_body(kv, {"pciHostDevices": [A10]}) == {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"permittedHostDevices": {"pciHostDevices": [A10]}}},
    }


# -- the real client against the fake server ----------------------------------------


def test_read_cluster_with_the_real_client(fake, tmp_path):
    client = connect(str(fake.kubeconfig(tmp_path)))
    state = read_cluster(client)
    assert state.kubevirt["metadata"]["name"] == "kubevirt"
    assert [n["metadata"]["name"] for n in state.nodes] == [n["metadata"]["name"] for n in cluster_nodes()]
    assert [(r.method, r.path) for r in fake.requests] == [
        ("GET", "/apis/kubevirt.io/v1/kubevirts"),
        ("GET", "/api/v1/nodes"),
    ]
    assert all(r.headers["authorization"] == f"Bearer {TOKEN}" for r in fake.requests)


def test_audit_command_is_read_only(fake, tmp_path, capsys):
    code, out, err = run("audit", "--kubeconfig", fake.kubeconfig(tmp_path), "--profile", "auto", "-o", "json")
    assert code == 1, err
    report = json.loads(out)
    assert report["kubevirt"] == "kubevirt/kubevirt"
    assert report["profile"] == LATEST
    assert {f["code"] for f in report["findings"]} == {
        "wrong-resource-name",
        "permitted-not-advertised",
        "advertised-not-permitted",
    }
    assert {r.method for r in fake.requests} == {"GET"}
    code, out, _ = run("audit", "--kubeconfig", fake.kubeconfig(tmp_path), "-o", "table")
    assert code == 1
    assert "wrong-resource-name: spec.configuration.permittedHostDevices.pciHostDevices[1].resourceName:" in out
    assert "nvidia.com/gpu               container  no" in out


def test_audit_clean_cluster_exits_0(tmp_path, capsys):
    server = FakeKube(nodes=cluster_nodes()[:2], kubevirts=[kubevirt({"pciHostDevices": [A10]})]).start()
    try:
        code, out, err = run("audit", "--kubeconfig", server.kubeconfig(tmp_path), "-o", "yaml")
    finally:
        server.stop()
    assert code == 0, out + err
    assert "findings: []" in out


def test_gpu_options_command(fake, tmp_path, capsys):
    code, out, err = run("gpu-options", "--kubeconfig", fake.kubeconfig(tmp_path))
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].split() == ["RESOURCE", "MODEL", "DEVICE", "ALLOCATABLE", "NODES"]
    assert lines[1].split() == [
        "nvidia.com/GA102GL_A10",
        "NVIDIA",
        "GA102GL",
        "[A10]",
        "10de:2236",
        "5",
        "gpu-a10-1=2,gpu-a10-2=3",
    ]
    code, out, _ = run("gpu-options", "--kubeconfig", fake.kubeconfig(tmp_path), "-o", "json")
    assert json.loads(out)[2]["resource_name"] == "nvidia.com/GRID_T4-1Q"


def test_apply_sends_exactly_one_server_side_apply(fake, tmp_path, capsys):
    code, out, err = run(
        "apply",
        "permitted-host-devices",
        "10de:2236",
        "10de:1eb8",
        "--mdev",
        "GRID T4-1Q",
        "--kubeconfig",
        fake.kubeconfig(tmp_path),
        "-o",
        "json",
    )
    assert code == 0, err
    patches = [r for r in fake.requests if r.method != "GET"]
    assert len(patches) == 1
    (patch,) = patches
    assert patch.method == "PATCH"
    assert patch.path == "/apis/kubevirt.io/v1/namespaces/kubevirt/kubevirts/kubevirt"
    assert patch.query == {"fieldManager": ["pciname"]}  # no force unless asked
    assert patch.headers["content-type"] == "application/apply-patch+yaml"
    expected = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {
            "configuration": {
                "permittedHostDevices": {
                    "pciHostDevices": [
                        A10,
                        {
                            "pciVendorSelector": "10DE:1EB8",
                            "resourceName": "nvidia.com/TU104GL_TESLA_T4",
                            "externalResourceProvider": True,
                        },
                    ],
                    "mediatedDevices": [GRID],
                }
            }
        },
    }
    assert patch.body == json.dumps(expected).encode()
    result = json.loads(out)
    assert result["field_manager"] == "pciname" and result["force"] is False and result["dry_run"] is False
    assert result["permittedHostDevices"] == expected["spec"]["configuration"]["permittedHostDevices"]
    stored = fake.kubevirts[0]["spec"]["configuration"]["permittedHostDevices"]
    assert stored == expected["spec"]["configuration"]["permittedHostDevices"]


def test_apply_force_and_dry_run(fake, tmp_path, capsys):
    before = json.dumps(fake.kubevirts[0])
    code, out, err = run(
        "apply",
        "permitted-host-devices",
        "10de:2236",
        "--force",
        "--dry-run",
        "--kubeconfig",
        fake.kubeconfig(tmp_path),
        "-o",
        "table",
    )
    assert code == 0, err
    (patch,) = [r for r in fake.requests if r.method == "PATCH"]
    assert patch.query == {"fieldManager": ["pciname"], "force": ["true"], "dryRun": ["All"]}
    assert json.dumps(fake.kubevirts[0]) == before
    assert out.startswith("applied 1 pciHostDevices and 0 mediatedDevices entries to KubeVirt kubevirt/kubevirt")
    assert "forced" in out and "dry run" in out


def test_apply_leaves_out_broken_names_and_says_so(fake, tmp_path, capsys):
    code, _out, err = run(
        "apply",
        "permitted-host-devices",
        "10de:2236",
        "10de:05be",
        "--kubeconfig",
        fake.kubeconfig(tmp_path),
        "-o",
        "json",
    )
    assert code == 1
    assert "left out 10de:05be: invalid-resource-name" in err
    (patch,) = [r for r in fake.requests if r.method == "PATCH"]
    assert patch.json()["spec"]["configuration"]["permittedHostDevices"] == {"pciHostDevices": [A10]}


def test_apply_refuses_when_cozystack_manages_the_cr(tmp_path, capsys):
    cozy = kubevirt(
        {"pciHostDevices": [A10]},
        namespace="cozy-kubevirt",
        labels={
            "app.kubernetes.io/managed-by": "Helm",
            "helm.toolkit.fluxcd.io/name": "kubevirt",
            "helm.toolkit.fluxcd.io/namespace": "cozy-kubevirt",
        },
        annotations={"meta.helm.sh/release-name": "kubevirt", "meta.helm.sh/release-namespace": "cozy-kubevirt"},
    )
    server = FakeKube(nodes=cluster_nodes(), kubevirts=[cozy]).start()
    try:
        code, out, err = run(
            "apply",
            "permitted-host-devices",
            "10de:2236",
            "--force",
            "--kubeconfig",
            server.kubeconfig(tmp_path),
        )
    finally:
        server.stop()
    assert code == 1 and out == ""
    assert "refusing to apply: cozy-kubevirt/kubevirt is managed by Cozystack" in err
    assert "--format cozystack" in err
    assert [r.method for r in server.requests] == ["GET", "GET"]


def test_apply_conflict_is_reported(tmp_path, capsys):
    server = FakeKube(
        nodes=cluster_nodes(), kubevirts=[kubevirt({})], patch_status=409, patch_status_body=conflict_status()
    ).start()
    try:
        code, _out, err = run(
            "apply", "permitted-host-devices", "10de:2236", "--kubeconfig", server.kubeconfig(tmp_path)
        )
    finally:
        server.stop()
    assert code == 1
    assert 'conflict with "kubectl-client-side-apply"' in err and "--force" in err
    assert len(err.strip().splitlines()) == 1


def test_apply_with_profile_auto_uses_the_running_release(tmp_path, capsys):
    nodes = [node("h100-1", {"nvidia.com/GH100H100_SXM5_80GB": "8"})]
    server = FakeKube(nodes=nodes, kubevirts=[kubevirt({})]).start()
    try:
        code, out, err = run(
            "apply",
            "permitted-host-devices",
            "10de:2330",
            "--profile",
            "auto",
            "--kubeconfig",
            server.kubeconfig(tmp_path),
            "-o",
            "json",
        )
    finally:
        server.stop()
    assert code == 0, err
    result = json.loads(out)
    assert result["profile"] == "kubevirt-gpu-device-plugin@v1.2.4" and result["profile_source"] == "inferred"
    (patch,) = [r for r in server.requests if r.method == "PATCH"]
    assert (
        patch.json()["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"][0]["resourceName"]
        == "nvidia.com/GH100H100_SXM5_80GB"
    )


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_context_selection_and_unreachable_server(fake, tmp_path, capsys):
    config = fake.kubeconfig(tmp_path, extra_context_server=f"http://127.0.0.1:{_closed_port()}")
    code, out, err = run("audit", "--kubeconfig", config)  # current context: the closed port
    assert code == 2
    assert err.startswith("pciname: error: cannot list KubeVirt CRs: cannot reach the API server")
    assert len(err.strip().splitlines()) == 1
    code, _out, err = run("gpu-options", "--kubeconfig", config, "--context", "fake", "-o", "json")
    assert code == 0, err


def test_bad_kubeconfig_and_missing_kubevirt(tmp_path, capsys):
    code, _, err = run("audit", "--kubeconfig", tmp_path / "nope")
    assert code == 2 and err.startswith("pciname: error: ")
    server = FakeKube(nodes=cluster_nodes(), kubevirt_crd=False).start()
    try:
        code, out, err = run("gpu-options", "--kubeconfig", server.kubeconfig(tmp_path))
        assert code == 2 and "no KubeVirt CR" in err
        code, out, err = run("audit", "--kubeconfig", server.kubeconfig(tmp_path), "-o", "json")
        assert code == 1
        assert json.loads(out)["kubevirt"] is None
    finally:
        server.stop()


@pytest.mark.parametrize(
    "content",
    [
        bytes(range(256)) * 8,  # a binary file
        b"apiVersion: v1\nclusters: !!timestamp 2020-13-45\n",
        b"apiVersion: v1\ncurrent-context: 0x_\n",
        b"apiVersion: v1\ncurrent-context: 0b_\n",
        b"apiVersion: v1\nclusters: !!float x\n",
        b"- just\n- a list\n",
        b"{{{{ not yaml",
    ],
)
def test_a_kubeconfig_that_is_not_one_is_a_one_line_error(content, tmp_path, capsys):
    path = tmp_path / "kubeconfig"
    path.write_bytes(content)
    for command in ("audit", "gpu-options"):
        code, out, err = run(command, "--kubeconfig", path)
        assert (code, out) == (2, "")
        assert err.startswith(f"pciname: error: cannot load kubeconfig {path}") and err.count("\n") == 1


def test_a_kubeconfig_that_is_not_a_regular_file_is_refused(tmp_path, capsys):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    for path in ("/dev/zero", fifo):
        code, _, err = run("audit", "--kubeconfig", path)
        assert code == 2 and "not a regular file" in err


def test_several_kubevirts_need_a_choice(tmp_path, capsys):
    server = FakeKube(
        nodes=[], kubevirts=[kubevirt({}), kubevirt({"pciHostDevices": [A10]}, namespace="kv2", name="second")]
    ).start()
    try:
        code, _, err = run("gpu-options", "--kubeconfig", server.kubeconfig(tmp_path))
        assert code == 2 and "--kubevirt NAMESPACE/NAME" in err
        code, out, err = run(
            "gpu-options", "--kubeconfig", server.kubeconfig(tmp_path), "--kubevirt", "kv2/second", "-o", "json"
        )
        assert code == 0 and json.loads(out)[0]["resource_name"] == "nvidia.com/GA102GL_A10"
    finally:
        server.stop()


def test_audit_names_vgpu_types_by_the_release_rule():
    """v1.0.x names a vGPU type by its second space-separated field: a CR
    permitting GRID T4-1Q as nvidia.com/T4-1Q is right there, and wrong
    (GRID_T4-1Q expected) from v1.1 on."""
    old_style = {"mdevNameSelector": "GRID T4-1Q", "resourceName": "nvidia.com/T4-1Q", "externalResourceProvider": True}
    # a vGPU node (labelled so: vm-passthrough, the fake's default, is a variant-label-mismatch)
    nodes = [node("gpu-t4-1", {"nvidia.com/T4-1Q": "16"}, labels={"nvidia.com/gpu.workload.config": "vm-vgpu"})]
    old = audit(kubevirt({"mediatedDevices": [old_style]}), nodes, "kubevirt-gpu-device-plugin@v1.0.1")
    assert old["findings"] == []
    new = audit(kubevirt({"mediatedDevices": [old_style]}), nodes, "kubevirt-gpu-device-plugin@v1.6.0")
    wrong = [f for f in new["findings"] if f["code"] == "wrong-mdev-resource-name"]
    assert [(f["resource_name"], f["expected"]) for f in wrong] == [("nvidia.com/T4-1Q", "nvidia.com/GRID_T4-1Q")]
