"""Every error pciname raises on bad input: one clear line each.

The CLI prints ``str(error)`` and exits 2; the gRPC service maps the classes
to status codes. Anything else escaping is a bug.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .pciids.model import SyntaxIssue


class PcinameError(Exception):
    """Base class: the message is one line meant for a person."""


class InvalidDeviceError(PcinameError, ValueError):
    """A device id that is not ``VVVV:DDDD`` hex (or ``DDDD`` alone)."""


class UnknownProfileError(PcinameError, LookupError):
    """A profile name pciname does not know."""


class UnknownAlgorithmError(PcinameError, LookupError):
    """An algorithm name that is not one of the four."""


class SnapshotMissingError(PcinameError):
    """A profile's pci.ids file is not installed; says how to get it."""

    def __init__(self, message: str, *, snapshot: str, sha256: str, url: str) -> None:
        super().__init__(message)
        self.snapshot = snapshot
        self.sha256 = sha256
        self.url = url


class SnapshotVerifyError(PcinameError):
    """A file offered as a snapshot does not have the sha256 it must have."""


class SnapshotCacheError(PcinameError):
    """The snapshot cache cannot be written (read-only, not a directory, full)."""


class PciIdsError(PcinameError):
    """A pci.ids file that cannot be read or used."""


class PciIdsSyntaxError(PciIdsError):
    """A malformed pci.ids line (raised by strict loads)."""

    def __init__(self, issue: SyntaxIssue, filename: str = "<pci.ids>") -> None:
        super().__init__(issue.format(filename))
        self.issue = issue
        self.filename = filename
