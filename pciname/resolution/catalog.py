"""What resolution needs from one pci.ids file, computed once and cached.

A :class:`Catalog` holds, for one file: its sha256 and Version/Date header,
the NVIDIA vendor and device names as pci.ids states them, and per algorithm
the name of every device id the file can name (and where a name from another
vendor's section comes from). Building one parses and indexes the file
(0.1-0.2 s), so catalogs are cached in the process, per file identity
(:class:`FileCache`), and on disk in the user cache dir (``tables/``, the
only cache pciname keeps on disk), keyed by the file's identity and the
code's: a fresh ``pciname lookup`` loads one in about a millisecond. A file
changed in place gets a new identity and a new entry (:func:`prune` removes
stale ones); a cache that cannot be written is not written.
"""

from __future__ import annotations

import marshal
import os
import zlib
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from threading import Lock
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from cachetools import LRUCache

from pciname._version import __version__
from pciname.base.files import MAX_PCIIDS_BYTES, read_blob, read_bounded, write_atomically
from pciname.base.paths import cache_dir
from pciname.errors import PciIdsError
from pciname.naming.algorithms import (
    ALL_ALGORITHMS,
    GO_NVLIB,
    NameIndex,
    absent_name,
    check_algorithm,
    file_lines,
    is_indexed_id,
)
from pciname.naming.gotext import scan_lines, valid_text
from pciname.pciids.ids import NVIDIA_VENDOR_ID

if TYPE_CHECKING:
    from pciname.pciids.model import SyntaxIssue

FORMAT = 2
#: The catalog's attributes a table keeps as they are (besides identities, issues, names).
_SAVED = ("sha256", "version", "date", "nvidia_vendor_name", "nvidia_devices", "sources")
_CODE_FILES = (
    "naming/gotext.py",
    "naming/algorithms.py",
    "naming/kata.py",
    "pciids/loader.py",
    "resolution/catalog.py",
)

Identity = tuple[str, int, int, int, int, int]
Reader = Callable[[], bytes]


def file_identity(path: Path) -> Identity:
    """What changes whenever the file's bytes may have changed."""
    real = os.path.realpath(path)
    st = os.stat(real)
    return (real, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


@lru_cache(maxsize=1)
def _code_identity() -> tuple[object, ...]:
    package = Path(__file__).resolve().parents[1]  # pciname/
    stamps = []
    for name in _CODE_FILES:
        try:
            stamps.append(os.stat(package / name).st_mtime_ns)
        except OSError:
            stamps.append(0)
    return (FORMAT, __version__, *stamps)


class Catalog:
    """One pci.ids file, as far as resource names are concerned (a plain
    class, not a dataclass: a full-path lookup builds one at start-up)."""

    __slots__ = (
        "_lines",
        "_lock",
        "_names",
        "_other_names",
        "_reader",
        "date",
        "identity",
        "issues",
        "nvidia_devices",
        "nvidia_vendor_name",
        "path",
        "sha256",
        "sources",
        "version",
    )

    def __init__(
        self,
        path: Path,
        identity: Identity,
        sha256: str,
        version: str | None,
        date: str | None,
        nvidia_vendor_name: str | None,
        nvidia_devices: dict[str, str],
        issues: list[SyntaxIssue] | None = None,
        names: dict[str, dict[str, str]] | None = None,
        reader: Reader | None = None,
        sources: dict[str, dict[str, tuple[int, str, str]]] | None = None,
    ) -> None:
        self.path = path  # the file, or what holds it (a packaged snapshot's archive)
        self.identity = identity
        self.sha256 = sha256
        self.version = version
        self.date = date
        self.nvidia_vendor_name = nvidia_vendor_name
        self.nvidia_devices = nvidia_devices  # device id -> pci.ids device name
        self.issues = issues or []  # malformed lines the lenient load skipped
        self._names = names or {}  # algorithm -> {device id: name}
        self.sources = sources or {}  # algorithm -> NameIndex.foreign_sources(), with its names
        self._lines: dict[str, list[str]] = {}  # "" or GO_NVLIB -> the lines it reads
        self._other_names: dict[str, tuple[str, dict[str, str]]] | None = None
        self._reader = reader
        self._lock = Lock()

    def __repr__(self) -> str:
        return f"Catalog({str(self.path)!r}, version={self.version!r}, sha256={self.sha256[:12]!r})"

    def read(self) -> bytes:
        """The file's bytes (read again on every call)."""
        return self._reader() if self._reader is not None else read_pciids(self.path)

    def lines(self) -> list[str]:
        """The file as the plugin's bufio.Scanner reads it."""
        return self.lines_for("")

    def lines_for(self, algorithm: str) -> list[str]:
        """The file as the algorithm's Go code reads it (:func:`~pciname.naming.algorithms.file_lines`)."""
        reading = GO_NVLIB if algorithm == GO_NVLIB else ""
        if reading not in self._lines:
            self._lines[reading] = file_lines(reading, self.read().decode("utf-8", "surrogateescape"))
        return self._lines[reading]

    def names(self, algorithm: str) -> dict[str, str]:
        """Every name the algorithm yields for a 4-hex-digit id but the absent
        one (:func:`~pciname.naming.algorithms.absent_name`): the KubeVirt
        plugin's non-empty ones; every id go-nvlib's parse holds (``""`` too)."""
        table = self._names.get(algorithm)
        if table is None:
            with self._lock:
                table = self._names.get(algorithm)
                if table is None:
                    index = NameIndex(self.lines_for(algorithm), check_algorithm(algorithm))
                    keep_empty = algorithm == GO_NVLIB
                    table = {i: n for i in index.candidates() if (n := index.name(i)) or keep_empty}
                    self.sources[algorithm] = index.foreign_sources()
                    self._names[algorithm] = table
                    _save(self)
        return table

    def name(self, algorithm: str, device_id: str) -> str:
        """The name the plugin derives for ``device_id`` (``""``: none)."""
        table = self.names(algorithm)
        if is_indexed_id(device_id):
            return table.get(device_id, absent_name(algorithm))
        # Not an id sysfs can produce: ask the reference scan.
        return NameIndex(self.lines_for(algorithm), algorithm).name(device_id)

    def other_names(self, vendor_id: str, device_id: str) -> tuple[str | None, str | None]:
        """pci.ids vendor and device names of any vendor's device (built on first use from a full parse)."""
        table = self._other_names
        if table is None:
            with self._lock:
                table = self._other_names
                if table is None:
                    from pciname.pciids.loader import load_bytes

                    db = load_bytes(self.read())
                    table = {v.id: (v.name, {d.id: d.name for d in v.devices.values()}) for v in db.vendors.values()}
                    self._other_names = table
        vendor_name, devices = table.get(vendor_id, (None, {}))
        return vendor_name, devices.get(device_id)


def _unreadable(path: Path, error: OSError) -> PciIdsError:
    return PciIdsError(f"{path}: cannot read pci.ids file: {error.strerror or error}")


def read_pciids(path: Path) -> bytes:
    """The file's bytes, or PciIdsError saying why it cannot be read (also:
    not a regular file, or over :data:`~pciname.base.files.MAX_PCIIDS_BYTES`)."""
    try:
        return read_bounded(path, MAX_PCIIDS_BYTES)
    except OSError as error:
        raise _unreadable(path, error) from None


def _build(path: Path, identity: Identity, reader: Reader | None = None) -> Catalog:
    import hashlib

    from pciname.pciids.loader import load_bytes

    data = reader() if reader is not None else read_pciids(path)
    db = load_bytes(data)
    vendor = db.vendors.get(NVIDIA_VENDOR_ID)
    devices = {d.id: d.name for d in vendor.devices.values()} if vendor else {}
    catalog = Catalog(
        path=path,
        identity=identity,
        sha256=hashlib.sha256(data).hexdigest(),
        # The header as valid text (undecodable bytes as U+FFFD): it is shown
        # everywhere (profiles, records, gRPC) and never used for naming.
        version=valid_text(db.version),
        date=valid_text(db.date),
        nvidia_vendor_name=vendor.name if vendor else None,
        nvidia_devices=devices,
        issues=list(db.issues),
        reader=reader,
    )
    catalog._lines[""] = scan_lines(data.decode("utf-8", "surrogateescape"))
    return catalog


# -- disk cache ---------------------------------------------------------------
#
# Trust model: a table is only a faster way to its source file's answer. It is
# believed only if the cache dir and tables/ are this user's and writable by
# nobody else unless sticky (paths.untrusted_reason); the table is this user's
# regular file of at most _MAX_TABLE_BYTES; it starts with _MAGIC and a
# matching BLAKE2b digest of the rest; and the payload has the expected shape,
# file identity and code identity. Anything else means "rebuild from the
# source", never an error or a wrong name. Tables are written to a mkstemp file
# (O_EXCL: never through a planted link) and renamed into place.

_MAGIC = b"pciname-table\x00\x02"
_DIGEST_BYTES = 32
_MAX_TABLE_BYTES = 16 << 20  # the largest real table is under 1 MB


def _digest(payload: bytes) -> bytes:
    try:
        from _blake2 import blake2b  # CPython's built-in: no OpenSSL load on the lookup path
    except ImportError:  # pragma: no cover - builds without it
        from hashlib import blake2b
    return blake2b(payload, digest_size=_DIGEST_BYTES).digest()


def _tables_dir() -> Path | None:
    """tables/ of the cache dir, or None when the cache is not to be trusted."""
    from pciname.base.paths import untrusted_reason

    root = cache_dir()
    tables = root / "tables"
    if untrusted_reason(root) or untrusted_reason(tables):
        return None
    return tables


def _cache_file(identity: Identity) -> Path | None:
    tables = _tables_dir()
    if tables is None:
        return None
    key = zlib.crc32(repr((identity, _code_identity())).encode("utf-8", "surrogateescape"))
    return tables / f"{key:08x}.marshal"


def _read_table(path: Path) -> dict[str, Any] | None:
    """The payload of a table file, or None if anything about it is wrong."""
    blob = read_blob(str(path), owned=True, limit=_MAX_TABLE_BYTES)
    if blob is None:
        return None
    head = len(_MAGIC) + _DIGEST_BYTES
    if len(blob) > _MAX_TABLE_BYTES or len(blob) < head or not blob.startswith(_MAGIC):
        return None
    payload = blob[head:]
    if blob[len(_MAGIC) : head] != _digest(payload):
        return None
    try:
        saved = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return saved if isinstance(saved, dict) else None


def _load_saved(path: Path, identity: Identity, reader: Reader | None = None) -> Catalog | None:
    target = _cache_file(identity)
    saved = _read_table(target) if target is not None else None
    if saved is None:
        return None
    try:
        if saved["identity"] != identity or saved["code"] != _code_identity():
            return None
        names = saved["names"]
        if not isinstance(names, dict) or not all(isinstance(t, dict) for t in names.values()):
            return None
        return Catalog(
            path,
            identity,
            **{key: saved[key] for key in _SAVED},
            issues=_issues(saved["issues"]),
            names={a: t for a, t in names.items() if a in ALL_ALGORITHMS},
            reader=reader,
        )
    except (KeyError, TypeError, ValueError):
        return None


def _issues(saved: list[tuple[int, int, str]]) -> list[SyntaxIssue]:
    if not saved:
        return []
    from pciname.pciids.model import SyntaxIssue  # the model costs start-up time: only when needed

    return [SyntaxIssue(*issue) for issue in saved]


def _save(catalog: Catalog) -> None:
    """Write the catalog's table; a cache that cannot (or must not) be
    written costs speed, never correctness."""
    target = _cache_file(catalog.identity)
    if target is None:
        return
    payload = marshal.dumps(
        {
            "identity": catalog.identity,
            "code": _code_identity(),
            **{key: getattr(catalog, key) for key in _SAVED},
            "issues": [(i.line, i.column, i.message) for i in catalog.issues],
            "names": dict(catalog._names),
        }
    )
    try:
        target.parent.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        target.parent.mkdir(mode=0o700, exist_ok=True)
    except OSError:
        return
    if _tables_dir() is None:  # created by someone else in the meantime
        return
    if write_atomically(str(target.parent), str(target), _MAGIC + _digest(payload) + payload, prefix=".table-"):
        prune(target.parent, keep=target)


def prune(tables: Path, keep: Path) -> list[str]:
    """Remove (and name) the tables in ``tables`` of a pci.ids file that is
    gone or not the file it was (a new identity). Tables of files as they
    were are kept, whatever code wrote them (another install may use them),
    and so is anything that is not a regular table file of this user."""
    removed: list[str] = []
    try:
        names = os.listdir(tables)
    except OSError:
        return removed
    for name in names:
        path = tables / name
        if not name.endswith(".marshal") or name.startswith(".") or path == keep:
            continue
        saved = _read_table(path)  # owned regular files only, never through a link
        try:
            identity = saved["identity"] if saved is not None else None
            if not isinstance(identity, tuple) or not isinstance(identity[0], str):
                continue
            source = identity[0]
            if "#" in source and not os.path.lexists(source):
                source = source.rpartition("#")[0]  # a packaged snapshot: "archive#member", the archive's identity
            try:
                stale = tuple(file_identity(Path(source))[1:]) != tuple(identity[1:])
            except FileNotFoundError:
                stale = True
            if stale:
                os.unlink(path)
                removed.append(name)
        except (OSError, TypeError, IndexError, KeyError):
            continue
    return removed


# -- in-process cache ----------------------------------------------------------


T = TypeVar("T")


class FileCache(Generic[T]):
    """Objects built from a file, kept per file identity (a cachetools LRU,
    thread-safe): a changed file gets a new identity and a fresh object."""

    def __init__(self, maxsize: int) -> None:
        self._cache: LRUCache[Identity, T] = LRUCache(maxsize=maxsize)
        self._lock = Lock()

    def get(self, path: Path, build: Callable[[Path, Identity], T], identity: Identity | None = None) -> T:
        """The object for ``path`` (by default under its own identity), built on a miss."""
        if identity is None:
            identity = identity_of(path)
        value = self.peek(identity)
        if value is None:
            value = build(path, identity)
            self.put(identity, value)
        return value

    def peek(self, identity: Identity) -> T | None:
        with self._lock:
            return self._cache.get(identity)

    def put(self, identity: Identity, value: T) -> None:
        with self._lock:
            self._cache[identity] = value

    def clear(self) -> None:
        with self._lock:
            self._cache.clear()


def identity_of(path: Path) -> Identity:
    """:func:`file_identity`, or PciIdsError saying the file cannot be read."""
    try:
        return file_identity(path)
    except OSError as error:
        raise _unreadable(path, error) from None


def _load_or_build(path: Path, identity: Identity, reader: Reader | None = None) -> Catalog:
    catalog = _load_saved(path, identity, reader)
    if catalog is None:
        catalog = _build(path, identity, reader)
        _save(catalog)
    return catalog


catalogs: FileCache[Catalog] = FileCache(maxsize=32)


def catalog_for(path: str | Path, *, identity: Identity | None = None, reader: Reader | None = None) -> Catalog:
    """The catalog of a pci.ids file (cached; rebuilt when the file changes).

    A file that is not on disk as itself (a packaged snapshot inside an
    archive) comes with the ``identity`` it is cached under and a ``reader``
    that returns its bytes; ``path`` then names what holds it.
    """
    return catalogs.get(Path(path), lambda p, i: _load_or_build(p, i, reader), identity)


class _VerifiedPaths:
    """``path -> sha256`` for files whose current identity a cached catalog
    already hashed, so finding a snapshot need not hash it again."""

    def get(self, path: Path) -> str | None:
        try:
            identity = file_identity(path)
        except OSError:
            return None
        catalog = catalogs.peek(identity)
        if catalog is None:
            catalog = _load_saved(path, identity)
            if catalog is not None:
                catalogs.put(identity, catalog)
        return catalog.sha256 if catalog else None


def verified_paths() -> _VerifiedPaths:
    return _VerifiedPaths()
