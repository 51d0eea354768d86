"""Fast pci.ids loader: one tight pass, the rules of pciutils' names-parse.c.

This is the hot-path twin of the pyparsing grammar in :mod:`.grammar`, which
states the format and the exact rules in full; both must build the same
:class:`PciDatabase` and report the same issues (tests check it on every
real file and on generated input). Where pciutils stops at the first bad
line, this loader records a :class:`SyntaxIssue` and goes on, skipping the
bad line and everything nested under it, so a damaged file still yields
every entry that is unambiguous. ``strict=True`` raises on the first issue
instead.

pciutils' line rules, in short (see :mod:`.grammar` for all of them):

* a line is what one ``fgets`` into a 1024-byte buffer returns: at most
  1023 bytes, up to and including ``\\n``; its text ends at the first
  ``\\n``, ``\\r`` or NUL; without ``\\n``/``\\r`` there (and not at the end
  of the file) it is "Line too long", and the rest is read as the next line;
* one trailing space or tab is dropped (only one);
* blank lines and lines whose first non-blank character is ``#`` are skipped;
* nesting is the number of leading tabs; ids are hex (either case) followed
  by a space or tab; the name is the rest after blanks and must not be empty;
* a prog-if line right under a class line belongs to subclass 00 (kept in
  a nameless :class:`Subclass` unless the file names subclass 00).
"""

from __future__ import annotations

import gc
import re
import sys
from collections.abc import Iterable, Iterator

from ..errors import PciIdsSyntaxError
from .model import (
    DUPLICATE,
    LINE_TOO_LONG,
    MAX_LINE_BYTES,
    NO_VENDOR,
    PARSE_ERROR,
    DeviceClass,
    Device,
    PciDatabase,
    ProgIf,
    Subclass,
    Subsystem,
    SyntaxIssue,
    Vendor,
)


_HEX = frozenset("0123456789abcdefABCDEF")
_BLANK = " \t"
_HEADER = re.compile(r"[ \t]*#[ \t]*(Version|Date):[ \t]*(.*?)[ \t]*\Z")


def decode(data: bytes) -> str:
    """pci.ids bytes as text; invalid UTF-8 survives as surrogate escapes."""
    return data.decode("utf-8", "surrogateescape")


def _bad_hex(text: str, start: int, width: int) -> int:
    """Index of the first non-hex character of ``text[start:start+width]``
    (``len(text)`` if it ends first), or -1 when all are hex."""
    for index in range(start, start + width):
        if index >= len(text) or text[index] not in _HEX:
            return index
    return -1


# The common case, checked in C: hex digits followed by a space or tab.
_HEX_THEN_BLANK = {width: re.compile(rf"[0-9a-fA-F]{{{width}}}[ \t]").match for width in (2, 4)}


def _field_error(text: str, start: int, width: int) -> int:
    """-1 when ``text[start:start+width]`` is hex followed by a blank; else
    the index of the first character that is not (a digit, or the blank)."""
    if _HEX_THEN_BLANK[width](text, start):
        return -1
    bad = _bad_hex(text, start, width)
    return bad if bad >= 0 else start + width


def _reads(raw: str, terminated: bool) -> list[tuple[str, bool]]:
    """pciutils' fgets reads of one physical line that is long or holds a
    NUL: (text up to the first \n, \r or NUL; whether it is "too long")."""
    data = raw.encode("utf-8", "surrogateescape")
    if terminated:
        data += b"\n"
    reads = []
    for start in range(0, len(data), MAX_LINE_BYTES):
        chunk = data[start : start + MAX_LINE_BYTES]
        at_eof = not terminated and len(chunk) < MAX_LINE_BYTES
        cut = len(chunk)
        for terminator in (b"\n", b"\r", b"\0"):
            found = chunk.find(terminator, 0, cut)
            if found >= 0:
                cut = found
        ended = cut < len(chunk) and chunk[cut] != 0
        reads.append((chunk[:cut].decode("utf-8", "surrogateescape"), not ended and not at_eof))
    return reads


# Block kinds, as pciutils' `cat`.
_NONE, _VENDOR, _CLASS, _GENERIC, _UNKNOWN, _SKIP = range(6)
# What a level-2 line attaches to.
_L2_NONE, _L2_SKIP, _L2_DEVICE, _L2_SUBCLASS, _L2_CLASS = range(5)


_BLOCK_BYTES = 1 << 20


def _blocks(data: bytes) -> Iterator[tuple[list[str], bool]]:
    """The physical lines of ``data`` (split at ``\\n``, which they lose),
    decoded, about a megabyte at a time, and whether the block's last line
    is the file's unterminated last line. A big file is never held as one
    decoded text and one list of all its lines."""
    pos, end = 0, len(data)
    while pos < end:
        stop = data.find(b"\n", pos + _BLOCK_BYTES)
        stop = end if stop < 0 else stop + 1
        lines = decode(data[pos:stop]).split("\n")
        unterminated = lines[-1] != ""
        if not unterminated:
            lines.pop()
        yield lines, unterminated
        pos = stop


def load_text(text: str, *, strict: bool = False) -> PciDatabase:
    """Build the database from decoded pci.ids text."""
    lines = text.split("\n")
    unterminated = lines[-1] != ""
    if not unterminated:
        lines.pop()
    return _load([(lines, unterminated)], "\0" in text, strict)


def load_bytes(data: bytes, *, strict: bool = False) -> PciDatabase:
    """Build the database from the bytes of a pci.ids file."""
    return _load(_blocks(data), b"\0" in data, strict)


def _load(blocks: Iterable[tuple[list[str], bool]], has_nul: bool, strict: bool) -> PciDatabase:
    # The cyclic GC would scan the growing database again and again (a
    # third of the time of a big file); nothing here makes cycles.
    enabled = gc.isenabled()
    gc.disable()
    try:
        return _load_lines(blocks, has_nul, strict)
    finally:
        if enabled:
            gc.enable()


def _load_lines(blocks: Iterable[tuple[list[str], bool]], has_nul: bool, strict: bool) -> PciDatabase:
    db = PciDatabase()
    issues = db.issues
    vendors = db.vendors
    block = _NONE
    vendor: Vendor | None = None
    dclass: DeviceClass | None = None
    generic_vendor = ""
    level2 = _L2_NONE
    level1: Device | Subclass | None = None  # the entry level-2 lines attach to
    in_header = True
    intern = sys.intern  # one string per id, however often the file repeats it

    def issue(lineno: int, column: int, message: str) -> None:
        found = SyntaxIssue(lineno, column, message)
        if strict:
            raise PciIdsSyntaxError(found)
        issues.append(found)

    lineno = 0
    for lines, unterminated in blocks:
        last = len(lines) - 1
        for index, raw in enumerate(lines):
            # Fast path: short lines without NUL are one read each.
            if (len(raw) > 255 and len(raw.encode("utf-8", "surrogateescape")) > MAX_LINE_BYTES - 1) or (
                has_nul and "\0" in raw
            ):
                reads = _reads(raw, not (unterminated and index == last))
            else:
                cut = raw.find("\r")
                reads = [(raw if cut < 0 else raw[:cut], False)]
            for line, too_long in reads:
                lineno += 1
                if too_long:
                    issue(lineno, len(line) + 1, LINE_TOO_LONG)
                    body = line.lstrip(_BLANK)
                    if body and body[0] != "#":
                        # skip it and what it nests
                        in_header = False
                        nest = len(line) - len(line.lstrip("\t"))
                        if nest == 0:
                            block = _SKIP
                        elif nest == 1:
                            level1, level2 = None, _L2_SKIP
                    continue
                if line and line[-1] in _BLANK:
                    line = line[:-1]
                body = line.lstrip(_BLANK)
                if not body or body[0] == "#":
                    if in_header and body:
                        header = _HEADER.match(line)
                        if header:
                            key, value = header.groups()
                            if key == "Version":
                                if db.version is None:
                                    db.version = value
                            elif db.date is None:
                                db.date = value
                    continue
                in_header = False

                nest = len(line) - len(line.lstrip("\t"))
                p = line[nest:] if nest else line

                if nest == 0:
                    level1, level2 = None, _L2_NONE
                    if p[:2] == "C ":
                        bad = _field_error(p, 2, 2)
                        if bad >= 0:
                            issue(lineno, bad + 1, PARSE_ERROR)
                            block = _SKIP
                            continue
                        name = p[5:].lstrip(_BLANK)
                        if not name:
                            issue(lineno, len(line) + 1, PARSE_ERROR)
                            block = _SKIP
                            continue
                        cid = p[2:4].lower()
                        if cid in db.classes:
                            issue(lineno, 3, DUPLICATE)
                            block = _SKIP
                            continue
                        dclass = db.classes[cid] = DeviceClass(cid, name)
                        block, level2 = _CLASS, _L2_CLASS
                    elif p[:2] == "S ":
                        bad = _bad_hex(p, 2, 4)
                        if bad >= 0 or len(p) != 6:
                            issue(lineno, (bad if bad >= 0 else 6) + 1, PARSE_ERROR)
                            block = _SKIP
                            continue
                        vid = p[2:6].lower()
                        if vid not in vendors:
                            issue(lineno, 3, NO_VENDOR)
                            block = _SKIP
                            continue
                        generic_vendor = vid
                        block = _GENERIC
                    elif "A" <= p[0] <= "Z" and p[1:2] == " ":
                        block = _UNKNOWN
                    else:
                        bad = _field_error(p, 0, 4)
                        if bad >= 0:
                            issue(lineno, bad + 1, PARSE_ERROR)
                            block = _SKIP
                            continue
                        name = p[5:].lstrip(_BLANK)
                        if not name:
                            issue(lineno, len(line) + 1, PARSE_ERROR)
                            block = _SKIP
                            continue
                        vid = intern(p[:4].lower())
                        if vid in vendors:
                            issue(lineno, 1, DUPLICATE)
                            block = _SKIP
                            continue
                        vendor = vendors[vid] = Vendor(vid, name)
                        block = _VENDOR
                    continue

                if block == _UNKNOWN or block == _SKIP:
                    continue
                if nest > 2:
                    issue(lineno, 1, PARSE_ERROR)
                    continue

                if nest == 1:
                    level1, level2 = None, _L2_SKIP
                    if block == _NONE:
                        issue(lineno, 1, PARSE_ERROR)
                        continue
                    width = 2 if block == _CLASS else 4
                    bad = _field_error(p, 0, width)
                    if bad >= 0:
                        issue(lineno, bad + 2, PARSE_ERROR)
                        continue
                    name = p[width + 1 :].lstrip(_BLANK)
                    if not name:
                        issue(lineno, len(line) + 1, PARSE_ERROR)
                        continue
                    eid = intern(p[:width].lower())
                    if block == _VENDOR:
                        assert vendor is not None
                        if eid in vendor.devices:
                            issue(lineno, 2, DUPLICATE)
                            continue
                        level1 = vendor.devices[eid] = Device(eid, name)
                        level2 = _L2_DEVICE
                    elif block == _CLASS:
                        assert dclass is not None
                        subclass = dclass.subclasses.get(eid)
                        if subclass is None:
                            subclass = dclass.subclasses[eid] = Subclass(eid, name)
                        elif subclass.name:
                            issue(lineno, 2, DUPLICATE)
                            continue
                        else:  # it held prog-ifs listed right under the class line
                            subclass.name = name
                        level1, level2 = subclass, _L2_SUBCLASS
                    else:  # _GENERIC
                        key = (generic_vendor, eid)
                        if key in db.generic_subsystems:
                            issue(lineno, 2, DUPLICATE)
                            continue
                        db.generic_subsystems[key] = name
                        level2 = _L2_NONE  # pciutils allows nothing under it
                    continue

                # nest == 2
                if level2 == _L2_SKIP:
                    continue
                if level2 == _L2_DEVICE:
                    assert isinstance(level1, Device)
                    bad = _field_error(p, 0, 4)
                    if bad < 0:
                        bad = _field_error(p, 5, 4)
                    if bad >= 0:
                        issue(lineno, bad + 3, PARSE_ERROR)
                        continue
                    name = p[10:].lstrip(_BLANK)
                    if not name:
                        issue(lineno, len(line) + 1, PARSE_ERROR)
                        continue
                    key = (intern(p[:4].lower()), intern(p[5:9].lower()))
                    if key in level1.subsystems:
                        issue(lineno, 3, DUPLICATE)
                        continue
                    level1.subsystems[key] = Subsystem(key[0], key[1], name)
                elif level2 == _L2_SUBCLASS or level2 == _L2_CLASS:
                    bad = _field_error(p, 0, 2)
                    if bad >= 0:
                        issue(lineno, bad + 3, PARSE_ERROR)
                        continue
                    name = p[3:].lstrip(_BLANK)
                    if not name:
                        issue(lineno, len(line) + 1, PARSE_ERROR)
                        continue
                    if level2 == _L2_CLASS:
                        # Right under the class line: pciutils files it under
                        # subclass 00, which need not be named.
                        assert dclass is not None
                        level1 = dclass.subclasses.get("00")
                        if level1 is None:
                            level1 = dclass.subclasses["00"] = Subclass("00", "")
                    assert isinstance(level1, Subclass)
                    pid = p[:2].lower()
                    if pid in level1.prog_ifs:
                        issue(lineno, 3, DUPLICATE)
                        continue
                    level1.prog_ifs[pid] = ProgIf(pid, name)
                else:
                    # A subsystem or prog-if line with nothing above it.
                    issue(lineno, 1, PARSE_ERROR)
    return db


