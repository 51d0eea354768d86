"""Hot reload in-process: new data swapped in whole under concurrent load,
broken files rejected while the old data keeps serving, requests in flight
finishing on the data they started with, snapshot directories watched."""

from __future__ import annotations

import threading
import time
from collections import Counter

import grpc
import pytest

from pciname.server import NameServer, ServeConfig
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from tests.server_util import (
    BROKEN_PCIIDS,
    metric,
    pciids_text,
    scrape,
    snapshot_dir,
    write_atomically,
)

# files and reloading_server: tests/server/conftest.py's.


def reload_after_change(server: NameServer) -> bool | None:
    """What the watcher does: a change must look the same on two polls."""
    assert server.poll() is None  # first sight of the change: wait for it to settle
    return server.poll()


class Load:
    """Threads calling Resolve and ResolveBatch on the custom profile as fast
    as they can; every answer and every failure is recorded."""

    def __init__(self, port: int, threads: int = 6) -> None:
        self.port = port
        self.stop = threading.Event()
        self.names: Counter = Counter()
        self.failures: list[str] = []
        self.calls = 0
        self._lock = threading.Lock()
        self.threads = [threading.Thread(target=self._run, args=(i,), daemon=True) for i in range(threads)]

    def _run(self, index: int) -> None:
        with grpc.insecure_channel(f"127.0.0.1:{self.port}") as channel:
            stub = pb_grpc.PciNameStub(channel)
            while not self.stop.is_set():
                try:
                    if index % 2:
                        names = [stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="custom"), timeout=10).name]
                    else:
                        response = stub.ResolveBatch(
                            pb.ResolveBatchRequest(devices=["10de:2236", "10de:1eb8", "10de:2236"], profile="custom"),
                            timeout=10,
                        )
                        names = [response.results[0].name, response.results[2].name]
                        if len(set(names)) != 1:
                            raise AssertionError(f"one batch answered from two generations: {names}")
                except Exception as error:  # noqa: BLE001 - every failure counts
                    with self._lock:
                        self.failures.append(repr(error))
                    continue
                with self._lock:
                    self.calls += 1
                    self.names.update(names)

    def __enter__(self) -> Load:
        for t in self.threads:
            t.start()
        time.sleep(0.2)
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(10)

    def wait_calls(self, more: int, timeout: float = 10.0) -> None:
        target = self.calls + more
        deadline = time.monotonic() + timeout
        while self.calls < target and time.monotonic() < deadline:
            time.sleep(0.01)


def test_good_and_broken_reloads_under_load(reloading_server, files):
    port = reloading_server.port
    first = reloading_server.data
    with Load(port) as load:
        load.wait_calls(50)
        assert set(load.names) == {"OLD_NAME"}

        # A good new file: swapped in whole, no request fails.
        write_atomically(files.custom, pciids_text("NEW NAME"))
        assert reload_after_change(reloading_server) is True
        assert reloading_server.data.generation == first.generation + 1
        before = load.names["NEW_NAME"]
        load.wait_calls(50)
        assert load.names["NEW_NAME"] > before

        # A broken file: rejected, the new data keeps serving.
        write_atomically(files.custom, BROKEN_PCIIDS)
        assert reload_after_change(reloading_server) is False
        assert reloading_server.data.generation == first.generation + 1
        seen = Counter(load.names)
        load.wait_calls(50)
        assert load.names["NEW_NAME"] > seen["NEW_NAME"]
        assert load.names["OLD_NAME"] == seen["OLD_NAME"]  # never back to old data, never half-loaded
        assert reloading_server.poll() is None  # a rejected file is not retried until it changes again

        # Fixed again: loaded.
        write_atomically(files.custom, pciids_text("THIRD NAME"))
        assert reload_after_change(reloading_server) is True
        load.wait_calls(50)
    assert load.failures == []
    assert set(load.names) == {"OLD_NAME", "NEW_NAME", "THIRD_NAME"}
    assert load.calls > 200
    samples = scrape(reloading_server.metrics_port)
    assert metric(samples, "pciname_reloads_total", trigger="file-change", result="success") == 2
    assert metric(samples, "pciname_reloads_total", trigger="file-change", result="failure") == 1
    assert metric(samples, "pciname_last_reload_success") == 1
    assert metric(samples, "pciname_data_generation") == first.generation + 2


def test_rejected_reload_is_logged_with_the_bad_line(reloading_server, files, caplog):
    write_atomically(files.custom, BROKEN_PCIIDS)
    with caplog.at_level("INFO", logger="pciname.server"):
        assert reloading_server.reload("signal") is False
    rejected = [r for r in caplog.records if r.getMessage() == "reload rejected"]
    assert len(rejected) == 1
    assert f"{files.custom}:3:1" in rejected[0].fields["error"]
    assert rejected[0].fields["trigger"] == "signal"
    assert "keeps serving" in rejected[0].fields["keeping"]
    with grpc.insecure_channel(f"127.0.0.1:{reloading_server.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        assert stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="custom"), timeout=5).name == "OLD_NAME"
    assert scrape(reloading_server.metrics_port)[("pciname_last_reload_success", ())] == 0


def test_request_in_flight_finishes_on_its_data(reloading_server, files):
    with grpc.insecure_channel(f"127.0.0.1:{reloading_server.port}", options=[("grpc.http2.bdp_probe", 0)]) as channel:
        stub = pb_grpc.PciNameStub(channel)
        stream = stub.ListDevices(pb.ListDevicesRequest(profile="custom"), timeout=30)
        first = next(stream)  # the stream stalls: this client is not reading
        write_atomically(files.custom, pciids_text("NEW NAME", version="2031.01.01"))
        assert reloading_server.reload("signal") is True
        rest = list(stream)
        versions = {m.pci_ids_version for m in [first, *rest]}
        assert versions == {"2030.01.01"}  # every message from the generation it started on
        a10 = [m for m in [first, *rest] if m.device == "10de:2236"]
        assert [m.name for m in a10] == ["OLD_NAME"]
        after = stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="custom"), timeout=5)
        assert (after.name, after.pci_ids_version) == ("NEW_NAME", "2031.01.01")


def test_snapshot_directory_is_watched(reloading_server, files):
    with grpc.insecure_channel(f"127.0.0.1:{reloading_server.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        request = pb.ResolveRequest(device="10de:1eb8", profile="kubevirt-gpu-device-plugin@v1.0.1")
        with pytest.raises(grpc.RpcError) as missing:
            stub.Resolve(request, timeout=5)
        assert missing.value.code() == grpc.StatusCode.FAILED_PRECONDITION

        snapshot_dir(files.snapshots, ["2019-08-14.ids"])  # someone installs the snapshot
        assert reload_after_change(reloading_server) is True
        assert stub.Resolve(request, timeout=5).resource_name == "nvidia.com/TU104GL_Tesla_T4"

        (files.snapshots / "2019-08-14.ids").unlink()  # and removes it again
        assert reload_after_change(reloading_server) is True
        with pytest.raises(grpc.RpcError) as gone:
            stub.Resolve(request, timeout=5)
        assert gone.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_poll_without_change_does_nothing(reloading_server, files):
    generation = reloading_server.data.generation
    assert reloading_server.poll() is None
    assert reloading_server.poll() is None
    assert reloading_server.data.generation == generation
    files.custom.touch()  # a new mtime is a change (the content may differ)
    assert reload_after_change(reloading_server) is True
    assert reloading_server.data.generation == generation + 1


def test_first_load_failure_leaves_no_data(files):
    write_atomically(files.custom, BROKEN_PCIIDS)
    broken = NameServer(ServeConfig(listen="127.0.0.1:0", insecure=True, pciids=str(files.custom), watch_interval=0))
    broken.start()
    try:
        assert broken.reload("startup") is False
        assert broken.data is None
        write_atomically(files.custom, pciids_text("FIXED"))
        assert broken.reload("signal") is True
        assert broken.data.generation == 1
    finally:
        broken.stop()


# -- files that are no pci.ids file ----------------------------------------------------

NOT_PCIIDS = {
    "empty": (b"", "no header"),
    "only-comments": (b"#\n#\tList of PCI ID's\n#\n# nothing else\n", "no header"),
    "no-nvidia": (
        b"# Version: 2030.02.02\n8086  Intel Corporation\n\t1234  Some Intel device\n",
        "no NVIDIA vendor section",
    ),
    "no-header": (b"10de  NVIDIA Corporation\n\t2236  HEADERLESS\n", "no header"),
}


@pytest.mark.parametrize("case", sorted(NOT_PCIIDS))
def test_reload_refuses_a_file_that_is_no_pciids_file(reloading_server, files, caplog, case):
    """A 0-byte, comment-only, NVIDIA-less or header-less --pciids file would
    make every name nvidia.com/<id>: refused, counted, the old data serves."""
    content, needle = NOT_PCIIDS[case]
    generation = reloading_server.data.generation
    files.custom.write_bytes(content)
    with caplog.at_level("INFO", logger="pciname.server"):
        assert reload_after_change(reloading_server) is False
    (rejected,) = [r for r in caplog.records if r.getMessage() == "reload rejected"]
    assert needle in rejected.fields["error"] and str(files.custom) in rejected.fields["error"]
    assert reloading_server.data.generation == generation
    with grpc.insecure_channel(f"127.0.0.1:{reloading_server.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        assert stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="custom"), timeout=5).name == "OLD_NAME"
    samples = scrape(reloading_server.metrics_port)
    assert metric(samples, "pciname_reloads_total", trigger="file-change", result="failure") == 1
    assert metric(samples, "pciname_last_reload_success") == 0


def test_start_up_refuses_an_empty_pciids_file(files):
    files.custom.write_bytes(b"")
    empty = NameServer(ServeConfig(listen="127.0.0.1:0", insecure=True, pciids=str(files.custom), watch_interval=0))
    empty.start()
    try:
        assert empty.reload("startup") is False
        assert empty.data is None
    finally:
        empty.stop()


def test_headerless_plugin_snapshot_is_accepted_by_sha256(reloading_server, files):
    """The plugin images' 2019-08-14 and 2021-12-02 files have no header:
    known by sha256, they may still be served with --pciids."""
    from tests.conftest import PLUGIN_PCIIDS

    files.custom.write_bytes((PLUGIN_PCIIDS / "2021-12-02.ids").read_bytes())
    assert reload_after_change(reloading_server) is True
    with grpc.insecure_channel(f"127.0.0.1:{reloading_server.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        assert stub.Resolve(pb.ResolveRequest(device="10de:1eb8", profile="custom"), timeout=5).name


# -- invalid UTF-8 in a served file ----------------------------------------------------

INVALID_UTF8 = (
    b"# Version: 2026\xff\n"
    b"# Date:    2026-01-01 00:00:00\xfe\n"
    b"10de  NVIDIA \xffCorporation\n"
    b"\t2236  GA102GL [A10\xff]\n"
    b"\t1eb8  TU104GL [Tesla T4]\n"
    b"8086  Intel \xfe\xfd\n"
    b"\t1234  Some \xc3Intel device\n"
)


def test_invalid_utf8_in_a_served_file_is_served_as_replacement_characters(files):
    """Lone surrogates (surrogateescape) cannot go into protobuf strings:
    every RPC on such a file used to fail INTERNAL. Undecodable bytes are
    U+FFFD, as in `pciname describe -o json`."""
    files.custom.write_bytes(INVALID_UTF8)
    s = NameServer(ServeConfig(listen="127.0.0.1:0", insecure=True, pciids=str(files.custom), watch_interval=0))
    s.start()
    try:
        assert s.reload("startup") is True
        with grpc.insecure_channel(f"127.0.0.1:{s.port}") as channel:
            stub = pb_grpc.PciNameStub(channel)
            profiles = stub.ListProfiles(pb.ListProfilesRequest(), timeout=10).profiles
            (custom,) = [p for p in profiles if p.name == "custom"]
            assert custom.pci_ids_version == "2026\ufffd"
            r = stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="custom"), timeout=10)
            assert (r.name, r.device_name, r.vendor_name) == (
                "GA102GL_A10",
                "GA102GL [A10\ufffd]",
                "NVIDIA \ufffdCorporation",
            )
            assert r.pci_ids_version == "2026\ufffd"
            unnamed = stub.Resolve(pb.ResolveRequest(device="10de:ffff", profile="custom"), timeout=10)
            assert "pci.ids 2026\ufffd" in unnamed.warnings[0].message
            batch = stub.ResolveBatch(
                pb.ResolveBatchRequest(devices=["10de:2236", "8086:1234"], profile="custom"), timeout=10
            ).results
            assert (batch[1].vendor_name, batch[1].device_name) == ("Intel \ufffd\ufffd", "Some \ufffdIntel device")
            intel = list(stub.ListDevices(pb.ListDevicesRequest(profile="custom", vendor="8086"), timeout=10))
            assert [m.device_name for m in intel] == ["Some \ufffdIntel device"]
            assert len(list(stub.ListDevices(pb.ListDevicesRequest(profile="custom"), timeout=30))) > 1000
    finally:
        s.stop()


# -- other vendors' devices: parsed once per generation ----------------------------------


def test_list_devices_of_another_vendor_parses_the_file_once(reloading_server, monkeypatch):
    from pciname.pciids import loader
    from pciname.server import data as data_module

    parses = Counter()
    real_load, real_table = loader.load_bytes, data_module._device_ids_by_vendor

    def counting_load(*args, **kwargs):
        parses["load_bytes"] += 1
        return real_load(*args, **kwargs)

    def counting_table(*args, **kwargs):
        parses["table"] += 1
        return real_table(*args, **kwargs)

    monkeypatch.setattr(loader, "load_bytes", counting_load)
    monkeypatch.setattr(data_module, "_device_ids_by_vendor", counting_table)
    with grpc.insecure_channel(f"127.0.0.1:{reloading_server.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)

        def intel(profile: str) -> list[str]:
            request = pb.ListDevicesRequest(profile=profile, vendor="8086")
            return [m.device for m in stub.ListDevices(request, timeout=60)]

        first = intel("latest")  # a packaged snapshot: read from the archive's verified member
        after_first = parses["load_bytes"]
        assert intel("latest") == first and intel("kubevirt-gpu-device-plugin@v1.5.0") == first  # the same file
        assert len(first) > 1000 and first == sorted(first)
        assert parses["table"] == 1  # once per generation and file
        assert parses["load_bytes"] == after_first  # later calls parse nothing
        assert intel("custom") == ["8086:1234"]
        assert parses["table"] == 2


# -- byte-bounded caches --------------------------------------------------------------


def test_encoded_answers_stay_within_their_byte_bound(reloading_server):
    from pciname.server.data import CACHE_MAX_BYTES, ENCODED_CACHE_MAX_BYTES, MAX_CACHED_KEY_CHARS, EncodedAnswers

    data = reloading_server.data
    assert CACHE_MAX_BYTES == 64 << 20
    assert data.encoded.maxsize + data._spellings.maxsize == CACHE_MAX_BYTES == ENCODED_CACHE_MAX_BYTES + (1 << 20)
    custom = data.profile("custom")
    expected = data.encode(custom, "10de:2236")

    # A key over MAX_CACHED_KEY_CHARS is answered, never kept.
    before = (len(data.encoded), data.encoded.currsize)
    for width in range(MAX_CACHED_KEY_CHARS + 1, MAX_CACHED_KEY_CHARS + 200):
        assert data.encode(custom, "10de:2236".rjust(width)) == expected
    assert (len(data.encoded), data.encoded.currsize) == before
    assert max(map(len, data.encoded.keys())) <= MAX_CACHED_KEY_CHARS

    # Many distinct keys: the oldest go, the bytes stay within the bound.
    data.encoded = small = EncodedAnswers(maxsize=64 * 1024)
    keys = ["10de:2236".rjust(width).ljust(width + pad) for width in range(9, 100) for pad in range(10)]
    for key in keys:
        assert data.encode(custom, key) == expected
        assert small.currsize <= small.maxsize
    assert 0 < len(small) < len(keys) and small.currsize > small.maxsize // 2
    assert small.currsize == sum(small.size(k, expected) for k in small.keys())  # noqa: SIM118 - a list, not a dict
    assert small.keys() == keys[-len(small) :]  # first in, first out
    table = data.encoded_table(custom)
    assert table.get(keys[0]) is None and table.get(keys[-1]) == expected


def test_profile_spellings_stay_within_their_byte_bound(reloading_server):
    from pciname.server.data import MAX_CACHED_KEY_CHARS

    data = reloading_server.data
    spellings = data._spellings
    latest = data.profile("latest")
    assert data.profile(" latest ".center(MAX_CACHED_KEY_CHARS + 50)) is latest
    assert all(len(key) <= MAX_CACHED_KEY_CHARS for key in spellings)
    asked = 0
    for width in range(10, MAX_CACHED_KEY_CHARS + 1):
        for pad in range(width - 5):
            assert data.profile("latest".rjust(width - pad).ljust(width)) is latest
            assert spellings.currsize <= spellings.maxsize
            asked += 1
    assert len(spellings) < asked and spellings.currsize > spellings.maxsize // 2
