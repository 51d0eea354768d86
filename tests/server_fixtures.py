"""The in-process loopback server of tests/server/test_server.py as fixtures
(module-scoped: each test module that imports them gets its own server),
for every test module that runs RPCs against it."""

from __future__ import annotations

from types import SimpleNamespace

import grpc
import pytest

from pciname.client import Client
from pciname.server import NameServer, ServeConfig
from pciname.server._proto import pciname_pb2_grpc as pb_grpc
from tests.conftest import package_only
from tests.server_util import ALL_BUT_2019, pciids_text, snapshot_dir, write_atomically


@pytest.fixture(scope="module")
def setup(tmp_path_factory, session_cache):
    """The server's files: a package with every snapshot but 2019-08-14's
    (so v1.0.0/v1.0.1 are known but not installed), an empty snapshot dir,
    and a custom pci.ids."""
    root = tmp_path_factory.mktemp("server")
    snapshots = snapshot_dir(root / "snapshots", [])
    custom = root / "custom.ids"
    write_atomically(custom, pciids_text("GA102GL [A10 custom]"))
    with pytest.MonkeyPatch.context() as mp:
        package_only(mp, ALL_BUT_2019)
        mp.setenv("PCINAME_CACHE_DIR", str(session_cache))
        mp.setenv("PCINAME_SNAPSHOTS", str(snapshots))
        yield SimpleNamespace(root=root, snapshots=snapshots, custom=custom, cache=session_cache)


@pytest.fixture
def server_env(setup, monkeypatch):
    """Each test sees the server's environment (conftest's autouse fixture
    resets it for every test)."""
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(setup.cache))
    monkeypatch.setenv("PCINAME_SNAPSHOTS", str(setup.snapshots))
    return setup


@pytest.fixture(scope="module")
def server(setup):
    s = NameServer(
        ServeConfig(
            listen="127.0.0.1:0",
            insecure=True,
            metrics_listen="127.0.0.1:0",
            pciids=str(setup.custom),
            watch_interval=0,
        )
    )
    s.start()
    assert s.reload("startup")
    yield s
    s.stop()


@pytest.fixture(scope="module")
def channel(server):
    ch = grpc.insecure_channel(f"127.0.0.1:{server.port}")
    yield ch
    ch.close()


@pytest.fixture(scope="module")
def stub(channel):
    return pb_grpc.PciNameStub(channel)


@pytest.fixture(scope="module")
def client(server):
    with Client(f"127.0.0.1:{server.port}", timeout=20) as c:
        yield c
