"""The VgpuTypes RPC on a real loopback server: the same answer as the
library (and so as ``pciname vgpu-types -o json``), through the stub and
the typed client."""

from __future__ import annotations

import grpc
import pytest

from pciname.client import Client
from pciname.errors import RemoteInvalidArgument, RemoteUnknownProfile
from pciname.kubevirt.vgpu import vgpu_types
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc

from .server_util import packaged_server


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    with packaged_server(tmp_path_factory.mktemp("vgpu-grpc-cache")) as server:
        yield server


@pytest.fixture(scope="module")
def client(server):
    with Client(f"127.0.0.1:{server.port}", timeout=20) as c:
        yield c


@pytest.fixture(scope="module")
def stub(server):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield pb_grpc.PciNameStub(channel)


@pytest.mark.parametrize(
    ("device", "profile"),
    [("10de:2236", ""), ("0x10DE:0x1EB8", "v1.0.1"), ("25b6", "gpu-operator@v24.9.0"), ("2331", "")],
)
def test_client_answer_equals_the_library(client, device, profile):
    got = client.vgpu_types(device, profile)
    want = vgpu_types(device, profile or "latest")
    assert got.covered and got.message == ""
    assert (got.device, got.profile, got.families) == (want["device"], want["profile"], want["families"])
    assert (got.catalogue_release, got.catalogue_commit) == (want["catalogue"]["release"], want["catalogue"]["commit"])
    assert got.read_on_host == want["read_on_host"]
    assert got.types == want["types"]


def test_a10_24q_over_the_wire(stub):
    answer = stub.VgpuTypes(pb.VgpuTypesRequest(device="10de:2236"), timeout=20)
    t = next(t for t in answer.types if t.type == "A10-24Q")
    assert (t.mdev_name, t.resource_name, t.max_instances, t.vgpu_config) == (
        "NVIDIA A10-24Q",
        "nvidia.com/NVIDIA_A10-24Q",
        1,
        "A10-24Q",
    )
    assert t.mdev_name_certainty == "observed" and t.evidence.kind == "kubevirt-config"
    unknown = stub.VgpuTypes(pb.VgpuTypesRequest(device="10de:2331"), timeout=20).types[0]
    assert (
        not unknown.HasField("mdev_name")
        and not unknown.HasField("evidence")
        and unknown.mdev_name_certainty == "unknown"
    )


def test_device_not_covered_is_an_answer(client):
    got = client.vgpu_types("10de:2684")
    assert not got.covered and got.types == [] and "v0.5.0" in got.message and got.device == "10de:2684"


@pytest.mark.parametrize(
    ("device", "profile", "error"),
    [
        ("zz", "", RemoteInvalidArgument),
        ("1002:2236", "", RemoteInvalidArgument),
        ("", "", RemoteInvalidArgument),
        ("10de:2236", "auto", RemoteInvalidArgument),
        ("10de:2236", "v9.9.9", RemoteUnknownProfile),
        ("x" * 65, "", RemoteInvalidArgument),
    ],
)
def test_bad_requests(client, device, profile, error):
    with pytest.raises(error):
        client.vgpu_types(device, profile)
