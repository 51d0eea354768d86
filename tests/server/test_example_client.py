"""examples/grpc_client.py, the gRPC guide's client, against a real
``pciname serve --insecure`` on loopback, run by an interpreter that cannot
import pciname: ``python -S`` (no site-packages) with a path holding only
grpcio, grpcio-tools and protobuf (and typing_extensions, which grpc.aio
needs), as in a virtual environment holding only grpcio and grpcio-tools."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import grpc
import pytest

from tests.conftest import REPO, trimmed_install
from tests.server_util import ServerProcess, server_env, snapshot_dir

CLIENT = REPO / "examples" / "grpc_client.py"


@pytest.fixture
def only_grpc(tmp_path) -> Path:
    """A directory of links to the grpc, grpc_tools and protobuf packages only."""
    import typing_extensions

    site = Path(grpc.__file__).resolve().parents[1]
    path = tmp_path / "path"
    path.mkdir()
    for name in ("grpc", "grpc_tools", "google"):
        (path / name).symlink_to(site / name)
    (path / "typing_extensions.py").symlink_to(typing_extensions.__file__)
    return path


def _client(path: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(path)}
    return subprocess.run(
        [sys.executable, "-S", str(CLIENT), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120
    )


def test_the_interpreter_cannot_import_pciname(only_grpc, tmp_path):
    done = subprocess.run(
        [sys.executable, "-S", "-c", "import grpc, grpc_tools.protoc, google.protobuf; import pciname"],
        env={"PATH": "/usr/bin:/bin", "PYTHONPATH": str(only_grpc)},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1 and "No module named 'pciname'" in done.stderr, done.stderr


def test_the_example_client_prints_the_resource_names(only_grpc, tmp_path, session_cache):
    env = server_env(session_cache, snapshot_dir(tmp_path / "snapshots", []))
    env.update(trimmed_install(tmp_path / "install", ["2025.07.11.ids"]))
    server = ServerProcess(["--listen", "127.0.0.1:0", "--insecure", "--watch-interval", "0"], env).ready()
    try:
        done = _client(only_grpc, server.address, "10de:2236", "10de:2330", cwd=tmp_path)
    finally:
        server.signal(signal.SIGTERM)
        server.wait(60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "Resolve: 10de:2236 nvidia.com/GA102GL_A10",
        "ResolveBatch: 10de:2236 nvidia.com/GA102GL_A10",
        "ResolveBatch: 10de:2330 nvidia.com/GH100_H100_SXM5_80GB",
    ]


def test_the_example_client_says_its_usage(only_grpc, tmp_path):
    done = _client(only_grpc, cwd=tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (2, "", "usage: grpc_client.py HOST:PORT DEVICE...\n")
