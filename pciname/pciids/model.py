"""The PCI IDs database as plain data.

One object per thing the pci.ids file names, keyed the way lspci looks them
up. Ids are lower-case hex strings exactly as wide as the format writes them
(``"10de"``, ``"2236"``, class ``"03"``), so keys read like the file does.
Names are ``str``: the file's bytes decoded as UTF-8 with ``surrogateescape``,
so a file with invalid UTF-8 loads, and ``name.encode("utf-8",
"surrogateescape")`` gives the file's bytes back.

Both loaders (the pyparsing grammar in :mod:`.grammar` and the fast loader in
:mod:`.loader`) build these objects; a test proves they build equal ones.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(slots=True)
class Subsystem:
    subvendor: str
    subdevice: str
    name: str


@dataclass(slots=True)
class Device:
    id: str
    name: str
    subsystems: dict[tuple[str, str], Subsystem] = field(default_factory=dict)


@dataclass(slots=True)
class Vendor:
    id: str
    name: str
    devices: dict[str, Device] = field(default_factory=dict)


@dataclass(slots=True)
class ProgIf:
    id: str
    name: str


@dataclass(slots=True)
class Subclass:
    """A subclass of a device class, with its programming interfaces.

    ``name`` is ``""`` only for the holder of prog-if lines that a file lists
    right under its class line: pciutils files those under subclass 00
    without naming that subclass (lookups then treat it as unnamed).
    """

    id: str
    name: str
    prog_ifs: dict[str, ProgIf] = field(default_factory=dict)


@dataclass(slots=True)
class DeviceClass:
    id: str
    name: str
    subclasses: dict[str, Subclass] = field(default_factory=dict)


# What pciutils (lib/names-parse.c) says of a malformed line, word for word;
# both readers (the pyparsing grammar and the fast loader) report these.
PARSE_ERROR = "Parse error"
LINE_TOO_LONG = "Line too long"
DUPLICATE = "Duplicate entry"
NO_VENDOR = "Vendor does not exist"

#: pciutils reads lines with fgets into a 1024-byte buffer (MAX_LINE): at
#: most 1023 bytes of a line, its newline included, come in one read.
LINE_BUFFER = 1024
MAX_LINE_BYTES = LINE_BUFFER - 1


@dataclass(slots=True, frozen=True)
class SyntaxIssue:
    """One malformed line: 1-based line and column, and what is wrong
    (pciutils' ``message``; the grammar adds, in words, what it ``expected``
    there: ``a 4-digit hex device id``; not compared, so both readers'
    issues stay equal)."""

    line: int
    column: int
    message: str
    expected: str = field(default="", compare=False)

    def format(self, filename: str) -> str:
        said = f": expected {self.expected}" if self.expected else ""
        return f"{filename}:{self.line}:{self.column}: {self.message}{said}"


@dataclass(slots=True)
class PciDatabase:
    """Everything one pci.ids file says.

    ``generic_subsystems`` holds the ``S vvvv`` blocks (subsystem names that
    apply to any device of subvendor ``vvvv``), keyed ``(vvvv, dddd)``.
    ``version`` and ``date`` come from the ``# Version:`` / ``# Date:``
    header comments when the file has them (older copies do not).
    ``issues`` lists the lines a lenient load skipped; it is empty for a
    well-formed file.
    """

    vendors: dict[str, Vendor] = field(default_factory=dict)
    classes: dict[str, DeviceClass] = field(default_factory=dict)
    generic_subsystems: dict[tuple[str, str], str] = field(default_factory=dict)
    version: str | None = None
    date: str | None = None
    issues: list[SyntaxIssue] = field(default_factory=list)

    def vendor_name(self, vendor_id: str) -> str | None:
        vendor = self.vendors.get(vendor_id)
        return vendor.name if vendor else None

    def device_name(self, vendor_id: str, device_id: str) -> str | None:
        vendor = self.vendors.get(vendor_id)
        if vendor is None:
            return None
        device = vendor.devices.get(device_id)
        return device.name if device else None
