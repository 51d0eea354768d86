"""The PCI IDs database: model, grammar, fast loader and lspci-style names."""

from .loader import load_bytes, load_text
from .model import (
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
    "Device",
    "DeviceClass",
    "PciDatabase",
    "ProgIf",
    "Subclass",
    "Subsystem",
    "SyntaxIssue",
    "Vendor",
    "load_bytes",
    "load_text",
]
