"""``scan --variant`` as a request: the host doctor (:mod:`pciname.host.doctor`) on the node under a
root, for one variant (``default``: passthrough, ``vgpu``, ``container``) or every one (None) and the
ones the node could serve as it is (:func:`~pciname.host.doctor.rules.examine`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from pciname.host.doctor.facts import read_host
from pciname.host.doctor.rules import VARIANTS, Checkup, examine
from pciname.requests.limits import NAME, checked, limit
from pciname.requests.spelling import RequestError


@dataclass(frozen=True)
class DoctorRequest:
    """The node whose ``sys/`` and ``proc/`` are under ``root`` (``/`` on the node), for ``variant`` (None: all)."""

    root: str = field(default="/", metadata=limit(chars=4096))
    variant: str | None = field(default=None, metadata=NAME)

    def validated(self) -> DoctorRequest:
        """The request; a RequestError for a variant the doctor does not know or a text over its bound."""
        if self.variant is not None and self.variant not in VARIANTS:
            raise RequestError(lambda say: f"{say('variant')} {self.variant!r}: not one of {', '.join(VARIANTS)}")
        return checked(self)


def answer(request: DoctorRequest) -> Checkup:
    """The checkup of a validated request's node; a PcinameError when the root holds no sysfs."""
    return examine(read_host(request.root), request.variant)
