"""A new server answers at once (issue 28): on an empty cache its first
generation parses no pci.ids file, answers the NVIDIA devices of packaged
profiles from the packaged answers, byte for byte what a built view
answers, and builds a profile's view on a request's first need, once,
while health answers; a request for a table being built waits for it
within its own deadline."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from pciname.server import NameServer, ServeConfig
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from pciname.server.rpc.wire import framed, resolution_message
from pciname.server.tables import LazyResolver

PROFILES = [
    "",
    "preview",
    "gpu-operator@v23.9.2",
    "kubevirt-gpu-device-plugin@v1.2.1",
    "sandbox-device-plugin@v0.0.5",
    "cozystack@latest",
]


@pytest.fixture
def cold(tmp_path, monkeypatch):
    """A started, loaded server on an empty cache directory, the package as it ships."""
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("PCINAME_SNAPSHOTS", raising=False)
    server = NameServer(ServeConfig(listen="127.0.0.1:0", insecure=True, watch_interval=0))
    server.start()
    try:
        assert server.reload("startup") is True
        yield server
    finally:
        server.stop()


def test_the_first_generation_builds_nothing_and_answers_from_the_package(cold):
    data = cold.data
    assert data.packaged
    with grpc.insecure_channel(f"127.0.0.1:{cold.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        answer = stub.Resolve(pb.ResolveRequest(device="10de:2236"), timeout=10)
        assert answer.resource_name == "nvidia.com/GA102GL_A10"
        listed = list(stub.ListDevices(pb.ListDevicesRequest(profile="gpu-operator@v23.9.2"), timeout=30))
        assert len(listed) > 100
    assert not any(data.resolver.built(name) for name in data.served)
    cache = Path(os.environ["PCINAME_CACHE_DIR"])
    assert [p for p in cache.rglob("*") if p.is_file()] == []  # no catalog was built, so none was saved


@pytest.mark.parametrize("spelling", PROFILES)
def test_packaged_answers_are_byte_for_byte_the_built_views(cold, spelling):
    data = cold.data
    profile = data.profile(spelling)
    table = data.packaged_table(profile)
    assert table is not None
    devices = [f"10de:{d}" for d in table.devices()]
    spelt = [*devices, *(d.upper() for d in devices[:50]), *(d.partition(":")[2] for d in devices[:50])]
    for device in spelt:
        built = resolution_message(data.resolver.resolve_many([device], profile.key)[0]).SerializeToString()
        assert data.encode(profile, device)[0] == framed(built), device
    listed = [resolution_message(r).SerializeToString() for r in data.nvidia_devices(profile)]
    assert listed == [resolution_message(r).SerializeToString() for r in data.resolver.devices(profile.key)]


def test_a_request_for_a_table_being_built_waits_within_its_deadline_while_health_answers(cold, monkeypatch):
    release = threading.Event()
    builds: list[object] = []
    build = LazyResolver._build

    def held(self, profile):
        builds.append(profile)
        release.wait(60)
        return build(self, profile)

    monkeypatch.setattr(LazyResolver, "_build", held)
    request = pb.ReverseRequest(resource_name="nvidia.com/GA102GL_A10", profile="gpu-operator@v23.9.2")
    with grpc.insecure_channel(f"127.0.0.1:{cold.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        with pytest.raises(grpc.RpcError) as late:
            stub.Reverse(request, timeout=0.5)
        assert late.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
        waiting = stub.Reverse.future(request, timeout=60)
        health = health_pb2_grpc.HealthStub(channel)
        for service in ("readiness", ""):  # the build holds no health answer
            status = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status
            assert status == health_pb2.HealthCheckResponse.SERVING
        assert stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="gpu-operator@v23.9.2"), timeout=5).name
        release.set()
        assert list(waiting.result().devices) == ["10de:2236"]
        assert list(stub.Reverse(request, timeout=10).devices) == ["10de:2236"]
    assert builds == ["gpu-operator@v23.9.2"]  # once, for every request of it


def test_a_reload_swaps_in_a_generation_that_builds_its_own_views(cold):
    first = cold.data
    with grpc.insecure_channel(f"127.0.0.1:{cold.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        request = pb.ReverseRequest(resource_name="nvidia.com/GA102GL_A10")
        assert list(stub.Reverse(request, timeout=30).devices) == ["10de:2236"]
        assert first.resolver.built(first.default.key)
        assert cold.reload("signal") is True
        second = cold.data
        assert second.generation == first.generation + 1 and not second.resolver.built(second.default.key)
        assert list(stub.Reverse(request, timeout=30).devices) == ["10de:2236"]
        assert second.resolver.built(second.default.key)


def test_the_rpc_modules_of_lint_cluster_kubevirt_and_admission_load_on_first_use():
    """A server process imports them only when one of their RPCs comes
    (they cost a start about 120 ms), and then answers it."""
    import subprocess
    import sys

    code = (
        "import sys\n"
        "from pciname.server import NameServer, ServeConfig\n"
        "server = NameServer(ServeConfig(listen='127.0.0.1:0', insecure=True, watch_interval=0))\n"
        "server.start()\n"
        "assert server.reload('startup') is True\n"
        "rpc = lambda: sorted(m for m in sys.modules if m.rpartition('.')[2] in "
        "('admission', 'cluster', 'kubevirt', 'lint') and m.startswith('pciname.server.rpc'))\n"
        "print(rpc())\n"
        "import grpc\n"
        "from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc\n"
        "with grpc.insecure_channel(f'127.0.0.1:{server.port}') as channel:\n"
        "    stub = pb_grpc.PciNameStub(channel)\n"
        "    answer = stub.PermittedHostDevices(pb.PermittedHostDevicesRequest(devices=['10de:2236']), timeout=60)\n"
        "print(rpc(), len(answer.pci_host_devices))\n"
        "server.stop()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    before, after = done.stdout.splitlines()
    assert before == "[]"
    assert after == "['pciname.server.rpc.kubevirt'] 1"
