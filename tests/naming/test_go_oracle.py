"""pciname's Go text semantics against Go itself.

``tests/go_oracle/main.go`` states the four algorithms with Go's own
bufio.Scanner, strings.TrimSpace, strings.ToUpper and regexp; here it runs
on thousands of generated pci.ids files full of the characters where Python
and Go disagree (Unicode white space, special case mappings, invalid UTF-8,
``\\r``, lines around bufio.Scanner's 64 KiB limit), and every name must
match pciname's. Skipped when Go is not installed (CI installs
``golang-go``).
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pciname.naming.algorithms import ALGORITHMS, REFERENCE, NameIndex
from pciname.naming.gotext import scan_lines
from tests.conftest import NEEDS_GO, PLUGIN_PCIIDS
from tests.go_oracles import ask as ask_go, oracle as go_oracle

pytestmark = NEEDS_GO

IDS = ["2236", "1f08", "10de", "aaaa", "0000", "de10"]
PIECES = [
    *IDS,
    "10de",
    "\t",
    "\t\t",
    " ",
    "  ",
    "#",
    "\r",
    "\v",
    "\f",
    "\x1c",
    "\x1f",
    "\x85",
    "\xa0",
    "\u1680",
    "\u2000",
    "\u200a",
    "\u200b",
    "\u2028",
    "\u2029",
    "\u202f",
    "\u205f",
    "\u3000",
    "\ufeff",
    "ß",
    "ı",
    "ſ",
    "ﬁ",
    "ŉ",
    "ǅ",
    "ǰ",
    "\u212a",
    "µ",
    "ÿ",
    ".",
    "/",
    "-",
    "_",
    "[",
    "]",
    "a",
    "B",
    "z",
    "7",
    "GA102GL",
    "Rev. A",
]
RAW = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xf4\x90\x80\x80", b"\xe2\x80", b"\xc0\xaf"]


@pytest.fixture(scope="module")
def oracle() -> Path:
    return go_oracle("names")


def ask(oracle: Path, queries: list[tuple[str, str, Path]]) -> list[str]:
    text = "".join(f"{algorithm}\t{device_id}\t{path}\n" for algorithm, device_id, path in queries)
    names = ask_go(oracle, stdin=text).decode().split("\n")
    assert names[-1] == "" and len(names) == len(queries) + 1
    return names[:-1]


def random_file(rng: random.Random) -> bytes:
    lines = []
    for _ in range(rng.randrange(1, 25)):
        parts = []
        for _ in range(rng.randrange(0, 9)):
            if rng.random() < 0.08:
                parts.append(rng.choice(RAW))
            else:
                parts.append(rng.choice(PIECES).encode())
        lines.append(b"".join(parts))
    if rng.random() < 0.3:  # something that looks like the NVIDIA section
        at = rng.randrange(len(lines) + 1)
        lines[at:at] = [
            b"10de  NVIDIA Corporation",
            b"\t" + rng.choice(IDS).encode() + b"  " + rng.choice(PIECES).encode(),
        ]
    return b"\n".join(lines) + rng.choice([b"", b"\n", b"\r\n", b"\r"])


def python_names(data: bytes, algorithm: str, ids: list[str]) -> list[str]:
    lines = scan_lines(data.decode("utf-8", "surrogateescape"))
    index = NameIndex(lines, algorithm)
    names = [index.name(device_id) for device_id in ids]
    assert names == [REFERENCE[algorithm](lines, device_id) for device_id in ids]
    return names


def compare(oracle: Path, files: dict[Path, bytes]) -> None:
    queries = [(a, i, path) for path in files for a in ALGORITHMS for i in IDS]
    go = ask(oracle, queries)
    mismatches = []
    for (algorithm, device_id, path), want in zip(queries, go, strict=True):
        got = python_names(files[path], algorithm, [device_id])[0]
        if got != want:
            mismatches.append((files[path], algorithm, device_id, want, got))
    assert not mismatches, mismatches[:3]


@pytest.mark.parametrize("seed", range(6))
def test_generated_files_agree_with_go(oracle, tmp_path, seed):
    rng = random.Random(seed)
    files = {}
    for n in range(300):
        path = tmp_path / f"{n}.ids"
        path.write_bytes(random_file(rng))
        files[path] = path.read_bytes()
    compare(oracle, files)


@pytest.mark.parametrize("content_bytes", [65534, 65535, 65536, 65537, 70000])
def test_bufio_scanner_line_limit_agrees_with_go(oracle, tmp_path, content_bytes):
    """A line of 64 KiB or more ends the scan, in Go and in pciname."""
    files = {}
    for n, filler in enumerate((b"x", "é".encode(), b"\r")):
        long_line = (filler * content_bytes)[:content_bytes]
        data = b"\n".join([b"first 2236 one", long_line, b"2236 after", b"10de  NVIDIA", b"\t1f08  Late"])
        for variant, body in enumerate((data, data.replace(b"first 2236 one", b"nothing"))):
            path = tmp_path / f"{n}-{variant}.ids"
            path.write_bytes(body)
            files[path] = body
        # The NVIDIA section before the long line, its device after it.
        body = b"10de  NVIDIA\n\t0000  A\n" + long_line + b"\n\t2236  After the long line\n"
        path = tmp_path / f"{n}-section.ids"
        path.write_bytes(body)
        files[path] = body
    compare(oracle, files)


def test_real_files_agree_with_go(oracle):
    """Every NVIDIA id and a sample of other ids on the real plugin files."""
    rng = random.Random(1)
    queries = []
    for path in sorted(PLUGIN_PCIIDS.glob("*.ids")):
        ids = sorted({f"{rng.randrange(0x10000):04x}" for _ in range(60)} | {"2236", "1f08", "2330", "24fa"})
        queries += [(a, i, path) for a in ALGORITHMS for i in ids]
    go = ask(oracle, queries)
    cache: dict[tuple[Path, str], NameIndex] = {}
    for (algorithm, device_id, path), want in zip(queries, go, strict=True):
        if (path, algorithm) not in cache:
            cache[(path, algorithm)] = NameIndex(
                scan_lines(path.read_bytes().decode("utf-8", "surrogateescape")), algorithm
            )
        assert cache[(path, algorithm)].name(device_id) == want, (path.name, algorithm, device_id)
