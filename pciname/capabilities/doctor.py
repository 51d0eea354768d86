"""``scan --variant`` as a request: the host doctor (:mod:`pciname.host.doctor`)
on the node under a root, for one variant (``default``: passthrough,
``vgpu``, ``container``) or, with none, every variant and the ones the node
could serve as it is.

:class:`DoctorRequest` validates itself (a variant the doctor knows);
:func:`answer` reads the node (:func:`~pciname.host.doctor.facts.read_host`)
and judges it (:func:`~pciname.host.doctor.rules.examine`).
"""

from __future__ import annotations

from dataclasses import dataclass

from pciname.capabilities.spelling import RequestError
from pciname.host.doctor.facts import read_host
from pciname.host.doctor.rules import VARIANTS, WORKLOADS, Checkup, Finding, examine


@dataclass(frozen=True)
class DoctorRequest:
    """The node whose files are under ``root`` (the directory holding
    ``sys/`` and ``proc/``; ``/`` on the node), judged for ``variant``
    (None: every variant)."""

    root: str = "/"
    variant: str | None = None

    def validated(self) -> DoctorRequest:
        """The request; a RequestError for a variant the doctor does not know."""
        if self.variant is not None and self.variant not in VARIANTS:
            variant = self.variant
            raise RequestError(lambda say: f"{say('variant')} {variant!r}: not one of {', '.join(VARIANTS)}")
        return self


def answer(request: DoctorRequest) -> Checkup:
    """The checkup of a :meth:`~DoctorRequest.validated` request's node; a
    :class:`~pciname.errors.PcinameError` when the root holds no sysfs."""
    return examine(read_host(request.root), request.variant)


__all__ = ["VARIANTS", "WORKLOADS", "Checkup", "DoctorRequest", "Finding", "answer"]
