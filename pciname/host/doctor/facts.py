"""What the host doctor reads of a node, under a root (``/`` on the node,
or a copy of its files): the GPUs (NVIDIA functions of class 0x03xxxx:
driver, IOMMU group, vGPU types offered), the IOMMU groups, the loaded
kernel modules, the kernel command line, the CPU vendor and the NVIDIA
driver's version file. Every read goes through :mod:`pciname.host.rootfs`
(inside the root, bounded); a file that is absent reads as absent.

What each upstream reads, and so what a test tree holds:

* ``sys/module/<name>/refcnt``: a loaded module (k8s-driver-manager v0.9.1,
  ``cmd/driver-manager/main.go`` ``isDriverLoaded``, ``isNouveauLoaded``);
  ``proc/modules``, the same list as ``lsmod`` reads it; a
  ``sys/module/<name>`` directory without ``refcnt`` is built in.
* ``proc/driver/nvidia/version``: the ``nvidia`` module's ``NVRM version:``
  line (NVIDIA/open-gpu-kernel-modules 1739a20efc4acb55fd1dc53dcc66057b70c2613c,
  ``kernel-open/nvidia/nv-procfs.c`` ``nv_procfs_read_version``); the open
  modules' line says "Open Kernel Module".
* ``usr/bin/nvidia-smi``: the path k8s-driver-manager v0.8.1 (and the GPU
  Operator's validator v25.10.1, ``cmd/nvidia-validator/main.go``
  ``VGPUManager.runValidation``) look for on the host.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from pciname.host import rootfs
from pciname.host.node import walk
from pciname.host.offered import offered_types

#: The modules the doctor asks about.
NVIDIA, NOUVEAU, VFIO_PCI, VFIO_TYPE1, VGPU_VFIO = (
    "nvidia",
    "nouveau",
    "vfio_pci",
    "vfio_iommu_type1",
    "nvidia_vgpu_vfio",
)
_PROC_MODULES = "proc/modules"
_VERSION = "proc/driver/nvidia/version"
_NVIDIA_SMI = "usr/bin/nvidia-smi"
_GROUPS = "sys/kernel/iommu_groups"
#: The bytes of /proc/cpuinfo read: its first processor's lines come first.
CPUINFO_HEAD = 16 * 1024


@dataclass(frozen=True)
class Gpu:
    """An NVIDIA display-class function (a PF; an SR-IOV VF counts towards its PF)."""

    address: str
    device: str | None  # "10de:2bb5"
    driver: str | None
    iommu_group: str | None
    vgpu_types: int = 0  # vGPU types it or its VFs offer (mdev or SR-IOV)


@dataclass(frozen=True)
class HostFacts:
    """The node as the doctor reads it."""

    root: str
    gpus: tuple[Gpu, ...]
    iommu_groups: int
    loaded: frozenset[str]  # modules with a refcnt or in proc/modules
    builtin: frozenset[str]  # sys/module entries without refcnt
    cmdline: str | None
    cpu_vendor: str | None  # "GenuineIntel", "AuthenticAMD", ...
    nvidia_version: str | None  # the NVRM line
    nvidia_smi: bool
    group_drivers: dict[str, tuple[tuple[str, str | None], ...]] = field(default_factory=dict)

    def has(self, module: str) -> bool:
        """Loaded or built in."""
        return module in self.loaded or module in self.builtin

    @property
    def open_modules(self) -> bool | None:
        """Whether the loaded nvidia module is the open one (None: none loaded)."""
        if self.nvidia_version is None:
            return None
        return "Open Kernel Module" in self.nvidia_version


def read_host(root: str | os.PathLike[str]) -> HostFacts:
    """The node under ``root``; a PcinameError when it holds no
    ``sys/bus/pci/devices``."""
    base = Path(root)
    node = walk(base)
    offered: dict[str, int] = {}
    for t in offered_types(base):
        owner = t.physfn or t.address
        offered[owner] = offered.get(owner, 0) + 1
    gpus = tuple(
        Gpu(f.address, f"10de:{f.device}" if f.device else None, f.driver, f.iommu_group, offered.get(f.address, 0))
        for f in node.nvidia
        if (f.pci_class or "").startswith("0x03") and not _is_vf(base, f.address)
    )
    groups: dict[str, list[tuple[str, str | None]]] = {}
    for f in node.functions:
        if f.iommu_group is not None:
            groups.setdefault(f.iommu_group, []).append((f.address, f.driver))
    loaded, builtin = _modules(base)
    return HostFacts(
        root=str(root),
        gpus=gpus,
        iommu_groups=len(_names(base, _GROUPS)),
        loaded=loaded,
        builtin=builtin,
        cmdline=_text(base, "proc/cmdline"),
        cpu_vendor=_cpu_vendor(base),
        nvidia_version=_first_line(_text(base, _VERSION)),
        nvidia_smi=_exists(base, _NVIDIA_SMI),
        group_drivers={g: tuple(m) for g, m in groups.items()},
    )


def _is_vf(base: Path, address: str) -> bool:
    return _exists(base, f"sys/bus/pci/devices/{address}/physfn")


def _names(base: Path, path: str) -> list[str]:
    try:
        return [e.name for e in rootfs.entries(base, path)]
    except OSError:
        return []


def _exists(base: Path, path: str) -> bool:
    """Whether ``path`` exists inside the root (its directories resolved there, a last link not followed)."""
    try:
        parts = rootfs.components(base, path, follow_last=False)
    except OSError:
        return False
    return os.path.lexists(base.joinpath(*parts))


def _text(base: Path, path: str) -> str | None:
    try:
        return rootfs.read_text(base, path)
    except OSError:
        return None


def _first_line(text: str | None) -> str | None:
    return text.splitlines()[0].strip() if text else None


def _modules(base: Path) -> tuple[frozenset[str], frozenset[str]]:
    """(loaded, built in): ``sys/module`` entries with and without ``refcnt``,
    and the first field of each ``proc/modules`` line as loaded too."""
    loaded: set[str] = set()
    builtin: set[str] = set()
    for name in _names(base, "sys/module"):
        (loaded if _exists(base, f"sys/module/{name}/refcnt") else builtin).add(name)
    for line in (_text(base, _PROC_MODULES) or "").splitlines():
        if line.split():
            loaded.add(line.split()[0])
    return frozenset(loaded), frozenset(builtin - loaded)


def _cpu_vendor(base: Path) -> str | None:
    """The first ``vendor_id`` of ``proc/cpuinfo`` (x86; none on arm64)."""
    try:
        head = rootfs.read_head(base, "proc/cpuinfo", CPUINFO_HEAD)
    except OSError:
        return None
    for line in head.decode("utf-8", "replace").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "vendor_id":
            return value.strip()
    return None
