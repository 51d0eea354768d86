"""pci.ids files of plugin releases, found and verified by sha256.

pciname does not ship the plugin images' pci.ids files; it knows them by
sha256 (``data/profiles.json``) and finds them in the directories of
``$PCINAME_SNAPSHOTS`` (``os.pathsep``-separated), then in the user cache
(``pciname snapshots import`` / ``fetch`` put them there as
``<sha256>.ids``). A file is used only if its bytes hash to the expected
sha256; which file it is does not depend on its name.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from .errors import SnapshotMissingError, SnapshotVerifyError
from .naming.profiles import Profile, Snapshot, load_registry
from .paths import snapshot_cache_dir, snapshot_search_dirs

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    import hashlib  # costs milliseconds: not on the cached lookup path

    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def known_snapshots() -> list[Snapshot]:
    """Every snapshot some profile uses, oldest first."""
    seen: dict[str, Snapshot] = {}
    for profile in load_registry().profiles.values():
        if profile.snapshot is not None:
            seen.setdefault(profile.snapshot.sha256, profile.snapshot)
    return sorted(seen.values(), key=lambda s: s.key)


def _candidates(directory: Path, snapshot: Snapshot) -> list[Path]:
    """Files of ``directory`` that may be ``snapshot``: likely names first,
    then any other file of the right size (hashing only those)."""
    likely = [directory / f"{snapshot.sha256}.ids", directory / snapshot.sha256, directory / snapshot.filename]
    found = [path for path in likely if path.is_file()]
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return found
    for entry in entries:
        path = Path(entry.path)
        if path in likely:
            continue
        try:
            if entry.is_file() and entry.stat().st_size == snapshot.size:
                found.append(path)
        except OSError:
            continue
    return found


class KnownDigests(Protocol):
    """``path -> sha256`` for files already hashed (or None)."""

    def get(self, path: Path) -> str | None: ...


def find_snapshot(snapshot: Snapshot, verified: KnownDigests | None = None) -> Path | None:
    """The first file in the search dirs whose sha256 is the snapshot's.

    ``verified`` maps paths already known to hash to a value (the caller's
    cache, e.g. the table cache keyed by file identity) to skip re-hashing.
    """
    for directory in snapshot_search_dirs():
        for path in _candidates(directory, snapshot):
            try:
                digest = verified.get(path) if verified else None
                if digest is None:
                    if path.stat().st_size != snapshot.size:
                        continue
                    digest = sha256_file(path)
            except OSError:
                continue
            if digest == snapshot.sha256:
                return path
    return None


def missing_message(snapshot: Snapshot, profile_name: str | None = None) -> str:
    who = f"profile {profile_name} needs " if profile_name else ""
    return (
        f"{who}pci.ids snapshot {snapshot.key} (sha256 {snapshot.sha256}), which is not installed; "
        f"get it with `pciname snapshots fetch` (from {snapshot.url}) "
        f"or `pciname snapshots import FILE`, or put the file in a directory listed in $PCINAME_SNAPSHOTS"
    )


def require_snapshot(profile: Profile) -> Path:
    """The profile's pci.ids file, or SnapshotMissingError saying how to get it."""
    if profile.snapshot is None:
        assert profile.path is not None
        return profile.path
    from .catalog import verified_paths

    path = find_snapshot(profile.snapshot, verified_paths())
    if path is None:
        snap = profile.snapshot
        raise SnapshotMissingError(missing_message(snap, profile.name), snapshot=snap.key, sha256=snap.sha256, url=snap.url)
    return path


@dataclass(frozen=True, slots=True)
class SnapshotStatus:
    snapshot: Snapshot
    path: Path | None


def status() -> list[SnapshotStatus]:
    return [SnapshotStatus(snap, find_snapshot(snap)) for snap in known_snapshots()]


def _store(data_path: Path, snapshot: Snapshot) -> Path:
    """Copy a verified file into the cache atomically; return its path there."""
    import shutil
    import tempfile

    cache = snapshot_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    target = cache / f"{snapshot.sha256}.ids"
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=".import-")
    try:
        with os.fdopen(fd, "wb") as out, open(data_path, "rb") as source:
            shutil.copyfileobj(source, out)
        if sha256_file(Path(tmp)) != snapshot.sha256:  # the source changed under us
            raise SnapshotVerifyError(f"{data_path}: changed while being imported")
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target


@dataclass(frozen=True, slots=True)
class ImportResult:
    source: Path
    snapshot: Snapshot | None  # None: the file is no known snapshot
    stored: Path | None


def import_files(paths: list[Path]) -> list[ImportResult]:
    """Copy each file that is a known snapshot (by sha256) into the cache."""
    by_sha = {snap.sha256: snap for snap in known_snapshots()}
    results = []
    for path in paths:
        try:
            digest = sha256_file(path)
        except OSError as error:
            raise SnapshotVerifyError(f"{path}: cannot read: {error.strerror or error}") from None
        snapshot = by_sha.get(digest)
        stored = _store(path, snapshot) if snapshot else None
        results.append(ImportResult(path, snapshot, stored))
    return results


@dataclass(frozen=True, slots=True)
class FetchResult:
    snapshot: Snapshot
    url: str
    path: Path | None
    status: str  # "present", "fetched" or "failed"
    error: str = ""


def fetch(base_url: str | None = None, *, timeout: float = 60.0) -> list[FetchResult]:
    """Download every snapshot not yet installed, verify it, keep only good files.

    From each snapshot's upstream URL, or from ``BASE_URL/<sha256>`` (a mirror
    laid out by content hash) when ``base_url`` is given.
    """
    import urllib.error

    results = []
    for snap in known_snapshots():
        present = find_snapshot(snap)
        url = f"{base_url.rstrip('/')}/{snap.sha256}" if base_url else snap.url
        if present is not None:
            results.append(FetchResult(snap, url, present, "present"))
            continue
        try:
            path = _download(url, snap, timeout)
        except (OSError, SnapshotVerifyError, urllib.error.URLError, ValueError) as error:
            results.append(FetchResult(snap, url, None, "failed", _describe(error)))
        else:
            results.append(FetchResult(snap, url, path, "fetched"))
    return results


def _describe(error: BaseException) -> str:
    import urllib.error

    if isinstance(error, urllib.error.HTTPError):
        return f"HTTP {error.code} {error.reason}"
    if isinstance(error, urllib.error.URLError):
        return str(error.reason)
    return str(error)


def _download(url: str, snapshot: Snapshot, timeout: float) -> Path:
    import hashlib
    import tempfile
    import urllib.request

    cache = snapshot_cache_dir()
    cache.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=cache, prefix=".fetch-")
    try:
        digest = hashlib.sha256()
        size = 0
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=timeout) as response:
            while chunk := response.read(_CHUNK):
                size += len(chunk)
                if size > snapshot.size:
                    raise SnapshotVerifyError(f"larger than the expected {snapshot.size} bytes")
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != snapshot.sha256:
            raise SnapshotVerifyError(f"sha256 {digest.hexdigest()} is not the expected {snapshot.sha256}")
        os.chmod(tmp, 0o644)
        target = cache / f"{snapshot.sha256}.ids"
        os.replace(tmp, target)
        return target
    finally:
        Path(tmp).unlink(missing_ok=True)
