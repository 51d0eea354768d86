"""Snapshots: found by sha256, imported after verification, fetched over HTTP."""

from __future__ import annotations

import http.server
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import pciname
from pciname.errors import PcinameError
from pciname.naming.profiles import load_registry
from pciname.resolution import snapshots
from tests.cli_run import pciname_process
from tests.conftest import PLUGIN_PCIIDS, REPO, trimmed_install


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
    rewritten = {
        s.key: s.__class__(s.key, s.sha256, s.size, url + "/" + s.url.split("://", 1)[1].split("/", 1)[1], s.note)
        for s in snapshots.known_snapshots()
    }
    monkeypatch.setattr(snapshots, "known_snapshots", lambda: sorted(rewritten.values(), key=lambda s: s.key))
    results = snapshots.fetch(timeout=10)
    assert {r.status for r in results} == {"fetched"}
    assert len(handler.requested) == len(rewritten)
    assert registry  # the registry itself was not touched


def test_cli_snapshots_list_import_and_fetch(empty_cache, tmp_path, mirror):
    env = trimmed_install(tmp_path / "install")  # a package that carries no snapshot: a process of its own

    def cli(*args):
        return pciname_process(*args, env=env)

    listing = json.loads(cli("snapshots", "list", "-o", "json").stdout)
    assert {row["installed"] for row in listing} == {False}
    assert next(r for r in listing if r["snapshot"] == "2025.07.11")["plugin_releases"] == [
        "v1.4.0",
        "v1.5.0",
        "v1.6.0",
    ]

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


# -- a hostile or broken mirror -------------------------------------------------


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch):
    """Tests talk to 127.0.0.1 only, never through a proxy of the environment."""
    for name in ("http_proxy", "https_proxy", "all_proxy", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY"):
        monkeypatch.delenv(name, raising=False)


_LIFETIME = 30.0  # no server connection lives longer, whatever the client does


def _trickle(prefix: bytes, byte: bytes = b"a", every: float = 0.05):
    """Send ``prefix``, then one byte every ``every`` seconds (never a newline)."""

    def send(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(prefix)
        end = time.monotonic() + _LIFETIME
        while not stop.wait(every) and time.monotonic() < end:
            conn.sendall(byte)

    return send


def _stall(conn: socket.socket, stop: threading.Event) -> None:
    """Read the request and answer nothing (until the test ends)."""
    stop.wait(_LIFETIME)


class RawServer:
    """A TCP server on 127.0.0.1 that answers each request for ``/<path>``
    with ``answers[path]``: bytes sent as they are (then the connection is
    closed), or a function ``(conn, stop)`` that does the talking. Anything
    else is a 404. ``requested`` lists the paths asked for."""

    def __init__(self) -> None:
        self.answers: dict[str, object] = {}
        self.requested: list[str] = []
        self.stop = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.1)
        self.url = f"http://127.0.0.1:{self._listener.getsockname()[1]}"
        self._threads = [threading.Thread(target=self._accept, daemon=True)]
        self._threads[0].start()

    def _accept(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self._listener.accept()
            except (TimeoutError, OSError):
                continue
            thread = threading.Thread(target=self._serve, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _serve(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.settimeout(_LIFETIME)
                request = b""
                while b"\r\n\r\n" not in request:
                    data = conn.recv(65536)
                    if not data:
                        return
                    request += data
                path = request.split(b" ")[1].decode().lstrip("/")
                self.requested.append(path)
                answer = self.answers.get(
                    path, b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
                )
                if callable(answer):
                    answer(conn, self.stop)
                else:
                    conn.sendall(answer)
            except OSError:  # the client hung up: fine
                pass

    def serve_file(self, path: str, data: bytes) -> None:
        self.answers[path] = b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n" % len(data) + data

    def close(self) -> None:
        self.stop.set()
        self._listener.close()
        for thread in self._threads:
            thread.join(timeout=5)


@pytest.fixture
def raw_server():
    server = RawServer()
    yield server
    server.close()


def _ok(extra: bytes = b"") -> bytes:
    return b"HTTP/1.1 200 OK\r\n" + extra


# What a hostile or broken server may answer, and a word the error must say.
HOSTILE = {
    "bad status line": (b"SPAM 200 OK\r\nContent-Length: 3\r\n\r\nabc", "status line"),
    "header over 64 KB": (_ok(b"X-Big: " + b"a" * 70000 + b"\r\n\r\n"), "65536 bytes"),
    "over 100 headers": (_ok(b"".join(b"X-H%d: 1\r\n" % i for i in range(101)) + b"\r\n"), "100 headers"),
    "broken chunked encoding": (_ok(b"Transfer-Encoding: chunked\r\n\r\n5\r\nabcde\r\nzz\r\nabc\r\n"), "chunked"),
    "redirect loop": (b"HTTP/1.1 302 Found\r\nLocation: /loop\r\nContent-Length: 0\r\n\r\n", "too many redirects"),
    "truncated body": (_ok(b"Content-Length: 88615\r\n\r\nabc"), "ended"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_fetch_survives_a_broken_answer(empty_cache, raw_server, case):
    """Each broken answer is a one-line "failed" result for that snapshot,
    and the snapshots after it are still fetched."""
    answer, word = HOSTILE[case]
    first, last = snapshot("2019-08-14"), snapshot("2025.07.11")
    raw_server.answers[first.sha256] = answer
    raw_server.answers["loop"] = answer
    raw_server.serve_file(last.sha256, (PLUGIN_PCIIDS / "2025.07.11.ids").read_bytes())
    results = {r.snapshot.key: r for r in snapshots.fetch(raw_server.url, timeout=5)}
    failed = results["2019-08-14"]
    assert failed.status == "failed" and word in failed.error, failed.error
    assert "\n" not in failed.error and len(failed.error) < 300
    assert results["2025.07.11"].status == "fetched"
    assert {r.status for k, r in results.items() if k != "2025.07.11"} == {"failed"}
    assert set(raw_server.requested) >= {s.sha256 for s in snapshots.known_snapshots()}  # all were tried
    assert sorted(p.name for p in (empty_cache / "snapshots").iterdir()) == [f"{last.sha256}.ids"]


@pytest.mark.parametrize(
    "answer",
    [
        _trickle(_ok(b"Content-Length: 88615\r\n\r\n")),  # the body, a byte at a time
        _trickle(_ok(b"X-Slow: ")),  # the headers, a byte at a time
        _trickle(b""),  # the status line, a byte at a time
    ],
    ids=["body", "headers", "status line"],
)
def test_fetch_deadline_ends_a_trickling_download(empty_cache, raw_server, answer):
    """A server that sends a byte every 50 ms never trips the per-read
    timeout; the total deadline ends the download all the same."""
    first, last = snapshot("2019-08-14"), snapshot("2025.07.11")
    raw_server.answers[first.sha256] = answer
    raw_server.serve_file(last.sha256, (PLUGIN_PCIIDS / "2025.07.11.ids").read_bytes())
    start = time.monotonic()
    results = {r.snapshot.key: r for r in snapshots.fetch(raw_server.url, timeout=10, deadline=1)}
    assert time.monotonic() - start < 20  # it did not hang
    assert results["2019-08-14"].status == "failed"
    assert results["2019-08-14"].error == "no complete download within the 1 s deadline"
    assert results["2025.07.11"].status == "fetched"
    assert sorted(p.name for p in (empty_cache / "snapshots").iterdir()) == [f"{last.sha256}.ids"]


def test_fetch_per_read_timeout(empty_cache, raw_server):
    """A server that answers nothing: --timeout ends it, with its own message."""
    raw_server.answers[snapshot("2019-08-14").sha256] = _stall
    results = {r.snapshot.key: r for r in snapshots.fetch(raw_server.url, timeout=0.5, deadline=15)}
    assert results["2019-08-14"].error == "no data for 0.5 s (timed out)"


def _cli_env(tmp_path) -> dict:
    return {**os.environ, **trimmed_install(tmp_path / "install")}  # a package that carries no snapshot


def test_cli_fetch_from_a_hostile_mirror(empty_cache, tmp_path, raw_server):
    """One run against a mirror that answers every snapshot but one badly:
    a line per failure on stderr, no traceback, exit 1, the good one fetched."""
    keys = [s.key for s in snapshots.known_snapshots()]
    hostile = [HOSTILE[case][0] for case in sorted(HOSTILE) if case != "truncated body"]
    hostile.append(_trickle(_ok(b"Content-Length: 88615\r\n\r\n")))
    assert len(hostile) == len(keys) - 1
    for key, answer in zip(keys, hostile):
        raw_server.answers[snapshot(key).sha256] = answer
    raw_server.answers["loop"] = HOSTILE["redirect loop"][0]
    raw_server.serve_file(snapshot(keys[-1]).sha256, (PLUGIN_PCIIDS / f"{keys[-1]}.ids").read_bytes())
    proc = subprocess.run(
        [sys.executable, "-m", "pciname", "snapshots", "fetch", "--base-url", raw_server.url, "--timeout", "10", "--deadline", "2"],
        capture_output=True, text=True, env=_cli_env(tmp_path), cwd=REPO, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.splitlines()
    assert [line.partition(":")[0] for line in lines] == keys[:-1]
    assert all("failed to fetch" in line for line in lines)
    assert "too many redirects" in proc.stderr and "2 s deadline" in proc.stderr
    assert proc.stdout == f"{keys[-1]}: fetched {empty_cache / 'snapshots' / snapshot(keys[-1]).sha256}.ids\n"


def _temporaries(cache: Path) -> list[str]:
    return sorted(p.name for p in cache.iterdir() if p.name.startswith((".fetch-", ".import-")))


@pytest.mark.parametrize("how", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_cli_fetch_killed_mid_download_leaves_no_temporary(empty_cache, tmp_path, raw_server, how):
    raw_server.answers[snapshot("2019-08-14").sha256] = _trickle(_ok(b"Content-Length: 88615\r\n\r\n"))
    proc = subprocess.Popen(
        [sys.executable, "-m", "pciname", "snapshots", "fetch", "--base-url", raw_server.url],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_cli_env(tmp_path), cwd=REPO,
    )  # fmt: skip
    try:
        cache = empty_cache / "snapshots"
        end = time.monotonic() + 60
        while not (raw_server.requested and cache.is_dir() and _temporaries(cache)) and time.monotonic() < end:
            assert proc.poll() is None, proc.communicate()
            time.sleep(0.05)
        assert raw_server.requested and _temporaries(cache)  # mid-download
        proc.send_signal(how)
        _, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert _temporaries(cache) == []
    assert proc.returncode == 128 + how and "Traceback" not in stderr, stderr


def test_stale_temporaries_are_removed_and_nothing_else(empty_cache, tmp_path, mirror):
    """A run killed with SIGKILL cannot clean up: the next import or fetch
    removes its temporaries once they are an hour old, and no other file."""
    cache = empty_cache / "snapshots"

    def populate() -> None:
        cache.mkdir(parents=True, exist_ok=True)
        old = time.time() - 2 * 3600
        outside = tmp_path / "outside"
        outside.write_text("not ours")
        for name in (
            ".fetch-abcd1234",
            ".import-q1w2e3r4",
            ".fetch-young123",
            ".fetch-abcd1234.ids",
            "notes.txt",
            "0" * 64 + ".ids",
        ):
            (cache / name).write_text("x")
        (cache / ".fetch-dir12345").mkdir(exist_ok=True)
        (cache / ".fetch-link1234").unlink(missing_ok=True)
        (cache / ".fetch-link1234").symlink_to(outside)
        for name in (
            ".fetch-abcd1234",
            ".import-q1w2e3r4",
            ".fetch-abcd1234.ids",
            "notes.txt",
            "0" * 64 + ".ids",
            ".fetch-dir12345",
        ):
            os.utime(cache / name, (old, old))
        os.utime(cache / ".fetch-link1234", (old, old), follow_symlinks=False)

    kept = [
        ".fetch-abcd1234.ids",
        ".fetch-dir12345",
        ".fetch-link1234",
        ".fetch-young123",
        "0" * 64 + ".ids",
        "notes.txt",
    ]
    populate()
    junk = tmp_path / "junk"
    junk.write_text("not a snapshot")
    snapshots.import_files([junk])
    assert sorted(p.name for p in cache.iterdir()) == kept
    populate()
    _, url, _ = mirror
    assert {r.status for r in snapshots.fetch(url, timeout=5)} == {"failed"}  # the mirror is empty
    assert sorted(p.name for p in cache.iterdir()) == kept
    assert (tmp_path / "outside").read_text() == "not ours"


def _unwritable_caches(tmp_path):
    """(PCINAME_CACHE_DIR, what the error names) for caches that cannot be written."""
    a_file = tmp_path / "a-file"
    a_file.write_text("x")
    holder = tmp_path / "holder"
    holder.mkdir()
    (holder / "snapshots").write_text("x")
    return {
        "cache is a file": (a_file, f"{a_file} is not a directory"),
        "cache/snapshots is a file": (holder, f"{holder / 'snapshots'} is not a directory"),
    }


@pytest.mark.parametrize("case", ["cache is a file", "cache/snapshots is a file"])
def test_unwritable_cache_is_one_line_error(empty_cache, tmp_path, mirror, monkeypatch, case):
    cache, says = _unwritable_caches(tmp_path)[case]
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    with pytest.raises(PcinameError, match="cannot write to the snapshot cache") as raised:
        snapshots.import_files([PLUGIN_PCIIDS / "2019-08-14.ids"])
    assert says in str(raised.value)
    _, url, _ = mirror
    with pytest.raises(PcinameError, match="cannot write to the snapshot cache"):
        snapshots.fetch(url, timeout=5)

    env = {**_cli_env(tmp_path), "PCINAME_CACHE_DIR": str(cache)}
    for args in (["import", str(PLUGIN_PCIIDS / "2019-08-14.ids")], ["fetch", "--base-url", url, "--timeout", "5"]):
        proc = subprocess.run(
            [sys.executable, "-m", "pciname", "snapshots", *args],
            capture_output=True,
            text=True,
            env=env,
            cwd=REPO,
            timeout=120,
        )
        assert proc.returncode == 2, proc.stderr
        assert proc.stderr.startswith("pciname: error: cannot write to the snapshot cache") and says in proc.stderr
        assert proc.stderr.count("\n") == 1 and proc.stdout == ""


def test_read_only_cache_is_one_line_error(empty_cache, tmp_path, mirror, monkeypatch):
    """A read-only cache dir (simulated: the tests run as root, who may
    write anywhere): creating the temporary file fails with EACCES."""
    import tempfile

    (empty_cache / "snapshots").mkdir(parents=True)

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "mkstemp", refuse)
    with pytest.raises(PcinameError, match="cannot write to the snapshot cache .*Permission denied"):
        snapshots.import_files([PLUGIN_PCIIDS / "2019-08-14.ids"])
    _, url, _ = mirror
    with pytest.raises(PcinameError, match="cannot write to the snapshot cache .*Permission denied"):
        snapshots.fetch(url, timeout=5)
