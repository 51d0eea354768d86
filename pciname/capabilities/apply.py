"""``apply permitted-host-devices`` as a request: the permittedHostDevices
for these devices and vGPU types, server-side applied (field manager
``pciname``) to the cluster's KubeVirt CR.

:class:`ApplyRequest` validates itself (something to apply) and
:func:`answer` answers it with the cluster client it is given: it reads the
KubeVirt CR and the Nodes (for profile ``auto``), builds the block
(:func:`pciname.kubevirt.generate.permitted_host_devices`) and applies it
(:func:`pciname.cluster.kube.apply_permitted_host_devices`, which refuses a
CR another controller manages: :class:`~pciname.errors.ApplyRefused`).
``pciname apply permitted-host-devices`` builds the request and prints the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pciname.capabilities.audit import NO_KUBEVIRT_CR
from pciname.capabilities.limits import DEVICE_IDS, DEVICES, NAME, PROFILE, checked
from pciname.capabilities.permitted import NO_DEVICES
from pciname.cluster.kube import DEFAULT_TIMEOUT, apply_permitted_host_devices, read_cluster
from pciname.errors import PcinameError
from pciname.kubevirt.generate import Skipped, Snippet, permitted_host_devices
from pciname.kubevirt.objects import FIELD_MANAGER, object_ref
from pciname.kubevirt.vgpu import vgpu_mdevs
from pciname.policy.audit import choose_profile

if TYPE_CHECKING:
    from pciname.cluster.kube import ApiClient
    from pciname.resolution.resolver import ProfileLike

#: A request naming no device and no vGPU type (the command's words: the only surface).
#: A request whose every device was left out.
NOTHING_TO_APPLY = "nothing to apply: every device was left out"


@dataclass(frozen=True)
class ApplyRequest:
    """What to permit in the cluster's KubeVirt CR: PCI ``devices``, vGPU
    types as ``mdev_types`` (their exact ``mdev_type/name``) or
    ``vgpus`` (``A10-24Q``: of the GPUs ``devices`` names, which are
    then not permitted themselves), under ``profile`` (``auto``: the one the
    nodes' names infer; None: the default); ``force`` takes the field over
    from other field managers, ``dry_run`` lets the API server check the
    apply without persisting it; ``kubevirt_name`` ([NAMESPACE/]NAME) when
    there are several CRs; ``timeout``: seconds for the reads, and for the
    apply (None: the default)."""

    devices: tuple[str, ...] = field(default=(), metadata=DEVICE_IDS)
    mdev_types: tuple[str, ...] = field(default=(), metadata=DEVICES)
    vgpus: tuple[str, ...] = field(default=(), metadata=DEVICES)
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    include_broken: bool = False
    force: bool = False
    dry_run: bool = False
    kubevirt_name: str | None = field(default=None, metadata=NAME)
    timeout: float | None = None

    def validated(self) -> ApplyRequest:
        """The request; :data:`NO_DEVICES` when it names nothing to apply."""
        checked(self)
        if not self.devices and not self.mdev_types:
            raise PcinameError(NO_DEVICES)
        return self

    @property
    def seconds(self) -> float:
        """:attr:`timeout`, or :data:`pciname.cluster.kube.DEFAULT_TIMEOUT`."""
        return float(self.timeout) if self.timeout is not None else DEFAULT_TIMEOUT


@dataclass(frozen=True)
class Applied:
    """What was applied (``permitted``: the permittedHostDevices the API
    server sent back) to which CR, under which profile and how it was
    chosen, and the devices left out."""

    kubevirt: str | None
    profile: str
    profile_source: str
    permitted: dict[str, Any]
    left_out: tuple[Skipped, ...]
    force: bool
    dry_run: bool

    def to_dict(self) -> dict[str, Any]:
        return {
            "kubevirt": self.kubevirt,
            "field_manager": FIELD_MANAGER,
            "force": self.force,
            "dry_run": self.dry_run,
            "profile": self.profile,
            "profile_source": self.profile_source,
            "permittedHostDevices": self.permitted,
            "left_out": [s.to_dict() for s in self.left_out],
        }


def answer(request: ApplyRequest, client: ApiClient, *, report: Callable[[Snippet], object]) -> Applied:
    """Apply a :meth:`~ApplyRequest.validated` request to the cluster of
    ``client``. ``report`` sees the block before it is applied (the CLI says
    what was left out). :data:`NO_KUBEVIRT_CR` (… to apply to) or
    :data:`NOTHING_TO_APPLY`: :class:`~pciname.errors.PcinameError`; a
    refused apply: :class:`~pciname.errors.ApplyRefused`."""
    state = read_cluster(client, request.kubevirt_name, timeout=request.seconds)
    if state.kubevirt is None:
        raise PcinameError(f"{NO_KUBEVIRT_CR} to apply to")
    profile, how, _ = choose_profile(request.profile, state.nodes)
    devices, mdevs = list(request.devices), list(request.mdev_types)
    if request.vgpus:  # the types' exact strings join the mdev types; the GPUs are not requested
        found = vgpu_mdevs(devices, request.vgpus, profile, counts=False)
        devices, mdevs = [], mdevs + [name for name, _count in found]
    snippet = permitted_host_devices(devices, mdevs, profile, request.include_broken)
    report(snippet)
    if not snippet.data:
        raise PcinameError(NOTHING_TO_APPLY)
    applied = apply_permitted_host_devices(
        client, state.kubevirt, snippet.data, force=request.force, dry_run=request.dry_run, timeout=request.seconds
    )
    return Applied(
        kubevirt=object_ref(state.kubevirt),  # the apply needed its namespace and name
        profile=snippet.profile,
        profile_source=how,
        permitted=applied,
        left_out=snippet.left_out,
        force=bool(request.force),
        dry_run=bool(request.dry_run),
    )


__all__ = ["FIELD_MANAGER", "NOTHING_TO_APPLY", "NO_DEVICES", "Applied", "ApplyRequest", "answer"]
