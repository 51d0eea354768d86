"""``python -m pciname serve`` as a process: signals (SIGTERM drain, SIGHUP
reload), the file watcher, JSON logs, exit codes, and the CLI's
``lookup --server`` and ``health``."""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from tests.conftest import REPO, trimmed_install, wait_until
from tests.server_util import (
    BROKEN_PCIIDS,
    ServerProcess,
    metric,
    pciids_text,
    scrape,
    server_env,
    snapshot_dir,
    write_atomically,
)


@pytest.fixture
def env(tmp_path, session_cache):
    """A package that carries only the 2025.07.11 snapshot: quick to load,
    enough for 'latest', and the other releases known but not installed."""
    env = server_env(session_cache, snapshot_dir(tmp_path / "snapshots", []))
    env.update(trimmed_install(tmp_path / "install", ["2025.07.11.ids"]))
    return env


@pytest.fixture
def spawn():
    started: list[ServerProcess] = []

    def spawn(args, env, **kwargs) -> ServerProcess:
        process = ServerProcess(args, env, **kwargs)
        started.append(process)
        return process

    yield spawn
    for process in started:
        process.close()


def health(channel, service: str = "") -> str:
    response = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=service), timeout=5)
    return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)


def all_json(process: ServerProcess) -> None:
    for line in process.lines:
        entry = json.loads(line)  # every line one JSON object
        assert {"time", "level", "logger", "msg"} <= set(entry)


def refused_code(address: str):
    """The status of an RPC on a new channel when the server refuses it, else None."""
    with grpc.insecure_channel(address) as channel:
        try:
            channel.unary_unary("/pciname.v1.PciName/Resolve")(b"", timeout=0.5)
        except grpc.RpcError as error:
            if error.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
                return error.code()
    return None


def test_sigterm_drains_in_flight_rpcs_and_exits_0(spawn, env):
    server = spawn(
        [
            "--listen",
            "127.0.0.1:0",
            "--insecure",
            "--watch-interval",
            "0",
            "--shutdown-delay",
            "1",
            "--grace",
            "20",
            "--metrics-listen",
            "127.0.0.1:0",
        ],
        env,
    ).ready()
    with grpc.insecure_channel(server.address, options=[("grpc.http2.bdp_probe", 0)]) as channel:
        stub = pb_grpc.PciNameStub(channel)
        expected = sum(1 for _ in stub.ListDevices(pb.ListDevicesRequest(profile="latest"), timeout=20))
        assert expected > 1000
        stream = stub.ListDevices(pb.ListDevicesRequest(profile="latest"), timeout=30)
        first = next(stream)  # in flight, and stalled: this reader pauses
        assert metric(scrape(server.metrics_port), "pciname_rpc_in_flight") == 1
        assert health(channel) == "SERVING"

        server.signal(signal.SIGTERM)
        server.wait_log("shutdown requested", signal="SIGTERM")
        server.wait_log("draining")  # logged once health is NOT_SERVING
        assert health(channel) == "NOT_SERVING"  # within --shutdown-delay: still answering
        assert stub.Resolve(pb.ResolveRequest(device="10de:2236"), timeout=5).resource_name

        # Past the delay: the server stops taking RPCs; the stream is still open.
        wait_until(lambda: refused_code(server.address) is not None, what="new RPCs refused")
        assert server.proc.poll() is None
        rest = list(stream)  # the reader resumes: everything arrives, status OK
        assert 1 + len(rest) == expected and first.device < rest[-1].device
        assert refused_code(server.address) is not None
    assert server.wait(15) == 0
    server.wait_log("stopped")
    all_json(server)


def test_sigterm_grace_cancels_stragglers(spawn, env):
    server = spawn(["--listen", "127.0.0.1:0", "--insecure", "--watch-interval", "0", "--grace", "0.5"], env).ready()
    with grpc.insecure_channel(server.address, options=[("grpc.http2.bdp_probe", 0)]) as channel:
        stream = pb_grpc.PciNameStub(channel).ListDevices(pb.ListDevicesRequest(profile="latest"), timeout=30)
        next(stream)
        started = time.monotonic()
        server.signal(signal.SIGTERM)
        assert server.wait(15) == 0
        assert time.monotonic() - started < 5
        with pytest.raises(grpc.RpcError):
            list(stream)  # cut off after --grace


def test_sighup_and_file_watch_reload(spawn, env, tmp_path):
    custom = tmp_path / "custom.ids"
    write_atomically(custom, pciids_text("FIRST NAME"))
    server = spawn(
        [
            "--listen",
            "127.0.0.1:0",
            "--insecure",
            "--pciids",
            str(custom),
            "--watch-interval",
            "0.2",
            "--default-profile",
            "custom",
        ],
        env,
    ).ready()

    def name() -> str:
        with grpc.insecure_channel(server.address) as channel:
            return pb_grpc.PciNameStub(channel).Resolve(pb.ResolveRequest(device="10de:2236"), timeout=5).name

    assert name() == "FIRST_NAME"

    write_atomically(custom, pciids_text("WATCHED NAME"))  # the watcher notices
    loaded = server.wait_log("data loaded", trigger="file-change")
    assert loaded["generation"] == 2 and name() == "WATCHED_NAME"

    write_atomically(custom, BROKEN_PCIIDS)
    rejected = server.wait_log("reload rejected", trigger="file-change")
    assert f"{custom}:3:1" in rejected["error"] and rejected["level"] == "error"
    assert name() == "WATCHED_NAME"  # the old data keeps serving

    server.signal(signal.SIGHUP)  # still broken: rejected again
    server.wait_log("reload rejected", trigger="signal")
    assert name() == "WATCHED_NAME"

    write_atomically(custom, pciids_text("SIGNALLED NAME"))
    server.signal(signal.SIGHUP)
    assert server.wait_log("data loaded", trigger="signal")["generation"] == 3
    assert name() == "SIGNALLED_NAME"

    server.signal(signal.SIGTERM)
    assert server.wait(15) == 0
    all_json(server)


def test_startup_failures(spawn, env, tmp_path):
    broken = tmp_path / "broken.ids"
    broken.write_text(BROKEN_PCIIDS)
    bad_data = spawn(["--listen", "127.0.0.1:0", "--insecure", "--pciids", str(broken)], env)
    assert bad_data.wait(30) == 1
    assert bad_data.wait_log("reload rejected", trigger="startup")["keeping"] == "no data is loaded"
    bad_data.wait_log("no data to serve; exiting")

    no_tls = subprocess.run(
        [sys.executable, "-m", "pciname", "serve", "--listen", "127.0.0.1:0"],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=60,
    )
    assert no_tls.returncode == 2
    assert no_tls.stderr.startswith("pciname: error: no TLS certificate") and no_tls.stderr.count("\n") == 1

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        busy = spawn(["--listen", f"127.0.0.1:{port}", "--insecure"], env)
        assert busy.wait(30) == 2
        assert "cannot listen" in busy.wait_log("cannot start")["error"]


def test_cli_lookup_and_health_through_the_server(spawn, env):
    server = spawn(["--listen", "127.0.0.1:0", "--insecure", "--watch-interval", "0"], env).ready()

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "pciname", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
        )

    devices = ["10de:2236", "10DE:2330", "8086:1234"]
    for profile in ("latest", "preview"):
        remote = cli("lookup", *devices, "--profile", profile, "-o", "json", "--server", server.address)
        local = cli("lookup", *devices, "--profile", profile, "-o", "json")
        assert remote.returncode == local.returncode == 1  # 8086:1234 is not advertised
        assert json.loads(remote.stdout) == json.loads(local.stdout)
    names = cli("lookup", "10de:2236", "--server", server.address)
    assert (names.returncode, names.stdout) == (0, "nvidia.com/GA102GL_A10\n")

    for args, needle in [
        (("lookup", "10de:2236", "--profile", "nope", "--server", server.address), "unknown profile"),
        (("lookup", "10de:zz", "--server", server.address), "malformed device"),
        (("lookup", "10de:2236", "--profile", "v1.2.2", "--server", server.address), "pciname snapshots fetch"),
        (("lookup", "10de:2236", "--server", "127.0.0.1:1"), "unavailable"),
    ]:
        failed = cli(*args)
        assert failed.returncode == 2, failed
        assert failed.stderr.startswith("pciname: error: ") and failed.stderr.count("\n") == 1
        assert needle in failed.stderr and "Traceback" not in failed.stderr

    ok = cli("health", "--server", server.address)
    assert (ok.returncode, ok.stdout) == (0, "SERVING\n")
    unknown = cli("health", "--server", server.address, "--service", "no.such.Service")
    assert (unknown.returncode, unknown.stdout) == (1, "SERVICE_UNKNOWN\n")
    server.signal(signal.SIGINT)
    assert server.wait(15) == 0


@pytest.mark.parametrize(
    ("flag", "value", "needle"),
    [
        ("--watch-interval", "inf", "not a finite number of seconds"),
        ("--max-connection-age", "inf", "not a finite number of seconds"),
        ("--grace", "nan", "not a finite number of seconds"),
        ("--max-connection-age", "1e10", "must be at most 2147483 seconds"),
        ("--shutdown-delay", "-1", "cannot be negative"),
        ("--max-recv-message-bytes", "99999999999999999999", "must be at most 2147483647"),
        ("--max-send-message-bytes", "3000000000", "must be at most 2147483647"),
        ("--pciids", "", "empty file name"),
    ],
)
def test_serve_flag_values_are_usage_errors(env, flag, value, needle):
    """Values gRPC or the clock cannot take used to end in OverflowError tracebacks."""
    proc = subprocess.run(
        [sys.executable, "-m", "pciname", "serve", "--listen", "127.0.0.1:0", "--insecure", flag, value],
        capture_output=True,
        text=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith(f"pciname serve: error: argument {flag}: {needle}"), proc.stderr


def test_cli_client_addresses_are_checked(spawn, env):
    server = spawn(["--listen", "127.0.0.1:0", "--insecure", "--watch-interval", "0"], env).ready()

    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "pciname", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=60
        )

    # A port out of range used to be taken modulo 65536: another server entirely.
    wrapped = f"127.0.0.1:{server.port + 65536}"
    for command in (("lookup", "10de:2236"), ("health",)):
        for address, needle in [
            (wrapped, "a port from 1 to 65535"),
            ("", "empty address"),
            ("127.0.0.1", "expected HOST:PORT"),
            ("::1:50051", "IPv6 host in brackets"),
        ]:
            proc = cli(*command, "--server", address)
            assert proc.returncode == 2 and proc.stdout == "", (command, address, proc)
            assert "Traceback" not in proc.stderr and proc.stderr.count("\n") == 1, proc.stderr
            assert proc.stderr.startswith(f"pciname {command[0]}: error: argument --server: ") and needle in proc.stderr
    ok = cli("lookup", "10de:2236", "--server", f"[::ffff:127.0.0.1]:{server.port}")
    assert (ok.returncode, ok.stdout) == (0, "nvidia.com/GA102GL_A10\n"), ok.stderr


# -- reloads never hold shutdown up ---------------------------------------------------------


def _resolve_name(address: str) -> str:
    with grpc.insecure_channel(address) as channel:
        return pb_grpc.PciNameStub(channel).Resolve(pb.ResolveRequest(device="10de:2236"), timeout=10).name


def test_fifo_in_place_of_the_pciids_file_is_rejected_and_sigterm_exits(spawn, env, tmp_path):
    custom = tmp_path / "custom.ids"
    write_atomically(custom, pciids_text("FIRST NAME"))
    server = spawn(
        [
            "--listen",
            "127.0.0.1:0",
            "--insecure",
            "--pciids",
            str(custom),
            "--watch-interval",
            "0.2",
            "--default-profile",
            "custom",
        ],
        env,
    ).ready()
    custom.unlink()
    os.mkfifo(custom)  # nobody ever writes to it: a blocking read would wait forever

    rejected = server.wait_log("reload rejected", trigger="file-change")  # the watcher
    assert "not a regular file" in rejected["error"] and str(custom) in rejected["error"]
    server.signal(signal.SIGHUP)
    rejected = server.wait_log("reload rejected", trigger="signal")
    assert "not a regular file" in rejected["error"]
    assert _resolve_name(server.address) == "FIRST_NAME"  # the old data keeps serving

    server.signal(signal.SIGTERM)
    assert server.wait(30) == 0
    server.wait_log("stopped")
    all_json(server)


# In the server process: reads of pci.ids files block on a FIFO, as a plain
# open() and read() do (or a hung network file system): the reload hangs.
BLOCKING_READS = """
import pciname.resolution.catalog

def _blocking_read(path, limit, **kwargs):
    with open(path, "rb") as handle:  # waits for a writer, then for data
        return handle.read(limit + 1)

pciname.resolution.catalog.read_bounded = _blocking_read
"""


def test_sigterm_does_not_wait_for_a_reload_that_hangs(spawn, env, tmp_path):
    custom = tmp_path / "custom.ids"
    write_atomically(custom, pciids_text("FIRST NAME"))
    server = spawn(
        [
            "--listen",
            "127.0.0.1:0",
            "--insecure",
            "--pciids",
            str(custom),
            "--watch-interval",
            "0",
            "--default-profile",
            "custom",
        ],
        env,
        prelude=BLOCKING_READS,
    ).ready()
    custom.unlink()
    os.mkfifo(custom)
    server.signal(signal.SIGHUP)

    # The reload has the FIFO open for reading once a non-blocking writer can open it.
    writer = None
    deadline = time.monotonic() + 60
    while writer is None:
        try:
            writer = os.open(custom, os.O_WRONLY | os.O_NONBLOCK)
        except OSError as error:
            assert error.errno == errno.ENXIO, error
            assert time.monotonic() < deadline, "the reload never opened the FIFO:\n" + "".join(server.lines)
            time.sleep(0.05)
    try:
        # It now waits for data that never comes; the server still answers.
        assert _resolve_name(server.address) == "FIRST_NAME"
        server.signal(signal.SIGHUP)  # another reload while one runs: not queued up
        server.signal(signal.SIGTERM)
        assert server.wait(30) == 0
        server.wait_log("reload still running; not waiting for it", trigger="signal")
        server.wait_log("stopped")
        assert not [
            e
            for e in server.logs
            if e.get("msg") in ("data loaded", "reload rejected") and e.get("trigger") == "signal"
        ]
    finally:
        os.close(writer)
    all_json(server)
