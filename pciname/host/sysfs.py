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
  ``nvgrace_gpu_vfio_pci``: profile dependent, see :func:`vfio_drivers`);
* the ``iommu_group`` link's basename is the device; only the first counted
  function of a group registers the group under its ``device`` id, so a
  GPU's audio function in the same group adds no resource;
* one plugin per device id, named by the profile, advertising one device
  per IOMMU group;
* vGPUs: every ``/sys/bus/mdev/devices/<uuid>``: ``mdev_type/name`` with
  ``\\n`` trimmed and white-space runs to ``_``; the parent GPU is the
  second-to-last component of the entry's link target.

It also reads, for the report, ``class``, ``numa_node`` and every function's
driver and IOMMU group, and diagnoses a broken node (codes are stable):

``host-driver``
    an NVIDIA GPU bound to a host driver (``nvidia``, ``nouveau``, ...) with
    no vGPUs on it: nothing is advertised for passthrough;
``unsupported-vfio-driver``
    bound to ``nvgrace_gpu_vfio_pci`` but the profile's plugin predates v1.5.0;
``no-driver``
    an NVIDIA GPU bound to no driver;
``no-iommu-group``
    bound to vfio-pci without an ``iommu_group`` (IOMMU off): skipped;
``iommu-group-split``
    one IOMMU group mixes VFIO-bound functions with functions on host
    drivers: VFIO refuses the group, the VM does not start;
``invalid-resource-name`` / ``socket-path-too-long`` / ``not-advertised``
    the name the profile gives will not work (see docs/naming.md, section 5);
``name-collision``
    two device ids on this node share one name: only one is advertised;
``unnamed-device``
    pci.ids has no name: advertised under the bare device id;
``plugin-crash``
    a ``vendor``/``device`` file shorter than two bytes: the plugin panics;
``unreadable-device-id`` / ``unusual-device-id``
    the ``device`` file cannot be read, or is not 4 lower-case hex digits;
``not-a-device-link``
    a directory where the plugin expects a symlink (it skips it);
``unreadable-file``
    a ``vendor``, ``class`` or ``numa_node`` file, or a device link, that
    exists but is not read: not a regular file (a FIFO, a device), larger
    than :data:`~pciname.files.MAX_SYSFS_ATTR_BYTES`, a symlink loop or no
    permission;
``mdev-without-type`` / ``mdev-parent-unknown`` / ``non-nvidia-mdev``
    a vGPU the plugin skips, or advertises under ``nvidia.com/`` although
    its parent is not an NVIDIA GPU.

Every path is resolved inside the root as a chroot would
(:func:`_resolve_in_root`): an absolute link target ``/x`` means
``ROOT/x`` and ``..`` stops at the root, so a tree cannot make the scan read
anything outside it. Only regular files of at most
:data:`~pciname.files.MAX_SYSFS_ATTR_BYTES` are read, with an open that never
blocks.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import PcinameError
from ..naming import checks
from ..naming.algorithms import is_indexed_id
from ..naming.profiles import DEFAULT_PROFILE
from ..pciids.ids import NVIDIA_VENDOR_ID
from . import rootfs
from .diagnoses import (
    ERROR,
    HOST_DRIVER,
    INFO,
    IOMMU_GROUP_SPLIT,
    MDEV_PARENT_UNKNOWN,
    MDEV_WITHOUT_TYPE,
    NAME_COLLISION,
    NO_DRIVER,
    NO_IOMMU_GROUP,
    NON_NVIDIA_MDEV,
    NOT_A_DEVICE_LINK,
    NOT_ADVERTISED,
    PLUGIN_CRASH,
    UNREADABLE_DEVICE_ID,
    UNREADABLE_FILE,
    UNSUPPORTED_VFIO_DRIVER,
    UNUSUAL_DEVICE_ID,
    WARNING,
    Diagnosis,
)
from .rootfs import (
    ShortFile as _ShortFile,
    components as _walk,
    directory as _directory,
    entries as _entries,
    link_base as _link_base,
    missing as _missing,
    read_attr as _read_attr,
    read_id as _read_id,
    reason as _reason,
    resolve_in_root as _resolve_in_root,
)

VFIO_PCI = "vfio-pci"
NVGRACE_VFIO = "nvgrace_gpu_vfio_pci"
NVGRACE_SINCE = (1, 5, 0)
#: Drivers that leave a group viable for VFIO (besides the VFIO drivers).
VIABLE_DRIVERS = frozenset({"pci-stub", "pcieport"})
HOST_GPU_DRIVERS = frozenset({"nvidia", "nouveau", "nvidiafb", "nvidia-drm", "nvidia_drm"})



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
    registers_group: bool = False  # the first counted function of its group
    resource_name: str | None = None
    status: str = ""  # what the plugin does with it, in words
    mdevs: list[str] = field(default_factory=list)

    @property
    def is_gpu(self) -> bool:
        return self.pci_class is not None and self.pci_class.lower().startswith(("0x0300", "0x0302", "0x0380"))

    def to_dict(self) -> dict:
        return {
            "address": self.address,
            "vendor": self.vendor,
            "device": f"{self.vendor}:{self.device}" if self.vendor and self.device else self.device,
            "class": self.pci_class,
            "driver": self.driver,
            "iommu_group": self.iommu_group,
            "numa_node": self.numa_node,
            "counted": self.counted,
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

    def to_dict(self) -> dict:
        return {
            "uuid": self.uuid,
            "type_name": self.type_name,
            "parent": self.parent,
            "resource_name": self.resource_name,
            "status": self.status,
        }


@dataclass(frozen=True, slots=True)
class AdvertisedResource:
    """One plugin the node would run: a resource and how many devices."""

    resource_name: str
    kind: str  # "pci" or "mdev"
    source: str  # the device id ("10de:2236") or the vGPU type name
    count: int  # IOMMU groups (pci) or mdevs
    members: tuple[str, ...]  # group ids or mdev uuids
    works: bool  # False: kubelet refuses it, socket too long, or lost to a collision

    def to_dict(self) -> dict:
        return {
            "resource_name": self.resource_name,
            "kind": self.kind,
            "source": self.source,
            "count": self.count,
            "members": list(self.members),
            "works": self.works,
        }


@dataclass(slots=True)
class ScanResult:
    root: str
    profile: str
    vfio_drivers: tuple[str, ...]
    functions: list[PciFunction]  # NVIDIA functions only
    mdevs: list[MdevDevice]
    resources: list[AdvertisedResource]
    diagnoses: list[Diagnosis]

    @property
    def errors(self) -> list[Diagnosis]:
        return [d for d in self.diagnoses if d.severity == ERROR]

    def to_dict(self) -> dict:
        return {
            "root": self.root,
            "profile": self.profile,
            "vfio_drivers": list(self.vfio_drivers),
            "functions": [f.to_dict() for f in self.functions],
            "mdevs": [m.to_dict() for m in self.mdevs],
            "resources": [r.to_dict() for r in self.resources],
            "diagnoses": [d.to_dict() for d in self.diagnoses],
        }


# -- what the plugin reads ----------------------------------------------------


def _name_part(resource: str) -> str:
    """``nvidia.com/<name>`` -> ``<name>``: what kubelet and the socket path check."""
    return resource.partition("/")[2]


def _unreadable(subject: str, shown: Path, exc: OSError, consequence: str) -> Diagnosis:
    return Diagnosis.of(UNREADABLE_FILE, subject, f"cannot read {shown} ({_reason(exc)}): {consequence}")


def _read_text(root: Path, path: str, shown: Path, subject: str, diagnoses: list) -> str | None:
    """An attribute for the report; None when it cannot be read (reported
    unless it is simply absent)."""
    try:
        return _read_attr(root, path).decode("utf-8", "surrogateescape").strip()
    except OSError as exc:
        if not _missing(exc):
            diagnoses.append(_unreadable(subject, shown, exc, "left out of the report"))
        return None


def vfio_drivers(profile) -> tuple[str, ...]:
    """Driver names the profile's plugin accepts: ``vfio-pci``, plus
    ``nvgrace_gpu_vfio_pci`` from v1.5.0 (and for ``embedded`` and custom
    profiles, which follow the newest plugin)."""
    from ..naming.profiles import get_profile

    resolved = profile if not isinstance(profile, str) else get_profile(profile)
    release = resolved.plugin_release
    if release is None:
        return (VFIO_PCI, NVGRACE_VFIO)
    version = tuple(int(p) for p in re.findall(r"\d+", release)[:3])
    return (VFIO_PCI, NVGRACE_VFIO) if version >= NVGRACE_SINCE else (VFIO_PCI,)


# -- the scan -----------------------------------------------------------------


def scan(root: str | os.PathLike = "/", profile=DEFAULT_PROFILE, *, resolver=None) -> ScanResult:
    """What the plugin would advertise on the node whose sysfs is under
    ``root`` (``/`` on the node itself), named by ``profile``, and what is
    wrong. Raises PcinameError when ``root/sys/bus/pci/devices`` is missing."""
    if resolver is None:
        from ..api import default_resolver

        resolver = default_resolver()
    view = resolver.view(profile)
    profile_name = view.profile.name
    accepted = vfio_drivers(view.profile)
    root_path = Path(root)
    pci_dir = root_path / "sys" / "bus" / "pci" / "devices"  # as shown in messages
    try:
        pci_real = _directory(root_path, "sys/bus/pci/devices")
        pci_entries = _entries(root_path.joinpath(pci_real))
    except (FileNotFoundError, NotADirectoryError):
        raise PcinameError(f"{pci_dir}: no such directory (is --sysfs-root the directory that holds sys/?)") from None
    except OSError as exc:
        raise PcinameError(f"{pci_dir}: cannot list it ({_reason(exc)})") from None

    diagnoses: list[Diagnosis] = []
    every: list[PciFunction] = []  # all vendors: for IOMMU group membership
    nvidia: list[PciFunction] = []
    group_first: dict[str, PciFunction] = {}
    device_groups: dict[str, list[str]] = {}  # the plugin's deviceMap

    for entry in pci_entries:
        path = pci_dir / entry.name
        if entry.is_dir(follow_symlinks=False):
            diagnoses.append(
                Diagnosis.of(NOT_A_DEVICE_LINK, entry.name, f"{path} is a directory, not a link to a device; the plugin skips it")
            )
            continue
        func = PciFunction(entry.name, None, None, None, None, None, None)
        try:
            dev = "/".join(_walk(root_path, f"{pci_real}/{entry.name}"))
        except OSError as exc:
            if not _missing(exc):
                diagnoses.append(_unreadable(entry.name, path, exc, f"{entry.name} is left out"))
            every.append(func)
            continue
        func.pci_class = _read_text(root_path, f"{dev}/class", path / "class", entry.name, diagnoses)
        func.numa_node = _numa(root_path, dev, path, entry.name, diagnoses)
        try:
            func.driver = _link_base(root_path, f"{dev}/driver")
        except OSError:
            pass
        try:
            func.iommu_group = _link_base(root_path, f"{dev}/iommu_group")
        except OSError:
            pass
        try:
            func.vendor = _read_id(root_path, f"{dev}/vendor")
        except _ShortFile:
            diagnoses.append(
                Diagnosis.of(PLUGIN_CRASH, entry.name, f"{path / 'vendor'} has fewer than 2 bytes: the plugin's readIDFromFile panics (slice out of range) and no GPU on the node is advertised")
            )
            every.append(func)
            continue
        except OSError as exc:
            if not _missing(exc):
                diagnoses.append(_unreadable(entry.name, path / "vendor", exc, f"{entry.name} is left out"))
            every.append(func)
            continue
        every.append(func)
        if func.vendor != NVIDIA_VENDOR_ID:
            continue
        nvidia.append(func)
        try:
            func.device = _read_id(root_path, f"{dev}/device")
        except _ShortFile:
            func.device = None
            device_problem = "short"
        except OSError as exc:
            func.device = None
            device_problem = "unreadable"
            device_reason = _reason(exc)
        else:
            device_problem = None
        if func.driver is None:
            func.status = "bound to no driver: skipped"
            continue
        if func.driver not in accepted:
            if func.driver == NVGRACE_VFIO:
                func.status = f"bound to {NVGRACE_VFIO}, which {profile_name} does not look for: skipped"
            else:
                func.status = f"bound to {func.driver}: skipped (the plugin needs {' or '.join(accepted)})"
            continue
        if func.iommu_group is None:
            func.status = "no IOMMU group: skipped"
            diagnoses.append(
                Diagnosis.of(NO_IOMMU_GROUP, entry.name, f"{entry.name} is bound to {func.driver} but has no iommu_group link (IOMMU off?); the plugin skips it")
            )
            continue
        func.counted = True
        first = group_first.get(func.iommu_group)
        if first is not None:
            func.status = f"in IOMMU group {func.iommu_group} with {first.address}: passed through with it"
            continue
        # The plugin reads `device` only for the first function of a group.
        if device_problem == "short":
            func.counted = False
            func.status = "device file shorter than 2 bytes: the plugin panics"
            diagnoses.append(
                Diagnosis.of(PLUGIN_CRASH, entry.name, f"{path / 'device'} has fewer than 2 bytes: the plugin's readIDFromFile panics")
            )
            continue
        if device_problem == "unreadable":
            func.counted = False
            func.status = "device file unreadable: skipped"
            diagnoses.append(
                Diagnosis.of(UNREADABLE_DEVICE_ID, entry.name, f"cannot read {path / 'device'} ({device_reason}): the plugin skips {entry.name}")
            )
            continue
        group_first[func.iommu_group] = func
        func.registers_group = True
        device_groups.setdefault(func.device, []).append(func.iommu_group)

    # -- names, one plugin per device id
    resources: list[AdvertisedResource] = []
    by_resource: dict[str, list[str]] = {}
    resolved: dict[str, object] = {}
    for device_id, groups in device_groups.items():
        if not is_indexed_id(device_id):
            diagnoses.append(
                Diagnosis.of(UNUSUAL_DEVICE_ID, device_id,
                    f"device file reads {device_id!r}, not 4 lower-case hex digits; the plugin looks it up verbatim "
                    f"and will most likely advertise nvidia.com/{device_id}",
                )
            )
            continue
        r = resolver.resolve(f"{NVIDIA_VENDOR_ID}:{device_id}", profile)
        resolved[device_id] = r
        if r.resource_name is not None:
            by_resource.setdefault(r.resource_name, []).append(device_id)
    for device_id, groups in device_groups.items():
        r = resolved.get(device_id)
        if r is None:
            continue
        subject = f"{NVIDIA_VENDOR_ID}:{device_id}"
        for w in r.warnings:
            if w.code == NAME_COLLISION:
                continue  # only collisions on this node matter; computed below
            diagnoses.append(Diagnosis.of(w.code, subject, w.message))
        if r.resource_name is None:
            continue
        twins = [d for d in by_resource[r.resource_name] if d != device_id]
        if twins:
            diagnoses.append(
                Diagnosis.of(
                    NAME_COLLISION,
                    subject,
                    f"{r.resource_name} is also the name of {', '.join(f'{NVIDIA_VENDOR_ID}:{t}' for t in twins)} on this node: "
                    f"both plugins use {r.socket_path} and only one of them is advertised",
                )
            )
        resources.append(
            AdvertisedResource(r.resource_name, "pci", subject, len(groups), tuple(groups), r.advertised and not twins)
        )
    for func in nvidia:
        if func.registers_group:
            r = resolved.get(func.device)
            func.resource_name = r.resource_name if r is not None else None
            if r is None:
                func.status = "unusual device id"
            elif r.resource_name is None:
                func.status = "not advertised: " + next((w.message for w in r.warnings if w.code == NOT_ADVERTISED), "")
            elif r.advertised:
                func.status = f"advertised as {r.resource_name}"
            else:
                func.status = f"{r.resource_name} is refused: never advertised"

    # -- vGPUs
    mdevs = _scan_mdevs(root_path, every, diagnoses, resources)
    for func in nvidia:
        if func.mdevs and not func.counted:
            func.status = (
                f"bound to {func.driver or 'no driver'}, parent of {len(func.mdevs)} vGPU(s): "
                "the vGPUs are advertised, not the GPU"
            )

    # -- node-level diagnoses
    _diagnose_drivers(nvidia, accepted, profile_name, diagnoses)
    _diagnose_groups(every, accepted, diagnoses)
    if any(d.code == PLUGIN_CRASH for d in diagnoses):
        # The plugin dies before it registers anything.
        resources = [
            AdvertisedResource(r.resource_name, r.kind, r.source, r.count, r.members, False) for r in resources
        ]

    return ScanResult(str(root_path), profile_name, accepted, nvidia, mdevs, resources, diagnoses)


def _numa(root: Path, dev: str, shown: Path, subject: str, diagnoses: list) -> int | None:
    text = _read_text(root, f"{dev}/numa_node", shown / "numa_node", subject, diagnoses)
    try:
        return int(text) if text is not None else None
    except ValueError:
        return None


def _scan_mdevs(root: Path, every, diagnoses, resources) -> list[MdevDevice]:
    mdev_dir = root / "sys" / "bus" / "mdev" / "devices"  # as shown in messages
    try:
        mdev_real = _directory(root, "sys/bus/mdev/devices")
        mdev_entries = _entries(root.joinpath(mdev_real))
    except OSError:
        return []
    by_address = {f.address: f for f in every}
    found: list[MdevDevice] = []
    types: dict[str, tuple[str, list[str]]] = {}  # the plugin's vGpuMap: name -> (type as read, uuids)
    for entry in mdev_entries:
        path = mdev_dir / entry.name
        if entry.is_dir(follow_symlinks=False):
            diagnoses.append(
                Diagnosis.of(NOT_A_DEVICE_LINK, entry.name, f"{path} is a directory, not a link to an mdev; the plugin skips it")
            )
            continue
        mdev = MdevDevice(entry.name, None, None, None)
        found.append(mdev)
        try:
            raw = _read_attr(root, f"{mdev_real}/{entry.name}/mdev_type/name").decode("utf-8", "surrogateescape")
        except OSError as exc:
            mdev.status = "no mdev_type/name: skipped"
            diagnoses.append(
                Diagnosis.of(MDEV_WITHOUT_TYPE, entry.name, f"cannot read {path / 'mdev_type' / 'name'} ({_reason(exc)}): the plugin skips this vGPU")
            )
            continue
        mdev.type_name = raw.strip("\n")
        try:
            # The entry itself, in the resolved directory: read, not followed.
            parts = rootfs.link_target(root, mdev_real, entry.name).split("/")
        except OSError:
            mdev.status = "not a link: skipped"
            diagnoses.append(
                Diagnosis.of(MDEV_PARENT_UNKNOWN, entry.name, f"{path} is not a link; the plugin cannot find the parent GPU and skips this vGPU")
            )
            continue
        if len(parts) < 2:
            mdev.status = "link target without '/': the plugin panics"
            diagnoses.append(
                Diagnosis.of(PLUGIN_CRASH, entry.name, f"{path} links to a target without '/': the plugin's readGpuIDForVgpu panics (index out of range)")
            )
            continue
        mdev.parent = parts[-2].strip("\n")
        mdev.resource_name = checks.mdev_resource_name(mdev.type_name)
        name = _name_part(mdev.resource_name)
        types.setdefault(name, (mdev.type_name, []))[1].append(entry.name)
        parent = by_address.get(mdev.parent)
        if parent is not None and parent.vendor == NVIDIA_VENDOR_ID:
            parent.mdevs.append(entry.name)
        else:
            diagnoses.append(
                Diagnosis.of(NON_NVIDIA_MDEV, entry.name,
                    f"the parent {mdev.parent or '?'} of vGPU {entry.name} is not an NVIDIA function; the plugin "
                    f"advertises it as {mdev.resource_name} all the same",
                )
            )
        refused = checks.name_warnings(name)
        mdev.status = f"{mdev.resource_name} is refused: never advertised" if refused else f"advertised as {mdev.resource_name}"
    for name, (type_name, uuids) in types.items():
        resource = checks.resource_name(name)
        warnings = checks.name_warnings(name)
        for w in warnings:
            diagnoses.append(Diagnosis.of(w.code, resource, w.message))
        resources.append(AdvertisedResource(resource, "mdev", type_name, len(uuids), tuple(uuids), not warnings))
    return found


def _diagnose_drivers(nvidia, accepted, profile_name, diagnoses) -> None:
    for func in nvidia:
        looks_like_gpu = func.is_gpu or (func.pci_class is None and func.driver in HOST_GPU_DRIVERS)
        if not looks_like_gpu or func.counted:
            continue
        if func.driver is None:
            diagnoses.append(
                Diagnosis.of(NO_DRIVER, func.address, f"GPU {func.address} is bound to no driver: the plugin advertises it only when bound to {' or '.join(accepted)}")
            )
        elif func.driver == NVGRACE_VFIO and NVGRACE_VFIO not in accepted:
            diagnoses.append(
                Diagnosis.of(UNSUPPORTED_VFIO_DRIVER, func.address, f"GPU {func.address} is bound to {NVGRACE_VFIO}, which {profile_name} does not recognise (plugin v1.5.0 and later do): nothing is advertised for it")
            )
        elif func.driver not in accepted and not func.mdevs:
            diagnoses.append(
                Diagnosis.of(HOST_DRIVER, func.address,
                    f"GPU {func.address} is bound to the host driver {func.driver}: nothing is advertised for it on a "
                    f"passthrough node (bind it to vfio-pci{', or use vGPU' if func.driver == 'nvidia' else ''})",
                )
            )


def _diagnose_groups(every, accepted, diagnoses) -> None:
    vfio = set(accepted) | {VFIO_PCI, NVGRACE_VFIO}
    groups: dict[str, list[PciFunction]] = {}
    for func in every:
        if func.iommu_group is not None:
            groups.setdefault(func.iommu_group, []).append(func)
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
            diagnoses.append(
                Diagnosis.of(IOMMU_GROUP_SPLIT, f"iommu_group {group}",
                    f"IOMMU group {group} mixes {vf} with {hs}: VFIO needs every function of a group on a VFIO "
                    "driver (or none), so a VM given this group fails to start; bind them all to vfio-pci",
                )
            )
