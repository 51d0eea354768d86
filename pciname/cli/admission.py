"""The admission-policy command: a ValidatingAdmissionPolicy for GPU names.

Prints the policy and its binding (``-o yaml``: a multi-document stream,
``-o json``: a ``kind: List``) for ``kubectl apply -f -``. Exit codes: 0, 1
when devices or CR entries were left out of the allowed set (reported on
stderr), 2 bad usage or bad input. The command builds the request of
:mod:`pciname.capabilities.admission` (the CR it asks for read by the
capability: a file's or the cluster's), asks the registry and prints the answer.
"""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from pciname.capabilities.registry import ask, formats
from pciname.cli.core import add_profile_options
from pciname.cli.shared import profile_arg, report_left_out, say
from pciname.cli.translate import request_of
from pciname.errors import PcinameError

if TYPE_CHECKING:
    from pciname.capabilities.admission import AdmissionPolicyRequest

POLICY_FORMATS = formats("admission-policy")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pciname.capabilities.choices import admission

    actions, default_actions, default_name = admission()
    policy = sub.add_parser(
        "admission-policy",
        help="a ValidatingAdmissionPolicy that stops wrong GPU names at the API server",
        description="A ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1, Kubernetes "
        "1.30+) that check GPU names where kube-apiserver admits them: VMs, VMIs, replica sets, pools and "
        "cluster-api KubeVirt machine templates (every nvidia.com deviceName must be allowed), Cozystack's tenant "
        "Kubernetes and KubernetesNodes HelmReleases, and the KubeVirt CR (names must be the profile's). The "
        "allowed names are what the profile's plugin advertises for DEVICE... and --mdev types, or what the "
        "KubeVirt CR permits (--from-cr, --from-cluster). Apply with `pciname admission-policy --from-cluster | "
        "kubectl apply -f -`. Exit 0, 1 when something was left out of the allowed set, 2 bad input.",
    )
    policy.add_argument("devices", nargs="*", metavar="DEVICE", help="10de:2236, 10DE:2236 or 0x10de:0x2236")
    policy.add_argument(
        "--mdev",
        action="append",
        default=[],
        metavar="TYPE",
        help='a vGPU type as in mdev_type/name, e.g. "NVIDIA A10-24Q" (repeatable)',
    )
    policy.add_argument(
        "--vgpu",
        action="append",
        default=[],
        metavar="TYPE",
        help="a vGPU type as NVIDIA's docs and the nvidia.com/vgpu.config label name it, e.g. A10-24Q "
        "(repeatable): its exact mdev_type/name for the GPUs given as DEVICE (see `pciname vgpu-types`); "
        "with --vgpu, DEVICEs name those GPUs and are not allowed for passthrough",
    )
    source = policy.add_mutually_exclusive_group()
    source.add_argument(
        "--from-cr",
        metavar="FILE",
        help="allow what this KubeVirt CR permits (or Cozystack values, a table; - reads stdin); entries "
        "`pciname lint` finds wrong are left out and reported",
    )
    source.add_argument(
        "--from-cluster", action="store_true", help="allow what the cluster's KubeVirt CR permits (read-only)"
    )
    policy.add_argument(
        "--action",
        dest="actions",
        action="append",
        choices=actions,
        metavar="ACTION",
        help=f"the binding's validationActions, repeatable: {', '.join(actions)} (default: "
        f"{' and '.join(default_actions)}: nothing is refused; Deny refuses)",
    )
    policy.add_argument(
        "--name", default=default_name, help=f"name of the policy and binding (default: {default_name})"
    )
    policy.add_argument(
        "--dra",
        action="store_true",
        help="also write the policy NAME-dra (and its binding) that holds resource.k8s.io ResourceClaims and "
        "ResourceClaimTemplates asking NVIDIA's vfio DeviceClass to the allowed GPUs: a vfio request passes only "
        "when one of its selectors is, trimmed, exactly one `pciname vm-gpus DEVICE --dra` writes for one of them",
    )
    policy.add_argument(
        "--dra-driver",
        metavar="VERSION",
        help="with --dra: the DRA driver release (default: the newest tagged release that publishes vfio "
        "devices; main or v0.5.0: its unreleased main branch)",
    )
    policy.add_argument("--kubeconfig", metavar="FILE", help="with --from-cluster: kubeconfig file")
    policy.add_argument("--context", metavar="NAME", help="with --from-cluster: kubeconfig context")
    policy.add_argument("--kubevirt", metavar="[NAMESPACE/]NAME", help="with --from-cluster: which KubeVirt CR")
    add_profile_options(policy, kata=False)
    policy.add_argument("-o", "--output", choices=POLICY_FORMATS, default="yaml", help="output format (default: yaml)")
    policy.set_defaults(func=run_admission_policy)


def run_admission_policy(args: argparse.Namespace) -> int:

    profile = profile_arg(args)
    request = request_of("admission-policy", args, {"kubevirt_name": "kubevirt"}, kubevirt_cr=args.from_cr is not None)
    given = [
        flag
        for flag, value in (
            ("--kubeconfig", args.kubeconfig),
            ("--context", args.context),
            ("--kubevirt", args.kubevirt),
        )
        if value
    ]
    if not args.from_cluster and given:
        raise PcinameError(f"{', '.join(given)} {'goes' if len(given) == 1 else 'go'} with --from-cluster")
    result = ask("admission-policy", request, profile, cr=_cr(args, request))
    policy = result.policy
    sys.stdout.write(policy.to_yaml() if args.output == "yaml" else policy.to_json())
    broken = report_left_out(result.left_out)
    for line in result.findings:
        say(f"left out: {line}")
    if not policy.allowed:
        say("note: the policy allows no nvidia.com name at all")
    return 1 if broken or result.findings else 0


def _cr(args: argparse.Namespace, request: AdmissionPolicyRequest) -> tuple[str | bytes, str] | None:
    """The KubeVirt CR the allowed set comes from, as YAML and a name: the
    ``--from-cr`` file's, the cluster's (``--from-cluster``), or None."""
    from pciname.capabilities.admission import file_cr, read_cluster_cr

    if args.from_cr is not None:
        return file_cr(args.from_cr)
    if not request.from_cluster:
        return None
    return read_cluster_cr(request, args.kubeconfig, args.context)
