"""Hot reload in-process: new data swapped in whole under concurrent load,
broken files rejected while the old data keeps serving, requests in flight
finishing on the data they started with, snapshot directories watched."""

from __future__ import annotations

import threading
import time
from collections import Counter
from types import SimpleNamespace

import grpc
import pytest

from pciname.server import NameServer, ServeConfig
from pciname.server._proto import pciname_pb2 as pb
from pciname.server._proto import pciname_pb2_grpc as pb_grpc

from .conftest import package_only
from .server_util import (
    ALL_BUT_2019,
    BROKEN_PCIIDS,
    metric,
    pciids_text,
    scrape,
    snapshot_dir,
    write_atomically,
)


@pytest.fixture
def files(tmp_path, session_cache, monkeypatch):
    package_only(monkeypatch, ALL_BUT_2019)
    snapshots = snapshot_dir(tmp_path / "snapshots", [])
    custom = tmp_path / "custom.ids"
    write_atomically(custom, pciids_text("OLD NAME"))
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(session_cache))
    monkeypatch.setenv("PCINAME_SNAPSHOTS", str(snapshots))
    return SimpleNamespace(snapshots=snapshots, custom=custom)


@pytest.fixture
def server(files):
    s = NameServer(
        ServeConfig(listen="127.0.0.1:0", insecure=True, metrics_listen="127.0.0.1:0", pciids=str(files.custom),
                    watch_interval=0)
    )
    s.start()
    assert s.reload("startup")
    yield s
    s.stop()


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


def test_good_and_broken_reloads_under_load(server, files):
    port = server.port
    first = server.data
    with Load(port) as load:
        load.wait_calls(50)
        assert set(load.names) == {"OLD_NAME"}

        # A good new file: swapped in whole, no request fails.
        write_atomically(files.custom, pciids_text("NEW NAME"))
        assert reload_after_change(server) is True
        assert server.data.generation == first.generation + 1
        before = load.names["NEW_NAME"]
        load.wait_calls(50)
        assert load.names["NEW_NAME"] > before

        # A broken file: rejected, the new data keeps serving.
        write_atomically(files.custom, BROKEN_PCIIDS)
        assert reload_after_change(server) is False
        assert server.data.generation == first.generation + 1
        seen = Counter(load.names)
        load.wait_calls(50)
        assert load.names["NEW_NAME"] > seen["NEW_NAME"]
        assert load.names["OLD_NAME"] == seen["OLD_NAME"]  # never back to old data, never half-loaded
        assert server.poll() is None  # a rejected file is not retried until it changes again

        # Fixed again: loaded.
        write_atomically(files.custom, pciids_text("THIRD NAME"))
        assert reload_after_change(server) is True
        load.wait_calls(50)
    assert load.failures == []
    assert set(load.names) == {"OLD_NAME", "NEW_NAME", "THIRD_NAME"}
    assert load.calls > 200
    samples = scrape(server.metrics_port)
    assert metric(samples, "pciname_reloads_total", trigger="file-change", result="success") == 2
    assert metric(samples, "pciname_reloads_total", trigger="file-change", result="failure") == 1
    assert metric(samples, "pciname_last_reload_success") == 1
    assert metric(samples, "pciname_data_generation") == first.generation + 2


def test_rejected_reload_is_logged_with_the_bad_line(server, files, caplog):
    write_atomically(files.custom, BROKEN_PCIIDS)
    with caplog.at_level("INFO", logger="pciname.server"):
        assert server.reload("signal") is False
    rejected = [r for r in caplog.records if r.getMessage() == "reload rejected"]
    assert len(rejected) == 1
    assert f"{files.custom}:3:1" in rejected[0].fields["error"]
    assert rejected[0].fields["trigger"] == "signal"
    assert "keeps serving" in rejected[0].fields["keeping"]
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        assert stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="custom"), timeout=5).name == "OLD_NAME"
    assert scrape(server.metrics_port)[("pciname_last_reload_success", ())] == 0


def test_request_in_flight_finishes_on_its_data(server, files):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=[("grpc.http2.bdp_probe", 0)]) as channel:
        stub = pb_grpc.PciNameStub(channel)
        stream = stub.ListDevices(pb.ListDevicesRequest(profile="custom"), timeout=30)
        first = next(stream)  # the stream stalls: this client is not reading
        write_atomically(files.custom, pciids_text("NEW NAME", version="2031.01.01"))
        assert server.reload("signal") is True
        rest = list(stream)
        versions = {m.pci_ids_version for m in [first, *rest]}
        assert versions == {"2030.01.01"}  # every message from the generation it started on
        a10 = [m for m in [first, *rest] if m.device == "10de:2236"]
        assert [m.name for m in a10] == ["OLD_NAME"]
        after = stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="custom"), timeout=5)
        assert (after.name, after.pci_ids_version) == ("NEW_NAME", "2031.01.01")


def test_snapshot_directory_is_watched(server, files):
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        request = pb.ResolveRequest(device="10de:1eb8", profile="kubevirt-gpu-device-plugin@v1.0.1")
        with pytest.raises(grpc.RpcError) as missing:
            stub.Resolve(request, timeout=5)
        assert missing.value.code() == grpc.StatusCode.FAILED_PRECONDITION

        snapshot_dir(files.snapshots, ["2019-08-14.ids"])  # someone installs the snapshot
        assert reload_after_change(server) is True
        assert stub.Resolve(request, timeout=5).resource_name == "nvidia.com/TU104GL_Tesla_T4"

        (files.snapshots / "2019-08-14.ids").unlink()  # and removes it again
        assert reload_after_change(server) is True
        with pytest.raises(grpc.RpcError) as gone:
            stub.Resolve(request, timeout=5)
        assert gone.value.code() == grpc.StatusCode.FAILED_PRECONDITION


def test_poll_without_change_does_nothing(server, files):
    generation = server.data.generation
    assert server.poll() is None
    assert server.poll() is None
    assert server.data.generation == generation
    files.custom.touch()  # a new mtime is a change (the content may differ)
    assert reload_after_change(server) is True
    assert server.data.generation == generation + 1


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
