"""The pci.ids format, stated as a pyparsing grammar.

This module is the readable definition of what a pci.ids file may contain
and what it means. It follows pciutils' reader (``lib/names-parse.c``,
pciutils 3.x) rule for rule, and goes on where pciutils stops: every
malformed line becomes a :class:`~.model.SyntaxIssue`, and the line is
skipped together with everything it nests, so a damaged file still yields
every entry that is unambiguous. :mod:`.loader` is the fast hand-written
twin used on the hot path; tests prove the two build equal databases and
report the same issues.

**Lines.** pciutils reads the file with ``fgets`` into a 1024-byte buffer,
so a *line* is what one ``fgets`` call returns: up to and including the next
``\\n``, but never more than 1023 bytes. Line numbers count these reads;
they are the physical line numbers unless a line has 1023 bytes or more.

* The text of a line ends at its first ``\\n``, ``\\r`` or NUL byte.
  ``\\r`` is a terminator anywhere, so ``\\r\\n`` files read fine.
* If no ``\\n`` or ``\\r`` ends the text (a NUL came first, or the read
  filled the buffer) and the file is not at its end, the line is
  **"Line too long"**. (pciutils says that for an embedded NUL too.) The
  rest of a long line is read, and judged, as the next line.
* One trailing space or tab is dropped (exactly one).
* A line that is then empty or blank, or whose first non-blank character
  is ``#``, is ignored: blank lines and comments. Comments before the first
  entry form the header; ``# Version: ...`` and ``# Date: ...`` there give
  :attr:`PciDatabase.version` and :attr:`PciDatabase.date`.
* The *nesting level* is the number of leading tabs (tabs only).

**Entries.** ``H`` is a hex digit of either case; *blank* is one space or
tab; a *name* is everything after the blanks that follow the ids, and must
not be empty (it may contain anything else, tabs and invalid UTF-8
included; it keeps trailing blanks but the single one dropped above)::

    level 0   HHHH blank name        vendor           (opens a vendor block)
              C HH blank name        device class     (opens a class block)
              S HHHH                 generic subsystems of vendor HHHH,
                                     which must already be listed; nothing
                                     may follow the id
              X anything             X is any other capital letter A-Z:
                                     an unknown block, ignored with all it
                                     nests (reserved for future use)
    level 1   HHHH blank name        device (vendor block)
              HHHH blank name        subsystem dddd of vendor vvvv for any
                                     device (S vvvv block)
              HH blank name          subclass (class block)
    level 2   HHHH blank HHHH blank name
                                     subsystem (under a device)
              HH blank name          programming interface (under a
                                     subclass, or directly under the class
                                     line, where pciutils files it under
                                     subclass 00)
    level 3+                         never allowed ("Parse error")

A level-1 line with no block to belong to, or a level-2 line with nothing
above it (under a vendor line, in an ``S`` block, or with no block) is a
"Parse error". An entry whose ids were already listed (the same vendor, the
same device of that vendor, ...) is a "Duplicate entry": the first one
wins. Ids compare as numbers, so ``10DE`` duplicates ``10de``.

**Issues.** Messages are pciutils' own: ``Parse error``, ``Line too
long``, ``Duplicate entry``, ``Vendor does not exist``; a ``Parse error``
of the grammar also says, in words, what was expected at the column (the
name of the element that failed there: ``a 4-digit hex device id``, ``a
space or tab after the id``, ...). The column is
1-based, in characters of the line decoded as UTF-8 (invalid bytes count
one each): the first character that does not fit the line's form (for a
missing name, one past the end of the line); the id for a duplicate or an
``S`` block's unknown vendor; one past the text pciutils could read for a
line too long; 1 for a line that may not stand where it does (nested too
deep, or with nothing to nest under).

The lenient reading: a malformed or too long top-level line is skipped with
its whole block, a level-1 line with what it nests, a level-2 line alone;
a too long comment is just skipped. Line numbers and the first issue are
exactly where pciutils stops (``lspci: Parse error at FILE, line N``).
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TypeVar, cast

import pyparsing as pp

from pciname.errors import PcinameBaseError
from pciname.pciids.model import (
    DUPLICATE,
    LINE_BUFFER,
    LINE_TOO_LONG,
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

__all__ = [
    "CLASS_LINE",
    "DEVICE_LINE",
    "GENERIC_LINE",
    "GENERIC_SUBSYSTEM_LINE",
    "HEADER_LINE",
    "IGNORED_LINE",
    "LINE_BUFFER",
    "PROG_IF_LINE",
    "SUBCLASS_LINE",
    "SUBSYSTEM_LINE",
    "TOP_LEVEL_LINE",
    "UNKNOWN_LINE",
    "VENDOR_LINE",
    "CheckReport",
    "Line",
    "check_bytes",
    "parse_bytes",
    "read_lines",
]


# ---------------------------------------------------------------------------
# Lines: what one fgets() call of pciutils returns
# ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Line:
    """One line as pciutils reads it.

    ``text`` is the line up to its terminator, decoded (surrogateescape);
    ``too_long`` is True when pciutils would stop with "Line too long".
    """

    number: int
    text: str
    too_long: bool


def read_lines(data: bytes) -> Iterator[Line]:
    """Split ``data`` the way pciutils' ``fgets`` loop does."""
    size = LINE_BUFFER - 1
    end = len(data)
    pos = 0
    number = 0
    while pos < end:
        newline = data.find(b"\n", pos, pos + size)
        stop = pos + size if newline < 0 else newline + 1
        chunk = data[pos:stop]
        # fgets hit the end of the file only if it wanted more than it got
        at_eof = newline < 0 and stop >= end and len(chunk) < size
        pos = min(stop, end)
        number += 1
        cut = len(chunk)
        for terminator in (b"\n", b"\r", b"\0"):
            found = chunk.find(terminator, 0, cut)
            if found >= 0:
                cut = found
        terminated = cut < len(chunk) and chunk[cut] in b"\n\r"
        yield Line(number, chunk[:cut].decode("utf-8", "surrogateescape"), not terminated and not at_eof)


# ---------------------------------------------------------------------------
# Lexical elements
# ---------------------------------------------------------------------------

HEX_DIGITS = "0123456789abcdefABCDEF"


class HexId(pp.Token):
    """Exactly ``width`` hex digits, either case; the value is lower-cased.
    ``what`` it is names it in issues (``a 4-digit hex device id``).

    On failure the location is the first character that is not a hex digit
    (or the end of the line), so issues point at it.
    """

    def __init__(self, width: int, what: str) -> None:
        super().__init__()
        self.width = width
        self.set_name(f"a {width}-digit hex {what}")

    def parseImpl(self, instring: str, loc: int, do_actions: bool = True) -> tuple[int, str]:  # noqa: N802 (pyparsing's API)
        end = loc + self.width
        for index in range(loc, end):
            if index >= len(instring) or instring[index] not in HEX_DIGITS:
                raise pp.ParseException(instring, index, self.errmsg, self)
        return end, instring[loc:end].lower()


class Blank(pp.Token):
    """One space or tab (the separator after an id); yields nothing."""

    def __init__(self) -> None:
        super().__init__()
        self.set_name("a space or tab after the id")

    def parseImpl(self, instring: str, loc: int, do_actions: bool = True) -> tuple[int, list[str]]:  # noqa: N802
        if loc < len(instring) and instring[loc] in " \t":
            return loc + 1, []
        raise pp.ParseException(instring, loc, self.errmsg, self)


class Name(pp.Token):
    """Blanks, then the rest of the line, which must not be empty.

    A missing name fails at the end of the line.
    """

    def __init__(self) -> None:
        super().__init__()
        self.set_name("a name after the id")

    def parseImpl(self, instring: str, loc: int, do_actions: bool = True) -> tuple[int, str]:  # noqa: N802
        start = loc
        end = len(instring)
        while start < end and instring[start] in " \t":
            start += 1
        if start == end:
            raise pp.ParseException(instring, end, self.errmsg, self)
        return end, instring[start:]


_Element = TypeVar("_Element", bound=pp.ParserElement)


def _line(expr: _Element, name: str) -> _Element:
    """A whole line: no implicit whitespace skipping, tabs kept."""
    expr.set_name(name)
    expr.leave_whitespace(recursive=True)
    expr.parse_with_tabs()
    return expr


TAB = pp.Literal("\t")
BLANK = Blank()
NAME = Name()("name")
END = pp.StringEnd().set_name("the end of the line (an S line holds a vendor id and nothing more)")

# ``a - b`` is pyparsing's "no backtracking after a": once a line has shown
# what kind it is, a mismatch further on is an error at that spot. Lines
# that end in a NAME (or a regex reaching the end) need no explicit END.

# Level 0
CLASS_LINE = _line(pp.Literal("C ") - HexId(2, "class id")("class") - BLANK - NAME, "class line")
GENERIC_LINE = _line(pp.Literal("S ") - HexId(4, "vendor id")("generic") - END, "generic subsystem block line")
# (Naming the result copies the element, typed as any ParserElement: these
# stay Regex, whose compiled .re the checker below uses.)
UNKNOWN_LINE = _line(cast(pp.Regex, pp.Regex(r"[A-Z] .*")("unknown")), "unknown block line")
VENDOR_LINE = _line(HexId(4, "vendor id")("vendor") - BLANK - NAME, "vendor line")
TOP_LEVEL_LINE = _line(CLASS_LINE | GENERIC_LINE | UNKNOWN_LINE | VENDOR_LINE, "top-level line")

# Level 1
DEVICE_LINE = _line(TAB + HexId(4, "device id")("id") - BLANK - NAME, "device line")
GENERIC_SUBSYSTEM_LINE = _line(TAB + HexId(4, "subsystem device id")("id") - BLANK - NAME, "generic subsystem line")
SUBCLASS_LINE = _line(TAB + HexId(2, "subclass id")("id") - BLANK - NAME, "subclass line")

# Level 2
SUBSYSTEM_LINE = _line(
    pp.Literal("\t\t")
    + HexId(4, "subsystem vendor id")("subvendor")
    - BLANK
    - HexId(4, "subsystem device id")("subdevice")
    - BLANK
    - NAME,
    "subsystem line",
)
PROG_IF_LINE = _line(pp.Literal("\t\t") + HexId(2, "prog-if id")("id") - BLANK - NAME, "prog-if line")

# Ignored lines (blank, or a comment at any nesting), and the header fields.
IGNORED_LINE = _line(cast(pp.Regex, pp.Regex(r"[ \t]*(?:#.*)?\Z")("ignored")), "blank line or comment")
HEADER_LINE = _line(
    pp.Regex(r"[ \t]*#[ \t]*(?P<key>Version|Date):[ \t]*(?P<value>.*?)[ \t]*\Z"),
    "header field",
)

# What may stand on a line, by nesting level and by what it would belong to
# (pciutils' `cat`): the block a level-1 line is in, and the kind of the
# level-1 entry a level-2 line is under ("class" when it comes right after
# the class line). A comment fits anywhere; a combination not listed here
# allows nothing but comments: "Parse error" at column 1.
_VENDOR, _CLASS, _GENERIC = "vendor", "class", "generic"
TOP_LEVEL = _line(
    TOP_LEVEL_LINE | IGNORED_LINE,
    "a top-level line: a 4-digit hex vendor id and a name, C and a class id and a name, S and a vendor id, "
    "a capital letter and a space (a block pciutils ignores), or a comment",
)
LEVEL1 = {
    _VENDOR: _line(DEVICE_LINE | IGNORED_LINE, "device line or comment"),
    _CLASS: _line(SUBCLASS_LINE | IGNORED_LINE, "subclass line or comment"),
    _GENERIC: _line(GENERIC_SUBSYSTEM_LINE | IGNORED_LINE, "generic subsystem line or comment"),
}
LEVEL2 = {
    "device": _line(SUBSYSTEM_LINE | IGNORED_LINE, "subsystem line or comment"),
    "subclass": _line(PROG_IF_LINE | IGNORED_LINE, "prog-if line or comment"),
    _CLASS: _line(PROG_IF_LINE | IGNORED_LINE, "prog-if line or comment"),
}


# ---------------------------------------------------------------------------
# Well-formed lines in one step
# ---------------------------------------------------------------------------
#
# Running the expressions above takes pyparsing's general machinery, tens of
# microseconds a line. A well-formed line needs none of it: each kind of
# entry line also has a *form*, a pyparsing Regex that accepts exactly the
# lines its expression accepts and yields the same fields (the tests prove
# it on generated lines). The builder matches a line against the form that
# fits where it stands (one compiled-pattern match) and runs the expression
# only on a line the form rejects, to find where it goes wrong. So a file
# costs one match per line, plus one pyparsing parse per malformed line;
# never a parse of the whole file. Blank lines and comments are matched with
# IGNORED_LINE's own pattern, and the header fields with HEADER_LINE's.

_HEX2 = "[0-9a-fA-F]{2}"
_HEX4 = "[0-9a-fA-F]{4}"
_NAMED = r"[ \t]+(?P<name>[^ \t].*)"  # BLANK - NAME: blanks, then a rest that is not empty


def _form(pattern: str, name: str) -> pp.Regex:
    form = pp.Regex(pattern, flags=re.DOTALL)
    return _line(form, name)


VENDOR_FORM = _form(rf"(?P<vendor>{_HEX4}){_NAMED}", "well-formed vendor line")
CLASS_FORM = _form(rf"C (?P<class>{_HEX2}){_NAMED}", "well-formed class line")
GENERIC_FORM = _form(rf"S (?P<generic>{_HEX4})\Z", "well-formed generic subsystem block line")
DEVICE_FORM = _form(rf"\t(?P<id>{_HEX4}){_NAMED}", "well-formed device line")
GENERIC_SUBSYSTEM_FORM = DEVICE_FORM  # the same shape
SUBCLASS_FORM = _form(rf"\t(?P<id>{_HEX2}){_NAMED}", "well-formed subclass line")
SUBSYSTEM_FORM = _form(rf"\t\t(?P<subvendor>{_HEX4})[ \t](?P<subdevice>{_HEX4}){_NAMED}", "well-formed subsystem line")
PROG_IF_FORM = _form(rf"\t\t(?P<id>{_HEX2}){_NAMED}", "well-formed prog-if line")

# Each line expression and its form (UNKNOWN_LINE, IGNORED_LINE and
# HEADER_LINE are single patterns already).
FORMS = (
    (VENDOR_LINE, VENDOR_FORM),
    (CLASS_LINE, CLASS_FORM),
    (GENERIC_LINE, GENERIC_FORM),
    (DEVICE_LINE, DEVICE_FORM),
    (GENERIC_SUBSYSTEM_LINE, GENERIC_SUBSYSTEM_FORM),
    (SUBCLASS_LINE, SUBCLASS_FORM),
    (SUBSYSTEM_LINE, SUBSYSTEM_FORM),
    (PROG_IF_LINE, PROG_IF_FORM),
)

_ignored = IGNORED_LINE.re.match
_header_field = HEADER_LINE.re.match
_unknown = UNKNOWN_LINE.re.match
# A top-level line that begins "C " or "S " is a class or generic line or an
# error: the grammar commits to it there (the "-" after the literal).
_TOP_LEVEL_COMMITTED = {"C ": CLASS_FORM.re.match, "S ": GENERIC_FORM.re.match}
_vendor = VENDOR_FORM.re.match
_LEVEL1_FORM = {
    _VENDOR: DEVICE_FORM.re.match,
    _CLASS: SUBCLASS_FORM.re.match,
    _GENERIC: GENERIC_SUBSYSTEM_FORM.re.match,
}
_LEVEL2_FORM = {"device": SUBSYSTEM_FORM.re.match, "subclass": PROG_IF_FORM.re.match, _CLASS: PROG_IF_FORM.re.match}


# ---------------------------------------------------------------------------
# The structure: blocks, nesting, and the database they build
# ---------------------------------------------------------------------------


@dataclass(slots=True)
class CheckReport:
    """What :func:`check_bytes` found in one pci.ids file."""

    issues: list[SyntaxIssue]
    version: str | None
    date: str | None
    vendors: int
    devices: int
    subsystems: int
    generic_subsystems: int
    classes: int
    subclasses: int
    prog_ifs: int
    database: PciDatabase = field(repr=False)

    @property
    def ok(self) -> bool:
        return not self.issues


_FAILURES_KEPT = 4096

# What a line nested where nothing may stand was expected to be (the
# expressions say the rest: their names).
TOO_DEEP = "at most two tabs before an entry (only a comment may be nested deeper)"
NO_BLOCK = "a vendor or class line before this one (a tab-indented line needs a block to belong to)"
NOTHING_ABOVE = "a device or subclass line above this one (two tabs nest a line under one)"


class _Builder:
    """Walks the lines, keeps pciutils' block state, fills the database."""

    def __init__(self) -> None:
        self.db = PciDatabase()
        self.block: str | None = None  # _VENDOR, _CLASS, _GENERIC, "unknown", "skip"
        self.vendor: Vendor | None = None
        self.dclass: DeviceClass | None = None
        self.generic_vendor = ""
        # What level-2 lines attach to: "device", "subclass", _CLASS (right
        # after the class line), None (nothing: only comments), or "skip"
        # (the level-1 line above was bad: ignore what it nests).
        self.level1_kind: str | None = None
        self.level1: Device | Subclass | None = None
        self.in_header = True
        # Where the expression failed on a malformed line and what it
        # expected there, by expression and text: a file that repeats a bad
        # line parses it once.
        self.failures: dict[tuple[int, str], tuple[int, str]] = {}

    def issue(self, number: int, column: int, message: str, expected: str = "") -> None:
        self.db.issues.append(SyntaxIssue(number, column, message, expected))

    def feed(self, line: Line) -> None:
        self.feed_text(line.number, line.text, line.too_long)

    def feed_text(self, number: int, text: str, too_long: bool = False) -> None:
        """One line: its number, its text, whether it is too long."""
        if too_long:
            self.issue(number, len(text) + 1, LINE_TOO_LONG)
            self._skip_nested(text)
            return
        if text[-1:] in (" ", "\t"):
            text = text[:-1]
        if _ignored(text):  # blank or a comment: fits anywhere (IGNORED_LINE)
            if self.in_header and text:
                self._header(text)
            return
        self.feed_entry(number, text)

    def feed_entry(self, number: int, text: str) -> None:
        """A line that is not blank or a comment (trailing blank dropped)."""
        self.in_header = False
        nest = len(text) - len(text.lstrip("\t"))
        if nest == 0:
            self._top_level(number, text)
        elif self.block in ("unknown", "skip"):
            return  # ignored
        elif nest == 1:
            self._level1(number, text)
        elif nest == 2:
            self._level2(number, text)
        else:  # level 3 or deeper: only comments
            self.issue(number, 1, PARSE_ERROR, TOO_DEEP)

    def _skip_nested(self, text: str) -> None:
        """A line too long to read: skip it and what it nests."""
        body = text.lstrip(" \t")
        if not body or body[0] == "#":
            return
        self.in_header = False
        nest = len(text) - len(text.lstrip("\t"))
        if nest == 0:
            self.block = "skip"
        elif nest == 1:
            self.level1_kind, self.level1 = "skip", None

    def _entry(
        self, number: int, form: Callable[[str], re.Match[str] | None], expr: pp.ParserElement, text: str
    ) -> dict[str, str]:
        """The fields of the entry on the line (not blank, not a comment):
        from its form when it is well formed, else from the expression, which
        says where it goes wrong (then the issue is recorded: _Bad)."""
        found = form(text)
        if found is not None:
            return found.groupdict()
        key = (id(expr), text)
        failed = self.failures.get(key)
        if failed is None:
            try:
                fields: dict[str, str] = expr.parse_string(text).as_dict()
                return fields
            except pp.ParseBaseException as error:
                failed = error.loc, str(error.msg).removeprefix("Expected ")
            if len(self.failures) >= _FAILURES_KEPT:
                self.failures.clear()
            self.failures[key] = failed
        self.issue(number, failed[0] + 1, PARSE_ERROR, failed[1])
        raise _Bad

    def _header(self, text: str) -> None:
        found = _header_field(text)  # HEADER_LINE
        if found is None:
            return
        attribute = "version" if found["key"] == "Version" else "date"
        if getattr(self.db, attribute) is None:
            setattr(self.db, attribute, found["value"])

    def _top_level(self, number: int, text: str) -> None:
        self.level1_kind, self.level1 = None, None
        form = _TOP_LEVEL_COMMITTED.get(text[:2])
        if form is None:
            if _unknown(text):  # UNKNOWN_LINE
                self.block = "unknown"
                return
            form = _vendor
        try:
            found = self._entry(number, form, TOP_LEVEL, text)
        except _Bad:
            self.block = "skip"
            return
        db = self.db
        if "vendor" in found:
            vid = sys.intern(found["vendor"].lower())
            if vid in db.vendors:
                self.issue(number, 1, DUPLICATE)
                self.block = "skip"
                return
            self.vendor = db.vendors[vid] = Vendor(vid, found["name"])
            self.block = _VENDOR
        elif "class" in found:
            cid = found["class"].lower()
            if cid in db.classes:
                self.issue(number, 3, DUPLICATE)
                self.block = "skip"
                return
            self.dclass = db.classes[cid] = DeviceClass(cid, found["name"])
            self.block = self.level1_kind = _CLASS
        elif "generic" in found:
            vid = found["generic"].lower()
            if vid not in db.vendors:
                self.issue(number, 3, NO_VENDOR)
                self.block = "skip"
                return
            self.generic_vendor = vid
            self.block = _GENERIC
        else:
            self.block = "unknown"

    def _level1(self, number: int, text: str) -> None:
        block = self.block
        self.level1_kind, self.level1 = "skip", None
        if block is None:  # no block to belong to: only comments
            self.issue(number, 1, PARSE_ERROR, NO_BLOCK)
            return
        try:
            found = self._entry(number, _LEVEL1_FORM[block], LEVEL1[block], text)
        except _Bad:
            return
        eid, name = sys.intern(found["id"].lower()), found["name"]
        if block == _VENDOR:
            assert self.vendor is not None
            if eid in self.vendor.devices:
                self.issue(number, 2, DUPLICATE)
                return
            self.level1 = self.vendor.devices[eid] = Device(eid, name)
            self.level1_kind = "device"
        elif block == _CLASS:
            assert self.dclass is not None
            subclass = self.dclass.subclasses.get(eid)
            if subclass is not None and subclass.name:
                self.issue(number, 2, DUPLICATE)
                return
            if subclass is None:
                subclass = self.dclass.subclasses[eid] = Subclass(eid, name)
            else:  # it held prog-ifs listed right under the class line
                subclass.name = name
            self.level1, self.level1_kind = subclass, "subclass"
        else:
            key = (self.generic_vendor, eid)
            if key in self.db.generic_subsystems:
                self.issue(number, 2, DUPLICATE)
                return
            self.db.generic_subsystems[key] = name
            self.level1_kind = None  # nothing may nest under it

    def _level2(self, number: int, text: str) -> None:
        kind = self.level1_kind
        if kind == "skip":
            return
        if kind is None:  # nothing to nest under: only comments
            self.issue(number, 1, PARSE_ERROR, NOTHING_ABOVE)
            return
        try:
            found = self._entry(number, _LEVEL2_FORM[kind], LEVEL2[kind], text)
        except _Bad:
            return
        if kind == "device":
            device = self.level1
            assert isinstance(device, Device)
            # one string per id, however often the file repeats it (memory)
            key = (sys.intern(found["subvendor"].lower()), sys.intern(found["subdevice"].lower()))
            if key in device.subsystems:
                self.issue(number, 3, DUPLICATE)
                return
            device.subsystems[key] = Subsystem(key[0], key[1], found["name"])
            return
        if kind == _CLASS:
            # Right under the class line: pciutils files it under subclass 00,
            # which need not be named; a nameless Subclass holds it.
            assert self.dclass is not None
            subclass = self.dclass.subclasses.get("00")
            if subclass is None:
                subclass = self.dclass.subclasses["00"] = Subclass("00", "")
        else:
            subclass = self.level1  # type: ignore[assignment]
        assert isinstance(subclass, Subclass)
        pid = found["id"].lower()
        if pid in subclass.prog_ifs:
            self.issue(number, 3, DUPLICATE)
            return
        subclass.prog_ifs[pid] = ProgIf(pid, found["name"])


class _Bad(PcinameBaseError):
    """The line was malformed (the issue is recorded)."""


_BLOCK_BYTES = 1 << 20


def _blocks(data: bytes) -> Iterator[tuple[list[str], bool]]:
    """The physical lines of ``data`` (split at ``\\n``, which they lose),
    decoded, about a megabyte at a time (never the whole file at once), and
    whether the block's last line is the file's unterminated last line."""
    pos, end = 0, len(data)
    while pos < end:
        stop = data.find(b"\n", pos + _BLOCK_BYTES)
        stop = end if stop < 0 else stop + 1
        lines = data[pos:stop].decode("utf-8", "surrogateescape").split("\n")
        unterminated = lines[-1] != ""
        if not unterminated:
            lines.pop()
        yield lines, unterminated
        pos = stop


def parse_bytes(data: bytes) -> PciDatabase:
    """The database the grammar reads from ``data`` (issues included).

    Line by line, as :func:`read_lines` reads them, with a shortcut: a
    physical line short enough for one read and without NUL is one read
    (its text ends at the first ``\\r``); any other goes through
    read_lines, since reads never reach past a ``\\n``. Blank lines and
    comments are matched with IGNORED_LINE's pattern, entries with their
    forms (see FORMS)."""
    builder = _Builder()
    feed = builder.feed_text
    longest = LINE_BUFFER - 2  # bytes before the "\n" of a line read at once
    has_nul = b"\0" in data
    number = 0
    for lines, unterminated in _blocks(data):
        last = len(lines) - 1
        for index, raw in enumerate(lines):
            if (len(raw) > longest // 4 and len(raw.encode("utf-8", "surrogateescape")) > longest) or (
                has_nul and "\0" in raw
            ):
                chunk = raw.encode("utf-8", "surrogateescape")
                if not (unterminated and index == last):
                    chunk += b"\n"
                for line in read_lines(chunk):
                    feed(number + line.number, line.text, line.too_long)
                number += line.number
                continue
            number += 1
            cut = raw.find("\r")
            feed(number, raw if cut < 0 else raw[:cut])
    return builder.db


def check_bytes(data: bytes) -> CheckReport:
    """Parse ``data`` with the grammar and report issues, header and counts."""
    db = parse_bytes(data)
    devices = [device for vendor in db.vendors.values() for device in vendor.devices.values()]
    subclasses = [sub for dclass in db.classes.values() for sub in dclass.subclasses.values()]
    return CheckReport(
        issues=list(db.issues),
        version=db.version,
        date=db.date,
        vendors=len(db.vendors),
        devices=len(devices),
        subsystems=sum(len(device.subsystems) for device in devices),
        generic_subsystems=len(db.generic_subsystems),
        classes=len(db.classes),
        subclasses=sum(1 for sub in subclasses if sub.name),
        prog_ifs=sum(len(sub.prog_ifs) for sub in subclasses),
        database=db,
    )
