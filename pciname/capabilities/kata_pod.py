"""``kata-pod`` as a request: a Pod (or Deployment) asking for GPUs under the
names NVIDIA's Kata sandbox device plugin advertises, with a Kata runtime
class.

:class:`KataPodRequest` validates itself (GPUs given as ``DEVICE[=COUNT]``,
the object's kind and name, the runtime class and image when given) and
:func:`answer` answers it with :func:`pciname.kata.pod.kata_pod` under the
Kata profile the surface resolved. ``pciname kata-pod`` builds the request
and prints the answer (there is no RPC for it).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pciname.base.requests import parse_request
from pciname.capabilities.limits import DEVICES, PROFILE, checked
from pciname.errors import PcinameError
from pciname.kata.pod import (
    DEFAULT_IMAGE,
    DEFAULT_IMAGE_SOURCE,
    DEFAULT_NAME,
    KINDS,
    kata_pod,
    name_problem,
    runtime_class_problem,
)
from pciname.kata.runtime import newest_kata_operator_profile

if TYPE_CHECKING:
    from pciname.kata.pod import KataPod
    from pciname.resolution.resolver import ProfileLike, ResolverLike

NO_GPUS = "no GPUs given: name at least one DEVICE[=COUNT]"


@dataclass(frozen=True)
class KataPodRequest:
    """GPUs as ``DEVICE[=COUNT]``; the runtime class (None: the release's
    default, labelled inferred); the object's ``kind`` (pod, deployment),
    ``name`` and container ``image``; the Kata ``profile`` (None: the
    newest GPU Operator release in Kata mode, :attr:`default_profile`)."""

    devices: tuple[str, ...] = field(default=(), metadata=DEVICES)
    runtime_class: str | None = None
    name: str = DEFAULT_NAME
    image: str = DEFAULT_IMAGE
    kind: str = KINDS[0]
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    #: Set by :meth:`validated`: the (device, count) pairs.
    requests: tuple[tuple[str, int], ...] = ()

    def validated(self) -> KataPodRequest:
        """The request with its counts parsed; a PcinameError without GPUs,
        for a malformed ``DEVICE=COUNT``, kind, name, runtime class or image."""
        checked(self)
        if not self.devices:
            raise PcinameError(NO_GPUS)
        for device in self.devices:
            if "/" in device:
                raise PcinameError(f"{device!r}: kata-pod takes device ids (10de:2236), not resource names")
        if self.kind not in KINDS:
            raise PcinameError(f"kind {self.kind!r}: expected one of {', '.join(KINDS)}")
        problem = name_problem(self.name)
        if problem is None and self.runtime_class is not None:
            problem = runtime_class_problem(self.runtime_class)
        if problem is None and (not self.image or any(c.isspace() for c in self.image)):
            problem = f"image {self.image!r} must be a non-empty reference without white space"
        if problem is not None:
            raise PcinameError(problem)
        return replace(self, devices=tuple(self.devices), requests=tuple(parse_request(d) for d in self.devices))

    @property
    def default_profile(self) -> str:
        """The profile when none is given: the newest GPU Operator release in
        Kata mode (``gpu-operator@vX.Y.Z+kata``)."""
        return newest_kata_operator_profile()

    @property
    def chosen_profile(self) -> ProfileLike:
        """The profile to answer with: the one given, else :attr:`default_profile`."""
        return self.profile or self.default_profile


def answer(request: KataPodRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None) -> KataPod:
    """The object of a :meth:`~KataPodRequest.validated` request under the Kata ``profile``."""
    return kata_pod(
        request.requests,
        profile,
        runtime_class=request.runtime_class,
        name=request.name,
        image=request.image,
        kind=request.kind,
        resolver=resolver,
    )


__all__ = ["DEFAULT_IMAGE", "DEFAULT_IMAGE_SOURCE", "DEFAULT_NAME", "KINDS", "NO_GPUS", "KataPodRequest", "answer"]
