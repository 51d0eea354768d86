"""PCI ids as people type them: ``10de:2236``, ``10DE:2236``, ``0x10de:0x2236``.

The one id parser (:func:`device_id`), shared by name resolution, the
packaged fast path (:mod:`pciname.resolution.answers`) and the lspci-style
names. Results are lower-case hex strings, 4 digits each.

It is on the measured start-up path of ``pciname lookup`` and of
``pciname.resolve()``: it imports nothing (no ``re``; the error class only
when raising, and no ``from __future__ import annotations``).
"""

from pciname.pciids import NVIDIA_VENDOR_ID as NVIDIA_VENDOR_ID

_HEX = frozenset("0123456789abcdefABCDEF")


def _hex4(text: str) -> str | None:
    if text[:2] in ("0x", "0X"):
        text = text[2:]
    return text.lower() if len(text) == 4 and _HEX.issuperset(text) else None


def device_id(text: str, bare: str | None = NVIDIA_VENDOR_ID) -> tuple[str, str] | None:
    """``VENDOR:DEVICE`` (4 hex digits each, optionally 0x-prefixed; no white
    space around it) -> ``("10de", "2236")``; a bare ``DEVICE`` means vendor
    ``bare`` (None: not an id); else None."""
    vendor, sep, device = text.partition(":")
    if not sep:
        if bare is None:
            return None
        vendor, device = bare, vendor
    v, d = _hex4(vendor), _hex4(device)
    return None if v is None or d is None else (v, d)


def _malformed(what: str, text: object, example: str) -> Exception:
    from pciname.errors import InvalidDeviceError  # start-up: only when raising (see the module's docstring)

    return InvalidDeviceError(f"malformed {what} {text!r}: expected {example}")


def parse_device_id(text: str) -> tuple[str, str]:
    """``VENDOR:DEVICE`` (a bare ``DEVICE`` means vendor 10de, the only one
    the plugin names), white space around it ignored -> ``("10de", "2236")``;
    else InvalidDeviceError."""
    found = device_id(text.strip()) if isinstance(text, str) else None
    if found is None:
        raise _malformed("device", text, "VENDOR:DEVICE as 4 hex digits each, e.g. 10de:2236 (or 0x10de:0x2236)")
    return found


def parse_subsystem_id(text: str) -> tuple[str, str]:
    """``SUBVENDOR:SUBDEVICE`` -> ``("10de", "152f")``; else InvalidDeviceError."""
    found = device_id(text.strip(), bare=None) if isinstance(text, str) else None
    if found is None:
        raise _malformed("subsystem", text, "SUBVENDOR:SUBDEVICE as 4 hex digits each, e.g. 10de:152f")
    return found
