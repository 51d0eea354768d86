"""``pciname audit``'s fleet report: one line per node the GPU Operator
labels (its workload in effect, its ``pre-installed`` label, the labels'
findings), read by the real kubernetes client from the fake API server.
The labels are the ones NVIDIA/gpu-operator v25.10.1
(846018752b8a34d4039feb6f18629b4c64210e32) ``controllers/state_manager.go``
``gpuStateLabels`` sets per workload, and the one k8s-driver-manager v0.9.1
(be979ef08699fac8a83f2ffb85fa1ff3d606ba20) ``cmd/driver-manager/main.go``
sets on a node whose host driver answers ``nvidia-smi``."""

from __future__ import annotations

import json
import re

import pytest

from pciname.host.doctor.fleet import fleet
from tests.cli_run import pciname as run
from tests.fake_kube import FakeKube, kubevirt, node

A10 = {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/GA102GL_A10"}
PASSTHROUGH = {"nvidia.com/gpu.workload.config": "vm-passthrough", "nvidia.com/gpu.deploy.vfio-manager": "true"}
VGPU = {"nvidia.com/gpu.workload.config": "vm-vgpu", "nvidia.com/gpu.deploy.vgpu-manager": "true"}
CONTAINER = {"nvidia.com/gpu.deploy.device-plugin": "true", "nvidia.com/gpu.deploy.driver": "pre-installed"}
STRANDED = {**PASSTHROUGH, "nvidia.com/gpu.deploy.driver": "pre-installed"}


def cpu_node(name: str) -> dict:
    """A node the GPU Operator does not label (the fake's nodes carry a workload label)."""
    plain = node(name, {})
    del plain["metadata"]["labels"]["nvidia.com/gpu.workload.config"]
    return plain


def nodes() -> list[dict]:
    return [
        node("gpu-b", {"nvidia.com/GA102GL_A10": "1"}, labels=STRANDED),
        node("gpu-a", {"nvidia.com/GA102GL_A10": "1"}, labels=PASSTHROUGH),
        node("gpu-c", {}, labels=VGPU),
        node("gpu-d", {"nvidia.com/gpu": "1"}, labels=CONTAINER),
        cpu_node("cpu-1"),
    ]


@pytest.fixture
def fake():
    server = FakeKube(nodes=nodes(), kubevirts=[kubevirt({"pciHostDevices": [A10]})]).start()
    yield server
    server.stop()


def test_the_fleet_is_a_line_per_labelled_node():
    lines = [line.to_dict() for line in fleet(nodes())]
    assert [(n["node"], n["variant"], n["workload"], n["preinstalled"]) for n in lines] == [
        ("gpu-a", "default", "vm-passthrough", False),
        ("gpu-b", "default", "vm-passthrough", True),
        ("gpu-c", "vgpu", "vm-vgpu", False),
        ("gpu-d", "container", "container", True),  # the container variant keeps the host driver: no finding
    ]
    assert [[f["code"] for f in n["findings"]] for n in lines] == [[], ["preinstalled-label"], [], []]
    assert (
        lines[1]["findings"][0]["way_back"][1]
        == "kubectl label node gpu-b nvidia.com/gpu.deploy.driver- once the host driver is gone"
    )


def test_audit_reports_the_fleet_and_the_labels_findings(fake, tmp_path):
    code, out, err = run("audit", "--timeout", "900", "--kubeconfig", fake.kubeconfig(tmp_path), "-o", "json")
    assert code == 1, err
    report = json.loads(out)
    assert [n["node"] for n in report["fleet"]] == ["gpu-a", "gpu-b", "gpu-c", "gpu-d"]
    labelled = [f for f in report["findings"] if f["code"] == "preinstalled-label"]
    assert labelled == [
        {
            "code": "preinstalled-label",
            "resource_name": None,
            "path": None,
            "value": "gpu-b",
            "expected": None,
            "message": "node gpu-b: nvidia.com/gpu.deploy.driver=pre-installed on a vm-passthrough node",
        }
    ]
    assert {r.method for r in fake.requests} == {"GET"}


def test_audit_table_shows_the_fleet(fake, tmp_path):
    code, out, err = run("audit", "--timeout", "900", "--kubeconfig", fake.kubeconfig(tmp_path))
    assert code == 1, err
    assert (
        "NODE   VARIANT (WORKLOAD)        PRE-INSTALLED  FINDINGS\n"
        "gpu-a  default (vm-passthrough)  no             -\n"
        "gpu-b  default (vm-passthrough)  yes            preinstalled-label\n"
        "gpu-c  vgpu (vm-vgpu)            no             -\n"
        "gpu-d  container (container)     yes            -\n"
    ) in out
    assert (
        "preinstalled-label: node gpu-b: nvidia.com/gpu.deploy.driver=pre-installed on a vm-passthrough node\n" in out
    )


def test_a_cluster_without_the_operators_labels_has_no_fleet(tmp_path):
    server = FakeKube(nodes=[cpu_node("cpu-1")], kubevirts=[kubevirt({"pciHostDevices": []})]).start()
    try:
        code, out, err = run("audit", "--timeout", "900", "--kubeconfig", server.kubeconfig(tmp_path), "-o", "json")
    finally:
        server.stop()
    assert json.loads(out)["fleet"] == []


# -- variant-label-mismatch: the label against what the node advertises and what its doctor posted --


def mismatched() -> list[dict]:
    """gpu-e: labelled vm-passthrough, NVIDIA's container plugin advertising
    nvidia.com/gpu beside KubeVirt's PCI name (two owners of one GPU); gpu-f:
    labelled vm-vgpu (the deploy label says so too), advertising a PCI name;
    gpu-g: a vm-vgpu node advertising its vGPU type (no finding)."""
    return [
        node("gpu-e", {"nvidia.com/gpu": "1", "nvidia.com/GA102GL_A10": "1"}, labels=PASSTHROUGH),
        node("gpu-f", {"nvidia.com/GA102GL_A10": "1"}, labels=VGPU),
        node("gpu-g", {"nvidia.com/NVIDIA_A10-24Q": "1"}, labels=VGPU),
    ]


def test_a_label_the_advertised_resources_contradict_is_a_mismatch():
    from pciname.policy.audit import audit

    lines = {n["node"]: n for n in audit(None, mismatched())["fleet"]}
    assert {name: [f["code"] for f in n["findings"]] for name, n in lines.items()} == {
        "gpu-e": ["variant-label-mismatch"],
        "gpu-f": ["variant-label-mismatch"],
        "gpu-g": [],
    }
    assert [n["advertised"] for n in lines.values()] == [["container", "default"], ["default"], ["vgpu"]]
    (e,) = lines["gpu-e"]["findings"]
    assert e["message"] == (
        "labelled vm-passthrough (default), but it advertises nvidia.com/gpu (container's device plugin)"
    )
    assert e["way_back"][0].startswith("kubectl label node gpu-e nvidia.com/gpu.workload.config=container --overwrite")
    (f,) = lines["gpu-f"]["findings"]
    assert "it advertises nvidia.com/GA102GL_A10 (default's device plugin)" in f["message"]


@pytest.fixture(scope="module")
def posted(tmp_path_factory):
    """The Events the doctor posts on gpu-b (a passthrough node whose host driver answers
    nvidia-smi: cozystack#2763), as pciname.host.doctor.publish writes them."""
    from pciname.host.doctor.facts import read_host
    from pciname.host.doctor.fleet import node_line
    from pciname.host.doctor.publish import events
    from pciname.host.doctor.rules import examine
    from tests.host.doctor_nodes import preinstalled_node

    root = tmp_path_factory.mktemp("gpu-b")
    preinstalled_node(root)
    line = node_line("gpu-b", PASSTHROUGH, examine(read_host(root)))
    return {("default", e["metadata"]["name"]): e for e in events("gpu-b", line.findings, "2026-12-08T00:00:00Z")}


def test_audit_reads_what_the_doctor_posted(tmp_path, posted):
    from pciname.cluster.kube import DOCTOR_COMPONENT
    from pciname.host.doctor.publish import COMPONENT

    assert DOCTOR_COMPONENT == COMPONENT
    kubelets = {("default", "gpu-b.1"): {**next(iter(posted.values())), "source": {"component": "kubelet"}}}
    server = FakeKube(nodes=nodes(), kubevirts=[kubevirt({"pciHostDevices": [A10]})]).start()
    server.events = {**posted, **kubelets}
    try:
        code, out, err = run("audit", "--timeout", "900", "--kubeconfig", server.kubeconfig(tmp_path), "-o", "json")
    finally:
        server.stop()
    assert code == 1, err
    (b,) = [n for n in json.loads(out)["fleet"] if n["node"] == "gpu-b"]
    assert [(f["code"], f["subject"]) for f in b["findings"]] == [
        ("preinstalled-label", "gpu-b"),
        ("variant-label-mismatch", "gpu-b"),  # the doctor: the node could serve container, not passthrough
        ("host-driver-preinstalled", "0000:3b:00.0"),  # the doctor's, not the kubelet Event of that reason
    ]
    assert b["findings"][2]["way_back"][0].startswith("keep the host driver from loading")


def test_audit_without_rights_to_events_says_so_and_goes_on(tmp_path):
    def forbidden(handler, request):
        if "/events" not in request.path:
            return False
        handler._send(403, {"kind": "Status", "code": 403, "message": "events is forbidden"})
        return True

    server = FakeKube(nodes=nodes(), kubevirts=[kubevirt({"pciHostDevices": [A10]})], misbehave=forbidden).start()
    try:
        code, out, err = run("audit", "--timeout", "900", "--kubeconfig", server.kubeconfig(tmp_path), "-o", "json")
    finally:
        server.stop()
    assert code == 1 and [n["node"] for n in json.loads(out)["fleet"]] == ["gpu-a", "gpu-b", "gpu-c", "gpu-d"]
    assert err == ("pciname: cannot list Events in default (403): the fleet report leaves out what the doctor posted\n")


def test_the_page_shows_what_audit_prints(tmp_path, posted):
    """docs/why-no-gpu.md's fleet blocks are what ``pciname audit`` prints for
    these nodes and gpu-b's doctor's Events."""
    from tests.conftest import REPO

    page = (REPO / "docs" / "why-no-gpu.md").read_text(encoding="utf-8").split("## Across the fleet", 1)[1]
    blocks = re.findall(r"```text\n(.*?)```", page, re.S)
    server = FakeKube(nodes=nodes() + mismatched(), kubevirts=[kubevirt({"pciHostDevices": [A10]})]).start()
    server.events = dict(posted)
    try:
        code, out, err = run("audit", "--timeout", "900", "--kubeconfig", server.kubeconfig(tmp_path))
    finally:
        server.stop()
    assert (code, err) == (1, "")
    assert len(blocks) == 3 and all(block in out for block in blocks)
