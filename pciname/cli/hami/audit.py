"""``pciname audit --hami RELEASE``: HAMi in a tenant cluster (the request
of :class:`pciname.capabilities.audit.HamiAuditRequest`, its Nodes and Pods
read by the capability), printed as a table or as data. Exit 0 clean, 1
findings, 2 errors. ``pciname/cli/cluster.py``'s ``audit`` hands over here."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from pciname.base.render import emit, table, write_line
from pciname.capabilities.audit import Deadline, connect
from pciname.capabilities.registry import ask
from pciname.cli.translate import request_of

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike


def run_audit_hami(args: argparse.Namespace, profile: ProfileLike | None) -> int:
    """``audit --hami``: the request from ``args`` (``profile``: the profile
    options as given, which the request refuses), asked, printed."""
    request = request_of("audit --hami", args, {"kubevirt_name": "kubevirt"}, profile=profile)
    check = Deadline(request, "audit --hami").check  # from the command's start
    client = connect(args.kubeconfig, args.context, timeout=request.seconds)
    result = ask("audit --hami", request, client, check=check)
    if args.output != "table":
        emit(result, args.output)
        return 1 if result["problems"] else 0
    selector = ", ".join(f"{k}={v}" for k, v in result["node_selector"]["labels"].items())
    write_line(f"HAMi {result['hami']}: its device plugin runs on nodes with {selector}")
    served = [f"{n} ({result['gpus'][n]} GPUs)" if result["gpus"].get(n) else n for n in result["served"]]
    write_line(f"served: {', '.join(served) or 'no node'}")
    differs = f" (not {result['hami']})" if result["release_differs"] else ""
    write_line(f"HAMi images running: {', '.join(result['in_use']) or 'none'}{differs}")
    print()
    for problem in result["problems"]:
        write_line(f"{problem['code']}: {problem['node']}: {problem['message']}")
    if not result["problems"]:
        write_line("no findings")
    if result["images"]:
        print()
        table(
            [(i["image"], ", ".join(i["pods"]) or None, _verdict(i["verdict"])) for i in result["images"]],
            ("IMAGE", "PODS", "LIMITS (image-check)"),
        )
    return 1 if result["problems"] else 0


def _verdict(verdict: dict[str, Any] | None) -> str:
    if verdict is None:
        return "- (no --image)"
    library = verdict["library"]
    said = {True: "hold", False: "do not hold", None: "not judged"}[verdict["holds"]]
    return f"{said} ({library['kind']}{' ' + library['version'] if library['version'] else ''}, {library['machine']})"
