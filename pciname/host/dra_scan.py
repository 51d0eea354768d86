"""What NVIDIA's DRA driver for GPUs publishes for vfio GPUs in a node's
ResourceSlice, read from the node's sysfs as the release's own discovery does.

The facts of each release are ``data/dra/releases.json``
(:func:`pciname.dra.facts.for_driver`); the code followed is
``cmd/gpu-kubelet-plugin/nvlib.go`` of NVIDIA/k8s-dra-driver-gpu:
``enumerateAllPossibleDevices`` calls the vfio enumeration only with the
feature gate ``PassthroughSupport`` (default off).

* Before v25.12.0 there is no vfio code: nothing is published.
* **v25.12.0** (``enumerateGpuPciDevices``) looks each GPU's parent up in a
  map it never fills (its own new ``perGPUAllocatable``, not its argument),
  so every GPU is skipped: nothing is published (``dra-no-vfio-devices``).
* **v0.4.0** (``enumerateGpuVfioDevices``) publishes a device for every GPU
  that go-nvlib's ``nvpci.GetGPUs()`` finds, whatever its driver, except a
  GPU NVML sees with MIG devices (sysfs does not tell: labelled).

``GetGPUs`` (go-nvlib's vendored ``pkg/nvpci/nvpci.go``) lists
``/sys/bus/pci/devices`` by name; for vendor ``0x10de`` or Mellanox
``0x15b3`` it reads ``class``, ``device`` (``ParseUint(s, 0, …)``), the
``driver`` and ``iommu_group`` links, ``numa_node`` (``ParseInt``),
``resource`` (lines of exactly three fields) and ``physfn`` (a VF: its PF
read too) or ``sriov_totalvfs``/``sriov_numvfs`` (base 10); any of these it
cannot read or parse fails the whole call and the driver publishes nothing
(``dra-discovery-failed``). Sorted by address as a hex number, it keeps the
functions of class exactly 0x030000 or 0x030200 that are no VF; a GPU's
index there is its device name ``gpu-vfio-<index>``.

Each device's attributes are ``getVfioDeviceInfo`` and
``VfioDeviceInfo.GetDevice`` of the release, in its slice's spelling (the
driver's own attributes unqualified, the standard ones
``resource.kubernetes.io/…``): ``type`` ``vfio``; ``vendorID`` and
``deviceID`` ``0x%04x``; ``productName`` go-nvlib's device name (the same
one :func:`pciname.dra.claims.predicted_device` gives, from go-nvlib's
embedded pci.ids: the container's own file, if the image has one, is not
known: labelled); ``uuid`` the UUID v5 (DNS namespace) of the address;
``numa``; from v0.4.0 ``iommuFDEnabled`` (``/dev/iommu`` exists);
``pciBusID`` (v0.4.0: an address that is no lower-case ``DDDD:BB:DD.F``
fails discovery); ``pcieRoot`` the first component under ``/sys/devices``
of the device link (omitted when the link is not of that shape); capacity
``addressableMemory``, the 64-bit BARs summed and rounded up to a power of
two (``GetTotalAddressableMemory(true)``), as a BinarySI quantity.
"""

from __future__ import annotations

import posixpath
import re
import uuid
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from pciname.dra.claims import predicted_device
from pciname.dra.facts import Combination
from pciname.host import rootfs
from pciname.host.diagnoses import (
    DRA_CANNOT_PREPARE,
    DRA_DISCOVERY_FAILED,
    DRA_GPU_ON_NVIDIA,
    DRA_NO_PCIE_ROOT,
    DRA_NO_VFIO_DEVICES,
    DRA_NOT_A_GPU,
    ERROR,
    Diagnosis,
)
from pciname.host.gonvlib.nvpci import DiscoveryError, Files, Walk, quoted
from pciname.host.node import VFIO_PCI, PciFunction, walk
from pciname.naming.gotext import go_int, go_parse_uint, nvpci_address_key, trim_space
from pciname.pciids.ids import NVIDIA_VENDOR_ID

__all__ = ["ATTRIBUTE_KINDS", "DraScanResult", "SliceDevice", "binary_si", "dra_scan"]

_PCI_DEVICES = "sys/bus/pci/devices"
#: checkIommuFDEnabled: os.Stat(hostRoot + "/dev/iommu").
_IOMMU_DEVICE = "dev/iommu"
_NVIDIA = 0x10DE
_MELLANOX = 0x15B3
#: nvpci IsGPU: class exactly PCIVgaControllerClass or PCI3dControllerClass.
_GPU_CLASSES = (0x030000, 0x030200)
_NVIDIA_DRIVER = "nvidia"
#: deviceattribute verifyPCIBDFFormat (Go's ``$``: the end of the text).
_BDF = re.compile(r"[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-9a-f]")
_STANDARD = "resource.kubernetes.io/"
_U64 = (1 << 64) - 1
#: DeviceAttribute's fields by the Python type of a value.
ATTRIBUTE_KINDS = {str: "string", int: "int", bool: "bool"}


# -- go-nvlib's nvpci, as the driver vendors it --------------------------------------


class _Failed(DiscoveryError):
    """A call that fails the driver's discovery (``crash``: Go's stack overflows)."""


@dataclass(slots=True)
class _Pci:
    """One device as ``getNvidiaDeviceByPciBusID`` builds it (what the driver reads)."""

    address: str
    vendor: int
    pci_class: int = 0
    device: int = 0
    numa: int = -1
    driver: str = ""
    group: int = -1
    is_vf: bool = False
    resources: dict[int, tuple[int, int, int]] = field(default_factory=dict)


class _Nvpci(Files):
    """``nvpci.New()`` over ``ROOT/sys/bus/pci/devices``."""

    error = _Failed

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self._walk: Walk[_Pci] = Walk(self._own, _Failed)

    def device(self, address: str) -> _Pci | None:
        """getNvidiaDeviceByPciBusID: None for another vendor; raises _Failed."""
        return self._walk.build(address)

    def _link(self, path: str, what: str) -> str | None:
        """filepath.EvalSymlinks: the resolved path (None: it does not exist)."""
        try:
            return rootfs.resolved(self.root, path)
        except OSError as exc:
            if rootfs.missing(exc):
                return None
            raise _Failed(f"unable to detect {what} ({rootfs.reason(exc)})") from None

    def _own(self, address: str) -> tuple[_Pci | None, str | None]:
        """The device's own files, and the address its physfn link names."""
        dev = f"{_PCI_DEVICES}/{address}"
        vendor = self._uint(f"{dev}/vendor", "vendor", 16)
        if vendor not in (_NVIDIA, _MELLANOX):
            return None, None
        found = _Pci(
            address, vendor, self._uint(f"{dev}/class", "class", 32), self._uint(f"{dev}/device", "device", 16)
        )
        found.driver = (self._link(f"{dev}/driver", "driver") or "").rpartition("/")[2]
        group = self._link(f"{dev}/iommu_group", "IOMMU group")
        if group is not None:
            value = go_int(trim_space(group.rpartition("/")[2]))
            if value is None:
                raise _Failed(f"unable to convert iommu_group string to int64: {quoted(group.rpartition('/')[2])}")
            found.group = value
        numa = go_int(self._text(f"{dev}/numa_node", "numa_node"))
        if numa is None:
            raise _Failed("unable to convert NUMA node string to int64")
        found.numa = numa
        found.resources = self._resources(f"{dev}/resource")
        return found, self._sriov(dev, found)

    def _sriov(self, dev: str, found: _Pci) -> str | None:
        """The address ``physfn`` names (a VF: its PF is built too), or the PF's SR-IOV counts read."""
        physfn = self._link(f"{dev}/physfn", "physfn")
        if physfn is not None:
            found.is_vf = True
            return physfn.rpartition("/")[2]
        if self._link(f"{dev}/sriov_totalvfs", "sriov_totalvfs") is not None:
            self._uint(f"{dev}/sriov_totalvfs", "sriov_totalvfs", 16, 10)
            self._uint(f"{dev}/sriov_numvfs", "sriov_numvfs", 16, 10)
        return None

    def _resources(self, path: str) -> dict[int, tuple[int, int, int]]:
        """The ``resource`` file's regions of non-zero size. go-nvlib drops
        ParseUint's error and keeps its value: 0 for a syntax error, the
        largest uint64 for a number out of range."""
        text = self._text(path, "resource file")
        regions: dict[int, tuple[int, int, int]] = {}
        for number, line in enumerate(text.split("\n")):
            values = line.split(" ")
            if len(values) != 3:
                raise _Failed(f"line {number} of the resource file has not 3 entries ({quoted(line)})")
            start, end, flags = (go_parse_uint(v, 64)[0] for v in values)
            if (end - start) & _U64:
                regions[number] = (start, end, flags)
        return regions


def _addressable_memory(regions: dict[int, tuple[int, int, int]]) -> int:
    """``GetTotalAddressableMemory(true)``'s 64-bit size: the first six BARs
    of 64-bit memory type (flags & 6 == 4), summed, rounded up to a power of 2."""
    total = 0
    for count, key in enumerate(sorted(regions)):
        if key >= 6 or count == 6:
            break
        start, end, flags = regions[key]
        if flags & 0x06 == 0x04:
            total = (total + ((end - start) & _U64) + 1) & _U64
    return 0 if total == 0 else 1 << (total - 1).bit_length() & _U64


def binary_si(value: int) -> str:
    """``resource.NewQuantity(value, BinarySI).String()``: the largest
    power-of-1024 suffix dividing it exactly (below 1024 in magnitude:
    DecimalSI, the largest power-of-1000 suffix)."""
    if value == 0:
        return "0"
    base, suffixes = (1000, ("", "k", "M", "G", "T", "P", "E")) if abs(value) < 1024 else (1024, BINARY)
    number, exponent = value, 0
    while number % base == 0 and exponent < len(suffixes) - 1:
        number, exponent = number // base, exponent + 1
    return f"{number}{suffixes[exponent]}"


BINARY = ("", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei")


# -- the result ------------------------------------------------------------------------


@dataclass(frozen=True)
class SliceDevice:
    """One device of the ResourceSlice, as the driver writes it: its
    ``attributes`` by the slice's keys (the driver's own unqualified) with
    Go's value, and ``capacity`` as quantities."""

    name: str
    address: str
    device: str  # "10de:2236"
    attributes: dict[str, str | int | bool]
    capacity: dict[str, str]

    def slice_entry(self) -> dict[str, Any]:
        """The device as ``ResourceSlice.spec.devices[]`` holds it."""
        return {
            "name": self.name,
            "attributes": {k: {ATTRIBUTE_KINDS[type(v)]: v} for k, v in self.attributes.items()},
            "capacity": {k: {"value": v} for k, v in self.capacity.items()},
        }


@dataclass(frozen=True)
class DraScanResult:
    """What the DRA driver ``release`` publishes for vfio GPUs on the node."""

    root: str
    release: str
    driver: str  # the DRA driver's name, gpu.nvidia.com
    gate: str | None  # the feature gate the vfio code needs (None: no vfio code)
    device_class: str | None
    functions: list[PciFunction]
    devices: list[SliceDevice]
    diagnoses: list[Diagnosis]
    inferred: tuple[str, ...]

    @property
    def errors(self) -> list[Diagnosis]:
        return [d for d in self.diagnoses if d.severity == ERROR]

    def to_dict(self) -> dict[str, Any]:
        return {
            "root": self.root,
            "dra_driver": self.release,
            "driver": self.driver,
            "feature_gate": self.gate,
            "device_class": self.device_class,
            "functions": [f.to_dict() for f in self.functions],
            "devices": [d.slice_entry() | {"pciAddress": d.address, "pciDevice": d.device} for d in self.devices],
            "diagnoses": [d.to_dict() for d in self.diagnoses],
            "inferred": list(self.inferred),
        }


# -- the scan --------------------------------------------------------------------------


@dataclass(slots=True)
class _Found:
    """GetGPUs' answer, and what it read."""

    functions: list[tuple[PciFunction, _Pci]] = field(default_factory=list)
    diagnoses: list[Diagnosis] = field(default_factory=list)
    failed: bool = False


def _get_all_devices(root: Path) -> _Found:
    """GetAllDevices: the NVIDIA devices, sorted by address; its failure noted."""
    nvpci = _Nvpci(root)
    found = _Found()
    built: list[_Pci] = []
    for entry in rootfs.entries(root, rootfs.directory(root, _PCI_DEVICES)):
        try:
            dev = nvpci.device(entry.name)
        except _Failed as exc:
            if not found.failed:
                found.failed = True
                found.diagnoses.append(_failed(root / _PCI_DEVICES / entry.name, entry.name, exc))
            continue
        if dev is not None and dev.vendor == _NVIDIA:
            built.append(dev)
    built.sort(key=lambda d: nvpci_address_key(d.address))
    found.functions = [(_function(d), d) for d in built]
    return found


def _failed(shown: Path | str, subject: str, exc: _Failed) -> Diagnosis:
    how = "Go's stack overflows and the plugin crashes" if exc.crash else "its discovery fails"
    return Diagnosis.of(
        DRA_DISCOVERY_FAILED,
        subject,
        f"go-nvlib cannot build the device {shown} ({exc}), so GetGPUs fails: {how} and the driver publishes no "
        "ResourceSlice on the node",
    )


def _function(dev: _Pci) -> PciFunction:
    return PciFunction(
        dev.address,
        NVIDIA_VENDOR_ID,
        f"{dev.device:04x}",
        f"0x{dev.pci_class:06x}",
        dev.driver or None,
        str(dev.group) if dev.group != -1 else None,
        dev.numa,
    )


def _iommufd(root: Path) -> bool | None:
    """checkIommuFDEnabled: whether ``ROOT/dev/iommu`` exists (None: it cannot tell)."""
    try:
        rootfs.resolved(root, _IOMMU_DEVICE)
    except OSError as exc:
        return False if rootfs.missing(exc) else None
    return True


def _pcie_root(root: Path, address: str) -> str | None:
    """resolvePCIeRoot: the first component under ``devices`` of the link
    ``bus/pci/devices/<address>`` (read, not followed; None: not of that shape)."""
    sys_bus = f"bus/pci/devices/{address}"
    try:
        target = rootfs.link_target(root, rootfs.directory(root, _PCI_DEVICES), address)
    except OSError:
        return None
    if not target.startswith("/"):
        target = posixpath.normpath(f"{posixpath.dirname(sys_bus)}/{target}")  # filepath.Clean
    if not target.startswith("devices/pci") or target.rpartition("/")[2] != address:
        return None
    return target.removeprefix("devices/").split("/")[0]


def dra_scan(root: Path, combination: Combination) -> DraScanResult:
    """The vfio devices the driver release of ``combination`` publishes on
    the node whose sysfs is under ``root`` (with its feature gate on), the
    functions it read and what is wrong. Raises PcinameError when
    ``root/sys/bus/pci/devices`` is missing."""
    facts = combination.driver_facts
    vfio = facts["vfio"]
    node = walk(root)  # first: no sysfs, no scan (PcinameError)
    found = _get_all_devices(root)
    result = DraScanResult(
        str(node.root),
        combination.driver,
        facts["driver_name"],
        vfio.get("gate"),
        vfio["device_class"]["name"] if vfio.get("code") else None,
        [f for f, _ in found.functions],
        [],
        list(found.diagnoses),
        (),
    )
    if not vfio["publishes"]:
        return _publishes_none(result, vfio, found)
    return _publish(root, combination, found, result)


def _publishes_none(result: DraScanResult, vfio: dict[str, Any], found: _Found) -> DraScanResult:
    """A release that publishes no vfio device: why, on every GPU it would read."""
    bug = (vfio.get("enumeration") or {}).get("bug")
    why = f"a bug: {bug}" if bug else str(vfio.get("note", "no vfio code"))
    result.diagnoses.append(
        Diagnosis.of(
            DRA_NO_VFIO_DEVICES,
            result.release,
            f"DRA driver {result.release} publishes no vfio device on any node, "
            f"{'even with ' + result.gate + '=true' if result.gate else 'with any feature gates'}: {why}",
        )
    )
    for func, dev in found.functions:
        func.status = "not published: " + ("a GPU, but the release publishes none" if _is_gpu(dev) else "no GPU")
    return result


def _is_gpu(dev: _Pci) -> bool:
    return dev.pci_class in _GPU_CLASSES and not dev.is_vf


def _publish(root: Path, combination: Combination, found: _Found, result: DraScanResult) -> DraScanResult:
    """enumerateGpuVfioDevices over GetGPUs, and getVfioDeviceInfo of each."""
    names = {a["name"].removeprefix(f"{result.driver}/") for a in combination.vfio["attributes"]}
    iommufd = _iommufd(root) if "iommuFDEnabled" in names else False
    if iommufd is None:
        found.failed = True
        result.diagnoses.append(
            Diagnosis.of(
                DRA_DISCOVERY_FAILED,
                str(root / _IOMMU_DEVICE),
                f"cannot tell whether {root / _IOMMU_DEVICE} exists: checkIommuFDEnabled fails, so the driver "
                "publishes no ResourceSlice on the node",
            )
        )
    devices: list[SliceDevice] = []
    gpus = [(func, dev) for func, dev in found.functions if _is_gpu(dev)]
    for func, dev in found.functions:
        if not _is_gpu(dev):
            _not_a_gpu(func, dev, result)
    for index, (func, dev) in enumerate(gpus):
        if found.failed:
            func.status = "not published: the driver's discovery fails"
            continue
        device = _device(root, combination, names, index, dev, bool(iommufd), result)
        if device is None:
            found.failed = True
            func.status = "not published: its address fails the driver's discovery"
            continue
        devices.append(device)
        func.status = _status(func, dev, device, result)
    if found.failed:
        devices.clear()
    result.devices.extend(devices)
    inferred = predicted_device(devices[0].device.partition(":")[2], combination).inferred if devices else ()
    if "unreleased" in combination.driver_facts:  # main: said in every output that rests on it
        inferred = (f"DRA driver {combination.driver} is {combination.certainty}", *inferred)
    return _with_inferred(result, inferred)


def _with_inferred(result: DraScanResult, inferred: tuple[str, ...]) -> DraScanResult:
    nvml = (
        "the driver also initialises NVML (the NVIDIA driver's libraries under its driver root) before it "
        "publishes anything, and skips a GPU NVML shows with MIG devices: sysfs tells neither",
    )
    return replace(result, inferred=(*inferred, *nvml) if result.devices else ())


def _not_a_gpu(func: PciFunction, dev: _Pci, result: DraScanResult) -> None:
    what = "an SR-IOV VF" if dev.is_vf else f"class {func.pci_class}"
    func.status = f"{what}: no GPU, not published"
    result.diagnoses.append(
        Diagnosis.of(
            DRA_NOT_A_GPU,
            func.address,
            f"{func.address} ({NVIDIA_VENDOR_ID}:{func.device}) is {what}: go-nvlib's GetGPUs takes only physical "
            f"functions of class 0x030000 or 0x030200, so DRA driver {result.release} publishes nothing for it",
        )
    )


def _status(func: PciFunction, dev: _Pci, device: SliceDevice, result: DraScanResult) -> str:
    """The function's row, and what a claim for it meets (its driver binding)."""
    published = f"published as {device.name}"
    if dev.driver == VFIO_PCI:
        return published
    if dev.driver == _NVIDIA_DRIVER:
        result.diagnoses.append(
            Diagnosis.of(
                DRA_GPU_ON_NVIDIA,
                func.address,
                f"{func.address} is bound to nvidia: DRA driver {result.release} publishes it as {device.name} unless "
                "NVML shows MIG devices on it (sysfs does not tell), and preparing a claim for it unbinds it from "
                "nvidia and binds it to vfio-pci (the GPU must be free of other clients)",
            )
        )
        return f"{published} (on nvidia: rebound to vfio-pci when a claim is prepared)"
    what = f"driver {dev.driver}" if dev.driver else "no driver"
    result.diagnoses.append(
        Diagnosis.of(
            DRA_CANNOT_PREPARE,
            func.address,
            f"{func.address} has {what}: DRA driver {result.release} publishes it as {device.name}, but preparing a "
            f'claim for it fails (VfioPciManager.Configure: bound to "{dev.driver}", expected vfio-pci or nvidia), so '
            "a VM given it does not start",
        )
    )
    return f"{published}, but a claim for it fails ({what})"


def _device(
    root: Path,
    combination: Combination,
    names: set[str],
    index: int,
    dev: _Pci,
    iommufd: bool,
    result: DraScanResult,
) -> SliceDevice | None:
    """getVfioDeviceInfo + GetDevice for one GPU (None: its address fails discovery)."""
    strict = "iommuFDEnabled" in names  # v0.4.0: GetPCIBusIDAttribute's error fails discovery
    if strict and not _BDF.fullmatch(dev.address):
        result.diagnoses.append(
            Diagnosis.of(
                DRA_DISCOVERY_FAILED,
                dev.address,
                f"{dev.address} is no lower-case DDDD:BB:DD.F PCI address: GetPCIBusIDAttribute fails, so "
                f"DRA driver {result.release}'s discovery fails and it publishes no ResourceSlice on the node",
            )
        )
        return None
    predicted = predicted_device(f"{dev.device:04x}", combination)
    values: dict[str, str | int | bool] = {
        "type": "vfio",
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_DNS, dev.address)),
        "deviceID": f"0x{dev.device:04x}",
        "vendorID": f"0x{dev.vendor:04x}",
        "numa": dev.numa,
        "productName": str(predicted.attributes["productName"]),
        "iommuFDEnabled": iommufd,
        f"{_STANDARD}pciBusID": dev.address,
        f"{_STANDARD}numaNode": dev.numa,  # main: addNumaNodeAttribute, omitted when negative
    }
    attributes = {k: v for k, v in values.items() if k in names and (k != f"{_STANDARD}numaNode" or dev.numa >= 0)}
    pcie_root = _pcie_root(root, dev.address) if f"{_STANDARD}pcieRoot" in names else None
    if pcie_root is not None:
        attributes[f"{_STANDARD}pcieRoot"] = pcie_root
    elif f"{_STANDARD}pcieRoot" in names:
        result.diagnoses.append(
            Diagnosis.of(
                DRA_NO_PCIE_ROOT,
                dev.address,
                f"{root / _PCI_DEVICES / dev.address} is no link into sys/devices/pci*/.../{dev.address}: the "
                f"driver publishes {combination.vfio['device_name']['format'] % index} without {_STANDARD}pcieRoot",
            )
        )
    memory = _addressable_memory(dev.resources)
    memory -= (1 << 64) if memory >= 1 << 63 else 0  # int64(memoryBytes)
    capacity = {c["name"].removeprefix(f"{result.driver}/"): binary_si(memory) for c in combination.vfio["capacity"]}
    name = combination.vfio["device_name"]["format"] % index
    return SliceDevice(name, dev.address, f"{NVIDIA_VENDOR_ID}:{dev.device:04x}", attributes, capacity)
