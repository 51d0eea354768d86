"""The gRPC name service in-process on loopback: every RPC against the
library's own answers, every error code, health, reflection, metrics,
deadlines and limits."""

from __future__ import annotations

import dataclasses
import json
import threading
import time

import grpc
import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc
from hypothesis import HealthCheck, given, settings, strategies as st

import pciname
from pciname.cli import full
from pciname.client import Client, RemoteInvalidArgument, RemoteSnapshotMissing, RemoteUnknownProfile, ServiceError
from pciname.errors import InvalidDeviceError, SnapshotMissingError, UnknownProfileError
from pciname.server import NameServer, ServeConfig
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from tests.cli_run import call
from tests.conftest import LATEST, wait_until
from tests.server.conftest import custom_spec
from tests.server_util import metric, scrape


@pytest.fixture(scope="module")
def server_spec(custom_setup):
    """The custom server of tests/server/conftest.py (``server_env`` is its
    environment in each test)."""
    return custom_spec(custom_setup)


OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
SLOW_READER = [("grpc.http2.bdp_probe", 0)]  # a reader that stops reading stalls the stream


def call_code(fn, *args, **kwargs):
    """(status code, details) of a call, consuming a stream."""
    try:
        result = fn(*args, timeout=20, **kwargs)
        if hasattr(result, "__next__"):  # a stream: errors come while reading it
            list(result)
        return OK, ""
    except grpc.RpcError as error:
        return error.code(), error.details()


# -- every RPC has the library's answers ---------------------------------------------

NAMING_EXAMPLES = [
    ("10de:1f08", "kubevirt-gpu-device-plugin@v1.1.2"),
    ("10de:2330", "kubevirt-gpu-device-plugin@v1.2.1"),
    ("10de:2330", "kubevirt-gpu-device-plugin@v1.2.2"),
    ("10de:2335", "kubevirt-gpu-device-plugin@v1.2.2"),
    ("10de:1f08", "kubevirt-gpu-device-plugin@v1.5.0"),
    ("10de:2236", "preview"),
    ("10DE:2236", "latest"),
    ("0x10de:0x2330", "gpu-operator@v23.9.2"),
    ("2236", "v1.2.2"),
    ("8086:1234", "preview"),
]


@pytest.mark.parametrize(("device", "profile"), NAMING_EXAMPLES)
def test_resolve_is_the_library_answer(client, server_env, device, profile):
    assert client.resolve(device, profile) == pciname.resolve(device, profile)


def test_resolve_known_names(client, server_env):
    assert client.resolve("10de:2330", "kubevirt-gpu-device-plugin@v1.2.2").resource_name == (
        "nvidia.com/GH100H100_SXM5_80GB"
    )
    assert client.resolve("10de:1f08", "v1.1.2").resource_name == "nvidia.com/SAS_5_IR_INTEGRATED_RAID_CONTROLLER"
    assert client.resolve("10de:2236").profile == LATEST  # "" is the default profile: latest
    assert client.resolve("10de:2236", "custom").resource_name == "nvidia.com/GA102GL_A10_CUSTOM"


def test_resolve_wire_fields(stub, server_env):
    r = stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="latest"), timeout=10)
    assert (r.device, r.resource_name, r.name, r.device_name) == (
        "10de:2236",
        "nvidia.com/GA102GL_A10",
        "GA102GL_A10",
        "GA102GL [A10]",
    )
    assert r.profile == pciname.resolve("10de:2236", "latest").profile
    assert r.env_var == "PCI_RESOURCE_NVIDIA_COM_GA102GL_A10"
    assert r.socket_path == "/var/lib/kubelet/device-plugins/kubevirt-GA102GL_A10.sock"
    assert r.pci_ids_version and r.advertised and not r.warnings
    intel = stub.Resolve(pb.ResolveRequest(device="8086:1234"), timeout=10)
    assert not intel.HasField("resource_name") and intel.resource_name == ""
    assert not intel.advertised and [w.code for w in intel.warnings] == ["not-advertised"]
    unnamed = stub.Resolve(pb.ResolveRequest(device="10de:2335", profile="v1.2.2"), timeout=10)
    assert unnamed.resource_name == "nvidia.com/2335" and unnamed.name == ""
    assert "unnamed-device" in [w.code for w in unnamed.warnings]


def test_resolve_batch_in_request_order(client, server_env):
    every = [r.device for r in pciname.devices("latest")]
    devices = every[::-1] + ["10DE:2236", "0x10de:0x2236", "2236", "8086:1234", every[0]]
    for profile in ("latest", "kubevirt-gpu-device-plugin@v1.2.1", "preview", "custom"):
        library_profile = profile
        if profile == "custom":
            library_profile = pciname.custom_profile(server_env.custom, "vendor-section")
        got = client.resolve_batch(devices, profile)
        want = pciname.resolve_many(devices, library_profile)
        assert len(got) == len(devices)
        if profile == "custom":  # the server calls the profile "custom"
            want = [dataclasses.replace(w, profile="custom") for w in want]
        assert got == want


def test_resolve_batch_raw_bytes_are_one_message_per_device(stub, server_env):
    devices = ["10de:2236", "10de:20b5", "10de:2236"]
    response = stub.ResolveBatch(pb.ResolveBatchRequest(devices=devices, profile="latest"), timeout=10)
    assert [r.device for r in response.results] == devices
    single = stub.Resolve(pb.ResolveRequest(device="10de:20b5", profile="latest"), timeout=10)
    assert response.results[1] == single


@pytest.mark.parametrize(
    ("resource", "profile"),
    [
        ("nvidia.com/GA102GL_A10", "preview"),
        ("GA102GL_A10", "latest"),
        ("nvidia.com/2335", "kubevirt-gpu-device-plugin@v1.2.2"),
        ("nvidia.com/NO_SUCH_GPU", "latest"),
    ],
)
def test_reverse_is_the_library_answer(client, stub, server_env, resource, profile):
    assert client.reverse(resource, profile) == pciname.reverse(resource, profile)
    response = stub.Reverse(pb.ReverseRequest(resource_name=resource, profile=profile), timeout=10)
    assert response.resource_name.startswith("nvidia.com/")
    assert response.profile == pciname.resolve("10de:2236", profile).profile


def test_reverse_finds_something(client, server_env):
    assert client.reverse("nvidia.com/GA102GL_A10") == ["10de:2236"]


@pytest.mark.parametrize(
    ("old", "new"),
    [("gpu-operator@v23.9.2", "gpu-operator@v24.9.0"), ("kubevirt-gpu-device-plugin@v1.2.1", "latest")],
)
def test_diff_is_the_library_answer(client, stub, server_env, old, new):
    got = client.diff(old, new)
    assert got == pciname.diff(old, new)
    assert got  # these upgrades do rename devices
    response = stub.Diff(pb.DiffRequest(from_profile=old, to_profile=new), timeout=20)
    changes = {e.device: pb.DiffEntry.Change.Name(e.change).lower() for e in response.changes}
    assert changes == {e.device: e.change for e in got}


# -- lookup, reverse and diff: one request behind the CLI and the RPCs -----------------


LOOKED_UP = ["10de:2236", "10DE:2236", "10de:ffff", "1eb8", "8086:1234", "0x10de:0x2236"]


@pytest.mark.parametrize("profile", ["latest", "kubevirt-gpu-device-plugin@v1.2.1"])
def test_lookup_cli_and_grpc_answer_alike(server, client, server_env, profile):
    """``pciname lookup`` (computing, and asking this server) and Resolve /
    ResolveBatch print and send the same records."""
    code, out, err = call(full, ["lookup", *LOOKED_UP, "-p", profile, "-o", "json"])
    assert (code, err) == (1, "")  # 10de:ffff and 8086:1234 are not advertised
    printed = json.loads(out)
    assert [r.to_dict() for r in client.resolve_batch(LOOKED_UP, profile)] == printed
    assert [client.resolve(d, profile).to_dict() for d in LOOKED_UP] == printed
    via = call(full, ["lookup", *LOOKED_UP, "-p", profile, "-o", "json", "--server", f"127.0.0.1:{server.port}"])
    assert via == (code, out, err)


@pytest.mark.parametrize("resource", ["GA102GL_A10", " nvidia.com/GA102GL_A10\n", "nvidia.com/NO_SUCH_GPU"])
def test_reverse_cli_and_grpc_answer_alike(stub, server_env, resource):
    code, out, err = call(full, ["reverse", resource, "-p", "latest", "-o", "json"])
    response = stub.Reverse(pb.ReverseRequest(resource_name=resource, profile="latest"), timeout=10)
    assert json.loads(out) == {"resource_name": response.resource_name, "devices": list(response.devices)}
    assert code == (0 if response.devices else 1)
    # Why none: the line the CLI says on stderr, in the answer's miss.
    assert (f"pciname: {response.miss}\n" if response.miss else "") == err
    assert bool(response.miss) != bool(response.devices)


def test_diff_cli_and_grpc_answer_alike(client, stub, server_env):
    old, new = "kubevirt-gpu-device-plugin@v1.2.1", "latest"
    code, out, _ = call(full, ["diff", "--from", old, "--to", new, "-o", "json"])
    response = stub.Diff(pb.DiffRequest(from_profile=old, to_profile=new), timeout=20)
    printed = json.loads(out)
    assert code == 0 and (printed["from"], printed["to"]) == (response.from_profile, response.to_profile)
    assert printed["changes"] == [e.to_dict() for e in client.diff(old, new)] != []


#: Each refusal of the names' requests over gRPC, word for word (as before
#: they were requests): INVALID_ARGUMENT, no pciname-error reason.
REFUSALS = [
    ("Resolve", pb.ResolveRequest(profile="p" * 500), "empty request: no device given (e.g. 10de:2236)"),
    ("ResolveBatch", pb.ResolveBatchRequest(profile="nope"), "empty request: no devices given"),
    (
        "ResolveBatch",
        pb.ResolveBatchRequest(devices=["x" * 100] * 10_001, profile="p" * 500),
        "10001 devices in one request, more than this server's maximum of 10000 (--max-batch); split the request",
    ),
    (
        "Reverse",
        pb.ReverseRequest(resource_name=" \t", profile="nope"),
        "empty request: no resource_name given (e.g. nvidia.com/GA102GL_A10)",
    ),
    (
        "Diff",
        pb.DiffRequest(from_profile=" ", to_profile="nope"),
        "empty request: both from_profile and to_profile are required",
    ),
    ("Diff", pb.DiffRequest(to_profile="latest"), "empty request: both from_profile and to_profile are required"),
]


@pytest.mark.parametrize(("method", "request_message", "details"), REFUSALS, ids=[c[0] for c in REFUSALS])
def test_refusals_word_for_word(stub, server_env, method, request_message, details):
    """The request's rules come before the profile is looked up (hence not
    NOT_FOUND or a length error for the profiles above)."""
    with pytest.raises(grpc.RpcError) as raised:
        getattr(stub, method)(request_message, timeout=20)
    assert (raised.value.code(), raised.value.details()) == (INVALID, details)
    assert "pciname-error" not in dict(raised.value.trailing_metadata() or ())


def test_list_profiles(client, stub, server_env):
    got = {p.name: p for p in client.list_profiles()}
    library = {p.name: p for p in pciname.profiles()}
    assert set(got) == set(library) | {"custom"}
    for name, info in library.items():
        served = got[name]
        assert (served.kind, served.algorithm, served.plugin_release, served.released, served.aliases) == (
            info.kind,
            info.algorithm,
            info.plugin_release,
            info.released,
            info.aliases,
        )
        # 2019-08-14 is not installed on this server (the library here sees every snapshot)
        uses_2019 = info.pci_ids_version == "2019-08-14"
        assert served.installed is (not uses_2019)
    assert got["custom"].installed and got["custom"].kind == "custom"
    response = stub.ListProfiles(pb.ListProfilesRequest(), timeout=10)
    assert [p.name for p in response.profiles if p.is_default] == [LATEST]
    assert response.data_generation >= 1


@pytest.mark.parametrize("profile", ["latest", "kubevirt-gpu-device-plugin@v1.1.1", "preview"])
def test_list_devices_is_the_library_answer(client, server_env, profile):
    got = list(client.list_devices(profile))
    assert got == pciname.devices(profile)
    assert len(got) > 1000


def test_list_devices_other_vendor_and_custom(client, stub, server_env):
    intel = list(client.list_devices("custom", "8086"))
    assert [r.device for r in intel] == ["8086:1234"]
    assert intel[0].device_name == "Some Intel device" and not intel[0].advertised
    nvidia = list(client.list_devices("custom", "0x10DE"))
    by_device = {r.device: r for r in nvidia}
    assert by_device["10de:2236"].resource_name == "nvidia.com/GA102GL_A10_CUSTOM"
    assert list(client.list_devices("custom", "ffff")) == []  # no such vendor in that pci.ids
    code, details = call_code(stub.ListDevices, pb.ListDevicesRequest(vendor="zz"))
    assert code == INVALID and "malformed vendor" in details


def test_permitted_host_devices_is_the_generator_answer(client, stub, server_env):
    from pciname.kubevirt.generate import permitted_host_devices, render

    devices = ["10de:2236", "10DE:20B5", "8086:1234", "10de:2236"]
    mdevs = ["GRID T4-1Q", "NVIDIA A100-40C", "bad name "]
    got = client.permitted_host_devices(devices, mdevs, "latest")
    want = permitted_host_devices(devices, mdevs, "latest")
    assert got.to_dict() == render(want.data, "kubevirt")
    assert yaml.safe_load(got.yaml) == render(want.data, "kubevirt")
    assert got.profile == want.profile
    assert [(s.item, s.kind, s.resource_name, s.reasons) for s in got.left_out] == [
        (s.item, s.kind, s.resource_name, s.reasons) for s in want.left_out
    ]
    assert got.pci_host_devices[0] == {
        "pciVendorSelector": "10DE:2236",
        "resourceName": "nvidia.com/GA102GL_A10",
        "externalResourceProvider": True,
    }
    assert {
        "mdevNameSelector": "GRID T4-1Q",
        "resourceName": "nvidia.com/GRID_T4-1Q",
        "externalResourceProvider": True,
    } in got.mediated_devices
    assert {s.item for s in got.left_out} >= {"8086:1234", "bad name "}
    broken = client.permitted_host_devices(["10de:2236"], ["bad name "], "latest", include_broken=True)
    assert {
        "mdevNameSelector": "bad name ",
        "resourceName": "nvidia.com/bad_name_",
        "externalResourceProvider": True,
    } in broken.mediated_devices


# -- errors -------------------------------------------------------------------------------------

ERROR_CASES = [
    ("Resolve", pb.ResolveRequest(device="10de:zzzz"), INVALID, "malformed device"),
    ("Resolve", pb.ResolveRequest(device=""), INVALID, "empty request"),
    (
        "Resolve",
        pb.ResolveRequest(device="10de:2236", profile="kubevirt-gpu-device-plugin@v9.9.9"),
        NOT_FOUND,
        "unknown profile",
    ),
    ("Resolve", pb.ResolveRequest(device="10de:2236", profile="v1.0.1"), PRECONDITION, "2019-08-14"),
    (
        "Resolve",
        pb.ResolveRequest(device="10de:2236", profile="kubevirt-gpu-device-plugin@v1.0.0"),
        PRECONDITION,
        "2ae8cce2619123c794bc99e1727a0b663b1e5aa07bbf29c514ef4bbea74caac9",
    ),
    ("ResolveBatch", pb.ResolveBatchRequest(), INVALID, "empty request"),
    ("ResolveBatch", pb.ResolveBatchRequest(devices=["10de:2236", "nope"]), INVALID, "'nope'"),
    ("ResolveBatch", pb.ResolveBatchRequest(devices=["10de:2236"] * 10_001), INVALID, "maximum of 10000"),
    ("ResolveBatch", pb.ResolveBatchRequest(devices=["10de:2236"], profile="nope"), NOT_FOUND, "unknown profile"),
    ("ResolveBatch", pb.ResolveBatchRequest(devices=["10de:2236"], profile="v1.0.0"), PRECONDITION, "2019-08-14"),
    ("Reverse", pb.ReverseRequest(), INVALID, "empty request"),
    ("Reverse", pb.ReverseRequest(resource_name="GA102GL_A10", profile="nope"), NOT_FOUND, "unknown profile"),
    ("Reverse", pb.ReverseRequest(resource_name="GA102GL_A10", profile="v1.0.1"), PRECONDITION, "2019-08-14"),
    ("Diff", pb.DiffRequest(from_profile="latest"), INVALID, "empty request"),
    ("Diff", pb.DiffRequest(from_profile="nope", to_profile="latest"), NOT_FOUND, "unknown profile"),
    ("Diff", pb.DiffRequest(from_profile="v1.0.1", to_profile="latest"), PRECONDITION, "2019-08-14"),
    ("ListDevices", pb.ListDevicesRequest(profile="nope"), NOT_FOUND, "unknown profile"),
    ("ListDevices", pb.ListDevicesRequest(profile="v1.0.0"), PRECONDITION, "2019-08-14"),
    ("PermittedHostDevices", pb.PermittedHostDevicesRequest(), INVALID, "empty request"),
    ("PermittedHostDevices", pb.PermittedHostDevicesRequest(devices=["xyz"]), INVALID, "malformed device"),
    ("PermittedHostDevices", pb.PermittedHostDevicesRequest(devices=["10de:2236"] * 10_001), INVALID, "maximum"),
    (
        "PermittedHostDevices",
        pb.PermittedHostDevicesRequest(devices=["10de:2236"], profile="nope"),
        NOT_FOUND,
        "unknown profile",
    ),
    (
        "PermittedHostDevices",
        pb.PermittedHostDevicesRequest(devices=["10de:2236"], profile="v1.0.0"),
        PRECONDITION,
        "2019-08-14",
    ),
]


@pytest.mark.parametrize(
    ("method", "request_message", "code", "needle"),
    ERROR_CASES,
    ids=[f"{c[0]}-{c[2].name}-{i}" for i, c in enumerate(ERROR_CASES)],
)
def test_error_codes(stub, server_env, method, request_message, code, needle):
    got, details = call_code(getattr(stub, method), request_message)
    assert got == code
    assert needle in details
    assert "\n" not in details and "Traceback" not in details


def test_missing_snapshot_details(stub, server_env):
    with pytest.raises(grpc.RpcError) as caught:
        stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="v1.0.1"), timeout=10)
    error = caught.value
    assert "pciname snapshots fetch" in error.details() and "on this server" in error.details()
    meta = dict(error.trailing_metadata())
    assert meta["pciname-snapshot"] == "2019-08-14"
    assert meta["pciname-url"].startswith("https://")


def test_client_errors_are_pciname_errors(client, server_env):
    with pytest.raises(RemoteInvalidArgument) as bad:
        client.resolve("10de:zz")
    assert isinstance(bad.value, InvalidDeviceError) and bad.value.code == "INVALID_ARGUMENT"
    with pytest.raises(UnknownProfileError) as unknown:
        client.resolve("10de:2236", "nope")
    assert isinstance(unknown.value, RemoteUnknownProfile)
    with pytest.raises(SnapshotMissingError) as missing:
        client.resolve_batch(["10de:2236"], "v1.0.1")
    assert isinstance(missing.value, RemoteSnapshotMissing)
    assert missing.value.sha256 == "2ae8cce2619123c794bc99e1727a0b663b1e5aa07bbf29c514ef4bbea74caac9"
    with pytest.raises(UnknownProfileError):
        list(client.list_devices("nope"))
    with Client("127.0.0.1:1", timeout=2) as nowhere, pytest.raises(ServiceError) as down:
        nowhere.resolve("10de:2236")
    assert down.value.code == "UNAVAILABLE" and "\n" not in str(down.value)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    device=st.one_of(
        st.text(max_size=14),
        st.from_regex(r"(0x)?[0-9a-fA-F]{0,5}:?(0x)?[0-9a-fA-F]{3,5}", fullmatch=True),
    ),
    profile=st.sampled_from(["", "latest", "v1.0.1", "v1.2.2", "nope", "custom", "gpu-operator@v24.9.0", " EMBEDDED "]),
)
def test_never_unknown(stub, server_env, device, profile):
    code, details = call_code(stub.Resolve, pb.ResolveRequest(device=device, profile=profile))
    assert code in (OK, INVALID, NOT_FOUND, PRECONDITION), (code, details)
    code, details = call_code(stub.ResolveBatch, pb.ResolveBatchRequest(devices=[device, "10de:2236"], profile=profile))
    assert code in (OK, INVALID, NOT_FOUND, PRECONDITION), (code, details)


def test_internal_errors_are_internal_and_logged(server, stub, server_env, monkeypatch, caplog):
    def explode(*args, **kwargs):
        raise RuntimeError("boom\nsecond line")

    monkeypatch.setattr(server.data.resolver, "reverse", explode)
    with caplog.at_level("ERROR", logger="pciname.server"):
        code, details = call_code(stub.Reverse, pb.ReverseRequest(resource_name="GA102GL_A10"))
    assert code == grpc.StatusCode.INTERNAL
    assert details == "internal error: RuntimeError: boom second line"
    assert any(r.exc_info and "Reverse" in r.getMessage() for r in caplog.records)


# -- health, reflection, metrics -------------------------------------------------------------


def health_status(channel, service: str = "") -> str:
    stub = health_pb2_grpc.HealthStub(channel)
    response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
    return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)


def test_health_transitions(server_env):
    fresh = NameServer(ServeConfig(listen="127.0.0.1:0", insecure=True, watch_interval=0))
    port = fresh.start()
    channel = grpc.insecure_channel(f"127.0.0.1:{port}")
    try:
        stub = pb_grpc.PciNameStub(channel)
        assert health_status(channel) == "NOT_SERVING"
        assert health_status(channel, "pciname.v1.PciName") == "NOT_SERVING"
        assert health_status(channel, "liveness") == "SERVING"
        code, details = call_code(stub.Resolve, pb.ResolveRequest(device="10de:2236"))
        assert code == grpc.StatusCode.UNAVAILABLE and "loading" in details

        assert fresh.reload("startup")
        assert health_status(channel) == "SERVING"
        assert health_status(channel, "pciname.v1.PciName") == "SERVING"
        assert stub.Resolve(pb.ResolveRequest(device="10de:2236"), timeout=5).resource_name == "nvidia.com/GA102GL_A10"

        draining = threading.Event()
        enter = fresh.health.enter_graceful_shutdown

        def entered() -> None:
            enter()
            draining.set()

        fresh.health.enter_graceful_shutdown = entered
        drainer = threading.Thread(target=fresh.drain, kwargs={"grace": 1.0, "delay": 2.0})
        drainer.start()
        assert draining.wait(10)  # inside the shutdown delay: NOT_SERVING, yet still answering
        assert health_status(channel) == "NOT_SERVING"
        assert health_status(channel, "liveness") == "NOT_SERVING"
        assert stub.Resolve(pb.ResolveRequest(device="10de:2236"), timeout=5).resource_name
        drainer.join(10)
        code, _ = call_code(stub.Resolve, pb.ResolveRequest(device="10de:2236"))
        assert code == grpc.StatusCode.UNAVAILABLE
    finally:
        channel.close()
        fresh.stop()


def test_reflection(channel, server_env):
    from google.protobuf.descriptor_pool import DescriptorPool
    from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

    database = ProtoReflectionDescriptorDatabase(channel)
    services = set(database.get_services())
    assert {"pciname.v1.PciName", "grpc.health.v1.Health", "grpc.reflection.v1alpha.ServerReflection"} <= services
    pool = DescriptorPool(database)
    service = pool.FindServiceByName("pciname.v1.PciName")
    assert service.file.name == "pciname/v1/pciname.proto"
    methods = {m.name: m for m in service.methods}
    assert set(methods) == {
        "Resolve",
        "ResolveBatch",
        "Reverse",
        "Diff",
        "ListProfiles",
        "ListDevices",
        "PermittedHostDevices",
        "Lint",
        "GpuOptions",
        "NodePool",
        "VgpuTypes",
        "AdmissionPolicy",
        "DraClaims",
        "Doctor",
        "ImageCheck",
        "GfdLabels",
    }
    assert methods["ListDevices"].server_streaming and not methods["Resolve"].server_streaming
    assert methods["Resolve"].output_type.full_name == "pciname.v1.Resolution"


def test_metrics(server, stub, server_env):
    before = scrape(server.metrics_port)
    for _ in range(5):
        stub.Resolve(pb.ResolveRequest(device="10de:2236"), timeout=5)
    stub.ResolveBatch(pb.ResolveBatchRequest(devices=["10de:2236"] * 7), timeout=5)
    call_code(stub.Resolve, pb.ResolveRequest(device="bad"))
    call_code(stub.Resolve, pb.ResolveRequest(device="10de:2236", profile="nope"))
    after = scrape(server.metrics_port)

    def delta(name, **labels):
        return metric(after, name, **labels) - metric(before, name, **labels)

    assert delta("pciname_rpc_requests_total", method="Resolve", code="OK") == 5
    assert delta("pciname_rpc_requests_total", method="Resolve", code="INVALID_ARGUMENT") == 1
    assert delta("pciname_rpc_errors_total", method="Resolve", code="INVALID_ARGUMENT") == 1
    assert delta("pciname_rpc_errors_total", method="Resolve", code="NOT_FOUND") == 1
    assert delta("pciname_rpc_duration_seconds_count", method="Resolve") == 7
    assert delta("pciname_resolved_devices_total", method="ResolveBatch") == 7
    assert metric(after, "pciname_reloads_total", trigger="startup", result="success") == 1
    assert metric(after, "pciname_data_generation") == server.data.generation
    assert metric(after, "pciname_profiles_served") == len(server.data.served) + 1
    assert metric(after, "pciname_rpc_in_flight") == 0


# -- deadlines and limits -----------------------------------------------------------------------


def test_deadline_ends_a_stalled_stream(server, server_env):
    before = scrape(server.metrics_port)
    with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=SLOW_READER) as ch:
        # A deadline long enough for the first message on a loaded machine
        # (0.5 s once ran out before it came, in CI with another job running).
        stream = pb_grpc.PciNameStub(ch).ListDevices(pb.ListDevicesRequest(profile="preview"), timeout=3.0)
        next(stream)  # then stop reading: the server blocks on flow control
        wait_until(lambda: metric(scrape(server.metrics_port), "pciname_rpc_in_flight") == 1, what="one RPC in flight")
        ended = threading.Event()
        stream.add_done_callback(lambda _: ended.set())
        assert ended.wait(30)  # past the deadline, whenever the first message came
        # The server ends the RPC too (before the channel closes, which would cancel it).
        wait_until(lambda: metric(scrape(server.metrics_port), "pciname_rpc_in_flight") == 0, what="the RPC's end")
        with pytest.raises(grpc.RpcError) as caught:
            list(stream)
        assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    after = scrape(server.metrics_port)
    assert metric(after, "pciname_rpc_in_flight") == 0  # the server gave the worker back
    got = metric(after, "pciname_rpc_errors_total", method="ListDevices", code="DEADLINE_EXCEEDED") - metric(
        before, "pciname_rpc_errors_total", method="ListDevices", code="DEADLINE_EXCEEDED"
    )
    assert got == 1


def test_concurrency_and_message_limits(server_env):
    small = NameServer(
        ServeConfig(
            listen="127.0.0.1:0",
            insecure=True,
            watch_interval=0,
            max_concurrent_rpcs=2,
            max_workers=4,
            max_recv_message_bytes=1024,
            max_batch=50,
        )
    )
    port = small.start()
    assert small.reload()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{port}", options=SLOW_READER) as ch:
            stub = pb_grpc.PciNameStub(ch)
            streams = [stub.ListDevices(pb.ListDevicesRequest(profile="preview"), timeout=20) for _ in range(2)]
            for s in streams:
                next(s)
            code, details = call_code(stub.Resolve, pb.ResolveRequest(device="10de:2236"))
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
            for s in streams:
                s.cancel()
            deadline = time.monotonic() + 5
            while True:
                code, _ = call_code(stub.Resolve, pb.ResolveRequest(device="10de:2236"))
                if code == OK or time.monotonic() > deadline:
                    break
                time.sleep(0.05)
            assert code == OK
            code, details = call_code(stub.ResolveBatch, pb.ResolveBatchRequest(devices=["10de:2236"] * 200))
            assert code == grpc.StatusCode.RESOURCE_EXHAUSTED  # 2.4 KB > --max-recv-message-bytes 1024
            code, details = call_code(stub.ResolveBatch, pb.ResolveBatchRequest(devices=["10de:2236"] * 51))
            assert code == INVALID and "maximum of 50" in details
            assert call_code(stub.ResolveBatch, pb.ResolveBatchRequest(devices=["10de:2236"] * 50))[0] == OK
    finally:
        small.stop()


def test_batch_of_the_default_maximum(server, server_env):
    every = [r.device for r in pciname.devices("preview")]
    devices = (every * (10_000 // len(every) + 1))[:10_000]
    # 10,000 answers of the default profile are about 4.4 MB: more than
    # gRPC's default 4 MiB receive limit, which the README tells clients to raise.
    options = [("grpc.max_receive_message_length", 64 << 20)]
    with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=options) as channel:
        response = pb_grpc.PciNameStub(channel).ResolveBatch(pb.ResolveBatchRequest(devices=devices), timeout=30)
    assert len(response.results) == 10_000
    assert [r.device for r in response.results] == devices


# -- hostile input: oversized fields, long echoes, malformed protobuf ----------------------------

MB = 1 << 20
PADDED_DEVICE = " " * MB + "10de:2236"  # a valid device, padded to 1 MB
LONG_PROFILE = "latest" + " " * 100_000  # a valid profile spelling, padded

OVERSIZED = [
    ("Resolve", pb.ResolveRequest(device=PADDED_DEVICE), "device is too long"),
    ("Resolve", pb.ResolveRequest(device="1" * 3 * MB), "device is too long"),
    ("Resolve", pb.ResolveRequest(device="10de:2236", profile=LONG_PROFILE), "profile is too long"),
    ("Resolve", pb.ResolveRequest(device="10de:2236", profile="x" * 100_000), "profile is too long"),
    ("ResolveBatch", pb.ResolveBatchRequest(devices=["10de:2236", PADDED_DEVICE]), "devices[1] is too long"),
    ("ResolveBatch", pb.ResolveBatchRequest(devices=["10de:2236"], profile=LONG_PROFILE), "profile is too long"),
    ("Reverse", pb.ReverseRequest(resource_name="GA102GL_A10" + " " * MB), "resource_name is too long"),
    ("Reverse", pb.ReverseRequest(resource_name="GA102GL_A10", profile=LONG_PROFILE), "profile is too long"),
    ("Diff", pb.DiffRequest(from_profile=LONG_PROFILE, to_profile="latest"), "from_profile is too long"),
    ("Diff", pb.DiffRequest(from_profile="latest", to_profile="y" * 100_000), "to_profile is too long"),
    ("ListDevices", pb.ListDevicesRequest(profile=LONG_PROFILE), "profile is too long"),
    ("ListDevices", pb.ListDevicesRequest(vendor=" " * MB + "10de"), "vendor is too long"),
    (
        "PermittedHostDevices",
        pb.PermittedHostDevicesRequest(devices=["10de:2236", PADDED_DEVICE]),
        "devices[1] is too long",
    ),
    (
        "PermittedHostDevices",
        pb.PermittedHostDevicesRequest(mdev_types=["GRID T4-1Q" * 10_000]),
        "mdev_types[0] is too long",
    ),
    (
        "PermittedHostDevices",
        pb.PermittedHostDevicesRequest(devices=["10de:2236"], profile=LONG_PROFILE),
        "profile is too long",
    ),
]


def _cached_keys(data) -> list:
    """The request texts the data set's caches hold (best effort: private attributes)."""
    keys = list(getattr(data, "_spellings", {}))
    encoded = getattr(data, "encoded", None)
    if encoded is not None:
        keys.extend(encoded.keys())
    keys.extend(key[0] for key in getattr(data.resolver, "memo", {}))
    return [k for k in keys if isinstance(k, str)]


@pytest.mark.parametrize(
    ("method", "request_message", "needle"), OVERSIZED, ids=[f"{c[0]}-{i}" for i, c in enumerate(OVERSIZED)]
)
def test_oversized_fields_are_refused_before_anything_is_cached(
    server, stub, server_env, method, request_message, needle
):
    for _ in range(3):  # a repeated request is refused again: nothing of it was kept
        code, details = call_code(getattr(stub, method), request_message)
        assert (code, needle in details) == (INVALID, True), (code, details[:300])
    assert "bytes)" in details and len(details.encode()) <= 1024
    assert max(map(len, _cached_keys(server.data)), default=0) <= 1024  # the limits are far below


def test_padding_within_the_limits_still_works(client, stub, server_env):
    from pciname.requests.limits import DEVICE_CHARS as MAX_DEVICE_CHARS, PROFILE_CHARS as MAX_PROFILE_CHARS

    device = " 10de:2236 ".center(MAX_DEVICE_CHARS)
    profile = " latest ".center(MAX_PROFILE_CHARS)
    assert stub.Resolve(pb.ResolveRequest(device=device, profile=profile), timeout=10).resource_name == (
        "nvidia.com/GA102GL_A10"
    )
    assert [r.resource_name for r in client.resolve_batch([device, "10de:2236"], profile)] == [
        "nvidia.com/GA102GL_A10"
    ] * 2
    code, details = call_code(stub.Resolve, pb.ResolveRequest(device=device + " ", profile=profile))
    assert code == INVALID and f"at most {MAX_DEVICE_CHARS}" in details


def test_client_sees_the_real_code_for_huge_inputs(client, stub, server_env):
    """Details echo at most a few dozen characters of any input, so they fit
    the client's metadata limit: INVALID_ARGUMENT, never RESOURCE_EXHAUSTED."""
    with pytest.raises(RemoteInvalidArgument) as caught:
        client.resolve("1" * 3 * MB)
    assert "…(3145728 bytes)" in str(caught.value) and len(str(caught.value)) < 300
    with pytest.raises(RemoteInvalidArgument) as caught:
        client.resolve("10de:2236", "x" * 100_000)
    assert "…(100000 bytes)" in str(caught.value)
    code, details = call_code(
        stub.PermittedHostDevices, pb.PermittedHostDevicesRequest(devices=["10de:2236"], format="helm" * 50_000)
    )
    assert code == INVALID and details.startswith("unknown format 'helmhelm") and "…(200000 bytes)" in details
    code, details = call_code(stub.ListDevices, pb.ListDevicesRequest(vendor="ü" * 60))
    assert code == INVALID and details.startswith("malformed vendor 'üüü")


@pytest.mark.parametrize(
    ("method", "raw"),
    [
        ("Resolve", b"\x0a\x02\xff\xfe"),  # device: not UTF-8
        ("Resolve", b"\x0a\x10ab"),  # truncated: 16 bytes announced, 2 sent
        ("Resolve", b"\xff\xff\xff\xff"),  # garbage
        ("ResolveBatch", b"\x0a\x03abc\x0a\x01\x80"),  # the second device is not UTF-8
        ("Reverse", b"\x12\x03\xc3\x28x"),  # profile: a broken two-byte sequence
        ("Diff", b"\x0a"),  # a tag without its value
        ("ListProfiles", b"\x0f"),  # field number 1, wire type 7: none such
        ("PermittedHostDevices", b"\x12\x02\xed\xa0"),  # mdev_types: a UTF-16 surrogate in UTF-8
        ("Lint", b"\x0a\x04\x0a\x02\xff\xfe"),  # files[0].name: not UTF-8
        ("GpuOptions", b"\x12\x05\xf8\x88\x80\x80\x80"),  # kubevirt: a five-byte sequence
    ],
)
def test_malformed_protobuf_is_invalid_argument(server, channel, server_env, method, raw):
    call = channel.unary_unary(f"/pciname.v1.PciName/{method}", request_serializer=None, response_deserializer=None)
    before = scrape(server.metrics_port)
    code, details = call_code(call, raw)
    assert code == INVALID, (code, details)
    assert details.startswith("malformed request: not a valid pciname.v1.")
    after = scrape(server.metrics_port)
    assert (
        metric(after, "pciname_rpc_errors_total", method=method, code="INVALID_ARGUMENT")
        - metric(before, "pciname_rpc_errors_total", method=method, code="INVALID_ARGUMENT")
        == 1
    )


def test_malformed_protobuf_on_the_stream_is_invalid_argument(channel, server_env):
    stream = channel.unary_stream(
        "/pciname.v1.PciName/ListDevices", request_serializer=None, response_deserializer=None
    )
    code, details = call_code(stream, b"\x0a\x02\xff\xfe")
    assert code == INVALID and "pciname.v1.ListDevicesRequest" in details
    raw = channel.unary_unary("/pciname.v1.PciName/Resolve", request_serializer=None, response_deserializer=None)
    good = pb.ResolveRequest(device="10de:2236").SerializeToString()
    assert pb.Resolution.FromString(raw(good, timeout=10)).resource_name == "nvidia.com/GA102GL_A10"
