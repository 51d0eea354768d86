"""``scan`` as a request: what NVIDIA's KubeVirt device plugin finds on the
node whose sysfs is under a root, named as a profile names it, or KubeVirt's
mediatedDevicesConfiguration creating vGPU types with that node's own ids,
or (``dra``) the vfio devices NVIDIA's DRA driver release publishes in the
node's ResourceSlice (:mod:`pciname.host.dra_scan`).

:class:`ScanRequest` validates itself (a profile it can name with: not
``auto``, which needs a cluster to infer from) and :func:`answer` answers it
from the sysfs root it names (the walk is :mod:`pciname.host.sysfs`, what
the GPUs offer :mod:`pciname.host.offered`); ``pciname scan`` builds the
request and prints the answer.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pciname.dra.facts import for_driver
from pciname.host.dra_scan import ATTRIBUTE_KINDS, DraScanResult, dra_scan
from pciname.host.offered import mdev_config
from pciname.host.sysfs import ScanResult, scan
from pciname.naming.profiles import DEFAULT_PROFILE
from pciname.policy.audit import is_auto
from pciname.requests.spelling import RequestError, auto_refused

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike


@dataclass(frozen=True)
class ScanRequest:
    """The node whose sysfs is under ``root`` (the directory holding
    ``sys/``; ``/`` on the node itself), named by ``profile`` (None: the
    default); with ``mdev_config`` (vGPU types: ``A10-24Q`` or the exact
    ``mdev_type/name``), the mediatedDevicesConfiguration creating them
    instead; with ``dra``, what the DRA driver release ``dra_driver`` (None:
    the newest that publishes vfio devices) publishes instead."""

    root: str = "/"
    profile: ProfileLike | None = None
    mdev_config: tuple[str, ...] = ()
    dra: bool = False
    dra_driver: str | None = None

    def validated(self) -> ScanRequest:
        """The request; a :class:`~pciname.errors.PcinameError` for profile
        ``auto``, an unknown DRA driver release, or DRA with a profile or
        ``mdev_config`` (the DRA driver names no resources)."""
        if is_auto(self.profile):
            raise auto_refused()
        if self.dra_driver is not None and not self.dra:
            raise RequestError(lambda say: f"{say('dra_driver')} is for scan {say('dra')}")
        if self.dra:
            if self.mdev_config or self.profile is not None:
                raise RequestError(
                    lambda say: (
                        f"scan {say('dra')} takes no profile and no {say('mdev_config')}: "
                        "the DRA driver names no resources"
                    )
                )
            for_driver(self.dra_driver)  # an unknown release: one line
        return self


@dataclass(frozen=True)
class Scan:
    """The scan (None: a DRA scan), the mediatedDevicesConfiguration when
    it was asked for, the DRA driver's devices when they were."""

    result: ScanResult | None
    mdev_config: dict[str, Any] | None = None
    dra: DraScanResult | None = None


def answer(request: ScanRequest, *, resolver: ResolverLike | None = None) -> Scan:
    """The scan of a :meth:`~ScanRequest.validated` request's root; a
    :class:`~pciname.errors.PcinameError` when it holds no sysfs, or (with
    ``mdev_config``) the node offers a type not as an mdev."""
    if request.dra:
        return Scan(None, dra=dra_scan(Path(request.root), for_driver(request.dra_driver)))
    profile = request.profile if request.profile is not None else DEFAULT_PROFILE
    result = scan(request.root, profile, resolver=resolver)
    if request.mdev_config:
        return Scan(result, mdev_config(result.offered, list(request.mdev_config)))
    return Scan(result)


__all__ = ["ATTRIBUTE_KINDS", "DraScanResult", "Scan", "ScanRequest", "ScanResult", "answer"]
