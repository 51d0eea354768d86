"""``snapshots import`` reads only bounded regular files (issue 16, item 13)
and writes only into a cache it trusts, creating its directories 0700
(item 14)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time

import pytest

from pciname.errors import SnapshotCacheError, SnapshotVerifyError
from pciname.resolution import snapshots
from tests.conftest import PLUGIN_PCIIDS, REPO

KNOWN = PLUGIN_PCIIDS / "2019-08-14.ids"


def cli_import(path: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """In a child, with a timeout: an import that blocks fails the test
    instead of hanging it."""
    return subprocess.run(
        [sys.executable, "-m", "pciname", "snapshots", "import", path],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=REPO,
        timeout=60,
    )


@pytest.mark.parametrize("kind", ["fifo", "/dev/zero", "directory"])
def test_import_refuses_what_is_no_regular_file_at_once(tmp_path, kind):
    if kind == "fifo":
        path = str(tmp_path / "fifo")
        os.mkfifo(path)
    elif kind == "directory":
        path = str(tmp_path)
    else:
        path = kind
    proc = cli_import(path, {"PCINAME_CACHE_DIR": str(tmp_path / "cache"), "PCINAME_SNAPSHOTS": ""})
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.startswith(f"pciname: error: {path}: cannot read: ") and proc.stderr.count("\n") == 1
    assert "not a regular file" in proc.stderr or "Is a directory" in proc.stderr


def test_import_of_a_fifo_in_process_raises(empty_cache, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    with pytest.raises(SnapshotVerifyError, match="not a regular file"):
        snapshots.import_files([KNOWN, fifo])
    assert not (empty_cache / "snapshots").exists() or list((empty_cache / "snapshots").iterdir()) == [
        empty_cache / "snapshots" / f"{snapshots.sha256_file(KNOWN)}.ids"
    ]


def test_sha256_file_refuses_a_fifo():
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        fifo = os.path.join(d, "fifo")
        os.mkfifo(fifo)
        with pytest.raises(OSError, match="not a regular file"):
            snapshots.sha256_file(fifo)  # type: ignore[arg-type]


def _planted(tmp_path, root_mode: int):
    """A shared cache (``root_mode``) with ``snapshots`` planted as a link to
    a directory of ours holding an old ``.import-*`` file."""
    root = tmp_path / "shared"
    root.mkdir()
    os.chmod(root, root_mode)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(mode=0o700)
    old = elsewhere / ".import-abcdefgh"
    old.write_text("not a temporary of pciname's")
    past = time.time() - 10 * snapshots.STALE_AFTER
    os.utime(old, (past, past))
    os.symlink(elsewhere, root / "snapshots")
    return root, elsewhere, old


@pytest.mark.parametrize("mode", [0o777, 0o1777, 0o755])
def test_import_never_follows_a_planted_snapshots_link(empty_cache, tmp_path, monkeypatch, mode):
    """World-writable without the sticky bit: the cache is not trusted. With
    it (or a cache of ours): a link where snapshots/ should be is refused."""
    root, elsewhere, old = _planted(tmp_path, mode)
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(root))
    with pytest.raises(SnapshotCacheError, match="not trusted") as raised:
        snapshots.import_files([KNOWN])
    assert str(root) in str(raised.value)
    assert sorted(p.name for p in elsewhere.iterdir()) == [".import-abcdefgh"]  # nothing written, nothing removed
    assert old.exists()
    assert snapshots.remove_stale_temporaries() == [] and old.exists()
    proc = cli_import(str(KNOWN), {"PCINAME_CACHE_DIR": str(root), "PCINAME_SNAPSHOTS": ""})
    assert proc.returncode == 2 and "not trusted" in proc.stderr and proc.stderr.count("\n") == 1
    assert sorted(p.name for p in elsewhere.iterdir()) == [".import-abcdefgh"]


def test_import_refuses_a_world_writable_cache(empty_cache, tmp_path, monkeypatch):
    root = tmp_path / "shared"
    (root / "snapshots").mkdir(parents=True)
    os.chmod(root, 0o777)
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(root))
    with pytest.raises(SnapshotCacheError, match="writable by group or others"):
        snapshots.import_files([KNOWN])
    assert list((root / "snapshots").iterdir()) == []


def test_import_creates_the_cache_directories_0700(empty_cache, tmp_path):
    previous = os.umask(0o022)
    try:
        (result,) = snapshots.import_files([KNOWN])
    finally:
        os.umask(previous)
    assert result.stored is not None and result.stored.parent == empty_cache / "snapshots"
    for directory in (empty_cache, empty_cache / "snapshots"):
        assert stat.S_IMODE(os.stat(directory).st_mode) == 0o700, directory
    assert result.stored.read_bytes() == KNOWN.read_bytes()
