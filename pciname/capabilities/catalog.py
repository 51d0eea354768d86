"""``profiles`` and ``snapshots`` as requests: the profiles pciname knows,
and the plugin releases' pci.ids files (which are installed, which
profiles each serves; importing, fetching and packing them).

Each request validates itself and has one answer: :func:`answer_profiles`,
:func:`answer_snapshots` (the rows ``snapshots list`` prints),
:func:`answer_import`, :func:`answer_fetch` and :func:`answer_pack` (each
yields its results as the work goes, so a surface reports them one by
one). ``pciname profiles`` and ``pciname snapshots ...`` build them from
their arguments; the ``ListProfiles`` RPC answers from the server's data.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pciname.requests.spelling import RequestError

if TYPE_CHECKING:
    from pciname.naming.profiles import Snapshot
    from pciname.resolution.results import ProfileInfo
    from pciname.resolution.snapshots import FetchResult, ImportResult

#: ``snapshots fetch``'s defaults: seconds to connect or wait for data, and for a whole download.
FETCH_TIMEOUT = 60.0
FETCH_DEADLINE = 300.0


@dataclass(frozen=True)
class ProfilesRequest:
    """Every profile pciname knows (no fields)."""

    def validated(self) -> ProfilesRequest:
        return self


def answer_profiles(request: ProfilesRequest) -> list[ProfileInfo]:
    """Every known profile: release, algorithm, pci.ids and whether it is installed."""
    from pciname.api import profiles

    return profiles()


@dataclass(frozen=True)
class SnapshotsRequest:
    """Every snapshot pciname knows, installed or not (no fields)."""

    def validated(self) -> SnapshotsRequest:
        return self


def _users() -> dict[str, dict[str, list[str]]]:
    """sha256 -> profile kind -> the releases whose names need it."""
    from pciname.naming.profiles import load_registry

    users: dict[str, dict[str, list[str]]] = {}
    for profile in load_registry().profiles.values():
        if profile.snapshot is not None:
            kinds = users.setdefault(profile.snapshot.sha256, {})
            kinds.setdefault(profile.kind, []).append(profile.name.partition("@")[2])
    return users


def answer_snapshots(request: SnapshotsRequest) -> list[dict[str, Any]]:
    """One row per snapshot: its key, sha256, where it is installed (and
    whether packaged), the releases of each plugin kind whose names need
    it, and where it is fetched from."""
    from pciname.naming.kata import KATA_PLUGIN
    from pciname.resolution.snapshots import status

    users = _users()
    return [
        {
            "snapshot": s.snapshot.key,
            "sha256": s.snapshot.sha256,
            "installed": s.location is not None,
            "packaged": s.location is not None and s.location.packaged,
            "path": str(s.location) if s.location else None,
            "plugin_releases": users[s.snapshot.sha256].get("plugin", []),
            "gpu_operator_releases": users[s.snapshot.sha256].get("gpu-operator", []),
            # the Kata plugin's releases (v0.0.1: its image's file; later: go-nvlib's embedded copy)
            "kata_plugin_releases": users[s.snapshot.sha256].get(KATA_PLUGIN, []),
            "url": s.snapshot.url,
        }
        for s in status()
    ]


@dataclass(frozen=True)
class SnapshotImportRequest:
    """pci.ids files to copy into the cache, each verified by its sha256."""

    files: tuple[str, ...] = ()

    def validated(self) -> SnapshotImportRequest:
        if not self.files:
            raise RequestError.saying("no files given: name at least one FILE", "empty request: no files given")
        return self


def answer_import(request: SnapshotImportRequest) -> Iterator[ImportResult]:
    """Each file's result, as it is imported (``snapshot`` None: no known snapshot has its sha256)."""
    from pciname.resolution.snapshots import import_files

    yield from import_files([Path(f) for f in request.files])


@dataclass(frozen=True)
class SnapshotFetchRequest:
    """Download every snapshot that is not installed (``base_url``: from
    ``URL/<sha256>`` instead of upstream), giving up on one after
    ``timeout`` seconds without data or ``deadline`` seconds in all."""

    base_url: str | None = None
    timeout: float = FETCH_TIMEOUT
    deadline: float = FETCH_DEADLINE

    def validated(self) -> SnapshotFetchRequest:
        for name in ("timeout", "deadline"):
            value = getattr(self, name)
            if not value > 0 or value == float("inf"):
                raise RequestError.about("{}: not a positive number: {value}", name, value=value)
        return self


def answer_fetch(request: SnapshotFetchRequest) -> Iterator[FetchResult]:
    """Each snapshot's result, as it is fetched (``status`` failed: the others are still tried)."""
    from pciname.resolution.snapshots import iter_fetch

    yield from iter_fetch(request.base_url, timeout=request.timeout, deadline=request.deadline)


@dataclass(frozen=True)
class SnapshotPackRequest:
    """(Maintainers) write ``snapshots.tar.xz`` and ``snapshots.sha256``
    into ``into`` (None: the package's data directory) from files or
    directories holding every snapshot."""

    files: tuple[str, ...] = ()
    into: str | None = None

    def validated(self) -> SnapshotPackRequest:
        if not self.files:
            raise RequestError.saying("no files given: name at least one FILE_OR_DIR", "empty request: no files given")
        return self

    @property
    def directory(self) -> Path:
        """Where the pack is written."""
        from pciname.base.paths import data_dir

        return Path(self.into) if self.into else data_dir()


def answer_pack(request: SnapshotPackRequest) -> Iterator[Snapshot]:
    """Each snapshot as it is packed into :attr:`~SnapshotPackRequest.directory`."""
    from pciname.resolution.snapshots import pack

    yield from pack([Path(f) for f in request.files], request.directory)


__all__ = [
    "FETCH_DEADLINE",
    "FETCH_TIMEOUT",
    "ProfilesRequest",
    "SnapshotFetchRequest",
    "SnapshotImportRequest",
    "SnapshotPackRequest",
    "SnapshotsRequest",
    "answer_fetch",
    "answer_import",
    "answer_pack",
    "answer_profiles",
    "answer_snapshots",
]
