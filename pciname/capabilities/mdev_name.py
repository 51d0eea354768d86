"""``mdev-name`` as a request: the resource the profile's plugin advertises
for each vGPU type (``mdev_type/name``), the variable KubeVirt reads, and
whether kubelet takes the name or the plugin crashes on it.

:class:`MdevNameRequest` validates itself (at least one type) and
:func:`answer` answers it with :func:`pciname.kubevirt.generate.mdev_names`;
``pciname mdev-name`` builds the request and prints the answer (there is
no RPC for it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pciname.capabilities.limits import NAME_CHARS, PROFILE, checked, limit
from pciname.capabilities.spelling import RequestError
from pciname.kubevirt.generate import mdev_names

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike


@dataclass(frozen=True)
class MdevNameRequest:
    """vGPU types as ``mdev_type/name`` gives them (``GRID T4-1Q``), under
    ``profile`` (None: the default)."""

    types: tuple[str, ...] = field(default=(), metadata=limit(chars=NAME_CHARS, batch=True))
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)

    def validated(self) -> MdevNameRequest:
        """The request; a :class:`~pciname.capabilities.spelling.RequestError` without a type."""
        checked(self)
        if not self.types:
            raise RequestError.saying("no vGPU type given: name at least one TYPE", "empty request: no types given")
        return replace(self, types=tuple(self.types))

    @property
    def chosen_profile(self) -> ProfileLike | None:
        """The profile to answer with (None: the default one)."""
        return self.profile or None


def answer(
    request: MdevNameRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None
) -> list[dict[str, Any]]:
    """One record per type of a :meth:`~MdevNameRequest.validated` request, in
    order: ``mdev_type``, ``resource_name`` (None where the plugin crashes),
    ``env_var``, ``socket_path``, ``advertised`` and ``warnings``."""
    return mdev_names(request.types, profile, resolver=resolver)


__all__ = ["MdevNameRequest", "answer"]
