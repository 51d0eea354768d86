"""pci.ids commands: ``check`` (the grammar's verdict) and ``describe``
(names as lspci prints them).

Module level stays light: pyparsing and the loaders are imported when a
command runs.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from pciname.cli.translate import request_of

if TYPE_CHECKING:
    from pciname.cli.output import Subcommands

CHECK_DESCRIPTION = """\
Check pci.ids files against the format's grammar (pciutils' rules).
Every malformed line is printed on stdout as FILE:LINE:COL: MESSAGE, with
pciutils' messages (Parse error, Line too long, Duplicate entry, Vendor does
not exist), a Parse error followed by what the grammar expected at COL
(Parse error: expected a 4-digit hex device id); then each file gets one
summary line with its header:
FILE: ok, version V, date D, N vendors, N devices, N subsystems, N classes
(FILE: N malformed lines, version V, ... when it has some).
Exit 0 when every file is well-formed, 1 when some line is not, 2 when a
file cannot be read. FILE - reads stdin."""

DESCRIBE_DESCRIPTION = """\
Print the names lspci shows for a PCI function with the given pci.ids file
(default: the embedded one): Vendor, Device, and with --subsystem SVendor,
SDevice and Subsystem (the -vmm fields and the -v Subsystem line; none when
the subsystem vendor is 0000 or ffff, as lspci), with --class Class and
ProgIf (what lspci -v shows in "(prog-if ...)", when it shows it)."""


def register(sub: Subcommands) -> None:
    from pciname.capabilities.registry import formats

    check = sub.add_parser(
        "check",
        help="check pci.ids files; list every malformed line",
        description=CHECK_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("files", nargs="+", metavar="FILE", help="pci.ids file (- for stdin)")
    check.set_defaults(func=run_check)

    describe = sub.add_parser(
        "describe",
        help="vendor, device, subsystem and class names as lspci prints them",
        description=DESCRIBE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    describe.add_argument("device", metavar="DEVICE", help="10de:2236, 10DE:2236 or 0x10de:0x2236")
    describe.add_argument("--subsystem", metavar="SVID:SDID", help="subsystem vendor and device, e.g. 10de:152f")
    describe.add_argument(
        "--class", dest="class_code", metavar="CCSSPP", help="class, subclass, prog-if in hex, e.g. 030200 (or CCSS)"
    )
    describe.add_argument("--pciids", metavar="FILE", help="pci.ids file (default: the embedded one)")
    describe.add_argument(
        "-n",
        dest="numeric",
        action="count",
        default=0,
        help="as lspci -n: numbers instead of names; -nn: both",
    )
    describe.add_argument(
        "-o", "--output", choices=formats("describe"), default="text", help="output format (default: text)"
    )
    describe.set_defaults(func=run_describe)


# -- helpers --------------------------------------------------------------------


def _write(text: str) -> None:
    """Print lines whose names may hold invalid UTF-8 (surrogate escapes):
    those bytes go out unchanged, as lspci prints them; control characters
    are escaped (:func:`pciname.base.render.printable`, tabs kept)."""
    from pciname.base.render import printable

    out = sys.stdout
    text = "\n".join(printable(line, tab=True) for line in text.split("\n"))
    data = text.encode("utf-8", "surrogateescape")
    buffer = getattr(out, "buffer", None)
    if buffer is None:
        out.write(data.decode("utf-8", "replace"))
        return
    out.flush()
    buffer.write(data)
    buffer.flush()


def _read(name: str) -> bytes:
    """A pci.ids file's bytes (``-``: stdin), at most MAX_PCIIDS_BYTES of
    them; a regular file only (never blocks on a FIFO or a device)."""
    from pciname.base.files import MAX_PCIIDS_BYTES, read_bounded
    from pciname.errors import FileLimitError, PciIdsError

    try:
        if name != "-":
            return read_bounded(name, MAX_PCIIDS_BYTES)
        if sys.stdin is None:
            raise OSError("standard input is closed")
        data = sys.stdin.buffer.read(MAX_PCIIDS_BYTES + 1)
        if len(data) > MAX_PCIIDS_BYTES:
            raise OSError(f"more than the {MAX_PCIIDS_BYTES} bytes allowed")
        return data
    except OSError as error:
        if name == "-":
            name = "<stdin>"
        reason = error.strerror or str(error)
        if isinstance(error, FileLimitError) and os.path.isdir(name):
            reason = os.strerror(errno.EISDIR)  # what open() says: "Is a directory"
        raise PciIdsError(f"{name}: cannot read pci.ids file: {reason}") from None


def _file(name: str) -> tuple[str, Callable[[], bytes]]:
    """A pci.ids file as a request names it (``-``: ``<stdin>``) and what reads it (:func:`_read`)."""
    return ("<stdin>" if name == "-" else name), lambda: _read(name)


# -- check ------------------------------------------------------------------------


def run_check(args: argparse.Namespace) -> int:
    from pciname.capabilities.pciids import summary
    from pciname.capabilities.registry import ask

    status = 0
    for shown, report in ask("check", request_of("check", args, files=tuple(_file(name) for name in args.files))):
        if report.issues:
            status = 1
            _write("".join(issue.format(shown) + "\n" for issue in report.issues))
        _write(summary(shown, report) + "\n")
    return status


# -- describe ---------------------------------------------------------------------


def run_describe(args: argparse.Namespace) -> int:
    from pciname.capabilities.pciids import describe_data
    from pciname.capabilities.registry import ask

    if args.pciids is not None:
        path = args.pciids
    else:
        from pciname.base.paths import embedded_pciids_path

        path = str(embedded_pciids_path())
    request = request_of("describe", args, pciids=(path, lambda: _read(path)))
    names = ask("describe", request)
    if args.output == "text":
        fields = (
            ("Vendor", names.vendor),
            ("Device", names.device),
            ("SVendor", names.svendor),
            ("SDevice", names.sdevice),
            ("Subsystem", names.subsystem),
            ("Class", names.class_name),
            ("ProgIf", names.prog_if),
        )
        _write("".join(f"{key}: {value}\n" for key, value in fields if value is not None))
        return 0

    from pciname.base.render import emit

    emit(describe_data(request, names), args.output)
    return 0
