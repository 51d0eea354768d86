"""The scan command: what NVIDIA's KubeVirt device plugin (or, under a Kata
profile, the Kata sandbox device plugin) finds on this node.

Exit codes: 0 fine, 1 something is wrong with the node, 2 no sysfs under
``--sysfs-root`` or bad usage. The request and its answer are
:mod:`pciname.capabilities.scan` (asked through the registry).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pciname.base.render import emit, table, write_line
from pciname.capabilities.registry import ask, formats
from pciname.cli.core import add_profile_options, profile_from_args
from pciname.cli.output import add_output_option
from pciname.cli.translate import request_of

if TYPE_CHECKING:
    from pciname.capabilities.scan import DraScanResult, ScanResult
    from pciname.naming.profiles import Profile


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    scan = sub.add_parser(
        "scan",
        help="what the device plugin finds on this node",
        description="Walk DIR/sys/bus/pci/devices and DIR/sys/bus/mdev/devices as the plugin does: every NVIDIA "
        "function with its device id, driver, IOMMU group, NUMA node and the resource it is advertised as (or "
        "why not), and what is wrong with the node. Under a Kata profile (sandbox-device-plugin@vX.Y.Z, "
        "gpu-operator@vX.Y.Z+kata, --algorithm go-nvlib) as the Kata sandbox device plugin of that release does "
        "(no vGPUs; --alias sets P_GPU_ALIAS). Exit 0, 1 when something is wrong, 2 when DIR has no sysfs.",
    )
    scan.add_argument("--sysfs-root", metavar="DIR", default="/", help="the directory holding sys/ (default: /)")
    scan.add_argument(
        "--mdev-config",
        action="append",
        metavar="TYPE",
        help="print KubeVirt's mediatedDevicesConfiguration creating TYPE (A10-24Q, or its exact mdev_type/name) "
        "with the node's own nvidia-NNN ids (they differ per SKU and driver) instead of the report (repeatable)",
    )
    scan.add_argument(
        "--dra",
        action="store_true",
        help="show instead the vfio devices NVIDIA's DRA driver publishes in the node's ResourceSlice (names, "
        "attributes, capacity), as that release's discovery computes them, and the functions it skips and why",
    )
    scan.add_argument(
        "--dra-driver",
        metavar="VERSION",
        help="the DRA driver release for --dra (default: the newest tagged release that publishes vfio devices; "
        "main or v0.5.0: its unreleased main branch)",
    )
    scan.add_argument(
        "--variant",
        choices=("default", "vgpu", "container", "all"),
        help="the host doctor instead: what this GPU variant (Cozystack's and the GPU Operator's: default is "
        "passthrough) needs of the node (DIR/sys, DIR/proc: modules, command line, CPU vendor, driver version) "
        "and the way back from each finding; all: every variant's, and the variants the node could serve",
    )
    add_profile_options(scan)
    add_output_option(scan, formats("scan"))
    scan.set_defaults(func=run_scan)


def run_scan(args: argparse.Namespace) -> int:
    if args.variant is not None:
        return _doctor(args)
    # Imported here: building the parser (every command's) stays light.

    request = request_of("scan", args, {"root": "sysfs_root"}, profile=_profile(args))
    scanned = ask("scan", request)
    if scanned.mdev_config is not None:
        emit(scanned.mdev_config, "json" if args.output == "json" else "yaml")
        return 0
    if scanned.dra is not None:
        return _dra_report(scanned.dra, args.output)
    result = scanned.result
    assert result is not None
    servable = _servable(args)
    if args.output == "table":
        _scan_table(result)
        if servable is not None:
            sys.stdout.write("\n")
            write_line(
                f"as it is, the node could serve the variants: {', '.join(servable) or 'none'} "
                "(scan --variant all: what stands in the others' way)",
                sys.stdout,
            )
    else:
        emit({**result.to_dict(), **({} if servable is None else {"variants": list(servable)})}, args.output)
    return 1 if result.errors else 0


def _servable(args: argparse.Namespace) -> tuple[str, ...] | None:
    """The variants the host doctor finds the node could serve as it is; None where the root shows no
    loaded modules (a copy of sys/ alone: the doctor cannot tell)."""
    checkup = ask("scan --variant", request_of("scan --variant", args, {"root": "sysfs_root"}, variant=None))
    return checkup.servable if checkup.modules_read else None


def _doctor(args: argparse.Namespace) -> int:
    """``scan --variant``: the doctor's checkup, as a table or as JSON/YAML; exit 1 on an error finding."""
    from pciname.errors import PcinameError

    others = [f for f, v in (("--dra", args.dra), ("--mdev-config", args.mdev_config)) if v]
    if others:
        raise PcinameError(f"--variant goes without {' and '.join(others)}")
    variant = None if args.variant == "all" else args.variant
    checkup = ask("scan --variant", request_of("scan --variant", args, {"root": "sysfs_root"}, variant=variant))
    errors = any(f.diagnosis.severity == "error" for f in checkup.findings)
    if args.output != "table":
        emit(checkup.to_dict(), args.output)
        return 1 if errors else 0
    out = sys.stdout
    shown = f"variant {checkup.variant} (nvidia.com/gpu.workload.config={checkup.workload})"
    write_line(
        f"{shown if checkup.variant else 'every variant'}; as it is, the node could serve: "
        f"{', '.join(checkup.servable) or 'none'}",
        out,
    )
    for f in checkup.findings:
        d = f.diagnosis
        out.write("\n")
        write_line(f"{d.severity}: {d.code}: {d.subject}: {d.message}", out)
        for number, step in enumerate(f.steps, 1):
            write_line(f"  {number}. {step}", out)
        for key, value in f.values.items():
            write_line(f"  Cozystack: {key}: {value}", out)
    return 1 if errors else 0


def _scan_table(result: ScanResult) -> None:
    from pciname.naming.profiles import PER_FUNCTION

    out = sys.stdout
    if result.plugin is not None:
        write_line(_kata_header(result), out)
    else:
        unit = "PCI function (its address)" if result.discovery == PER_FUNCTION else "IOMMU group (its number)"
        write_line(
            f"profile {result.profile}; the plugin takes functions bound to {', '.join(result.vfio_drivers)}; "
            f"one kubelet device per {unit}",
            out,
        )
    out.write("\n")
    if result.functions:
        table(
            [
                (
                    f.address,
                    f"{f.vendor}:{f.device}" if f.device else "?",
                    f.driver,
                    f.iommu_group,
                    f.numa_node,
                    f.status,
                )
                for f in result.functions
            ],
            ("ADDRESS", "DEVICE", "DRIVER", "IOMMU", "NUMA", "RESOURCE OR WHY NOT"),
        )
    else:
        out.write("no NVIDIA PCI functions\n")
    if result.mdevs:
        out.write("\n")
        table(
            [(m.uuid, m.type_name, m.parent, m.status) for m in result.mdevs],
            ("MDEV", "TYPE", "PARENT", "RESOURCE OR WHY NOT"),
        )
    if result.resources and result.plugin is not None:
        out.write("\n")
        table(
            [
                (r.resource_name, r.source, r.count, "yes" if r.works else "no", ",".join(r.members), r.socket_path)
                for r in result.resources
            ],
            ("RESOURCE", "FROM", "COUNT", "WORKS", "DEVICE IDS", "SOCKET"),
        )
    elif result.resources:
        out.write("\n")
        table(
            [
                (r.resource_name, r.kind, r.source, r.count, "yes" if r.works else "no", ",".join(r.members))
                for r in result.resources
            ],
            ("RESOURCE", "KIND", "FROM", "COUNT", "WORKS", "DEVICE IDS"),
        )
    if result.offered:
        out.write("\n")
        table(
            [
                (
                    o.address,
                    o.kind,
                    o.type_id,
                    o.name,
                    o.available_instances if o.kind == "mdev" else ("current" if o.current else ""),
                    o.resource_name,
                )
                for o in result.offered
            ],
            ("OFFERED BY", "KIND", "TYPE ID", "VGPU TYPE (EXACT)", "AVAILABLE", "RESOURCE"),
        )
        if any(o.kind == "sriov" for o in result.offered):
            out.write(
                "sriov: NVIDIA's plugin reads no SR-IOV VF's nvidia/ files (only /sys/bus/mdev/devices): "
                "permit the VFs by pciVendorSelector for KubeVirt's own plugin\n"
            )
    if result.diagnoses:
        out.write("\n")
        for d in result.diagnoses:
            write_line(f"{d.severity}: {d.code}: {d.subject}: {d.message}", out)


def _kata_header(result: ScanResult) -> str:
    """What the Kata plugin of the profile takes and how it names it."""
    classes = f"of class {', '.join(result.classes)} " if result.classes is not None else "of any class "
    unit = "iommufd device (/dev/iommu exists)" if result.iommufd else "IOMMU group (its number)"
    aliases = "; ".join(
        f"{variable}={value!r}" + ("" if value else " (each model its own name)")
        for variable, value in (result.aliases or {}).items()
    )
    return (
        f"profile {result.profile} ({result.plugin}); the plugin takes NVIDIA functions {classes}bound to exactly "
        f"{', '.join(result.vfio_drivers)}; one kubelet device per {unit}; {aliases}"
    )


def _profile(args: argparse.Namespace) -> str | Profile | None:
    """The profile the options select; with ``--dra`` None unless one was given (which the request refuses)."""
    given = (getattr(args, name, None) for name in ("profile", "pciids", "algorithm", "alias", "nvswitch_alias"))
    if args.dra and all(value is None for value in given):
        return None
    return profile_from_args(args)


def _dra_report(result: DraScanResult, output: str) -> int:
    """The DRA driver's devices: a table, or the result as JSON/YAML."""
    if output != "table":
        emit(result.to_dict(), output)
        return 1 if result.errors else 0
    from pciname.capabilities.scan import ATTRIBUTE_KINDS

    out = sys.stdout
    gate = f"with its feature gate {result.gate}=true (default false)" if result.gate else "(no vfio code)"
    where = f"; DeviceClass {result.device_class}" if result.device_class else ""
    write_line(f"DRA driver {result.driver} {result.release}, vfio GPUs {gate}{where}", out)
    out.write("\n")
    if result.functions:
        table(
            [
                (f.address, f"{f.vendor}:{f.device}", f.pci_class, f.driver, f.numa_node, f.status)
                for f in result.functions
            ],
            ("ADDRESS", "DEVICE", "CLASS", "DRIVER", "NUMA", "SLICE DEVICE OR WHY NOT"),
        )
    else:
        out.write("no NVIDIA PCI functions\n")
    for device in result.devices:
        out.write(f"\ndevice {device.name} ({device.address}, {device.device})\n")
        table(
            [(name, ATTRIBUTE_KINDS[type(value)], _go_value(value)) for name, value in device.attributes.items()]
            + [(name, "quantity", value) for name, value in device.capacity.items()],
            ("ATTRIBUTE", "TYPE", "VALUE"),
        )
    if result.inferred:
        out.write("\n")
    for text in result.inferred:
        write_line(f"inferred: {text}", out)
    if result.diagnoses:
        out.write("\n")
        for d in result.diagnoses:
            write_line(f"{d.severity}: {d.code}: {d.subject}: {d.message}", out)
    return 1 if result.errors else 0


def _go_value(value: str | int | bool) -> str:
    return ("true" if value else "false") if isinstance(value, bool) else str(value)
