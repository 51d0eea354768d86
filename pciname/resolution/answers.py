"""Packaged answers: the record of every NVIDIA device id under every
packaged profile, precomputed, and read before anything else of pciname is
imported.

``pciname/packaged/`` is part of the package and trusted as its ``.py``
files are (no digests; a test regenerates it and compares bytes). Written by
``python -m tools.packaged_answers``, it holds:

* ``index`` (marshal): pciname's version, the keys of a record in order
  (``order``), the fields a row holds (``fields``), every spelling of every
  packaged profile (``spellings``: spelling -> profile) and per profile its
  ``header`` (the fields all its records share) and its ``table``;
* one table per distinct set of rows, named by a digest of its bytes: the
  size of its head (4 bytes), the head (marshal: ``ids``, the NVIDIA device
  ids, 4 characters each; ``ends``, where each row starts, and where the
  last one ends, 4 bytes each, from the rows' start), then the rows, one
  marshal tuple of them, so that a row reads alone and all of them at once
  (lookups of many ids): each a tuple of the ``fields``, each string as its
  index in ``strings``, the warnings as (code, index in ``messages``) pairs;
* ``strings`` and ``messages``, the strings every table's rows share: their
  count, where each ends (4 bytes each), then the strings (UTF-8); string 0
  of ``strings`` is ``""``.

Files are mapped (``mmap``): a lookup reads only the rows and strings it
needs. :func:`pciname.resolve` and a plain ``pciname lookup``
(:mod:`pciname.cli.fast`) read them; anything else takes the full path. No
``from __future__ import annotations`` (importing it costs start-up time).
"""

import marshal
import mmap
import os

from pciname._version import __version__
from pciname.naming import DEFAULT_PROFILE
from pciname.pciids import NVIDIA_VENDOR_ID
from pciname.pciids.ids import device_id

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

__all__ = ["DEFAULT_PROFILE", "NVIDIA_VENDOR_ID"]

#: The packaged answers' directory, beside this module.
DIRECTORY = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "packaged")
INDEX = "index"
STRINGS = "strings"
MESSAGES = "messages"

_files: "dict[str, Any]" = {}  # path -> the file mapped (None: absent or empty), the index or a Table


def packaged_dir() -> str:
    """Where the packaged answers are (tests move them)."""
    return DIRECTORY


def mapped(name: str) -> "Any":
    """The packaged file ``name``, mapped (once), or None if it is absent."""
    path = os.path.join(packaged_dir(), name)
    if path not in _files:
        try:
            with open(path, "rb") as handle:
                _files[path] = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        except (OSError, ValueError):  # ValueError: an empty file
            _files[path] = None
    return _files[path]


def index() -> "dict[str, Any] | None":
    """The packaged index, or None (absent, or written for another version)."""
    key = os.path.join(packaged_dir(), "")
    if key not in _files:
        blob = mapped(INDEX)
        _files[key] = found = None if blob is None else marshal.loads(blob)
        if type(found) is not dict or found.get("version") != __version__:
            _files[key] = None
    return _files[key]  # type: ignore[no-any-return]


class Table:
    """One profile's rows: its header and the rows of its table file."""

    __slots__ = ("blob", "ends", "header", "ids", "start")

    def __init__(self, header: "dict[str, Any]", blob: "Any") -> None:
        size = int.from_bytes(blob[:4], "little")
        head = marshal.loads(blob[4 : 4 + size])
        self.header, self.blob, self.start = header, blob, 4 + size
        self.ids: str = head["ids"]
        self.ends: bytes = head["ends"]

    def devices(self) -> "list[str]":
        ids = self.ids
        return [ids[at : at + 4] for at in range(0, len(ids), 4)]

    def find(self, device: str) -> int:
        """Where ``device`` is in ``ids`` (a multiple of 4), or -1."""
        if len(device) != 4:
            return -1
        at = self.ids.find(device)
        while at % 4 and at != -1:
            at = self.ids.find(device, at + 1)
        return at

    def row(self, at: int) -> "tuple[Any, ...]":
        """The row at position ``at`` (from :meth:`find`)."""
        first, end = (self.start + int.from_bytes(self.ends[i : i + 4], "little") for i in (at, at + 4))
        return marshal.loads(self.blob[first:end])  # type: ignore[no-any-return]

    def every_row(self) -> "tuple[tuple[Any, ...], ...]":
        """Every row, in id order, read at once."""
        return marshal.loads(self.blob[self.start :])  # type: ignore[no-any-return]


def table(spelling: str) -> "Table | None":
    """The rows of the packaged profile ``spelling`` names, or None."""
    found = index()
    profile = found["spellings"].get(spelling) if found is not None else None
    if profile is None:
        return None
    entry = found["profiles"][profile]  # type: ignore[index]
    key = os.path.join(packaged_dir(), profile + "/")
    if key not in _files:
        blob = mapped(entry["table"])
        _files[key] = None if blob is None else Table(entry["header"], blob)
    return _files[key]  # type: ignore[no-any-return]


def string(pool: str, at: int) -> str:
    """String ``at`` of the pool ``pool`` (:data:`STRINGS` or :data:`MESSAGES`)."""
    blob = mapped(pool)
    base = 4 + 4 * int.from_bytes(blob[:4], "little")
    start = int.from_bytes(blob[4 * at : 4 * at + 4], "little") if at else 0
    end = int.from_bytes(blob[4 * at + 4 : 4 * at + 8], "little")
    return blob[base + start : base + end].decode("utf-8", "surrogatepass")  # type: ignore[no-any-return]


def utf8_strings(ats: "Iterable[int]") -> "list[memoryview]":
    """Strings ``ats`` of :data:`STRINGS`, as UTF-8, read at once (lookups
    of many ids; the pool's offsets read natively: little-endian only)."""
    pool = memoryview(mapped(STRINGS))  # no int per string, and no import (array, struct: 2 ms)
    size = 4 * int.from_bytes(pool[:4], "little")
    ends, text = pool[4 : 4 + size].cast("I"), pool[4 + size :]
    starts = pool[:size].cast("I")  # where the one before ends; string 0 is "", so the count there is harmless
    return list(map(text.__getitem__, map(slice, map(starts.__getitem__, ats), map(ends.__getitem__, ats))))


def value(found: "Any") -> "Any":
    """A row's value as the record holds it (strings and warnings from the pools)."""
    if type(found) is int:
        return string(STRINGS, found)
    if type(found) is tuple:
        return [{"code": code, "message": string(MESSAGES, at)} for code, at in found]
    return found


def record(answers: Table, device: str) -> "dict[str, Any] | None":
    """The record of NVIDIA device id ``device`` (4 lower-case hex digits),
    exactly as the full path builds it, or None if the table has no row."""
    at = answers.find(device)
    if at == -1:
        return None
    found = index()
    assert found is not None
    values = dict(answers.header, device=f"{NVIDIA_VENDOR_ID}:{device}")
    values.update(zip(found["fields"], map(value, answers.row(at))))
    return {key: values[key] for key in found["order"]}


def packaged_record(device: str, spelling: str) -> "dict[str, Any] | None":
    """The record of ``device`` under profile ``spelling`` from the packaged
    answers, or None (not a plain NVIDIA device id, or not packaged)."""
    parsed = device_id(device)
    if parsed is None or parsed[0] != NVIDIA_VENDOR_ID:
        return None
    found = table(spelling)
    return None if found is None else record(found, parsed[1])


#: The default resolver's memo (the Resolver fills and clears it): (device, profile)
#: -> Resolution; here, so that :func:`pciname.resolve` reads it before the resolver is imported.
memo: "dict[tuple[object, object], Any]" = {}
MEMO_MAX = 100_000


def remember(into: "dict[tuple[object, object], Any]", key: "tuple[object, object]", result: "Any") -> "Any":
    """Keep ``result`` in a memo (emptied when full); unhashable keys are not kept."""
    try:
        if len(into) >= MEMO_MAX:
            into.clear()
        into[key] = result
    except TypeError:
        pass
    return result


def clear() -> None:
    """Forget what was read from the package (tests move it)."""
    _files.clear()
