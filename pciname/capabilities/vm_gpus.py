"""``vm-gpus`` as a request: the ``spec.domain.devices.gpus[]`` entries of a
KubeVirt VM, one per GPU, named ``PREFIX1``, ``PREFIX2``, ...

:class:`VmGpusRequest` validates itself (GPUs given, the entries' name
prefix, the GPUs ``vgpus`` types are for) and :func:`answer` answers it
with :func:`pciname.kubevirt.generate.vm_gpus`, the ``vgpus`` types
expanded to their exact strings first (:func:`pciname.kubevirt.vgpu.with_vgpus`).
``pciname vm-gpus`` builds the request and prints the answer (there is no
RPC for it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pciname.base.requests import parse_request
from pciname.capabilities.limits import DEVICES, NAME, PROFILE, checked
from pciname.capabilities.spelling import RequestError
from pciname.kubevirt.generate import Skipped, Snippet, vm_gpus
from pciname.kubevirt.vgpu import vgpu_gpus, with_vgpus

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: What the CLI and gRPC say of a request for no GPU at all (``node-pool`` says it too).
NO_GPUS_CLI = "no GPUs given: name at least one DEVICE[=COUNT] or --mdev TYPE[=COUNT]"
NO_GPUS_RPC = "empty request: no devices and no mdev_types given"
#: The default name of what ``vm-gpus`` writes (``--dra``: the claim template, the VM and its claim).
DEFAULT_NAME = "vm-gpus"
#: The default prefix of the gpus[] entries' names.
DEFAULT_PREFIX = "gpu"


def no_gpus() -> RequestError:
    """A request for no GPU at all, in each surface's words."""
    return RequestError.saying(NO_GPUS_CLI, NO_GPUS_RPC)


@dataclass(frozen=True)
class VmGpusRequest:
    """GPUs as ``DEVICE[=COUNT]`` (or resource names, ``nvidia.com/...``) and
    vGPU types as ``TYPE[=COUNT]`` (``mdev_types``: their ``mdev_type/name``;
    ``vgpus``: as NVIDIA names them, for the GPUs ``devices`` names, which
    are then not requested for passthrough), under ``profile`` (None: the
    default); ``include_broken`` keeps names that will not work; ``prefix``
    names the entries."""

    devices: tuple[str, ...] = field(default=(), metadata=DEVICES)
    mdev_types: tuple[str, ...] = field(default=(), metadata=DEVICES)
    vgpus: tuple[str, ...] = field(default=(), metadata=DEVICES)
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    include_broken: bool = False
    prefix: str = field(default=DEFAULT_PREFIX, metadata=NAME)

    def validated(self) -> VmGpusRequest:
        """The request; a :class:`~pciname.capabilities.spelling.RequestError`
        without GPUs or for a prefix that is empty or holds white space, a
        :class:`~pciname.errors.PcinameError` for a ``DEVICE=COUNT`` with
        ``vgpus`` (the count goes to the type). (Another malformed
        ``DEVICE=COUNT`` is reported as the request is answered.)"""
        checked(self)
        if not self.devices and not self.mdev_types:
            raise no_gpus()
        if not self.prefix or any(c.isspace() for c in self.prefix):
            raise RequestError(lambda say: f"{say('prefix')} must be a non-empty name without white space")
        if self.vgpus:
            vgpu_gpus(self.devices, counts=True)
        return replace(self, devices=tuple(self.devices), mdev_types=tuple(self.mdev_types), vgpus=tuple(self.vgpus))

    @property
    def chosen_profile(self) -> ProfileLike | None:
        """The profile to answer with (None: the default one)."""
        return self.profile or None


def answer(request: VmGpusRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None) -> Snippet:
    """The gpus[] entries of a :meth:`~VmGpusRequest.validated` request under
    ``profile`` (its :attr:`~VmGpusRequest.chosen_profile`, as the surface
    resolves it), its ``vgpus`` types among the mdev types under their exact
    strings."""
    devices, mdevs = with_vgpus(
        request.devices, request.mdev_types, request.vgpus, profile, counts=True, resolver=resolver
    )
    return vm_gpus(
        [parse_request(d) for d in devices],
        profile,
        request.include_broken,
        mdevs=[parse_request(m) for m in mdevs],
        prefix=request.prefix,
        resolver=resolver,
    )


__all__ = [
    "DEFAULT_NAME",
    "DEFAULT_PREFIX",
    "NO_GPUS_CLI",
    "NO_GPUS_RPC",
    "Skipped",
    "Snippet",
    "VmGpusRequest",
    "answer",
    "no_gpus",
]
