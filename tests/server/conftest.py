"""The server tests' fixtures.

* ``custom_setup`` and ``server_env``: the files of the custom server that
  tests/server/test_server.py and test_surfaces_alike.py run RPCs against
  (``server_spec``: :func:`custom_spec`), a package with every snapshot but
  2019-08-14's (so v1.0.0/v1.0.1 are known but not installed), an empty
  snapshot dir and a custom pci.ids.
* ``files`` and ``reloading_server``: the reloading server of
  test_server_reload.py and test_server_reload_settle.py, one a test, whose
  custom pci.ids the tests rewrite.

``server``, ``channel``, ``stub`` and ``client`` are tests/conftest.py's."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests.conftest import ServerSpec, package_only, serving
from tests.server_util import ALL_BUT_2019, pciids_text, snapshot_dir, write_atomically


@pytest.fixture(scope="module")
def custom_setup(tmp_path_factory, session_cache):
    """The custom server's files, and its environment for the module."""
    root = tmp_path_factory.mktemp("server")
    snapshots = snapshot_dir(root / "snapshots", [])
    custom = root / "custom.ids"
    write_atomically(custom, pciids_text("GA102GL [A10 custom]"))
    with pytest.MonkeyPatch.context() as mp:
        package_only(mp, ALL_BUT_2019)
        mp.setenv("PCINAME_CACHE_DIR", str(session_cache))
        mp.setenv("PCINAME_SNAPSHOTS", str(snapshots))
        yield SimpleNamespace(root=root, snapshots=snapshots, custom=custom, cache=session_cache)


def custom_spec(setup: SimpleNamespace) -> ServerSpec:
    """The custom server: its pci.ids, the snapshot dir, metrics."""
    return ServerSpec(
        config={"metrics_listen": "127.0.0.1:0", "pciids": str(setup.custom)},
        cache=setup.cache,
        env={"PCINAME_SNAPSHOTS": str(setup.snapshots)},
    )


@pytest.fixture
def server_env(custom_setup, monkeypatch):
    """Each test sees the custom server's environment (conftest's autouse
    fixture resets it for every test)."""
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(custom_setup.cache))
    monkeypatch.setenv("PCINAME_SNAPSHOTS", str(custom_setup.snapshots))
    return custom_setup


# -- the reloading server --------------------------------------------------------------------


@pytest.fixture
def files(tmp_path, session_cache, monkeypatch):
    """The reloading server's files: a package without 2019-08-14's
    snapshot, an empty snapshot dir and a custom pci.ids (``OLD NAME``)."""
    package_only(monkeypatch, ALL_BUT_2019)
    snapshots = snapshot_dir(tmp_path / "snapshots", [])
    custom = tmp_path / "custom.ids"
    write_atomically(custom, pciids_text("OLD NAME"))
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(session_cache))
    monkeypatch.setenv("PCINAME_SNAPSHOTS", str(snapshots))
    return SimpleNamespace(snapshots=snapshots, custom=custom)


@pytest.fixture
def reloading_server(files, session_cache):
    """A server of this test alone on ``files``, with metrics; the test
    reloads it (``watch_interval`` is 0: nothing reloads by itself)."""
    spec = ServerSpec(
        config={"metrics_listen": "127.0.0.1:0", "pciids": str(files.custom)},
        env={"PCINAME_SNAPSHOTS": str(files.snapshots)},
    )
    with serving(spec, session_cache) as s:
        yield s
