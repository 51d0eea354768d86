"""Configuration snippets that carry resource names (docs/naming.md, section 7).

Every function here is pure: devices and a profile in, plain data out (dicts,
lists, strings), so the CLI, the gRPC service and other generators can call
them alike.

* :func:`permitted_host_devices`: ``permittedHostDevices`` for the KubeVirt CR
  (``pciHostDevices`` and ``mediatedDevices``, ``externalResourceProvider:
  true``); :func:`render` puts it where it goes (KubeVirt CR, Cozystack
  platform values, a JSON merge patch).
* :func:`resolve_requests`: the requests of a VM or (in
  :mod:`pciname.cozystack.node_pool`) a Cozystack node group, resolved.
* :func:`vm_gpus`: ``spec.domain.devices.gpus[]`` of a KubeVirt VM.
* :func:`mdev_names`: the resource a vGPU type is advertised as.

Names that will not work are left out (with reasons) unless
``include_broken``: kubelet refuses the name (``invalid-resource-name``), the
plugin socket path is too long (``socket-path-too-long``), the profile
advertises nothing for the device (``not-advertised``), or, for
``permitted_host_devices``, two of the requested devices share one name
(``name-collision``: on a node with both, the two plugins share one socket
and only one is advertised). A collision with a device that was *not*
requested, and a device advertised under its bare id (``unnamed-device``),
are kept and reported as notes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pciname.base.requests import MAX_GPUS
from pciname.errors import PcinameError
from pciname.kubevirt.resources import resource_warnings
from pciname.naming import checks
from pciname.naming.checks import NameWarning
from pciname.naming.mdev import mdev_resource, mdev_warnings
from pciname.naming.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike
    from pciname.resolution.results import Resolution

#: Where :func:`render` puts a permittedHostDevices block; the first is the default.
FORMATS = ("kubevirt", "cozystack", "patch")
DEFAULT_FORMAT = FORMATS[0]


@dataclass(frozen=True, slots=True)
class Skipped:
    """A requested device (or vGPU type) with the reasons its name is a problem."""

    item: str  # "10de:24fa", an mdev type "GRID T4-1Q", or a resource name
    kind: str  # "pci", "mdev" or "resource"
    resource_name: str | None
    reasons: tuple[NameWarning, ...]

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(w.code for w in self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "kind": self.kind,
            "resource_name": self.resource_name,
            "reasons": [w.to_dict() for w in self.reasons],
        }

    def lines(self) -> list[str]:
        """``ITEM: code: message`` lines (what the CLI prints on stderr)."""
        return [f"{self.item}: {w.code}: {w.message}" for w in self.reasons]


@dataclass(frozen=True, slots=True)
class Snippet:
    """Generated configuration (``data``), what was left out and why, and
    notes about entries that were kept but deserve a look."""

    data: dict[str, Any]
    profile: str
    left_out: tuple[Skipped, ...] = field(default=())
    notes: tuple[Skipped, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "data": self.data,
            "left_out": [s.to_dict() for s in self.left_out],
            "notes": [s.to_dict() for s in self.notes],
        }


# -- inputs -------------------------------------------------------------------


def pci_selector(device: str) -> str:
    """``10de:2236`` -> ``10DE:2236`` (KubeVirt's usual spelling of a pciVendorSelector)."""
    from pciname.api import parse_device

    parsed = parse_device(device)
    return f"{parsed.vendor}:{parsed.device}".upper()


def _resolver(resolver: ResolverLike | None) -> ResolverLike:
    from pciname.resolution.resolver import resolver_or_default  # the engine loads only when a name is needed

    return resolver_or_default(resolver)


def _is_resource_name(item: str) -> bool:
    """A node-pool or VM request names a resource (``nvidia.com/...``), not a device."""
    return "/" in item


# -- permittedHostDevices -----------------------------------------------------


def permitted_host_devices(
    devices: Iterable[str],
    mdevs: Iterable[str] = (),
    profile: ProfileLike = DEFAULT_PROFILE,
    include_broken: bool = False,
    *,
    resolver: ResolverLike | None = None,
) -> Snippet:
    """The KubeVirt ``permittedHostDevices`` block for these PCI devices and
    vGPU (mdev) types, as the given profile names them.

    Returns a :class:`Snippet` whose ``data`` is ``{"pciHostDevices": [...],
    "mediatedDevices": [...]}`` (a list only when it has entries), in input
    order, duplicates dropped. Raises InvalidDeviceError for a malformed
    device id, UnknownProfileError / SnapshotMissingError for the profile,
    PcinameError for a Kata profile (:func:`refuse_kata`).
    """
    resolver = _resolver(resolver)
    refuse_kata(profile, "permitted-host-devices", resolver)
    device_list = list(dict.fromkeys(pci_selector(d) for d in devices))
    resolutions = resolver.resolve_many(device_list, profile)
    canonical = resolutions[0].profile if resolutions else _canonical(profile, resolver)
    pci_entries, left_out, notes = _pci_entries(device_list, resolutions, include_broken)
    mdev_entries = []
    for info in mdev_names(dict.fromkeys(mdevs), profile, resolver=resolver):
        reasons = tuple(NameWarning(**w) for w in info["warnings"])
        if reasons:
            left_out.append(Skipped(info["mdev_type"], "mdev", info["resource_name"], reasons))
            if not include_broken or info["resource_name"] is None:
                continue
        mdev_entries.append(
            {
                "mdevNameSelector": info["mdev_type"],
                "resourceName": info["resource_name"],
                "externalResourceProvider": True,
            }
        )

    data: dict[str, Any] = {}
    if pci_entries:
        data["pciHostDevices"] = pci_entries
    if mdev_entries:
        data["mediatedDevices"] = mdev_entries
    return Snippet(data, canonical, tuple(left_out), tuple(notes))


def _pci_entries(
    selectors: Sequence[str], resolutions: Sequence[Resolution], include_broken: bool
) -> tuple[list[dict[str, Any]], list[Skipped], list[Skipped]]:
    """The ``pciHostDevices`` entries of the resolved selectors, in order,
    with what was left out (or, ``include_broken``, kept but broken) and the
    notes (a bare-id name, a collision with a device not requested)."""
    by_resource: dict[str | None, list[str]] = {}
    for r in resolutions:
        if r.resource_name is not None:
            by_resource.setdefault(r.resource_name, []).append(r.device)

    pci_entries: list[dict[str, Any]] = []
    left_out: list[Skipped] = []
    notes: list[Skipped] = []
    for selector, r in zip(selectors, resolutions):
        broken = [w for w in r.warnings if w.code in checks.BLOCKING_CODES]
        noted = [w for w in r.warnings if w.code == checks.UNNAMED_DEVICE]
        requested_twins = [d for d in by_resource.get(r.resource_name, ()) if d != r.device]
        if requested_twins:
            broken.append(
                NameWarning(
                    checks.NAME_COLLISION,
                    f"{r.resource_name} is also the name of {', '.join(requested_twins)}, requested too; "
                    "on a node with both, the plugins share one socket and only one of them is advertised",
                )
            )
        else:
            noted.extend(w for w in r.warnings if w.code == checks.NAME_COLLISION)
        if broken:
            left_out.append(Skipped(r.device, "pci", r.resource_name, tuple(broken)))
            if not include_broken or r.resource_name is None:
                continue
        if noted:
            notes.append(Skipped(r.device, "pci", r.resource_name, tuple(noted)))
        pci_entries.append(
            {"pciVendorSelector": selector, "resourceName": r.resource_name, "externalResourceProvider": True}
        )
    return pci_entries, left_out, notes


def render(
    permitted: dict[str, Any], fmt: str = DEFAULT_FORMAT, *, replace_defaults: bool | None = None
) -> dict[str, Any]:
    """Put a ``permittedHostDevices`` block where ``fmt`` wants it:

    * ``kubevirt``: ``{"permittedHostDevices": ...}``, to go under the
      KubeVirt CR's ``spec.configuration``;
    * ``cozystack``: ``{"gpu": {"permittedHostDevices": ...}}`` for
      Cozystack's platform values (with ``gpu.replaceDefaults`` when
      ``replace_defaults`` is not None; what Cozystack does with it, and
      its default table, is :mod:`pciname.cozystack.defaults`);
    * ``patch``: the JSON merge patch ``{"spec": {"configuration":
      {"permittedHostDevices": ...}}}`` for ``kubectl patch kubevirt
      --type merge``.
    """
    if fmt == "kubevirt":
        return {"permittedHostDevices": permitted}
    if fmt == "cozystack":
        gpu: dict[str, Any] = {}
        if replace_defaults is not None:
            gpu["replaceDefaults"] = bool(replace_defaults)
        gpu["permittedHostDevices"] = permitted
        return {"gpu": gpu}
    if fmt == "patch":
        return {"spec": {"configuration": {"permittedHostDevices": permitted}}}
    raise PcinameError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")


def refuse_kata(profile: ProfileLike, what: str, resolver: ResolverLike | None = None) -> None:
    """PcinameError when ``profile`` is the Kata sandbox device plugin's:
    what ``what`` writes is KubeVirt's (or Cozystack's, or vGPU), which that
    plugin does not serve."""
    resolved = _resolver(resolver).view(profile).profile
    if resolved.is_kata:
        raise PcinameError(
            f"{what}: {resolved.name} is the Kata sandbox device plugin's, which advertises GPUs to Kata pods, "
            "not to KubeVirt, and has no vGPU: use a KubeVirt profile here (gpu-operator@vX.Y.Z, "
            "kubevirt-gpu-device-plugin@vX.Y.Z), or `pciname kata-pod` for a Kata pod's limits"
        )


def _canonical(profile: ProfileLike, resolver: ResolverLike) -> str:
    name: str = resolver.view(profile).profile.name
    return name


# -- vGPU types ---------------------------------------------------------------


def mdev_rule(profile: ProfileLike, resolver: ResolverLike | None = None) -> str:
    """The rule the profile's plugin names vGPU types by (``second-field``
    in v1.0.x, ``whitespace-runs`` after: :mod:`pciname.naming.mdev`)."""
    rule: str = _resolver(resolver).view(profile).profile.mdev_name
    return rule


def mdev_names(
    types: Iterable[str], profile: ProfileLike = DEFAULT_PROFILE, *, resolver: ResolverLike | None = None
) -> list[dict[str, Any]]:
    """For each vGPU type name (``mdev_type/name``, e.g. ``GRID T4-1Q``): the
    resource the profile's plugin advertises (``nvidia.com/GRID_T4-1Q``; in
    v1.0.x ``nvidia.com/T4-1Q``), the variable KubeVirt reads, whether
    kubelet accepts it, and warnings. A type the plugin panics on (v1.0.x,
    no space) has no resource, variable or socket, and ``plugin-crash``."""
    refuse_kata(profile, "mdev-name", resolver)
    rule = mdev_rule(profile, resolver)
    results = []
    for type_name in types:
        resource = mdev_resource(type_name, rule)
        warnings = mdev_warnings(type_name, rule)
        results.append(
            {
                "mdev_type": type_name,
                "resource_name": resource,
                "env_var": None if resource is None else checks.env_var(resource, mediated=True),
                "socket_path": None if resource is None else checks.socket_path(resource.partition("/")[2]),
                "advertised": not warnings,
                "warnings": [w.to_dict() for w in warnings],
            }
        )
    return results


# -- node pools and VMs -------------------------------------------------------


def resolve_requests(
    requests: Sequence[tuple[str, int]],
    mdevs: Sequence[tuple[str, int]],
    profile: ProfileLike,
    include_broken: bool,
    resolver: ResolverLike | None,
) -> tuple[list[tuple[str | None, int]], list[Skipped], list[Skipped], str]:
    """(resource, count) for each request in order, plus left-out and notes."""
    total = sum(count for _, count in requests) + sum(count for _, count in mdevs)
    if total > MAX_GPUS:
        raise PcinameError(f"{total} GPUs asked for, more than the {MAX_GPUS} a node may have")
    resolver = _resolver(resolver)
    device_items = [item for item, _ in requests if not _is_resource_name(item)]
    resolutions = iter(resolver.resolve_many(device_items, profile))
    canonical = _canonical(profile, resolver)
    wanted: list[tuple[str | None, int]] = []
    left_out: list[Skipped] = []
    notes: list[Skipped] = []

    def take(
        item: str, kind: str, resource: str | None, reasons: list[NameWarning], noted: list[NameWarning], count: int
    ) -> None:
        if reasons:
            left_out.append(Skipped(item, kind, resource, tuple(reasons)))
            if not include_broken or resource is None:
                return
        if noted:
            notes.append(Skipped(item, kind, resource, tuple(noted)))
        wanted.append((resource, count))

    for item, count in requests:
        if _is_resource_name(item):
            take(item, "resource", item, resource_warnings(item), [], count)
        else:
            r = next(resolutions)
            broken = [w for w in r.warnings if w.code in checks.BLOCKING_CODES]
            noted = [w for w in r.warnings if w.code == checks.UNNAMED_DEVICE]
            take(r.device, "pci", r.resource_name, broken, noted, count)
    rule = mdev_rule(profile, resolver)
    for type_name, count in mdevs:
        take(type_name, "mdev", mdev_resource(type_name, rule), mdev_warnings(type_name, rule), [], count)
    return wanted, left_out, notes, canonical


def vm_gpus(
    requests: Sequence[tuple[str, int]],
    profile: ProfileLike = DEFAULT_PROFILE,
    include_broken: bool = False,
    *,
    mdevs: Sequence[tuple[str, int]] = (),
    prefix: str = "gpu",
    resolver: ResolverLike | None = None,
) -> Snippet:
    """``spec.domain.devices.gpus[]`` entries of a KubeVirt VM:
    ``{"gpus": [{"name": "gpu1", "deviceName": "nvidia.com/..."}, ...]}``, one
    per GPU, named ``<prefix>1``, ``<prefix>2``, ..."""
    refuse_kata(profile, "vm-gpus", resolver)
    wanted, left_out, notes, canonical = resolve_requests(requests, mdevs, profile, include_broken, resolver)
    resources = [resource for resource, count in wanted for _ in range(count)]
    gpus = [{"name": f"{prefix}{i}", "deviceName": resource} for i, resource in enumerate(resources, 1)]
    return Snippet({"gpus": gpus}, canonical, tuple(left_out), tuple(notes))
