"""The host scan's diagnoses: every stable code (the host doctor's too), its severity and what it means
(:data:`CODES`, mirrored by the table in README.md), and the :class:`Diagnosis` record the scan reports."""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from pciname.base.files import MAX_SYSFS_ATTR_BYTES
from pciname.host.doctor.codes import (
    CONTAINER_NEEDS_HOST_DRIVER as CONTAINER_NEEDS_HOST_DRIVER,
    DOCTOR_CODES,
    HOST_DRIVER_PREINSTALLED as HOST_DRIVER_PREINSTALLED,
    IOMMU_OFF as IOMMU_OFF,
    NOUVEAU_BOUND as NOUVEAU_BOUND,
    OPEN_MODULES_REQUIRED as OPEN_MODULES_REQUIRED,
    PREINSTALLED_LABEL as PREINSTALLED_LABEL,
    VARIANT_LABEL_MISMATCH as VARIANT_LABEL_MISMATCH,
    VFIO_NOT_LOADED as VFIO_NOT_LOADED,
    VGPU_MANAGER_MISSING as VGPU_MANAGER_MISSING,
)
from pciname.naming import checks

ERROR, WARNING, INFO = "error", "warning", "info"

# -- what the plugin reads
NOT_A_DEVICE_LINK = "not-a-device-link"
UNREADABLE_FILE = "unreadable-file"
PLUGIN_CRASH = "plugin-crash"
UNREADABLE_DEVICE_ID = "unreadable-device-id"
UNUSUAL_DEVICE_ID = "unusual-device-id"
# -- what the plugin takes
NO_IOMMU_GROUP = "no-iommu-group"
HOST_DRIVER = "host-driver"
UNSUPPORTED_VFIO_DRIVER = "unsupported-vfio-driver"
NO_DRIVER = "no-driver"
IOMMU_GROUP_SPLIT = "iommu-group-split"
# -- the names (the resolver's codes, from pciname.naming.checks)
INVALID_RESOURCE_NAME = checks.INVALID_RESOURCE_NAME
SOCKET_PATH_TOO_LONG = checks.SOCKET_PATH_TOO_LONG
NOT_ADVERTISED = checks.NOT_ADVERTISED
NAME_COLLISION = checks.NAME_COLLISION
UNNAMED_DEVICE = checks.UNNAMED_DEVICE
# -- vGPUs
MDEV_WITHOUT_TYPE = "mdev-without-type"
MDEV_PARENT_UNKNOWN = "mdev-parent-unknown"
NON_NVIDIA_MDEV = "non-nvidia-mdev"
MDEV_TYPE_LOOKED_UP = "mdev-type-looked-up"
MDEV_TYPE_LEAK = "mdev-type-leak"
SRIOV_VGPU_TYPES_MIXED = "sriov-vgpu-types-mixed"
# -- the Kata sandbox device plugin (pciname.host.kata_scan)
DISCOVERY_FAILED = "discovery-failed"
NOT_GPU_CLASS = "not-gpu-class"
GPU_NOT_ON_VFIO_PCI = "gpu-not-on-vfio-pci"
FUNCTION_NOT_ON_VFIO_PCI = "function-not-on-vfio-pci"
GROUP_MINUS_ONE = "iommu-group-minus-one"
NO_IOMMUFD_DEVICE = "no-iommufd-device"
SHARED_SOCKET = "shared-socket"
# -- NVIDIA's DRA driver for GPUs (pciname.host.dra_scan)
DRA_NO_VFIO_DEVICES = "dra-no-vfio-devices"
DRA_DISCOVERY_FAILED = "dra-discovery-failed"
DRA_NOT_A_GPU = "dra-not-a-gpu"
DRA_GPU_ON_NVIDIA = "dra-gpu-on-nvidia"
DRA_CANNOT_PREPARE = "dra-cannot-prepare"
DRA_NO_PCIE_ROOT = "dra-no-pcie-root"


class Code(NamedTuple):
    """How severe a diagnosis code is and what it means, in one line."""

    severity: str
    meaning: str


#: Every code the scan reports, in the order README.md lists them.
CODES: dict[str, Code] = {
    NOT_A_DEVICE_LINK: Code(WARNING, "a directory where the plugin expects a link to a device: it skips it"),
    UNREADABLE_FILE: Code(
        WARNING,
        "a vendor, class or numa_node file, or a device link, that exists but is not read "
        f"(not a regular file, over {MAX_SYSFS_ATTR_BYTES // 1024} KiB, a symlink loop, no permission)",
    ),
    PLUGIN_CRASH: Code(
        ERROR,
        "a vendor file, or the device file of a function the plugin keeps (from v1.5.0: every one), shorter "
        "than 2 bytes, a vGPU link to a target without '/', or (v1.0.x) a vGPU type name without a space: "
        "the plugin panics and nothing on the node is advertised",
    ),
    UNREADABLE_DEVICE_ID: Code(
        ERROR,
        "the device file of a function the plugin takes cannot be read: it skips the function",
    ),
    UNUSUAL_DEVICE_ID: Code(
        WARNING,
        "a device file that is not 4 lower-case hex digits (upper case, a trailing CR or blank): the plugin "
        "looks it up verbatim and advertises what that gives",
    ),
    NO_IOMMU_GROUP: Code(
        ERROR,
        "an NVIDIA function bound to a VFIO driver without an iommu_group link (IOMMU off): the plugin skips it",
    ),
    HOST_DRIVER: Code(
        ERROR,
        "an NVIDIA GPU bound to a host driver (nvidia, nouveau, ...) with no vGPUs on it: "
        "nothing is advertised for passthrough",
    ),
    UNSUPPORTED_VFIO_DRIVER: Code(
        ERROR,
        "a GPU bound to nvgrace_gpu_vfio_pci, which the profile's plugin (before v1.5.0) does not look for",
    ),
    NO_DRIVER: Code(WARNING, "an NVIDIA GPU bound to no driver: nothing is advertised for it"),
    IOMMU_GROUP_SPLIT: Code(
        ERROR,
        "one IOMMU group mixes functions on VFIO drivers with functions on host drivers: "
        "a VM given the group does not start",
    ),
    INVALID_RESOURCE_NAME: Code(
        ERROR,
        "kubelet refuses the resource name (not a qualified name): it is never advertised",
    ),
    SOCKET_PATH_TOO_LONG: Code(
        ERROR,
        f"the plugin's socket path for the name is over {checks.SOCKET_PATH_MAX_BYTES} bytes: it is never advertised",
    ),
    NOT_ADVERTISED: Code(
        ERROR,
        "the profile's plugin advertises nothing for the device (v1.0.0 skips unnamed devices)",
    ),
    NAME_COLLISION: Code(ERROR, "two device ids on this node get one name: only one of them is advertised"),
    UNNAMED_DEVICE: Code(WARNING, "pci.ids has no name for the device: it is advertised under the bare device id"),
    MDEV_WITHOUT_TYPE: Code(ERROR, "a vGPU whose mdev_type/name cannot be read: the plugin skips it"),
    MDEV_PARENT_UNKNOWN: Code(
        ERROR,
        "a vGPU entry that is not a link, so its parent GPU is unknown: the plugin skips it",
    ),
    NON_NVIDIA_MDEV: Code(
        WARNING,
        "a vGPU whose parent is not an NVIDIA function: the plugin advertises it under nvidia.com/ all the same",
    ),
    MDEV_TYPE_LOOKED_UP: Code(
        WARNING,
        "a vGPU type string (empty or blank-only) that the release's name algorithm, run on it as on a "
        "device id, turns into a pci.ids name: the plugin advertises the vGPUs under that name",
    ),
    MDEV_TYPE_LEAK: Code(
        WARNING,
        "v1.1.1 and earlier, more than one vGPU type: each type's plugin also lists the vGPUs of the types "
        "started before it, in Go's random map order, so a VM may get a vGPU of another type",
    ),
    SRIOV_VGPU_TYPES_MIXED: Code(
        WARNING,
        "SR-IOV VFs of one device id carry different vGPU types (nvidia/current_vgpu_type): they share the PF's "
        "device id, so KubeVirt's own plugin puts them in one resource and a VM may get any of the types",
    ),
    DISCOVERY_FAILED: Code(
        ERROR,
        "Kata plugin: its discovery fails, so it advertises nothing: v0.0.2 and later, go-nvlib's GetAllDevices "
        "cannot read or parse a file it needs (the vendor file of any function; class, device, numa_node, "
        "resource, driver, iommu_group or SR-IOV files of an NVIDIA or Mellanox one); any release, it cannot "
        "tell whether /dev/iommu exists",
    ),
    NOT_GPU_CLASS: Code(
        INFO,
        "Kata plugin v0.0.2 and later: an NVIDIA function whose class is not 0x030000, 0x030200 (GPU) or 0x068000 "
        "(NVSwitch), e.g. a GPU's audio function: the plugin skips it",
    ),
    GPU_NOT_ON_VFIO_PCI: Code(
        ERROR,
        "Kata plugin: an NVIDIA GPU or NVSwitch (by class) bound to a driver other than exactly vfio-pci (a host "
        "driver, nvgrace_gpu_vfio_pci, none): the plugin skips it",
    ),
    FUNCTION_NOT_ON_VFIO_PCI: Code(
        INFO,
        "Kata plugin v0.0.1: an NVIDIA function of another class (audio, USB, ...) not bound to vfio-pci: "
        "the plugin, which takes every class on vfio-pci, skips it",
    ),
    GROUP_MINUS_ONE: Code(
        ERROR,
        "Kata plugin v0.0.2 and later: a function on vfio-pci without an iommu_group link: go-nvlib reads IOMMU "
        "group -1 and the plugin advertises kubelet device -1 (/dev/vfio/-1 does not exist), every such function "
        "in that one device",
    ),
    NO_IOMMUFD_DEVICE: Code(
        ERROR,
        "Kata plugin v0.0.1 on a host with /dev/iommu: a function on vfio-pci without a vfio-dev/vfio* "
        "directory: the plugin skips it",
    ),
    SHARED_SOCKET: Code(
        ERROR,
        "Kata plugin: two device ids on the node get one name (one alias for every model, or one per-model name): "
        "their plugins share one socket and remove each other's, so kubelet sees one model's devices at a time",
    ),
    DRA_NO_VFIO_DEVICES: Code(
        ERROR,
        "DRA driver: the release publishes no vfio device on any node: it has no vfio code (before v25.12.0), or "
        "(v25.12.0) a bug finds no parent for any GPU and skips every one",
    ),
    DRA_DISCOVERY_FAILED: Code(
        ERROR,
        "DRA driver: its discovery fails, so it publishes no ResourceSlice: go-nvlib's GetGPUs cannot read or "
        "parse a file it needs (the vendor file of any function; class, device, numa_node, resource, driver, "
        "iommu_group or SR-IOV files of an NVIDIA or Mellanox one), it cannot tell whether /dev/iommu exists, "
        "or (v0.4.0 and later) a GPU's address is no lower-case DDDD:BB:DD.F",
    ),
    DRA_NOT_A_GPU: Code(
        INFO,
        "DRA driver: an NVIDIA function that is no GPU physical function (class not exactly 0x030000 or "
        "0x030200, e.g. a GPU's audio function, or an SR-IOV VF): GetGPUs skips it",
    ),
    DRA_GPU_ON_NVIDIA: Code(
        WARNING,
        "DRA driver v0.4.0 and later: a GPU bound to nvidia: published as a vfio device unless NVML shows MIG "
        "devices on it (which sysfs does not tell); preparing a claim rebinds it to vfio-pci",
    ),
    DRA_CANNOT_PREPARE: Code(
        ERROR,
        "DRA driver v0.4.0 and later: a GPU bound to neither vfio-pci nor nvidia (another driver, none): "
        "published, but preparing a claim for it fails, so a VM given it does not start",
    ),
    DRA_NO_PCIE_ROOT: Code(
        WARNING,
        "DRA driver: a GPU whose /sys/bus/pci/devices link does not point into /sys/devices/pci*/.../<address>: "
        "published without resource.kubernetes.io/pcieRoot",
    ),
}
CODES.update({code: Code(*entry) for code, entry in DOCTOR_CODES.items()})  # the host doctor's (its own module)


def severity_of(code: str) -> str:
    """The severity of ``code``; a code the scan does not list (a
    resolver's own) is an error."""
    known = CODES.get(code)
    return known.severity if known is not None else ERROR


@dataclass(frozen=True, slots=True)
class Diagnosis:
    """One thing wrong on the node, with a stable :data:`code <CODES>`."""

    code: str
    severity: str  # "error", "warning" or "info"
    subject: str  # a PCI address, an mdev uuid, a group or a resource name
    message: str

    @classmethod
    def of(cls, code: str, subject: str, message: str) -> Diagnosis:
        """A diagnosis with the severity :data:`CODES` gives ``code``."""
        return cls(code, severity_of(code), subject, message)

    def to_dict(self) -> dict[str, str]:
        return {"code": self.code, "severity": self.severity, "subject": self.subject, "message": self.message}
