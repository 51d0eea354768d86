"""The Go oracles: one place that builds them and runs them.

Six programs state in Go what pciname states in Python (each folder's
``main.go`` says whose code it is): ``tests/go_oracle`` (the names'
algorithms), ``go_oracle_kata`` and ``go_oracle_kata_v001`` (go-nvlib's
pci.ids parser, as the Kata plugin and the DRA driver embed it),
``go_oracle_mdev`` (the mdev type rules), ``go_oracle_scan`` (each release's
host discovery) and ``go_oracle_yaml`` (go-yaml v2 and v3 reading what
pciname writes). A test asks for one with :func:`oracle` (or :func:`build`
for a program it writes itself) and runs it with :func:`ask`.

A binary is built once per machine and kept in a cache keyed by what it is
made of: the source's bytes, ``go version``, and for a program built against
Debian's Go packages, those packages' files. A changed source, another Go or
another go-yaml is another key, so a cached binary is always the program the
test names. Builds share one Go build cache there too (Go's own cache is safe
for concurrent builds), and a binary is written under a temporary name and
renamed into place, so parallel test workers never see half a file.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from functools import cache
from pathlib import Path

from tests.conftest import DEBIAN_GOCODE, TESTS

#: The oracle programs, by name: each is ``main.go`` in its folder.
ORACLES = {
    "names": TESTS / "go_oracle",
    "kata": TESTS / "go_oracle_kata",
    "kata_v001": TESTS / "go_oracle_kata_v001",
    "mdev": TESTS / "go_oracle_mdev",
    "scan": TESTS / "go_oracle_scan",
    "yaml": TESTS / "go_oracle_yaml",
}

#: The oracles built against Debian's Go source (GOPATH mode, offline).
WITH_DEBIAN_PACKAGES = {"yaml"}

#: How long one build or one run may take on a loaded 2-core machine.
DEADLINE = 300


def cache_root() -> Path:
    """Where built oracles are kept between runs (as the kubectl the
    completion tests fetch is)."""
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "pciname-tests" / "go"


@cache
def go_version() -> str:
    return subprocess.run(["go", "version"], capture_output=True, text=True, check=True, timeout=DEADLINE).stdout


def _debian_packages_digest() -> str:
    """What Debian's go-yaml source is: every file's path, size and bytes."""
    digest = hashlib.sha256()
    for root in sorted((DEBIAN_GOCODE / "src" / "gopkg.in").glob("yaml.v*")):
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            digest.update(str(path.relative_to(DEBIAN_GOCODE)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()


def key(source: Path, *, debian_packages: bool = False) -> str:
    """The cache key of ``source`` built as :func:`build` builds it."""
    digest = hashlib.sha256(source.read_bytes())
    digest.update(b"\0" + go_version().encode())
    if debian_packages:
        digest.update(b"\0debian\0" + _debian_packages_digest().encode())
    return digest.hexdigest()[:32]


def build(source: Path, *, debian_packages: bool = False) -> Path:
    """The binary of one Go file, built unless the cache has it. With
    ``debian_packages``, imports are found in Debian's Go source
    (:data:`~tests.conftest.DEBIAN_GOCODE`, GOPATH mode: no module proxy)."""
    root = cache_root()
    binary = root / key(source, debian_packages=debian_packages) / "oracle"
    if binary.is_file():
        return binary
    binary.parent.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "GOCACHE": str(root / "gocache"), "GOPATH": str(root / "gopath"), "GOFLAGS": ""}
    if debian_packages:
        env.update(GO111MODULE="off", GOPATH=f"{root / 'gopath'}{os.pathsep}{DEBIAN_GOCODE}")
    with tempfile.TemporaryDirectory(dir=binary.parent) as work:
        partial = Path(work) / "oracle"
        subprocess.run(["go", "build", "-o", str(partial), str(source)], check=True, env=env, timeout=DEADLINE)
        partial.replace(binary)
    return binary


def oracle(name: str) -> Path:
    """The built binary of the oracle program ``name`` (a key of :data:`ORACLES`)."""
    return build(ORACLES[name] / "main.go", debian_packages=name in WITH_DEBIAN_PACKAGES)


def ask(binary: Path, *args: str | Path, stdin: bytes | str = b"") -> bytes:
    """What ``binary`` prints to stdout given ``args`` and ``stdin``; it must exit 0."""
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run([str(binary), *map(str, args)], input=data, capture_output=True, timeout=DEADLINE)
    assert done.returncode == 0, done.stderr.decode(errors="replace")
    return done.stdout
