"""``gfd-labels`` as a request: the resource labels GPU Feature Discovery
(NVIDIA/k8s-device-plugin) sets on a node for its whole GPUs, per release.

The product label is NVML's device name, which no source pciname can cite
maps from a PCI id: the request takes it as given (``product``) and the
answer says so. :class:`GfdLabelsRequest` validates itself and
:func:`answer` answers it with :func:`pciname.naming.container.gfd_labels`;
``pciname gfd-labels`` and the ``GfdLabels`` RPC build the request and
render the answer.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from pciname.base.requests import MAX_GPUS
from pciname.naming.container import Gpus, gfd_labels, release as container_release
from pciname.requests.limits import NAME, PROFILE, checked
from pciname.requests.spelling import RequestError

#: The sharing strategies that set ``.sharing-strategy`` (api/config/v1/sharing.go).
STRATEGIES = ("time-slicing", "mps")
_COMPUTE = re.compile(r"(\d{1,2})\.(\d{1,2})")


@dataclass(frozen=True)
class GfdLabelsRequest:
    """A node's whole GPUs: NVML's name for them (``NVIDIA A100-SXM4-40GB``),
    how many, and optionally their memory (MiB), compute capability
    (``8.0``) and sharing (``replicas`` above 1; ``renamed``: renameByDefault),
    under k8s-device-plugin ``release`` (None: the newest)."""

    product: str = field(default="", metadata=NAME)
    count: int = 1
    release: str | None = field(default=None, metadata=PROFILE)
    memory_mib: int | None = None
    compute: str | None = field(default=None, metadata=PROFILE)
    replicas: int = 1
    renamed: bool = False
    sharing_strategy: str = STRATEGIES[0]

    def validated(self) -> GfdLabelsRequest:
        """The request; a :class:`~pciname.requests.spelling.RequestError` for a rule it breaks."""
        checked(self)
        if not self.product.strip():
            raise RequestError.saying(
                "no NVML name given: name the GPUs as nvidia-smi does", "empty request: no product"
            )
        if not 1 <= self.count <= MAX_GPUS or self.replicas < 1 or (self.memory_mib or 0) < 0:
            raise RequestError(
                lambda say: (
                    f"{say('count')} is 1 to {MAX_GPUS}, {say('replicas')} at least 1, {say('memory_mib')} not negative"
                )
            )
        if self.compute is not None and _COMPUTE.fullmatch(self.compute) is None:
            raise RequestError(lambda say: f"{say('compute')} is MAJOR.MINOR (8.0), not {self.compute!r}")
        if self.sharing_strategy not in STRATEGIES:
            raise RequestError(lambda say: f"{say('sharing_strategy')} is one of {', '.join(STRATEGIES)}")
        container_release(self.release)  # an unknown release: one line
        return self


def answer(request: GfdLabelsRequest, profile: Any = None) -> dict[str, Any]:
    """The release, its commit, the labels and where each rule was read."""
    chosen = container_release(request.release)
    m = _COMPUTE.fullmatch(request.compute or "")
    gpus = Gpus(
        request.product,
        request.count,
        request.memory_mib,
        (int(m.group(1)), int(m.group(2))) if m else None,
        request.replicas,
        request.renamed,
        request.sharing_strategy,
    )
    gfd = chosen.gfd
    return {
        "release": chosen.tag,
        "commit": chosen.commit,
        "labels": gfd_labels(chosen, gpus),
        "product": f"NVML's name as given ({request.product!r}), cleaned as {chosen.where(gfd['product'])} does",
        "sources": [chosen.where(gfd[key]) for key in ("full_gpu_resource", "base_labels", "families")],
    }


__all__ = ["GfdLabelsRequest", "answer"]
