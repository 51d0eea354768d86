"""Answer tables: a profile's answers for every NVIDIA device id it knows,
read one small file at a time, importing almost nothing.

An answer table holds, for every NVIDIA device id a profile is asked about,
the fields of its record (:meth:`pciname.resolver.ProfileView.record`) that
differ between devices; the fields every record of the profile shares (the
*header*) and those derived from the resource name (``env_var``,
``socket_path``) are not repeated. Its layout: :data:`MAGIC`, a BLAKE2b
digest of the index, the index's length, the index (marshal: ``fields``,
``order``, the ids, each row's end and a BLAKE2b digest of each row, and
the *column*: what a large ``-o name`` lookup prints of each row, in id
order), then the rows (marshal each). A lookup digests the index and the
rows it reads, not the whole table; a large one reads the column instead
of the rows (:func:`column_answers`), and :func:`encode` checks the column
against the records as it checks the rows.

Two kinds exist:

* *packaged* tables (``data/answers/``, installed beside the code and
  trusted like it): one per distinct set of rows, written by
  ``python -m pciname.packaged_answers`` from the packaged pci.ids files and
  profiles, listed in ``data/answers/index`` with every profile spelling
  they answer and each profile's header; the resource names their columns
  index are in ``data/answers/resources`` (read by large lookups only).
  A test regenerates them and
  compares bytes, so they cannot go stale unnoticed. Anything wrong with
  one (digest, shape, another pciname version) and it is not believed: the
  full path answers.
* *cached* tables in the user cache dir, for what the package does not
  answer (:mod:`pciname.cli.fast` keeps them, with their own trust rules).

This module imports only ``os`` and ``marshal`` (and ``_blake2``
to check a table), so that both ``pciname lookup`` and
``pciname.resolve()`` can answer from a table before typing, pathlib or the
catalog are imported. No ``from __future__ import annotations`` (importing
``__future__`` costs start-up time).
"""

import marshal
import os

from ._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

MAGIC = b"pciname-answers\x00\x04"
INDEX_MAGIC = b"pciname-answer-index\x00\x01"
POOL_MAGIC = b"pciname-answer-strings\x00\x04"
RESOURCES_MAGIC = b"pciname-answer-resources\x00\x01"
FORMAT = 3
DIGEST_BYTES = 32
ROW_DIGEST_BYTES = 16
MAX_ANSWERS_BYTES = 4 << 20  # a real table is well under 1 MB
#: pciname.naming.profiles.DEFAULT_PROFILE (profiles imports re and
#: pathlib); a test keeps them equal.
DEFAULT_PROFILE = "latest"
NVIDIA = "10de"
#: The record fields every record of a profile shares: the table's header.
SHARED = ("profile", "algorithm", "plugin_release", "vendor_name", "pci_ids_version", "pci_ids_sha256")
#: The record fields derived from others (see :func:`record`).
DERIVED = ("device", "env_var", "socket_path")
#: Where the packaged tables are, relative to the data dir.
PACKAGED_DIR = "answers"
INDEX_NAME = "index"
POOL_NAME = "strings"  # the pool of names (device, derived, resource)
MESSAGES_NAME = "messages"  # the pool of warning messages
RESOURCES_NAME = "resources"  # the resource names of the columns (see packaged_resources)
_POOL_DIGEST_BYTES = 8
_POOL_HEAD = len(POOL_MAGIC) + 4  # then the digest of the rest
_SEPARATOR = "\x00"  # between pooled strings (none holds it)
_HEX = frozenset("0123456789abcdefABCDEF")
_LOWER_DIGITS = "0123456789abcdef"


def package_dir() -> str:
    return os.path.dirname(os.path.realpath(__file__))


def data_dir(package: str) -> str:
    """:func:`pciname.paths.data_dir`, without pathlib."""
    installed = os.path.join(package, "data")
    if os.path.isfile(os.path.join(installed, "pci.ids")):
        return installed
    return os.path.join(os.path.dirname(package), "data")


_packaged_dir: "list[str]" = []


def packaged_dir() -> str:
    """Where the packaged tables are (``data/answers``)."""
    if not _packaged_dir:
        _packaged_dir.append(os.path.join(data_dir(package_dir()), PACKAGED_DIR))
    return _packaged_dir[0]


_blake2b: "Any" = None


def digest(payload: bytes, size: int = DIGEST_BYTES) -> bytes:
    global _blake2b
    if _blake2b is None:
        try:
            from _blake2 import blake2b  # CPython's built-in: no OpenSSL load on the lookup path
        except ImportError:  # pragma: no cover - builds without it
            from hashlib import blake2b
        _blake2b = blake2b
    return _blake2b(payload, digest_size=size).digest()  # type: ignore[no-any-return]


# -- device ids ---------------------------------------------------------------


def hex4(text: str) -> str | None:
    if text[:2] in ("0x", "0X"):
        text = text[2:]
    if len(text) == 4 and _HEX.issuperset(text):
        return text.lower()
    return None


def device_id(token: str) -> tuple[str, str] | None:
    """``VENDOR:DEVICE`` or a bare ``DEVICE`` (vendor 10de) as
    :func:`pciname.pciids.ids.parse_device_id` reads it (without surrounding
    white space), else None."""
    vendor, sep, device = token.partition(":")
    if not sep:
        vendor, device = NVIDIA, vendor
    v, d = hex4(vendor), hex4(device)
    if v is None or d is None:
        return None
    return v, d


# -- reading ------------------------------------------------------------------


def table_name(blob: bytes) -> str:
    """The name of a packaged table file: its contents' digest."""
    return digest(blob, 8).hex() + ".answers"


def read_blob(path: str, *, owned: bool, limit: int = MAX_ANSWERS_BYTES) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes (belonging to
    this user if ``owned``), opened without following a link or blocking on
    a FIFO; None if anything about it is wrong. The catalog reads its
    tables with it too."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        import stat

        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (owned and st.st_uid != os.geteuid()) or st.st_size > limit:
            return None
        blob = os.read(fd, st.st_size + 1)  # a file that grew since fstat fails the digest
    except OSError:
        return None
    finally:
        os.close(fd)
    return blob if len(blob) <= limit else None


def _payload(blob: bytes, magic: bytes) -> "tuple[dict[str, Any], int] | None":
    """The marshalled dict after ``magic``, its digest and its length, and
    where it ends; None unless all of it is intact."""
    head = len(magic) + DIGEST_BYTES + 4
    if len(blob) < head or not blob.startswith(magic):
        return None
    size = int.from_bytes(blob[head - 4 : head], "little")
    payload = blob[head : head + size]
    if len(payload) != size or blob[len(magic) : head - 4] != digest(payload):
        return None
    try:
        saved = marshal.loads(payload)
    except (EOFError, ValueError, TypeError):
        return None
    return (saved, head + size) if isinstance(saved, dict) else None


def read_table(path: str, *, owned: bool = True, named: bool = False) -> "dict[str, Any] | None":
    """The index of an answer table file with its rows (``rows``), or None
    if anything about it is wrong (the rows are checked as they are read).
    ``named``: the file is named by its digest (:func:`table_name`), which
    must match."""
    blob = read_blob(path, owned=owned)
    if blob is not None and named and table_name(blob) != os.path.basename(path):
        return None
    found = _payload(blob, MAGIC) if blob is not None else None
    if found is None:
        return None
    saved, end = found
    try:
        fields, ids, ends, sums = (saved[k] for k in ("fields", "ids", "ends", "sums"))
        if not (
            isinstance(fields, list)
            and isinstance(saved["order"], list)
            and isinstance(ids, str)
            and isinstance(ends, bytes)
            and isinstance(sums, bytes)
            and len(ids) % 4 == 0
            and len(ends) == len(ids)  # 4 bytes per id of 4 characters
            and all(k in fields for k in ("resource_name", "advertised", "warnings"))
            and isinstance(saved["names"], list)
            and isinstance(saved["advertised"], bytes)
            and isinstance(saved["codes"], list)
            and len(saved["names"]) == len(saved["advertised"]) == len(saved["codes"]) == len(ids) // 4
        ):
            return None
        rows = blob[end:]  # type: ignore[index]
        whole = saved.get("rows_digest")
        if whole is None:  # each row is checked when it is read
            if len(sums) != len(ids) * ROW_DIGEST_BYTES // 4:
                return None
        elif sums or whole != digest(rows):  # the rows are checked now, all at once
            return None
    except (KeyError, TypeError):
        return None
    saved.pop("pool", None)  # set by packaged(), never read from a file
    saved.pop("messages", None)
    saved.pop("resources", None)
    saved.pop("positions", None)
    saved.pop("column_checked", None)
    saved["rows"] = rows
    return saved


def row(table: "dict[str, Any]", device: str, wanted: "tuple[int, ...] | None" = None) -> "tuple[Any, ...] | None":
    """The saved fields of NVIDIA device id ``device`` (each row is
    unmarshalled and checked only when asked for: a lookup pays for the
    devices it names); with ``wanted``, only the fields at these positions
    are read from the pools, the others may hold pool indexes (the
    warnings' codes are always right)."""
    if len(device) != 4:
        return None
    ids, ends = table["ids"], table["ends"]
    positions = table.get("positions")
    if positions is not None:  # many devices: see index_positions
        at = positions.get(device, -1)
    else:
        at = ids.find(device)
        while at != -1 and at % 4:
            at = ids.find(device, at + 1)
    if at == -1:
        return None
    start = int.from_bytes(ends[at - 4 : at], "little") if at else 0
    blob = table["rows"][start : int.from_bytes(ends[at : at + 4], "little")]
    sums = table["sums"]
    k = at // 4 * ROW_DIGEST_BYTES
    if sums and digest(blob, ROW_DIGEST_BYTES) != sums[k : k + ROW_DIGEST_BYTES]:
        return None
    try:
        found = marshal.loads(blob)
    except (EOFError, ValueError, TypeError):
        return None
    if not isinstance(found, tuple) or len(found) != len(table["fields"]):
        return None
    pool = table.get("pool")
    if pool is None:
        return found
    string, message = _getter(pool), _getter(table["messages"])
    try:
        values = list(found)
        for k in range(len(values)) if wanted is None else wanted:
            values[k] = _expand(found[k], string, message)
    except (_Damaged, TypeError, IndexError, ValueError):
        return None
    return tuple(values)


def rows_of(table: "dict[str, Any]", devices: "Iterable[str]", wanted: "tuple[int, ...]") -> "dict[str, Any] | None":
    """:func:`row` of each distinct device (``wanted`` fields), or None if
    one is missing or damaged: the loop of a large lookup, with what every
    row shares looked up once."""
    if "positions" not in table:
        index_positions(table)
    positions, ends, rows, sums = table["positions"], table["ends"], table["rows"], table["sums"]
    width = len(table["fields"])
    pool = table.get("pool")
    string = message = None
    if pool is not None:
        string, message = _getter(pool), _getter(table["messages"])
    found: dict[str, Any] = {}
    loads, from_bytes = marshal.loads, int.from_bytes
    try:
        for device in devices:
            if device in found:
                continue
            at = positions.get(device, -1)
            if at == -1:
                return None
            blob = rows[from_bytes(ends[at - 4 : at], "little") if at else 0 : from_bytes(ends[at : at + 4], "little")]
            if sums:
                k = at // 4 * ROW_DIGEST_BYTES
                if digest(blob, ROW_DIGEST_BYTES) != sums[k : k + ROW_DIGEST_BYTES]:
                    return None
            values = loads(blob)
            if type(values) is not tuple or len(values) != width:
                return None
            if string is not None:
                values = list(values)
                for k in wanted:
                    values[k] = _expand(values[k], string, message)
            found[device] = values
    except (_Damaged, TypeError, IndexError, ValueError, EOFError):
        return None
    return found


def _getter(pool: "Any") -> "Any":
    """How to read string ``i`` of a pool: a list (while writing) or a :class:`_Pool`."""
    if isinstance(pool, list):
        return pool.__getitem__
    return pool.strings.__getitem__ if pool.strings is not None else pool.string


class _Damaged(Exception):
    pass


def _expand(value: "Any", string: "Any", message: "Any") -> "Any":
    """A pooled row's value with each pool index replaced by its string:
    an index (names pool), or the warnings, (code, index in the messages
    pool) each; see _pooled."""
    if type(value) is int:
        return string(value)
    if type(value) is list:
        return [(code, message(at)) for code, at in value]
    return value


def index_positions(table: "dict[str, Any]") -> None:
    """Index the table's ids in a dict: for many lookups, one dict beats a
    scan of the id string per device."""
    every = table["ids"]
    starts = range(0, len(every), 4)
    table["positions"] = dict(zip(map(every.__getitem__, map(slice, starts, range(4, len(every) + 4, 4))), starts))


def device_ids(table: "dict[str, Any]", tokens: "Sequence[str]") -> "list[str] | None":
    """The NVIDIA device id of each token, as :func:`device_id` reads it, or
    None if one is not an NVIDIA device id: the parse of a large lookup. A
    token ``10de:xxxx`` naming one of the table's ids (all lower case) is
    looked up in one dict; any other is parsed."""
    if "positions" not in table:
        index_positions(table)
    positions = table["positions"]
    known: dict[str, str] = {}
    if not table["ids"].strip(_LOWER_DIGITS):  # else an id is not in lower case: parse every token
        known = dict(zip(map((NVIDIA + ":").__add__, positions), positions))
    found: list[Any] = list(map(known.get, tokens))
    if None in found:
        for k, device in enumerate(found):
            if device is None:
                parsed = device_id(tokens[k])
                if parsed is None or parsed[0] != NVIDIA:
                    return None
                found[k] = parsed[1]
    return found


def column_answers(
    table: "dict[str, Any]", devices: "Iterable[str]"
) -> "tuple[list[str | None], bytes, list[tuple[str, ...]]] | None":
    """What a large ``-o name`` lookup prints of each device, read from the
    table's column (a few list indexings a device; no row is read): the
    resource names, the advertised flags (a byte each, 0 or 1) and the
    warning codes; None if a device is not in the table or the column is
    not as :func:`encode` writes it."""
    if "positions" not in table:
        index_positions(table)
    positions, names, advertised, codes = table["positions"], table["names"], table["advertised"], table["codes"]
    pool = table.get("resources")
    if callable(pool):  # packaged: read now
        pool = packaged_resources()
        if pool is None:
            return None
    if not table.get("column_checked"):
        if not _column_intact(table, pool):
            return None
        table["column_checked"] = True
    try:
        rows = [at >> 2 for at in map(positions.__getitem__, devices)]
        found = list(map(names.__getitem__, rows))
        if pool is not None:
            found = [None if name is None else pool[name] for name in found]
        return found, bytes(map(advertised.__getitem__, rows)), list(map(codes.__getitem__, rows))
    except (KeyError, IndexError, TypeError, ValueError, _Damaged):
        return None


def _column_intact(table: "dict[str, Any]", pool: "list[str] | None") -> bool:
    """The column holds what :func:`encode` writes: a name of each row (an
    index in the ``resources`` pool with one, else a string; or None), a
    byte 0 or 1, a tuple of code strings."""
    names, advertised, codes = table["names"], table["advertised"], table["codes"]
    count = len(table["ids"]) // 4
    if not (len(names) == len(advertised) == len(codes) == count) or advertised.translate(None, b"\x00\x01"):
        return False
    try:
        distinct = set(names)
        distinct.discard(None)
        if pool is None:
            if not all(type(name) is str for name in distinct):
                return False
        else:
            size = len(pool)
            if not all(type(name) is int for name in distinct) or (distinct and not 0 <= min(distinct) <= max(distinct) < size):
                return False
        return all(type(c) is tuple and all(type(code) is str for code in c) for c in set(codes))
    except TypeError:  # unhashable
        return False


def load_strings(table: "dict[str, Any]", *, messages: bool) -> None:
    """Read (and check) every pooled name at once, and every message too if
    ``messages``: for many records."""
    for pool in (table.get("pool"), table.get("messages")) if messages else (table.get("pool"),):
        if isinstance(pool, _Pool):
            pool.load_all()


def every_row_intact(table: "dict[str, Any]") -> bool:
    ids = table["ids"]
    return all(row(table, ids[at : at + 4]) is not None for at in range(0, len(ids), 4))


def record(table: "dict[str, Any]", device: str) -> "dict[str, Any] | None":
    """The record of NVIDIA device id ``device`` as the full path builds
    it, or None."""
    found = row(table, device)
    if found is None:
        return None
    values = dict(table["header"])
    values.update(zip(table["fields"], found))
    values["device"] = f"{NVIDIA}:{device}"
    values["warnings"] = [{"code": code, "message": message} for code, message in values["warnings"]]
    resource = values["resource_name"]
    # Derived as pciname.naming.checks does (encode() checks every record).
    if resource is None:
        values["env_var"] = values["socket_path"] = None
    else:
        values["env_var"] = "PCI_RESOURCE_" + resource.upper().replace("/", "_").replace(".", "_")
        values["socket_path"] = f"/var/lib/kubelet/device-plugins/kubevirt-{resource.partition('/')[2]}.sock"
    return {key: values[key] for key in table["order"]}


# -- packaged tables ----------------------------------------------------------

_packaged: "dict[str, Any]" = {}  # what was read from packaged_dir(): "dir", "index", each file


def packaged_index() -> "dict[str, Any] | None":
    """The packaged tables' index, or None (absent, damaged, or written by
    another pciname version)."""
    directory = packaged_dir()
    if _packaged.get("dir") != directory:
        _forget_packaged()
        _packaged["dir"] = directory
    if "index" not in _packaged:
        index = None
        blob = read_blob(os.path.join(directory, INDEX_NAME), owned=False)
        found = _payload(blob, INDEX_MAGIC) if blob is not None else None
        if found is not None:
            saved = found[0]
            if (
                saved.get("format") == FORMAT
                and saved.get("version") == __version__
                and isinstance(saved.get("spellings"), dict)
                and isinstance(saved.get("profiles"), dict)
            ):
                index = saved
        _packaged["index"] = index
    return _packaged["index"]  # type: ignore[no-any-return]


def packaged(spelling: str) -> "dict[str, Any] | None":
    """The packaged answer table of a profile spelling, or None."""
    index = packaged_index()
    if index is None:
        return None
    try:
        entry = index["profiles"][index["spellings"][spelling]]
        header, name = entry["header"], entry["table"]
        if not isinstance(header, dict) or not isinstance(name, str) or os.sep in name or name.startswith("."):
            return None
    except (KeyError, TypeError):
        return None
    table = _packaged.get(name)
    if table is None:
        table = read_table(os.path.join(packaged_dir(), name), owned=False, named=True)
        pool, messages = packaged_pool(POOL_NAME), packaged_pool(MESSAGES_NAME)
        if table is None or pool is None or messages is None:
            return None
        table["pool"], table["messages"], table["resources"] = pool, messages, packaged_resources
        _packaged[name] = table
    return dict(table, header=header)


class _Pool:
    """The packaged strings file, open: :data:`POOL_MAGIC`, the number of
    strings, a BLAKE2b digest of everything after it, the end of each string
    (4 bytes), a BLAKE2b digest of each (8 bytes), then the strings (UTF-8,
    one NUL between two).
    A lookup of a few devices reads only the strings it needs (``pread``),
    each checked against its own digest; a large one reads the whole file
    once (:meth:`load_all`) and checks it at once."""

    __slots__ = ("fd", "count", "size", "ends_at", "sums_at", "strings_at", "memory", "cache", "strings")

    def __init__(self, fd: int, count: int, size: int) -> None:
        self.fd, self.count, self.size = fd, count, size
        self.ends_at = _POOL_HEAD + DIGEST_BYTES
        self.sums_at = self.ends_at + 4 * count
        self.strings_at = self.sums_at + _POOL_DIGEST_BYTES * count
        self.memory: bytes | None = None
        self.cache: dict[int, str] = {}
        self.strings: list[str] | None = None  # all of them, once load_all() checked them

    def load_all(self) -> None:
        """Read and check the whole file once (for many lookups); if it does
        not check, strings are still read and checked one by one."""
        if self.memory is not None:
            return
        try:
            blob = os.pread(self.fd, self.size + 1, 0)
        except OSError:
            return
        if len(blob) != self.size or blob[_POOL_HEAD : self.ends_at] != digest(blob[self.ends_at :]):
            return
        try:  # every string, decoded at once: a large lookup reads most of them
            strings = blob[self.strings_at :].decode("utf-8", "surrogatepass").split(_SEPARATOR)
        except UnicodeDecodeError:
            return
        if len(strings) == self.count:
            self.memory, self.strings = blob, strings

    def string(self, at: int) -> str:
        found = self.cache.get(at)
        if found is not None:
            return found
        if not 0 <= at < self.count:
            raise _Damaged
        if self.strings is not None:  # checked as a whole
            return self.strings[at]
        else:
            try:
                if at:
                    pair = os.pread(self.fd, 8, self.ends_at + 4 * (at - 1))
                    start, end = int.from_bytes(pair[:4], "little") + 1, int.from_bytes(pair[4:], "little")
                else:
                    start, end = 0, int.from_bytes(os.pread(self.fd, 4, self.ends_at), "little")
                if not 0 <= start <= end <= self.size:
                    raise _Damaged
                expected = os.pread(self.fd, _POOL_DIGEST_BYTES, self.sums_at + _POOL_DIGEST_BYTES * at)
                blob = os.pread(self.fd, end - start, self.strings_at + start)
            except OSError:
                raise _Damaged from None
            if len(blob) != end - start or digest(blob, _POOL_DIGEST_BYTES) != expected:
                raise _Damaged
        try:
            found = self.cache[at] = str(blob.decode("utf-8", "surrogatepass"))
        except UnicodeDecodeError:
            raise _Damaged from None
        return found

    def close(self) -> None:
        fd, self.fd = self.fd, -1  # a table still holding this pool reads nothing more
        self.memory, self.cache, self.strings = None, {}, None
        try:
            os.close(fd)
        except OSError:
            pass


def packaged_pool(name: str) -> "_Pool | None":
    """A pool of strings the packaged tables' rows share (an open file), or None."""
    if name not in _packaged:
        pool = None
        flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
        try:
            fd = os.open(os.path.join(packaged_dir(), name), flags)
        except OSError:
            fd = -1
        if fd != -1:
            try:
                import stat

                st = os.fstat(fd)
                head = os.pread(fd, _POOL_HEAD, 0) if stat.S_ISREG(st.st_mode) else b""
                if head.startswith(POOL_MAGIC) and len(head) == _POOL_HEAD:
                    count = int.from_bytes(head[-4:], "little")
                    pool = _Pool(fd, count, st.st_size)
                    if pool.strings_at > st.st_size:
                        pool = None
            except OSError:
                pool = None
            if pool is None:
                os.close(fd)
        _packaged[name] = pool
    return _packaged[name]  # type: ignore[no-any-return]


def packaged_resources() -> "list[str] | None":
    """The resource names the packaged tables' columns index (read, and
    checked, by the first large lookup: :data:`RESOURCES_MAGIC`, a BLAKE2b
    digest of the rest, its length, then ``{"names": NAMES, "count": N}``
    marshalled, the names joined by NULs: see :func:`encode_resources`), or
    None."""
    if RESOURCES_NAME not in _packaged:
        names = None
        blob = read_blob(os.path.join(packaged_dir(), RESOURCES_NAME), owned=False)
        found = _payload(blob, RESOURCES_MAGIC) if blob is not None else None
        if found is not None:
            joined, count = found[0].get("names"), found[0].get("count")
            if type(joined) is str and (split := joined.split(_SEPARATOR)) and len(split) == count:
                names = split
        _packaged[RESOURCES_NAME] = names
    return _packaged[RESOURCES_NAME]  # type: ignore[no-any-return]


def packaged_record(device: str, spelling: str) -> "dict[str, Any] | None":
    """The record of ``device`` under profile ``spelling`` from the packaged
    tables, or None (not a plain NVIDIA device id, or not packaged)."""
    parsed = device_id(device)
    if parsed is None or parsed[0] != NVIDIA:
        return None
    table = packaged(spelling)
    if table is None:
        return None
    try:
        return record(table, parsed[1])
    except (KeyError, TypeError, ValueError, IndexError):
        return None


#: The facade's memo of resolutions: (device, profile) -> Resolution
#: (:func:`pciname.resolve`; :func:`pciname.api.clear_caches` empties it).
remembered: "dict[tuple[object, object], Any]" = {}
MEMO_MAX = 100_000


def clear() -> None:
    """Forget the memo and everything read from the package (tests move it)."""
    remembered.clear()
    _forget_packaged()


def _forget_packaged() -> None:
    for name in (POOL_NAME, MESSAGES_NAME):
        pool = _packaged.get(name)
        if pool is not None:
            pool.close()
    _packaged.clear()


# -- writing ------------------------------------------------------------------


def encode(
    records: "list[dict[str, Any]]",
    *,
    header_in_index: bool,
    extra: "dict[str, Any] | None" = None,
    pool: "dict[str, int] | None" = None,
    messages: "dict[str, int] | None" = None,
    resources: "dict[str, int] | None" = None,
    row_digests: bool = True,
) -> "tuple[dict[str, Any], bytes] | None":
    """The table of ``records`` (one profile's, for NVIDIA device ids of 4
    hex digits): its header, and the bytes of its file (with the header in
    its index if ``header_in_index``, and the items of ``extra``). With a
    ``pool`` (string -> index, grown as needed), rows hold the index of each
    string instead of the string (in ``messages``, for the warnings'
    messages). With ``resources``, the column holds the index of each
    resource name in it instead of the name. Without ``row_digests``, one digest of
    all the rows is checked when the table is read. None when they could not be answered
    exactly as they are (then no table must be written)."""
    if not records:
        return None
    order = list(records[0])
    header = {key: records[0][key] for key in SHARED}
    fields = [key for key in order if key not in SHARED and key not in DERIVED]
    rows: dict[str, bytes] = {}
    names: list[Any] = []
    advertised = bytearray()
    codes: list[tuple[str, ...]] = []
    shared: dict[tuple[str, ...], tuple[str, ...]] = {}  # one object per distinct tuple: marshal refers back
    for r in records:
        vendor, _, device = r["device"].partition(":")
        if list(r) != order or any(r[key] != header[key] for key in SHARED):
            return None
        if vendor != NVIDIA or len(device) != 4 or not _HEX.issuperset(device) or device in rows:
            return None
        values = [r[key] for key in fields]
        values[fields.index("warnings")] = [(w["code"], w["message"]) for w in r["warnings"]]
        if pool is not None and messages is not None:
            values = [
                [(code, messages.setdefault(text, len(messages))) for code, text in value]
                if key == "warnings"
                else _pooled(value, pool)
                for key, value in zip(fields, values)
            ]
        rows[device] = marshal.dumps(tuple(values))
        names.append(r["resource_name"] if resources is None else _pooled(r["resource_name"], resources))
        advertised.append(1 if r["advertised"] else 0)
        found = tuple(w["code"] for w in r["warnings"])
        codes.append(shared.setdefault(found, found))
    table: dict[str, Any] = {
        "format": FORMAT,
        "fields": fields,
        "order": order,
        "ids": "".join(rows),
        "ends": b"".join(end.to_bytes(4, "little") for end in _ends(rows.values())),
        "sums": b"".join(digest(blob, ROW_DIGEST_BYTES) for blob in rows.values()) if row_digests else b"",
        "names": names,
        "advertised": bytes(advertised),
        "codes": codes,
    }
    all_rows = b"".join(rows.values())
    if not row_digests:
        table["rows_digest"] = digest(all_rows)
    if header_in_index:
        table["header"] = header
    table.update(extra or {})
    index = marshal.dumps(table)
    check = dict(table, header=header, rows=all_rows)
    if pool is not None and messages is not None:
        check["pool"], check["messages"] = list(pool), list(messages)
    if resources is not None:
        check["resources"] = list(resources)
    # Never save what would answer differently from the full path.
    if any(record(check, r["device"].partition(":")[2]) != r for r in records):
        return None
    column = column_answers(check, [r["device"].partition(":")[2] for r in records])
    if column is None or list(zip(*column)) != [
        (r["resource_name"], _flag(r["advertised"]), tuple(w["code"] for w in r["warnings"]))
        for r in records
    ]:
        return None
    return header, MAGIC + digest(index) + len(index).to_bytes(4, "little") + index + all_rows


def _flag(advertised: "Any") -> int:
    """The column's byte of an advertised flag (2, which no column holds, if it is not a bool)."""
    return 1 if advertised is True else 0 if advertised is False else 2


def _pooled(value: "Any", pool: "dict[str, int]") -> "Any":
    """A row's value with a string replaced by its index in ``pool``."""
    if isinstance(value, str):
        return pool.setdefault(value, len(pool))
    if value is None or type(value) is bool:
        return value
    raise ValueError(f"an answer table cannot pool {value!r}")


def encode_pool(pool: "dict[str, int]") -> bytes:
    """The bytes of the pool file of ``pool``'s strings (in index order; see
    :class:`_Pool`)."""
    if any(_SEPARATOR in text for text in pool):
        raise ValueError("a pooled string holds U+0000")
    blobs = [text.encode("utf-8", "surrogatepass") for text in pool]
    # Each string ends where its end says; the next starts one byte later.
    ends = [end + k for k, end in enumerate(_ends(blobs))]
    rest = b"".join(
        [
            *(end.to_bytes(4, "little") for end in ends),
            *(digest(blob, _POOL_DIGEST_BYTES) for blob in blobs),
            _SEPARATOR.encode().join(blobs),
        ]
    )
    return POOL_MAGIC + len(blobs).to_bytes(4, "little") + digest(rest) + rest


def encode_index(index: "dict[str, Any]", magic: bytes = INDEX_MAGIC) -> bytes:
    """The bytes of the packaged index (or of another marshalled dict after ``magic``)."""
    payload = marshal.dumps(index)
    return magic + digest(payload) + len(payload).to_bytes(4, "little") + payload


def encode_resources(resources: "dict[str, int]") -> bytes:
    """The bytes of the resources file of ``resources``'s names (in index
    order; see :func:`packaged_resources`)."""
    if any(_SEPARATOR in name for name in resources):
        raise ValueError("a resource name holds U+0000")
    return encode_index({"names": _SEPARATOR.join(resources), "count": len(resources)}, RESOURCES_MAGIC)


def _ends(blobs: "Iterable[bytes]") -> "list[int]":
    ends, end = [], 0
    for blob in blobs:
        end += len(blob)
        ends.append(end)
    return ends


def write_atomically(directory: str, target: str, blob: bytes, *, prefix: str = ".answers-") -> bool:
    """Write ``blob`` to a new file in ``directory`` (named ``prefix...``)
    and rename it to ``target``; False when that fails. The catalog writes
    its tables with it too."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True

