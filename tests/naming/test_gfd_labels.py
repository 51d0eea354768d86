"""``gfd-labels`` as a request (pciname.capabilities.gfd_labels): its rules,
and its answer, the labels of pciname.naming.container with where each rule
was read; the labels it gives are the upstream README's for the README's
node (NVIDIA/k8s-device-plugin v0.20.0 docs/gpu-feature-discovery/README.md
136-147: tests/kube_documents.GFD_NODE_LABELS)."""

from __future__ import annotations

import grpc
import pytest

from pciname.capabilities.gfd_labels import GfdLabelsRequest, answer
from pciname.capabilities.registry import ask
from pciname.errors import PcinameError
from pciname.requests.spelling import RequestError, Spelling
from tests.kube_documents import GFD_NODE_LABELS


def test_the_readmes_node_is_what_the_answer_labels():
    """The README's node: one A100 (NVML's "A100-SXM4-40GB", compute 8.0, 39538 MiB), no sharing."""
    request = GfdLabelsRequest("A100-SXM4-40GB", 1, None, 39538, "8.0").validated()
    got = ask("gfd-labels", request)
    gfd = {
        k: v for k, v in GFD_NODE_LABELS.items() if k.startswith("nvidia.com/gpu.") and k != "nvidia.com/gpu.machine"
    }
    assert {k: v for k, v in got["labels"].items() if k in gfd} == gfd
    # the labels the README's older release did not show yet
    assert set(got["labels"]) - set(gfd) == {"nvidia.com/gpu.replicas", "nvidia.com/gpu.sharing-strategy"}
    assert got["release"] == "v0.20.0" and got["commit"].startswith("1b826acc")
    assert got["product"].startswith("NVML's name as given ('A100-SXM4-40GB')")


def test_sharing_and_an_older_release():
    shared = answer(GfdLabelsRequest("Tesla T4 (x)", 2, "v0.15.1", replicas=4).validated())
    assert shared["labels"]["nvidia.com/gpu.product"] == "Tesla-T4-(x)-SHARED"  # v0.15.x only replaced spaces
    renamed = answer(GfdLabelsRequest("Tesla T4", 2, replicas=4, renamed=True, sharing_strategy="mps").validated())
    assert renamed["labels"]["nvidia.com/gpu.product"] == "Tesla-T4"  # renamed: no -SHARED, same label
    assert renamed["labels"]["nvidia.com/gpu.sharing-strategy"] == "mps"


@pytest.mark.parametrize(
    ("request_", "cli", "rpc"),
    [
        (GfdLabelsRequest(""), "no NVML name given: name the GPUs as nvidia-smi does", "empty request: no product"),
        (
            GfdLabelsRequest("x", 0),
            "--count is 1 to 1024, --replicas at least 1, --memory-mib not negative",
            "count is 1 to 1024, replicas at least 1, memory_mib not negative",
        ),
        (
            GfdLabelsRequest("x", memory_mib=-1),
            "--count is 1 to 1024, --replicas at least 1, --memory-mib not negative",
            "count is 1 to 1024, replicas at least 1, memory_mib not negative",
        ),
        (GfdLabelsRequest("x", compute="8"), "--compute is MAJOR.MINOR (8.0), not '8'", None),
        (GfdLabelsRequest("x", sharing_strategy="x"), "--sharing-strategy is one of time-slicing, mps", None),
    ],
)
def test_a_broken_rule_is_one_line_for_each_surface(request_, cli, rpc):
    with pytest.raises(RequestError) as refused:
        request_.validated()
    assert str(refused.value) == cli
    if rpc is not None:
        assert refused.value.spelled(Spelling.RPC) == rpc


def test_an_unknown_release_is_one_line():
    with pytest.raises(PcinameError, match=r"^unknown k8s-device-plugin release 'v0\.1\.0': pciname knows v0\.15\.0"):
        GfdLabelsRequest("x", release="v0.1.0").validated()


def test_the_rpc_answers_what_the_library_does_on_a_loopback_server(client, stub):
    from pciname.server._proto import pciname_pb2 as pb

    remote = client.gfd_labels("NVIDIA H100 80GB HBM3", 8, compute="9.0", memory_mib=81559, replicas=2)
    local = answer(GfdLabelsRequest("NVIDIA H100 80GB HBM3", 8, None, 81559, "9.0", 2).validated())
    assert remote == local
    assert client.gfd_labels("Tesla T4")["labels"]["nvidia.com/gpu.count"] == "1"  # 0 on the wire: 1
    with pytest.raises(grpc.RpcError) as refused:
        stub.GfdLabels(pb.GfdLabelsRequest(product="x", release="v0.1.0"))
    assert refused.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert refused.value.details().startswith("unknown k8s-device-plugin release 'v0.1.0'")
