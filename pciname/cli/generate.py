"""Generate commands: resource names into KubeVirt / Cozystack configuration.

    permitted-host-devices  node-pool  vm-gpus  mdev-name

Each takes ``--profile`` and ``-o``. Exit codes: 0 fine, 1 names left out
(or, with ``--include-broken``, kept but broken), 2 bad usage or bad input.
The snippets themselves are :mod:`pciname.kube.generate`.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from ..errors import PcinameError
from ..render import emit, table
from .core import add_profile_options
from .output import add_output_option
from .shared import NO_DEVICES, add_request_options, included, profile_arg, report, say

if TYPE_CHECKING:
    from ..kube.generate import Snippet

#: The -o choices of the generated snippets.
SNIPPET_FORMATS = ("yaml", "json", "table")
NO_GPUS = "no GPUs given: name at least one DEVICE[=COUNT] or --mdev TYPE[=COUNT]"


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ..kube.generate import DEFAULT_FORMAT, FORMATS

    phd = sub.add_parser(
        "permitted-host-devices",
        help="permittedHostDevices for KubeVirt / Cozystack",
        description="The permittedHostDevices block for these devices, named as the profile names them. "
        "Devices whose names will not work (kubelet-invalid, socket too long, not advertised, two requested "
        "devices with one name) are reported on stderr and left out unless --include-broken. "
        "Exit 0, or 1 when something was reported.",
    )
    phd.add_argument("devices", nargs="*", metavar="DEVICE", help="10de:2236, 10DE:2236 or 0x10de:0x2236")
    add_request_options(phd, counts=False)
    phd.add_argument(
        "--from-scan",
        metavar="DIR",
        help="also every device and vGPU type the profile's plugin advertises on the node whose sysfs is under "
        "DIR, as `pciname scan --sysfs-root DIR` sees it (per IOMMU group up to v1.4.0, per function after)",
    )
    phd.add_argument(
        "--format",
        choices=FORMATS,
        default=DEFAULT_FORMAT,
        help="kubevirt: permittedHostDevices for the KubeVirt CR's spec.configuration; cozystack: "
        "gpu.permittedHostDevices for Cozystack's platform values; patch: a JSON merge patch for "
        f"`kubectl patch kubevirt NAME --type merge` (default: {DEFAULT_FORMAT})",
    )
    phd.add_argument(
        "--replace-defaults",
        action="store_true",
        help="with --format cozystack: also set gpu.replaceDefaults: true (drop Cozystack's default entries)",
    )
    add_profile_options(phd)
    phd.add_argument(
        "-o",
        "--output",
        choices=SNIPPET_FORMATS,
        help="output format (default: json for --format patch, else yaml)",
    )
    phd.set_defaults(func=run_permitted_host_devices)

    pool = sub.add_parser(
        "node-pool",
        help="Cozystack tenant Kubernetes nodeGroups.<group>.gpus",
        description="The Cozystack tenant Kubernetes values asking for GPUs in node group GROUP: one "
        "{name: RESOURCE} entry per GPU. DEVICE is a device id (resolved in the profile) or a resource name "
        "(nvidia.com/..., used as given). Exit 0, or 1 when a name will not work.",
    )
    pool.add_argument("group", metavar="GROUP")
    pool.add_argument("devices", nargs="*", metavar="DEVICE[=COUNT]")
    add_request_options(pool, counts=True)
    add_profile_options(pool)
    add_output_option(pool, SNIPPET_FORMATS, default="yaml")
    pool.set_defaults(func=run_node_pool)

    vm = sub.add_parser(
        "vm-gpus",
        help="spec.domain.devices.gpus[] for a KubeVirt VM",
        description="The gpus[] entries ({name, deviceName}) for a KubeVirt VM's spec.domain.devices, one per GPU. "
        "Exit 0, or 1 when a name will not work.",
    )
    vm.add_argument("devices", nargs="*", metavar="DEVICE[=COUNT]")
    add_request_options(vm, counts=True)
    vm.add_argument("--prefix", default="gpu", help="entry names are PREFIX1, PREFIX2, ... (default: gpu)")
    add_profile_options(vm)
    add_output_option(vm, SNIPPET_FORMATS, default="yaml")
    vm.set_defaults(func=run_vm_gpus)

    mdev = sub.add_parser(
        "mdev-name",
        help="the resource a vGPU type is advertised as",
        description='The resource name the plugin advertises for a vGPU type: "NVIDIA A100-40C" -> '
        "nvidia.com/NVIDIA_A100-40C (white-space runs to '_', nothing else) from plugin v1.1.x on; v1.0.x "
        'took the second space-separated field ("GRID T4-1Q" -> nvidia.com/T4-1Q) and panics on a name '
        "without a space (plugin-crash). Exit 1 when kubelet would refuse a name or the plugin would crash.",
    )
    mdev.add_argument("types", nargs="+", metavar="TYPE")
    add_profile_options(mdev)
    add_output_option(mdev, ("name", *SNIPPET_FORMATS), default="name")
    mdev.set_defaults(func=run_mdev_name)


def _snippet_table(snippet: Snippet, rows_of: Callable[[dict[str, Any]], list[tuple[Any, ...]]]) -> None:
    """The snippet's rows, then a row for each item left out of it."""
    rows = rows_of(snippet.data)
    for skipped in snippet.left_out:
        if not included(snippet, skipped):
            rows.append((skipped.item, skipped.resource_name, "left out: " + ",".join(skipped.codes)))
    table(rows, ("REQUEST", "RESOURCE", "STATUS"))


def run_permitted_host_devices(args: argparse.Namespace) -> int:
    from ..kube.generate import permitted_host_devices, render

    devices, mdevs = list(args.devices), list(args.mdev)
    if args.from_scan is not None:
        from ..host.sysfs import scan, scan_requests

        found = scan_requests(scan(args.from_scan, profile_arg(args)))
        for line in found.skipped:
            say(f"--from-scan: left out {line}")
        devices += found.devices
        mdevs += found.mdev_types
    if not devices and not mdevs:
        raise PcinameError(NO_DEVICES if args.from_scan is None else f"--from-scan {args.from_scan}: nothing to permit")
    if args.replace_defaults and args.format != "cozystack":
        raise PcinameError("--replace-defaults goes with --format cozystack")
    snippet = permitted_host_devices(devices, mdevs, profile_arg(args), args.include_broken)
    broken = report(snippet)
    output = args.output or ("json" if args.format == "patch" else "yaml")
    if output == "table":

        def rows(data: dict[str, Any]) -> list[tuple[Any, ...]]:
            out: list[tuple[Any, ...]] = []
            for e in data.get("pciHostDevices", []):
                out.append((e["pciVendorSelector"], e["resourceName"], "permitted"))
            for e in data.get("mediatedDevices", []):
                out.append((e["mdevNameSelector"], e["resourceName"], "permitted"))
            return out

        _snippet_table(snippet, rows)
    else:
        emit(render(snippet.data, args.format, replace_defaults=True if args.replace_defaults else None), output)
    return 1 if broken else 0


def _requests(items: Iterable[str]) -> list[tuple[str, int]]:
    from ..kube.generate import parse_request

    return [parse_request(item) for item in items]


def run_node_pool(args: argparse.Namespace) -> int:
    from ..kube.generate import node_pool

    if not args.devices and not args.mdev:
        raise PcinameError(NO_GPUS)
    snippet = node_pool(
        args.group,
        _requests(args.devices),
        profile_arg(args),
        args.include_broken,
        mdevs=_requests(args.mdev),
    )
    broken = report(snippet)
    if args.output == "table":

        def rows(data: dict[str, Any]) -> list[tuple[Any, ...]]:
            counts: dict[str, int] = {}
            for g in next(iter(data["nodeGroups"].values()))["gpus"]:
                counts[g["name"]] = counts.get(g["name"], 0) + 1
            return [(args.group, name, f"{n} GPU(s)") for name, n in counts.items()]

        _snippet_table(snippet, rows)
    else:
        emit(snippet.data, args.output)
    return 1 if broken else 0


def run_vm_gpus(args: argparse.Namespace) -> int:
    from ..kube.generate import vm_gpus

    if not args.devices and not args.mdev:
        raise PcinameError(NO_GPUS)
    if not args.prefix or any(c.isspace() for c in args.prefix):
        raise PcinameError("--prefix must be a non-empty name without white space")
    snippet = vm_gpus(
        _requests(args.devices),
        profile_arg(args),
        args.include_broken,
        mdevs=_requests(args.mdev),
        prefix=args.prefix,
    )
    broken = report(snippet)
    if args.output == "table":
        _snippet_table(snippet, lambda data: [(g["name"], g["deviceName"], "requested") for g in data["gpus"]])
    else:
        emit(snippet.data, args.output)
    return 1 if broken else 0


def run_mdev_name(args: argparse.Namespace) -> int:
    from ..kube.generate import mdev_names

    results = mdev_names(args.types, profile_arg(args))
    if args.output == "name":
        for r in results:
            print(r["resource_name"] or "")
            for w in r["warnings"]:
                say(f"{r['mdev_type']}: {w['code']}: {w['message']}")
    elif args.output == "table":
        table(
            [(r["mdev_type"], r["resource_name"], r["env_var"], ",".join(w["code"] for w in r["warnings"]) or None) for r in results],
            ("MDEV TYPE", "RESOURCE", "ENV VAR", "WARNINGS"),
        )
    else:
        emit(results, args.output)
    return 0 if all(r["advertised"] for r in results) else 1
