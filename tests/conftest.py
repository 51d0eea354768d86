"""Shared fixtures: the real data, all of it inside this repository, and an
isolated cache.

* The plugin images' pci.ids files come from the package itself
  (``data/snapshots.tar.xz``): they are extracted once per session into a
  temporary directory (``PLUGIN_PCIIDS``) for the tests that need them as
  files (lspci, Go, import and fetch); resolution reads the package as users'
  installs do.
* Debian's bookworm and trixie pci.ids are test fixtures in
  ``tests/data/debian-pciids.tar.xz``; sid's is ``data/pci.ids``.
* ``tests/data/nvidia-device-names.json``: expected names computed by the
  plugin's own Go code, for every release.

Every test runs with ``PCINAME_CACHE_DIR`` in a session temporary directory
and no ``PCINAME_SNAPSHOTS``; a test that needs either elsewhere sets its own.

The gRPC fixtures every folder uses are here, and only here: ``server`` (a
:class:`~pciname.server.NameServer` on a loopback port), ``channel``, ``stub``
and ``client`` on it, one set per test module. A module whose server is
configured otherwise overrides ``server_spec`` (see :class:`ServerSpec`).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

import pciname

#: The checkout, and this folder (every path a test needs starts at one of
#: them, wherever the test file sits).
REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"

#: The newest plugin release pciname knows: what ``latest`` means. A new
#: release profile changes these lines (tests/resolution/test_answers.py checks them
#: against data/profiles.json), and no other test line.
LATEST_RELEASE = "v1.6.0"
LATEST = f"kubevirt-gpu-device-plugin@{LATEST_RELEASE}"
TEST_DATA = TESTS / "data"
VECTORS = TEST_DATA / "nvidia-device-names.json"
PROFILES_JSON = REPO / "data" / "profiles.json"
DEBIAN_SID = REPO / "data" / "pci.ids"

_EXTRACTED = Path(tempfile.mkdtemp(prefix="pciname-test-data-"))
atexit.register(shutil.rmtree, _EXTRACTED, True)


def _extract(archive: Path, into: Path) -> Path:
    into.mkdir()
    with tarfile.open(archive, "r:xz") as tar:
        tar.extractall(into, filter="data")
    return into


# The package's snapshot files, as files named <key>.ids (e.g. 2025.07.11.ids).
PLUGIN_PCIIDS = _extract(REPO / "data" / "snapshots.tar.xz", _EXTRACTED / "kubevirt-gpu-device-plugin")
# Debian's bookworm and trixie files, plus sid's (data/pci.ids).
DEBIAN_PCIIDS = _extract(TEST_DATA / "debian-pciids.tar.xz", _EXTRACTED / "debian")
shutil.copy(DEBIAN_SID, DEBIAN_PCIIDS / "pci.ids_0.0~2026.10.24-1")
# Every real pci.ids file we have.
REAL_PCIIDS_FILES = sorted([*PLUGIN_PCIIDS.glob("*.ids"), *DEBIAN_PCIIDS.iterdir()])


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """One cache dir for the session: catalogs on disk are keyed by file
    identity, so sharing them is safe and keeps the suite fast."""
    return tmp_path_factory.mktemp("pciname-cache")


@pytest.fixture(autouse=True)
def isolated_pciname(session_cache, monkeypatch):
    """The session cache, no snapshot dirs, and no in-process state carried
    between tests (memoised resolutions would not notice a test's changed
    environment). A test that writes snapshots into the cache sets its own
    PCINAME_CACHE_DIR."""
    import pciname

    cache = session_cache
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    monkeypatch.delenv("PCINAME_SNAPSHOTS", raising=False)
    pciname.clear_caches()
    yield cache
    pciname.clear_caches()


def package_only(monkeypatch, keep: list[str] = ()) -> None:
    """In this process, as if the package carried only the snapshot files
    named in ``keep`` (e.g. ``["2025.07.11.ids"]``): the others must come
    from the search dirs, as a release newer than pciname's would."""
    from pciname.resolution import snapshots

    manifest = {sha: name for sha, name in snapshots.packaged_manifest().items() if name in keep}
    monkeypatch.setattr(snapshots, "packaged_manifest", lambda: manifest)
    # Nor the answers made from them (pciname.resolution.answers).
    without_packaged_answers(monkeypatch)


def without_packaged_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process, as if the package carried no packaged answers:
    every lookup and resolve takes the full path."""
    from pciname.resolution import answers

    monkeypatch.setattr(answers, "packaged_dir", lambda: "/nonexistent/pciname-packaged-answers")
    answers.clear()


def wait_until(condition, timeout: float = 15.0, what: str = "the condition") -> None:
    """Return as soon as ``condition()`` is true (checked every 20 ms),
    instead of sleeping for a guessed time; fail after ``timeout`` seconds."""
    import time

    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:g} s")
        time.sleep(0.02)


@pytest.fixture
def unpackaged(monkeypatch):
    """As if the package carried no snapshot at all."""
    package_only(monkeypatch)


def trimmed_install(root: Path, keep: list[str] = ()) -> dict[str, str]:
    """A copy of pciname whose package carries only the snapshot files named
    in ``keep``; returns the environment that makes ``python -m pciname``
    run it (a subprocess's view of :func:`package_only`)."""
    from pciname.resolution.snapshots import pack

    root.mkdir(parents=True, exist_ok=True)
    # Without the packaged answers too: they are made from the snapshots.
    shutil.copytree(REPO / "pciname", root / "pciname", ignore=shutil.ignore_patterns("__pycache__", "packaged"))
    (root / "data").mkdir()
    for name in ("pci.ids", "profiles.json"):
        shutil.copy(REPO / "data" / name, root / "data" / name)
    if keep:
        pack([PLUGIN_PCIIDS / name for name in keep], root / "data", complete=False)
    # PYTHONSAFEPATH: `python -m` must not put the working directory (the
    # checkout, in most tests) before the copy on sys.path.
    return {"PYTHONPATH": str(root), "PYTHONSAFEPATH": "1"}


@pytest.fixture(scope="session")
def vectors() -> dict:
    return json.loads(VECTORS.read_text())


@pytest.fixture(scope="session")
def profile_facts() -> dict:
    return json.loads(PROFILES_JSON.read_text())


# -- Go oracles -----------------------------------------------------------------

#: Where Debian's golang-*-dev packages put Go source (GOPATH layout).
DEBIAN_GOCODE = Path("/usr/share/gocode")

#: The Debian packages the tests use as oracles and real programs, each with
#: what shows it is installed: one registry. The README's apt-get line and
#: .ci/run's list are tested against it (tests/project/test_readme.py), and a
#: test skips only through :func:`needs`, so a skip always names its package.
DEBIAN_TOOLS: dict[str, Callable[[], bool]] = {
    "pciutils": lambda: shutil.which("lspci") is not None,
    "golang-go": lambda: shutil.which("go") is not None,
    "golang-gopkg-yaml.v2-dev": lambda: (DEBIAN_GOCODE / "src" / "gopkg.in" / "yaml.v2").is_dir(),
    "golang-gopkg-yaml.v3-dev": lambda: (DEBIAN_GOCODE / "src" / "gopkg.in" / "yaml.v3").is_dir(),
    "zsh": lambda: shutil.which("zsh") is not None,
    "fish": lambda: shutil.which("fish") is not None,
    "tmux": lambda: shutil.which("tmux") is not None,
    "bash-completion": lambda: Path("/usr/share/bash-completion/bash_completion").is_file(),
}


def needs(*packages: str) -> pytest.MarkDecorator:
    """The mark of a test that needs these Debian packages installed."""
    missing = [package for package in packages if not DEBIAN_TOOLS[package]()]
    return pytest.mark.skipif(bool(missing), reason=f"not installed: apt-get install {' '.join(missing)}")


needs_lspci = needs("pciutils")
#: The mark of a test module that asks Go.
NEEDS_GO = needs("golang-go")
NEEDS_ZSH = needs("zsh")
NEEDS_FISH = needs("fish")
#: The mark of a test that types into a real shell under tmux.
NEEDS_TMUX = needs("tmux")
NEEDS_BASH_COMPLETION = needs("bash-completion")
#: The mark of a test module that builds against go-yaml v2 and v3.
NEEDS_GO_YAML = needs("golang-go", "golang-gopkg-yaml.v2-dev", "golang-gopkg-yaml.v3-dev")


#: What can happen to a cache's table files (see corrupt).
CORRUPTIONS = st.one_of(
    st.tuples(st.just("flip"), st.integers(min_value=0), st.integers(min_value=0, max_value=7)),
    st.tuples(st.just("truncate"), st.integers(min_value=0), st.just(0)),
    st.tuples(st.just("swap"), st.integers(min_value=0), st.integers(min_value=0)),
    st.tuples(st.just("link"), st.integers(min_value=0), st.integers(min_value=0)),
    st.tuples(st.just("fifo"), st.integers(min_value=0), st.just(0)),
    st.tuples(st.just("devzero"), st.integers(min_value=0), st.just(0)),
    st.tuples(st.just("empty"), st.integers(min_value=0), st.just(0)),
)


def corrupt(tables_dir: Path, op: tuple, pattern: str = "*.marshal") -> None:
    kind, a, b = op
    files = sorted(tables_dir.glob(pattern))
    target = files[a % len(files)]
    regular = [f for f in files if f.is_file() and not f.is_symlink()]
    # Files this operation opens itself: an earlier operation may have made
    # them a link or a FIFO, and opening a FIFO (to read or to write) blocks.
    opened = {"flip": [target], "truncate": [target], "empty": [target], "swap": [target, files[b % len(files)]]}
    if any(f not in regular for f in opened.get(kind, [])):
        return
    if kind == "flip":
        data = bytearray(target.read_bytes())
        if data:
            data[a % len(data)] ^= 1 << b
        target.write_bytes(bytes(data))
    elif kind == "truncate":
        data = target.read_bytes()
        target.write_bytes(data[: a % max(len(data), 1)])
    elif kind == "swap":
        other = files[b % len(files)]
        one, two = target.read_bytes(), other.read_bytes()
        target.write_bytes(two)
        other.write_bytes(one)
    elif kind == "link":
        target.unlink()
        target.symlink_to(files[b % len(files)] if files[b % len(files)] != target else "/etc/hostname")
    elif kind == "fifo":
        target.unlink()
        os.mkfifo(target)
    elif kind == "devzero":
        target.unlink()
        target.symlink_to("/dev/zero")
    else:
        target.write_bytes(b"")


@pytest.fixture
def empty_cache(unpackaged, monkeypatch, tmp_path):
    """No packaged snapshots, no snapshot dirs and an empty cache: only what
    the test installs (as for a release newer than this pciname)."""
    monkeypatch.setenv("PCINAME_SNAPSHOTS", "")
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "cache"))
    pciname.clear_caches()
    return tmp_path / "cache"


# -- the in-process gRPC server -------------------------------------------------------------


@dataclass(frozen=True)
class ServerSpec:
    """What a test module's ``server`` is. The default: the packaged
    snapshots (no ``PCINAME_SNAPSHOTS``), a cache of the module's own, and
    plaintext on a loopback port with no file watcher. A module that needs
    another server overrides the ``server_spec`` fixture (module-scoped),
    e.g. ::

        @pytest.fixture(scope="module")
        def server_spec(session_cache):
            return ServerSpec(config={"max_concurrent_lints": 1}, cache=session_cache)

    and each of its tests that takes ``server``, ``stub`` or ``client`` gets
    that module's one server."""

    #: More :class:`~pciname.server.ServeConfig` fields (``listen``,
    #: ``insecure`` and ``watch_interval`` are given, and may be overridden).
    config: dict[str, Any] = field(default_factory=dict)
    #: The server's ``PCINAME_CACHE_DIR``; None: a fresh directory.
    cache: Path | None = None
    #: Environment variables set while the server runs (None: unset), after
    #: ``PCINAME_CACHE_DIR`` and with ``PCINAME_SNAPSHOTS`` unset unless given.
    env: dict[str, str | None] = field(default_factory=dict)
    #: Options of ``channel`` (and so of ``stub``).
    channel_options: tuple[tuple[str, Any], ...] = ()
    #: ``client``'s deadline per call, in seconds.
    client_timeout: float = 20


@contextmanager
def serving(spec: ServerSpec, cache: Path) -> Iterator:
    """A started NameServer as ``spec`` says, with ``cache`` as its cache dir
    unless the spec names one; stopped on exit."""
    from pciname.server import NameServer, ServeConfig

    config = {"listen": "127.0.0.1:0", "insecure": True, "watch_interval": 0, **spec.config}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PCINAME_CACHE_DIR", str(spec.cache or cache))
        mp.delenv("PCINAME_SNAPSHOTS", raising=False)
        for name, value in spec.env.items():
            if value is None:
                mp.delenv(name, raising=False)
            else:
                mp.setenv(name, value)
        server = NameServer(ServeConfig(**config))
        server.start()
        try:
            assert server.reload("startup")
            yield server
        finally:
            server.stop()


@pytest.fixture(scope="module")
def server_spec() -> ServerSpec:
    """The module's server: the default :class:`ServerSpec` unless the module
    overrides this fixture."""
    return ServerSpec()


@pytest.fixture(scope="module")
def server(server_spec, tmp_path_factory, request):
    """The module's in-process server (one per test module)."""
    cache = server_spec.cache or tmp_path_factory.mktemp(f"{request.module.__name__.rpartition('.')[2]}-cache")
    with serving(server_spec, cache) as s:
        yield s


@pytest.fixture(scope="module")
def channel(server, server_spec):
    import grpc

    with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=list(server_spec.channel_options)) as ch:
        yield ch


@pytest.fixture(scope="module")
def stub(channel):
    from pciname.server._proto import pciname_pb2_grpc as pb_grpc

    return pb_grpc.PciNameStub(channel)


@pytest.fixture(scope="module")
def client(server, server_spec):
    from pciname.client import Client

    with Client(f"127.0.0.1:{server.port}", timeout=server_spec.client_timeout) as c:
        yield c
