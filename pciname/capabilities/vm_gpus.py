"""``vm-gpus`` as a request: the ``spec.domain.devices.gpus[]`` entries of a
KubeVirt VM, one per GPU, named ``PREFIX1``, ``PREFIX2``, ...

:class:`VmGpusRequest` validates itself (GPUs given, the entries' name
prefix) and :func:`answer` answers it with
:func:`pciname.kubevirt.generate.vm_gpus`. ``pciname vm-gpus`` builds the
request and prints the answer (there is no RPC for it).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING

from pciname.base.requests import parse_request
from pciname.capabilities.spelling import Spelling
from pciname.errors import PcinameError
from pciname.kubevirt.generate import vm_gpus

if TYPE_CHECKING:
    from pciname.kubevirt.generate import Snippet
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: What each surface says of a request for no GPU at all (``node-pool`` says it too).
NO_GPUS = {
    Spelling.CLI: "no GPUs given: name at least one DEVICE[=COUNT] or --mdev TYPE[=COUNT]",
    Spelling.RPC: "empty request: no devices and no mdev_types given",
}


@dataclass(frozen=True)
class VmGpusRequest:
    """GPUs as ``DEVICE[=COUNT]`` (or resource names, ``nvidia.com/...``) and
    vGPU types as ``TYPE[=COUNT]``, under ``profile`` (None: the default);
    ``include_broken`` keeps names that will not work; ``prefix`` names the
    entries."""

    devices: tuple[str, ...] = ()
    mdev_types: tuple[str, ...] = ()
    profile: ProfileLike | None = None
    include_broken: bool = False
    prefix: str = "gpu"
    spelling: Spelling = Spelling.CLI

    def validated(self) -> VmGpusRequest:
        """The request; a :class:`~pciname.errors.PcinameError` without GPUs
        or for a prefix that is empty or holds white space. (A malformed
        ``DEVICE=COUNT`` is reported as the request is answered.)"""
        if not self.devices and not self.mdev_types:
            raise PcinameError(NO_GPUS[self.spelling])
        if not self.prefix or any(c.isspace() for c in self.prefix):
            raise PcinameError(f"{self.spelling('prefix')} must be a non-empty name without white space")
        return replace(self, devices=tuple(self.devices), mdev_types=tuple(self.mdev_types))

    @property
    def chosen_profile(self) -> ProfileLike | None:
        """The profile to answer with (None: the default one)."""
        return self.profile or None


def answer(request: VmGpusRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None) -> Snippet:
    """The gpus[] entries of a :meth:`~VmGpusRequest.validated` request under
    ``profile`` (its :attr:`~VmGpusRequest.chosen_profile`, as the surface
    resolves it)."""
    return vm_gpus(
        [parse_request(d) for d in request.devices],
        profile,
        request.include_broken,
        mdevs=[parse_request(m) for m in request.mdev_types],
        prefix=request.prefix,
        resolver=resolver,
    )


__all__ = ["NO_GPUS", "VmGpusRequest", "answer"]
