"""The DraClaims RPC on a real server on loopback: the documents and notes
``pciname vm-gpus --dra`` prints, byte for byte, and its refusals as
INVALID_ARGUMENT with the same one line."""

from __future__ import annotations

import grpc
import pytest

from pciname.server._proto import pciname_pb2 as pb
from tests.cli_run import Ran, pciname


def cli(*args: str) -> Ran:
    return pciname("vm-gpus", *args, "--dra")


@pytest.mark.parametrize(
    "argv",
    [["10de:2236=2"], ["10de:2236", "2bb4", "--kubevirt", "v1.8.3", "--resource-api", "v1beta1", "--product-name"]],
)
def test_the_rpc_answers_as_the_cli_prints(client, argv):
    devices = [a for a in argv if not a.startswith("--") and not a.startswith("v")]
    options = {"kubevirt": "", "resource_api": "", "product_name": "--product-name" in argv}
    if "--kubevirt" in argv:
        options["kubevirt"] = argv[argv.index("--kubevirt") + 1]
    if "--resource-api" in argv:
        options["resource_api"] = argv[argv.index("--resource-api") + 1]
    response = client.dra_claims(devices, **options)
    assert response.yaml == cli(*argv, "-o", "yaml").stdout
    printed = cli(*argv, "-o", "json")
    assert response.json == printed.stdout
    assert [f"pciname: {n}" for n in response.notes] == printed.stderr.splitlines()[1:]
    assert printed.stderr.splitlines()[0] == (
        f"pciname: DRA driver {response.dra_driver}, KubeVirt {response.kubevirt}, "
        f"resource.k8s.io/{response.resource_api}"
    )


@pytest.mark.parametrize(
    ("request_", "fragment"),
    [
        (pb.DraClaimsRequest(), "empty request"),
        (pb.DraClaimsRequest(devices=["10de:2236"], dra_driver="v25.12.0"), "nearest that works"),
        (pb.DraClaimsRequest(devices=["10de:2236"], dra_driver="v0.4.9"), "no such release"),
        (pb.DraClaimsRequest(devices=["1002:0001"]), "NVIDIA GPUs only"),
        (pb.DraClaimsRequest(devices=["10de:2236"], name="x" * 400), "name"),
    ],
)
def test_refusals_are_invalid_argument(stub, request_, fragment):
    with pytest.raises(grpc.RpcError) as caught:
        stub.DraClaims(request_)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in caught.value.details() and "\n" not in caught.value.details()
