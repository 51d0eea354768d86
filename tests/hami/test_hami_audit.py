"""HAMi in a cluster (pciname.hami.audit): both device plugins on one node,
GPU nodes without the release's node-selector labels, pods asking for HAMi's
names on nodes HAMi does not serve, and the release HAMi's pods run, on Node
and Pod objects shaped as the API server returns them."""

from __future__ import annotations

from pciname.hami.audit import audit_hami
from pciname.hami.releases import release
from tests.fake_kube import pod


def node(name, labels=(), gpus=0):
    status = {"capacity": {"cpu": "8", **({"nvidia.com/gpu": str(gpus)} if gpus else {})}}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": dict(labels)}, "status": status}


HAMI = {"app.kubernetes.io/component": "hami-device-plugin"}
NVIDIA = {"app": "nvidia-device-plugin-daemonset"}


def test_a_cluster_with_each_problem():
    nodes = [
        node("gpu-1", {"gpu": "on", "nvidia.com/gpu.present": "true"}, gpus=10),
        node("gpu-2", {"nvidia.com/gpu.present": "true"}),
        node("cpu-1"),
    ]
    pods = [
        pod("hami-device-plugin-x", "gpu-1", HAMI, image="docker.io/projecthami/hami:v2.8.1", namespace="cozy-hami"),
        pod("nvidia-device-plugin-daemonset-y", "gpu-1", NVIDIA, image="nvcr.io/nvidia/k8s-device-plugin:v0.17.0"),
        pod("train", "gpu-2", limits={"nvidia.com/gpu": "1", "nvidia.com/gpumem": "4096"}),
        pod("fine", "gpu-1", limits={"nvidia.com/gpu": "1", "nvidia.com/gpumem": "4096"}),
        pod("web", "cpu-1"),
    ]
    report = audit_hami(release("v2.9.0"), nodes, pods)
    assert report["problems"] == [
        {
            "code": "both-device-plugins",
            "node": "gpu-1",
            "message": "HAMi's and NVIDIA's device plugins both register nvidia.com/gpu here",
        },
        {
            "code": "gpu-node-not-served",
            "node": "gpu-2",
            "message": "has NVIDIA GPUs but not gpu=on: HAMi's device plugin never runs here",
        },
        {
            "code": "hami-pod-not-served",
            "node": "gpu-2",
            "message": "pod tenant-a/train asks for nvidia.com/gpu, nvidia.com/gpumem on a node without gpu=on",
        },
    ]
    assert (report["hami"], report["in_use"], report["release_differs"]) == ("v2.9.0", ["v2.8.1"], True)


def test_a_cluster_hami_serves_cleanly():
    nodes = [node("gpu-1", {"gpu": "on"}, gpus=10), node("cpu-1")]
    pods = [pod("hami-device-plugin-x", "gpu-1", HAMI, image="projecthami/hami:v2.8.1"), pod("w", "cpu-1")]
    report = audit_hami(release("v2.8.1"), nodes, pods)
    assert report["served"] == ["gpu-1"]
    assert report["node_selector"]["labels"] == {"gpu": "on"}
    assert (report["in_use"], report["release_differs"], report["problems"]) == (["v2.8.1"], False, [])
