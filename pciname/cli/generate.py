"""Generate commands: resource names into KubeVirt / Cozystack configuration.

    permitted-host-devices  node-pool  vm-gpus  mdev-name

Each takes ``--profile`` and ``-o``. Exit codes: 0 fine, 1 names left out
(or, with ``--include-broken``, kept but broken), 2 bad usage or bad input.
Each builds its request of :mod:`pciname.capabilities` (permitted,
node_pool, vm_gpus, dra_claims, mdev_name) from the options, asks the
registry (:func:`pciname.capabilities.registry.ask`) and prints the answer.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pciname.base.render import emit, table, write_line
from pciname.capabilities.registry import ask, formats
from pciname.cli.core import add_profile_options
from pciname.cli.output import add_output_option
from pciname.cli.shared import add_cozystack_option, add_request_options, included, profile_arg, report, say
from pciname.cli.translate import request_of
from pciname.errors import PcinameError

if TYPE_CHECKING:
    from pciname.capabilities.vm_gpus import Snippet

#: node-pool's group fields: node_pool's keyword (and the option's dest), and the option.
POOL_FIELD_FLAGS = {
    "instance_type": "--instance-type",
    "min_replicas": "--min-replicas",
    "max_replicas": "--max-replicas",
    "disk_size": "--disk-size",
    "roles": "--role",
    "cpu": "--cpu",
    "memory": "--memory",
}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    add_permitted_parser(sub)
    add_node_pool_parser(sub)
    add_vm_gpus_parser(sub)
    add_mdev_name_parser(sub)
    gfd = sub.add_parser("gfd-labels", help="the labels GPU Feature Discovery sets for a node's GPUs")
    gfd.description = "GFD's resource labels (NVIDIA/k8s-device-plugin, per release) for COUNT whole GPUs NVML names NVML_NAME, as nvidia-smi shows it: pciname never derives that name."
    gfd.add_argument("product", metavar="NVML_NAME")
    for flag in ("--count", "--replicas", "--memory-mib"):
        gfd.add_argument(flag, type=int, default=None if flag == "--memory-mib" else 1)
    gfd.add_argument("--compute", metavar="MAJOR.MINOR", help="the compute capability (8.0)")
    gfd.add_argument("--release", help="k8s-device-plugin vX.Y.Z (default: the newest)")
    gfd.add_argument("--renamed", action="store_true", help="shared resources renamed (renameByDefault)")
    gfd.add_argument("--sharing-strategy", choices=("time-slicing", "mps"), default="time-slicing")
    add_output_option(gfd, formats("gfd-labels"), default="yaml")
    gfd.set_defaults(func=run_gfd_labels)


def run_gfd_labels(args: argparse.Namespace) -> int:
    emit(ask("gfd-labels", request_of("gfd-labels", args)), args.output)
    return 0


def add_permitted_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pciname.capabilities.choices import permitted

    facts = permitted()
    block_formats, default_format = facts["formats"], facts["default"]
    variants, mdev_variants, default_variant = facts["variants"], facts["mdev_variants"], facts["default_variant"]

    phd = sub.add_parser(
        "permitted-host-devices",
        help="permittedHostDevices for KubeVirt / Cozystack",
        description="The permittedHostDevices block for these devices, named as the profile names them. "
        "Devices whose names will not work (kubelet-invalid, socket too long, not advertised, two requested "
        "devices with one name) are reported on stderr and left out unless --include-broken. "
        "With --format cozystack the entries are checked against what Cozystack does with them: mdev entries its "
        "GPU variant ignores are left out, and entries that clash with its default table are reported "
        "(--replace-defaults drops that table). "
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
        "--offered",
        action="store_true",
        help="with --from-scan: also every vGPU type the node's GPUs offer (mdev_supported_types), not only those "
        "with vGPUs created, under its exact name",
    )
    phd.add_argument(
        "--format",
        choices=block_formats,
        default=default_format,
        help="kubevirt: permittedHostDevices for the KubeVirt CR's spec.configuration; cozystack: "
        "gpu.permittedHostDevices for Cozystack's platform values; patch: a JSON merge patch for "
        f"`kubectl patch kubevirt NAME --type merge` (default: {default_format})",
    )
    phd.add_argument(
        "--replace-defaults",
        action="store_true",
        help="with --format cozystack: also set gpu.replaceDefaults: true (drop Cozystack's default entries)",
    )
    phd.add_argument(
        "--variant",
        metavar="VARIANT",
        help="with --format cozystack: the cluster's bundles.iaas.gpuOperatorVariant, one of the release's "
        f"({', '.join(variants)} in the newest; default: {default_variant}); "
        f"{', '.join(v for v in variants if v not in mdev_variants)} ignores mediatedDevices, "
        "so --mdev entries are left out and reported",
    )
    phd.add_argument(
        "--vgpu-device-manager",
        action="store_true",
        help="with --variant vgpu: the cluster sets gpu.vgpuDeviceManager.enabled, so Cozystack adds its vGPU "
        "defaults table",
    )
    phd.add_argument(
        "--cozystack-defaults",
        metavar="FILE",
        help="with --format cozystack: compare with the defaults table in FILE (a pciHostDevices / mediatedDevices "
        "table, or YAML with a permittedHostDevices mapping) instead of the built-in one; entries that clash "
        "with the defaults are reported (exit 1) unless --replace-defaults",
    )
    add_cozystack_option(phd, "whose GPU wiring, variants and default tables --format cozystack checks against")
    add_profile_options(phd, kata=False)
    phd.add_argument(
        "-o",
        "--output",
        choices=formats("permitted-host-devices"),
        help="output format (default: json for --format patch, else yaml)",
    )
    phd.set_defaults(func=run_permitted_host_devices)


def add_vm_gpus_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pciname.capabilities.vm_gpus import DEFAULT_NAME, DEFAULT_PREFIX

    vm = sub.add_parser(
        "vm-gpus",
        help="spec.domain.devices.gpus[] for a KubeVirt VM",
        description="The gpus[] entries ({name, deviceName}) for a KubeVirt VM's spec.domain.devices, one per GPU. "
        "Exit 0, or 1 when a name will not work.",
    )
    vm.add_argument("devices", nargs="*", metavar="DEVICE[=COUNT]")
    add_request_options(vm, counts=True)
    vm.add_argument(
        "--prefix", default=DEFAULT_PREFIX, help=f"entry names are PREFIX1, PREFIX2, ... (default: {DEFAULT_PREFIX})"
    )
    add_profile_options(vm, kata=False)
    dra = vm.add_argument_group(
        "DRA",
        "--dra: the GPUs through Kubernetes DRA with NVIDIA's DRA driver instead of resource names: one YAML "
        "stream of the ResourceClaimTemplate, the VirtualMachine fragment (resourceClaims and gpus[] with "
        "claimName/requestName) and the DeviceClass the selectors assume; notes on stderr. A driver and "
        "KubeVirt release that cannot work together is one line with the reason and the nearest that works, "
        "exit 2",
    )
    dra.add_argument("--dra", action="store_true", help="write DRA claims (see above)")
    dra.add_argument(
        "--dra-driver",
        metavar="VERSION",
        help="the DRA driver release (default: the newest tagged release that works; main or v0.5.0: its unreleased "
        "main branch)",
    )
    dra.add_argument("--kubevirt", metavar="VERSION", help="the KubeVirt release (default: the newest that works)")
    dra.add_argument(
        "--resource-api", metavar="VERSION", help="resource.k8s.io version: v1 (the default), v1beta2 or v1beta1"
    )
    dra.add_argument(
        "--name", default=DEFAULT_NAME, help=f"the claim template's, VM's and claim's name (default {DEFAULT_NAME})"
    )
    dra.add_argument(
        "--product-name",
        action="store_true",
        help="also select by the exact productName the driver publishes (default: vendor and device id only)",
    )
    add_output_option(vm, formats("vm-gpus"), default="yaml")
    vm.set_defaults(func=run_vm_gpus)


def add_mdev_name_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    mdev = sub.add_parser(
        "mdev-name",
        help="the resource a vGPU type is advertised as",
        description='The resource name the plugin advertises for a vGPU type: "NVIDIA A100-40C" -> '
        "nvidia.com/NVIDIA_A100-40C (white-space runs to '_', nothing else) from plugin v1.1.x on; v1.0.x "
        'took the second space-separated field ("GRID T4-1Q" -> nvidia.com/T4-1Q) and panics on a name '
        "without a space (plugin-crash). Exit 1 when kubelet would refuse a name or the plugin would crash.",
    )
    mdev.add_argument("types", nargs="+", metavar="TYPE")
    add_profile_options(mdev, kata=False)
    add_output_option(mdev, formats("mdev-name"), default="name")
    mdev.set_defaults(func=run_mdev_name)


def _snippet_table(snippet: Snippet, rows_of: Callable[[dict[str, Any]], list[tuple[Any, ...]]]) -> None:
    """The snippet's rows, then a row for each item left out of it."""
    rows = rows_of(snippet.data)
    for skipped in snippet.left_out:
        if not included(snippet, skipped):
            rows.append((skipped.item, skipped.resource_name, "left out: " + ",".join(skipped.codes)))
    table(rows, ("REQUEST", "RESOURCE", "STATUS"))


def run_permitted_host_devices(args: argparse.Namespace) -> int:
    from pciname.capabilities.permitted import SUGGESTION, render

    request = request_of("permitted-host-devices", args, cozystack_defaults=_defaults_file(args.cozystack_defaults))
    profile = profile_arg(args, chosen=request.chosen_profile)
    result = ask("permitted-host-devices", request, profile, note=lambda line: say(f"--from-scan: left out {line}"))
    snippet, clashes = result.snippet, result.clashes
    broken = report(snippet)
    for clash in clashes:
        for line in clash.lines():
            say(f"clash {line}")
    if clashes:
        say(f"hint: {SUGGESTION}")
    output = args.output or ("json" if args.format == "patch" else "yaml")
    if output == "table":
        lists = (("pciHostDevices", "pciVendorSelector"), ("mediatedDevices", "mdevNameSelector"))
        _snippet_table(
            snippet,
            lambda data: [
                (e[key], e["resourceName"], "permitted") for field, key in lists for e in data.get(field, [])
            ],
        )
    else:
        emit(render(snippet.data, args.format, replace_defaults=True if args.replace_defaults else None), output)
    return 1 if broken or clashes else 0


def _defaults_file(path: str | None) -> tuple[Callable[[], str | bytes], str] | None:
    """``--cozystack-defaults FILE``: what reads it (bounded) and its name."""
    if path is None:
        return None

    def read() -> str | bytes:
        from pciname.base import files

        try:
            return files.read_bounded(path, files.MAX_YAML_BYTES)
        except OSError as error:
            raise PcinameError(f"{path}: cannot read: {error.strerror or error}") from None

    return read, path


def add_node_pool_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pciname.capabilities.choices import node_pool

    facts = node_pool()
    pool_formats, default_pool_format, resource = facts["formats"], facts["default"], facts["resource"]
    defaults = facts["defaults"]
    pool = sub.add_parser(
        "node-pool",
        help="a Cozystack tenant Kubernetes node group with its GPUs",
        description="A Cozystack tenant Kubernetes node group GROUP asking for these GPUs: one {name: RESOURCE} "
        "entry per GPU. DEVICE is a device id (resolved in the profile) or a resource name (nvidia.com/..., used "
        "as given). The group is complete for the Cozystack release (--cozystack): every field its node-group "
        "schema requires (minReplicas, maxReplicas, instanceType, the disk: diskSize from v1.4.0, "
        "ephemeralStorage before; resources where required), from the options below or that schema's "
        "defaults, since Helm does not fill defaults in when the group is created. "
        "Exit 0, or 1 when a name will not work.",
    )
    pool.add_argument("group", metavar="GROUP")
    pool.add_argument("devices", nargs="*", metavar="DEVICE[=COUNT]")
    add_request_options(pool, counts=True)
    fields = pool.add_argument_group("node group fields (not with --fragment)")
    fields.add_argument(
        "--instance-type",
        metavar="NAME",
        help=f"the KubeVirt instance type of the nodes (default: {defaults.instance_type})",
    )
    fields.add_argument(
        "--min-replicas", type=int, metavar="N", help=f"the fewest nodes (default: {defaults.min_replicas})"
    )
    fields.add_argument(
        "--max-replicas", type=int, metavar="N", help=f"the most nodes (default: {defaults.max_replicas})"
    )
    fields.add_argument(
        "--disk-size",
        "--ephemeral-storage",
        dest="disk_size",
        metavar="QUANTITY",
        help="each node's disk: diskSize from Cozystack v1.4.0, ephemeralStorage before "
        f"(default: {defaults.disk_size})",
    )
    fields.add_argument(
        "--role",
        dest="roles",
        action="append",
        metavar="ROLE",
        help="a node role, e.g. ingress-nginx (repeatable; default: no roles field)",
    )
    fields.add_argument("--cpu", metavar="QUANTITY", help="resources.cpu of each node, e.g. 4 (default: none)")
    fields.add_argument("--memory", metavar="QUANTITY", help="resources.memory of each node, e.g. 16Gi (default: none)")
    pool.add_argument(
        "--fragment",
        action="store_true",
        help="emit the group's gpus only, to merge into a group that exists",
    )
    pool.add_argument(
        "--format",
        choices=pool_formats,
        default=default_pool_format,
        help="values: nodeGroups for the tenant Kubernetes application's values; patch: a JSON merge patch "
        f"{{spec: {{nodeGroups: ...}}}} for `kubectl patch {resource} NAME -n TENANT --type merge -p ...` "
        "(a merge patch replaces lists: the group's gpus and roles become the ones given), or with --cluster "
        "the merge patch of the pool's KubernetesNodes object; kubernetes-nodes: the KubernetesNodes object "
        "CLUSTER-GROUP (Cozystack v1.6.0 and later) "
        f"(default: {default_pool_format})",
    )
    pool.add_argument(
        "--cluster",
        metavar="NAME",
        help="the tenant Kubernetes cluster a KubernetesNodes pool belongs to (with --format kubernetes-nodes or patch)",
    )
    add_cozystack_option(pool, "whose node-group fields are written")
    add_profile_options(pool, kata=False)
    pool.add_argument(
        "-o",
        "--output",
        choices=formats("node-pool"),
        help="output format (default: json for --format patch, else yaml)",
    )
    pool.set_defaults(func=run_node_pool)


def run_node_pool(args: argparse.Namespace) -> int:

    request = request_of("node-pool", args, fields={name: getattr(args, name) for name in POOL_FIELD_FLAGS})
    snippet = ask("node-pool", request, profile_arg(args, chosen=request.chosen_profile))
    broken = report(snippet)
    output = args.output or ("json" if args.format == "patch" else "yaml")
    if output == "table":

        def rows(data: dict[str, Any]) -> list[tuple[Any, ...]]:
            counts: dict[str, int] = {}
            spec = data.get("spec", data)
            group = next(iter(spec["nodeGroups"].values())) if "nodeGroups" in spec else spec
            for g in group["gpus"]:
                counts[g["name"]] = counts.get(g["name"], 0) + 1
            return [(args.group, name, f"{n} GPU(s)") for name, n in counts.items()]

        _snippet_table(snippet, rows)
    else:
        emit(snippet.data, output)
    return 1 if broken else 0


#: vm-gpus options that name GPUs by resource names, which --dra does not use.
_NOT_WITH_DRA = {
    "profile": "--profile",
    "pciids": "--pciids",
    "algorithm": "--algorithm",
    "alias": "--alias",
    "nvswitch_alias": "--nvswitch-alias",
    "mdev": "--mdev",
    "vgpu": "--vgpu",
    "include_broken": "--include-broken",
}
_DRA_ONLY = {"dra_driver": "--dra-driver", "kubevirt": "--kubevirt", "resource_api": "--resource-api"}


def run_vm_gpus(args: argparse.Namespace) -> int:
    from pciname.capabilities.vm_gpus import DEFAULT_NAME

    if args.dra:
        return _run_dra(args)
    given = [flag for dest, flag in _DRA_ONLY.items() if getattr(args, dest)]
    given += ["--product-name"] if args.product_name else []
    given += ["--name"] if args.name != DEFAULT_NAME else []
    if given:
        raise PcinameError(f"{', '.join(given)} {'goes' if len(given) == 1 else 'go'} with --dra")

    request = request_of("vm-gpus", args)
    snippet = ask("vm-gpus", request, profile_arg(args))
    broken = report(snippet)
    if args.output == "table":
        _snippet_table(snippet, lambda data: [(g["name"], g["deviceName"], "requested") for g in data["gpus"]])
    else:
        emit(snippet.data, args.output)
    return 1 if broken else 0


def _run_dra(args: argparse.Namespace) -> int:
    from pciname.base.render import emit_documents

    given = [flag for dest, flag in _NOT_WITH_DRA.items() if getattr(args, dest, None) not in (None, False, [])]
    if given:
        raise PcinameError(f"{', '.join(given)}: --dra selects GPUs by what the DRA driver publishes, not by names")
    if args.output not in formats("vm-gpus --dra"):
        raise PcinameError("-o table does not go with --dra: use yaml or json")
    request = request_of("vm-gpus --dra", args)
    objects = ask("vm-gpus --dra", request)
    combination = objects.combination
    say(f"DRA driver {combination.driver}, KubeVirt {combination.kubevirt}, resource.k8s.io/{combination.resource_api}")
    for note in objects.notes:
        say(note)
    emit_documents(objects.documents, args.output)
    return 0


def run_mdev_name(args: argparse.Namespace) -> int:
    request = request_of("mdev-name", args)
    results = ask("mdev-name", request, profile_arg(args))
    if args.output == "name":
        for r in results:
            write_line(r["resource_name"] or "")
            for w in r["warnings"]:
                say(f"{r['mdev_type']}: {w['code']}: {w['message']}")
    elif args.output == "table":
        codes = [",".join(w["code"] for w in r["warnings"]) or None for r in results]
        rows = [(r["mdev_type"], r["resource_name"], r["env_var"], c) for r, c in zip(results, codes, strict=True)]
        table(rows, ("MDEV TYPE", "RESOURCE", "ENV VAR", "WARNINGS"))
    else:
        emit(results, args.output)
    return 0 if all(r["advertised"] for r in results) else 1
