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

from pciname.errors import PciIdsSyntaxError
from pciname.pciids.model import (
    DUPLICATE,
    LINE_TOO_LONG,
    MAX_LINE_BYTES,
    NO_VENDOR,
    PARSE_ERROR,
    Device,
    DeviceClass,
    PciDatabase,
    ProgIf,
    Subclass,
    Subsystem,
    SyntaxIssue,
    Vendor,
)

_HEX = frozenset("0123456789abcdefABCDEF")
_intern = sys.intern
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
    """Split the blocks into pciutils' reads and hand each line to :class:`_Parse`."""
    parse = _Parse(strict)
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
                    parse.too_long(lineno, line)
                else:
                    parse.line(lineno, line)
    return parse.db


class _Parse:
    """The state of one load, and one method per kind of line."""

    __slots__ = ("block", "db", "dclass", "generic_vendor", "in_header", "level1", "level2", "strict", "vendor")

    def __init__(self, strict: bool) -> None:
        self.db = PciDatabase()
        self.strict = strict
        self.block = _NONE
        self.vendor: Vendor | None = None
        self.dclass: DeviceClass | None = None
        self.generic_vendor = ""
        self.level2 = _L2_NONE
        self.level1: Device | Subclass | None = None  # the entry level-2 lines attach to
        self.in_header = True

    def issue(self, lineno: int, column: int, message: str) -> None:
        found = SyntaxIssue(lineno, column, message)
        if self.strict:
            raise PciIdsSyntaxError(found)
        self.db.issues.append(found)

    def too_long(self, lineno: int, line: str) -> None:
        """A "Line too long" read: skipped, with what it nests."""
        self.issue(lineno, len(line) + 1, LINE_TOO_LONG)
        body = line.lstrip(_BLANK)
        if body and body[0] != "#":
            self.in_header = False
            nest = len(line) - len(line.lstrip("\t"))
            if nest == 0:
                self.block = _SKIP
            elif nest == 1:
                self.level1, self.level2 = None, _L2_SKIP

    def line(self, lineno: int, line: str) -> None:
        if line and line[-1] in _BLANK:
            line = line[:-1]
        body = line.lstrip(_BLANK)
        if not body or body[0] == "#":
            if self.in_header and body:
                self.header(line)
            return
        self.in_header = False
        nest = len(line) - len(line.lstrip("\t"))
        p = line[nest:] if nest else line
        if nest == 0:
            self.top_line(lineno, line, p)
        elif self.block == _UNKNOWN or self.block == _SKIP:
            return
        elif nest > 2:
            self.issue(lineno, 1, PARSE_ERROR)
        elif nest == 1:
            self.level1_line(lineno, line, p)
        elif self.level2 == _L2_DEVICE:
            self.subsystem_line(lineno, line, p)
        elif self.level2 == _L2_SUBCLASS or self.level2 == _L2_CLASS:
            self.prog_if_line(lineno, line, p)
        elif self.level2 != _L2_SKIP:
            # A subsystem or prog-if line with nothing above it.
            self.issue(lineno, 1, PARSE_ERROR)

    def top_line(self, lineno: int, line: str, p: str) -> None:
        """A line that nests nothing: a vendor, a class, a generic section or an unknown one."""
        self.level1, self.level2 = None, _L2_NONE
        if p[:2] == "C ":
            self.class_line(lineno, line, p)
        elif p[:2] == "S ":
            self.generic_line(lineno, p)
        elif "A" <= p[0] <= "Z" and p[1:2] == " ":
            self.block = _UNKNOWN
        else:
            self.vendor_line(lineno, line, p)

    def header(self, line: str) -> None:
        """A comment of the header: the file's Version and Date, first of each."""
        header = _HEADER.match(line)
        if header:
            key, value = header.groups()
            if key == "Version":
                if self.db.version is None:
                    self.db.version = value
            elif self.db.date is None:
                self.db.date = value

    def _name(self, lineno: int, line: str, p: str, start: int) -> str:
        """The name from ``p[start:]``; "" (an issue) if there is none."""
        name = p[start:].lstrip(_BLANK)
        if not name:
            self.issue(lineno, len(line) + 1, PARSE_ERROR)
        return name

    def class_line(self, lineno: int, line: str, p: str) -> None:
        bad = _field_error(p, 2, 2)
        if bad >= 0:
            self.issue(lineno, bad + 1, PARSE_ERROR)
            self.block = _SKIP
            return
        name = self._name(lineno, line, p, 5)
        if not name:
            self.block = _SKIP
            return
        cid = p[2:4].lower()
        if cid in self.db.classes:
            self.issue(lineno, 3, DUPLICATE)
            self.block = _SKIP
            return
        self.dclass = self.db.classes[cid] = DeviceClass(cid, name)
        self.block, self.level2 = _CLASS, _L2_CLASS

    def generic_line(self, lineno: int, p: str) -> None:
        bad = _bad_hex(p, 2, 4)
        if bad >= 0 or len(p) != 6:
            self.issue(lineno, (bad if bad >= 0 else 6) + 1, PARSE_ERROR)
            self.block = _SKIP
            return
        vid = p[2:6].lower()
        if vid not in self.db.vendors:
            self.issue(lineno, 3, NO_VENDOR)
            self.block = _SKIP
            return
        self.generic_vendor = vid
        self.block = _GENERIC

    def vendor_line(self, lineno: int, line: str, p: str) -> None:
        bad = _field_error(p, 0, 4)
        if bad >= 0:
            self.issue(lineno, bad + 1, PARSE_ERROR)
            self.block = _SKIP
            return
        name = self._name(lineno, line, p, 5)
        if not name:
            self.block = _SKIP
            return
        vid = _intern(p[:4].lower())  # one string per id, however often the file repeats it
        if vid in self.db.vendors:
            self.issue(lineno, 1, DUPLICATE)
            self.block = _SKIP
            return
        self.vendor = self.db.vendors[vid] = Vendor(vid, name)
        self.block = _VENDOR

    def level1_line(self, lineno: int, line: str, p: str) -> None:
        """A device, a subclass or a generic subsystem."""
        self.level1, self.level2 = None, _L2_SKIP
        block = self.block
        if block == _NONE:
            self.issue(lineno, 1, PARSE_ERROR)
            return
        width = 2 if block == _CLASS else 4
        bad = _field_error(p, 0, width)
        if bad >= 0:
            self.issue(lineno, bad + 2, PARSE_ERROR)
            return
        name = self._name(lineno, line, p, width + 1)
        if not name:
            return
        eid = _intern(p[:width].lower())
        if block == _VENDOR:
            assert self.vendor is not None
            if eid in self.vendor.devices:
                self.issue(lineno, 2, DUPLICATE)
                return
            self.level1 = self.vendor.devices[eid] = Device(eid, name)
            self.level2 = _L2_DEVICE
        elif block == _CLASS:
            assert self.dclass is not None
            subclass = self.dclass.subclasses.get(eid)
            if subclass is None:
                subclass = self.dclass.subclasses[eid] = Subclass(eid, name)
            elif subclass.name:
                self.issue(lineno, 2, DUPLICATE)
                return
            else:  # it held prog-ifs listed right under the class line
                subclass.name = name
            self.level1, self.level2 = subclass, _L2_SUBCLASS
        else:  # _GENERIC
            key = (self.generic_vendor, eid)
            if key in self.db.generic_subsystems:
                self.issue(lineno, 2, DUPLICATE)
                return
            self.db.generic_subsystems[key] = name
            self.level2 = _L2_NONE  # pciutils allows nothing under it

    def subsystem_line(self, lineno: int, line: str, p: str) -> None:
        device = self.level1
        assert isinstance(device, Device)
        bad = _field_error(p, 0, 4)
        if bad < 0:
            bad = _field_error(p, 5, 4)
        if bad >= 0:
            self.issue(lineno, bad + 3, PARSE_ERROR)
            return
        name = self._name(lineno, line, p, 10)
        if not name:
            return
        key = (_intern(p[:4].lower()), _intern(p[5:9].lower()))
        if key in device.subsystems:
            self.issue(lineno, 3, DUPLICATE)
            return
        device.subsystems[key] = Subsystem(key[0], key[1], name)

    def prog_if_line(self, lineno: int, line: str, p: str) -> None:
        bad = _field_error(p, 0, 2)
        if bad >= 0:
            self.issue(lineno, bad + 3, PARSE_ERROR)
            return
        name = self._name(lineno, line, p, 3)
        if not name:
            return
        if self.level2 == _L2_CLASS:
            # Right under the class line: pciutils files it under subclass
            # 00, which need not be named.
            assert self.dclass is not None
            self.level1 = self.dclass.subclasses.get("00")
            if self.level1 is None:
                self.level1 = self.dclass.subclasses["00"] = Subclass("00", "")
        subclass = self.level1
        assert isinstance(subclass, Subclass)
        pid = p[:2].lower()
        if pid in subclass.prog_ifs:
            self.issue(lineno, 3, DUPLICATE)
            return
        subclass.prog_ifs[pid] = ProgIf(pid, name)
