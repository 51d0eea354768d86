"""Cluster commands: read a live cluster, and change it only when asked.

    audit  gpu-options  apply permitted-host-devices

Each takes the kubeconfig options, ``--profile`` (``auto``: inferred from
the names the nodes advertise) and ``-o``. Exit codes: 0 fine, 1 audit
findings or apply refused (or devices left out), 2 bad usage or the cluster
cannot be read. Each builds its request (:mod:`pciname.capabilities.audit`,
:mod:`pciname.capabilities.apply`) from its arguments and prints the answer;
asking the registry, and prints the answer (the capabilities connect to the
cluster too). ``--timeout`` bounds the API
requests of a command together and, for ``audit`` and ``gpu-options``, the
work on what they read too (counted from the command's start; past it, one
line, exit 2).
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from pciname.base.render import emit, table, write_line
from pciname.capabilities.registry import ask, formats
from pciname.cli.core import add_profile_options, profile_from_args
from pciname.cli.output import add_output_option
from pciname.cli.shared import add_cozystack_option, add_request_options, report, say
from pciname.cli.translate import request_of

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike

# pciname.cluster.kube.DEFAULT_TIMEOUT, spelled out so that building the
# parser imports nothing more (tests/test_kube_cluster.py checks).
TIMEOUT_DEFAULT_SHOWN = "30"
CREDENTIALS_NOTE = " A kubeconfig's credential plugin (users[].user.exec) runs, as with kubectl, within --timeout."
CLUSTER_PROFILE_NOTE = " --profile auto infers the plugin release from the names the nodes advertise."


def _add_cluster_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--kubeconfig", metavar="FILE", help="kubeconfig file (default: $KUBECONFIG, ~/.kube/config, in-cluster)"
    )
    parser.add_argument("--context", metavar="NAME", help="kubeconfig context (default: the current one)")
    parser.add_argument(
        "--kubevirt", metavar="[NAMESPACE/]NAME", help="which KubeVirt CR, when the cluster has several"
    )
    parser.add_argument(
        "--timeout",
        type=_seconds,
        metavar="SECONDS",
        help="seconds all the API requests may take together, and with them the work on what they read "
        f"(audit, gpu-options) (default {TIMEOUT_DEFAULT_SHOWN})",
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    audit = sub.add_parser(
        "audit",
        help="compare the KubeVirt CR, the nodes and the profile",
        description="Read the KubeVirt CR and the Nodes (read-only) and report permitted names no node "
        "advertises, advertised nvidia.com names not permitted, permitted names that do not match the profile, "
        "and which plugin releases are consistent with the advertised names."
        + CLUSTER_PROFILE_NOTE
        + CREDENTIALS_NOTE
        + " Exit 0 clean, 1 findings, 2 errors.",
    )
    _add_cluster_options(audit)
    audit.add_argument(
        "--dra",
        action="store_true",
        help="audit DRA instead: read the ResourceSlices of NVIDIA's DRA driver, the DeviceClasses, "
        "ResourceClaimTemplates, ResourceClaims and VirtualMachines, and report per VM claim request whether its "
        "DeviceClass exists and some published device satisfies its selectors",
    )
    audit.add_argument(
        "--hami",
        metavar="RELEASE",
        help="audit HAMi instead (v2.8.1, hami@v2.8.1; cozystack@v1.6.2: the one it ships): read the Nodes and the Pods and report nodes running HAMi's "
        "and NVIDIA's device plugins, GPU nodes without the label HAMi's device plugin selects (gpu=on), pods "
        "with HAMi names on nodes HAMi does not serve, and the HAMi release its pods run",
    )
    audit.add_argument(
        "--image",
        dest="images",
        action="append",
        metavar="IMAGE=PATH",
        help="with --hami: IMAGE's docker save or OCI layout tarball, OCI layout directory or root filesystem: "
        "the image-check verdict on the pods running IMAGE (repeatable)",
    )
    add_cozystack_option(audit, "the cluster runs, when its cozystack-operator Deployment does not say")
    add_profile_options(audit)
    add_output_option(audit, formats("audit"))
    audit.set_defaults(func=run_audit)

    options = sub.add_parser(
        "gpu-options",
        help="what a tenant node pool may ask for",
        description="Every permitted resource name with its GPU model and how many are allocatable on which "
        "nodes, like Cozystack's dashboard offers for nodeGroups.<group>.gpus."
        + CLUSTER_PROFILE_NOTE
        + CREDENTIALS_NOTE,
    )
    _add_cluster_options(options)
    add_cozystack_option(options, "the cluster runs, when its cozystack-operator Deployment does not say")
    add_profile_options(options)
    add_output_option(options, formats("gpu-options"))
    options.set_defaults(func=run_gpu_options)

    apply = sub.add_parser("apply", help="change the cluster (only when asked)")
    apply_sub = apply.add_subparsers(dest="apply_command", metavar="WHAT", parser_class=sub._parser_class)
    apply_sub.required = True
    aphd = apply_sub.add_parser(
        "permitted-host-devices",
        help="server-side apply permittedHostDevices to the KubeVirt CR",
        description="Server-side apply (field manager pciname) of the permittedHostDevices for these devices to "
        "the KubeVirt CR. Refused when Cozystack or the HyperConverged operator manages the CR, and when another "
        "field manager owns the field (unless --force)."
        + CLUSTER_PROFILE_NOTE
        + CREDENTIALS_NOTE
        + " Exit 0 applied, 1 refused or some devices left out, 2 errors.",
    )
    aphd.add_argument("devices", nargs="*", metavar="DEVICE")
    add_request_options(aphd, counts=False)
    aphd.add_argument("--force", action="store_true", help="take over the field from other field managers")
    aphd.add_argument("--dry-run", action="store_true", help="let the server check the apply without persisting it")
    _add_cluster_options(aphd)
    add_profile_options(aphd)
    add_output_option(aphd, formats("apply permitted-host-devices"))
    aphd.set_defaults(func=run_apply_permitted_host_devices)


def _seconds(text: str) -> float:
    import math

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a finite number of seconds more than 0: {text!r}")
    return value


def _profile(args: argparse.Namespace) -> ProfileLike | None:
    """The profile options as given: a custom profile (``--pciids``,
    ``--algorithm``), a ``--profile`` spelling, or None when none is given."""
    if getattr(args, "pciids", None) is not None or getattr(args, "algorithm", None):
        return profile_from_args(args)
    if getattr(args, "alias", None) is not None or getattr(args, "nvswitch_alias", None) is not None:
        return profile_from_args(args)
    return args.profile or None


def _connect(args: argparse.Namespace, seconds: float) -> Any:
    """The cluster client the kubeconfig options reach (:func:`pciname.capabilities.audit.connect`)."""
    from pciname.capabilities.audit import connect

    return connect(args.kubeconfig, args.context, timeout=seconds)


# -- audit ----------------------------------------------------------------------------


def run_audit(args: argparse.Namespace) -> int:
    from pciname.capabilities.audit import Deadline, read

    if args.hami is not None:
        from pciname.cli.hami.audit import run_audit_hami

        return run_audit_hami(args, _profile(args))
    if args.images:
        from pciname.errors import PcinameError

        raise PcinameError("--image needs --hami RELEASE: it is the image-check of HAMi's workloads")
    request = request_of("audit", args, {"kubevirt_name": "kubevirt"}, profile=_profile(args))
    if args.dra:
        check = Deadline(request, "audit --dra").check  # from the command's start
        dra = ask("audit --dra", request, _connect(args, request.seconds), check=check)
        _dra_table(dra) if args.output == "table" else emit(dra, args.output)
        return 1 if dra["findings"] else 0
    deadline = Deadline(request, "audit")  # from the command's start
    asked, state = read(request, _connect(args, request.seconds), deadline=deadline, note=say, doctor_events=True)
    result = ask("audit", asked, state.kubevirt, state.nodes, check=deadline.check, doctor_events=state.doctor_events)
    if args.output == "table":
        _audit_table(result)
    else:
        emit(result, args.output)
    return 1 if result["findings"] else 0


def _audit_table(result: dict[str, Any]) -> None:
    out = sys.stdout
    manager = result["management"]["manager"]
    managed = f" (managed by {manager})" if manager else ""
    write_line(f"KubeVirt CR: {result['kubevirt'] or 'none found'}{managed}", out)
    write_line(f"profile: {result['profile']} ({result['profile_source']})", out)
    cozystack = result.get("cozystack")
    if cozystack:
        known = "" if cozystack["known"] else ", no facts for it in this pciname"
        write_line(f"Cozystack: {cozystack['version']} ({cozystack['source']}{known})", out)
    inference = result["inference"]
    if inference["names"]:
        releases = [n.partition("@")[2] for n in inference["consistent"]]
        write_line(f"plugin releases consistent with the advertised names: {', '.join(releases) or 'none'}", out)
    if result["permitted"]:
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
                for p in result["permitted"]
            ],
            ("KIND", "SELECTOR", "PERMITTED", "EXPECTED", "ALLOCATABLE"),
        )
    if result["advertised"]:
        out.write("\n")
        table(
            [
                (
                    a["resource_name"],
                    a["kind"],
                    "yes" if a["permitted"] else "no",
                    ",".join(f"{n}={c}" for n, c in a["nodes"].items()),
                )
                for a in result["advertised"]
            ],
            ("ADVERTISED", "KIND", "PERMITTED", "ALLOCATABLE"),
        )
    if result.get("fleet"):
        out.write("\n")
        table(
            [
                (
                    n["node"],
                    n["variant"] and f"{n['variant']} ({n['workload']})",
                    "yes" if n["preinstalled"] else "no",
                    ",".join(f["code"] for f in n["findings"]) or None,
                )
                for n in result["fleet"]
            ],
            ("NODE", "VARIANT (WORKLOAD)", "PRE-INSTALLED", "FINDINGS"),
        )
    if result["findings"]:
        out.write("\n")
        for f in result["findings"]:
            where = f" {f['path']}:" if f.get("path") else ""
            write_line(f"{f['code']}:{where} {f['message']}", out)
    else:
        out.write("\nno findings\n")


def _dra_table(result: dict[str, Any]) -> None:
    out = sys.stdout
    api = result["resource_api"] or "none (the cluster serves no resource.k8s.io)"
    write_line(f"API: {api}; DeviceClasses: {', '.join(result['device_classes']) or 'none'}", out)
    out.write("\n")
    if result["devices"]:
        table(
            [
                (
                    d["node"],
                    d["name"],
                    _attributes_shown(d["attributes"].get(result["driver"], {})),
                    d["allocated_to"] or "-",
                )
                for d in result["devices"]
            ],
            ("NODE", f"DEVICE ({result['driver']})", "ATTRIBUTES", "ALLOCATED TO"),
        )
    else:
        write_line(f"no device in a ResourceSlice of {result['driver']}", out)
    for pool in result["pools"]:
        if pool["state"] != "complete":
            write_line(f"pool {pool['pool']} (node {pool['node']}): {pool['state']}: {pool['why']}", out)
    if result["requests"]:
        out.write("\n")
        table(
            [
                (r["vm"], r["claim"], r["request"], r.get("device_class"), r["verdict"], r["why"])
                for r in result["requests"]
            ],
            ("VM", "CLAIM", "REQUEST", "DEVICE CLASS", "VERDICT", "WHY"),
        )
    out.write("\n")
    for f in result["findings"]:
        write_line(f"{f['code']}: {f['vm']}: {f['message']}", out)
    write_line(f"note: {result['note']}" if result["findings"] or result["requests"] else "no VM claims", out)


def _attributes_shown(own: dict[str, Any]) -> str:
    return ", ".join(f"{k}={own[k]}" for k in ("type", "deviceID", "productName") if k in own)


# -- gpu-options ----------------------------------------------------------------------


def run_gpu_options(args: argparse.Namespace) -> int:
    from pciname.capabilities.audit import Deadline, read

    # --kubevirt names the CR; the request's ``kubevirt`` is a CR's text (RPC only).
    request = request_of("gpu-options", args, {"kubevirt_name": "kubevirt", "kubevirt": None}, profile=_profile(args))
    deadline = Deadline(request, "gpu-options")  # from the command's start
    asked, state = read(request, _connect(args, request.seconds), deadline=deadline, note=say, needs_kubevirt=True)
    told = asked.cozystack_report
    if told and told["known"]:
        say(f"Cozystack {told['version']} ({told['source']})")
    options = ask("gpu-options", asked, state.kubevirt, state.nodes, check=deadline.check).options
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


# -- apply ----------------------------------------------------------------------------


def run_apply_permitted_host_devices(args: argparse.Namespace) -> int:
    from pciname.capabilities.apply import FIELD_MANAGER
    from pciname.errors import ApplyRefused

    request = request_of("apply permitted-host-devices", args, {"kubevirt_name": "kubevirt"}, profile=_profile(args))
    try:
        applied = ask("apply permitted-host-devices", request, _connect(args, request.seconds), report=report)
    except ApplyRefused as refused:
        say(str(refused))
        return 1
    if args.output == "table":
        permitted = applied.permitted
        pci, mdev = len(permitted.get("pciHostDevices", [])), len(permitted.get("mediatedDevices", []))
        write_line(
            f"applied {pci} pciHostDevices and {mdev} mediatedDevices entries to KubeVirt {applied.kubevirt} "
            f"(field manager {FIELD_MANAGER}{', forced' if applied.force else ''}"
            f"{', dry run' if applied.dry_run else ''}; profile {applied.profile})"
        )
    else:
        emit(applied.to_dict(), args.output)
    return 1 if applied.left_out else 0
