"""The node as the device plugins read it: every entry of
``ROOT/sys/bus/pci/devices`` and ``ROOT/sys/bus/mdev/devices`` as read
(:func:`walk`), the records a scan reports (:class:`PciFunction`,
:class:`MdevDevice`, :class:`AdvertisedResource`, :class:`ScanResult`) and
the IOMMU groups VFIO refuses (:func:`diagnose_groups`).

Shared by the KubeVirt plugin's scan (:mod:`pciname.host.sysfs`) and the
Kata sandbox device plugin's (:mod:`pciname.host.kata_scan`); the reading
rules are described in :mod:`pciname.host.sysfs`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pciname.errors import PcinameError
from pciname.host import rootfs
from pciname.host.diagnoses import (
    ERROR,
    IOMMU_GROUP_SPLIT,
    MDEV_PARENT_UNKNOWN,
    MDEV_WITHOUT_TYPE,
    NOT_A_DEVICE_LINK,
    PLUGIN_CRASH,
    UNREADABLE_FILE,
    Diagnosis,
)
from pciname.host.offered import OfferedType
from pciname.pciids.ids import NVIDIA_VENDOR_ID

__all__ = [
    "HOST_GPU_DRIVERS",
    "NVGRACE_VFIO",
    "VFIO_PCI",
    "VIABLE_DRIVERS",
    "AdvertisedResource",
    "MdevDevice",
    "MdevEntry",
    "Node",
    "PciEntry",
    "PciFunction",
    "ScanResult",
    "diagnose_groups",
    "walk",
]

VFIO_PCI = "vfio-pci"
NVGRACE_VFIO = "nvgrace_gpu_vfio_pci"
#: Drivers that leave a group viable for VFIO (besides the VFIO drivers).
VIABLE_DRIVERS = frozenset({"pci-stub", "pcieport"})
HOST_GPU_DRIVERS = frozenset({"nvidia", "nouveau", "nvidiafb", "nvidia-drm", "nvidia_drm"})

# Where the plugin looks, relative to the root.
_PCI_DEVICES = "sys/bus/pci/devices"
_MDEV_DEVICES = "sys/bus/mdev/devices"


# -- the result ---------------------------------------------------------------


@dataclass(slots=True)
class PciFunction:
    address: str
    vendor: str | None  # as the plugin reads it ("10de")
    device: str | None
    pci_class: str | None  # "0x030200"
    driver: str | None
    iommu_group: str | None
    numa_node: int | None
    counted: bool = False  # the plugin takes it (NVIDIA, VFIO driver, group)
    # The kubelet device ID it registers: its IOMMU group (per-group
    # discovery, the first counted function of the group) or its PCI
    # address (per-function: every counted function); None: none.
    kubelet_id: str | None = None
    resource_name: str | None = None
    status: str = ""  # what the plugin does with it, in words
    mdevs: list[str] = field(default_factory=list)

    @property
    def is_gpu(self) -> bool:
        return self.pci_class is not None and self.pci_class.lower().startswith(("0x0300", "0x0302", "0x0380"))

    def to_dict(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "vendor": self.vendor,
            "device": f"{self.vendor}:{self.device}" if self.vendor and self.device else self.device,
            "class": self.pci_class,
            "driver": self.driver,
            "iommu_group": self.iommu_group,
            "numa_node": self.numa_node,
            "counted": self.counted,
            "kubelet_id": self.kubelet_id,
            "resource_name": self.resource_name,
            "status": self.status,
            "mdevs": list(self.mdevs),
        }


@dataclass(slots=True)
class MdevDevice:
    uuid: str
    type_name: str | None  # mdev_type/name as read (newlines trimmed)
    parent: str | None
    resource_name: str | None
    status: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "uuid": self.uuid,
            "type_name": self.type_name,
            "parent": self.parent,
            "resource_name": self.resource_name,
            "status": self.status,
        }


@dataclass(frozen=True, slots=True)
class AdvertisedResource:
    """One plugin the node would run: a resource and its kubelet devices."""

    resource_name: str
    kind: str  # "pci" or "mdev"
    source: str  # the device id ("10de:2236") or the vGPU type name
    count: int  # kubelet devices
    # The kubelet device IDs: IOMMU group numbers (per-group discovery, up
    # to v1.4.0), PCI addresses (per-function, v1.5.0 and later) or mdev
    # uuids (the type's own: on a release that leaks, the plugin may list more).
    members: tuple[str, ...]
    works: bool  # False: kubelet refuses it, socket too long, or lost to a collision
    # The Kata plugin's socket (sandbox-<name>.sock); None: the KubeVirt
    # plugin's, which the report does not show.
    socket_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        found: dict[str, Any] = {
            "resource_name": self.resource_name,
            "kind": self.kind,
            "source": self.source,
            "count": self.count,
            "members": list(self.members),
            "works": self.works,
        }
        if self.socket_path is not None:
            found["socket_path"] = self.socket_path
        return found


@dataclass(slots=True)
class ScanResult:
    root: str
    profile: str
    vfio_drivers: tuple[str, ...]
    discovery: str  # "per-group" or "per-function": what one kubelet device is
    functions: list[PciFunction]  # NVIDIA functions only
    mdevs: list[MdevDevice]
    resources: list[AdvertisedResource]
    diagnoses: list[Diagnosis]
    # The vGPU types each NVIDIA function offers (pciname.host.offered).
    offered: list[OfferedType] = field(default_factory=list)
    # The Kata sandbox device plugin (pciname.host.kata_scan): its family,
    # the aliases in force ({"P_GPU_ALIAS": "pgpu", ...}; "" each model its
    # own name), the PCI classes it takes (None: any), and whether the node
    # has /dev/iommu (kubelet devices are then iommufd devices). None: the
    # KubeVirt plugin.
    plugin: str | None = None
    aliases: dict[str, str] | None = None
    classes: tuple[str, ...] | None = None
    iommufd: bool | None = None

    @property
    def errors(self) -> list[Diagnosis]:
        return [d for d in self.diagnoses if d.severity == ERROR]

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "profile": self.profile,
            "vfio_drivers": list(self.vfio_drivers),
            "discovery": self.discovery,
            "functions": [f.to_dict() for f in self.functions],
            "mdevs": [m.to_dict() for m in self.mdevs],
            "resources": [r.to_dict() for r in self.resources],
            "diagnoses": [d.to_dict() for d in self.diagnoses],
            "offered": [o.to_dict() for o in self.offered],
            **self._kata_dict(),
        }

    def _kata_dict(self) -> dict[str, Any]:
        if self.plugin is None:
            return {}
        return {
            "plugin": self.plugin,
            "aliases": dict(self.aliases or {}),
            "classes": list(self.classes) if self.classes is not None else None,
            "iommufd": self.iommufd,
        }


# -- 1. walk: what is there -----------------------------------------------------


@dataclass(slots=True)
class PciEntry:
    """One entry of ``sys/bus/pci/devices``, as the walk read it."""

    name: str
    shown: Path  # ROOT/sys/bus/pci/devices/<name>, as messages show it
    function: PciFunction | None  # None: a directory, not a device
    device_error: Exception | None = None  # why an NVIDIA function's `device` was not read
    notes: list[Diagnosis] = field(default_factory=list)  # what reading it found wrong


@dataclass(slots=True)
class MdevEntry:
    """One entry of ``sys/bus/mdev/devices``, as the walk read it."""

    name: str
    mdev: MdevDevice | None  # None: a directory, not a device
    notes: list[Diagnosis] = field(default_factory=list)  # what reading it found wrong


@dataclass(slots=True)
class Node:
    """The walk's answer: the entries of both directories, in the plugin's order."""

    root: Path
    pci_entries: list[PciEntry]
    mdev_entries: list[MdevEntry]

    @property
    def functions(self) -> list[PciFunction]:
        """Every PCI function, all vendors (for IOMMU group membership)."""
        return [e.function for e in self.pci_entries if e.function is not None]

    @property
    def nvidia(self) -> list[PciFunction]:
        """The functions whose ``vendor`` reads ``10de``: those the report lists."""
        return [f for f in self.functions if f.vendor == NVIDIA_VENDOR_ID]

    @property
    def mdevs(self) -> list[MdevDevice]:
        """Every vGPU entry that is a link (the report lists them all)."""
        return [e.mdev for e in self.mdev_entries if e.mdev is not None]


def walk(root: Path) -> Node:
    """Every entry of the PCI and mdev device directories under ``root``,
    read as the plugin reads it. Raises PcinameError when the PCI devices
    directory is missing or cannot be listed."""
    pci = _walk_functions(root)  # first: without it there is no node to walk
    return Node(root, pci, _walk_mdevs(root))


def _walk_functions(root: Path) -> list[PciEntry]:
    """The entries of ``ROOT/sys/bus/pci/devices``, each read by
    :func:`_read_function`."""
    shown = root / _PCI_DEVICES  # as messages show it
    try:
        real = rootfs.directory(root, _PCI_DEVICES)
        listed = rootfs.entries(root, real)
    except (FileNotFoundError, NotADirectoryError):
        raise PcinameError(
            f"{shown}: no such directory (the root given must be the directory that holds sys/)"
        ) from None
    except OSError as exc:
        raise PcinameError(f"{shown}: cannot list it ({rootfs.reason(exc)})") from None
    return [_read_function(root, real, entry, shown / entry.name) for entry in listed]


def _read_function(root: Path, real_dir: str, entry: rootfs.Entry, shown: Path) -> PciEntry:
    """One PCI entry: its ``class``, ``numa_node``, ``driver`` and
    ``iommu_group`` for the report, its ``vendor`` and, for NVIDIA, its
    ``device``, as the plugin reads them."""
    name = entry.name
    found = PciEntry(name, shown, None)
    if entry.is_dir(follow_symlinks=False):
        found.notes.append(
            Diagnosis.of(
                NOT_A_DEVICE_LINK, name, f"{shown} is a directory, not a link to a device; the plugin skips it"
            )
        )
        return found
    func = found.function = PciFunction(name, None, None, None, None, None, None)
    try:
        dev = rootfs.resolved(root, f"{real_dir}/{name}")
    except OSError as exc:
        if not rootfs.missing(exc):
            found.notes.append(_unreadable(name, shown, exc, f"{name} is left out"))
        return found
    func.pci_class = _report_attr(root, f"{dev}/class", shown / "class", found)
    func.numa_node = _numa(_report_attr(root, f"{dev}/numa_node", shown / "numa_node", found))
    func.driver = _link_base_or_none(root, f"{dev}/driver")
    func.iommu_group = _link_base_or_none(root, f"{dev}/iommu_group")
    try:
        func.vendor = rootfs.read_id(root, f"{dev}/vendor")
    except rootfs.ShortFile:
        found.notes.append(
            Diagnosis.of(
                PLUGIN_CRASH,
                name,
                f"{shown / 'vendor'} has fewer than 2 bytes: the plugin's readIDFromFile panics (slice out of range) "
                "and no GPU on the node is advertised",
            )
        )
        return found
    except OSError as exc:
        if not rootfs.missing(exc):
            found.notes.append(_unreadable(name, shown / "vendor", exc, f"{name} is left out"))
        return found
    if func.vendor == NVIDIA_VENDOR_ID:
        try:
            func.device = rootfs.read_id(root, f"{dev}/device")
        except (rootfs.ShortFile, OSError) as exc:
            found.device_error = exc
    return found


def _walk_mdevs(root: Path) -> list[MdevEntry]:
    """The entries of ``ROOT/sys/bus/mdev/devices`` (none without the
    directory: a node without vGPUs), each read by :func:`_read_mdev`."""
    shown = root / _MDEV_DEVICES  # as messages show it
    try:
        real = rootfs.directory(root, _MDEV_DEVICES)
        listed = rootfs.entries(root, real)
    except OSError:
        return []
    return [_read_mdev(root, real, entry, shown / entry.name) for entry in listed]


def _read_mdev(root: Path, real_dir: str, entry: rootfs.Entry, shown: Path) -> MdevEntry:
    """One vGPU: its ``mdev_type/name`` and its parent (the second-to-last
    component of its link's target), as the plugin reads them."""
    uuid = entry.name
    found = MdevEntry(uuid, None)
    if entry.is_dir(follow_symlinks=False):
        found.notes.append(
            Diagnosis.of(NOT_A_DEVICE_LINK, uuid, f"{shown} is a directory, not a link to an mdev; the plugin skips it")
        )
        return found
    mdev = found.mdev = MdevDevice(uuid, None, None, None)
    try:
        raw = rootfs.read_attr(root, f"{real_dir}/{uuid}/mdev_type/name").decode("utf-8", "surrogateescape")
    except OSError as exc:
        mdev.status = "no mdev_type/name: skipped"
        found.notes.append(
            Diagnosis.of(
                MDEV_WITHOUT_TYPE,
                uuid,
                f"cannot read {shown / 'mdev_type' / 'name'} ({rootfs.reason(exc)}): the plugin skips this vGPU",
            )
        )
        return found
    mdev.type_name = raw.strip("\n")
    try:
        # The entry itself, in the resolved directory: read, not followed.
        parts = rootfs.link_target(root, real_dir, uuid).split("/")
    except OSError:
        mdev.status = "not a link: skipped"
        found.notes.append(
            Diagnosis.of(
                MDEV_PARENT_UNKNOWN,
                uuid,
                f"{shown} is not a link; the plugin cannot find the parent GPU and skips this vGPU",
            )
        )
        return found
    if len(parts) < 2:
        mdev.status = "link target without '/': the plugin panics"
        found.notes.append(
            Diagnosis.of(
                PLUGIN_CRASH,
                uuid,
                f"{shown} links to a target without '/': the plugin's readGpuIDForVgpu panics (index out of range)",
            )
        )
        return found
    mdev.parent = parts[-2].strip("\n")
    return found


def _report_attr(root: Path, path: str, shown: Path, found: PciEntry) -> str | None:
    """An attribute only the report uses; None when it cannot be read
    (noted unless it is simply absent)."""
    try:
        return rootfs.read_text(root, path)
    except OSError as exc:
        if not rootfs.missing(exc):
            found.notes.append(_unreadable(found.name, shown, exc, "left out of the report"))
        return None


def _numa(text: str | None) -> int | None:
    """``numa_node`` as a number; None when absent or not a number."""
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _link_base_or_none(root: Path, path: str) -> str | None:
    """The plugin's readLink of ``path``; None when there is no such link."""
    try:
        return rootfs.link_base(root, path)
    except OSError:
        return None


def _unreadable(subject: str, shown: Path, exc: OSError, consequence: str) -> Diagnosis:
    """A file that exists but is not read: why, and what is left out."""
    return Diagnosis.of(UNREADABLE_FILE, subject, f"cannot read {shown} ({rootfs.reason(exc)}): {consequence}")


def diagnose_groups(functions: list[PciFunction], accepted: tuple[str, ...]) -> list[Diagnosis]:
    """IOMMU groups that mix functions on VFIO drivers with functions on
    host drivers (bridges and ``pci-stub`` aside), by group id."""
    vfio = set(accepted) | {VFIO_PCI, NVGRACE_VFIO}
    groups: dict[str, list[PciFunction]] = {}
    for func in functions:
        if func.iommu_group is not None:
            groups.setdefault(func.iommu_group, []).append(func)
    found: list[Diagnosis] = []
    for group, members in sorted(groups.items(), key=lambda kv: kv[0]):
        on_vfio = [f for f in members if f.driver in vfio]
        if not on_vfio:
            continue
        hosts = [
            f
            for f in members
            if f.driver is not None
            and f.driver not in vfio
            and f.driver not in VIABLE_DRIVERS
            and not (f.pci_class or "").lower().startswith("0x0604")
        ]
        if hosts:
            vf = ", ".join(f"{f.address} ({f.driver})" for f in on_vfio)
            hs = ", ".join(f"{f.address} ({f.driver})" for f in hosts)
            found.append(
                Diagnosis.of(
                    IOMMU_GROUP_SPLIT,
                    f"iommu_group {group}",
                    f"IOMMU group {group} mixes {vf} with {hs}: VFIO needs every function of a group on a VFIO "
                    "driver (or none), so a VM given this group fails to start; bind them all to vfio-pci",
                )
            )
    return found
