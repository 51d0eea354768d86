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


def test_a_count_above_the_most_gpus_a_served_node_lists_never_fits():
    # v2.8.0 on: MarshalNodeDevices' JSON; before: DecodeNodeDevices' "ID,count,mem,cores,type,numa,health:" entries.
    json_listed = node("gpu-1", {"gpu": "on"}, gpus=30)
    json_listed["metadata"]["annotations"] = {
        "hami.io/node-nvidia-register": '[{"id":"GPU-0","count":10},{"id":"GPU-1","count":10},{"id":"GPU-2","count":10}]'
    }
    colon_listed = node("gpu-2", {"gpu": "on"}, gpus=20)
    colon_listed["metadata"]["annotations"] = {
        "hami.io/node-nvidia-register": "GPU-a,10,23028,100,NVIDIA-A10,0,true:GPU-b,10,23028,100,NVIDIA-A10,0,true:"
    }
    pods = [
        pod("three", "gpu-1", limits={"nvidia.com/gpu": "3"}),
        pod("four", "", limits={"nvidia.com/gpu": "4", "nvidia.com/gpumem": "1000"}),
        pod("odd", "", limits={"nvidia.com/gpu": "1.5"}),  # no whole number: not HAMi's count to judge here
    ]
    report = audit_hami(release("v2.4.0"), [json_listed, colon_listed], pods)
    assert report["gpus"] == {"gpu-1": 3, "gpu-2": 2}
    assert report["problems"] == [
        {
            "code": "hami-count-unfit",
            "node": "(not scheduled)",
            "message": "pod tenant-a/four container c asks for 4 nvidia.com/gpu: HAMi puts each on a distinct GPU, "
            "and no node it serves lists more than 3: it never fits",
        }
    ]
    # Without the annotation, no node's GPUs are known: nothing is judged.
    del json_listed["metadata"]["annotations"], colon_listed["metadata"]["annotations"]
    assert audit_hami(release("v2.4.0"), [json_listed, colon_listed], pods)["problems"] == []
