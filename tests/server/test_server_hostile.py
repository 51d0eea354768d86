"""The service under its own inputs (issue 16, the minor items): limits of
the watcher, the metrics endpoint and the health port."""

from __future__ import annotations

import pytest

from pciname.cli import main
from pciname.server import ServeConfig, ServeError
from pciname.server.config import MIN_WATCH_INTERVAL


@pytest.mark.parametrize("value", [1e-9, 0.001, MIN_WATCH_INTERVAL / 2])
def test_watch_interval_has_a_sane_minimum(value, capsys):
    with pytest.raises(ServeError, match=r"^--watch-interval: must be 0 \(off\) or at least 0.1 seconds: "):
        ServeConfig(insecure=True, watch_interval=value).validate()
    code = main(["serve", "--insecure", "--listen", "127.0.0.1:0", "--watch-interval", repr(value)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--watch-interval: must be 0 (off) or at least 0.1 seconds" in err
    ServeConfig(insecure=True, watch_interval=0).validate()
    ServeConfig(insecure=True, watch_interval=MIN_WATCH_INTERVAL).validate()


def test_watch_interval_help_names_the_minimum(capsys):
    from pciname.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser("serve").parse_args(["serve", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"0 disables (SIGHUP still reloads), else at least {MIN_WATCH_INTERVAL:g}" in shown


def test_health_port_answers_with_every_rpc_slot_taken(session_cache):
    """Issue 16 item 4: with --max-concurrent-rpcs reached, health on the
    gRPC port is RESOURCE_EXHAUSTED; --health-listen (deploy/'s probes) is a
    server of its own and still answers, liveness and readiness."""
    import threading

    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from pciname.server import NameServer
    from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc

    release, entered = threading.Event(), threading.Event()
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PCINAME_CACHE_DIR", str(session_cache))
        mp.delenv("PCINAME_SNAPSHOTS", raising=False)
        server = NameServer(
            ServeConfig(
                listen="127.0.0.1:0",
                insecure=True,
                watch_interval=0,
                max_workers=2,
                max_concurrent_rpcs=2,
                health_listen="127.0.0.1:0",
            )
        )
        resolve = server.service.resolve

        def stuck(request, context, data):
            entered.set()
            release.wait(30)
            return resolve(request, context, data)

        server.service.resolve = stuck  # the handlers are built from the service's methods at start()
        server.start()
        assert server.reload("startup")
        calls = []
        try:
            with (
                grpc.insecure_channel(f"127.0.0.1:{server.port}") as main_channel,
                grpc.insecure_channel(f"127.0.0.1:{server.health_port}") as health_channel,
            ):
                stub = pb_grpc.PciNameStub(main_channel)
                for _ in range(2):  # every slot
                    calls.append(stub.Resolve.future(pb.ResolveRequest(device="10de:2236"), timeout=30))
                assert entered.wait(10)
                main_health = health_pb2_grpc.HealthStub(main_channel)
                with pytest.raises(grpc.RpcError) as caught:
                    for _ in range(50):  # until the second call holds its slot too
                        main_health.Check(health_pb2.HealthCheckRequest(service="liveness"), timeout=5)
                assert caught.value.code() == grpc.StatusCode.RESOURCE_EXHAUSTED
                health = health_pb2_grpc.HealthStub(health_channel)
                for service in ("liveness", ""):
                    answer = health.Check(health_pb2.HealthCheckRequest(service=service), timeout=3)
                    assert answer.status == health_pb2.HealthCheckResponse.SERVING
                release.set()
                for call in calls:
                    assert call.result().resource_name == "nvidia.com/GA102GL_A10"
        finally:
            release.set()
            server.stop()


def test_the_docs_state_the_bounds_as_defined():
    from pciname.base.files import MAX_CREDENTIAL_FILE_BYTES
    from pciname.cluster import kube as cluster, kubeconfig
    from pciname.server import budget, config
    from tests.conftest import REPO

    pages = ("grpc.md", "limits-and-security.md", "deployment.md")
    text = " ".join(" ".join((REPO / "docs" / page).read_text().split()) for page in pages)
    mib = 1 << 20
    for needle in (
        f"`--max-lint-nodes` (default {config.DEFAULT_MAX_LINT_NODES:,} YAML nodes",
        f"nesting of at most {budget.MAX_YAML_DEPTH} levels",
        f"nested at most {budget.MAX_YAML_DEPTH} levels",
        f"`--max-concurrent-lints` (default {config.DEFAULT_MAX_CONCURRENT_LINTS})",
        f"within `--timeout` (default {cluster.DEFAULT_TIMEOUT:g} s;",
        f"`--kube-timeout`, default {config.DEFAULT_KUBE_TIMEOUT:g} s",
        f"at most {cluster.MAX_RESPONSE_BYTES // mib} MiB per answer",
        f"Nodes asked for {cluster.NODE_PAGE} at a time",
        f"at most {cluster.MAX_NODES:,} in all",
        f"regular files of at most {MAX_CREDENTIAL_FILE_BYTES // mib} MiB each",
        f"with at most {kubeconfig.MAX_EXEC_OUTPUT_BYTES // mib} MiB of output",
        f"`--watch-interval` is 0 (off) or at least {config.MIN_WATCH_INTERVAL:g} s",
        "`pciname_tls_files_loaded`",
        f"serves at most {config.METRICS_MAX_CONNECTIONS} connections at once",
        f"drops one idle for {config.METRICS_IDLE_SECONDS:g} s",
    ):
        assert needle in text, needle


def test_an_idle_poll_of_a_huge_snapshot_dir_lists_nothing(tmp_path, monkeypatch):
    """Issue 16: a PCINAME_SNAPSHOTS dir of 100k entries cost an idle server
    40% CPU (every poll stat'ed every entry). Now an unchanged directory is
    not listed again; only files that may be snapshots are stat'ed."""
    import os

    from pciname.resolution.snapshots import known_snapshots
    from pciname.server import data

    snapshot_size = known_snapshots()[0].size
    directory = tmp_path / "snapshots"
    directory.mkdir()
    for i in range(20_000):
        (directory / f"f{i:05d}").write_bytes(b"x" * (i % 7))
    candidate = directory / "maybe.ids"
    candidate.write_bytes(b"y" * snapshot_size)
    first = data._dir_state(directory)
    listed = []
    scandir = os.scandir
    monkeypatch.setattr(data.os, "scandir", lambda path: listed.append(path) or scandir(path))
    for _ in range(3):
        assert data._dir_state(directory) == first
    assert listed == []  # unchanged: not listed again

    (directory / ".import-123").write_bytes(b"temporary")  # the directory changes, its snapshots do not
    assert data._dir_state(directory) == first and len(listed) == 1
    with open(candidate, "r+b") as f:  # a file that may be a snapshot, changed in place
        f.write(b"z")
    os.utime(candidate, ns=(1, 1))
    changed = data._dir_state(directory)
    assert changed != first and len(listed) == 1
    (tmp_path / "new.ids").write_bytes(b"n" * 10)
    os.rename(tmp_path / "new.ids", directory / "new.ids")  # renamed into place
    assert data._dir_state(directory) != changed and len(listed) == 2


def test_metrics_connections_are_capped(tmp_path):
    """Issue 16: the metrics endpoint started one thread per connection
    (800 idle connections made 825 threads). Now at most
    METRICS_MAX_CONNECTIONS are served at once, the rest closed at once, and
    idle ones dropped after METRICS_IDLE_SECONDS."""
    import socket
    import threading
    import time

    from pciname.server.config import METRICS_MAX_CONNECTIONS
    from pciname.server.metrics import Metrics, start_http
    from tests.server_util import scrape

    httpd, _ = start_http(Metrics(), "127.0.0.1", 0, idle_seconds=1.0)
    port = httpd.server_port
    try:
        before = threading.active_count()
        idle = [socket.create_connection(("127.0.0.1", port), timeout=5) for _ in range(40)]
        time.sleep(0.5)
        assert threading.active_count() - before <= METRICS_MAX_CONNECTIONS
        closed = 0
        for sock in idle:
            sock.settimeout(3)
            try:
                closed += sock.recv(1) == b""  # refused ones are closed at once; idle ones after 1 s
            except OSError:
                closed += 1
        assert closed == len(idle)
        for sock in idle:
            sock.close()
        for _ in range(50):  # the slots come back once the idle connections are dropped
            try:
                samples = scrape(port)
                break
            except OSError:
                time.sleep(0.1)
        assert ("pciname_rpc_in_flight", ()) in samples
    finally:
        httpd.shutdown()
        httpd.server_close()
