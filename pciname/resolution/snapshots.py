"""pci.ids files of plugin releases, found and verified by sha256.

pciname knows each plugin image's pci.ids file by sha256
(``data/profiles.json``) and finds it:

1. in the package: ``data/snapshots.tar.xz`` carries every file
   profiles.json names, as one solid xz tar (the files share most of their
   lines: 8.6 MB become 0.28 MB), newest first, so the default profile's
   file is the first member. ``data/snapshots.sha256`` lists the members in
   ``sha256sum`` form, so knowing what is packaged costs no decompression.
   Packaged bytes are read into memory, never extracted, and verified
   against profiles.json every time they are read: a damaged package is a
   :class:`SnapshotVerifyError`, never a wrong name.
2. in the directories of ``$PCINAME_SNAPSHOTS`` (``os.pathsep``-separated),
   then in the user cache (``pciname snapshots import`` / ``fetch`` put
   files there as ``<sha256>.ids``): for files the package does not carry
   (a release newer than this pciname, a custom image). A file is used only
   if its bytes hash to the expected sha256; its name does not matter.
"""

from __future__ import annotations

import errno
import os
from collections import namedtuple
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol, cast

from pciname.base.paths import (
    cache_dir,
    packaged_manifest_path,
    packaged_snapshots_path,
    snapshot_cache_dir,
    snapshot_search_dirs,
)
from pciname.errors import SnapshotCacheError, SnapshotMissingError, SnapshotVerifyError
from pciname.naming.profiles import Profile, Snapshot, load_registry

if TYPE_CHECKING:
    from collections.abc import Iterator

    from pciname.resolution.catalog import Catalog

_CHUNK = 1 << 20


def sha256_file(path: Path) -> str:
    """The sha256 of a regular file (opened without blocking: a FIFO or a
    device is refused, never waited on) of at most
    :data:`~pciname.base.files.MAX_PCIIDS_BYTES`. Raises OSError."""
    import hashlib  # costs milliseconds: not on the cached lookup path
    import stat

    from pciname.base.files import MAX_PCIIDS_BYTES
    from pciname.errors import FileLimitError

    digest = hashlib.sha256()
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise FileLimitError(errno.EINVAL, "not a regular file", os.fspath(path))
        size = 0
        while chunk := os.read(fd, _CHUNK):
            size += len(chunk)
            if size > MAX_PCIIDS_BYTES:
                raise FileLimitError(errno.EFBIG, f"more than the {MAX_PCIIDS_BYTES} bytes allowed", os.fspath(path))
            digest.update(chunk)
    finally:
        os.close(fd)
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


# -- the package's own copies -------------------------------------------------

_MAX_PACKAGED_BYTES = 64 << 20  # no plugin image's pci.ids is near this


@lru_cache(maxsize=1)
def packaged_manifest() -> dict[str, str]:
    """sha256 -> archive member name, for every file the package carries
    (empty when the package carries none)."""
    try:
        with open(packaged_manifest_path(), encoding="ascii") as handle:
            text = handle.read()
    except (OSError, ValueError):
        return {}
    manifest = {}
    for line in text.splitlines():
        digest, _, name = line.partition("  ")
        if len(digest) == 64 and name:
            manifest[digest] = name
    return manifest


def _damaged(snapshot: Snapshot, what: str) -> SnapshotVerifyError:
    return SnapshotVerifyError(
        f"pciname's packaged pci.ids snapshot {snapshot.key} is damaged ({what}) in {packaged_snapshots_path()}; "
        "reinstall pciname (pip install --force-reinstall pciname), "
        "or put a good copy in a directory listed in $PCINAME_SNAPSHOTS"
    )


def packaged_bytes(snapshot: Snapshot) -> bytes:
    """The snapshot's bytes from the package's archive, verified against
    profiles.json (size and sha256); SnapshotVerifyError if they are not
    exactly those bytes or cannot be read."""
    import hashlib
    import lzma
    import tarfile

    member_name = packaged_manifest().get(snapshot.sha256)
    if member_name is None:
        raise _damaged(snapshot, "not listed in the archive's manifest")
    data = None
    try:
        with tarfile.open(packaged_snapshots_path(), "r:xz") as archive:
            for member in archive:  # stop at the member: the rest stays compressed
                if member.name == member_name:
                    if not member.isfile() or member.size != snapshot.size or member.size > _MAX_PACKAGED_BYTES:
                        raise _damaged(snapshot, f"member {member_name} is not a file of {snapshot.size} bytes")
                    handle = archive.extractfile(member)
                    assert handle is not None  # a regular file member always has one
                    data = handle.read()
                    break
    except (OSError, EOFError, lzma.LZMAError, tarfile.TarError) as error:
        raise _damaged(snapshot, f"cannot read the archive: {getattr(error, 'strerror', None) or error}") from None
    if data is None:
        raise _damaged(snapshot, f"no member {member_name}")
    digest = hashlib.sha256(data).hexdigest()
    if digest != snapshot.sha256:
        raise _damaged(snapshot, f"sha256 {digest}, expected {snapshot.sha256}")
    return data


class Location(namedtuple("Location", "path member")):
    """Where a snapshot is: a file (``member`` None), or a member of the
    package's archive at ``path``."""

    __slots__ = ()

    @property
    def packaged(self) -> bool:
        return self.member is not None

    def __str__(self) -> str:
        return f"{self.path}#{self.member}" if self.member else str(self.path)


def locate(snapshot: Snapshot, verified: KnownDigests | None = None) -> Location | None:
    """Where the snapshot is: the package first, then the search dirs."""
    member = packaged_manifest().get(snapshot.sha256)
    if member is not None:
        return Location(packaged_snapshots_path(), member)
    path = find_snapshot(snapshot, verified)
    return Location(path, None) if path is not None else None


def _packaged_catalog(snapshot: Snapshot, location: Location) -> Catalog:
    from pciname.resolution.catalog import catalog_for, identity_of

    # Cached under the archive's identity (a reinstall gives a new one) and
    # the member's name; built from bytes that were verified when read.
    real, *stat = identity_of(location.path)
    identity = (f"{real}#{location.member}", *stat)
    return catalog_for(location.path, identity=identity, reader=lambda: packaged_bytes(snapshot))  # type: ignore[arg-type]


def snapshot_catalog(profile: Profile) -> Catalog:
    """The catalog of a release profile's pci.ids file, wherever it is;
    SnapshotMissingError saying how to get it when it is nowhere, and
    SnapshotVerifyError when the package's copy is damaged and no good copy
    is installed elsewhere."""
    from pciname.resolution.catalog import catalog_for, verified_paths

    snapshot = profile.snapshot
    assert snapshot is not None
    location = locate(snapshot, verified_paths())
    if location is None:
        raise SnapshotMissingError(
            missing_message(snapshot, profile.name), snapshot=snapshot.key, sha256=snapshot.sha256, url=snapshot.url
        )
    if not location.packaged:
        return catalog_for(location.path)
    try:
        return _packaged_catalog(snapshot, location)
    except SnapshotVerifyError:
        elsewhere = find_snapshot(snapshot, verified_paths())
        if elsewhere is None:
            raise
        return catalog_for(elsewhere)


def pack(paths: list[Path], directory: Path, *, complete: bool = True) -> list[Snapshot]:
    """Write ``snapshots.tar.xz`` and ``snapshots.sha256`` into ``directory``
    from the given files (or directories of files): every known snapshot
    among them, newest first, byte for byte (headers kept), with fixed
    metadata so that the same files always give the same archive. With
    ``complete``, SnapshotVerifyError when a snapshot that profiles.json
    knows is missing."""
    import io
    import lzma
    import tarfile
    import tempfile

    by_sha = {snap.sha256: snap for snap in known_snapshots()}
    found: dict[str, Path] = {}
    for path in paths:
        for candidate in sorted(path.iterdir()) if path.is_dir() else [path]:
            if candidate.is_file() and candidate.stat().st_size in {s.size for s in by_sha.values()}:
                digest = sha256_file(candidate)
                if digest in by_sha:
                    found.setdefault(digest, candidate)
    missing = [snap.key for sha, snap in by_sha.items() if sha not in found]
    if missing and complete:
        raise SnapshotVerifyError(f"cannot pack: no file given is snapshot {', '.join(sorted(missing))}")
    ordered = sorted((by_sha[sha] for sha in found), key=lambda snap: snap.key, reverse=True)
    directory.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".pack-")
    try:
        with os.fdopen(fd, "wb") as out:
            # typeshed types preset as 0-9 only; xz's "extreme" flag is a bit above them.
            extreme = cast(Literal[9], 9 | lzma.PRESET_EXTREME)
            with tarfile.open(fileobj=out, mode="w:xz", format=tarfile.USTAR_FORMAT, preset=extreme) as archive:
                for snap in ordered:
                    data = found[snap.sha256].read_bytes()
                    info = tarfile.TarInfo(snap.filename)
                    info.size, info.mode, info.mtime = len(data), 0o644, 0
                    archive.addfile(info, io.BytesIO(data))
        os.chmod(tmp, 0o644)
        os.replace(tmp, directory / packaged_snapshots_path().name)
    finally:
        Path(tmp).unlink(missing_ok=True)
    manifest = "".join(f"{snap.sha256}  {snap.filename}\n" for snap in ordered)
    (directory / packaged_manifest_path().name).write_text(manifest, encoding="ascii")
    packaged_manifest.cache_clear()
    return ordered


def missing_message(snapshot: Snapshot, profile_name: str | None = None) -> str:
    who = f"profile {profile_name} needs " if profile_name else ""
    return (
        f"{who}pci.ids snapshot {snapshot.key} (sha256 {snapshot.sha256}), which is not installed; "
        f"get it with `pciname snapshots fetch` (from {snapshot.url}) "
        f"or `pciname snapshots import FILE`, or put the file in a directory listed in $PCINAME_SNAPSHOTS"
    )


class SnapshotStatus(namedtuple("SnapshotStatus", "snapshot location")):
    """A known snapshot and where it is installed (None: nowhere)."""

    __slots__ = ()


def status() -> list[SnapshotStatus]:
    return [SnapshotStatus(snap, locate(snap)) for snap in known_snapshots()]


# -- the user cache: import and fetch ------------------------------------------

# Temporaries are named by tempfile.mkstemp: the prefix and 8 random characters.
_TEMPORARY_NAME = r"\.(?:fetch|import)-[a-z0-9_]{8}"
STALE_AFTER = 3600.0
"""Seconds after which an untouched ``.fetch-*``/``.import-*`` temporary in
the cache is a killed run's leftover (a live one is younger than its
download's deadline, or was written to since)."""


def _cache_error(cache: Path, error: OSError | str) -> SnapshotCacheError:
    if isinstance(error, str):
        reason = error
    else:
        reason = error.strerror or str(error)
        # Name the file that is in the way, rather than "File exists"/"Not a directory".
        if isinstance(error, (FileExistsError, NotADirectoryError)):
            for path in (cache, *cache.parents):
                if path.exists() and not path.is_dir():
                    reason = f"{path} is not a directory"
                    break
    return SnapshotCacheError(
        f"cannot write to the snapshot cache {cache}: {reason} (set $PCINAME_CACHE_DIR to a writable directory)"
    )


def remove_stale_temporaries(cache: Path | None = None, older_than: float = STALE_AFTER) -> list[Path]:
    """Remove the ``.fetch-*``/``.import-*`` temporaries a killed import or
    fetch left in the cache, once untouched for ``older_than`` seconds; never
    any other file, and nothing in a cache that is not trusted
    (:func:`untrusted_cache`). Returns what was removed; errors are ignored
    (this is housekeeping)."""
    import re
    import stat
    import time

    removed: list[Path] = []
    if cache is None:
        cache = snapshot_cache_dir()
        if untrusted_cache() is not None:
            return removed
    now = time.time()
    try:
        entries = list(os.scandir(cache))
    except OSError:
        return removed
    for entry in entries:
        if not re.fullmatch(_TEMPORARY_NAME, entry.name):
            continue
        try:
            info = entry.stat(follow_symlinks=False)
            if stat.S_ISREG(info.st_mode) and now - info.st_mtime > older_than:
                os.unlink(entry.path)
                removed.append(Path(entry.path))
        except OSError:
            continue
    return removed


def untrusted_cache() -> str | None:
    """Why the snapshot cache must not be written (None: it may): the
    cache's trust rules (:func:`pciname.base.paths.untrusted_reason`, as for
    ``tables/``) applied to the cache dir and to its ``snapshots/``, which
    must be a directory, not a link: a ``snapshots`` link planted in a
    cache others can write would send writes (and the removal of stale
    ``.import-*`` files) elsewhere."""
    from pciname.base.paths import untrusted_reason

    root, snapshots = cache_dir(), snapshot_cache_dir()
    if os.path.islink(snapshots):  # pciname makes it a directory; a link is someone else's
        return f"{snapshots}: a symbolic link, not the directory pciname makes"
    return untrusted_reason(root) or untrusted_reason(snapshots)


def _writable_cache() -> Path:
    """The snapshot cache directory, created (0700, and the cache dir too)
    if need be; SnapshotCacheError when that is impossible or the cache is
    not trusted."""
    from pciname.base.paths import untrusted_reason

    cache = snapshot_cache_dir()
    for directory in (cache.parent, cache):
        if os.path.isdir(directory):  # (a file in the way: mkdir below names it)
            reason = untrusted_cache() if directory == cache else untrusted_reason(directory)
            if reason is not None:
                raise _cache_error(cache, f"not trusted: {reason}")
    try:
        cache.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        cache.mkdir(mode=0o700, exist_ok=True)
    except OSError as error:
        raise _cache_error(cache, error) from None
    reason = untrusted_cache()  # as created (or as someone else created it meanwhile)
    if reason is not None:
        raise _cache_error(cache, f"not trusted: {reason}")
    return cache


def _temporary(cache: Path, prefix: str) -> tuple[int, Path]:
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=cache, prefix=prefix)
    except OSError as error:
        raise _cache_error(cache, error) from None
    return fd, Path(tmp)


def _write_all(fd: int, data: bytes, cache: Path) -> None:
    view = memoryview(data)
    try:
        while view:
            view = view[os.write(fd, view) :]
    except OSError as error:
        raise _cache_error(cache, error) from None


def _install(tmp: Path, cache: Path, snapshot: Snapshot) -> Path:
    """Move a verified temporary into place as ``<sha256>.ids``."""
    target = cache / f"{snapshot.sha256}.ids"
    try:
        os.chmod(tmp, 0o644)
        os.replace(tmp, target)
    except OSError as error:
        raise _cache_error(cache, error) from None
    return target


def _store(data: bytes, snapshot: Snapshot, cache: Path) -> Path:
    """Write a verified file's bytes (the very bytes hashed) into the cache
    atomically; return its path there."""
    fd, tmp = _temporary(cache, ".import-")
    try:
        try:
            _write_all(fd, data, cache)
        finally:
            os.close(fd)
        return _install(tmp, cache, snapshot)
    finally:  # also on KeyboardInterrupt, and SystemExit from the CLI's SIGTERM handler
        tmp.unlink(missing_ok=True)


def _read_source(path: Path) -> bytes:
    """A file to import: a regular file (a FIFO or a device is refused at
    once, never waited on) of at most :data:`~pciname.base.files.MAX_PCIIDS_BYTES`,
    read once (what is hashed is what is stored). SnapshotVerifyError."""
    from pciname.base.files import MAX_PCIIDS_BYTES, read_bounded

    try:
        return read_bounded(path, MAX_PCIIDS_BYTES)
    except OSError as error:
        raise SnapshotVerifyError(f"{path}: cannot read: {error.strerror or error}") from None


class ImportResult(namedtuple("ImportResult", "source snapshot stored")):
    """``snapshot`` None: the file is no known snapshot (and not stored)."""

    __slots__ = ()


def import_files(paths: list[Path]) -> list[ImportResult]:
    """Copy each file that is a known snapshot (by sha256) into the cache.

    SnapshotVerifyError when a file cannot be read, SnapshotCacheError when
    the cache cannot be written."""
    by_sha = {snap.sha256: snap for snap in known_snapshots()}
    remove_stale_temporaries()
    cache = None
    results = []
    import hashlib

    for path in paths:
        data = _read_source(path)
        snapshot = by_sha.get(hashlib.sha256(data).hexdigest())
        stored = None
        if snapshot is not None:
            cache = cache or _writable_cache()
            stored = _store(data, snapshot, cache)
        results.append(ImportResult(path, snapshot, stored))
    return results


class FetchResult(namedtuple("FetchResult", "snapshot url path status error", defaults=("",))):
    """``status``: "present" (``path`` may be a packaged Location), "fetched"
    or "failed" (``error``: one line saying why)."""

    __slots__ = ()


DEFAULT_TIMEOUT = 60.0
"""Seconds to wait for a connection, or for any data on it."""
DEFAULT_DEADLINE = 300.0
"""Seconds one download (redirects included) may take in all."""


def fetch(
    base_url: str | None = None, *, timeout: float = DEFAULT_TIMEOUT, deadline: float = DEFAULT_DEADLINE
) -> list[FetchResult]:
    """Download every snapshot not yet installed (neither packaged nor in a
    search dir), verify it, keep only good files.

    From each snapshot's upstream URL, or from ``BASE_URL/<sha256>`` (a mirror
    laid out by content hash) when ``base_url`` is given. ``timeout``: seconds
    to wait for the connection or for each read; ``deadline``: seconds each
    download may take in all. A download that fails for any reason (the
    network, the server's answer, the bytes) is a "failed" result and the
    others are still tried; a cache that cannot be written is a
    SnapshotCacheError.
    """
    return list(iter_fetch(base_url, timeout=timeout, deadline=deadline))


def iter_fetch(
    base_url: str | None = None, *, timeout: float = DEFAULT_TIMEOUT, deadline: float = DEFAULT_DEADLINE
) -> Iterator[FetchResult]:
    """:func:`fetch`, one result at a time (as each download ends)."""
    if not (timeout > 0 and deadline > 0):
        raise ValueError(f"timeout and deadline must be positive seconds, not {timeout!r} and {deadline!r}")
    from pciname.resolution.download import DownloadError, one_line

    remove_stale_temporaries(older_than=max(STALE_AFTER, 2 * deadline))
    cache = None
    for snap in known_snapshots():
        present = locate(snap)
        url = f"{base_url.rstrip('/')}/{snap.sha256}" if base_url else snap.url
        if present is not None:
            yield FetchResult(snap, url, present, "present")
            continue
        cache = cache or _writable_cache()
        try:
            path = _download(url, snap, cache, timeout=timeout, deadline=deadline)
        except (DownloadError, SnapshotVerifyError) as error:
            yield FetchResult(snap, url, None, "failed", one_line(str(error)))
        else:
            yield FetchResult(snap, url, path, "fetched")


def _download(url: str, snapshot: Snapshot, cache: Path, *, timeout: float, deadline: float) -> Path:
    """Download ``url`` into the cache as ``snapshot`` (:mod:`pciname.resolution.download`):
    DownloadError or SnapshotVerifyError when it fails, SnapshotCacheError
    when the cache cannot be written. Never leaves a temporary behind (short
    of SIGKILL)."""
    from pciname.resolution.download import download

    fd, tmp = _temporary(cache, ".fetch-")
    try:
        digest = download(
            url, snapshot.size, lambda chunk: _write_all(fd, chunk, cache), timeout=timeout, deadline=deadline
        )
        closing, fd = fd, -1
        try:
            os.close(closing)
        except OSError as error:
            raise _cache_error(cache, error) from None
        if digest != snapshot.sha256:
            raise SnapshotVerifyError(f"sha256 {digest} is not the expected {snapshot.sha256}")
        return _install(tmp, cache, snapshot)
    finally:  # also on KeyboardInterrupt, and SystemExit from the CLI's SIGTERM handler
        if fd >= 0:
            os.close(fd)
        tmp.unlink(missing_ok=True)
