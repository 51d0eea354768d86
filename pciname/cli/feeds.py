"""Feed commands: names into KubeVirt / Cozystack configuration, lint, host
scan and the live cluster.

    permitted-host-devices  node-pool  vm-gpus  mdev-name
    lint  scan  audit  gpu-options  apply permitted-host-devices

Every command takes ``--profile`` and ``-o``. Exit codes: 0 fine, 1 a
negative answer (names left out, lint findings, a broken node, audit
findings, apply refused), 2 bad usage or unreadable input.

Module-level imports stay light: yaml and kubernetes load inside the
commands that need them.
"""

from __future__ import annotations

import argparse
import sys

from .core import add_profile_options, profile_from_args
from ..render import emit, table
from .output import add_output_option

CLUSTER_PROFILE_NOTE = " --profile auto infers the plugin release from the names the nodes advertise."


def _fail(message: str):
    from ..errors import PcinameError

    return PcinameError(message)


def _profile(args: argparse.Namespace, *, allow_auto: bool = False):
    profile = profile_from_args(args)
    if isinstance(profile, str) and profile.strip().lower() == "auto" and not allow_auto:
        raise _fail("--profile auto needs a cluster to infer from: it works with audit, gpu-options and apply")
    return profile


def _err(line: str) -> None:
    sys.stderr.write(f"pciname: {line}\n")


def _report(snippet) -> bool:
    """Print left-out items and notes on stderr; True when something is broken."""
    for skipped in snippet.left_out:
        for line in skipped.lines():
            _err(f"left out {line}" if not _included(snippet, skipped) else f"broken {line}")
    for noted in snippet.notes:
        for line in noted.lines():
            _err(f"note: {line}")
    return bool(snippet.left_out)


def _included(snippet, skipped) -> bool:
    """Whether --include-broken kept this item in the output."""
    data = snippet.data
    names = set()
    for key in ("pciHostDevices", "mediatedDevices"):
        names.update(e.get("resourceName") for e in data.get(key, []))
    for group in (data.get("nodeGroups") or {}).values():
        names.update(g.get("name") for g in group.get("gpus", []))
    names.update(g.get("deviceName") for g in data.get("gpus", []))
    return skipped.resource_name in names


def _add_cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kubeconfig", metavar="FILE", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)")
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")
    parser.add_argument(
        "--kubevirt", metavar="[NAMESPACE/]NAME", help="which KubeVirt CR, when the cluster has several"
    )


def _add_request_options(parser: argparse.ArgumentParser, *, counts: bool) -> None:
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


# -- registration -----------------------------------------------------------------


def register(sub) -> None:
    phd = sub.add_parser(
        "permitted-host-devices",
        help="permittedHostDevices for KubeVirt / Cozystack",
        description="The permittedHostDevices block for these devices, named as the profile names them. "
        "Devices whose names will not work (kubelet-invalid, socket too long, not advertised, two requested "
        "devices with one name) are reported on stderr and left out unless --include-broken. "
        "Exit 0, or 1 when something was reported.",
    )
    phd.add_argument("devices", nargs="*", metavar="DEVICE", help="10de:2236, 10DE:2236 or 0x10de:0x2236")
    _add_request_options(phd, counts=False)
    phd.add_argument(
        "--format",
        choices=("kubevirt", "cozystack", "patch"),
        default="kubevirt",
        help="kubevirt: permittedHostDevices for the KubeVirt CR's spec.configuration; cozystack: "
        "gpu.permittedHostDevices for Cozystack's platform values; patch: a JSON merge patch for "
        "`kubectl patch kubevirt NAME --type merge` (default: kubevirt)",
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
        choices=("yaml", "json", "table"),
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
    _add_request_options(pool, counts=True)
    add_profile_options(pool)
    add_output_option(pool, ("yaml", "json", "table"), default="yaml")
    pool.set_defaults(func=run_node_pool)

    vm = sub.add_parser(
        "vm-gpus",
        help="spec.domain.devices.gpus[] for a KubeVirt VM",
        description="The gpus[] entries ({name, deviceName}) for a KubeVirt VM's spec.domain.devices, one per GPU. "
        "Exit 0, or 1 when a name will not work.",
    )
    vm.add_argument("devices", nargs="*", metavar="DEVICE[=COUNT]")
    _add_request_options(vm, counts=True)
    vm.add_argument("--prefix", default="gpu", help="entry names are PREFIX1, PREFIX2, ... (default: gpu)")
    add_profile_options(vm)
    add_output_option(vm, ("yaml", "json", "table"), default="yaml")
    vm.set_defaults(func=run_vm_gpus)

    mdev = sub.add_parser(
        "mdev-name",
        help="the resource a vGPU type is advertised as",
        description='The resource name the plugin advertises for a vGPU type: "NVIDIA A100-40C" -> '
        "nvidia.com/NVIDIA_A100-40C (white-space runs to '_', nothing else). The same in every profile. "
        "Exit 1 when kubelet would refuse a name.",
    )
    mdev.add_argument("types", nargs="+", metavar="TYPE")
    add_profile_options(mdev)
    add_output_option(mdev, ("name", "yaml", "json", "table"), default="name")
    mdev.set_defaults(func=run_mdev_name)

    lint = sub.add_parser(
        "lint",
        help="check GPU resource names in YAML",
        description="Check every GPU resource name in KubeVirt CRs, HyperConverged CRs, Cozystack platform "
        "values, defaults tables, VMs/VMIs and Cozystack tenant Kubernetes values (multi-document YAML; "
        "- reads stdin). Prints FILE:LINE: code: PATH: message. Exit 0 clean, 1 findings, 2 unreadable input.",
    )
    lint.add_argument("files", nargs="+", metavar="FILE")
    lint.add_argument(
        "--upgrade-to", metavar="PROFILE", help="also report names this profile renames (renamed-by-upgrade)"
    )
    add_profile_options(lint)
    add_output_option(lint, ("text", "yaml", "json", "table"), default="text")
    lint.set_defaults(func=run_lint)

    scan = sub.add_parser(
        "scan",
        help="what the device plugin finds on this node",
        description="Walk DIR/sys/bus/pci/devices and DIR/sys/bus/mdev/devices as the plugin does: every NVIDIA "
        "function with its device id, driver, IOMMU group, NUMA node and the resource it is advertised as (or "
        "why not), and what is wrong with the node. Exit 0, 1 when something is wrong, 2 when DIR has no sysfs.",
    )
    scan.add_argument("--sysfs-root", metavar="DIR", default="/", help="the directory holding sys/ (default: /)")
    add_profile_options(scan)
    add_output_option(scan)
    scan.set_defaults(func=run_scan)

    audit = sub.add_parser(
        "audit",
        help="compare the KubeVirt CR, the nodes and the profile",
        description="Read the KubeVirt CR and the Nodes (read-only) and report permitted names no node "
        "advertises, advertised nvidia.com names not permitted, permitted names that do not match the profile, "
        "and which plugin releases are consistent with the advertised names." + CLUSTER_PROFILE_NOTE
        + " Exit 0 clean, 1 findings, 2 errors.",
    )
    _add_cluster_options(audit)
    add_profile_options(audit)
    add_output_option(audit)
    audit.set_defaults(func=run_audit)

    options = sub.add_parser(
        "gpu-options",
        help="what a tenant node pool may ask for",
        description="Every permitted resource name with its GPU model and how many are allocatable on which "
        "nodes, like Cozystack's dashboard offers for nodeGroups.<group>.gpus." + CLUSTER_PROFILE_NOTE,
    )
    _add_cluster_options(options)
    add_profile_options(options)
    add_output_option(options)
    options.set_defaults(func=run_gpu_options)

    apply = sub.add_parser("apply", help="change the cluster (only when asked)")
    apply_sub = apply.add_subparsers(dest="apply_command", metavar="WHAT", parser_class=sub._parser_class)
    apply_sub.required = True
    aphd = apply_sub.add_parser(
        "permitted-host-devices",
        help="server-side apply permittedHostDevices to the KubeVirt CR",
        description="Server-side apply (field manager pciname) of the permittedHostDevices for these devices to "
        "the KubeVirt CR. Refused when Cozystack or the HyperConverged operator manages the CR, and when another "
        "field manager owns the field (unless --force)." + CLUSTER_PROFILE_NOTE
        + " Exit 0 applied, 1 refused or some devices left out, 2 errors.",
    )
    aphd.add_argument("devices", nargs="*", metavar="DEVICE")
    _add_request_options(aphd, counts=False)
    aphd.add_argument("--force", action="store_true", help="take over the field from other field managers")
    aphd.add_argument("--dry-run", action="store_true", help="let the server check the apply without persisting it")
    _add_cluster_options(aphd)
    add_profile_options(aphd)
    add_output_option(aphd)
    aphd.set_defaults(func=run_apply_permitted_host_devices)


# -- generate -----------------------------------------------------------------------


def _snippet_table(snippet, rows_of) -> None:
    rows = rows_of(snippet.data)
    for skipped in snippet.left_out:
        if not _included(snippet, skipped):
            rows.append((skipped.item, skipped.resource_name, "left out: " + ",".join(skipped.codes)))
    table(rows, ("REQUEST", "RESOURCE", "STATUS"))


def run_permitted_host_devices(args: argparse.Namespace) -> int:
    from ..kube.generate import permitted_host_devices, render

    if not args.devices and not args.mdev:
        raise _fail("no devices given: name at least one DEVICE or --mdev TYPE")
    if args.replace_defaults and args.format != "cozystack":
        raise _fail("--replace-defaults goes with --format cozystack")
    snippet = permitted_host_devices(args.devices, args.mdev, _profile(args), args.include_broken)
    broken = _report(snippet)
    output = args.output or ("json" if args.format == "patch" else "yaml")
    if output == "table":

        def rows(data):
            out = []
            for e in data.get("pciHostDevices", []):
                out.append((e["pciVendorSelector"], e["resourceName"], "permitted"))
            for e in data.get("mediatedDevices", []):
                out.append((e["mdevNameSelector"], e["resourceName"], "permitted"))
            return out

        _snippet_table(snippet, rows)
    else:
        emit(render(snippet.data, args.format, replace_defaults=True if args.replace_defaults else None), output)
    return 1 if broken else 0


def _requests(items) -> list[tuple[str, int]]:
    from ..kube.generate import parse_request

    return [parse_request(item) for item in items]


def run_node_pool(args: argparse.Namespace) -> int:
    from ..kube.generate import node_pool

    if not args.devices and not args.mdev:
        raise _fail("no GPUs given: name at least one DEVICE[=COUNT] or --mdev TYPE[=COUNT]")
    snippet = node_pool(
        args.group,
        _requests(args.devices),
        _profile(args),
        args.include_broken,
        mdevs=_requests(args.mdev),
    )
    broken = _report(snippet)
    if args.output == "table":

        def rows(data):
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
        raise _fail("no GPUs given: name at least one DEVICE[=COUNT] or --mdev TYPE[=COUNT]")
    if not args.prefix or any(c.isspace() for c in args.prefix):
        raise _fail("--prefix must be a non-empty name without white space")
    snippet = vm_gpus(
        _requests(args.devices),
        _profile(args),
        args.include_broken,
        mdevs=_requests(args.mdev),
        prefix=args.prefix,
    )
    broken = _report(snippet)
    if args.output == "table":
        _snippet_table(snippet, lambda data: [(g["name"], g["deviceName"], "requested") for g in data["gpus"]])
    else:
        emit(snippet.data, args.output)
    return 1 if broken else 0


def run_mdev_name(args: argparse.Namespace) -> int:
    from ..kube.generate import mdev_names

    _profile(args)  # validated; vGPU names do not depend on it
    results = mdev_names(args.types)
    if args.output == "name":
        for r in results:
            print(r["resource_name"])
            for w in r["warnings"]:
                _err(f"{r['mdev_type']}: {w['code']}: {w['message']}")
    elif args.output == "table":
        table(
            [(r["mdev_type"], r["resource_name"], r["env_var"], ",".join(w["code"] for w in r["warnings"]) or None) for r in results],
            ("MDEV TYPE", "RESOURCE", "ENV VAR", "WARNINGS"),
        )
    else:
        emit(results, args.output)
    return 0 if all(r["advertised"] for r in results) else 1


# -- lint ------------------------------------------------------------------------------


def run_lint(args: argparse.Namespace) -> int:
    from ..errors import LintInputError
    from ..kube.inputs import read_input
    from ..kube.lint import Linter

    if args.files.count("-") > 1:
        raise _fail("standard input (-) can be linted only once")
    upgrade = args.upgrade_to
    if upgrade is not None and upgrade.strip().lower() == "auto":
        raise _fail("--upgrade-to auto is not a profile: name the release you upgrade to")
    linter = Linter(_profile(args), upgrade)
    errors = []
    for path in args.files:
        try:
            data, name = read_input(path)
            linter.add_text(data, name)
        except LintInputError as error:
            errors.append(str(error))
    findings = linter.run()
    if args.output == "text":
        for f in findings:
            print(f.format())
    elif args.output == "table":
        if findings:
            table(
                [(f"{f.file}:{f.line}", f.code, f.path, f.value, _show(f.expected)) for f in findings],
                ("WHERE", "CODE", "PATH", "VALUE", "EXPECTED"),
            )
    else:
        emit([f.to_dict() for f in findings], args.output)
    for message in errors:
        _err(message)
    if errors:
        return 2
    return 1 if findings else 0


def _show(value) -> str | None:
    if value is None:
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or None
    return str(value).lower() if isinstance(value, bool) else str(value)


# -- scan ------------------------------------------------------------------------------


def run_scan(args: argparse.Namespace) -> int:
    from ..host.sysfs import scan

    result = scan(args.sysfs_root, _profile(args))
    if args.output == "table":
        out = sys.stdout
        out.write(f"profile {result.profile}; the plugin takes functions bound to {', '.join(result.vfio_drivers)}\n\n")
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
        if result.resources:
            out.write("\n")
            table(
                [(r.resource_name, r.kind, r.source, r.count, "yes" if r.works else "no") for r in result.resources],
                ("RESOURCE", "KIND", "FROM", "COUNT", "WORKS"),
            )
        if result.diagnoses:
            out.write("\n")
            for d in result.diagnoses:
                out.write(f"{d.severity}: {d.code}: {d.subject}: {d.message}\n")
    else:
        emit(result.to_dict(), args.output)
    return 1 if result.errors else 0


# -- cluster -----------------------------------------------------------------------------


def _cluster(args: argparse.Namespace):
    from ..kube.cluster import connect, read_cluster

    client = connect(args.kubeconfig, args.context)
    return client, read_cluster(client, args.kubevirt)


def run_audit(args: argparse.Namespace) -> int:
    from ..kube.audit import audit

    _, state = _cluster(args)
    report = audit(state.kubevirt, state.nodes, _profile(args, allow_auto=True))
    if args.output == "table":
        out = sys.stdout
        manager = report["management"]["manager"]
        out.write(f"KubeVirt CR: {report['kubevirt'] or 'none found'}")
        out.write(f" (managed by {manager})\n" if manager else "\n")
        out.write(f"profile: {report['profile']} ({report['profile_source']})\n")
        inference = report["inference"]
        if inference["names"]:
            releases = [n.partition("@")[2] for n in inference["consistent"]]
            out.write(f"plugin releases consistent with the advertised names: {', '.join(releases) or 'none'}\n")
        if report["permitted"]:
            out.write("\n")
            table(
                [
                    (
                        p["kind"],
                        p["selector"],
                        p["resource_name"],
                        p["expected"] if p["expected"] != p["resource_name"] else "=",
                        ",".join(f"{n}={c}" for n, c in p["nodes"].items()) or None,
                    )
                    for p in report["permitted"]
                ],
                ("KIND", "SELECTOR", "PERMITTED", "EXPECTED", "ALLOCATABLE"),
            )
        if report["advertised"]:
            out.write("\n")
            table(
                [
                    (a["resource_name"], a["kind"], "yes" if a["permitted"] else "no", ",".join(f"{n}={c}" for n, c in a["nodes"].items()))
                    for a in report["advertised"]
                ],
                ("ADVERTISED", "KIND", "PERMITTED", "ALLOCATABLE"),
            )
        if report["findings"]:
            out.write("\n")
            for f in report["findings"]:
                where = f" {f['path']}:" if f.get("path") else ""
                out.write(f"{f['code']}:{where} {f['message']}\n")
        else:
            out.write("\nno findings\n")
    else:
        emit(report, args.output)
    return 1 if report["findings"] else 0


def run_gpu_options(args: argparse.Namespace) -> int:
    from ..kube.audit import gpu_options

    _, state = _cluster(args)
    if state.kubevirt is None:
        raise _fail("the cluster has no KubeVirt CR (kubevirt.io/v1 kubevirts)")
    options = gpu_options(state.kubevirt, state.nodes, _profile(args, allow_auto=True))
    if args.output == "table":
        if options:
            table(
                [
                    (
                        o["resource_name"],
                        "; ".join(o["models"]) or None,
                        ",".join(o["devices"] or o["selectors"]) or None,
                        o["allocatable"],
                        ",".join(f"{n['name']}={n['allocatable']}" for n in o["nodes"]) or None,
                    )
                    for o in options
                ],
                ("RESOURCE", "MODEL", "DEVICE", "ALLOCATABLE", "NODES"),
            )
        else:
            print("the KubeVirt CR permits no host devices")
    else:
        emit(options, args.output)
    return 0


def run_apply_permitted_host_devices(args: argparse.Namespace) -> int:
    from ..errors import ApplyRefused
    from ..kube.audit import choose_profile
    from ..kube.cluster import apply_permitted_host_devices
    from ..kube.objects import FIELD_MANAGER
    from ..kube.generate import permitted_host_devices

    if not args.devices and not args.mdev:
        raise _fail("no devices given: name at least one DEVICE or --mdev TYPE")
    client, state = _cluster(args)
    if state.kubevirt is None:
        raise _fail("the cluster has no KubeVirt CR (kubevirt.io/v1 kubevirts) to apply to")
    profile, how, _ = choose_profile(_profile(args, allow_auto=True), state.nodes)
    snippet = permitted_host_devices(args.devices, args.mdev, profile, args.include_broken)
    broken = _report(snippet)
    if not snippet.data:
        raise _fail("nothing to apply: every device was left out")
    try:
        applied = apply_permitted_host_devices(
            client, state.kubevirt, snippet.data, force=args.force, dry_run=args.dry_run
        )
    except ApplyRefused as refused:
        _err(str(refused))
        return 1
    meta = state.kubevirt.get("metadata") or {}
    ref = f"{meta.get('namespace')}/{meta.get('name')}"
    result = {
        "kubevirt": ref,
        "field_manager": FIELD_MANAGER,
        "force": bool(args.force),
        "dry_run": bool(args.dry_run),
        "profile": snippet.profile,
        "profile_source": how,
        "permittedHostDevices": applied,
        "left_out": [s.to_dict() for s in snippet.left_out],
    }
    if args.output == "table":
        pci, mdev = len(applied.get("pciHostDevices", [])), len(applied.get("mediatedDevices", []))
        print(
            f"applied {pci} pciHostDevices and {mdev} mediatedDevices entries to KubeVirt {ref} "
            f"(field manager {FIELD_MANAGER}{', forced' if args.force else ''}{', dry run' if args.dry_run else ''}; "
            f"profile {snippet.profile})"
        )
    else:
        emit(result, args.output)
    return 1 if broken else 0
