"""``check`` and ``describe`` as requests: a pci.ids file against the
format's grammar (pciutils' rules), and the names lspci prints for a PCI
function with a pci.ids file.

:class:`CheckRequest` and :class:`DescribeRequest` validate themselves and
:func:`answer_check` and :func:`answer_describe` answer them from the
files' bytes as the surface read them (``-``: its standard input), bounded
by :data:`~pciname.base.files.MAX_PCIIDS_BYTES`. ``pciname check`` and
``pciname describe`` build them from their arguments and print the answers.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from pciname.requests.spelling import RequestError

if TYPE_CHECKING:
    from pciname.pciids.grammar import CheckReport
    from pciname.pciids.names import LspciNames

#: A pci.ids file as a surface reads it: its name and what reads its bytes.
PciIdsFile = tuple[str, Callable[[], bytes]]


@dataclass(frozen=True)
class CheckRequest:
    """pci.ids files to check, in order (each its name, as reported, and what reads it)."""

    files: tuple[PciIdsFile, ...] = ()

    def validated(self) -> CheckRequest:
        if not self.files:
            raise RequestError.saying("no files given: name at least one FILE", "empty request: no files given")
        return replace(self, files=tuple(self.files))


def summary(filename: str, report: CheckReport) -> str:
    """The one-line verdict on a file, with its Version/Date header."""
    count = len(report.issues)
    verdict = "ok" if not count else f"{count} malformed line{'s' if count != 1 else ''}"
    return (
        f"{filename}: {verdict}, version {report.version or 'unknown'}, date {report.date or 'unknown'}, "
        f"{report.vendors} vendors, {report.devices} devices, {report.subsystems} subsystems, "
        f"{report.classes} classes"
    )


def answer_check(request: CheckRequest) -> Iterator[tuple[str, CheckReport]]:
    """Each file's name and the grammar's verdict on it, one file at a time
    (a file that cannot be read raises its one line when its turn comes)."""
    from pciname.pciids.grammar import check_bytes

    for name, read in request.files:
        yield name, check_bytes(read())


@dataclass(frozen=True)
class DescribeRequest:
    """The function's ``device`` (``10de:2236``), ``subsystem``
    (``SVID:SDID``) and ``class_code`` (``CCSSPP`` or ``CCSS``) when given,
    the pci.ids file (its name and what reads it), ``numeric`` as lspci's
    ``-n`` count (0: names, 1: numbers, 2: both)."""

    device: str
    pciids: PciIdsFile
    subsystem: str | None = None
    class_code: str | None = None
    numeric: int = 0

    def validated(self) -> DescribeRequest:
        """The request, its numbers parsed as they are answered (an
        :class:`~pciname.errors.InvalidDeviceError` there)."""
        return replace(self, numeric=min(max(self.numeric, 0), 2))


def answer_describe(request: DescribeRequest) -> LspciNames:
    """The names lspci shows for a :meth:`~DescribeRequest.validated` request's function."""
    from pciname.pciids.loader import load_bytes
    from pciname.pciids.names import describe, parse_class_code, parse_device_numbers, parse_subsystem

    vendor, device = parse_device_numbers(request.device)
    subsystem = parse_subsystem(request.subsystem) if request.subsystem is not None else None
    class_code = parse_class_code(request.class_code) if request.class_code is not None else None
    db = load_bytes(request.pciids[1]())
    return describe(db, vendor, device, subsystem, class_code, numeric=request.numeric)


def describe_data(request: DescribeRequest, names: LspciNames) -> dict[str, Any]:
    """``describe -o json|yaml``'s data: the names, invalid UTF-8 in them as
    U+FFFD (JSON and YAML carry text), and the pci.ids file's name."""
    from pciname.naming.gotext import valid_text

    data = names.as_dict()
    data["pciids"] = request.pciids[0]
    for key, value in data.items():
        if isinstance(value, str):
            data[key] = valid_text(value)
    return data


__all__ = [
    "CheckRequest",
    "DescribeRequest",
    "PciIdsFile",
    "answer_check",
    "answer_describe",
    "describe_data",
    "summary",
]
