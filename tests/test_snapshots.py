"""Snapshots: found by sha256, imported after verification, fetched over HTTP."""

from __future__ import annotations

import http.server
import json
import shutil
import subprocess
import sys
import threading

import pytest

import pciname
from pciname import snapshots
from pciname.naming.profiles import load_registry

from .conftest import PLUGIN_PCIIDS, REPO, trimmed_install


@pytest.fixture
def empty_cache(unpackaged, monkeypatch, tmp_path):
    """No packaged snapshots, no snapshot dirs and an empty cache: only what
    the test installs (as for a release newer than this pciname)."""
    monkeypatch.setenv("PCINAME_SNAPSHOTS", "")
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "cache"))
    pciname.clear_caches()
    return tmp_path / "cache"


def snapshot(key: str):
    return next(s for s in snapshots.known_snapshots() if s.key == key)


def test_found_by_content_whatever_the_name(empty_cache, tmp_path, monkeypatch):
    mirror = tmp_path / "mirror"
    mirror.mkdir()
    shutil.copy(PLUGIN_PCIIDS / "2023.05.23.ids", mirror / "renamed-file")
    (mirror / "2025.07.11.ids").write_text("not the real file\n")  # a right name, wrong bytes
    monkeypatch.setenv("PCINAME_SNAPSHOTS", f"/nonexistent{':'}{mirror}")
    assert snapshots.find_snapshot(snapshot("2023.05.23")) == mirror / "renamed-file"
    assert snapshots.find_snapshot(snapshot("2025.07.11")) is None
    assert pciname.resolve("10de:2330", "v1.2.2").resource_name == "nvidia.com/GH100H100_SXM5_80GB"
    with pytest.raises(pciname.SnapshotMissingError):
        pciname.resolve("10de:2330", "v1.4.0")


def test_import_verifies_and_copies(empty_cache, tmp_path):
    junk = tmp_path / "junk.ids"
    junk.write_text("10de  NVIDIA\n")
    results = snapshots.import_files([PLUGIN_PCIIDS / "2021-12-02.ids", junk])
    assert results[0].snapshot.key == "2021-12-02"
    assert results[0].stored == empty_cache / "snapshots" / f"{snapshot('2021-12-02').sha256}.ids"
    assert results[0].stored.read_bytes() == (PLUGIN_PCIIDS / "2021-12-02.ids").read_bytes()
    assert results[1].snapshot is None and results[1].stored is None
    assert sorted(p.name for p in (empty_cache / "snapshots").iterdir()) == [results[0].stored.name]
    assert pciname.resolve("10de:2330", "v1.2.1").resource_name == "nvidia.com/ZYWALL_TURBO_CARD"


class _Mirror(http.server.SimpleHTTPRequestHandler):
    """Serves a directory; records the paths asked for."""

    requested: list[str] = []

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def do_GET(self) -> None:
        type(self).requested.append(self.path)
        super().do_GET()


@pytest.fixture
def mirror(tmp_path):
    root = tmp_path / "www"
    root.mkdir()
    handler = type("Handler", (_Mirror,), {"requested": []})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), lambda *a: handler(*a, directory=str(root)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield root, f"http://127.0.0.1:{server.server_address[1]}", handler
    server.shutdown()
    server.server_close()


def test_fetch_by_sha256_keeps_only_verified_files(empty_cache, mirror):
    root, url, handler = mirror
    good = snapshot("2023.11.11")
    shutil.copy(PLUGIN_PCIIDS / "2023.11.11.ids", root / good.sha256)
    bad = snapshot("2024.06.23")
    corrupted = bytearray((PLUGIN_PCIIDS / "2024.06.23.ids").read_bytes())
    corrupted[1000] ^= 1
    (root / bad.sha256).write_bytes(bytes(corrupted))
    results = {r.snapshot.key: r for r in snapshots.fetch(url, timeout=10)}
    assert results["2023.11.11"].status == "fetched"
    assert results["2023.11.11"].path.read_bytes() == (PLUGIN_PCIIDS / "2023.11.11.ids").read_bytes()
    assert results["2024.06.23"].status == "failed" and "sha256" in results["2024.06.23"].error
    assert results["2019-08-14"].status == "failed" and "404" in results["2019-08-14"].error
    stored = sorted(p.name for p in (empty_cache / "snapshots").iterdir())
    assert stored == [f"{good.sha256}.ids"]  # no partial or failed file left behind
    assert f"/{good.sha256}" in handler.requested
    # Fetching again downloads nothing for what is present.
    handler.requested.clear()
    again = {r.snapshot.key: r.status for r in snapshots.fetch(url, timeout=10)}
    assert again["2023.11.11"] == "present" and f"/{good.sha256}" not in handler.requested


def test_fetch_from_upstream_urls(empty_cache, mirror, monkeypatch):
    """Without --base-url, each snapshot's own upstream URL is used (here
    rewritten to the local mirror, laid out like the upstream paths)."""
    root, url, handler = mirror
    registry = load_registry()
    for snap in snapshots.known_snapshots():
        upstream_path = snap.url.split("://", 1)[1].split("/", 1)[1]
        target = root / upstream_path
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(PLUGIN_PCIIDS / snap.filename, target)
    rewritten = {s.key: s.__class__(s.key, s.sha256, s.size, url + "/" + s.url.split("://", 1)[1].split("/", 1)[1], s.note) for s in snapshots.known_snapshots()}
    monkeypatch.setattr(snapshots, "known_snapshots", lambda: sorted(rewritten.values(), key=lambda s: s.key))
    results = snapshots.fetch(timeout=10)
    assert {r.status for r in results} == {"fetched"}
    assert len(handler.requested) == len(rewritten)
    assert registry  # the registry itself was not touched


def test_cli_snapshots_list_import_and_fetch(empty_cache, tmp_path, mirror):
    import os

    env = {**os.environ, **trimmed_install(tmp_path / "install")}  # a package that carries no snapshot

    def cli(*args):
        return subprocess.run([sys.executable, "-m", "pciname", *args], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)

    listing = json.loads(cli("snapshots", "list", "-o", "json").stdout)
    assert {row["installed"] for row in listing} == {False}
    assert next(r for r in listing if r["snapshot"] == "2025.07.11")["plugin_releases"] == ["v1.4.0", "v1.5.0", "v1.6.0"]

    junk = tmp_path / "junk"
    junk.write_text("x")
    proc = cli("snapshots", "import", str(PLUGIN_PCIIDS / "2025.07.11.ids"), str(junk))
    assert proc.returncode == 1 and "not a known snapshot" in proc.stderr and "2025.07.11" in proc.stdout
    assert cli("lookup", "10de:2236", "-p", "latest").stdout == "nvidia.com/GA102GL_A10\n"

    root, url, _ = mirror
    snap = snapshot("2019-08-14")
    shutil.copy(PLUGIN_PCIIDS / "2019-08-14.ids", root / snap.sha256)
    proc = cli("snapshots", "fetch", "--base-url", url, "--timeout", "10")
    assert proc.returncode == 1  # the mirror lacks the others
    assert "2019-08-14: fetched" in proc.stdout and "2025.07.11: present" in proc.stdout
    assert "Traceback" not in proc.stderr
    assert cli("lookup", "10de:1eb8", "-p", "v1.0.1").stdout == "nvidia.com/TU104GL_Tesla_T4\n"
    missing = cli("snapshots", "import", str(tmp_path / "absent"))
    assert missing.returncode == 2 and "cannot read" in missing.stderr and "Traceback" not in missing.stderr
