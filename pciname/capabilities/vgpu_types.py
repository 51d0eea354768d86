"""``vgpu-types`` as a request: every vGPU type NVIDIA's catalogue lists for
one GPU, with its exact ``mdev_type/name`` and the resource the profile's
plugin makes of it.

:class:`VgpuTypesRequest` validates itself (the profile it is answered
under) and :func:`answer` answers it: the types, or, for a device the
catalogue does not cover, that negative answer and its one line (both
surfaces answer that, not an error: ``pciname vgpu-types`` exits 1, the
``VgpuTypes`` RPC answers ``covered: false``). ``pciname vgpu-types`` and
the ``VgpuTypes`` RPC build the request and print or send the answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pciname.capabilities.limits import DEVICE_CHARS, PROFILE, checked, limit
from pciname.capabilities.spelling import RequestError
from pciname.errors import NotInCatalogueError
from pciname.kubevirt.generate import refuse_kata
from pciname.kubevirt.vgpu import vgpu_types
from pciname.resolution.resolver import parse_device

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike


@dataclass(frozen=True)
class VgpuTypesRequest:
    """The GPU (``10de:2236``, ``0x10DE:0x2236``) and the profile (None:
    the default). The device is checked as it is answered, after the
    profile, the order both surfaces have always reported them in."""

    device: str = field(metadata=limit(chars=DEVICE_CHARS))
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)

    def validated(self) -> VgpuTypesRequest:
        """The request, its device text known to be text (a
        :class:`~pciname.errors.PcinameError` otherwise)."""
        checked(self)
        if not isinstance(self.device, str):
            device = self.device
            raise RequestError(lambda say: f"{say('device')} must be a device id such as 10de:2236, not {device!r}")
        return replace(self)

    @property
    def chosen_profile(self) -> ProfileLike | None:
        """The profile to answer with (None: the default one)."""
        return self.profile or None


@dataclass(frozen=True)
class VgpuTypes:
    """The answer: ``types`` (``pciname vgpu-types -o json``'s dict), or
    None with ``message`` when the catalogue does not cover ``device``
    (the id as parsed, ``10de:2684``)."""

    device: str
    types: dict[str, Any] | None = None
    message: str = ""

    @property
    def covered(self) -> bool:
        return self.types is not None


def answer(request: VgpuTypesRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None) -> VgpuTypes:
    """The answer to a :meth:`~VgpuTypesRequest.validated` request under
    ``profile`` (its :attr:`~VgpuTypesRequest.chosen_profile`, as the
    surface resolves it)."""
    refuse_kata(profile, "vgpu-types", resolver)
    try:
        types = vgpu_types(request.device, profile, resolver=resolver)
    except NotInCatalogueError as error:
        return VgpuTypes(str(parse_device(request.device)), message=str(error))
    return VgpuTypes(types["device"], types)


__all__ = ["VgpuTypes", "VgpuTypesRequest", "answer"]
