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
