"""What NVIDIA's KubeVirt GPU device plugin finds on a node, read from sysfs.

:func:`scan` walks ``ROOT/sys/bus/pci/devices`` and ``ROOT/sys/bus/mdev/devices``
exactly as the plugin does (``createIommuDeviceMap`` / ``createVgpuIDMap``):

* entries in lexical order; an entry that is itself a directory (not the
  usual symlink) is skipped ("Not a device");
* ``vendor`` and ``device`` are read as the plugin's ``readIDFromFile``
  does: drop the first two bytes (``0x``), then trim ``\\n`` from both ends
  (a file shorter than two bytes makes the plugin panic);
* the function counts when ``vendor`` reads ``10de`` and the basename of the
  ``driver`` link is ``vfio-pci`` (from plugin v1.5.0 also
  ``nvgrace_gpu_vfio_pci``: profile dependent, see :func:`vfio_drivers`) and
  it has an ``iommu_group`` link;
* what one kubelet device is follows the release's ``discovery`` fact
  (:attr:`~pciname.naming.profiles.Profile.discovery`): ``per-group`` (up to
  v1.4.0) — only the first counted function of a group reads its ``device``
  file and registers the group number under that device id, so a GPU's
  audio function in the same group adds nothing; ``per-function`` (v1.5.0
  and later) — every counted function reads its ``device`` file and
  registers its PCI address, so an audio function on vfio-pci is a resource
  of its own and two models in one group are two resources;
* one plugin per device id, named by the profile; a device id of unusual
  spelling (upper case, a trailing ``\\r``) is looked up verbatim, as the
  plugin does, and advertised as that gives (with a warning);
* vGPUs: every ``/sys/bus/mdev/devices/<uuid>``: ``mdev_type/name`` turned
  into the type string by the release's rule
  (:func:`~pciname.naming.mdev.type_string`: the second space-separated
  field in v1.0.x, where a name without a space crashes the plugin;
  white-space runs to ``_`` after), and the type string then looked up by
  the release's name algorithm as if it were a device id (only an empty or
  blank-only type matches in practice; the type string itself when nothing does);
  the parent GPU is the second-to-last component of the entry's link
  target. Up to v1.1.1 (``mdev_leak``) a type's plugin also lists the vGPUs
  of the types before it, in Go's map order: the scan lists each type's
  own and warns.

It also reads, for the report, ``class``, ``numa_node`` and every function's
driver and IOMMU group, and diagnoses a broken node: the stable codes, their
severities and meanings are :data:`pciname.host.diagnoses.CODES` (and the
table in README.md).

The scan runs in four phases, one function each:

1. **walk** (:func:`_walk`): every entry of the two directories, as read;
2. **group** (:func:`_group_functions`, :func:`_group_vgpus`): what the
   plugin takes, keyed as it keys it (its ``deviceMap`` and ``vGpuMap``);
3. **name** (:func:`_name_functions`, :func:`_name_vgpus`): the resources,
   named by the resolver (PCI) or the profile's algorithm on the type
   string (vGPUs);
4. **diagnose** (:func:`_diagnose_node`): what is wrong with the node as a
   whole (drivers, IOMMU groups, a plugin that crashes).

Under a Kata profile (``sandbox-device-plugin@vX.Y.Z``,
``gpu-operator@vX.Y.Z+kata``, a custom go-nvlib profile) :func:`scan` is
:func:`pciname.host.kata_scan.kata_scan`: the Kata sandbox device plugin's
own rules (no vGPUs; exactly ``vfio-pci``; the release's classes; one
kubelet device per IOMMU group or iommufd device; aliases).

Every path is resolved inside the root as a chroot would, and only regular
files of at most :data:`~pciname.base.files.MAX_SYSFS_ATTR_BYTES` are read
(:mod:`pciname.host.rootfs`), so a tree cannot make the scan read anything
outside it, block or exhaust memory.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from pciname.host import rootfs
from pciname.host.diagnoses import (
    DISCOVERY_FAILED,
    HOST_DRIVER,
    MDEV_TYPE_LEAK,
    MDEV_TYPE_LOOKED_UP,
    NAME_COLLISION,
    NO_DRIVER,
    NO_IOMMU_GROUP,
    NON_NVIDIA_MDEV,
    NOT_ADVERTISED,
    PLUGIN_CRASH,
    UNREADABLE_DEVICE_ID,
    UNSUPPORTED_VFIO_DRIVER,
    UNUSUAL_DEVICE_ID,
    Diagnosis,
)
from pciname.host.kata_scan import kata_scan
from pciname.host.node import (
    HOST_GPU_DRIVERS,
    NVGRACE_VFIO,
    VFIO_PCI,
    VIABLE_DRIVERS,
    AdvertisedResource,
    MdevDevice,
    Node as _Node,
    PciEntry as _PciEntry,
    PciFunction,
    ScanResult,
    diagnose_groups as _diagnose_groups,
    walk as _walk,
)
from pciname.host.offered import MDEV, mixed_sriov_types, offered_types
from pciname.naming import checks
from pciname.naming.algorithms import REFERENCE, is_indexed_id
from pciname.naming.mdev import crash_warning, type_string
from pciname.naming.profiles import DEFAULT_PROFILE, PER_FUNCTION, UNNAMED_NOT_ADVERTISED, get_profile
from pciname.pciids.ids import NVIDIA_VENDOR_ID

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ProfileView, ResolverLike

__all__ = [
    "HOST_GPU_DRIVERS",
    "NVGRACE_SINCE",
    "NVGRACE_VFIO",
    "VFIO_PCI",
    "VIABLE_DRIVERS",
    "AdvertisedResource",
    "Diagnosis",
    "MdevDevice",
    "PciFunction",
    "ScanRequests",
    "ScanResult",
    "scan",
    "scan_requests",
    "vfio_drivers",
]

NVGRACE_SINCE = (1, 5, 0)


@dataclass(frozen=True, slots=True)
class ScanRequests:
    """What a scan says to permit: the device ids and vGPU type names whose
    resources the plugin advertises on the node, and why others are not."""

    devices: list[str]  # "10de:2236", in the scan's order
    mdev_types: list[str]  # mdev_type/name as read ("GRID T4-1Q")
    skipped: list[str]  # one line per resource left out, and why


def scan_requests(result: ScanResult, *, offered: bool = False) -> ScanRequests:
    """The requests ``permitted-host-devices --from-scan`` makes of a scan:
    every PCI resource by its device id, every vGPU resource by its type
    name, each once. Left out, with a reason: everything when the plugin
    crashes or its discovery fails (it advertises nothing), a device id of unusual spelling (no
    selector can name it) and a vGPU type whose type string the plugin looks
    up in pci.ids (no ``mdevNameSelector`` gives that name)."""
    devices: list[str] = []
    types: list[str] = []
    skipped: list[str] = []
    if any(d.code == PLUGIN_CRASH for d in result.diagnoses):
        skipped.append(f"{result.root}: the plugin crashes there ({PLUGIN_CRASH}): it advertises nothing")
        return ScanRequests(devices, types, skipped)
    if any(d.code == DISCOVERY_FAILED for d in result.diagnoses):
        skipped.append(f"{result.root}: go-nvlib's discovery fails there ({DISCOVERY_FAILED}): it advertises nothing")
        return ScanRequests(devices, types, skipped)
    looked_up = {d.subject for d in result.diagnoses if d.code == MDEV_TYPE_LOOKED_UP}
    for r in result.resources:
        if r.kind == "mdev":
            if r.resource_name in looked_up:
                skipped.append(f"vGPU type {r.source!r} ({r.resource_name}): {MDEV_TYPE_LOOKED_UP}")
            elif r.source not in types:
                types.append(r.source)
        elif not is_indexed_id(r.source.partition(":")[2]):
            skipped.append(f"{r.source!r} ({r.resource_name}): {UNUSUAL_DEVICE_ID}")
        elif r.source not in devices:
            devices.append(r.source)
    if offered:
        _add_offered(result, types, skipped)
    return ScanRequests(devices, types, skipped)


def _add_offered(result: ScanResult, types: list[str], skipped: list[str]) -> None:
    """Types the GPUs offer, not only those with vGPUs created: the plugin
    advertises each once the vGPU Device Manager (or KubeVirt) creates it."""
    sriov: list[str] = []
    for o in result.offered:
        if o.kind != MDEV:
            if o.name not in sriov:
                sriov.append(o.name)
        elif o.name not in types:
            types.append(o.name)
    if sriov:
        skipped.append(
            f"{len(sriov)} vGPU types SR-IOV VFs offer (nvidia/creatable_vgpu_types, e.g. {sriov[0]!r}): "
            "no mdev, so no mediatedDevices entry; KubeVirt's own plugin takes the VFs by pciVendorSelector"
        )


def vfio_drivers(profile: ProfileLike) -> tuple[str, ...]:
    """Driver names the profile's plugin accepts: ``vfio-pci``, plus
    ``nvgrace_gpu_vfio_pci`` from v1.5.0 (and for ``embedded`` and custom
    profiles, which follow the newest plugin)."""
    resolved = profile if not isinstance(profile, str) else get_profile(profile)
    release = resolved.plugin_release
    if release is None:
        return (VFIO_PCI, NVGRACE_VFIO)
    version = tuple(int(p) for p in re.findall(r"\d+", release)[:3])
    return (VFIO_PCI, NVGRACE_VFIO) if version >= NVGRACE_SINCE else (VFIO_PCI,)


# -- the scan -----------------------------------------------------------------


def scan(
    root: str | os.PathLike[str] = "/",
    profile: ProfileLike = DEFAULT_PROFILE,
    *,
    resolver: ResolverLike | None = None,
) -> ScanResult:
    """What the plugin would advertise on the node whose sysfs is under
    ``root`` (``/`` on the node itself), named by ``profile``, and what is
    wrong. Raises PcinameError when ``root/sys/bus/pci/devices`` is missing."""
    from pciname.resolution.resolver import resolver_or_default

    resolver = resolver_or_default(resolver)
    view = resolver.view(profile)
    if view.profile.is_kata:
        return kata_scan(Path(root), view)
    accepted = vfio_drivers(view.profile)

    profile_name = view.profile.name

    node = _walk(Path(root))  # 1. walk
    taken = _group_functions(node, accepted, profile_name, view.profile.discovery)  # 2. group
    vgpu_types = _group_vgpus(node, view.profile.mdev_name)
    pci_names = _name_functions(taken, node.nvidia, resolver, view)  # 3. name
    vgpu_names = _name_vgpus(vgpu_types, node.mdevs, view)
    node_diagnoses = _diagnose_node(node, accepted, profile_name)  # 4. diagnose

    offered = offered_types(node.root, view.profile.mdev_name)  # what the GPUs offer, beside what they run

    # The report's order: PCI functions (as read and taken, then as named),
    # then vGPUs (likewise), then the node as a whole.
    diagnoses = [*taken.diagnoses, *pci_names.diagnoses, *vgpu_types.diagnoses, *vgpu_names.diagnoses, *node_diagnoses]
    diagnoses += mixed_sriov_types(offered)
    resources = _crashed(diagnoses, [*pci_names.resources, *vgpu_names.resources])
    return ScanResult(
        str(node.root),
        profile_name,
        accepted,
        view.profile.discovery,
        node.nvidia,
        node.mdevs,
        resources,
        diagnoses,
        offered,
    )


# -- 2. group: what the plugin takes, keyed as it keys it --------------------


@dataclass(slots=True)
class _Taken:
    """The PCI functions the plugin takes: its ``deviceMap``."""

    device_members: dict[str, list[str]]  # device id -> kubelet device IDs (groups or addresses), in order
    diagnoses: list[Diagnosis]  # per entry: what reading it, then taking it, found wrong


@dataclass(slots=True)
class _VgpuTypes:
    """The vGPUs the plugin takes: its ``vGpuMap``."""

    types: dict[str, tuple[str, list[str]]]  # type string (the map key) -> (type as read, mdev uuids)
    diagnoses: list[Diagnosis]  # per entry: what reading it, then placing it, found wrong


def _group_functions(node: _Node, accepted: tuple[str, ...], profile_name: str, discovery: str) -> _Taken:
    """Which NVIDIA functions the plugin takes (bound to an ``accepted``
    driver, in an IOMMU group) and which of them register a kubelet device
    under their device id: the first of each group (``per-group``) or every
    one (``per-function``), with every function's status."""
    taken = _Taken({}, [])
    group_first: dict[str, PciFunction] = {}
    for found in node.pci_entries:
        taken.diagnoses += found.notes
        func = found.function
        if func is None or func.vendor != NVIDIA_VENDOR_ID:
            continue
        problem = _take_function(func, found, accepted, profile_name, group_first, discovery)
        if problem is not None:
            taken.diagnoses.append(problem)
        if func.kubelet_id is not None:
            assert func.device is not None and func.iommu_group is not None  # read, as kubelet_id says
            group_first.setdefault(func.iommu_group, func)
            taken.device_members.setdefault(func.device, []).append(func.kubelet_id)
    return taken


def _take_function(
    func: PciFunction,
    found: _PciEntry,
    accepted: tuple[str, ...],
    profile_name: str,
    group_first: dict[str, PciFunction],
    discovery: str,
) -> Diagnosis | None:
    """Whether the plugin takes ``func`` (``counted``) and registers it
    (``kubelet_id``: its group number or PCI address), with its status; the
    diagnosis when the plugin skips it or dies on it. ``found`` is its
    entry, as walked."""
    address = func.address
    if func.driver is None:
        func.status = "bound to no driver: skipped"
        return None
    if func.driver not in accepted:
        if func.driver == NVGRACE_VFIO:
            func.status = f"bound to {NVGRACE_VFIO}, which {profile_name} does not look for: skipped"
        else:
            func.status = f"bound to {func.driver}: skipped (the plugin needs {' or '.join(accepted)})"
        return None
    if func.iommu_group is None:
        func.status = "no IOMMU group: skipped"
        return Diagnosis.of(
            NO_IOMMU_GROUP,
            address,
            f"{address} is bound to {func.driver} but has no iommu_group link (IOMMU off?); the plugin skips it",
        )
    func.counted = True
    per_function = discovery == PER_FUNCTION
    first = group_first.get(func.iommu_group)
    if first is not None and not per_function:
        func.status = f"in IOMMU group {func.iommu_group} with {first.address}: passed through with it"
        return None
    # Up to v1.4.0 the plugin reads `device` only for the first function of
    # a group; from v1.5.0 for every function it keeps.
    shown, device_error = found.shown / "device", found.device_error
    if isinstance(device_error, rootfs.ShortFile):
        func.counted = False
        func.status = "device file shorter than 2 bytes: the plugin panics"
        which = "every function it keeps" if per_function else "the first function it keeps in each IOMMU group"
        return Diagnosis.of(
            PLUGIN_CRASH,
            address,
            f"{shown} has fewer than 2 bytes: the plugin reads the device file of {which}, and its "
            "readIDFromFile panics (slice out of range), so no GPU on the node is advertised",
        )
    if isinstance(device_error, OSError):
        func.counted = False
        func.status = "device file unreadable: skipped"
        return Diagnosis.of(
            UNREADABLE_DEVICE_ID,
            address,
            f"cannot read {shown} ({rootfs.reason(device_error)}): the plugin skips {address}",
        )
    func.kubelet_id = address if per_function else func.iommu_group
    return None


def _group_vgpus(node: _Node, rule: str) -> _VgpuTypes:
    """The vGPUs the plugin takes, by type string (its ``vGpuMap``: the type
    named by the release's ``rule``, :mod:`pciname.naming.mdev`), each listed
    on its NVIDIA parent function, with the parents' status."""
    vgpus = _VgpuTypes({}, [])
    by_address = {f.address: f for f in node.functions}
    for found in node.mdev_entries:
        vgpus.diagnoses += found.notes
        mdev = found.mdev
        if mdev is None or mdev.type_name is None:
            continue  # skipped by the plugin: noted by the walk
        # The plugin names the type before it looks for the parent, so a
        # type it panics on (v1.0.x, no space) brings it down either way.
        key = type_string(mdev.type_name, rule)
        if key is None:
            mdev.status = "type name without a space: the plugin panics"
            vgpus.diagnoses.append(Diagnosis.of(PLUGIN_CRASH, mdev.uuid, crash_warning(mdev.type_name).message))
            continue
        if mdev.parent is None:
            continue  # skipped by the plugin: noted by the walk
        vgpus.types.setdefault(key, (mdev.type_name, []))[1].append(mdev.uuid)
        parent = by_address.get(mdev.parent)
        if parent is not None and parent.vendor == NVIDIA_VENDOR_ID:
            parent.mdevs.append(mdev.uuid)
        else:
            vgpus.diagnoses.append(
                Diagnosis.of(
                    NON_NVIDIA_MDEV,
                    mdev.uuid,
                    f"the parent {mdev.parent or '?'} of vGPU {mdev.uuid} is not an NVIDIA function; the plugin "
                    "advertises it all the same",
                )
            )
    for func in node.nvidia:
        if func.mdevs and not func.counted:
            func.status = (
                f"bound to {func.driver or 'no driver'}, parent of {len(func.mdevs)} vGPU(s): "
                "the vGPUs are advertised, not the GPU"
            )
    return vgpus


# -- 3. name: what each resource is called ------------------------------------


@dataclass(slots=True)
class _Named:
    """The resources of one kind (PCI or vGPU), and what is wrong with their names."""

    resources: list[AdvertisedResource]
    diagnoses: list[Diagnosis]


@dataclass(frozen=True, slots=True)
class _Naming:
    """What the plugin registers for one device id: the resource (None:
    nothing), whether kubelet would take it, and what is wrong with it."""

    resource_name: str | None
    advertised: bool
    warnings: tuple[tuple[str, str], ...]  # (code, message)


def _name_functions(taken: _Taken, nvidia: list[PciFunction], resolver: ResolverLike, view: ProfileView) -> _Named:
    """One plugin per device id, named by the resolver (an id of unusual
    spelling: by the profile's algorithm, verbatim, as the plugin looks it
    up), with the names' problems (collisions: only between device ids on
    this node) and the status of each function that registers a device."""
    named = _Named([], [])
    naming = {device_id: _name_device_id(device_id, resolver, view) for device_id in taken.device_members}
    by_resource: dict[str, list[str]] = {}
    for device_id, n in naming.items():
        if n.resource_name is not None:
            by_resource.setdefault(n.resource_name, []).append(device_id)
    for device_id, members in taken.device_members.items():
        _name_device(device_id, members, naming[device_id], by_resource, named)
    for func in nvidia:
        if func.kubelet_id is not None and func.device is not None:
            _function_status(func, naming[func.device])
    return named


def _name_device_id(device_id: str, resolver: ResolverLike, view: ProfileView) -> _Naming:
    """The resolver's answer for ``device_id``; for an id sysfs does not
    normally give (not 4 lower-case hex digits), the profile's algorithm run
    on it verbatim, as the plugin does, with an ``unusual-device-id`` warning."""
    if is_indexed_id(device_id):
        r = resolver.resolve(f"{NVIDIA_VENDOR_ID}:{device_id}", view.profile)
        warnings = tuple((w.code, w.message) for w in r.warnings if w.code != NAME_COLLISION)
        return _Naming(r.resource_name, r.advertised, warnings)
    name = _algorithm_name(view, device_id)
    skipped = not name and view.profile.unnamed_device == UNNAMED_NOT_ADVERTISED
    resource = None if skipped else checks.resource_name(name or device_id)
    found = [
        (
            UNUSUAL_DEVICE_ID,
            f"device file reads {device_id!r}, not 4 lower-case hex digits; the plugin looks it up verbatim "
            + (f"and advertises {resource!r}" if resource is not None else "and advertises nothing (no name)"),
        )
    ]
    if resource is not None:
        found += [(w.code, w.message) for w in checks.name_warnings(_name_part(resource))]
    return _Naming(resource, checks.is_advertised(resource, (code for code, _ in found)), tuple(found))


def _name_device(
    device_id: str, members: list[str], n: _Naming, by_resource: dict[str, list[str]], named: _Named
) -> None:
    """The resource of one device id and its diagnoses, added to ``named``."""
    subject = f"{NVIDIA_VENDOR_ID}:{device_id}"
    named.diagnoses += [Diagnosis.of(code, subject, message) for code, message in n.warnings]
    if n.resource_name is None:
        return
    twins = [d for d in by_resource[n.resource_name] if d != device_id]
    if twins:
        named.diagnoses.append(
            Diagnosis.of(
                NAME_COLLISION,
                subject,
                f"{n.resource_name} is also the name of {', '.join(f'{NVIDIA_VENDOR_ID}:{t}' for t in twins)} "
                f"on this node: both plugins use {checks.socket_path(_name_part(n.resource_name))} and only one "
                "of them is advertised",
            )
        )
    named.resources.append(
        AdvertisedResource(n.resource_name, "pci", subject, len(members), tuple(members), n.advertised and not twins)
    )


def _function_status(func: PciFunction, n: _Naming) -> None:
    """The resource and status of a function that registers a device."""
    func.resource_name = n.resource_name
    if n.resource_name is None:
        func.status = "not advertised: " + next((m for code, m in n.warnings if code == NOT_ADVERTISED), "no name")
    elif n.advertised:
        func.status = f"advertised as {n.resource_name} (device {func.kubelet_id})"
    else:
        func.status = f"{n.resource_name} is refused: never advertised"


def _name_vgpus(vgpu_types: _VgpuTypes, mdevs: list[MdevDevice], view: ProfileView) -> _Named:
    """One plugin per vGPU type string: named as the plugin names it (the
    release's name algorithm run on the type string as on a device id; the
    type string itself when that finds no name), whether kubelet takes the
    name, and the status of each vGPU the plugin takes. On a release that
    leaks vGPUs between types, a warning when there is more than one type."""
    named = _Named([], [])
    for key, (type_name, uuids) in vgpu_types.types.items():
        looked_up = _algorithm_name(view, key)
        resource = checks.resource_name(looked_up or key)
        if looked_up:
            named.diagnoses.append(
                Diagnosis.of(
                    MDEV_TYPE_LOOKED_UP,
                    resource,
                    f"vGPU type {type_name!r} gives the type string {key!r}, which {view.profile.name}'s name "
                    f"algorithm finds in {view.file_label()} as if it were a device id: the plugin advertises "
                    f"its vGPUs as {resource}, not nvidia.com/{key}",
                )
            )
        warnings = checks.name_warnings(_name_part(resource))
        named.diagnoses += [Diagnosis.of(w.code, resource, w.message) for w in warnings]
        named.resources.append(AdvertisedResource(resource, "mdev", type_name, len(uuids), tuple(uuids), not warnings))
        own = set(uuids)
        for mdev in mdevs:
            if mdev.uuid in own:
                mdev.resource_name = resource
                mdev.status = f"{resource} is refused: never advertised" if warnings else f"advertised as {resource}"
    if view.profile.mdev_leak and len(vgpu_types.types) > 1:
        listed = ", ".join(repr(type_name) for type_name, _ in vgpu_types.types.values())
        named.diagnoses.append(
            Diagnosis.of(
                MDEV_TYPE_LEAK,
                "vGPU types",
                f"{view.profile.name} never resets its list of vGPUs between types, and this node has "
                f"{len(vgpu_types.types)} ({listed}): each type's plugin also lists the vGPUs of the types "
                "started before it, in Go's random map order, so a VM may be given a vGPU of another type "
                "(upgrade the plugin, or keep one vGPU type per node)",
            )
        )
    return named


def _algorithm_name(view: ProfileView, key: str) -> str:
    """The profile's name algorithm on ``key``, as the plugin's getDeviceName
    runs it on any string (``""``: no name). Keys sysfs does not give (odd
    spellings, vGPU type strings) take the reference scan: one pass over the
    file, without building the catalog's index for them."""
    if is_indexed_id(key):
        return view.catalog.name(view.profile.algorithm, key)
    return REFERENCE[view.profile.algorithm](view.catalog.lines_for(view.profile.algorithm), key)


def _name_part(resource: str) -> str:
    """``nvidia.com/<name>`` -> ``<name>``: what kubelet and the socket path check."""
    return resource.partition("/")[2]


# -- 4. diagnose: the node as a whole ---------------------------------------


def _diagnose_node(node: _Node, accepted: tuple[str, ...], profile_name: str) -> list[Diagnosis]:
    """What is wrong beyond single entries: GPUs on the wrong driver, and
    IOMMU groups VFIO refuses."""
    return _diagnose_drivers(node.nvidia, accepted, profile_name) + _diagnose_groups(node.functions, accepted)


def _diagnose_drivers(nvidia: list[PciFunction], accepted: tuple[str, ...], profile_name: str) -> list[Diagnosis]:
    """NVIDIA GPUs the plugin does not take, because of their driver."""
    found: list[Diagnosis] = []
    for func in nvidia:
        looks_like_gpu = func.is_gpu or (func.pci_class is None and func.driver in HOST_GPU_DRIVERS)
        if not looks_like_gpu or func.counted:
            continue
        if func.driver is None:
            found.append(
                Diagnosis.of(
                    NO_DRIVER,
                    func.address,
                    f"GPU {func.address} is bound to no driver: the plugin advertises it only when bound to "
                    f"{' or '.join(accepted)}",
                )
            )
        elif func.driver == NVGRACE_VFIO and NVGRACE_VFIO not in accepted:
            found.append(
                Diagnosis.of(
                    UNSUPPORTED_VFIO_DRIVER,
                    func.address,
                    f"GPU {func.address} is bound to {NVGRACE_VFIO}, which {profile_name} does not recognise "
                    "(plugin v1.5.0 and later do): nothing is advertised for it",
                )
            )
        elif func.driver not in accepted and not func.mdevs:
            found.append(
                Diagnosis.of(
                    HOST_DRIVER,
                    func.address,
                    f"GPU {func.address} is bound to the host driver {func.driver}: nothing is advertised for it on a "
                    f"passthrough node (bind it to vfio-pci{', or use vGPU' if func.driver == 'nvidia' else ''})",
                )
            )
    return found


def _crashed(diagnoses: list[Diagnosis], resources: list[AdvertisedResource]) -> list[AdvertisedResource]:
    """``resources``, none of them working when the plugin crashes: it dies
    before it registers anything."""
    if not any(d.code == PLUGIN_CRASH for d in diagnoses):
        return resources
    return [AdvertisedResource(r.resource_name, r.kind, r.source, r.count, r.members, False) for r in resources]
