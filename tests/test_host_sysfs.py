"""Host scan over real sysfs-shaped trees (directories, files, relative symlinks)."""

from __future__ import annotations

import os

import pytest

from pciname.errors import PcinameError
from pciname.host.sysfs import NVGRACE_VFIO, VFIO_PCI, scan, vfio_drivers

from .sysfs_tree import SysfsTree


@pytest.fixture
def tree(tmp_path):
    return SysfsTree(tmp_path / "node")


def codes(result):
    return sorted(d.code for d in result.diagnoses)


def resources(result):
    return {r.resource_name: (r.source, r.count, r.works) for r in result.resources}


def test_tree_is_sysfs_shaped(tree):
    tree.add_function("0000:3b:00.0")
    link = tree.sys / "bus/pci/devices/0000:3b:00.0"
    assert link.is_symlink() and os.readlink(link) == "../../../devices/pci0000:00/0000:3b:00.0"
    assert os.readlink(link / "driver") == "../../../bus/pci/drivers/vfio-pci"
    assert (link / "driver").resolve() == (tree.sys / "bus/pci/drivers/vfio-pci").resolve()
    assert (link / "iommu_group").resolve().name == "12"
    assert (link / "vendor").read_text() == "0x10de\n"


def test_passthrough_node_two_a10_with_audio_functions(tree):
    # Each A10 with its audio function in one IOMMU group, all on vfio-pci.
    for bus, group, numa in (("3b", "12", "0"), ("af", "87", "1")):
        tree.add_function(f"0000:{bus}:00.0", device="0x2236\n", iommu_group=group, numa_node=numa + "\n")
        tree.add_function(f"0000:{bus}:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group=group, numa_node=numa + "\n")
    # A non-NVIDIA device elsewhere, on its host driver.
    tree.add_function("0000:00:1f.2", vendor="0x8086\n", device="0xa182\n", pci_class="0x010601\n", driver="ahci", iommu_group="5")
    result = scan(tree.root)
    assert result.diagnoses == []
    assert resources(result) == {"nvidia.com/GA102GL_A10": ("10de:2236", 2, True)}
    by_address = {f.address: f for f in result.functions}
    assert list(by_address) == ["0000:3b:00.0", "0000:3b:00.1", "0000:af:00.0", "0000:af:00.1"]
    gpu, audio = by_address["0000:3b:00.0"], by_address["0000:3b:00.1"]
    assert (gpu.device, gpu.driver, gpu.iommu_group, gpu.numa_node) == ("2236", "vfio-pci", "12", 0)
    assert gpu.resource_name == "nvidia.com/GA102GL_A10" and gpu.status == "advertised as nvidia.com/GA102GL_A10"
    # The audio function rides along in the GPU's group: no resource of its own.
    assert audio.counted and audio.resource_name is None
    assert "with 0000:3b:00.0" in audio.status
    assert by_address["0000:af:00.0"].numa_node == 1
    assert result.to_dict()["functions"][0]["device"] == "10de:2236"


def test_first_function_of_a_group_names_it(tree):
    # Two GPUs behind a switch without ACS share one group: the plugin
    # registers the group once, under the device id it saw first.
    tree.add_function("0000:5e:00.0", device="0x2236\n", iommu_group="40")
    tree.add_function("0000:5f:00.0", device="0x1eb8\n", iommu_group="40")
    result = scan(tree.root)
    assert resources(result) == {"nvidia.com/GA102GL_A10": ("10de:2236", 1, True)}


def test_unreadable_device_file_lets_the_next_function_register_the_group(tree):
    tree.add_function("0000:5e:00.0", device=None, iommu_group="40")
    tree.add_function("0000:5e:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group="40")
    result = scan(tree.root)
    assert "unreadable-device-id" in codes(result)
    assert resources(result) == {"nvidia.com/GA102_HIGH_DEFINITION_AUDIO_CONTROLLER": ("10de:1aef", 1, True)}


def test_iommu_group_split_between_drivers(tree):
    tree.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12")
    tree.add_function("0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", driver="snd_hda_intel", iommu_group="12")
    # A bridge on pcieport in a group is fine for VFIO.
    tree.add_function("0000:00:03.0", vendor="0x8086\n", device="0x2f08\n", pci_class="0x060400\n", driver="pcieport", iommu_group="33")
    tree.add_function("0000:04:00.0", device="0x1eb8\n", iommu_group="33")
    result = scan(tree.root)
    assert codes(result) == ["iommu-group-split"]
    (split,) = result.diagnoses
    assert split.subject == "iommu_group 12" and split.severity == "error"
    assert "0000:3b:00.1 (snd_hda_intel)" in split.message
    # The plugin still advertises the group: the VM fails later, at start.
    assert resources(result)["nvidia.com/GA102GL_A10"] == ("10de:2236", 1, True)


def test_host_drivers_on_a_passthrough_node(tree):
    tree.add_function("0000:3b:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="12")
    tree.add_function("0000:3b:00.1", device="0x10f8\n", pci_class="0x040300\n", driver="snd_hda_intel", iommu_group="12")
    tree.add_function("0000:86:00.0", device="0x1eb8\n", driver="nouveau", iommu_group="40")
    tree.add_function("0000:d8:00.0", device="0x1eb8\n", driver=None, iommu_group="50")
    result = scan(tree.root)
    assert result.resources == []
    assert [(d.code, d.subject) for d in result.diagnoses] == [
        ("host-driver", "0000:3b:00.0"),
        ("host-driver", "0000:86:00.0"),
        ("no-driver", "0000:d8:00.0"),
    ]
    assert "nouveau" in result.diagnoses[1].message
    assert result.functions[0].status.startswith("bound to nvidia: skipped")
    assert len(result.errors) == 2


def test_vgpu_node(tree):
    tree.add_function("0000:3b:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="12")
    tree.add_function("0000:af:00.0", device="0x20b5\n", driver="nvidia", iommu_group="87")
    tree.add_mdev("0c5d4b0e-1d0e-4b8c-9b1f-4b8a1f0d2a11", "0000:3b:00.0", "GRID T4-1Q\n", "nvidia-222")
    tree.add_mdev("7e7e0e4a-5f2d-4b50-8a0e-1e5cfb5e0f12", "0000:3b:00.0", "GRID T4-1Q\n", "nvidia-222")
    tree.add_mdev("a1b2c3d4-0000-4000-8000-000000000001", "0000:af:00.0", "NVIDIA A100-40C\n\n", "nvidia-475")
    tree.add_mdev("a1b2c3d4-0000-4000-8000-000000000002", "0000:af:00.0", "NVIDIA\tA100 \t 4-20C\n", "nvidia-700")
    result = scan(tree.root)
    assert result.diagnoses == []  # GPUs on nvidia with vGPUs on them are fine
    assert resources(result) == {
        "nvidia.com/GRID_T4-1Q": ("GRID T4-1Q", 2, True),
        "nvidia.com/NVIDIA_A100-40C": ("NVIDIA A100-40C", 1, True),
        "nvidia.com/NVIDIA_A100_4-20C": ("NVIDIA\tA100 \t 4-20C", 1, True),
    }
    parents = {m.uuid: m.parent for m in result.mdevs}
    assert parents["0c5d4b0e-1d0e-4b8c-9b1f-4b8a1f0d2a11"] == "0000:3b:00.0"
    gpu = result.functions[0]
    assert len(gpu.mdevs) == 2 and "parent of 2 vGPU(s)" in gpu.status


def test_vgpu_problems(tree):
    tree.add_function("0000:3b:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="12")
    tree.add_function("0000:00:02.0", vendor="0x8086\n", device="0x3e92\n", driver="i915", iommu_group="1")
    tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:3b:00.0", "GRID T4-1Q \n")
    tree.add_mdev("11111111-0000-4000-8000-000000000002", "0000:3b:00.0", None, "nvidia-999")
    tree.add_mdev("11111111-0000-4000-8000-000000000003", "0000:00:02.0", "i915-GVTg_V5_4\n", "i915-GVTg_V5_4")
    result = scan(tree.root)
    assert codes(result) == ["invalid-resource-name", "mdev-without-type", "non-nvidia-mdev"]
    assert resources(result) == {
        "nvidia.com/GRID_T4-1Q_": ("GRID T4-1Q ", 1, False),
        "nvidia.com/i915-GVTg_V5_4": ("i915-GVTg_V5_4", 1, True),
    }


def test_nvgrace_driver_depends_on_the_release(tree):
    tree.add_function("0009:01:00.0", device="0x2342\n", driver=NVGRACE_VFIO, iommu_group="9", bus="pci0009:00")
    new = scan(tree.root, "v1.5.0")
    assert new.vfio_drivers == (VFIO_PCI, NVGRACE_VFIO)
    assert resources(new) == {"nvidia.com/GH100_GH200_120GB___480GB": ("10de:2342", 1, True)}
    assert new.diagnoses == []
    old = scan(tree.root, "v1.4.0")
    assert old.vfio_drivers == (VFIO_PCI,)
    assert old.resources == []
    assert codes(old) == ["unsupported-vfio-driver"]
    assert vfio_drivers("preview") == (VFIO_PCI, NVGRACE_VFIO)
    assert vfio_drivers("gpu-operator@v23.9.2") == (VFIO_PCI,)


def test_collision_on_the_node(tree):
    tree.add_function("0000:3b:00.0", device="0x20b1\n", iommu_group="12")
    tree.add_function("0000:af:00.0", device="0x20f1\n", iommu_group="87")
    result = scan(tree.root, "latest")
    assert codes(result) == ["name-collision", "name-collision"]
    assert "kubevirt-GA100_A100_PCIE_40GB.sock" in result.diagnoses[0].message
    assert [r.works for r in result.resources] == [False, False]
    # Alone on a node the same device is fine: profile-wide collisions do not count.
    alone = SysfsTree(tree.root.parent / "alone")
    alone.add_function("0000:3b:00.0", device="0x20b1\n", iommu_group="12")
    assert scan(alone.root, "latest").diagnoses == []


def test_names_from_naming_md_shapes(tree):
    tree.add_function("0000:01:00.0", device="0x2330\n", iommu_group="1")
    tree.add_function("0000:02:00.0", device="0x1f08\n", iommu_group="2")
    tree.add_function("0000:03:00.0", device="0x24fa\n", iommu_group="3")
    tree.add_function("0000:04:00.0", device="0x2335\n", iommu_group="4")
    tree.add_function("0000:05:00.0", device="0x1eb8\n", iommu_group="5")
    v122 = resources(scan(tree.root, "v1.2.2"))
    assert v122["nvidia.com/GH100H100_SXM5_80GB"][0] == "10de:2330"
    assert v122["nvidia.com/2335"] == ("10de:2335", 1, True)
    v150 = scan(tree.root, "v1.5.0")
    names = resources(v150)
    assert "nvidia.com/TU106_GEFORCE_RTX_2060_REV__A" in names
    assert names["nvidia.com/GA104_RTX_A4500_EMBEDDED_GPU_"] == ("10de:24fa", 1, False)
    assert [d.subject for d in v150.diagnoses if d.code == "invalid-resource-name"] == ["10de:24fa"]
    assert "nvidia.com/SAS_5_IR_INTEGRATED_RAID_CONTROLLER" in resources(scan(tree.root, "v1.1.2"))
    assert "nvidia.com/TU104GL_Tesla_T4" in resources(scan(tree.root, "v1.0.1"))
    assert "nvidia.com/ZYWALL_TURBO_CARD" in resources(scan(tree.root, "v1.2.1"))


def test_unnamed_devices_by_release(tree):
    tree.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12")
    skipped = scan(tree.root, "v1.0.0")
    assert skipped.resources == []
    assert codes(skipped) == ["not-advertised"]
    assert skipped.functions[0].status.startswith("not advertised")
    fallback = scan(tree.root, "v1.0.1")
    assert resources(fallback) == {"nvidia.com/2236": ("10de:2236", 1, True)}
    assert [(d.code, d.severity) for d in fallback.diagnoses] == [("unnamed-device", "warning")]


def test_what_the_plugin_reads_exactly(tree):
    # "0x10DE" is not "10de" to the plugin; no newline is fine; the first two
    # bytes are dropped whatever they are.
    tree.add_function("0000:01:00.0", vendor="0x10DE\n", device="0x2236\n", iommu_group="1")
    tree.add_function("0000:02:00.0", vendor="0x10de", device="0x1eb8", iommu_group="2")
    tree.add_function("0000:03:00.0", vendor="XX10de\n\n", device="0x27b8\n", iommu_group="3")
    result = scan(tree.root)
    assert [f.address for f in result.functions] == ["0000:02:00.0", "0000:03:00.0"]
    assert set(resources(result)) == {"nvidia.com/TU104GL_TESLA_T4", "nvidia.com/AD104GL_L4"}


def test_no_iommu_group(tree):
    tree.add_function("0000:3b:00.0", iommu_group=None)
    result = scan(tree.root)
    assert codes(result) == ["no-iommu-group"]
    assert result.resources == [] and result.functions[0].iommu_group is None


def test_short_vendor_file_crashes_the_plugin(tree):
    tree.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12")
    tree.add_function("0000:00:1f.0", vendor="8", device="0x0001\n", pci_class="0x060100\n", driver="lpc_ich", iommu_group="2")
    result = scan(tree.root)
    assert "plugin-crash" in codes(result)
    assert [r.works for r in result.resources] == [False]


def test_directories_are_not_devices(tree):
    real = tree.sys / "bus/pci/devices/0000:99:00.0"
    real.mkdir()
    (real / "vendor").write_text("0x10de\n")
    tree.add_function("0000:3b:00.0", iommu_group="12")
    result = scan(tree.root)
    assert codes(result) == ["not-a-device-link"]
    assert [f.address for f in result.functions] == ["0000:3b:00.0"]


def test_unusual_device_id(tree):
    tree.add_function("0000:3b:00.0", device="0x2236 \n", iommu_group="12")
    result = scan(tree.root)
    assert codes(result) == ["unusual-device-id"]
    assert result.resources == []


def test_missing_sysfs_is_an_input_error(tmp_path):
    with pytest.raises(PcinameError, match="sys/bus/pci/devices: no such directory"):
        scan(tmp_path)


def test_no_mdev_bus_is_fine(tree):
    tree.add_function("0000:3b:00.0")
    assert not (tree.sys / "bus/mdev").exists()
    assert scan(tree.root).mdevs == []
