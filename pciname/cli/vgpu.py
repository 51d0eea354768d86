"""The ``vgpu-types`` command: every vGPU type a GPU supports, with the
exact ``mdev_type/name`` where it is known and the resource the profile's
plugin makes of it. Exit 0, 1 when the catalogue does not cover the device
(one line saying where it stops), 2 bad usage or input. The command
builds the request of :mod:`pciname.capabilities.vgpu_types`.
"""

from __future__ import annotations

import argparse
from typing import Any

from pciname.base.render import emit, table
from pciname.capabilities.registry import ask, formats
from pciname.cli.core import add_profile_options
from pciname.cli.output import add_output_option
from pciname.cli.shared import profile_arg, say
from pciname.cli.translate import request_of


def _prefix_help() -> str:
    from pciname.naming.vgpu_prefixes import FACTS, READ_ON_HOST

    known: dict[str, str] = {}
    for fact in FACTS:
        known.setdefault(fact.prefix, "")
        families = known[fact.prefix].split(", ") if known[fact.prefix] else []
        if fact.family not in families:
            families.append(fact.family)
        known[fact.prefix] = ", ".join(families)
    listed = "; ".join(f"{prefix!r}: {families}" for prefix, families in known.items())
    return (
        "The prefix of mdev_type/name is a recorded fact per GPU family, with its source, never a guess. "
        f"Families with an observed string: {listed}. Every other family's string is unknown "
        f"(mdev_name null, certainty unknown): read it with {READ_ON_HOST}."
    )


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "vgpu-types",
        help="every vGPU type a GPU supports, with its exact mdev_type/name and resource",
        description="Every vGPU type NVIDIA's catalogue (vgpu-device-manager examples/config-example.yaml) lists "
        "for DEVICE: the type (A10-24Q), the most instances one GPU takes, the exact mdev_type/name string "
        "(NVIDIA A10-24Q) and how certain it is, the resource the profile's plugin advertises for it "
        "(nvidia.com/NVIDIA_A10-24Q; v1.0.x: the second field) and the nvidia.com/vgpu.config label value. "
        + _prefix_help()
        + " Exit 1 when the catalogue does not cover DEVICE.",
    )
    parser.add_argument("device", metavar="DEVICE", help="10de:2236, 10DE:2236 or 0x10de:0x2236")
    add_profile_options(parser, kata=False)
    add_output_option(parser, formats("vgpu-types"))
    parser.set_defaults(func=run_vgpu_types)


def run_vgpu_types(args: argparse.Namespace) -> int:

    request = request_of("vgpu-types", args)
    result = ask("vgpu-types", request, profile_arg(args))
    if result.types is None:
        say(result.message)
        return 1
    if args.output != "table":
        emit(result.types, args.output)
        return 0
    print_table(result.types)
    return 0


def print_table(answer: dict[str, Any]) -> None:
    source = answer["catalogue"]
    print(
        f"{answer['device']}: {', '.join(answer['families'])}; profile {answer['profile']}; "
        f"catalogue {source['repo']} {source['release']} ({source['commit'][:12]})"
    )
    print()
    rows = [
        (
            t["type"],
            t["max_instances"],
            t["mdev_name"] or "unknown",
            t["mdev_name_certainty"],
            t["resource_name"],
            t["vgpu_config"],
        )
        for t in answer["types"]
    ]
    table(rows, ("TYPE", "MAX", "MDEV NAME", "CERTAINTY", "RESOURCE", "VGPU.CONFIG"))
    notes: list[str] = []
    for t in answer["types"]:
        evidence = t["mdev_name_evidence"]
        line = (
            f"{t['family']}: prefix from {evidence['kind']}: {evidence['observed']!r} ({evidence['source']})"
            if evidence
            else f"{t['family']}: no observed type string: read it with {answer['read_on_host']}"
        )
        if line not in notes:
            notes.append(line)
    if len(answer["families"]) > 1:
        notes.append(
            f"{answer['device']} is the id of {' and '.join(answer['families'])} boards: "
            "a node offers only its own board's types"
        )
    print()
    for line in notes:
        print(line)
