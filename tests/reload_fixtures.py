"""The reloading server of tests/server/test_server_reload.py as fixtures: a
package without 2019-08-14's snapshot, an empty snapshot dir and a custom
pci.ids the tests rewrite, served with a short watch interval."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from pciname.server import NameServer, ServeConfig
from tests.conftest import package_only
from tests.server_util import ALL_BUT_2019, pciids_text, snapshot_dir, write_atomically


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
        ServeConfig(
            listen="127.0.0.1:0",
            insecure=True,
            metrics_listen="127.0.0.1:0",
            pciids=str(files.custom),
            watch_interval=0,
        )
    )
    s.start()
    assert s.reload("startup")
    yield s
    s.stop()
