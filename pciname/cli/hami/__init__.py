"""The ``image-check`` command: whether HAMi-core's limits will hold in a
workload built on an image, read offline (a root filesystem, an OCI layout
directory or tarball, a docker save tarball), judged against one HAMi
release. Exit 0 when they hold, 1 when they do not or the release's
HAMi-core is not known (a line says which, and what the workload sees),
2 for bad usage or input. The command builds the request of
:mod:`pciname.capabilities.image_check`.
"""

from __future__ import annotations

import argparse
from typing import Any

from pciname.base.render import emit, write_line
from pciname.capabilities.registry import ask, formats
from pciname.cli.output import add_output_option
from pciname.cli.translate import request_of


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = sub.add_parser(
        "image-check",
        help="whether HAMi's GPU memory and compute limits will hold in an image's workloads",
        description="Reads IMAGE offline, never extracting it or following a link out of it: an unpacked root "
        "filesystem, an OCI image layout (directory or tarball) or a docker save tarball, its layers applied in "
        "order with their whiteouts. Finds the C library the image's programs load and judges, from its own "
        "dynamic symbol table (dlvsym, _dl_sym, the versions of dlsym) and the HAMi release's HAMi-core code, "
        "whether libvgpu.so can find the real dlsym. Exit 0: the limits hold; 1: they do not (the line says "
        "what the workload sees), or the release's HAMi-core is not known; 2: bad input.",
    )
    parser.add_argument("image", metavar="IMAGE", help="a root filesystem directory, an OCI layout or a tarball")
    parser.add_argument(
        "--hami",
        metavar="RELEASE",
        required=True,
        help="the HAMi release the cluster runs (v2.8.1, hami@v2.8.1; cozystack@v1.6.2: the one it ships)",
    )
    add_output_option(parser, formats("image-check"), default="text")
    parser.set_defaults(func=run_image_check)


def run_image_check(args: argparse.Namespace) -> int:
    result = ask("image-check", request_of("image-check", args))
    if args.output != "text":
        emit(result.as_dict(), args.output)
    else:
        print_text(result.as_dict())
    return 0 if result.holds else 1


def print_text(answer: dict[str, Any]) -> None:
    library = answer["library"]
    spelled = library["kind"] + (f" {library['version']}" if library["version"] else "")
    verdict = {True: "the limits hold", False: "the limits do not hold", None: "not judged"}[answer["holds"]]
    write_line(f"{answer['image']}: {verdict} under HAMi {answer['hami']} (HAMi-core {answer['libvgpu_commit'][:7]})")
    write_line(f"C library: {spelled} ({library['machine']}, {library['path']})")
    for reason in answer["reasons"]:
        write_line(f"because: {reason}")
    if answer["sees"]:
        write_line(f"the workload sees: {answer['sees']}")
