"""The three health services on a real server on loopback, on the gRPC port
and on the health port (``--health-listen``): ``readiness`` (and ``""``)
NOT_SERVING until every RPC can be answered and while draining, SERVING
otherwise; ``liveness`` SERVING from start until draining. And ``pciname
health --service readiness`` against a real ``serve`` process, as deploy/'s
probe asks it."""

from __future__ import annotations

import subprocess
import sys
import threading

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from pciname.server import NameServer, ServeConfig
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from pciname.server.config import LIVENESS_SERVICE, READINESS_SERVICE
from tests.conftest import REPO
from tests.server_util import BROKEN_PCIIDS, ServerProcess, server_env, snapshot_dir, write_atomically

READY = ("", READINESS_SERVICE, "pciname.v1.PciName")


def statuses(port: int) -> dict[str, str]:
    """Every health service's status on ``port``."""
    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        found = {}
        for service in (*READY, LIVENESS_SERVICE):
            status = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=5).status
            found[service] = health_pb2.HealthCheckResponse.ServingStatus.Name(status)
        return found


def loading() -> dict[str, str]:
    """What a server answers while its data is not loaded."""
    return {service: "NOT_SERVING" for service in READY} | {LIVENESS_SERVICE: "SERVING"}


@pytest.fixture
def fresh(tmp_path, session_cache, monkeypatch):
    """A started server whose data is not loaded yet (the test loads it)."""
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(session_cache))
    monkeypatch.setenv("PCINAME_SNAPSHOTS", str(snapshot_dir(tmp_path / "snapshots", [])))
    custom = tmp_path / "custom.ids"
    write_atomically(custom, BROKEN_PCIIDS)
    config = ServeConfig(
        listen="127.0.0.1:0", insecure=True, watch_interval=0, health_listen="127.0.0.1:0", pciids=str(custom)
    )
    server = NameServer(config)
    server.start()
    try:
        yield server, custom
    finally:
        server.stop()


A10 = "# Version: 2030.01.01\n10de  NVIDIA Corporation\n\t2236  GA102GL [A10]\n"


def test_readiness_waits_for_the_data_and_liveness_does_not(fresh):
    fresh, custom = fresh
    for port in (fresh.port, fresh.health_port):
        assert statuses(port) == loading()
    assert fresh.reload("startup") is False  # a broken --pciids file: no data, not ready
    assert statuses(fresh.health_port) == loading()
    write_atomically(custom, A10)
    assert fresh.reload("signal") is True
    for port in (fresh.port, fresh.health_port):
        assert set(statuses(port).values()) == {"SERVING"}


def test_readiness_is_not_serving_while_draining(fresh):
    fresh, custom = fresh
    write_atomically(custom, A10)
    assert fresh.reload("startup") is True
    draining = threading.Event()
    enter = fresh.health.enter_graceful_shutdown

    def entered() -> None:
        enter()
        draining.set()

    fresh.health.enter_graceful_shutdown = entered
    # The drain is held where it stops taking RPCs (as --shutdown-delay
    # holds it), for as long as the test looks.
    release = threading.Event()
    stop = fresh._server.stop

    def held_stop(grace):
        release.wait(30)
        return stop(grace)

    fresh._server.stop = held_stop
    drainer = threading.Thread(target=fresh.drain, kwargs={"grace": 1.0, "delay": 0})
    drainer.start()
    try:
        assert draining.wait(10)
        assert set(statuses(fresh.health_port).values()) == {"NOT_SERVING"}
        with grpc.insecure_channel(f"127.0.0.1:{fresh.port}") as channel:  # yet still answering
            answer = pb_grpc.PciNameStub(channel).Resolve(pb.ResolveRequest(device="10de:2236"), timeout=5)
            assert answer.resource_name == "nvidia.com/GA102GL_A10"
    finally:
        release.set()
        drainer.join(30)


@pytest.fixture
def process(tmp_path, session_cache):
    env = server_env(session_cache, snapshot_dir(tmp_path / "snapshots", []))
    args = ["--listen", "127.0.0.1:0", "--insecure", "--watch-interval", "0", "--health-listen", "127.0.0.1:0"]
    server = ServerProcess(args, env)
    try:
        yield server.ready(60), env
    finally:
        server.close()


def run_health(address: str, service: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pciname", "health", "--server", address, "--service", service, "--timeout", "10"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_health_command_asks_readiness_as_the_probe_does(process):
    server, env = process
    health_port = server.wait_log("listening")["health_port"]
    for service in (READINESS_SERVICE, LIVENESS_SERVICE, ""):
        done = run_health(f"127.0.0.1:{health_port}", service, env)
        assert (done.returncode, done.stdout) == (0, "SERVING\n"), done.stderr
    unknown = run_health(f"127.0.0.1:{health_port}", "nope", env)
    assert unknown.returncode != 0
