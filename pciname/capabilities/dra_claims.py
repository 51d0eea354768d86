"""``vm-gpus --dra`` as a request: GPUs for a KubeVirt VM through DRA with
NVIDIA's DRA driver (the ResourceClaimTemplate, the VM fragment and the
DeviceClass check of :mod:`pciname.dra.claims`).

:class:`DraClaimsRequest` validates itself (NVIDIA GPUs as ``DEVICE[=COUNT]``,
at most :data:`~pciname.base.requests.MAX_GPUS` each; names that are DNS
labels; a driver, KubeVirt and ``resource.k8s.io`` release that exist and
work together, else one line with the reason and the nearest combination
that works) and :func:`answer` answers it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace

from pciname.base.requests import MAX_GPUS, parse_request
from pciname.capabilities.limits import NAME, NAME_CHARS, checked, limit
from pciname.capabilities.spelling import RequestError, respelled
from pciname.capabilities.vm_gpus import DEFAULT_NAME
from pciname.dra.claims import REQUEST_PREFIX, DraObjects, dra_objects
from pciname.dra.facts import Combination, DraCombinationError, choose
from pciname.errors import PcinameError
from pciname.pciids.ids import NVIDIA_VENDOR_ID
from pciname.resolution.resolver import parse_device

_DNS_LABEL = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?\Z")
#: The fields naming releases, which a refused combination's line names.
RELEASES = ("dra_driver", "kubevirt", "resource_api")
#: How many GPUs (all counts together) one VM's claim may ask for.
MAX_CLAIM_GPUS = MAX_GPUS


@dataclass(frozen=True)
class DraClaimsRequest:
    """GPUs as ``DEVICE[=COUNT]`` (NVIDIA ids) for the driver, KubeVirt and
    API release given (None: the newest that works); ``name`` names the
    claim template, the VM and its claim; ``prefix`` the requests and
    ``gpus[]`` entries; ``product_name`` also selects by the exact product
    name the driver publishes."""

    devices: tuple[str, ...] = field(default=(), metadata=limit(chars=NAME_CHARS, batch=True, items=MAX_CLAIM_GPUS))
    dra_driver: str | None = field(default=None, metadata=NAME)
    kubevirt: str | None = field(default=None, metadata=NAME)
    resource_api: str | None = field(default=None, metadata=NAME)
    name: str = field(default=DEFAULT_NAME, metadata=NAME)
    prefix: str = field(default=REQUEST_PREFIX, metadata=NAME)
    product_name: bool = False
    #: Set by :meth:`validated`: (device id, count) per model, and the releases.
    gpus: tuple[tuple[str, int], ...] = field(default=(), compare=False)
    combination: Combination | None = field(default=None, compare=False)

    def validated(self) -> DraClaimsRequest:
        checked(self)
        if not self.devices:
            raise PcinameError("no GPUs given: name at least one DEVICE[=COUNT], e.g. 10de:2236=1")
        for what, value in (("name", self.name), ("prefix", self.prefix + "1")):
            if not _DNS_LABEL.match(value):
                raise RequestError.about("{} {value!r}: must make a DNS label (a-z, 0-9, '-')", what, value=value)
        counts: dict[str, int] = {}
        for text in self.devices:
            item, count = parse_request(text)
            device = parse_device(item)
            if device.vendor != NVIDIA_VENDOR_ID:
                raise PcinameError(f"{text!r}: NVIDIA's DRA driver publishes NVIDIA GPUs only (vendor 10de)")
            counts[device.device] = counts.get(device.device, 0) + count
        if sum(counts.values()) > MAX_CLAIM_GPUS:
            raise PcinameError(f"{sum(counts.values())} GPUs asked for; one VM takes at most {MAX_CLAIM_GPUS}")
        try:
            combination = choose(self.dra_driver, self.kubevirt, self.resource_api)
        except DraCombinationError as error:  # its lines name the releases by the CLI's flags
            raise respelled(error, *RELEASES) from None
        return replace(self, devices=tuple(self.devices), gpus=tuple(counts.items()), combination=combination)


def answer(request: DraClaimsRequest) -> DraObjects:
    """The documents and notes of a :meth:`~DraClaimsRequest.validated` request."""
    assert request.combination is not None, "answer a validated request"
    return dra_objects(
        list(request.gpus),
        request.combination,
        name=request.name,
        prefix=request.prefix,
        product_name=request.product_name,
    )


__all__ = ["MAX_CLAIM_GPUS", "DraClaimsRequest", "answer"]
