"""Fast pci.ids loader: one tight pass, the rules of pciutils' names-parse.c.

This is the hot-path twin of the pyparsing grammar in :mod:`.grammar`; both
must build the same :class:`PciDatabase` (tests check it on every real file
and on generated input). Where pciutils stops at the first bad line, this
loader records a :class:`SyntaxIssue` and goes on, skipping the bad line and
everything nested under it, so a damaged file still yields every entry that
is unambiguous. ``strict=True`` raises on the first issue instead.

pciutils' line rules, reproduced here:

* a line ends at the first ``\\n`` or ``\\r``; one trailing space or tab is
  dropped (only one);
* a line of 1023 bytes or more is "Line too long" (its 1024-byte buffer);
* blank lines and lines whose first non-blank character is ``#`` are skipped;
* nesting is the number of leading tabs; ids are hex (either case) followed
  by a space or tab; the name is the rest after blanks and must not be empty.
"""

from __future__ import annotations

import re

from ..errors import PciIdsSyntaxError
from .model import (
    DeviceClass,
    Device,
    PciDatabase,
    ProgIf,
    Subclass,
    Subsystem,
    SyntaxIssue,
    Vendor,
)

MAX_LINE_BYTES = 1023  # pciutils reads lines into a 1024-byte buffer

_HEX = frozenset("0123456789abcdefABCDEF")
_BLANK = " \t"
_HEADER = re.compile(r"#\s*(Version|Date):\s*(.*?)\s*$")

PARSE_ERROR = "Parse error"


def decode(data: bytes) -> str:
    """pci.ids bytes as text; invalid UTF-8 survives as surrogate escapes."""
    return data.decode("utf-8", "surrogateescape")


def _hex(text: str, start: int, width: int) -> str | None:
    part = text[start : start + width]
    if len(part) == width and all(c in _HEX for c in part):
        return part.lower()
    return None


def _blank_at(text: str, index: int) -> bool:
    return index < len(text) and text[index] in _BLANK


def _too_long(line: str) -> bool:
    # A character is at most 4 bytes, so short lines need no encoding.
    return len(line) * 4 >= MAX_LINE_BYTES and len(line.encode("utf-8", "surrogateescape")) >= MAX_LINE_BYTES


# Block kinds, as pciutils' `cat`.
_NONE, _VENDOR, _CLASS, _GENERIC, _UNKNOWN, _SKIP = range(6)


def load_text(text: str, *, strict: bool = False) -> PciDatabase:
    """Build the database from decoded pci.ids text."""
    db = PciDatabase()
    issues = db.issues
    block = _NONE
    vendor: Vendor | None = None
    dclass: DeviceClass | None = None
    generic_vendor = ""
    level1: Device | Subclass | None = None  # the entry nested lines attach to
    skip_level2 = False  # the last level-1 line was bad: skip what it nests
    in_header = True

    def issue(lineno: int, column: int, message: str) -> None:
        found = SyntaxIssue(lineno, column, message)
        if strict:
            raise PciIdsSyntaxError(found)
        issues.append(found)

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    for lineno, raw in enumerate(lines, 1):
        cut = raw.find("\r")
        line = raw if cut < 0 else raw[:cut]
        if _too_long(line):
            issue(lineno, 1, "Line too long")
            continue
        if line and line[-1] in _BLANK:
            line = line[:-1]
        body = line.lstrip(_BLANK)
        if not body:
            continue
        if body[0] == "#":
            if in_header:
                header = _HEADER.match(body)
                if header:
                    key, value = header.groups()
                    if key == "Version" and db.version is None:
                        db.version = value
                    elif key == "Date" and db.date is None:
                        db.date = value
            continue
        in_header = False

        nest = len(line) - len(line.lstrip("\t"))
        p = line[nest:]

        if nest == 0:
            level1, skip_level2 = None, False
            if p[:2] == "C ":
                cid = _hex(p, 2, 2)
                if cid is None or not _blank_at(p, 4):
                    issue(lineno, 3, PARSE_ERROR)
                    block = _SKIP
                    continue
                name = p[5:].lstrip(_BLANK)
                if not name:
                    issue(lineno, len(line) + 1, PARSE_ERROR)
                    block = _SKIP
                    continue
                if cid in db.classes:
                    issue(lineno, 1, "Duplicate entry")
                    block = _SKIP
                    continue
                dclass = db.classes[cid] = DeviceClass(cid, name)
                block = _CLASS
            elif p[:2] == "S ":
                vid = _hex(p, 2, 4)
                if vid is None or len(p) != 6:
                    issue(lineno, 3, PARSE_ERROR)
                    block = _SKIP
                    continue
                if vid not in db.vendors:
                    issue(lineno, 3, "Vendor does not exist")
                    block = _SKIP
                    continue
                generic_vendor = vid
                block = _GENERIC
            elif "A" <= p[0] <= "Z" and p[1:2] == " ":
                block = _UNKNOWN
            else:
                vid = _hex(p, 0, 4)
                if vid is None or not _blank_at(p, 4):
                    issue(lineno, 1, PARSE_ERROR)
                    block = _SKIP
                    continue
                name = p[5:].lstrip(_BLANK)
                if not name:
                    issue(lineno, len(line) + 1, PARSE_ERROR)
                    block = _SKIP
                    continue
                if vid in db.vendors:
                    issue(lineno, 1, "Duplicate entry")
                    block = _SKIP
                    continue
                vendor = db.vendors[vid] = Vendor(vid, name)
                block = _VENDOR
            continue

        if block in (_UNKNOWN, _SKIP):
            continue
        if nest > 2:
            issue(lineno, 1, PARSE_ERROR)
            continue

        if nest == 1:
            skip_level2 = True
            level1 = None
            width = 2 if block == _CLASS else 4
            if block == _NONE:
                issue(lineno, 1, PARSE_ERROR)
                continue
            eid = _hex(p, 0, width)
            if eid is None or not _blank_at(p, width):
                issue(lineno, nest + 1, PARSE_ERROR)
                continue
            name = p[width + 1 :].lstrip(_BLANK)
            if not name:
                issue(lineno, len(line) + 1, PARSE_ERROR)
                continue
            if block == _VENDOR:
                assert vendor is not None
                if eid in vendor.devices:
                    issue(lineno, 1, "Duplicate entry")
                    continue
                level1 = vendor.devices[eid] = Device(eid, name)
            elif block == _CLASS:
                assert dclass is not None
                if eid in dclass.subclasses:
                    issue(lineno, 1, "Duplicate entry")
                    continue
                level1 = dclass.subclasses[eid] = Subclass(eid, name)
            else:  # _GENERIC
                key = (generic_vendor, eid)
                if key in db.generic_subsystems:
                    issue(lineno, 1, "Duplicate entry")
                    continue
                db.generic_subsystems[key] = name
                # pciutils rejects nested lines under generic subsystems
                level1 = None
                skip_level2 = False
                continue
            skip_level2 = False
            continue

        # nest == 2
        if skip_level2:
            continue
        if isinstance(level1, Device):
            svid = _hex(p, 0, 4)
            sdid = _hex(p, 5, 4)
            if svid is None or not _blank_at(p, 4) or sdid is None or not _blank_at(p, 9):
                issue(lineno, nest + 1, PARSE_ERROR)
                continue
            name = p[10:].lstrip(_BLANK)
            if not name:
                issue(lineno, len(line) + 1, PARSE_ERROR)
                continue
            if (svid, sdid) in level1.subsystems:
                issue(lineno, 1, "Duplicate entry")
                continue
            level1.subsystems[(svid, sdid)] = Subsystem(svid, sdid, name)
        elif isinstance(level1, Subclass):
            pid = _hex(p, 0, 2)
            if pid is None or not _blank_at(p, 2):
                issue(lineno, nest + 1, PARSE_ERROR)
                continue
            name = p[3:].lstrip(_BLANK)
            if not name:
                issue(lineno, len(line) + 1, PARSE_ERROR)
                continue
            if pid in level1.prog_ifs:
                issue(lineno, 1, "Duplicate entry")
                continue
            level1.prog_ifs[pid] = ProgIf(pid, name)
        else:
            # A subsystem or prog-if line with no device or subclass above it.
            issue(lineno, 1, PARSE_ERROR)
    return db


def load_bytes(data: bytes, *, strict: bool = False) -> PciDatabase:
    """Build the database from the bytes of a pci.ids file."""
    return load_text(decode(data), strict=strict)
