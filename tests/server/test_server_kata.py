"""The Kata family over gRPC, on a real server on loopback: Resolve,
ResolveBatch, Reverse, Diff, ListDevices and ListProfiles know the Kata
profiles, take ``alias``/``nvswitch_alias`` (unset, empty or a value, as
the plugin's variables), answer as the library does, and refuse an alias
for another profile with INVALID_ARGUMENT. A request's own aliases never
enter the server's cache of encoded answers."""

from __future__ import annotations

import grpc
import pytest

import pciname
from pciname import client as remote
from pciname.server._proto import pciname_pb2 as pb

A10 = "10de:2236"
KATA = "gpu-operator@v26.7.0+kata"


def test_resolve_under_the_default_alias_and_with_an_empty_one(stub):
    shared = stub.Resolve(pb.ResolveRequest(device=A10, profile=KATA))
    assert (shared.resource_name, shared.alias, shared.plugin) == ("nvidia.com/pgpu", "pgpu", "sandbox-device-plugin")
    assert shared.socket_path == "/var/lib/kubelet/device-plugins/sandbox-pgpu.sock"
    assert not shared.HasField("env_var")
    own = stub.Resolve(pb.ResolveRequest(device=A10, profile=KATA, alias=""))
    assert own.resource_name == "nvidia.com/GA102GL_A10" and not own.HasField("alias")
    # the answer the library gives, field for field
    assert remote.resolution_from_message(own) == pciname.resolve(A10, pciname.with_aliases(KATA, alias=""))
    # and the aliased answer was not cached as the profile's: unset is pgpu again
    assert stub.Resolve(pb.ResolveRequest(device=A10, profile=KATA)).resource_name == "nvidia.com/pgpu"


def test_batch_reverse_diff_and_list_devices_take_the_aliases(client):
    found = client.resolve_batch([A10, "10de:22a3"], KATA, alias="gpu", nvswitch_alias="")
    assert [r.resource_name for r in found] == ["nvidia.com/gpu", "nvidia.com/GH100_H100_NVSWITCH"]
    assert client.reverse("nvidia.com/GA102GL_A10", KATA, alias="") == [A10]
    assert client.reverse("nvidia.com/GA102GL_A10", KATA) == []
    changes = {e.device: e for e in client.diff("gpu-operator@v26.7.0", KATA, alias="")}
    assert A10 not in changes and changes["10de:2bb4"].new.endswith("MAX-Q_WORKSTATION_EDITION")
    listed = {r.device: r for r in client.list_devices(KATA, alias="")}
    assert listed[A10].resource_name == "nvidia.com/GA102GL_A10"
    assert {r.resource_name for r in client.list_devices(KATA)} >= {"nvidia.com/pgpu", "nvidia.com/nvswitch"}


def test_list_profiles_names_the_family_and_its_sources(client):
    infos = {p.name: p for p in client.list_profiles()}
    assert infos[KATA].plugin == "sandbox-device-plugin"
    assert infos[KATA].source.startswith("NVIDIA/gpu-operator@")
    assert infos["sandbox-device-plugin@v0.0.5"].kind == "sandbox-device-plugin"
    assert infos["kubevirt-gpu-device-plugin@v1.6.0"].plugin == "kubevirt-gpu-device-plugin"


@pytest.mark.parametrize(
    ("request_", "rpc", "fragment"),
    [
        (pb.ResolveRequest(device=A10, alias="x"), "Resolve", "is not a sandbox-device-plugin profile"),
        (
            pb.ResolveRequest(device=A10, profile="sandbox-device-plugin@v0.0.1", nvswitch_alias="x"),
            "Resolve",
            "reads no NVSWITCH_ALIAS",
        ),
        (pb.ReverseRequest(resource_name="pgpu", profile=KATA, alias="x" * 400), "Reverse", "alias"),
        (pb.DiffRequest(from_profile="latest", to_profile="v1.2.2", alias=""), "Diff", "not a sandbox-device-plugin"),
    ],
)
def test_bad_aliases_are_invalid_argument(stub, request_, rpc, fragment):
    with pytest.raises(grpc.RpcError) as caught:
        getattr(stub, rpc)(request_)
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert fragment in caught.value.details() and "\n" not in caught.value.details()


def test_a_kubevirt_rpc_refuses_a_kata_profile(stub):
    with pytest.raises(grpc.RpcError) as caught:
        stub.PermittedHostDevices(pb.PermittedHostDevicesRequest(devices=[A10], profile=KATA))
    assert caught.value.code() is grpc.StatusCode.INVALID_ARGUMENT
    assert "is the Kata sandbox device plugin's" in caught.value.details()
