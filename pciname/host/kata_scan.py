"""What NVIDIA's Kata sandbox device plugin finds on a node, read from sysfs.

:func:`pciname.host.sysfs.scan` hands a Kata profile
(``sandbox-device-plugin@vX.Y.Z``, ``gpu-operator@vX.Y.Z+kata``, or
``--pciids F --algorithm go-nvlib``) to :func:`kata_scan`, which follows the
release's ``createIommuDeviceMap`` and ``createDevicePlugins``
(``pkg/device_plugin/device_plugin.go``). The plugin has no vGPU part: no
mdev is read.

**v0.0.1** (the profile's ``classes`` is None) walks ``/sys/bus/pci/devices``
as the KubeVirt plugin's older releases do (:func:`pciname.host.node.walk`:
``readIDFromFile`` drops two bytes and trims ``\\n``, a shorter file makes
it panic): every function whose ``vendor`` reads ``10de`` and whose
``driver`` link's last component is exactly ``vfio-pci``, whatever its class,
keyed by the last component of its ``iommu_group`` link (no link: skipped).
On a host with ``/dev/iommu`` the key is the function's
``vfio-dev/vfio<N>`` directory name instead (none: skipped). The first
function of a key reads its ``device`` file and adds the key to that device
id's list; later functions of the key only join it, so the first function
decides the group's device id, even an audio function's.

**v0.0.2 and later** take go-nvlib's ``nvpci.GetAllDevices``
(``vendor/github.com/NVIDIA/go-nvlib/pkg/nvpci/nvpci.go``): every entry of
the directory, by name, its ``vendor`` parsed with ``ParseUint(s, 0, 16)``
(white space trimmed); for vendor ``0x10de`` (and Mellanox ``0x15b3``) also
``class``, ``device``, ``numa_node`` (and from v0.0.5 ``subsystem_vendor``
and ``subsystem_device`` when present), the ``driver`` and ``iommu_group``
links resolved (absent: driver ``""``, group ``-1``), ``resource`` (lines of
exactly three fields), ``physfn`` or the SR-IOV counts. Any of these it
cannot read or parse fails the whole call: the plugin logs "Error
discovering NVIDIA devices" and advertises nothing (``discovery-failed``).
The devices are sorted by address read as a hex number. The plugin keeps a
device of class exactly 0x030000 or 0x030200 (``IsGPU``) or 0x068000
(``IsNVSwitch``) whose driver is exactly ``vfio-pci`` (so not
``nvgrace_gpu_vfio_pci``), keyed by its IOMMU group (``-1`` included) or,
on a host with ``/dev/iommu``, its ``vfio-dev`` number (``vfio`` stripped)
when it has one; the first kept device of a key adds it to its device id
(``%04x``) and later ones only join it. Mellanox functions are read (their
files can fail the call) but not listed: none has a GPU or NVSwitch class.

Naming, every release: one plugin per device id, ``nvidia.com/<name>`` on
socket ``sandbox-<name>.sock``, ``<name>`` the alias in force
(:func:`kata_device_name`: ``P_GPU_ALIAS``; from v0.0.2 ``NVSWITCH_ALIAS``
for a device id some kept function of class 0x068000 has, as read from
sysfs) or else the per-model name of the release's algorithm, the device id
when that is empty. Two device ids with one name are two plugins on one
socket (``shared-socket``). Go iterates its maps in random order; the report
lists device ids in discovery order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from pciname.errors import PciIdsError
from pciname.host import rootfs
from pciname.host.diagnoses import (
    DISCOVERY_FAILED,
    FUNCTION_NOT_ON_VFIO_PCI,
    GPU_NOT_ON_VFIO_PCI,
    GROUP_MINUS_ONE,
    NO_IOMMU_GROUP,
    NO_IOMMUFD_DEVICE,
    NOT_GPU_CLASS,
    PLUGIN_CRASH,
    SHARED_SOCKET,
    UNNAMED_DEVICE,
    UNREADABLE_DEVICE_ID,
    Diagnosis,
)
from pciname.host.gonvlib.nvpci import DiscoveryError, Files, Walk, quoted
from pciname.host.node import (
    VFIO_PCI,
    AdvertisedResource,
    PciEntry,
    PciFunction,
    ScanResult,
    diagnose_groups,
    walk,
)
from pciname.naming import checks, kata
from pciname.naming.gotext import go_int, go_uint, nvpci_address_key, trim_space
from pciname.pciids.ids import NVIDIA_VENDOR_ID

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileView

__all__ = ["kata_device_name", "kata_scan"]

_PCI_DEVICES = "sys/bus/pci/devices"
#: supportsIOMMUFD: os.Stat(rootPath + "/dev/iommu").
_IOMMU_DEVICE = "dev/iommu"
_NVIDIA = 0x10DE
#: nvpci.PCIMellanoxVendorID: go-nvlib reads these functions too.
_MELLANOX = 0x15B3
#: go-nvlib reads subsystem_vendor/subsystem_device, and the SR-IOV counts
#: with ParseUint(s, 0, 16), from the go-nvlib v0.0.5 vendors (before: base 10).
_SUBSYSTEM_SINCE = (0, 0, 5)
_ALL_CLASSES = kata.GPU_CLASSES + (kata.NVSWITCH_CLASS,)


# -- the name -------------------------------------------------------------------


def kata_device_name(view: ProfileView, device_id: str, *, nvswitch: bool) -> tuple[str, str]:
    """``(<name>, alias)`` the plugin registers for ``device_id``: the alias
    in force for its kind (``nvswitch``: a kept function of the id has class
    0x068000, as sysfs says) when there is one, else the per-model name of
    the profile's algorithm (go-nvlib: ``UNKNOWN_DEVICE`` for an id its
    parse does not hold), else the device id; ``alias`` is ``""`` when none
    is in force. Raises :class:`~pciname.naming.kata.GoNvlibPanic`."""
    alias = view.profile.alias_in_force(nvswitch=nvswitch)
    if alias:
        return alias, alias
    return view.catalog.name(view.profile.algorithm, device_id) or device_id, ""


# -- what the plugin takes ------------------------------------------------------


@dataclass(slots=True)
class _Taken:
    """The plugin's ``deviceMap`` (device id -> kubelet device IDs, in
    discovery order) and what the functions it read say."""

    functions: list[PciFunction] = field(default_factory=list)
    device_members: dict[str, list[str]] = field(default_factory=dict)
    nvswitch_ids: set[str] = field(default_factory=set)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    failed: bool = False  # the plugin advertises nothing (discovery failed, or it panics)


def _skip_for_driver(func: PciFunction, gpu_like: bool, release: str) -> Diagnosis:
    """A function the plugin skips because its driver is not exactly vfio-pci."""
    driver = func.driver or ""
    what = "no driver" if not driver else f"driver {driver}"
    func.status = f"{what}, not exactly {VFIO_PCI}: skipped"
    kind = ("NVSwitch" if func.pci_class == f"0x{kata.NVSWITCH_CLASS:06x}" else "GPU") if gpu_like else "function"
    log = f'the plugin logs: Skipping {kind} {func.address}: driver is "{driver}", not vfio-pci; '
    if gpu_like:
        return Diagnosis.of(
            GPU_NOT_ON_VFIO_PCI,
            func.address,
            f"{kind} {func.address} ({NVIDIA_VENDOR_ID}:{func.device}) has {what}: "
            + (log if release != "v0.0.1" else "")
            + f"{release} takes only functions bound to exactly {VFIO_PCI}, so nothing is advertised for it"
            + (f" ({kata.KATA_PLUGIN} does not look for {driver})" if driver.endswith("vfio_pci") else ""),
        )
    return Diagnosis.of(
        FUNCTION_NOT_ON_VFIO_PCI,
        func.address,
        f"{func.address} ({NVIDIA_VENDOR_ID}:{func.device}, class {func.pci_class or '?'}) has {what}: "
        f"{release} takes every NVIDIA function bound to {VFIO_PCI}, this one is not",
    )


def _join(taken: _Taken, keys: dict[str, PciFunction], key: str, func: PciFunction, device_id: str) -> None:
    """createIommuDeviceMap's last step: the first function of ``key``
    registers it under ``device_id``; a later one rides along."""
    func.counted = True
    first = keys.get(key)
    if first is not None:
        func.status = f"with {first.address} in kubelet device {key}: passed through with it"
        return
    keys[key] = func
    func.kubelet_id = key
    taken.device_members.setdefault(device_id, []).append(key)


def _take_v001(root: Path, entries: list[PciEntry], iommufd: bool, release: str) -> _Taken:
    """v0.0.1: the plugin's own walk (every class on vfio-pci)."""
    taken = _Taken()
    keys: dict[str, PciFunction] = {}
    for found in entries:
        taken.diagnoses += found.notes
        if any(d.code == PLUGIN_CRASH for d in found.notes):
            taken.failed = True
        func = found.function
        if func is None or func.vendor != NVIDIA_VENDOR_ID:
            continue
        taken.functions.append(func)
        if func.driver != VFIO_PCI:
            klass = _class_value(func.pci_class)
            taken.diagnoses.append(_skip_for_driver(func, klass is None or klass in _ALL_CLASSES, release))
            continue
        if func.iommu_group is None:
            func.status = "no IOMMU group: skipped"
            taken.diagnoses.append(
                Diagnosis.of(
                    NO_IOMMU_GROUP,
                    func.address,
                    f"{func.address} is bound to {VFIO_PCI} but has no iommu_group link (IOMMU off?); "
                    f"{release} skips it",
                )
            )
            continue
        key = func.iommu_group
        if iommufd:
            vfio = _vfio_dev(root, func.address)
            if vfio is None:
                func.status = "no vfio-dev device: skipped"
                taken.diagnoses.append(
                    Diagnosis.of(
                        NO_IOMMUFD_DEVICE,
                        func.address,
                        f"the node has /dev/iommu, so {release} keys devices by iommufd device, and "
                        f"{found.shown / 'vfio-dev'} holds no vfio* directory: it skips {func.address}",
                    )
                )
                continue
            key = vfio
        if key not in keys:
            # Only the first function of a key reads its device file.
            error = found.device_error
            if isinstance(error, rootfs.ShortFile):
                func.status = "device file shorter than 2 bytes: the plugin panics"
                taken.failed = True
                taken.diagnoses.append(
                    Diagnosis.of(
                        PLUGIN_CRASH,
                        func.address,
                        f"{found.shown / 'device'} has fewer than 2 bytes: {release}'s readIDFromFile panics "
                        "(slice out of range), so nothing on the node is advertised",
                    )
                )
                continue
            if isinstance(error, OSError):
                func.status = "device file unreadable: skipped"
                taken.diagnoses.append(
                    Diagnosis.of(
                        UNREADABLE_DEVICE_ID,
                        func.address,
                        f"cannot read {found.shown / 'device'} ({rootfs.reason(error)}): {release} skips "
                        f"{func.address}",
                    )
                )
                continue
        _join(taken, keys, key, func, func.device or "")
    return taken


def _vfio_dev(root: Path, address: str) -> str | None:
    """readVFIODev / getIOMMUFD: the first directory in ``vfio-dev`` whose
    name begins ``vfio`` (None: none, or no such directory)."""
    try:
        listed = rootfs.entries(root, f"{_PCI_DEVICES}/{address}/vfio-dev")
    except OSError:
        return None
    return next((e.name for e in listed if e.is_dir(follow_symlinks=False) and e.name.startswith("vfio")), None)


def _class_value(text: str | None) -> int | None:
    return go_uint(trim_space(text), 32) if text is not None else None


# -- v0.0.2 and later: go-nvlib's nvpci -----------------------------------------


class _NvpciError(DiscoveryError):
    """getNvidiaDeviceByPciBusID returns an error: GetAllDevices fails."""


@dataclass(slots=True)
class _Device:
    """One device as nvpci builds it (the fields the plugin reads)."""

    address: str
    vendor: int
    pci_class: int | None = None
    device: int | None = None
    numa: int | None = None
    driver: str = ""
    group: int = -1
    iommufd: str = ""


class _Nvpci(Files):
    """``nvpci.New()`` over ``ROOT/sys/bus/pci/devices``, for one release."""

    error = _NvpciError

    def __init__(self, root: Path, view: ProfileView) -> None:
        super().__init__(root)
        self.view = view
        release = view.profile.plugin_release
        version = tuple(int(p) for p in re.findall(r"\d+", release)[:3]) if release else _SUBSYSTEM_SINCE
        self.newer = version >= _SUBSYSTEM_SINCE
        self._db_checked = False
        self._walk: Walk[_Device] = Walk(self._own, _NvpciError)

    def device(self, address: str) -> _Device | None:
        """getNvidiaDeviceByPciBusID: None for another vendor; raises
        _NvpciError where go-nvlib returns an error (or panics)."""
        return self._walk.build(address)

    def _own(self, address: str) -> tuple[_Device | None, str | None]:
        """The device's own files, and the address its physfn link names."""
        dev = f"{_PCI_DEVICES}/{address}"
        vendor = self._uint(f"{dev}/vendor", "vendor", 16)
        if vendor not in (_NVIDIA, _MELLANOX):
            return None, None
        found = _Device(address, vendor)
        found.pci_class = self._uint(f"{dev}/class", "class", 32)
        found.device = self._uint(f"{dev}/device", "device", 16)
        numa = self._text(f"{dev}/numa_node", "numa_node")
        found.numa = go_int(numa)
        if found.numa is None:
            raise _NvpciError(f"unable to parse PCI numa_node {quoted(numa)}")
        if self.newer:
            for name in ("subsystem_vendor", "subsystem_device"):
                if self._exists(f"{dev}/{name}"):
                    self._uint(f"{dev}/{name}", name, 16)
        found.driver = self._link(f"{dev}/driver", "driver") or ""
        group = self._link(f"{dev}/iommu_group", "IOMMU group")
        if group is not None:
            value = go_int(trim_space(group))
            if value is None:
                raise _NvpciError(f"unable to convert iommu_group string to int64: {quoted(group)}")
            found.group = value
        found.iommufd = _vfio_dev(self.root, address) or ""
        self._resource(f"{dev}/resource")
        self._check_db()
        physfn = self._link(f"{dev}/physfn", "physfn", whole=True)
        if physfn is not None:
            return found, physfn.rpartition("/")[2]
        if self._exists(f"{dev}/sriov_totalvfs"):
            base = 0 if self.newer else 10
            self._uint(f"{dev}/sriov_totalvfs", "sriov_totalvfs", 16, base)
            self._uint(f"{dev}/sriov_numvfs", "sriov_numvfs", 16, base)
        return found, None

    def _exists(self, path: str) -> bool:
        try:
            rootfs.resolved(self.root, path)
        except OSError as exc:
            if rootfs.missing(exc):
                return False
            raise _NvpciError(f"unable to read {path.rpartition('/')[2]} ({rootfs.reason(exc)})") from None
        return True

    def _link(self, path: str, what: str, whole: bool = False) -> str | None:
        """filepath.EvalSymlinks: the last component (``whole``: the
        resolved path); None when it does not exist."""
        try:
            target = rootfs.resolved(self.root, path)
        except OSError as exc:
            if rootfs.missing(exc):
                return None
            raise _NvpciError(f"unable to detect {what} ({rootfs.reason(exc)})") from None
        return target if whole else target.rpartition("/")[2]

    def _resource(self, path: str) -> None:
        try:
            text = rootfs.read_attr(self.root, path).decode("utf-8", "surrogateescape")
        except OSError as exc:
            raise _NvpciError(f"unable to read PCI resource file ({rootfs.reason(exc)})") from None
        for number, line in enumerate(trim_space(text).split("\n")):
            if len(line.split(" ")) != 3:
                raise _NvpciError(f"line {number} of the resource file has not 3 entries ({quoted(line)})")

    def _check_db(self) -> None:
        """pciids.NewDB(), built for every NVIDIA or Mellanox device: a file
        its parser panics on brings the plugin down."""
        if not self._db_checked:
            try:
                self.view.catalog.names(self.view.profile.algorithm)
            except kata.GoNvlibPanic as exc:
                raise _NvpciError(f"go-nvlib's pci.ids parser panics: {exc}", crash=True) from None
            self._db_checked = True


def _get_all_devices(root: Path, view: ProfileView, taken: _Taken) -> list[_Device]:
    """GetAllDevices: the devices nvpci builds, sorted by address; its
    failure (the first entry it fails on) noted in ``taken``."""
    nvpci = _Nvpci(root, view)
    devices: list[_Device] = []
    listed = rootfs.entries(root, rootfs.directory(root, _PCI_DEVICES))
    for entry in listed:
        try:
            found = nvpci.device(entry.name)
        except _NvpciError as exc:
            if taken.failed:
                continue  # GetAllDevices returned at the first: the rest only for the report
            taken.failed = True
            shown = root / _PCI_DEVICES / entry.name
            code = PLUGIN_CRASH if exc.crash else DISCOVERY_FAILED
            consequence = (
                "the plugin crashes on start" if exc.crash else 'the plugin logs "Error discovering NVIDIA devices"'
            )
            taken.diagnoses.append(
                Diagnosis.of(
                    code,
                    entry.name,
                    f"go-nvlib cannot build the device {shown} ({exc}), so GetAllDevices fails: {consequence} and "
                    "advertises nothing on the node",
                )
            )
            continue
        if found is not None:
            devices.append(found)
    devices.sort(key=lambda d: nvpci_address_key(d.address))
    return devices


def _take_nvpci(root: Path, view: ProfileView, iommufd: bool, release: str) -> _Taken:
    """v0.0.2 and later: GetAllDevices, then the plugin's class, driver and key."""
    taken = _Taken()
    keys: dict[str, PciFunction] = {}
    for dev in _get_all_devices(root, view, taken):
        if dev.vendor != _NVIDIA:
            continue  # Mellanox: read, never a GPU or NVSwitch
        func = _function(dev)
        taken.functions.append(func)
        if taken.failed:
            func.status = "not advertised: go-nvlib's discovery fails"
            continue
        if dev.pci_class not in _ALL_CLASSES:
            func.status = f"class {func.pci_class}: no GPU or NVSwitch, skipped"
            taken.diagnoses.append(
                Diagnosis.of(
                    NOT_GPU_CLASS,
                    func.address,
                    f"{func.address} ({NVIDIA_VENDOR_ID}:{func.device}) has class {func.pci_class}: {release} takes "
                    "only classes 0x030000 and 0x030200 (GPUs) and 0x068000 (NVSwitches) and skips it",
                )
            )
            continue
        if dev.driver != VFIO_PCI:
            taken.diagnoses.append(_skip_for_driver(func, True, release))
            continue
        key = str(dev.group)
        if iommufd and dev.iommufd:
            key = dev.iommufd.removeprefix("vfio")
        elif dev.group == -1:
            taken.diagnoses.append(
                Diagnosis.of(
                    GROUP_MINUS_ONE,
                    func.address,
                    f"{func.address} is bound to {VFIO_PCI} without an iommu_group link: go-nvlib reads IOMMU group "
                    f"-1 and {release} advertises kubelet device -1, which no VM can be given (/dev/vfio/-1)",
                )
            )
        if dev.pci_class == kata.NVSWITCH_CLASS:
            taken.nvswitch_ids.add(func.device or "")
        _join(taken, keys, key, func, func.device or "")
    return taken


def _function(dev: _Device) -> PciFunction:
    """The report's row for a device nvpci built."""
    return PciFunction(
        dev.address,
        NVIDIA_VENDOR_ID,
        f"{dev.device:04x}" if dev.device is not None else None,
        f"0x{dev.pci_class:06x}" if dev.pci_class is not None else None,
        dev.driver or None,
        str(dev.group) if dev.group != -1 else None,
        dev.numa,
    )


# -- the scan -------------------------------------------------------------------


def _supports_iommufd(root: Path) -> bool | None:
    """supportsIOMMUFD: whether ``ROOT/dev/iommu`` exists (None: it cannot tell)."""
    try:
        rootfs.resolved(root, _IOMMU_DEVICE)
    except OSError as exc:
        return False if rootfs.missing(exc) else None
    return True


def kata_scan(root: Path, view: ProfileView) -> ScanResult:
    """What the Kata plugin of ``view``'s profile advertises on the node
    whose sysfs is under ``root``, and what is wrong. Raises PcinameError
    when ``root/sys/bus/pci/devices`` is missing."""
    profile = view.profile
    release = profile.plugin_release or f"{kata.KATA_PLUGIN} (as its newest release)"
    node = walk(root)  # first: no sysfs, no scan (PcinameError)
    iommufd = _supports_iommufd(root)
    diagnoses: list[Diagnosis] = []
    if iommufd is None:
        taken = _Taken(failed=True)
        diagnoses.append(
            Diagnosis.of(
                DISCOVERY_FAILED,
                str(root / _IOMMU_DEVICE),
                f'cannot tell whether {root / _IOMMU_DEVICE} exists: the plugin logs "Could not find if IOMMU FD '
                'is supported" and advertises nothing',
            )
        )
    elif profile.classes is None:
        taken = _take_v001(root, node.pci_entries, iommufd, release)
    else:
        taken = _take_nvpci(root, view, iommufd, release)
    diagnoses += taken.diagnoses
    resources = [] if taken.failed else _name(view, taken, diagnoses)
    diagnoses += diagnose_groups(node.functions, (VFIO_PCI,))
    return ScanResult(
        str(node.root),
        profile.name,
        (VFIO_PCI,),
        profile.discovery,
        taken.functions,
        [],
        resources,
        diagnoses,
        [],
        plugin=kata.KATA_PLUGIN,
        aliases=_aliases(view),
        classes=tuple(f"0x{c:06x}" for c in profile.classes) if profile.classes is not None else None,
        iommufd=iommufd,
    )


def _aliases(view: ProfileView) -> dict[str, str]:
    """The aliases in force (``""``: each model its own name)."""
    profile = view.profile
    found = {kata.PGPU_ALIAS_ENV: profile.alias_in_force(nvswitch=False)}
    if profile.nvswitch_unset is not None:
        found[kata.NVSWITCH_ALIAS_ENV] = profile.alias_in_force(nvswitch=True)
    return found


@dataclass(frozen=True, slots=True)
class _Plugin:
    """One plugin createDevicePlugins starts: a device id, its name and why."""

    device_id: str
    name: str
    alias: str  # "" when the name is the per-model one
    nvswitch: bool
    members: tuple[str, ...]


def _name(view: ProfileView, taken: _Taken, diagnoses: list[Diagnosis]) -> list[AdvertisedResource]:
    """One resource per device id (createDevicePlugins), with its problems
    and the status of each function that registers a device."""
    plugins: list[_Plugin] = []
    for device_id, members in taken.device_members.items():
        nvswitch = device_id in taken.nvswitch_ids
        try:
            name, alias = kata_device_name(view, device_id, nvswitch=nvswitch)
        except PciIdsError as exc:  # the v0.0.1 file cannot be read or parsed
            diagnoses.append(Diagnosis.of(PLUGIN_CRASH, f"{NVIDIA_VENDOR_ID}:{device_id}", str(exc)))
            return []
        plugins.append(_Plugin(device_id, name, alias, nvswitch, tuple(members)))
    by_name: dict[str, list[_Plugin]] = {}
    for plugin in plugins:
        by_name.setdefault(plugin.name, []).append(plugin)
    for name, sharing in by_name.items():
        if len(sharing) > 1:
            diagnoses.append(_shared_socket(view, name, sharing))
    resources: list[AdvertisedResource] = []
    works: dict[str, tuple[str, bool]] = {}
    for plugin in plugins:
        subject = f"{NVIDIA_VENDOR_ID}:{plugin.device_id}"
        resource = checks.resource_name(plugin.name)
        socket = kata.socket_path(plugin.name)
        warnings = checks.name_warnings(plugin.name, socket=socket)
        diagnoses += [Diagnosis.of(w.code, subject, w.message) for w in warnings]
        if not plugin.alias:
            unnamed = _unnamed(view, plugin)
            if unnamed is not None:
                diagnoses.append(Diagnosis.of(UNNAMED_DEVICE, subject, unnamed))
        shared = len(by_name[plugin.name]) > 1
        ok = not warnings and not shared
        works[plugin.device_id] = (resource, ok)
        resources.append(AdvertisedResource(resource, "pci", subject, len(plugin.members), plugin.members, ok, socket))
    _statuses(taken.functions, works, {name for name, sharing in by_name.items() if len(sharing) > 1})
    return resources


def _statuses(functions: list[PciFunction], works: dict[str, tuple[str, bool]], shared: set[str]) -> None:
    """The resource and status of each function that registers a device."""
    for func in functions:
        if func.kubelet_id is None or func.device not in works:
            continue
        resource, ok = works[func.device]
        func.resource_name = resource
        if ok:
            func.status = f"advertised as {resource} (device {func.kubelet_id})"
        elif resource.partition("/")[2] in shared:
            func.status = f"{resource}, on a socket another model's plugin shares: served only part of the time"
        else:
            func.status = f"{resource} is refused: never advertised"


def _unnamed(view: ProfileView, plugin: _Plugin) -> str | None:
    """Why a per-model name is not a model's name (None: it is)."""
    device = f"{NVIDIA_VENDOR_ID}:{plugin.device_id}"
    if plugin.name == kata.UNKNOWN_DEVICE and plugin.device_id != kata.UNKNOWN_DEVICE:
        return (
            f"go-nvlib's {view.file_label()} does not name {device}: the plugin advertises it as "
            f"nvidia.com/{kata.UNKNOWN_DEVICE}, as every model it cannot name"
        )
    if plugin.name == plugin.device_id:
        return (
            f"{view.file_label()} gives no name for {device}; the plugin falls back to the device id: "
            f"nvidia.com/{plugin.device_id}"
        )
    return None


def _model(view: ProfileView, device_id: str) -> str:
    name = view.catalog.nvidia_devices.get(device_id)
    return f"{NVIDIA_VENDOR_ID}:{device_id} ({name})" if name else f"{NVIDIA_VENDOR_ID}:{device_id}"


def _shared_socket(view: ProfileView, name: str, sharing: list[_Plugin]) -> Diagnosis:
    """Two or more plugins on one socket: who, why, and the fix."""
    profile = view.profile
    listed = [_model(view, p.device_id) for p in sharing]
    models = f"{', '.join(listed[:-1])} and {listed[-1]} are {'both' if len(listed) == 2 else 'all'}"
    first = sharing[0]
    if first.alias:
        nvswitch = first.nvswitch and profile.nvswitch_unset is not None
        variable = kata.NVSWITCH_ALIAS_ENV if nvswitch else kata.PGPU_ALIAS_ENV
        given = profile.nvswitch_alias if nvswitch else profile.alias
        why = f"{variable} is {first.alias!r} ({'unset: the release default' if given is None else 'as set'})"
        own = []
        for p in sharing:
            per_model = view.catalog.name(profile.algorithm, p.device_id) or p.device_id
            own.append(f"nvidia.com/{per_model}")
        distinct = len(set(own)) == len(own)
        fix = (
            f'{variable}="" gives each model its own name ({", ".join(own)}), or keep one model per node'
            if distinct
            else f'keep one model per node ({variable}="" would still name them alike: {", ".join(own)})'
        )
    else:
        why = f"{view.file_label()} gives them one per-model name"
        fix = "keep one of the models per node"
    return Diagnosis.of(
        SHARED_SOCKET,
        checks.resource_name(name),
        f"{models} advertised as nvidia.com/{name} ({why}): their plugins share the socket "
        f"{kata.socket_path(name)}, and each plugin's start removes the other's socket, so kubelet sees the "
        "devices of one model at a time, never both (which one depends on Go's map order and the restart race); "
        f"{fix}",
    )
