"""Names exactly as ``lspci`` prints them (pciutils ``lib/names.c``).

Given a :class:`~.model.PciDatabase` and the ids of a PCI function, these
functions build the strings lspci prints with the same pci.ids file (udev's
hwdb and DNS lookups aside): the fallbacks for unknown ids (``Device 2236``,
``Vendor 1234``, ``Unknown vendor 1234``, ``Class 0380``), the class name
that falls back to the base class with the number appended (``Display
controller [0380]``), subsystem names found per device, through an ``S``
block, or as the device itself, the IDE prog-if rule, the ``-n``/``-nn``
forms, and lspci's truncation of long names to its buffers (the last three
bytes of the kept part become ``...``; bytes, as C counts them).

Ids are integers (``0x10de``); ``class_code`` arguments are lspci's 16-bit
``class << 8 | subclass`` (``0x0302``), and :func:`describe` takes the
24-bit ``class << 16 | subclass << 8 | prog_if`` (``0x030200``).

``numeric`` follows lspci's ``-n`` count: :data:`NAMES` (0, the default),
:data:`NUMBERS` (1, ``-n``), :data:`BOTH` (2, ``-nn``).

Which buffer lspci uses where (pciutils 3.9): every field of ``lspci -vmm``
and ``-mm`` has 128 bytes; in ``lspci``/``lspci -v`` the class, the
"vendor device" pair and the prog-if name have 128, the ``Subsystem:`` line
256. Pass ``size=None`` for names that are never truncated.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass

from pciname.errors import InvalidDeviceError
from pciname.pciids.ids import parse_device_id, parse_subsystem_id
from pciname.pciids.model import PciDatabase

__all__ = [
    "BOTH",
    "NAMES",
    "NUMBERS",
    "LspciNames",
    "class_name",
    "describe",
    "device_name",
    "parse_class_code",
    "parse_device_numbers",
    "parse_subsystem",
    "prog_if_name",
    "subsystem_device_name",
    "subsystem_name",
    "subsystem_vendor_name",
    "vendor_device_name",
    "vendor_name",
]

NAMES, NUMBERS, BOTH = 0, 1, 2

FIELD_SIZE = 128  # lspci's name buffers
SUBSYSTEM_LINE_SIZE = 256  # lspci -v's "Subsystem:" buffer


# -- lookups: pciutils' id_lookup() on the file's entries -------------------


def _vendor(db: PciDatabase, vendor: int) -> str | None:
    entry = db.vendors.get(f"{vendor:04x}")
    return entry.name if entry else None


def _device(db: PciDatabase, vendor: int, device: int) -> str | None:
    entry = db.vendors.get(f"{vendor:04x}")
    if entry is None:
        return None
    found = entry.devices.get(f"{device:04x}")
    return found.name if found else None


def _subsystem(db: PciDatabase, vendor: int, device: int, subvendor: int, subdevice: int) -> str | None:
    """pciutils' id_lookup_subsys(): per device, then generic, then itself."""
    name = None
    if vendor > 0 and device > 0:
        entry = db.vendors.get(f"{vendor:04x}")
        found = entry.devices.get(f"{device:04x}") if entry else None
        sub = found.subsystems.get((f"{subvendor:04x}", f"{subdevice:04x}")) if found else None
        name = sub.name if sub else None
    if name is None:
        name = db.generic_subsystems.get((f"{subvendor:04x}", f"{subdevice:04x}"))
    if name is None and vendor == subvendor and device == subdevice:
        name = _device(db, vendor, device)
    return name


def _class(db: PciDatabase, base: int) -> str | None:
    entry = db.classes.get(f"{base:02x}")
    return entry.name if entry else None


def _subclass(db: PciDatabase, base: int, sub: int) -> str | None:
    entry = db.classes.get(f"{base:02x}")
    found = entry.subclasses.get(f"{sub:02x}") if entry else None
    return found.name if found and found.name else None  # "" holds prog-ifs only


def _prog_if(db: PciDatabase, base: int, sub: int, prog_if: int) -> str | None:
    entry = db.classes.get(f"{base:02x}")
    found = entry.subclasses.get(f"{sub:02x}") if entry else None
    pif = found.prog_ifs.get(f"{prog_if:02x}") if found else None
    return pif.name if pif else None


# -- formatting: pciutils' format_name() and format_name_pair() --------------


def _fit(text: str, size: int | None) -> str:
    """snprintf into ``size`` bytes; on overflow pciutils ends it in "..."."""
    if size is None:
        return text
    raw = text.encode("utf-8", "surrogateescape")
    if len(raw) < size:
        return text
    if size < 4:
        return "<pci_lookup_name: buffer too small>"
    return (raw[: size - 4] + b"...").decode("utf-8", "surrogateescape")


def _check_numeric(numeric: int) -> int:
    if numeric not in (NAMES, NUMBERS, BOTH):
        raise ValueError(f"numeric must be 0, 1 or 2 (lspci's -n count), not {numeric!r}")
    return numeric


def _format_name(name: str | None, num: str, unknown: str, numeric: int, size: int | None) -> str:
    if _check_numeric(numeric) == NUMBERS:
        text = num
    elif name is None:
        text = f"{unknown} [{num}]" if numeric == BOTH else f"{unknown} {num}"
    elif numeric == NAMES:
        text = name
    else:
        text = f"{name} [{num}]"
    return _fit(text, size)


def _format_pair(vendor: str | None, device: str | None, num: str, numeric: int, size: int | None) -> str:
    if _check_numeric(numeric) == NUMBERS:
        text = num
    elif numeric == BOTH:
        if vendor is not None and device is not None:
            text = f"{vendor} {device} [{num}]"
        elif vendor is None:
            text = f"Device [{num}]"
        else:
            text = f"{vendor} Device [{num}]"
    elif vendor is not None and device is not None:
        text = f"{vendor} {device}"
    elif vendor is None:
        text = f"Device {num}"
    else:
        text = f"{vendor} Device {num[5:]}"
    return _fit(text, size)


# -- the names ---------------------------------------------------------------


def vendor_name(db: PciDatabase, vendor: int, *, numeric: int = NAMES, size: int | None = FIELD_SIZE) -> str:
    """``lspci -vmm``'s ``Vendor:`` (``Vendor 1234`` when unknown)."""
    return _format_name(_vendor(db, vendor), f"{vendor:04x}", "Vendor", numeric, size)


def device_name(
    db: PciDatabase, vendor: int, device: int, *, numeric: int = NAMES, size: int | None = FIELD_SIZE
) -> str:
    """``lspci -vmm``'s ``Device:`` (``Device 2236`` when unknown)."""
    return _format_name(_device(db, vendor, device), f"{device:04x}", "Device", numeric, size)


def vendor_device_name(
    db: PciDatabase, vendor: int, device: int, *, numeric: int = NAMES, size: int | None = FIELD_SIZE
) -> str:
    """What ``lspci`` prints after the class: ``NVIDIA Corporation GA102GL
    [A10]``, ``NVIDIA Corporation Device 2236``, or ``Device 1234:5678``."""
    return _format_pair(_vendor(db, vendor), _device(db, vendor, device), f"{vendor:04x}:{device:04x}", numeric, size)


def subsystem_vendor_name(
    db: PciDatabase, subvendor: int, *, numeric: int = NAMES, size: int | None = FIELD_SIZE
) -> str:
    """``lspci -vmm``'s ``SVendor:`` (``Unknown vendor 1234`` when unknown)."""
    return _format_name(_vendor(db, subvendor), f"{subvendor:04x}", "Unknown vendor", numeric, size)


def subsystem_device_name(
    db: PciDatabase,
    vendor: int,
    device: int,
    subvendor: int,
    subdevice: int,
    *,
    numeric: int = NAMES,
    size: int | None = FIELD_SIZE,
) -> str:
    """``lspci -vmm``'s ``SDevice:`` (``Device 152f`` when unknown)."""
    name = _subsystem(db, vendor, device, subvendor, subdevice)
    return _format_name(name, f"{subdevice:04x}", "Device", numeric, size)


def subsystem_name(
    db: PciDatabase,
    vendor: int,
    device: int,
    subvendor: int,
    subdevice: int,
    *,
    numeric: int = NAMES,
    size: int | None = SUBSYSTEM_LINE_SIZE,
) -> str:
    """``lspci -v``'s ``Subsystem:`` line: ``NVIDIA Corporation Device 152f``."""
    return _format_pair(
        _vendor(db, subvendor),
        _subsystem(db, vendor, device, subvendor, subdevice),
        f"{subvendor:04x}:{subdevice:04x}",
        numeric,
        size,
    )


def class_name(db: PciDatabase, class_code: int, *, numeric: int = NAMES, size: int | None = FIELD_SIZE) -> str:
    """lspci's class (``class_code`` is ``class << 8 | subclass``): the
    subclass name, else the class name with the number (``Display controller
    [0380]``, even without ``-nn``), else ``Class 0380``."""
    base, sub = class_code >> 8, class_code & 0xFF
    name = _subclass(db, base, sub)
    if name is None:
        name = _class(db, base)
        if name is not None and numeric != NUMBERS:
            numeric = BOTH  # "Include full class number"
    return _format_name(name, f"{class_code:04x}", "Class", numeric, size)


def prog_if_name(
    db: PciDatabase,
    class_code: int,
    prog_if: int,
    *,
    numeric: int = NAMES,
    no_numbers: bool = False,
    size: int | None = FIELD_SIZE,
) -> str | None:
    """The prog-if name (``class_code`` is ``class << 8 | subclass``); for
    IDE (0101) without an entry, built from the bits (``Master SecP PriP``).

    ``no_numbers=True`` is how ``lspci -v`` asks: None when there is no name
    (and then the ``-n``/``-nn`` forms do not apply).
    """
    name = _prog_if(db, class_code >> 8, class_code & 0xFF, prog_if)
    if name is None and class_code == 0x0101 and not prog_if & 0x70:
        bits = (
            (0x80, " Master"),
            (0x08, " SecP"),
            (0x04, " SecO"),
            (0x02, " PriP"),
            (0x01, " PriO"),
        )
        name = "".join(text for bit, text in bits if prog_if & bit)[1:]
    if no_numbers:
        return None if name is None else _fit(name, size)
    return _format_name(name, f"{prog_if:02x}", "ProgIf", numeric, size)


# -- everything lspci shows for one function ---------------------------------


@dataclass(frozen=True, slots=True)
class LspciNames:
    """The names lspci prints for one PCI function.

    ``vendor``, ``device``, ``svendor``, ``sdevice`` and ``class_name`` are
    the ``lspci -vmm`` fields ``Vendor``, ``Device``, ``SVendor``,
    ``SDevice`` and ``Class``; ``vendor_device`` is what ``lspci`` prints
    after ``CLASS:`` and ``subsystem`` its ``-v`` ``Subsystem:`` line;
    ``prog_if`` is what ``lspci -v`` prints inside ``(prog-if ...)``:
    ``01 [8514 controller]``, or just ``01``.

    Subsystem fields are None when no subsystem was given or lspci shows
    none (subvendor 0000 or ffff); class fields when no class was given;
    ``prog_if`` also when lspci -v prints none (prog-if 00 without a name).
    """

    vendor_id: int
    device_id: int
    subvendor_id: int | None
    subdevice_id: int | None
    class_code: int | None  # 24-bit: class, subclass, prog-if
    vendor: str
    device: str
    vendor_device: str
    svendor: str | None
    sdevice: str | None
    subsystem: str | None
    class_name: str | None
    prog_if: str | None

    def as_dict(self) -> dict[str, object]:
        """Plain data; ids as lower-case hex strings."""
        data = asdict(self)
        data["vendor_id"] = f"{self.vendor_id:04x}"
        data["device_id"] = f"{self.device_id:04x}"
        for key in ("subvendor_id", "subdevice_id"):
            data[key] = None if data[key] is None else f"{data[key]:04x}"
        data["class_code"] = None if self.class_code is None else f"{self.class_code:06x}"
        return data


def describe(
    db: PciDatabase,
    vendor: int,
    device: int,
    subsystem: tuple[int, int] | None = None,
    class_code: int | None = None,
    *,
    numeric: int = NAMES,
) -> LspciNames:
    """All names lspci prints for one function. ``subsystem`` is
    ``(subvendor, subdevice)``; ``class_code`` the 24-bit class code."""
    _check_numeric(numeric)
    _check_id(vendor, 0xFFFF, "vendor")
    _check_id(device, 0xFFFF, "device")
    svendor = sdevice = subsystem_line = None
    subvendor = subdevice = None
    if subsystem is not None:
        subvendor, subdevice = subsystem
        _check_id(subvendor, 0xFFFF, "subsystem vendor")
        _check_id(subdevice, 0xFFFF, "subsystem device")
        if subvendor not in (0, 0xFFFF):  # lspci shows no subsystem then
            svendor = subsystem_vendor_name(db, subvendor, numeric=numeric)
            sdevice = subsystem_device_name(db, vendor, device, subvendor, subdevice, numeric=numeric)
            subsystem_line = subsystem_name(db, vendor, device, subvendor, subdevice, numeric=numeric)
    cls = pif_text = None
    if class_code is not None:
        _check_id(class_code, 0xFFFFFF, "class code")
        cls = class_name(db, class_code >> 8, numeric=numeric)
        pif = class_code & 0xFF
        pif_name = prog_if_name(db, class_code >> 8, pif, no_numbers=True)
        if pif or pif_name is not None:
            pif_text = f"{pif:02x}" if pif_name is None else f"{pif:02x} [{pif_name}]"
    return LspciNames(
        vendor_id=vendor,
        device_id=device,
        subvendor_id=subvendor,
        subdevice_id=subdevice,
        class_code=class_code,
        vendor=vendor_name(db, vendor, numeric=numeric),
        device=device_name(db, vendor, device, numeric=numeric),
        vendor_device=vendor_device_name(db, vendor, device, numeric=numeric),
        svendor=svendor,
        sdevice=sdevice,
        subsystem=subsystem_line,
        class_name=cls,
        prog_if=pif_text,
    )


def _check_id(value: int, top: int, what: str) -> None:
    if not isinstance(value, int) or not 0 <= value <= top:
        raise InvalidDeviceError(f"{what} id out of range: {value!r}")


# -- parsing ids from the command line ----------------------------------------

_CLASS = re.compile(r"(?:0[xX])?([0-9a-fA-F]{4}|[0-9a-fA-F]{6})")


def parse_device_numbers(text: str) -> tuple[int, int]:
    """``10de:2236``, ``10DE:2236``, ``0x10de:0x2236``, or a bare ``2236``
    (vendor 10de, as elsewhere in pciname) -> ``(0x10de, 0x2236)``."""
    vendor, device = parse_device_id(text)
    return int(vendor, 16), int(device, 16)


def parse_subsystem(text: str) -> tuple[int, int]:
    """``10de:152f`` (any case, optional ``0x``) -> ``(0x10de, 0x152f)``."""
    subvendor, subdevice = parse_subsystem_id(text)
    return int(subvendor, 16), int(subdevice, 16)


def parse_class_code(text: str) -> int:
    """``030200`` (class, subclass, prog-if) or ``0302`` (prog-if 00), hex,
    optional ``0x`` -> the 24-bit class code."""
    found = _CLASS.fullmatch(text.strip()) if isinstance(text, str) else None
    if not found:
        raise InvalidDeviceError(
            f"malformed class {text!r}: expected CCSSPP (class, subclass, prog-if) or CCSS in hex, e.g. 030200"
        )
    digits = found.group(1)
    return int(digits, 16) << (8 if len(digits) == 4 else 0)
