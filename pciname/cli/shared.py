"""What the generate, lint, scan and cluster commands share: ``--profile``
with its ``auto`` rule, the device request options (``--mdev``,
``--include-broken``) and the report of left-out devices on stderr.

Module-level imports stay light: the kube modules load inside the functions.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from ..errors import PcinameError
from .core import profile_from_args

if TYPE_CHECKING:
    from ..kube.generate import Skipped, Snippet
    from ..resolver import ProfileLike

#: The usage error of a command asking for devices that got none.
NO_DEVICES = "no devices given: name at least one DEVICE or --mdev TYPE"


def profile_arg(args: argparse.Namespace, *, allow_auto: bool = False) -> ProfileLike:
    """The profile the options select; ``auto`` only where ``allow_auto``
    (the commands that read a cluster to infer it from)."""
    from ..kube.audit import is_auto

    profile: ProfileLike = profile_from_args(args)
    if is_auto(profile) and not allow_auto:
        raise PcinameError("--profile auto needs a cluster to infer from: it works with audit, gpu-options and apply")
    return profile


def say(line: str) -> None:
    """One ``pciname: LINE`` on stderr, beside the output (not an error)."""
    sys.stderr.write(f"pciname: {line}\n")


def add_request_options(parser: argparse.ArgumentParser, *, counts: bool) -> None:
    """``--mdev TYPE`` (``TYPE=COUNT`` with ``counts``) and ``--include-broken``."""
    metavar = "TYPE=COUNT" if counts else "TYPE"
    parser.add_argument(
        "--mdev",
        action="append",
        default=[],
        metavar=metavar,
        help='a vGPU type as in mdev_type/name, e.g. "GRID T4-1Q" (repeatable)',
    )
    parser.add_argument(
        "--include-broken",
        action="store_true",
        help="keep devices whose names will not work (still reported on stderr)",
    )


def report(snippet: Snippet) -> bool:
    """Print left-out items and notes on stderr; True when something is broken."""
    for skipped in snippet.left_out:
        for line in skipped.lines():
            say(f"left out {line}" if not included(snippet, skipped) else f"broken {line}")
    for noted in snippet.notes:
        for line in noted.lines():
            say(f"note: {line}")
    return bool(snippet.left_out)


def report_left_out(left_out: tuple[Skipped, ...]) -> bool:
    """Print left-out items on stderr; True when there were any."""
    for skipped in left_out:
        for line in skipped.lines():
            say(f"left out {line}")
    return bool(left_out)


def included(snippet: Snippet, skipped: Skipped) -> bool:
    """Whether --include-broken kept this item in the output."""
    data = snippet.data
    names: set[str | None] = set()
    for key in ("pciHostDevices", "mediatedDevices"):
        names.update(e.get("resourceName") for e in data.get(key, []))
    for group in (data.get("nodeGroups") or {}).values():
        names.update(g.get("name") for g in group.get("gpus", []))
    names.update(g.get("deviceName") for g in data.get("gpus", []))
    return skipped.resource_name in names
