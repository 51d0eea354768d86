"""Nodes for the host doctor's tests: sysfs-shaped trees (tests/sysfs_tree.py)
with what each upstream reads beside ``sys/bus/pci``:

* ``sys/module/<name>/refcnt`` for a loaded module: k8s-driver-manager v0.9.1
  (be979ef08699fac8a83f2ffb85fa1ff3d606ba20) ``cmd/driver-manager/main.go``
  ``isDriverLoaded`` / ``isNouveauLoaded`` / ``unloadDriver`` stat exactly
  these; a built-in module has its ``sys/module/<name>`` without ``refcnt``;
* ``proc/modules`` (lsmod's source), ``proc/cmdline``, ``proc/cpuinfo``'s
  ``vendor_id``;
* ``proc/driver/nvidia/version``: ``NVRM version: %s`` (NVIDIA/open-gpu-kernel-modules
  1739a20efc4acb55fd1dc53dcc66057b70c2613c ``kernel-open/nvidia/nv-procfs.c``);
* ``usr/bin/nvidia-smi``: k8s-driver-manager v0.8.1 (bbce97e5d6dc) ``driver-manager``
  ``_host_driver`` tests this path before it runs ``chroot /host nvidia-smi``.
"""

from __future__ import annotations

from pathlib import Path

from pciname.host.doctor.facts import read_host
from pciname.host.doctor.fleet import node_line
from pciname.host.doctor.rules import examine
from tests.sysfs_tree import SysfsTree

PROPRIETARY = "NVRM version: NVIDIA UNIX x86_64 Kernel Module  570.133.20  Tue Mar 25 05:10:39 UTC 2025\n"
OPEN = (
    "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.133.20  Release Build  (dvs-builder@U16-I3-B03-4-3)\n"
)
INTEL = "processor\t: 0\nvendor_id\t: GenuineIntel\ncpu family\t: 6\n"
AMD = "processor\t: 0\nvendor_id\t: AuthenticAMD\ncpu family\t: 25\n"


class HostTree(SysfsTree):
    """A node: sysfs, loaded modules, proc files, the host's nvidia-smi."""

    def __init__(self, root: Path, *, cpuinfo: str = INTEL, cmdline: str = "BOOT_IMAGE=/vmlinuz ro") -> None:
        super().__init__(root)
        (self.root / "proc" / "driver").mkdir(parents=True)
        (self.sys / "module").mkdir()
        (self.root / "proc" / "cpuinfo").write_text(cpuinfo)
        (self.root / "proc" / "cmdline").write_text(cmdline + "\n")
        (self.root / "proc" / "modules").write_text("")

    def load(self, *modules: str, builtin: bool = False) -> None:
        """Modules loaded (``refcnt`` and a ``proc/modules`` line) or built in (a bare ``sys/module`` dir)."""
        for name in modules:
            (self.sys / "module" / name).mkdir(exist_ok=True)
            if not builtin:
                (self.sys / "module" / name / "refcnt").write_text("1\n")
                with (self.root / "proc" / "modules").open("a") as f:
                    f.write(f"{name} 16384 1 - Live 0x0000000000000000\n")

    def nvidia_driver(self, version: str = PROPRIETARY, *, smi: bool = True) -> None:
        """The nvidia module loaded with its version file, and the host's nvidia-smi."""
        self.load("nvidia")
        (self.root / "proc" / "driver" / "nvidia").mkdir(exist_ok=True)
        (self.root / "proc" / "driver" / "nvidia" / "version").write_text(version + "GCC version:  gcc 12\n")
        if smi:
            (self.root / "usr" / "bin").mkdir(parents=True, exist_ok=True)
            (self.root / "usr" / "bin" / "nvidia-smi").write_text("#!/bin/sh\n")

    def vfio(self) -> None:
        self.load("vfio", "vfio_pci", "vfio_pci_core", "vfio_iommu_type1")


def passthrough_node(root: Path) -> HostTree:
    """A healthy passthrough node: GPU and its audio function on vfio-pci in group 12, IOMMU on."""
    t = HostTree(root, cmdline="BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt")
    t.vfio()
    t.add_function("0000:3b:00.0", device="0x2236\n", pci_class="0x030200\n", driver="vfio-pci", iommu_group="12")
    t.add_function("0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", driver="vfio-pci", iommu_group="12")
    return t


def container_node(root: Path, *, device: str = "0x2236\n", version: str = PROPRIETARY) -> HostTree:
    """A healthy container node: the GPU on the host's nvidia."""
    t = HostTree(root, cmdline="BOOT_IMAGE=/vmlinuz ro intel_iommu=on")
    t.nvidia_driver(version)
    t.add_function("0000:3b:00.0", device=device, pci_class="0x030200\n", driver="nvidia", iommu_group="12")
    return t


def vgpu_node(root: Path) -> HostTree:
    """A healthy vGPU node (mdev): the vGPU manager loaded, the T4 offering a type."""
    t = HostTree(root, cmdline="BOOT_IMAGE=/vmlinuz ro intel_iommu=on")
    t.nvidia_driver()
    t.load("nvidia_vgpu_vfio", "mdev")
    t.add_function("0000:3b:00.0", device="0x1eb8\n", pci_class="0x030200\n", driver="nvidia", iommu_group="12")
    t.add_mdev_type("0000:3b:00.0", "nvidia-222", "GRID T4-1Q\n")
    return t


def preinstalled_node(root: Path) -> HostTree:
    """cozystack/cozystack#2763, #2764: a passthrough node whose host driver answers nvidia-smi."""
    t = HostTree(root, cmdline="BOOT_IMAGE=/vmlinuz ro intel_iommu=on iommu=pt")
    t.vfio()
    t.nvidia_driver()
    t.add_function("0000:3b:00.0", device="0x2236\n", pci_class="0x030200\n", driver="nvidia", iommu_group="12")
    return t


def iommu_off_node(root: Path) -> HostTree:
    """An Intel passthrough node booted without intel_iommu=on, nouveau on the GPU (NVIDIA/cloud-native-docs#241)."""
    t = HostTree(root, cmdline="BOOT_IMAGE=/vmlinuz ro quiet")
    t.vfio()
    t.load("nouveau")
    t.add_function("0000:3b:00.0", device="0x2236\n", pci_class="0x030200\n", driver="nouveau", iommu_group=None)
    return t


def blackwell_proprietary_node(root: Path) -> HostTree:
    """cozystack/cozystack#3563: 10de:2bb5 on the proprietary modules, the container variant."""
    return container_node(root, device="0x2bb5\n")


#: The nodes docs/why-no-gpu.md replays, by the name its transcripts give.
REPLAYED = {
    "passthrough": passthrough_node,
    "preinstalled": preinstalled_node,
    "iommu-off": iommu_off_node,
    "blackwell-proprietary": blackwell_proprietary_node,
    "container": container_node,
}


PASSTHROUGH_LABELS = {
    "nvidia.com/gpu.workload.config": "vm-passthrough",
    "nvidia.com/gpu.deploy.vfio-manager": "true",
    "nvidia.com/gpu.deploy.sandbox-device-plugin": "true",
}


def doctor_codes_seen(tmp_path) -> list[tuple[str, str]]:
    """(code, severity) of every finding the doctor gives on its broken nodes,
    for every variant and the fleet (tests/host/test_host_sysfs.py's registry test)."""
    t = HostTree(tmp_path / "a", cmdline="ro quiet")
    t.load("nouveau", "vfio_pci")
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="nouveau", iommu_group=None)
    preinstalled_node(tmp_path / "b")
    container_node(tmp_path / "c", device="0x2bb5\n").load("nvidia_vgpu_vfio")
    seen = []
    for node in ("a", "b", "c"):
        checkup = examine(read_host(tmp_path / node))
        labels = {**PASSTHROUGH_LABELS, "nvidia.com/gpu.deploy.driver": "pre-installed"}
        for f in (*checkup.findings, *node_line(node, labels, checkup).findings):
            seen.append((f.diagnosis.code, f.diagnosis.severity))
    return seen
