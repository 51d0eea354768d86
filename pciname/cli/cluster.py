"""Cluster commands: read a live cluster, and change it only when asked.

    audit  gpu-options  apply permitted-host-devices

Each takes the kubeconfig options, ``--profile`` (``auto``: inferred from
the names the nodes advertise) and ``-o``. Exit codes: 0 fine, 1 audit
findings or apply refused (or devices left out), 2 bad usage or the cluster
cannot be read. What the objects mean is :mod:`pciname.kubevirt.audit`; the
client I/O is :mod:`pciname.cluster.kube`. ``--timeout`` bounds the API
requests of a command together and, for ``audit`` and ``gpu-options``, the
work on what they read too (counted from the command's start; past it, one
line, exit 2).
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import TYPE_CHECKING, Any

from pciname.base.render import emit, table, write_line
from pciname.cli.core import add_profile_options
from pciname.cli.output import add_output_option
from pciname.cli.shared import (
    NO_DEVICES,
    add_cozystack_option,
    add_request_options,
    profile_arg,
    report,
    say,
    vgpu_requests,
)
from pciname.errors import PcinameError

if TYPE_CHECKING:
    from pciname.cluster.kube import ApiClient, ClusterState

# pciname.cluster.kube.DEFAULT_TIMEOUT, spelled out so that building the
# parser imports nothing more (tests/test_kube_cluster.py checks).
TIMEOUT_DEFAULT_SHOWN = "30"
CREDENTIALS_NOTE = " A kubeconfig's credential plugin (users[].user.exec) runs, as with kubectl, within --timeout."
CLUSTER_PROFILE_NOTE = " --profile auto infers the plugin release from the names the nodes advertise."
NO_KUBEVIRT = "the cluster has no KubeVirt CR (kubevirt.io/v1 kubevirts)"


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
    add_cozystack_option(audit, "the cluster runs, when its cozystack-operator Deployment does not say")
    add_profile_options(audit)
    add_output_option(audit)
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
    add_output_option(aphd)
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


def _timeout(args: argparse.Namespace) -> float:
    from pciname.cluster.kube import DEFAULT_TIMEOUT

    return float(args.timeout) if args.timeout is not None else DEFAULT_TIMEOUT


def _cluster(args: argparse.Namespace) -> tuple[ApiClient, ClusterState]:
    from pciname.cluster.kube import connect, read_cluster

    client = connect(args.kubeconfig, args.context, timeout=_timeout(args))
    return client, read_cluster(client, args.kubevirt, timeout=_timeout(args))


class _Deadline:
    """``--timeout`` from the command's start: :meth:`check` (what the
    work calls as it goes) raises one line once it has passed."""

    def __init__(self, args: argparse.Namespace, command: str) -> None:
        self.timeout = _timeout(args)
        self.at = time.monotonic() + self.timeout
        self.command = command
        self.sizes = "what the cluster sent"

    def sized(self, state: ClusterState) -> None:
        """Say how much the cluster sent, in the message."""
        from pciname.kubevirt.objects import permitted_entries

        entries = len(permitted_entries(state.kubevirt))
        self.sizes = f"the {entries} permittedHostDevices entries and {len(state.nodes)} Nodes the cluster sent"

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise PcinameError(
                f"{self.command}: not done within --timeout ({self.timeout:g} seconds) with {self.sizes}"
            )


def _cozystack(args: argparse.Namespace, client: ApiClient) -> dict[str, Any] | None:
    """The cluster's Cozystack release: what its operator Deployment says,
    else ``--cozystack``; without a profile given, select that release's
    profile (its GPU Operator's names). A note on stderr says which."""
    from pciname.cluster.kube import read_cozystack_operator
    from pciname.cozystack.releases import get_release, release_in_cluster

    found = release_in_cluster(read_cozystack_operator(client, timeout=_timeout(args)))
    given = get_release(args.cozystack) if args.cozystack is not None else None
    if found is not None and found.release is None and given is None:
        say(
            f"the cluster runs Cozystack {found.version} ({found.evidence}), which this pciname has no facts for: "
            "use a newer pciname, or give --cozystack or --profile"
        )
    if found is not None and given is not None and found.version != given.version:
        say(f"--cozystack {given.version} given; the cluster says Cozystack {found.version} ({found.evidence})")
    release = given or (found.release if found is not None else None)
    if release is None:
        return found.to_dict() if found is not None else None
    source = "given (--cozystack)" if given is not None else found.evidence if found is not None else ""
    implied = (
        not getattr(args, "profile", None)
        and not getattr(args, "pciids", None)
        and not getattr(args, "algorithm", None)
    )
    if implied:
        args.profile = release.profile
    return {"version": release.version, "source": source, "known": True, "implies_profile": implied}


# -- audit ----------------------------------------------------------------------------


def run_audit(args: argparse.Namespace) -> int:
    from pciname.kubevirt.audit import audit

    deadline = _Deadline(args, "audit")
    client, state = _cluster(args)
    deadline.sized(state)
    cozystack = _cozystack(args, client)
    result = audit(state.kubevirt, state.nodes, profile_arg(args, allow_auto=True), check=deadline.check)
    if cozystack is not None and cozystack.pop("implies_profile", False):
        result["profile_source"] = f"Cozystack {cozystack['version']} ({cozystack['source']})"
    result["cozystack"] = cozystack
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
    if result["findings"]:
        out.write("\n")
        for f in result["findings"]:
            where = f" {f['path']}:" if f.get("path") else ""
            write_line(f"{f['code']}:{where} {f['message']}", out)
    else:
        out.write("\nno findings\n")


# -- gpu-options ----------------------------------------------------------------------


def run_gpu_options(args: argparse.Namespace) -> int:
    from pciname.kubevirt.audit import gpu_options

    deadline = _Deadline(args, "gpu-options")
    client, state = _cluster(args)
    if state.kubevirt is None:
        raise PcinameError(NO_KUBEVIRT)
    deadline.sized(state)
    cozystack = _cozystack(args, client)
    if cozystack and cozystack["known"]:
        say(f"Cozystack {cozystack['version']} ({cozystack['source']})")
    options = gpu_options(state.kubevirt, state.nodes, profile_arg(args, allow_auto=True), check=deadline.check)
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
    from pciname.cluster.kube import apply_permitted_host_devices
    from pciname.errors import ApplyRefused
    from pciname.kubevirt.audit import choose_profile
    from pciname.kubevirt.generate import permitted_host_devices
    from pciname.kubevirt.objects import FIELD_MANAGER, object_ref

    if not args.devices and not args.mdev:
        raise PcinameError(NO_DEVICES)
    client, state = _cluster(args)
    if state.kubevirt is None:
        raise PcinameError(f"{NO_KUBEVIRT} to apply to")
    profile, how, _ = choose_profile(profile_arg(args, allow_auto=True), state.nodes)
    devices, mdevs = vgpu_requests(args, counts=False, profile=profile)
    snippet = permitted_host_devices(devices, mdevs, profile, args.include_broken)
    broken = report(snippet)
    if not snippet.data:
        raise PcinameError("nothing to apply: every device was left out")
    try:
        applied = apply_permitted_host_devices(
            client, state.kubevirt, snippet.data, force=args.force, dry_run=args.dry_run, timeout=_timeout(args)
        )
    except ApplyRefused as refused:
        say(str(refused))
        return 1
    ref = object_ref(state.kubevirt)  # the apply above needed its namespace and name
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
        write_line(
            f"applied {pci} pciHostDevices and {mdev} mediatedDevices entries to KubeVirt {ref} "
            f"(field manager {FIELD_MANAGER}{', forced' if args.force else ''}{', dry run' if args.dry_run else ''}; "
            f"profile {snippet.profile})"
        )
    else:
        emit(result, args.output)
    return 1 if broken else 0
