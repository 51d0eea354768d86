"""What the maintainer scripts that extract upstream release facts share:
git sources (and the recording of what they read, and its vendored copy for
the tests), one release's files with errors that name it, the inputs'
tarball of blobs, and the check of shipped facts against a re-run.

Used by :mod:`tools.kata_extract`, :mod:`tools.dra_extract`,
:mod:`tools.kubevirt_extract`, :mod:`tools.hami_extract`,
:mod:`tools.cozystack_extract` and :mod:`tools.k8s_device_plugin_extract`:
the inputs each writes and reads (:func:`load_inputs`, :func:`write_inputs`),
where its facts ship (:func:`shipped_dir`), the line of an offset (:func:`line_of`).
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import subprocess
import tarfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

if TYPE_CHECKING:
    import argparse

from pciname.errors import PcinameError

#: A final release tag (no rc, beta or unprefixed tags).
TAG = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
_COMMENT = re.compile(r"(?:^|\s)//.*$")
T = TypeVar("T")


class ExtractError(PcinameError):
    """Upstream text the script does not recognise (one line: release, file, what)."""


def version_key(tag: str) -> tuple[int, int, int]:
    m = TAG.match(tag)
    assert m is not None
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def blob_id(data: bytes) -> str:
    """Git's blob id of ``data`` (what ``git hash-object`` prints)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def pci_ids_stats(data: bytes) -> dict[str, Any]:
    """What the facts keep of a pci.ids file: blob id, sha256, Version header, size."""
    version = re.search(rb"^#\s*Version:\s*(\S+)\s*$", data[:4096], re.M)
    return {
        "blob": blob_id(data),
        "sha256": hashlib.sha256(data).hexdigest(),
        "version": version.group(1).decode() if version else None,
        "bytes": len(data),
    }


class Source(Protocol):
    """One repository's tags and files at a commit."""

    def tags(self) -> list[tuple[str, str, str]]: ...
    def read(self, commit: str, path: str) -> bytes | None: ...
    def listdir(self, commit: str, path: str) -> list[str] | None: ...
    def pci_ids(self, commit: str, path: str) -> dict[str, Any] | None: ...


class GitSource:
    """Tags and files of a git repository (bare is fine); with ``since``,
    only the release tags from that version on."""

    def __init__(self, git_dir: str | Path, *, since: tuple[int, int, int] = (0, 0, 0)) -> None:
        self.git_dir = str(git_dir)
        self.since = since
        if self._git("rev-parse", "--git-dir", check=False).returncode != 0:
            raise ExtractError(f"{git_dir}: not a git repository")

    def _git(self, *args: str, check: bool = True) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(["git", "--git-dir", self.git_dir, *args], capture_output=True, check=check)

    def tags(self) -> list[tuple[str, str, str]]:
        """(tag, commit, committer date YYYY-MM-DD) of every final release tag, oldest first."""
        out = self._git("for-each-ref", "--format=%(refname:short)", "refs/tags").stdout.decode().split()
        rows = []
        for tag in sorted((t for t in out if TAG.match(t) and version_key(t) >= self.since), key=version_key):
            commit, date = self._git("log", "-1", "--format=%H %cs", f"{tag}^{{commit}}").stdout.decode().split()
            rows.append((tag, commit, date))
        return rows

    def read(self, commit: str, path: str) -> bytes | None:
        done = self._git("cat-file", "blob", f"{commit}:{path}", check=False)
        return done.stdout if done.returncode == 0 else None

    def listdir(self, commit: str, path: str) -> list[str] | None:
        done = self._git("ls-tree", "--name-only", f"{commit}:{path}", check=False)
        return sorted(done.stdout.decode().split("\n")[:-1]) if done.returncode == 0 else None

    def pci_ids(self, commit: str, path: str) -> dict[str, Any] | None:
        data = self.read(commit, path)
        return None if data is None else pci_ids_stats(data)


class Recording:
    """A source that remembers what was read (to write the inputs)."""

    def __init__(self, source: GitSource) -> None:
        self.source = source
        self.files: dict[str, dict[str, str | None]] = {}
        self.trees: dict[str, dict[str, list[str] | None]] = {}
        self.blobs: dict[str, bytes] = {}
        self.pci_ids_files: dict[str, dict[str, Any]] = {}

    def tags(self) -> list[tuple[str, str, str]]:
        return self.source.tags()

    def read(self, commit: str, path: str) -> bytes | None:
        data = self.source.read(commit, path)
        blob = None if data is None else blob_id(data)
        if data is not None and blob is not None:
            self.blobs[blob] = data
        self.files.setdefault(commit, {})[path] = blob
        return data

    def listdir(self, commit: str, path: str) -> list[str] | None:
        names = self.source.listdir(commit, path)
        self.trees.setdefault(commit, {})[path] = names
        return names

    def pci_ids(self, commit: str, path: str) -> dict[str, Any] | None:
        stats = self.source.pci_ids(commit, path)
        self.files.setdefault(commit, {})[path] = None if stats is None else stats["blob"]
        if stats is not None:
            self.pci_ids_files[stats["blob"]] = {k: v for k, v in stats.items() if k != "blob"}
        return stats

    def sidecar(self, repository: str, license: str) -> dict[str, Any]:
        return {
            "repository": repository,
            "license": license,
            "tags": {
                tag: {
                    "commit": commit,
                    "date": date,
                    "files": dict(sorted(self.files.get(commit, {}).items())),
                    "trees": dict(sorted(self.trees.get(commit, {}).items())),
                }
                for tag, commit, date in self.tags()
            },
        }


class VendoredSource:
    """One repository's files from the inputs ``--inputs`` wrote (the test's input)."""

    def __init__(self, rows: dict[str, Any], blobs: dict[str, bytes], pci_ids: dict[str, Any]) -> None:
        self.rows = rows
        self.blobs = blobs
        self.pci_ids_files = pci_ids

    def tags(self) -> list[tuple[str, str, str]]:
        return [(tag, row["commit"], row["date"]) for tag, row in self.rows.items()]

    def _row(self, commit: str) -> dict[str, Any]:
        for row in self.rows.values():
            if row["commit"] == commit:
                return dict(row)
        raise ExtractError(f"no inputs for commit {commit}")

    def _blob(self, commit: str, path: str) -> str | None:
        files = self._row(commit)["files"]
        if path not in files:
            raise ExtractError(f"the inputs do not hold {path} at {commit} (run the script on git with --inputs)")
        blob: str | None = files[path]
        return blob

    def read(self, commit: str, path: str) -> bytes | None:
        blob = self._blob(commit, path)
        if blob is not None and blob not in self.blobs:
            raise ExtractError(f"the inputs' tarball has no blob {blob} ({path} at {commit})")
        return None if blob is None else self.blobs[blob]

    def listdir(self, commit: str, path: str) -> list[str] | None:
        trees = self._row(commit)["trees"]
        if path not in trees:
            raise ExtractError(f"the inputs do not list {path}/ at {commit} (run the script on git with --inputs)")
        names: list[str] | None = trees[path]
        return names

    def pci_ids(self, commit: str, path: str) -> dict[str, Any] | None:
        blob = self._blob(commit, path)
        if blob is None:
            return None
        if blob not in self.pci_ids_files:
            raise ExtractError(f"the inputs' sidecar has no pci.ids facts for blob {blob} ({path} at {commit})")
        return {"blob": blob, **self.pci_ids_files[blob]}


@dataclass
class At:
    """One release of one repository: its files, and errors that name it."""

    repo: str
    tag: str
    commit: str
    source: Source

    def fail(self, path: str, what: str) -> ExtractError:
        return ExtractError(f"{self.repo.partition('/')[2]} {self.tag}: {path}: {what}")

    def maybe(self, path: str) -> str | None:
        data = self.source.read(self.commit, path)
        return None if data is None else data.decode()

    def text(self, path: str) -> str:
        found = self.maybe(path)
        if found is None:
            raise self.fail(path, "missing")
        return found

    def find(self, path: str, text: str, pattern: str, what: str) -> re.Match[str]:
        """The first match of ``pattern`` (multi-line) in ``text`` read from ``path``, else an error."""
        m = re.search(pattern, text, re.M)
        if m is None:
            raise self.fail(path, f"{what} is not in a shape this script knows")
        return m

    def func(self, path: str, text: str, name: str) -> str:
        """The comment-free body of Go function (or method) ``name`` of ``text``."""
        m = self.find(path, text, r"^func (?:\([^)]*\) )?" + re.escape(name) + r"\(.*\{$", f"func {name}")
        end = re.search(r"^\}$", text[m.end() :], re.M)
        if end is None:
            raise self.fail(path, f"func {name} has no end")
        return "\n".join(statements(text[m.end() : m.end() + end.start()]))

    def pci_ids(self, path: str) -> dict[str, Any]:
        stats = self.source.pci_ids(self.commit, path)
        if stats is None:
            raise self.fail(path, "missing")
        if not stats["version"]:
            raise self.fail(path, "a pci.ids without a Version header")
        return {"path": path, "sha256": stats["sha256"], "version": stats["version"]}


def statements(body: str) -> list[str]:
    """The lines of Go code ``body``, stripped, without comments and blank lines."""
    return [line for raw in body.splitlines() if (line := _COMMENT.sub("", raw).strip())]


def dumps(document: dict[str, Any]) -> str:
    return json.dumps(document, indent=1, ensure_ascii=False) + "\n"


def difference(old: Any, new: Any, path: str = "") -> list[str]:
    """Paths (a.b.c) where two JSON documents differ."""
    if isinstance(old, dict) and isinstance(new, dict):
        keys = list(old) + [k for k in new if k not in old]
        return [d for k in keys for d in difference(old.get(k), new.get(k), f"{path}.{k}" if path else k)]
    return [] if old == new else [path or "(document)"]


def write_blobs(prefix: Path, blobs: dict[str, bytes]) -> None:
    """``PREFIX.tar.xz``: each blob once, named ``blobs/<git blob id>``, reproducibly."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=9) as tar:
        for blob in sorted(blobs):
            info = tarfile.TarInfo(f"blobs/{blob}")
            info.size, info.mtime, info.mode = len(blobs[blob]), 0, 0o644
            tar.addfile(info, io.BytesIO(blobs[blob]))
    prefix.with_suffix(".tar.xz").write_bytes(buffer.getvalue())


def read_blobs(prefix: Path) -> dict[str, bytes]:
    """The blobs of ``PREFIX.tar.xz`` by git blob id, each checked to be the
    blob its name says (ExtractError otherwise); an unreadable file raises
    one of :data:`INPUT_ERRORS`, which the caller names."""
    blobs: dict[str, bytes] = {}
    with tarfile.open(prefix.with_suffix(".tar.xz"), "r:xz") as tar:
        for member in tar.getmembers():
            handle = tar.extractfile(member)
            if handle is not None:
                data = handle.read()
                if blob_id(data) != member.name.rpartition("/")[2]:
                    raise ExtractError(f"{prefix}.tar.xz: {member.name} does not hold that blob")
                blobs[blob_id(data)] = data
    return blobs


#: What reading inputs that a script did not write raises.
INPUT_ERRORS = (OSError, ValueError, KeyError, tarfile.TarError)


def load_inputs(prefix: str | Path, build: Callable[[dict[str, Any], dict[str, bytes]], T]) -> T:
    """``build(sidecar, blobs)`` of the inputs at ``prefix`` (``PREFIX.json``
    and ``PREFIX.tar.xz``); inputs no script wrote are one ExtractError."""
    prefix = Path(prefix)
    try:
        sidecar = json.loads(prefix.with_suffix(".json").read_text(encoding="utf-8"))
        return build(sidecar, read_blobs(prefix))
    except INPUT_ERRORS as error:
        raise ExtractError(f"{prefix}: not inputs this script wrote: {error}") from None


def write_inputs(prefix: Path, sidecar: dict[str, Any], blobs: dict[str, bytes]) -> None:
    """``PREFIX.json`` (``sidecar``) and ``PREFIX.tar.xz`` (:func:`write_blobs`)."""
    prefix.parent.mkdir(parents=True, exist_ok=True)
    prefix.with_suffix(".json").write_text(json.dumps(sidecar, indent=1) + "\n", encoding="utf-8")
    write_blobs(prefix, blobs)


def shipped_dir(name: str) -> Path:
    """The package's ``data/<name>``, where an extractor's facts ship."""
    from pciname.base.paths import data_dir

    return data_dir() / name


def line_of(text: str, offset: int) -> int:
    """The line (from 1) of ``offset`` in ``text``."""
    return text.count("\n", 0, offset) + 1


def check_shipped(out: Path, text: str) -> int:
    """0 when ``out/releases.json`` is ``text``, else 1 and a line naming the facts that differ."""
    path = out / "releases.json"
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        print(f"{path}: up to date")
        return 0
    try:
        differs = difference(json.loads(path.read_text(encoding="utf-8")), json.loads(text))
    except (OSError, ValueError):
        differs = ["(missing or not JSON)"]
    shown = ", ".join(differs[:5]) + (f" and {len(differs) - 5} more" if len(differs) > 5 else "")
    print(f"{path}: STALE: {len(differs)} facts differ: {shown or 'formatting only'}")
    return 1


def publish(out: Path, document: dict[str, Any], *, check: bool) -> int | None:
    """Write ``out/releases.json`` (None), or with ``check`` compare it
    (:func:`check_shipped`'s exit code)."""
    if check:
        return check_shipped(out, dumps(document))
    out.mkdir(parents=True, exist_ok=True)
    (out / "releases.json").write_text(dumps(document), encoding="utf-8")
    return None


def add_extractor_options(parser: argparse.ArgumentParser, data: str) -> None:
    """The options of every extractor beside its repositories: ``--inputs``,
    ``--from-inputs``, ``--check`` and ``--out`` (default: the package's ``data/<data>``)."""
    parser.add_argument(
        "--inputs", type=Path, help="also write the upstream files read, as PREFIX.tar.xz + PREFIX.json"
    )
    parser.add_argument("--from-inputs", type=Path, help="extract from PREFIX.tar.xz + PREFIX.json instead of git")
    parser.add_argument("--check", action="store_true", help="compare with the shipped facts; exit 1 when they differ")
    parser.add_argument("--out", type=Path, default=None, help=f"where to write (default: the package's data/{data})")
