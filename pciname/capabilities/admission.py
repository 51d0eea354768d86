"""``admission-policy`` as a request: a ValidatingAdmissionPolicy and its
binding that hold GPU names to an allowed set, the names devices and vGPU
types get under a profile, or the working entries of a KubeVirt CR; with
``dra``, a second policy and binding that hold DRA claims for NVIDIA's vfio
DeviceClass to the same GPUs.

:class:`AdmissionPolicyRequest` validates itself (where the allowed set
comes from: devices and types, or a CR, never both; the binding's actions)
and :func:`answer` answers it with :mod:`pciname.policy.admission`.
``pciname admission-policy`` and the ``AdmissionPolicy`` RPC build the
request, read the CR where it asks for one (a file, the message, the
cluster: :func:`cluster_cr` makes the text of a cluster's), and print or
send the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import yaml

from pciname.base.yaml_out import Dumper
from pciname.capabilities.limits import DEVICES, NAME, PROFILE, checked
from pciname.capabilities.spelling import RequestError, Spelling, Words, reworded
from pciname.errors import PcinameError
from pciname.kubevirt.vgpu import with_vgpus
from pciname.policy.admission import (
    DEFAULT_ACTIONS,
    DEFAULT_NAME,
    AdmissionPolicy,
    admission_policy,
    allowed_from_cr,
    allowed_from_devices,
)
from pciname.policy.admission_dra import dra_combination, with_dra

if TYPE_CHECKING:
    from pciname.dra.facts import Combination
    from pciname.kubevirt.generate import Skipped
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: The CLI's words for the fields its options do not spell as ``--`` and the field.
CLI_WORDS = {"devices": "DEVICE", "mdev_types": "--mdev", "vgpus": "--vgpu", "kubevirt_cr": "--from-cr"}
#: What the CLI and gRPC say of a request that allows nothing.
NOTHING_CLI = "nothing to allow: name a DEVICE or --mdev TYPE, or use --from-cr FILE / --from-cluster"
NOTHING_RPC = "empty request: no devices, mdev_types, kubevirt_cr or from_cluster"
#: The name a cluster's KubeVirt CR goes by in findings.
CLUSTER_CR = "cluster:kubevirt"


@dataclass(frozen=True)
class AdmissionPolicyRequest:
    """The allowed set: ``devices`` and vGPU types (``mdev_types`` as
    ``mdev_type/name`` gives them, ``vgpus`` as NVIDIA names them: their
    exact strings for the GPUs ``devices`` names), or a KubeVirt CR, one the
    caller gives (``kubevirt_cr``) or the cluster's (``from_cluster``,
    ``kubevirt_name``); the binding's ``actions`` (none: Warn and Audit),
    the objects' ``name``, and the profile (None: the default); ``dra``
    adds the policy that holds DRA claims for the vfio DeviceClass of the
    driver release ``dra_driver`` (None: the newest that publishes vfio
    devices) to the allowed GPUs."""

    devices: tuple[str, ...] = field(default=(), metadata=DEVICES)
    mdev_types: tuple[str, ...] = field(default=(), metadata=DEVICES)
    vgpus: tuple[str, ...] = field(default=(), metadata=DEVICES)
    kubevirt_cr: bool = False
    from_cluster: bool = False
    kubevirt_name: str | None = field(default=None, metadata=NAME)
    actions: tuple[str, ...] = field(default=(), metadata=NAME)
    name: str = field(default=DEFAULT_NAME, metadata=NAME)
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    dra: bool = False
    dra_driver: str | None = field(default=None, metadata=NAME)
    #: Set by :meth:`validated` with ``dra``: the DRA driver release's facts.
    combination: Combination | None = field(default=None, compare=False)

    @property
    def from_cr(self) -> bool:
        """Whether the allowed set comes from a KubeVirt CR."""
        return self.kubevirt_cr or self.from_cluster

    def validated(self) -> AdmissionPolicyRequest:
        """The request, its actions defaulted; a :class:`~pciname.errors.PcinameError`
        for an allowed set given twice (devices and a CR, two CRs) or not at
        all. (The actions and the name are checked as the policy is written.)"""
        checked(self)
        if self.from_cr and (self.devices or self.mdev_types or self.vgpus):

            def both(say: Words) -> str:
                named = [say(f) for f in ("devices", "mdev_types", "vgpus") if f != "vgpus" or say is not Spelling.RPC]
                return (
                    f"{', '.join(named[:-1])} and {named[-1]} go without {say('kubevirt_cr')} / {say('from_cluster')}: "
                    "the CR says what is allowed"
                )

            raise RequestError(both, CLI_WORDS)
        if self.kubevirt_cr and self.from_cluster:
            raise RequestError(
                lambda say: (
                    f"{say('from_cluster')} reads the KubeVirt CR from the cluster: leave {say('kubevirt_cr')} empty"
                ),
                CLI_WORDS,
            )
        if not self.from_cr and not self.devices and not self.mdev_types:
            raise RequestError.saying(NOTHING_CLI, NOTHING_RPC)
        if self.dra_driver and not self.dra:
            raise RequestError(
                lambda say: f"{say('dra_driver')} goes with {say('dra')}: the driver release of the DRA policy",
                CLI_WORDS,
            )
        combination = reworded(lambda word: dra_combination(self.dra_driver, word), "dra_driver") if self.dra else None
        return replace(self, actions=tuple(self.actions) or DEFAULT_ACTIONS, combination=combination)

    @property
    def chosen_profile(self) -> ProfileLike | None:
        """The profile to answer with (None: the default one)."""
        return self.profile or None


@dataclass(frozen=True)
class AdmissionPolicyAnswer:
    """The policy and binding, and with a CR, ``pciname lint``'s findings on
    the entries left out of the allowed set (one line each)."""

    policy: AdmissionPolicy
    findings: tuple[str, ...] = ()

    @property
    def left_out(self) -> tuple[Skipped, ...]:
        """The devices and types left out of the allowed set: their names will not work."""
        return self.policy.left_out


def cluster_cr(kubevirt: dict[str, Any]) -> tuple[str, str]:
    """A KubeVirt CR read from a cluster, as the YAML and the name a CR is answered from."""
    return yaml.dump(kubevirt, Dumper=Dumper, sort_keys=False), CLUSTER_CR


def file_cr(path: str) -> tuple[bytes, str]:
    """The KubeVirt CR in the file ``path`` (``-``: standard input), bounded, and its name."""
    from pciname.lint.inputs import read_input

    return read_input(path)


def read_cluster_cr(request: AdmissionPolicyRequest, kubeconfig: str | None, context: str | None) -> tuple[str, str]:
    """The KubeVirt CR of the cluster ``kubeconfig`` and ``context`` reach
    (the request's ``kubevirt_name`` among several), as :func:`cluster_cr`
    gives it; one line when there is none."""
    from pciname.cluster.kube import connect, read_kubevirt

    kubevirt = read_kubevirt(connect(kubeconfig, context), request.kubevirt_name)
    if kubevirt is None:
        raise PcinameError("the cluster has no KubeVirt CR (kubevirt.io/v1 kubevirts)")
    return cluster_cr(kubevirt)


def answer(
    request: AdmissionPolicyRequest,
    profile: ProfileLike,
    *,
    cr: tuple[str | bytes, str] | None = None,
    resolver: ResolverLike | None = None,
    check: Callable[[], None] | None = None,
    stream: Callable[[str | bytes], Any] | None = None,
) -> AdmissionPolicyAnswer:
    """The answer to a :meth:`~AdmissionPolicyRequest.validated` request
    under ``profile`` (its :attr:`~AdmissionPolicyRequest.chosen_profile`,
    as the surface resolves it). ``cr``: the CR's YAML and name, as the
    surface read it, when the request's allowed set comes from one.
    ``check`` is asked while the CR is linted, between the steps and while
    the policy's hints are written (it raises to stop: a caller's deadline);
    ``stream``: what the CR's YAML is read through."""
    from pciname.kubevirt.generate import refuse_kata

    refuse_kata(profile, "admission-policy", resolver)
    findings: list[str] = []
    left_out: tuple[Skipped, ...] = ()
    if request.from_cr:
        if cr is None:
            raise ValueError("the request's allowed set comes from a KubeVirt CR: pass its text as cr")
        text, name = cr
        permitted, findings = allowed_from_cr(text, name, profile, resolver=resolver, check=check, stream=stream)
    else:
        devices, mdevs = with_vgpus(
            request.devices, request.mdev_types, request.vgpus, profile, counts=False, resolver=resolver
        )
        permitted, left_out = allowed_from_devices(devices, mdevs, profile, resolver=resolver)
    if check is not None:
        check()
    policy = admission_policy(
        permitted, profile, request.actions, name=request.name, left_out=left_out, resolver=resolver, check=check
    )
    if request.dra:
        if request.combination is None:
            raise ValueError("answer a validated request: it has no DRA driver release")
        policy = with_dra(policy, permitted, request.combination)
    return AdmissionPolicyAnswer(policy, tuple(findings))


__all__ = [
    "CLUSTER_CR",
    "AdmissionPolicyAnswer",
    "AdmissionPolicyRequest",
    "answer",
    "cluster_cr",
    "file_cr",
    "read_cluster_cr",
]
