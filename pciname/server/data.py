"""The data a server answers from, built whole and swapped whole.

A :class:`DataSet` is one generation of the server's data: a pinned
resolver whose profiles' views are built on first use, once each
(:class:`~pciname.server.tables.LazyResolver`), the packaged answers for
what they hold (an NVIDIA device of a packaged profile, its ListDevices),
(strictly: a pci.ids file with a malformed line fails the build, and so does
a ``--pciids`` file that is no pci.ids file, see :func:`check_served_file`),
which profiles are served and which are missing their snapshot, and caches
of encoded answers, bounded in bytes (:data:`CACHE_MAX_BYTES`). The server
builds a new one beside the old on a reload and replaces a single
reference, so a request in flight finishes on the generation it started with
and nothing is ever half-loaded.

:func:`watch_signature` is what the reload watcher compares between polls:
the identity of ``data/pci.ids`` and of a ``--pciids`` file, and the
listing of every snapshot directory.
"""

from __future__ import annotations

import hashlib
import os
import sys
import time
from collections import deque
from dataclasses import dataclass, field, replace
from pathlib import Path
from threading import Lock

from cachetools import LRUCache

from pciname.api import Resolver, profiles as profile_infos
from pciname.base.files import MAX_PCIIDS_BYTES, read_bounded
from pciname.base.paths import embedded_pciids_path, snapshot_search_dirs
from pciname.capabilities.limits import NAME_CHARS as MAX_NAME_CHARS, PROFILE_CHARS as MAX_PROFILE_CHARS
from pciname.errors import PciIdsError, SnapshotMissingError
from pciname.naming.gotext import valid_text
from pciname.naming.profiles import (
    CUSTOM_ALGORITHM,
    DEFAULT_PROFILE,
    PREVIEW,
    Profile,
    Registry,
    canonical_name,
    custom_profile,
    load_registry,
    with_aliases,
)
from pciname.pciids.ids import NVIDIA_VENDOR_ID, device_id
from pciname.pciids.loader import load_bytes
from pciname.resolution import answers
from pciname.resolution.catalog import Catalog, verified_paths
from pciname.resolution.resolver import as_profile
from pciname.resolution.results import ProfileInfo, Resolution
from pciname.resolution.snapshots import known_snapshots, locate, missing_message
from pciname.server.rpc.wire import (
    check_length,
    framed,
    profiles_response,
    resolution_message,
)
from pciname.server.tables import LazyResolver

CUSTOM = "custom"

# -- cache bounds -----------------------------------------------------------------
# All the caches of one generation together hold at most CACHE_MAX_BYTES
# (keys and values, plus a fixed estimate per entry for the objects around
# them): the spellings of profile names get _SPELLINGS_MAX_BYTES of it, the
# encoded answers the rest. An encoded Resolution is about 0.5 KB, so the
# encoded answers keep about 80,000 of them; past that the oldest go first.
MIB = 1 << 20
CACHE_MAX_BYTES = 64 * MIB
_SPELLINGS_MAX_BYTES = 1 * MIB
ENCODED_CACHE_MAX_BYTES = CACHE_MAX_BYTES - _SPELLINGS_MAX_BYTES
# Keys are request text as sent; a longer one is answered but never cached
# (the service refuses over-long fields before this, but the caches do not
# rely on it).
MAX_CACHED_KEY_CHARS = 128
# Per entry beyond its key and value: str/bytes/tuple headers, a dict slot,
# the eviction queue's record.
_ENTRY_OVERHEAD = 256


class EncodedAnswers:
    """Encoded answers of one generation: profile name -> device text as
    sent -> (element of a repeated Resolution field, length of its
    tag+length header), at most ``maxsize`` bytes in all (``currsize``).

    Reads are plain ``dict.get`` on :meth:`table`, without a lock: that is
    the hot path (a ResolveBatch of 10,000 cached devices is 10,000 lookups).
    :meth:`put` takes a lock, counts each entry's bytes and evicts the
    oldest entries (first in, first out) until the new one fits. Not a
    cachetools cache: those must not be read while another thread inserts,
    and a locked cachetools lookup costs 5-10 times a ``dict.get``.
    """

    def __init__(self, maxsize: int = ENCODED_CACHE_MAX_BYTES) -> None:
        self.maxsize = maxsize
        self.currsize = 0
        self._tables: dict[str, dict[str, tuple[bytes, int]]] = {}
        self._order: deque[tuple[dict[str, tuple[bytes, int]], str, int]] = deque()
        self._lock = Lock()

    def __len__(self) -> int:
        return len(self._order)

    def keys(self) -> list[str]:
        """Every cached device text, of all profiles, oldest first."""
        with self._lock:
            return [key for _, key, _ in self._order]

    def table(self, name: str) -> dict[str, tuple[bytes, int]]:
        """The profile's answers, for reading (``.get(device)``)."""
        table = self._tables.get(name)
        if table is None:
            with self._lock:
                table = self._tables.setdefault(name, {})
        return table

    @staticmethod
    def size(key: str, entry: tuple[bytes, int]) -> int:
        return sys.getsizeof(key) + len(entry[0]) + _ENTRY_OVERHEAD

    def put(self, name: str, key: str, entry: tuple[bytes, int]) -> bool:
        """Keep ``entry``; False when it is not kept (key over
        :data:`MAX_CACHED_KEY_CHARS`, or larger than the whole cache)."""
        if len(key) > MAX_CACHED_KEY_CHARS:
            return False
        size = self.size(key, entry)
        if size > self.maxsize:
            return False
        table = self.table(name)
        with self._lock:
            if key in table:
                return True
            while self.currsize + size > self.maxsize:
                old_table, old_key, old_size = self._order.popleft()
                old_table.pop(old_key, None)
                self.currsize -= old_size
            table[key] = entry
            self._order.append((table, key, size))
            self.currsize += size
        return True


def _spelling_size(value: tuple[str, ServedProfile]) -> int:
    return sys.getsizeof(value[0]) + _ENTRY_OVERHEAD


@dataclass
class ServedProfile:
    """How the resolver knows a served profile: its canonical name, or the
    Profile object of the custom one."""

    name: str
    key: str | Profile


@dataclass
class DataSet:
    generation: int
    resolver: Resolver
    served: dict[str, ServedProfile]  # canonical name -> profile
    missing: dict[str, Profile]  # known profiles whose snapshot is not installed
    default: ServedProfile
    custom: ServedProfile | None
    # ListProfiles' entries, made on its first call: (custom's ProfileInfo, algorithm)
    custom_info: ProfileInfo | None
    files: dict[str, str]  # pci.ids path -> sha256, of the files in use
    loaded_at: float
    load_seconds: float
    # served profile name -> the sha256 of its pci.ids file
    sha256: dict[str, str] = field(default_factory=dict)
    # the packaged answers (pciname/packaged/) hold this generation's answers
    # (they were made from the data/pci.ids it has): answered from them
    packaged: bool = False
    # profile spelling as sent -> (spelling, served profile); bytes-bounded
    _spellings: LRUCache[str, tuple[str, ServedProfile]] = field(
        default_factory=lambda: LRUCache(maxsize=_SPELLINGS_MAX_BYTES, getsizeof=_spelling_size)
    )
    _spellings_lock: Lock = field(default_factory=Lock)
    encoded: EncodedAnswers = field(default_factory=EncodedAnswers)
    _profiles_message: bytes | None = None
    # pci.ids sha256 -> vendor id -> its device ids (parsed once per generation
    # and file; profiles of one file share it: about 1.5 MB per file)
    _vendor_ids: dict[str, dict[str, tuple[str, ...]]] = field(default_factory=dict)
    _vendor_lock: Lock = field(default_factory=Lock)

    # -- profiles -------------------------------------------------------------

    def profile(self, spelling: str) -> ServedProfile:
        """The served profile a request's ``profile`` means ("" = default).

        UnknownProfileError for names pciname does not know (and ``custom``
        without --pciids), SnapshotMissingError naming the file for known
        profiles whose pci.ids is not installed on this server.
        """
        with self._spellings_lock:
            cached = self._spellings.get(spelling)
        if cached is not None:
            return cached[1]
        text = spelling.strip()
        if not text:
            found = self.default
        elif text.lower() == CUSTOM and self.custom is not None:
            found = self.custom
        else:
            name = canonical_name(text)  # UnknownProfileError
            served = self.served.get(name)
            if served is None:
                profile = self.missing[name]
                snap = profile.snapshot
                assert snap is not None
                raise SnapshotMissingError(
                    _on_this_server(missing_message(snap, name)),
                    snapshot=snap.key,
                    sha256=snap.sha256,
                    url=snap.url,
                )
            found = served
        if len(spelling) <= MAX_CACHED_KEY_CHARS:
            with self._spellings_lock:
                self._spellings[spelling] = (spelling, found)
        return found

    # -- encoded answers ------------------------------------------------------

    def encoded_table(self, profile: ServedProfile) -> dict[str, tuple[bytes, int]]:
        """Cached answers of ``profile`` by device text as sent (read-only;
        none for a request's own Kata aliases)."""
        return {} if is_aliased(profile) else self.encoded.table(profile.name)

    def encode(self, profile: ServedProfile, device: str) -> tuple[bytes, int]:
        """Resolve ``device`` and keep its encoding (InvalidDeviceError if
        malformed); kept only within the byte bound and for keys of at most
        :data:`MAX_CACHED_KEY_CHARS` characters, and never for a request's
        own Kata aliases (:func:`is_aliased`). An NVIDIA device of a
        packaged profile is answered from its packaged record (the very
        record the resolver would build), without building the profile."""
        message = resolution_message(self._resolution(profile, device)).SerializeToString()
        element = framed(message)
        entry = (element, len(element) - len(message))
        if not is_aliased(profile):
            self.encoded.put(profile.name, device, entry)
        return entry

    def _resolution(self, profile: ServedProfile, device: str) -> Resolution:
        table = self.packaged_table(profile)
        found = device_id(device) if table is not None else None
        if table is not None and found is not None and found[0] == NVIDIA_VENDOR_ID:
            record = answers.record(table, found[1])
            if record is not None:
                return Resolution.from_record(record)
        (resolution,) = self.resolver.resolve_many([device], profile.key)
        return resolution

    def packaged_table(self, profile: ServedProfile) -> answers.Table | None:
        """The packaged answers of ``profile``, when they are this
        generation's: made from the same data/pci.ids (:attr:`packaged`)
        and the same pci.ids file of the profile (by sha256)."""
        key = profile.key
        if not self.packaged or not isinstance(key, str):
            return None
        table = answers.table(key)
        if table is None:
            return None
        header = table.header
        same = header["profile"] == key and header["pci_ids_sha256"] == self.sha256.get(key)
        return table if same and header["pci_ids_version"] is not None else None

    def profiles_message(self) -> bytes:
        """ListProfiles' answer, encoded once per generation."""
        if self._profiles_message is None:
            with self._vendor_lock:
                if self._profiles_message is None:
                    response = profiles_response(self.infos(), self.default.name, self.generation)
                    self._profiles_message = response.SerializeToString()
        return self._profiles_message

    def infos(self) -> list[ProfileInfo]:
        """What ListProfiles says of every profile (reads the preview's
        pci.ids header: made on first use)."""
        infos = [replace(info, installed=info.name in self.served) for info in profile_infos()]
        preview = [i for i in infos if i.name == PREVIEW and i.pci_ids_sha256 not in (None, self.sha256.get(PREVIEW))]
        if preview:
            path = embedded_pciids_path()
            raise PciIdsError(
                f"{valid_text(str(path))}: changed since data generation {self.generation} was loaded; "
                "the server loads the new file when it has settled (or on SIGHUP)"
            )
        return infos + ([self.custom_info] if self.custom_info is not None else [])

    def catalog_path(self, profile: ServedProfile) -> Path:
        return self.resolver.view(profile.key).catalog.path

    def nvidia_devices(self, profile: ServedProfile) -> list[Resolution]:
        """A resolution of every NVIDIA device id the profile knows of, in id
        order (from the packaged answers when they are this generation's)."""
        table = self.packaged_table(profile)
        if table is None:
            return self.resolver.devices(profile.key)
        records = (answers.record(table, device) for device in table.devices())
        return [Resolution.from_record(record) for record in records]  # type: ignore[arg-type]

    def vendor_device_ids(self, profile: ServedProfile) -> dict[str, tuple[str, ...]]:
        """vendor id -> the device ids the profile's pci.ids lists under it.

        The file is parsed once per generation (on first use: only
        ListDevices of another vendor needs it; profiles with the same file
        share it), from the bytes the catalog reads (a packaged snapshot's
        verified member, a file's bounded read), which must still be the
        bytes this generation loaded.
        """
        catalog = self.resolver.view(profile.key).catalog
        table = self._vendor_ids.get(catalog.sha256)
        if table is not None:
            return table
        with self._vendor_lock:
            table = self._vendor_ids.get(catalog.sha256)
            if table is None:
                table = _device_ids_by_vendor(catalog, self.generation)
                self._vendor_ids[catalog.sha256] = table
        return table

    def vendor_devices(self, profile: ServedProfile, vendor: str) -> list[Resolution]:
        """Every device pci.ids lists under ``vendor`` (not NVIDIA)."""
        ids = self.vendor_device_ids(profile).get(vendor, ())
        return self.resolver.resolve_many([f"{vendor}:{d}" for d in ids], profile.key)


def served_profile(data: DataSet, spelling: str, what: str = "profile") -> ServedProfile:
    """The served profile a request's profile field (named ``what``) names;
    its length is checked first (INVALID_ARGUMENT, before any lookup)."""
    return data.profile(check_length(spelling, what, MAX_PROFILE_CHARS))


def request_aliases(request: object) -> tuple[str | None, str | None]:
    """A request's ``alias`` and ``nvswitch_alias`` (None: unset), their
    lengths checked (INVALID_ARGUMENT)."""
    found: list[str | None] = []
    for name in ("alias", "nvswitch_alias"):
        given = getattr(request, name) if request.HasField(name) else None  # type: ignore[attr-defined]
        found.append(None if given is None else check_length(given, name, MAX_NAME_CHARS))
    return found[0], found[1]


def with_request_aliases(
    data: DataSet, profile: ServedProfile, alias: str | None, nvswitch: str | None
) -> ServedProfile:
    """``profile`` run with a request's Kata aliases (itself when both are
    unset); PcinameError (INVALID_ARGUMENT) for a profile that is not Kata's.
    The result is never cached: :func:`is_aliased` tells."""
    if alias is None and nvswitch is None:
        return profile
    base = as_profile(profile.key)  # no view needed: the profile alone
    return ServedProfile(profile.name, with_aliases(base, alias, nvswitch))


def is_aliased(profile: ServedProfile) -> bool:
    key = profile.key
    return not isinstance(key, str) and (key.alias is not None or key.nvswitch_alias is not None)


def _device_ids_by_vendor(catalog: Catalog, generation: int) -> dict[str, tuple[str, ...]]:
    data = catalog.read()  # PciIdsError if it cannot be read (also: a FIFO, too large)
    if hashlib.sha256(data).hexdigest() != catalog.sha256:
        raise PciIdsError(
            f"{valid_text(str(catalog.path))}: changed since data generation {generation} was loaded; "
            "the server loads the new file when it has settled (or on SIGHUP)"
        )
    db = load_bytes(data)
    return {v.id: tuple(sorted(v.devices)) for v in db.vendors.values()}


def _on_this_server(message: str) -> str:
    return message.replace("which is not installed;", "which is not installed on this server;", 1)


def build(
    generation: int,
    *,
    default_profile: str = DEFAULT_PROFILE,
    pciids: str | Path | None = None,
    algorithm: str = CUSTOM_ALGORITHM,
) -> DataSet:
    """A new generation over every installed profile (and the ``--pciids``
    file). What the package's answers hold (``pciname/packaged/``) is
    answered from them; a profile's view (catalog, universe, index) is built
    on first use (:class:`~pciname.server.tables.LazyResolver`), except a
    ``--pciids`` file's and, when it is not the packaged one, data/pci.ids's,
    which are loaded strictly now. Raises PciIdsError (PciIdsSyntaxError for
    a malformed line; a ``--pciids`` file that :func:`check_served_file`
    refuses) or SnapshotMissingError when a file vanished while loading; the
    caller keeps its old data then."""
    started = time.monotonic()
    registry = load_registry()
    served, missing, files, sha256 = _installed(registry)
    embedded = _file_sha256(embedded_pciids_path())
    resolver = LazyResolver(generation, embedded)
    packaged = _packaged_answers_match(embedded)
    if not packaged:  # another data/pci.ids than the package's: checked now
        resolver.preload([name for name, p in registry.profiles.items() if name in served and p.snapshot is None])
    custom = _load_custom(resolver, registry, pciids, algorithm) if pciids is not None else None
    custom_info = None
    if custom is not None:
        catalog = resolver.view(custom.key).catalog
        files[str(catalog.path)] = catalog.sha256
        custom_info = _custom_info(catalog, algorithm)
    return DataSet(
        generation=generation,
        resolver=resolver,
        served=served,
        missing=missing,
        default=_default(default_profile, served, missing, custom),
        custom=custom,
        custom_info=custom_info,
        files=files,
        loaded_at=time.time(),
        load_seconds=time.monotonic() - started,
        sha256=sha256,
        packaged=packaged,
    )


def _file_sha256(path: Path) -> str:
    try:
        return hashlib.sha256(read_bounded(path, MAX_PCIIDS_BYTES)).hexdigest()
    except OSError as error:
        raise PciIdsError(f"{valid_text(str(path))}: cannot read: {error.strerror or error}") from None


def _packaged_answers_match(embedded_sha256: str) -> bool:
    """The packaged answers are there, of this version, and were made from
    this data/pci.ids (the preview's file, every profile's universe)."""
    index = answers.index()
    preview = index["profiles"].get("preview") if index is not None else None
    return preview is not None and preview["header"]["pci_ids_sha256"] == embedded_sha256


def _installed(
    registry: Registry,
) -> tuple[dict[str, ServedProfile], dict[str, Profile], dict[str, str], dict[str, str]]:
    """The profiles whose pci.ids is installed (served), the others
    (missing), the files served (path -> sha256) and each served profile's
    file's sha256; nothing is parsed (a snapshot is known by its sha256)."""
    verified = verified_paths()
    served: dict[str, ServedProfile] = {}
    missing: dict[str, Profile] = {}
    files: dict[str, str] = {}
    sha256: dict[str, str] = {}
    for profile in registry.profiles.values():
        if profile.snapshot is None:
            path = str(profile.path)
            files[path] = files.get(path) or _file_sha256(Path(path))
            sha256[profile.name] = files[path]
        elif (location := locate(profile.snapshot, verified)) is not None:
            files[str(location.path)] = sha256[profile.name] = profile.snapshot.sha256
        else:
            missing[profile.name] = profile
            continue
        served[profile.name] = ServedProfile(profile.name, profile.name)
    return served, missing, files, sha256


def _load_custom(resolver: Resolver, registry: Registry, pciids: str | Path, algorithm: str) -> ServedProfile:
    """The ``--pciids`` file loaded into ``resolver`` as profile ``custom``,
    once it has settled and if it did not change while it was read."""
    path = Path(pciids).absolute()
    settled = wait_until_settled(path)
    profile = custom_profile(path, algorithm)._replace(name=CUSTOM)
    resolver.preload([profile], strict=True)
    known = {p.snapshot.sha256 for p in registry.profiles.values() if p.snapshot is not None}
    check_served_file(resolver.view(profile).catalog, known)
    if _file_state(path) != settled:
        raise PciIdsError(f"{valid_text(str(path))}: changed while it was loaded; not loaded. {RENAME_INTO_PLACE}")
    return ServedProfile(CUSTOM, profile)


def _custom_info(catalog: Catalog, algorithm: str) -> ProfileInfo:
    """What ListProfiles says of the ``--pciids`` file's profile."""
    return ProfileInfo(
        name=CUSTOM,
        kind="custom",
        released=None,
        algorithm=algorithm,
        plugin_release=None,
        pci_ids_version=valid_text(catalog.version),
        pci_ids_sha256=catalog.sha256,
        installed=True,
        path=valid_text(str(catalog.path)),
        aliases=(),
        note=f"{algorithm} over {valid_text(str(catalog.path))} (--pciids)",
    )


def _default(
    default_profile: str, served: dict[str, ServedProfile], missing: dict[str, Profile], custom: ServedProfile | None
) -> ServedProfile:
    """The profile of requests that name none (``--default-profile``)."""
    if default_profile.strip().lower() == CUSTOM:
        if custom is None:
            raise PciIdsError("--default-profile custom needs --pciids FILE")
        return custom
    name = canonical_name(default_profile)
    if name not in served:
        snap = missing[name].snapshot
        assert snap is not None
        raise SnapshotMissingError(
            "--default-profile: " + missing_message(snap, name), snapshot=snap.key, sha256=snap.sha256, url=snap.url
        )
    return served[name]


def check_served_file(catalog: Catalog, known_sha256: set[str] | frozenset[str] = frozenset()) -> None:
    """Refuse a ``--pciids`` file that is no pci.ids file for NVIDIA names
    (PciIdsError), as an empty or truncated file would otherwise make every
    name ``nvidia.com/<device id>``:

    * it must have the pci.ids header: a comment line ``# Version: V`` (V not
      empty; blanks around ``#`` and after the colon allowed) among the
      comment and blank lines before the first entry, i.e. what
      ``pciname check`` reports as the version. The plugin images' files
      that lack one (2019-08-14, 2021-12-02) are accepted by sha256
      (``known_sha256``);
    * it must have a vendor section for NVIDIA: a line ``10de  <name>``;
    * its last line must be complete (the file ends with a newline), or it
      may be a file caught mid-write (a name cut short is a wrong name).
      Checked on the bytes the catalog was made of (read again, compared by
      sha256: a file that changed meanwhile is refused too).
    """
    where = valid_text(str(catalog.path))
    data = catalog.read()
    if hashlib.sha256(data).hexdigest() != catalog.sha256:
        raise PciIdsError(f"{where}: changed while it was loaded; not loaded. {RENAME_INTO_PLACE}")
    if not catalog.version and catalog.sha256 not in known_sha256:
        raise PciIdsError(
            f"{where}: not a pci.ids file: no header (a '# Version: ...' comment line before the first entry)"
        )
    if catalog.nvidia_vendor_name is None:
        raise PciIdsError(
            f"{where}: no NVIDIA vendor section (a line '10de  NVIDIA Corporation'); "
            "every device would be named by its id"
        )
    if data and not data.endswith(b"\n") and catalog.sha256 not in known_sha256:
        raise PciIdsError(
            f"{where}: the last line is incomplete (no newline at the end of the file): a file caught "
            f"mid-write? {RENAME_INTO_PLACE}"
        )


# -- a file that has stopped changing --------------------------------------------

#: How long a ``--pciids`` file must have stayed unchanged before it is
#: loaded (at start-up, on SIGHUP and on a change the watcher saw).
SETTLE_SECONDS = 0.5

#: What writers of a ``--pciids`` file should do (in errors, ``--help``, README).
RENAME_INTO_PLACE = "Write the new file beside it and rename it into place (mv), so it changes at once."


def wait_until_settled(path: Path, settle: float | None = None) -> Signature:
    """The state of ``path`` once it has stayed unchanged (size, mtime, ctime,
    inode) for ``settle`` seconds (default :data:`SETTLE_SECONDS`): waits
    only while its last write (mtime) is younger than that. PciIdsError if it
    changed meanwhile (a writer is still at work) or cannot be read."""
    settle = SETTLE_SECONDS if settle is None else settle
    before = _file_state(path)
    try:
        st = os.stat(path)
    except OSError as error:
        raise PciIdsError(f"{valid_text(str(path))}: cannot read: {error.strerror or error}") from None
    age = time.time_ns() - st.st_mtime_ns  # writes set it; a rename into place keeps it
    if age < settle * 1e9:
        time.sleep(min(settle, (settle * 1e9 - max(age, 0)) / 1e9))
        if _file_state(path) != before:
            raise PciIdsError(
                f"{valid_text(str(path))}: still being written (it changed within {settle:g} s); not loaded. "
                f"{RENAME_INTO_PLACE}"
            )
    return before


# -- what the watcher compares ------------------------------------------------


Signature = tuple[object, ...]


def _file_state(path: Path) -> Signature:
    try:
        st = os.stat(path)
    except OSError as error:
        return (str(path), "missing", error.errno)
    return (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


# The last full listing of each snapshot directory, by the directory's own
# (inode, mtime, ctime): while those stay, a poll re-stats only the entries
# that may be snapshots (a likely name, or a snapshot's size), not all of a
# directory of 100,000 files (which cost an idle server 40% of a core). The
# other entries are summed up by a number that changes when they do.
_Listing = dict[str, tuple[int, int, int, int]]
_LISTINGS: dict[str, tuple[tuple[int, int, int], _Listing, int, frozenset[str]]] = {}
_LISTINGS_LOCK = Lock()
_GENERATIONS = iter(range(1, 2**62))


def _snapshot_hints() -> tuple[frozenset[str], frozenset[int]]:
    """The names a snapshot file is likely to have, and the sizes it can have."""
    known = known_snapshots()
    names = frozenset(n for s in known for n in (f"{s.sha256}.ids", s.sha256, s.filename))
    return names, frozenset(s.size for s in known)


def _entry_state(path: str) -> tuple[int, int, int, int] | None:
    try:
        st = os.stat(path)  # follows symlinks: a ConfigMap's ..data swap shows
    except OSError:
        return None
    if not os.path.isfile(path):
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _dir_state(directory: Path) -> Signature:
    """The snapshot-relevant state of ``directory``: every visible regular
    file's (name, inode, size, mtime, ctime). A file added, removed or
    renamed into place changes the directory, which is then listed again;
    otherwise only files that may be snapshots (a likely name, a snapshot's
    size, a symlink) are stat'ed again: write a file elsewhere and rename it
    into place, as ``snapshots import`` does (SIGHUP reloads in any case)."""
    key = str(directory)
    try:
        st = os.stat(directory)
    except OSError as error:
        return (key, "missing", error.errno)
    stamp = (st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    with _LISTINGS_LOCK:
        cached = _LISTINGS.get(key)
    if cached is not None and cached[0] == stamp:
        _, _, generation, watched = cached
    else:
        try:
            entries = list(os.scandir(directory))
        except OSError as error:
            return (key, "missing", error.errno)
        names, sizes = _snapshot_hints()
        others: _Listing = {}
        watched_names = set()
        for entry in entries:
            if entry.name.startswith("."):  # fetch/import temporaries, ConfigMap internals
                continue
            try:
                est = entry.stat()  # follows symlinks
            except OSError:
                continue
            if not entry.is_file():
                continue
            if entry.name in names or est.st_size in sizes or entry.is_symlink():
                watched_names.add(entry.name)
            else:
                others[entry.name] = (est.st_ino, est.st_size, est.st_mtime_ns, est.st_ctime_ns)
        watched = frozenset(watched_names)
        generation = cached[2] if cached is not None and cached[1] == others else next(_GENERATIONS)
        with _LISTINGS_LOCK:
            _LISTINGS[key] = (stamp, others, generation, watched)
    states = []
    for name in sorted(watched):
        state = _entry_state(os.path.join(directory, name))
        if state is not None:
            states.append((name, *state))
    return (key, generation, tuple(states))


def watched_files(pciids: str | Path | None = None) -> list[Path]:
    files = [embedded_pciids_path()]
    if pciids is not None:
        files.append(Path(pciids).absolute())
    return files


def watch_signature(pciids: str | Path | None = None) -> Signature:
    """Changes whenever a file the server's data comes from may have changed."""
    return (
        tuple(_file_state(path) for path in watched_files(pciids)),
        tuple(_dir_state(directory) for directory in snapshot_search_dirs()),
    )


__all__ = [
    "CACHE_MAX_BYTES",
    "CUSTOM",
    "MAX_CACHED_KEY_CHARS",
    "RENAME_INTO_PLACE",
    "SETTLE_SECONDS",
    "DataSet",
    "EncodedAnswers",
    "ServedProfile",
    "build",
    "check_served_file",
    "served_profile",
    "wait_until_settled",
    "watch_signature",
]
