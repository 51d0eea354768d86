"""Build sysfs-shaped trees for host scan tests: real directories, files and
relative symlinks laid out as the kernel does.

    ROOT/sys/devices/pci0000:00/0000:3b:00.0/{vendor,device,class,numa_node}
    ROOT/sys/devices/pci0000:00/0000:3b:00.0/driver -> ../../../bus/pci/drivers/vfio-pci
    ROOT/sys/devices/pci0000:00/0000:3b:00.0/iommu_group -> ../../../kernel/iommu_groups/12
    ROOT/sys/bus/pci/devices/0000:3b:00.0 -> ../../../devices/pci0000:00/0000:3b:00.0
    ROOT/sys/kernel/iommu_groups/12/devices/0000:3b:00.0 -> ../../../../devices/pci0000:00/0000:3b:00.0
    ROOT/sys/devices/pci0000:00/0000:3b:00.0/mdev_supported_types/nvidia-222/name
    ROOT/sys/devices/pci0000:00/0000:3b:00.0/<uuid>/mdev_type -> ../mdev_supported_types/nvidia-222
    ROOT/sys/bus/mdev/devices/<uuid> -> ../../../devices/pci0000:00/0000:3b:00.0/<uuid>
"""

from __future__ import annotations

import os
from pathlib import Path

_MISSING = object()


class SysfsTree:
    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.sys = self.root / "sys"
        (self.sys / "bus" / "pci" / "devices").mkdir(parents=True, exist_ok=True)
        (self.sys / "bus" / "pci" / "drivers").mkdir(parents=True, exist_ok=True)
        (self.sys / "kernel" / "iommu_groups").mkdir(parents=True, exist_ok=True)

    def device_dir(self, address: str, bus: str = "pci0000:00") -> Path:
        return self.sys / "devices" / bus / address

    def add_function(
        self,
        address: str,
        device: str = "0x2236\n",
        vendor: str = "0x10de\n",
        pci_class: str | None = "0x030200\n",
        driver: str | None = "vfio-pci",
        iommu_group: str | None = "12",
        numa_node: str | None = "0\n",
        bus: str = "pci0000:00",
    ) -> Path:
        """A PCI function; file contents are written verbatim (``None``: no file/link)."""
        path = self.device_dir(address, bus)
        path.mkdir(parents=True)
        for name, content in (("vendor", vendor), ("device", device), ("class", pci_class), ("numa_node", numa_node)):
            if content is not None:
                (path / name).write_bytes(content.encode() if isinstance(content, str) else content)
        if driver is not None:
            driver_dir = self.sys / "bus" / "pci" / "drivers" / driver
            driver_dir.mkdir(parents=True, exist_ok=True)
            os.symlink(f"../../../bus/pci/drivers/{driver}", path / "driver")
            link = driver_dir / address
            if not link.exists():
                os.symlink(f"../../../../devices/{bus}/{address}", link)
        if iommu_group is not None:
            group_dir = self.sys / "kernel" / "iommu_groups" / iommu_group / "devices"
            group_dir.mkdir(parents=True, exist_ok=True)
            os.symlink(f"../../../kernel/iommu_groups/{iommu_group}", path / "iommu_group")
            os.symlink(f"../../../../devices/{bus}/{address}", group_dir / address)
        os.symlink(f"../../../devices/{bus}/{address}", self.sys / "bus" / "pci" / "devices" / address)
        return path

    def add_mdev(
        self,
        uuid: str,
        parent: str,
        type_name: str | bytes | None = "GRID T4-1Q\n",
        type_id: str = "nvidia-222",
        bus: str = "pci0000:00",
    ) -> Path:
        """A vGPU of type ``type_id`` (whose ``name`` file holds ``type_name``) on ``parent``."""
        parent_dir = self.device_dir(parent, bus)
        type_dir = parent_dir / "mdev_supported_types" / type_id
        type_dir.mkdir(parents=True, exist_ok=True)
        if type_name is not None:
            (type_dir / "name").write_bytes(type_name.encode() if isinstance(type_name, str) else type_name)
        mdev_dir = parent_dir / uuid
        mdev_dir.mkdir()
        os.symlink(f"../mdev_supported_types/{type_id}", mdev_dir / "mdev_type")
        devices = self.sys / "bus" / "mdev" / "devices"
        devices.mkdir(parents=True, exist_ok=True)
        os.symlink(f"../../../devices/{bus}/{parent}/{uuid}", devices / uuid)
        return mdev_dir

    def add_mdev_type(
        self,
        parent: str,
        type_id: str,
        name: str | bytes,
        available: str = "1\n",
        device_api: str = "vfio-pci\n",
        bus: str = "pci0000:00",
    ) -> Path:
        """A vGPU type ``parent`` offers: ``mdev_supported_types/<type_id>/{name,available_instances,device_api}``."""
        type_dir = self.device_dir(parent, bus) / "mdev_supported_types" / type_id
        type_dir.mkdir(parents=True, exist_ok=True)
        for file, content in (("name", name), ("available_instances", available), ("device_api", device_api)):
            (type_dir / file).write_bytes(content.encode() if isinstance(content, str) else content)
        return type_dir

    def add_vf(
        self,
        address: str,
        physfn: str,
        creatable: str | None,
        current: str = "0\n",
        device: str = "0x26b9\n",
        driver: str | None = "nvidia",
        iommu_group: str = "40",
        bus: str = "pci0000:00",
    ) -> Path:
        """An SR-IOV virtual function of ``physfn`` (its ``physfn`` link, and
        the PF's ``virtfnN``), with ``nvidia/creatable_vgpu_types`` and
        ``nvidia/current_vgpu_type`` as the vGPU 17+ driver writes them."""
        path = self.add_function(address, device=device, driver=driver, iommu_group=iommu_group, bus=bus)
        os.symlink(f"../{physfn}", path / "physfn")
        pf = self.device_dir(physfn, bus)
        index = len(list(pf.glob("virtfn*")))
        os.symlink(f"../{address}", pf / f"virtfn{index}")
        nvidia = path / "nvidia"
        nvidia.mkdir()
        if creatable is not None:
            (nvidia / "creatable_vgpu_types").write_text(creatable)
        (nvidia / "current_vgpu_type").write_text(current)
        return path
