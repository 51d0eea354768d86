"""Kata commands: ``kata-pod``, a Pod asking for GPUs as NVIDIA's Kata
sandbox device plugin names them.

The command builds the request of :mod:`pciname.capabilities.kata_pod`
from the options, asks the registry and prints the answer: the
object on stdout, and on stderr one ``pciname: ...`` line each for an
inferred runtime class, a note and a device left out. Exit 0, 1 when a
device was left out, 2 bad usage or bad input (a KubeVirt profile too).
"""

from __future__ import annotations

import argparse

from pciname.base.render import emit
from pciname.capabilities.registry import ask, formats
from pciname.cli.core import add_profile_options
from pciname.cli.output import add_output_option
from pciname.cli.shared import profile_arg, say
from pciname.cli.translate import request_of


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pciname.capabilities.choices import kata_pod

    facts = kata_pod()
    image, image_source, default_name, kinds = facts["image"], facts["image_source"], facts["name"], facts["kinds"]

    pod = sub.add_parser(
        "kata-pod",
        help="a Pod asking for GPUs under the Kata sandbox device plugin's names",
        description="A Pod (or Deployment) whose container asks in resources.limits for these GPUs under the "
        "names the Kata sandbox device plugin advertises (nvidia.com/pgpu for every GPU model with P_GPU_ALIAS "
        'unset, as the GPU Operator deploys it; --alias "" for per-model names), with a Kata runtimeClassName. '
        "GPUs of one name are summed into one limit. Without --profile: the newest gpu-operator@vX.Y.Z+kata. Exit 0, or 1 when a device was left out.",
    )
    pod.add_argument("devices", nargs="*", metavar="DEVICE[=COUNT]")
    pod.add_argument(
        "--runtime-class",
        metavar="NAME",
        help="the pod's runtimeClassName (default: the class the release's plugin gives its own GPU pod, "
        "kata-qemu-nvidia-gpu, said on stderr as inferred: the GPU Operator installs no Kata RuntimeClass)",
    )
    pod.add_argument("--kind", choices=kinds, default=kinds[0], help=f"the object (default: {kinds[0]})")
    pod.add_argument("--name", default=default_name, help=f"the object's name (default: {default_name})")
    pod.add_argument(
        "--image",
        default=image,
        help=f"the container's image (default: {image}, {image_source})",
    )
    add_profile_options(
        pod, custom=False, kata_only=True, default=f"the newest GPU Operator release in Kata mode: {facts['profile']}"
    )
    add_output_option(pod, formats("kata-pod"), default="yaml")
    pod.set_defaults(func=run_kata_pod)


def run_kata_pod(args: argparse.Namespace) -> int:
    request = request_of("kata-pod", args)
    result = ask("kata-pod", request, profile_arg(args, default=request.chosen_profile))
    emit(result.data, args.output)
    if result.inferred is not None:
        say(f"runtimeClassName {result.runtime_class} is inferred: {result.inferred}")
    for note in result.notes:
        say(f"note: {note}")
    for line in result.left_out:
        say(f"left out {line}")
    return 1 if result.left_out else 0
