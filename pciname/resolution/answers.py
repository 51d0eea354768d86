"""Packaged answers: the record of every NVIDIA device id under every
packaged profile, precomputed, and read before anything else of pciname is
imported.

``pciname/packaged/`` is part of the package, as the ``.py`` files beside
it are, and is trusted as they are: nothing in it is digest-checked when
read; a test regenerates it and compares bytes, so it cannot go stale
unnoticed. Written by ``python -m tools.packaged_answers``, it holds:

* ``index`` (marshal): pciname's version, the keys of a record in order
  (``order``), the fields a row holds (``fields``), every spelling of every
  packaged profile (``spellings``: spelling -> profile) and per profile its
  ``header`` (the fields all its records share) and its ``table``;
* one table per distinct set of rows, named by a digest of its bytes: the
  size of its head (4 bytes), the head (marshal: ``ids``, the NVIDIA device
  ids, 4 characters each; ``ends``, where each row ends, 4 bytes each),
  then the rows (marshal each: a tuple of the ``fields``, each string as
  its index in ``strings``, the warnings as (code, index in ``messages``)
  pairs), then the bulk section, read only by lookups of more than 64 ids
  (marshal: per row, in id order, how far its ``resource_name``'s index in
  ``strings`` is from the previous row's, ``""`` for none; its
  ``advertised``; its warning codes);
* ``strings`` and ``messages``, the strings every table's rows share: their
  count, where each ends (4 bytes each), then the strings (UTF-8); string 0
  of ``strings`` is ``""``.

Files are mapped (``mmap``), so that a lookup reads the rows and strings it
needs, not whole files. One fast path uses them: :func:`pciname.resolve`
and a plain ``pciname lookup`` (:mod:`pciname.cli.fast`) of NVIDIA device
ids under a packaged profile spelling. Anything else takes the full path
(the resolver and its catalogs), which the user cache speeds up with its
own checks.

This module imports only ``os``, ``marshal``, ``mmap`` and two constants
(bulk reads: ``itertools`` too; no ``from __future__ import annotations``: importing ``__future__`` costs
start-up time).
"""

import marshal
import mmap
import os

from pciname._version import __version__
from pciname.naming import DEFAULT_PROFILE
from pciname.pciids import NVIDIA_VENDOR_ID

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
_HEX = frozenset("0123456789abcdefABCDEF")

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

    def rows(self, ats: "Iterable[int]") -> "dict[int, tuple[Any, ...]]":
        """The rows at positions ``ats`` (from :meth:`find`), as written."""
        ends, start, blob = self.ends, self.start, self.blob
        found = {}
        for at in ats:
            first = int.from_bytes(ends[at - 4 : at], "little") if at else 0
            found[at] = marshal.loads(blob[start + first : start + int.from_bytes(ends[at : at + 4], "little")])
        return found

    def row(self, at: int) -> "tuple[Any, ...]":
        """The row at position ``at``."""
        return self.rows((at,))[at]

    def bulk(self) -> "tuple[dict[str, int], list[Any], tuple[bool, ...], tuple[tuple[str, ...], ...]]":
        """For lookups of many ids, from the bulk section: each device id of
        the table -> its place in id order, and in that order each name (UTF-8
        bytes), whether it is advertised and its warning codes."""
        from itertools import accumulate

        section = self.blob[self.start + int.from_bytes(self.ends[-4:], "little") :]
        steps, advertised, codes = marshal.loads(section)
        pool = memoryview(mapped(STRINGS))  # no int per string, and no import (array, struct: 2 ms)
        size = 4 * int.from_bytes(pool[:4], "little")
        ends, text = pool[4 : 4 + size].cast("I"), pool[4 + size :]  # native order: little-endian only
        starts = pool[:size].cast("I")  # where the one before ends; string 0 is "", so the count there is harmless
        at = list(accumulate(steps))  # each name's index in the pool
        names = list(map(text.__getitem__, map(slice, map(starts.__getitem__, at), map(ends.__getitem__, at))))
        return dict(zip(self.devices(), range(len(at)))), names, advertised, codes


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


def strings(pool: str, ats: "Iterable[int]") -> "dict[int, str]":
    """Strings ``ats`` of the pool ``pool`` (:data:`STRINGS` or :data:`MESSAGES`), by position."""
    blob = mapped(pool)
    base = 4 + 4 * int.from_bytes(blob[:4], "little")
    found = {}
    for at in ats:
        start = int.from_bytes(blob[4 * at : 4 * at + 4], "little") if at else 0
        end = int.from_bytes(blob[4 * at + 4 : 4 * at + 8], "little")
        found[at] = blob[base + start : base + end].decode("utf-8", "surrogatepass")
    return found


def string(pool: str, at: int) -> str:
    """String ``at`` of the pool ``pool``."""
    return strings(pool, (at,))[at]


def hex4(text: str) -> str | None:
    if text[:2] in ("0x", "0X"):
        text = text[2:]
    if len(text) == 4 and _HEX.issuperset(text):
        return text.lower()
    return None


def device_id(token: str) -> tuple[str, str] | None:
    """``VENDOR:DEVICE`` or a bare ``DEVICE`` (vendor 10de) as
    :func:`pciname.pciids.ids.parse_device_id` reads it (without surrounding
    white space), else None (a test holds the two to the same answers)."""
    vendor, sep, device = token.partition(":")
    if not sep:
        vendor, device = NVIDIA_VENDOR_ID, vendor
    v, d = hex4(vendor), hex4(device)
    if v is None or d is None:
        return None
    return v, d


def value(found: "Any") -> "Any":
    """A row's value as the record holds it: a string for its index, the
    warnings as dicts."""
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


#: The default resolver's memo (:class:`pciname.resolution.resolver.Resolver` fills and
#: clears it): (device, profile) -> Resolution. It lives here so that
#: :func:`pciname.resolve` reads it before the resolver is imported.
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
