"""PCI ids as people type them: ``10de:2236``, ``10DE:2236``, ``0x10de:0x2236``.

One place for the spelling rules, shared by name resolution and by the
lspci-style names. Results are lower-case hex strings, 4 digits each.
"""

from __future__ import annotations

import re

from pciname.errors import InvalidDeviceError
from pciname.pciids import NVIDIA_VENDOR_ID as NVIDIA_VENDOR_ID

_HEX4 = r"(?:0[xX])?([0-9a-fA-F]{4})"
_PAIR = re.compile(rf"\s*{_HEX4}:{_HEX4}\s*\Z")
_BARE = re.compile(rf"\s*{_HEX4}\s*\Z")


def parse_device_id(text: str) -> tuple[str, str]:
    """``VENDOR:DEVICE`` (a bare ``DEVICE`` means vendor 10de, the only one
    the plugin names) -> ``("10de", "2236")``; else InvalidDeviceError."""
    if isinstance(text, str):
        pair = _PAIR.match(text)
        if pair:
            return pair.group(1).lower(), pair.group(2).lower()
        bare = _BARE.match(text)
        if bare:
            return NVIDIA_VENDOR_ID, bare.group(1).lower()
    raise InvalidDeviceError(
        f"malformed device {text!r}: expected VENDOR:DEVICE as 4 hex digits each, e.g. 10de:2236 (or 0x10de:0x2236)"
    )


def parse_subsystem_id(text: str) -> tuple[str, str]:
    """``SUBVENDOR:SUBDEVICE`` -> ``("10de", "152f")``; else InvalidDeviceError."""
    pair = _PAIR.match(text) if isinstance(text, str) else None
    if not pair:
        raise InvalidDeviceError(
            f"malformed subsystem {text!r}: expected SUBVENDOR:SUBDEVICE as 4 hex digits each, e.g. 10de:152f"
        )
    return pair.group(1).lower(), pair.group(2).lower()
