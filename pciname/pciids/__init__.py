"""The PCI IDs database.

* :mod:`.model`: the plain data model (vendors, devices, subsystems, classes);
* :mod:`.grammar`: the pyparsing grammar, the readable statement of the
  format, and ``pciname check``;
* :mod:`.loader`: the fast one-pass loader that builds the same database;
* :mod:`.names`: names exactly as lspci prints them;
* :mod:`.ids`: parsing ``VENDOR:DEVICE`` ids as users type them.

Nothing is imported until used: the ``pciname lookup`` start-up path needs
only :mod:`.ids` (and its fast path only this module: no ``from __future__
import annotations`` here, importing ``__future__`` costs start-up time).
"""

#: NVIDIA's PCI vendor id: the one vendor the plugin advertises, and the
#: vendor a bare device id (``2236``) means. Defined here only (here, so
#: that the fast path of :mod:`pciname.resolution.answers` imports it for nothing).
NVIDIA_VENDOR_ID = "10de"

_EXPORTS = {
    "load_bytes": "loader",
    "load_text": "loader",
    "Device": "model",
    "DeviceClass": "model",
    "PciDatabase": "model",
    "ProgIf": "model",
    "Subclass": "model",
    "Subsystem": "model",
    "SyntaxIssue": "model",
    "Vendor": "model",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pciname.pciids' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
