"""What the generate, lint, scan and cluster commands share: ``--profile``
with its ``auto`` rule, the device request options (``--mdev``,
``--include-broken``) and the report of left-out devices on stderr.

Module-level imports stay light: the kube modules load inside the functions.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pciname.cli.core import profile_from_args
from pciname.errors import PcinameError

if TYPE_CHECKING:
    from pciname.kubevirt.generate import Skipped, Snippet
    from pciname.resolution.resolver import ProfileLike

#: The usage error of a command asking for devices that got none.
NO_DEVICES = "no devices given: name at least one DEVICE or --mdev TYPE"


def profile_arg(args: argparse.Namespace, *, allow_auto: bool = False) -> ProfileLike:
    """The profile the options select; ``auto`` only where ``allow_auto``
    (the commands that read a cluster to infer it from)."""
    from pciname.kubevirt.audit import is_auto

    profile: ProfileLike = profile_from_args(args)
    if is_auto(profile) and not allow_auto:
        raise PcinameError("--profile auto needs a cluster to infer from: it works with audit, gpu-options and apply")
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


def cozystack_profile(args: argparse.Namespace) -> None:
    """With ``--cozystack`` and no profile options, select that release's
    profile (its GPU Operator's names); a bad version is a one-line error."""
    version = getattr(args, "cozystack", None)
    if version is None:
        return
    from pciname.cozystack.releases import get_release

    release = get_release(version)
    args.cozystack = release.version
    if (
        not getattr(args, "profile", None)
        and not getattr(args, "pciids", None)
        and not getattr(args, "algorithm", None)
    ):
        args.profile = release.profile


def say(line: str) -> None:
    """One ``pciname: LINE`` on stderr, beside the output (not an error)."""
    from pciname.base.render import write_line

    write_line(f"pciname: {line}", sys.stderr)


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


def vgpu_requests(
    args: argparse.Namespace, *, counts: bool, profile: ProfileLike | None = None
) -> tuple[list[str], list[str]]:
    """(devices, mdev requests) after ``--vgpu``: the types' exact strings
    join ``--mdev`` (as ``NAME`` or ``NAME=COUNT``), and the DEVICEs, only
    the GPUs they are for, are requested no more."""
    devices, mdevs = list(args.devices), list(args.mdev)
    if not args.vgpu:
        return devices, mdevs
    from pciname.kubevirt.generate import parse_request
    from pciname.kubevirt.vgpu import vgpu_mdevs

    gpus = []
    for item in devices:
        device, _count = parse_request(item) if counts else (item, 1)
        if counts and "=" in item:
            raise PcinameError(f"{item}: with --vgpu, DEVICE names a GPU model; give the count to --vgpu TYPE=COUNT")
        gpus.append(device)
    found = vgpu_mdevs(gpus, args.vgpu, profile_arg(args) if profile is None else profile, counts=counts)
    mdevs += [f"{name}={count}" if counts else name for name, count in found]
    return [], mdevs


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
