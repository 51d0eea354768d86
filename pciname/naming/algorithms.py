"""The plugins' ways of turning a device id into a name: the KubeVirt
plugin's four (:data:`ALGORITHMS`) and the Kata plugin's go-nvlib
(:data:`GO_NVLIB`, :mod:`pciname.naming.kata`).

Each algorithm is given twice:

* a small pure function over the file's lines (``scan_lines`` output),
  written to read like the Go code it reproduces, one line at a time; it is
  the reference, used by tests and for ids the index does not cover;
* :class:`NameIndex`, which answers the same question for every id after one
  pass over the file, because the whole-file algorithms scan the whole file
  per id in Go and a bulk lookup of 2,000 ids cannot afford that here.

Tests prove the two agree on every id of every real file and on generated
files. A name of ``""`` means the plugin found none (it then falls back to
the id, or, in v1.0.0, skips the device). go-nvlib differs in one way: a
device its parse does not hold is ``UNKNOWN_DEVICE``
(:func:`absent_name`), and ``""`` is a name that nothing of survived the
filter; it reads the file's lines as ``ReadBytes`` gives them
(:func:`file_lines`).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from pciname.errors import UnknownAlgorithmError
from pciname.naming import kata
from pciname.naming.gotext import (
    filter_2019,
    filter_upper,
    scan_lines,
    slash_dot,
    spaces_to_underscore,
    to_upper,
    trim_space,
)
from pciname.pciids.ids import NVIDIA_VENDOR_ID

WHOLE_FILE_2019 = "whole-file-2019"
WHOLE_FILE_UPPER = "whole-file-upper"
WHOLE_FILE_ANCHORED = "whole-file-anchored"
VENDOR_SECTION = "vendor-section"
#: The KubeVirt plugin's algorithms, in release order.
ALGORITHMS = (WHOLE_FILE_2019, WHOLE_FILE_UPPER, WHOLE_FILE_ANCHORED, VENDOR_SECTION)
#: The Kata sandbox device plugin's, v0.0.2 and later (v0.0.1 is vendor-section).
GO_NVLIB = "go-nvlib"
#: Every algorithm a profile (or ``--algorithm``) may name.
ALL_ALGORITHMS = (*ALGORITHMS, GO_NVLIB)


def absent_name(algorithm: str) -> str:
    """The name an algorithm gives an id its file has no line for."""
    return kata.UNKNOWN_DEVICE if algorithm == GO_NVLIB else ""


def file_lines(algorithm: str, text: str) -> list[str]:
    """The lines an algorithm's Go code reads of a file: ``bufio.Scanner``'s
    for the KubeVirt plugin's, ``ReadBytes('\\n')``'s for go-nvlib."""
    return kata.go_nvlib_lines(text) if algorithm == GO_NVLIB else scan_lines(text)


# -- the name a matched line yields -------------------------------------------


def clean_2019(rest: str) -> str:
    """v1.0.x: trim, white-space runs to ``_``, keep ``[A-Za-z0-9_]``."""
    return filter_2019(spaces_to_underscore(trim_space(rest)))


def clean_upper(rest: str) -> str:
    """v1.1.1 and later: trim, upper, ``/`` ``.`` to ``_``, spaces, filter."""
    return filter_upper(spaces_to_underscore(slash_dot(to_upper(trim_space(rest)))))


# -- reference implementations: one pass per id, as the Go code does ----------


def _whole_file(lines: Iterable[str], device_id: str, clean: Callable[[str], str], anchored: bool) -> str:
    for line in lines:
        line = trim_space(line)
        if not line or device_id not in line:
            continue
        # Go's strings.Split at "" splits into code points (an empty vGPU
        # type string is looked up like a device id).
        parts = line.split(device_id) if device_id else list(line)
        if len(parts) != 2:
            return ""
        if anchored and parts[0] != "":
            continue
        return clean(parts[1])
    return ""


def whole_file_2019(lines: Iterable[str], device_id: str) -> str:
    """v1.0.0 - v1.0.1: the first line anywhere that contains the id."""
    return _whole_file(lines, device_id, clean_2019, anchored=False)


def whole_file_upper(lines: Iterable[str], device_id: str) -> str:
    """v1.1.1 - v1.2.0: as whole-file-2019, upper-cased."""
    return _whole_file(lines, device_id, clean_upper, anchored=False)


def whole_file_anchored(lines: Iterable[str], device_id: str) -> str:
    """v1.2.1: as whole-file-upper, skipping lines where text precedes the id."""
    return _whole_file(lines, device_id, clean_upper, anchored=True)


def vendor_section(lines: Iterable[str], device_id: str) -> str:
    """v1.2.2 and later: device lines of the first line starting ``10de``."""
    it = iter(lines)
    for line in it:
        if line.startswith(NVIDIA_VENDOR_ID):
            break
    else:
        return ""
    prefix = "\t" + device_id
    for line in it:
        if line.startswith("#"):
            continue
        if not line.startswith("\t"):
            return ""
        if line.startswith(prefix):
            return clean_upper(line[len(prefix) :])
    return ""


REFERENCE: dict[str, Callable[[Iterable[str], str], str]] = {
    WHOLE_FILE_2019: whole_file_2019,
    WHOLE_FILE_UPPER: whole_file_upper,
    WHOLE_FILE_ANCHORED: whole_file_anchored,
    VENDOR_SECTION: vendor_section,
    GO_NVLIB: kata.go_nvlib,
}


def check_algorithm(name: str) -> str:
    if name not in REFERENCE:
        raise UnknownAlgorithmError(f"unknown algorithm {name!r}; choose one of: {', '.join(ALL_ALGORITHMS)}")
    return name


# -- the index: every id's deciding line, found in one pass --------------------

# Runs of lower-case hex long enough to hold an id: every overlapping
# 4-character window of one is an id sysfs gives.
_HEX_RUN = re.compile(r"[0-9a-f]{4,}")
_INDEXED_ID = re.compile(r"[0-9a-f]{4}\Z")
_ALL_IDS = 16**4


def is_indexed_id(device_id: str) -> bool:
    """True for the ids sysfs gives (4 lower-case hex digits): those the index covers."""
    return _INDEXED_ID.match(device_id) is not None


def section_vendor(lines: Sequence[str], number: int) -> str | None:
    """The vendor line whose section holds ``lines[number]`` (a vendor line
    is its own section's); None for a line of the header comments or of the
    device class list (``C`` lines)."""
    for at in range(number, -1, -1):
        line = lines[at]
        if _VENDOR_LINE.match(line):
            return line
        if line.startswith("C "):
            return None
    return None


_VENDOR_LINE = re.compile(r"[0-9a-f]{4}[ \t]")


class NameIndex:
    """Names by one algorithm over one file's lines, for any device id.

    Built in one pass: for each 4-hex-digit id, the line whose content
    decides the Go loop's answer (the first line containing the id for the
    whole-file algorithms, the first line that is either a match or a stop
    for the anchored one, the first ``\\t<id>`` line of the NVIDIA section for
    vendor-section; go-nvlib's raw device name for go-nvlib, whose parse
    is one pass already). Names are derived from that line on first request.
    Other ids (not 4 lower-case hex digits) fall back to the reference scan.
    """

    __slots__ = ("_clean", "_deciding", "_lines", "_names", "_positions", "algorithm")

    def __init__(self, lines: Sequence[str], algorithm: str) -> None:
        self.algorithm = check_algorithm(algorithm)
        self._lines = lines
        self._names: dict[str, str] = {}
        self._clean = clean_2019 if algorithm == WHOLE_FILE_2019 else clean_upper
        self._positions: dict[str, int] = {}
        if algorithm == GO_NVLIB:
            self._deciding = kata.go_nvlib_devices(lines)
        elif algorithm == VENDOR_SECTION:
            self._deciding = self._index_vendor_section(lines)
        else:
            self._deciding = self._index_whole_file(
                lines, anchored=algorithm == WHOLE_FILE_ANCHORED, positions=self._positions
            )

    @staticmethod
    def _index_vendor_section(lines: Sequence[str]) -> dict[str, str]:
        deciding: dict[str, str] = {}
        start = next((i for i, line in enumerate(lines) if line.startswith(NVIDIA_VENDOR_ID)), None)
        if start is None:
            return deciding
        for line in lines[start + 1 :]:
            if line.startswith("#"):
                continue
            if not line.startswith("\t"):
                break
            key = line[1:5]
            if key not in deciding and _INDEXED_ID.match(key):
                deciding[key] = line[5:]
        return deciding

    @staticmethod
    def _index_whole_file(lines: Sequence[str], anchored: bool, positions: dict[str, int]) -> dict[str, str]:
        # deciding[id] is the trimmed line that ends the Go loop for that id;
        # positions[id] its index in ``lines``.
        deciding: dict[str, str] = {}
        hex_runs = _HEX_RUN.findall
        for number, line in enumerate(lines):
            if len(deciding) == _ALL_IDS:
                break  # every id is decided: no later line changes anything
            runs = hex_runs(line)
            if not runs:
                continue
            # The ids (4-digit windows of the hex runs) no earlier line decided.
            fresh = {w for run in runs for i in range(len(run) - 3) if (w := run[i : i + 4]) not in deciding}
            if not fresh:
                continue
            line = trim_space(line)
            if anchored:
                # text precedes the only occurrence: Go skips the line
                fresh = {i for i in fresh if line.startswith(i) or line.count(i) != 1}
            # In the order the ids first occur on the line (trimming removes
            # no hex digit, so no window).
            for device_id in sorted(fresh, key=line.find):
                deciding[device_id] = line
                positions[device_id] = number
        return deciding

    def foreign_sources(self) -> dict[str, tuple[int, str, str]]:
        """For the whole-file algorithms: each indexed id whose name comes
        from a line in another vendor's section of the file (not NVIDIA's),
        as (the line's number, counted from 1; the vendor's line; the
        deciding line), both lines trimmed. Empty for the others: they read
        NVIDIA's section only."""
        found: dict[str, tuple[int, str, str]] = {}
        for device_id, number in self._positions.items():
            vendor = section_vendor(self._lines, number)
            if vendor is not None and not vendor.startswith(NVIDIA_VENDOR_ID) and self.name(device_id):
                found[device_id] = (number + 1, trim_space(vendor), self._deciding[device_id])
        return found

    def name(self, device_id: str) -> str:
        """The name the plugin derives for ``device_id`` (``""``: none)."""
        name = self._names.get(device_id)
        if name is not None:
            return name
        if not _INDEXED_ID.match(device_id):
            name = REFERENCE[self.algorithm](self._lines, device_id)
        else:
            line = self._deciding.get(device_id)
            if line is None:
                name = absent_name(self.algorithm)
            elif self.algorithm == GO_NVLIB:
                name = kata.format_device_name(line)
            elif self.algorithm == VENDOR_SECTION:
                name = clean_upper(line)
            else:
                parts = line.split(device_id)
                name = self._clean(parts[1]) if len(parts) == 2 else ""
        self._names[device_id] = name
        return name

    def candidates(self) -> list[str]:
        """Every indexed id that can yield a name other than the absent one,
        in file order."""
        return list(self._deciding)
