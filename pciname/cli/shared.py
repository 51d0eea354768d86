"""What the generate, lint, scan and cluster commands share: ``--profile``
with its ``auto`` rule (and a request's chosen profile: read beside the
options, never written back into them), the device request options
(``--mdev``, ``--vgpu``, ``--include-broken``) and the report of left-out
devices on stderr.

Module-level imports stay light: the kube modules load inside the functions.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pciname.cli.core import profile_from_args
from pciname.requests.spelling import Spelling, is_auto

if TYPE_CHECKING:
    from pciname.capabilities.vm_gpus import Skipped, Snippet
    from pciname.resolution.resolver import ProfileLike


def profile_arg(
    args: argparse.Namespace,
    *,
    allow_auto: bool = False,
    chosen: ProfileLike | None = None,
    default: ProfileLike | None = None,
) -> ProfileLike:
    """The profile the options select; with none of them given, ``chosen``
    when there is one (a request's ``chosen_profile``: a ``--cozystack``
    release's); ``auto`` only where ``allow_auto`` (the commands that read a
    cluster to infer it from). ``default``: the request's profile when
    ``--profile`` is not given (``--alias`` applies to it), else the default one."""
    profile: ProfileLike = profile_from_args(args, default=default)
    if chosen and not args.profile and not getattr(args, "pciids", None) and not getattr(args, "algorithm", None):
        profile = chosen
    if is_auto(profile) and not allow_auto:
        raise Spelling.CLI.auto_refused()
    return profile


def add_cozystack_option(parser: argparse.ArgumentParser, what: str) -> None:
    """``--cozystack VERSION``: the Cozystack release whose facts ``what`` uses."""
    parser.add_argument(
        "--cozystack",
        metavar="VERSION",
        help=f"the Cozystack release (vX.Y.Z, or latest) {what}; default: the one a cozystack@ profile names, "
        "else the newest known (`pciname profiles` lists them). Without --profile it also names GPUs as that "
        "release's GPU Operator deploys them (profile cozystack@VERSION)",
    )


def say(line: str) -> None:
    """One ``pciname: LINE`` on stderr, beside the output (not an error)."""
    from pciname.base.render import PROGRAM, write_line

    write_line(f"{PROGRAM}: {line}", sys.stderr)


def add_request_options(parser: argparse.ArgumentParser, *, counts: bool) -> None:
    """``--mdev TYPE`` (``TYPE=COUNT`` with ``counts``) and ``--include-broken``
    (the requests' fields ``mdev_types`` and ``vgpus``: :data:`pciname.cli.translate.REQUEST_OPTIONS`)."""
    metavar = "TYPE=COUNT" if counts else "TYPE"
    parser.add_argument(
        "--mdev",
        action="append",
        default=[],
        metavar=metavar,
        help='a vGPU type as in mdev_type/name, e.g. "GRID T4-1Q" (repeatable)',
    )
    parser.add_argument(
        "--vgpu",
        action="append",
        default=[],
        metavar="TYPE=COUNT" if counts else "TYPE",
        help="a vGPU type as NVIDIA's docs and the nvidia.com/vgpu.config label name it, e.g. A10-24Q "
        "(repeatable): its exact mdev_type/name for the GPUs given as DEVICE (see `pciname vgpu-types`); "
        "with --vgpu, DEVICEs name those GPUs and are not requested for passthrough; an error when the type "
        "belongs to none of them or its string is unknown",
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
    data = snippet.data.get("spec", snippet.data)  # a merge patch or a KubernetesNodes object
    names: set[str | None] = set()
    for key in ("pciHostDevices", "mediatedDevices"):
        names.update(e.get("resourceName") for e in data.get(key, []))
    for group in (data.get("nodeGroups") or {}).values():
        names.update(g.get("name") for g in group.get("gpus", []))
    names.update(g.get("deviceName") or g.get("name") for g in data.get("gpus", []))
    return skipped.resource_name in names
