"""Host scan over real sysfs-shaped trees (directories, files, relative symlinks)."""

from __future__ import annotations

import errno
import os
import threading
from pathlib import Path

import pytest

from pciname.base.files import MAX_SYSFS_ATTR_BYTES
from pciname.cli import main
from pciname.errors import PcinameError
from pciname.host import diagnoses, rootfs
from pciname.host.diagnoses import CODES
from pciname.host.rootfs import resolve_in_root as _resolve_in_root
from pciname.host.sysfs import NVGRACE_VFIO, VFIO_PCI, scan, vfio_drivers
from tests.conftest import REPO
from tests.host.doctor_nodes import doctor_codes_seen
from tests.host.dra_nodes import dra_codes_seen
from tests.host.kata_nodes import kata_codes_seen
from tests.sysfs_tree import SysfsTree


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


def two_a10_with_audio(tree):
    # Each A10 with its audio function in one IOMMU group, all on vfio-pci.
    for bus, group, numa in (("3b", "12", "0"), ("af", "87", "1")):
        tree.add_function(f"0000:{bus}:00.0", device="0x2236\n", iommu_group=group, numa_node=numa + "\n")
        tree.add_function(
            f"0000:{bus}:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group=group, numa_node=numa + "\n"
        )
    # A non-NVIDIA device elsewhere, on its host driver.
    tree.add_function(
        "0000:00:1f.2", vendor="0x8086\n", device="0xa182\n", pci_class="0x010601\n", driver="ahci", iommu_group="5"
    )


def test_passthrough_node_two_a10_with_audio_functions(tree):
    # Up to v1.4.0 the IOMMU group is the device: the audio functions ride along.
    two_a10_with_audio(tree)
    result = scan(tree.root, "v1.4.0")
    assert result.diagnoses == [] and result.discovery == "per-group"
    assert resources(result) == {"nvidia.com/GA102GL_A10": ("10de:2236", 2, True)}
    assert [r.members for r in result.resources] == [("12", "87")]
    by_address = {f.address: f for f in result.functions}
    assert list(by_address) == ["0000:3b:00.0", "0000:3b:00.1", "0000:af:00.0", "0000:af:00.1"]
    gpu, audio = by_address["0000:3b:00.0"], by_address["0000:3b:00.1"]
    assert (gpu.device, gpu.driver, gpu.iommu_group, gpu.numa_node) == ("2236", "vfio-pci", "12", 0)
    assert (
        gpu.resource_name == "nvidia.com/GA102GL_A10"
        and gpu.status == "advertised as nvidia.com/GA102GL_A10 (device 12)"
    )
    assert (gpu.kubelet_id, audio.kubelet_id) == ("12", None)
    # The audio function rides along in the GPU's group: no resource of its own.
    assert audio.counted and audio.resource_name is None
    assert "with 0000:3b:00.0" in audio.status
    assert by_address["0000:af:00.0"].numa_node == 1
    assert result.to_dict()["functions"][0]["device"] == "10de:2236"


def test_from_v1_5_0_every_function_is_a_device(tree):
    # v1.5.0 and later: each function on a VFIO driver is its own kubelet
    # device, its PCI address the device ID, so the audio functions get a
    # resource of their own.
    two_a10_with_audio(tree)
    for release in ("v1.5.0", "v1.6.0", "latest", "gpu-operator@v26.7.0"):
        result = scan(tree.root, release)
        assert result.diagnoses == [] and result.discovery == "per-function"
        assert resources(result) == {
            "nvidia.com/GA102GL_A10": ("10de:2236", 2, True),
            "nvidia.com/GA102_HIGH_DEFINITION_AUDIO_CONTROLLER": ("10de:1aef", 2, True),
        }
        assert [r.members for r in result.resources] == [
            ("0000:3b:00.0", "0000:af:00.0"),
            ("0000:3b:00.1", "0000:af:00.1"),
        ]
    audio = next(f for f in result.functions if f.address == "0000:3b:00.1")
    assert audio.kubelet_id == "0000:3b:00.1"
    assert audio.status == "advertised as nvidia.com/GA102_HIGH_DEFINITION_AUDIO_CONTROLLER (device 0000:3b:00.1)"
    assert result.to_dict()["discovery"] == "per-function"
    assert result.to_dict()["functions"][1]["kubelet_id"] == "0000:3b:00.1"
    # The audio function on its host driver: only the GPU, as before.
    lone = SysfsTree(tree.root.parent / "lone")
    lone.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12")
    lone.add_function(
        "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", driver="snd_hda_intel", iommu_group="12"
    )
    assert resources(scan(lone.root, "v1.6.0")) == {"nvidia.com/GA102GL_A10": ("10de:2236", 1, True)}


def test_two_models_in_one_group(tree):
    # Up to v1.4.0 the first function names the group; from v1.5.0 each model is a resource.
    tree.add_function("0000:5e:00.0", device="0x2236\n", iommu_group="40")
    tree.add_function("0000:5f:00.0", device="0x1eb8\n", iommu_group="40")
    assert resources(scan(tree.root, "v1.4.0")) == {"nvidia.com/GA102GL_A10": ("10de:2236", 1, True)}
    new = scan(tree.root, "v1.6.0")
    assert {r.resource_name: r.members for r in new.resources} == {
        "nvidia.com/GA102GL_A10": ("0000:5e:00.0",),
        "nvidia.com/TU104GL_TESLA_T4": ("0000:5f:00.0",),
    }


def test_empty_device_file_of_any_kept_function_crashes_v1_5_0(tree):
    # v1.5.0 reads `device` of every function it keeps: an empty one panics.
    # Up to v1.4.0 only the group's first function's is read.
    tree.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12")
    tree.add_function("0000:3b:00.1", device="", pci_class="0x040300\n", iommu_group="12")
    old = scan(tree.root, "v1.4.0")
    assert old.diagnoses == [] and [r.works for r in old.resources] == [True]
    new = scan(tree.root, "v1.6.0")
    assert codes(new) == ["plugin-crash"]
    crash = new.diagnoses[0]
    assert crash.subject == "0000:3b:00.1" and "every function it keeps" in crash.message and "panics" in crash.message
    assert [r.works for r in new.resources] == [False]  # it dies before it registers anything
    assert new.functions[1].status == "device file shorter than 2 bytes: the plugin panics"


def test_nvgrace_functions_are_devices_by_address(tree):
    tree.add_function("0009:01:00.0", device="0x2342\n", driver=NVGRACE_VFIO, iommu_group="9", bus="pci0009:00")
    tree.add_function("0019:01:00.0", device="0x2342\n", driver=NVGRACE_VFIO, iommu_group="19", bus="pci0019:00")
    result = scan(tree.root, "v1.6.0")
    assert [(r.resource_name, r.members) for r in result.resources] == [
        ("nvidia.com/GH100_GH200_120GB___480GB", ("0009:01:00.0", "0019:01:00.0"))
    ]


def test_vgpu_type_string_goes_through_the_name_algorithm(tree):
    tree.add_function("0000:3b:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="12")
    tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:3b:00.0", "GRID T4-1Q\n", "nvidia-222")
    tree.add_mdev("11111111-0000-4000-8000-000000000002", "0000:3b:00.0", "\n", "nvidia-223")  # empty
    tree.add_mdev("11111111-0000-4000-8000-000000000003", "0000:3b:00.0", " \n", "nvidia-224")  # blank: "_"
    new = scan(tree.root, "v1.6.0")
    # "" finds the first NVIDIA device line of vendor-section ("\t" + "" starts every one).
    by_name = {r.resource_name: r.source for r in new.resources}
    assert by_name["nvidia.com/GRID_T4-1Q"] == "GRID T4-1Q"  # a real type name never matches
    # (the source is the type name as read, newlines trimmed)
    looked_up = [r.resource_name for r in new.resources if r.source == ""]
    assert looked_up == ["nvidia.com/0008_NV1_STG2000XB_SERIES"] and by_name["nvidia.com/_"] == " "
    assert [d.subject for d in new.diagnoses if d.code == "mdev-type-looked-up"] == looked_up
    # v1.1.1 (whole-file-upper): "_" is in a SCSI controller's line; "" splits no line in two.
    old = scan(tree.root, "v1.1.1")
    assert {r.resource_name: r.source for r in old.resources if r.kind == "mdev"} == {
        "nvidia.com/GRID_T4-1Q": "GRID T4-1Q",
        "nvidia.com/": "",
        "nvidia.com/53C1035_PCIX_FUSIONMPT_DUAL_ULTRA320_SCSI": " ",
    }
    assert "mdev-type-looked-up" in codes(old) and "invalid-resource-name" in codes(old)


def test_vgpu_leak_between_types_up_to_v1_1_1(tree):
    tree.add_function("0000:3b:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="12")
    tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:3b:00.0", "GRID T4-1Q\n", "nvidia-222")
    assert "mdev-type-leak" not in codes(scan(tree.root, "v1.1.1"))  # one type: nothing to leak
    tree.add_mdev("11111111-0000-4000-8000-000000000002", "0000:3b:00.0", "GRID T4-2Q\n", "nvidia-223")
    for release in ("v1.0.0", "v1.0.1", "v1.1.1"):
        result = scan(tree.root, release)
        leaks = [d for d in result.diagnoses if d.code == "mdev-type-leak"]
        assert len(leaks) == 1 and leaks[0].severity == "warning"
        assert "GRID T4-1Q" in leaks[0].message and "GRID T4-2Q" in leaks[0].message
        # The scan lists each type's own vGPUs: what is certain.
        assert sorted(r.members for r in result.resources if r.kind == "mdev") == [
            ("11111111-0000-4000-8000-000000000001",),
            ("11111111-0000-4000-8000-000000000002",),
        ]
    assert "mdev-type-leak" not in codes(scan(tree.root, "v1.1.2"))
    assert "mdev-type-leak" not in codes(scan(tree.root, "gpu-operator@v1.11.0"))  # deploys v1.1.2


def test_every_release_states_its_discovery(profile_facts):
    from pciname.naming.profiles import DISCOVERIES, load_registry

    for version, entry in profile_facts["kubevirt_gpu_device_plugin"].items():
        assert entry["discovery"] in DISCOVERIES, version
        assert isinstance(entry["mdev_leak"], bool), version
    registry = load_registry()
    releases = [p.plugin_release for p in registry.plugin_releases()]
    # Per function from v1.5.0 on (a new release is per function unless profiles.json says otherwise).
    assert [p.plugin_release for p in registry.plugin_releases() if p.discovery == "per-function"] == releases[
        releases.index("v1.5.0") :
    ]
    assert [p.plugin_release for p in registry.plugin_releases() if p.mdev_leak] == ["v1.0.0", "v1.0.1", "v1.1.1"]
    for operator in registry.operator_releases():
        plugin = registry.get(operator.plugin_release)
        assert (operator.discovery, operator.mdev_leak) == (plugin.discovery, plugin.mdev_leak)


def test_first_function_of_a_group_names_it(tree):
    # Two GPUs behind a switch without ACS share one group: the plugin
    # registers the group once, under the device id it saw first (up to v1.4.0).
    tree.add_function("0000:5e:00.0", device="0x2236\n", iommu_group="40")
    tree.add_function("0000:5f:00.0", device="0x1eb8\n", iommu_group="40")
    result = scan(tree.root, "v1.4.0")
    assert resources(result) == {"nvidia.com/GA102GL_A10": ("10de:2236", 1, True)}


def test_unreadable_device_file_lets_the_next_function_register_the_group(tree):
    tree.add_function("0000:5e:00.0", device=None, iommu_group="40")
    tree.add_function("0000:5e:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group="40")
    result = scan(tree.root)
    assert "unreadable-device-id" in codes(result)
    assert resources(result) == {"nvidia.com/GA102_HIGH_DEFINITION_AUDIO_CONTROLLER": ("10de:1aef", 1, True)}


def test_iommu_group_split_between_drivers(tree):
    tree.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12")
    tree.add_function(
        "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", driver="snd_hda_intel", iommu_group="12"
    )
    # A bridge on pcieport in a group is fine for VFIO.
    tree.add_function(
        "0000:00:03.0",
        vendor="0x8086\n",
        device="0x2f08\n",
        pci_class="0x060400\n",
        driver="pcieport",
        iommu_group="33",
    )
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
    tree.add_function(
        "0000:3b:00.1", device="0x10f8\n", pci_class="0x040300\n", driver="snd_hda_intel", iommu_group="12"
    )
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
    tree.add_function(
        "0000:00:1f.0", vendor="8", device="0x0001\n", pci_class="0x060100\n", driver="lpc_ich", iommu_group="2"
    )
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
    # The plugin looks odd spellings up verbatim and advertises what that gives.
    tree.add_function("0000:3b:00.0", device="0x2236\r\n", iommu_group="12")  # no line: the id itself
    tree.add_function("0000:3c:00.0", device="0x20B5\n", iommu_group="13")  # upper case: no line either
    tree.add_function("0000:3d:00.0", device="0x2236 \n", iommu_group="14")  # "\t2236 " starts "\t2236  GA102GL [A10]"
    result = scan(tree.root, "v1.6.0")
    assert codes(result) == ["invalid-resource-name"] + ["unusual-device-id"] * 3
    assert resources(result) == {
        "nvidia.com/2236\r": ("10de:2236\r", 1, False),  # kubelet refuses the CR
        "nvidia.com/20B5": ("10de:20B5", 1, True),
        "nvidia.com/GA102GL_A10": ("10de:2236 ", 1, True),
    }
    assert [r.members for r in result.resources] == [("0000:3b:00.0",), ("0000:3c:00.0",), ("0000:3d:00.0",)]
    assert all(d.severity == "warning" for d in result.diagnoses if d.code == "unusual-device-id")
    # v1.0.0 skips what it finds no name for.
    old = scan(tree.root, "v1.0.0")
    assert old.resources == [] and codes(old) == ["unusual-device-id"] * 3


def test_missing_sysfs_is_an_input_error(tmp_path):
    with pytest.raises(PcinameError, match="sys/bus/pci/devices: no such directory"):
        scan(tmp_path)


def test_no_mdev_bus_is_fine(tree):
    tree.add_function("0000:3b:00.0")
    assert not (tree.sys / "bus/mdev").exists()
    assert scan(tree.root).mdevs == []


# -- a planted tree cannot make the scan leave its root, block or exhaust memory ----

SECRET = "0xTOPSECRET-first-line\nsecond line\n"


@pytest.fixture
def secret(tmp_path):
    """A 0600 file outside the tree, whose content must never show up."""
    path = tmp_path / "outside" / "secret"
    path.parent.mkdir()
    path.write_text(SECRET)
    path.chmod(0o600)
    return path


def relink(path, target):
    path.unlink()
    os.symlink(target, path)


def escape(path):
    """A relative target that, followed without a root, climbs from any
    directory of the tree to ``/`` and then to ``path``."""
    return "../" * 64 + str(path).lstrip("/")


def inside(tree, path):
    """``path`` (absolute) as seen inside the tree's root."""
    return tree.root / str(path).lstrip("/")


def run_bounded(fifos, func, *args, **kwargs):
    """``func(*args, **kwargs)`` in a thread. Should it block on one of the
    ``fifos`` (no writer), open them for writing and close them until it
    returns, and fail: the test ends either way, it never hangs."""
    box = {}

    def target():
        try:
            box["value"] = func(*args, **kwargs)
        except BaseException as exc:  # noqa: BLE001 - re-raised in the test thread
            box["error"] = exc

    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    thread.join(60)
    blocked = thread.is_alive()
    while thread.is_alive():
        for fifo in fifos:
            try:
                os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
            except OSError:
                pass  # no reader on this one (yet)
        thread.join(0.1)
    if blocked:
        pytest.fail("blocked reading a FIFO")
    if "error" in box:
        raise box["error"]
    return box["value"]


def test_absolute_link_resolves_inside_the_root(tree, secret):
    gpu = tree.add_function("0000:3b:00.0", iommu_group="12")
    relink(gpu / "device", str(secret))
    relink(gpu / "class", str(secret))
    tree.add_function("0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group="12")
    tree.add_function("0000:86:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="40")
    mdev = tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:86:00.0", "GRID T4-1Q\n", "nvidia-222")
    tree.add_mdev("11111111-0000-4000-8000-000000000002", "0000:86:00.0", None, "nvidia-999")
    # The type directory a link to the secret's directory, whose "name" is the secret.
    (mdev.parent / "mdev_supported_types/nvidia-999").rmdir()
    os.symlink(str(secret.parent), mdev.parent / "mdev_supported_types/nvidia-999")
    secret.rename(secret.parent / "name")
    os.symlink("name", secret)
    result = scan(tree.root)
    assert SECRET.split("\n")[0][2:] not in repr(result.to_dict())
    assert "TOPSECRET" not in repr(result.to_dict())
    # Nothing at ROOT/<the secret's path>: the device is unreadable, the vGPU has no type.
    assert "unreadable-device-id" in codes(result) and "mdev-without-type" in codes(result)
    assert result.functions[0].pci_class is None
    # What is at ROOT/<the secret's path> is what the scan reads, as in a chroot.
    inside(tree, secret).parent.mkdir(parents=True)
    inside(tree, secret).write_text("0x2236\n")
    (inside(tree, secret).parent / "name").write_text("GRID T4-2Q\n")
    result = scan(tree.root, "v1.4.0")
    assert resources(result) == {
        "nvidia.com/GA102GL_A10": ("10de:2236", 1, True),
        "nvidia.com/GRID_T4-1Q": ("GRID T4-1Q", 1, True),
        "nvidia.com/GRID_T4-2Q": ("GRID T4-2Q", 1, True),
    }
    assert result.functions[0].pci_class == "0x2236"


def test_dotdot_stops_at_the_root(tree, secret):
    gpu = tree.add_function("0000:3b:00.0", iommu_group="12")
    relink(gpu / "device", escape(secret))
    tree.add_function("0000:86:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="40")
    mdev = tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:86:00.0", "GRID T4-1Q\n")
    relink(mdev / "mdev_type", escape(secret.parent))
    secret.rename(secret.parent / "name")
    os.symlink("name", secret)
    result = scan(tree.root)
    assert "TOPSECRET" not in repr(result.to_dict())
    # (the GPU on nvidia whose only vGPU has no type: host-driver)
    assert codes(result) == ["host-driver", "mdev-without-type", "unreadable-device-id"]
    # The same links, with the files planted at ROOT/<path>: read from there.
    inside(tree, secret).parent.mkdir(parents=True)
    inside(tree, secret).write_text("0x2236\n")
    (inside(tree, secret).parent / "name").write_text("GRID T4-1Q\n")
    assert resources(scan(tree.root)) == {
        "nvidia.com/GA102GL_A10": ("10de:2236", 1, True),
        "nvidia.com/GRID_T4-1Q": ("GRID T4-1Q", 1, True),
    }


def test_link_to_dev_zero_is_not_read(tree):
    zero = tree.add_function("0000:3b:00.0", iommu_group="12")
    relink(zero / "device", "/dev/zero")
    relink(zero / "class", escape("/dev/zero"))
    relink(zero / "numa_node", "/dev/zero")
    other = tree.add_function("0000:86:00.0", device="0x1eb8\n", iommu_group="40")
    relink(other / "vendor", escape("/dev/zero"))
    result = scan(tree.root)  # no MemoryError
    assert [f.address for f in result.functions] == ["0000:3b:00.0"]
    assert (result.functions[0].pci_class, result.functions[0].numa_node) == (None, None)
    assert codes(result) == ["unreadable-device-id"]
    assert result.resources == []


def test_fifos_are_not_read(tree):
    fifos = []

    def fifo(path):
        path.unlink()
        os.mkfifo(path)
        fifos.append(path)

    fifo(tree.add_function("0000:01:00.0", iommu_group="1") / "vendor")
    fifo(tree.add_function("0000:02:00.0", iommu_group="2") / "device")
    fifo(tree.add_function("0000:03:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="3") / "class")
    tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:03:00.0", None, "nvidia-999")
    name = tree.device_dir("0000:03:00.0") / "mdev_supported_types/nvidia-999/name"
    os.mkfifo(name)
    fifos.append(name)
    tree.add_function("0000:04:00.0", iommu_group="4")  # a sound function is still advertised
    result = run_bounded(fifos, scan, tree.root)
    # (the GPU on nvidia whose only vGPU has no type: host-driver)
    assert codes(result) == [
        "host-driver",
        "mdev-without-type",
        "unreadable-device-id",
        "unreadable-file",
        "unreadable-file",
    ]
    by_code = {d.code: d for d in result.diagnoses}
    for d in result.diagnoses[:-1]:
        assert "(not a regular file)" in d.message, d
    assert [d.subject for d in result.diagnoses if d.code == "unreadable-file"] == ["0000:01:00.0", "0000:03:00.0"]
    assert by_code["mdev-without-type"].subject == "11111111-0000-4000-8000-000000000001"
    assert [f.address for f in result.functions] == ["0000:02:00.0", "0000:03:00.0", "0000:04:00.0"]
    assert resources(result) == {"nvidia.com/GA102GL_A10": ("10de:2236", 1, True)}


def test_oversized_attribute_is_not_read(tree):
    tree.add_function("0000:3b:00.0", device="0x2236" + "6" * (MAX_SYSFS_ATTR_BYTES + 1), iommu_group="12")
    result = scan(tree.root)
    assert codes(result) == ["unreadable-device-id"]
    assert f"more than the {MAX_SYSFS_ATTR_BYTES} allowed" in result.diagnoses[0].message


def test_symlink_loops_are_diagnosed(tree):
    looped = tree.add_function("0000:01:00.0", iommu_group="1")
    relink(looped / "vendor", "loop_a")
    os.symlink("loop_b", looped / "loop_a")
    os.symlink("/sys/devices/pci0000:00/0000:01:00.0/loop_a", looped / "loop_b")
    # An absolute link to itself: a loop inside the root.
    os.symlink("/sys/bus/pci/devices/0000:02:00.0", tree.sys / "bus/pci/devices/0000:02:00.0")
    tree.add_function("0000:03:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="3")
    mdev = tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:03:00.0")
    relink(mdev / "mdev_type", "mdev_type")
    result = scan(tree.root)
    assert [(d.code, d.subject) for d in result.diagnoses] == [
        ("unreadable-file", "0000:01:00.0"),
        ("unreadable-file", "0000:02:00.0"),
        ("mdev-without-type", "11111111-0000-4000-8000-000000000001"),
        ("host-driver", "0000:03:00.0"),
    ]
    for d in result.diagnoses[:-1]:
        assert "(Too many levels of symbolic links)" in d.message
    # The devices directory itself a loop: an input error, as when it is missing.
    loop = SysfsTree(tree.root.parent / "loop")
    (loop.sys / "bus/pci/devices").rmdir()
    os.symlink("/sys/bus/pci/devices", loop.sys / "bus/pci/devices")
    with pytest.raises(PcinameError, match="sys/bus/pci/devices: cannot list it"):
        scan(loop.root)


def test_absolute_links_within_the_root_work(tree, tmp_path):
    def build(tree):
        tree.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12", numa_node="1\n")
        tree.add_function("0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group="12")
        tree.add_function("0000:86:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="40")
        tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:86:00.0", "GRID T4-1Q\n")

    relative = SysfsTree(tmp_path / "relative")
    build(relative)
    build(tree)
    # Every link made absolute, as seen from the root ("/sys/...").
    for dirpath, dirnames, filenames in os.walk(tree.root):
        for name in dirnames + filenames:
            link = os.path.join(dirpath, name)
            if os.path.islink(link):
                target = os.path.normpath(os.path.join(dirpath, os.readlink(link)))
                relink(Path(link), "/" + os.path.relpath(target, tree.root))
    assert os.readlink(tree.sys / "bus/pci/devices/0000:3b:00.0") == "/sys/devices/pci0000:00/0000:3b:00.0"
    # sys/bus itself a link elsewhere in the root, reached through "..".
    os.rename(tree.sys / "bus", tree.root / "bus")
    os.symlink("../sys/../bus", tree.sys / "bus")
    expected = scan(relative.root).to_dict()
    assert expected["resources"] and expected["mdevs"][0]["parent"] == "0000:86:00.0"
    got = scan(tree.root).to_dict()
    assert {**got, "root": None} == {**expected, "root": None}


def test_resolve_in_root(tmp_path):
    root = tmp_path / "root"
    (root / "a/b").mkdir(parents=True)
    (root / "a/b/f").write_text("x")
    os.symlink("/a/b", root / "a/abs")
    os.symlink("../../../../a", root / "a/b/up")
    os.symlink("self", root / "a/self")
    os.symlink("b", root / "a/rel")
    assert _resolve_in_root(root, "a/abs/f") == root / "a/b/f"
    assert _resolve_in_root(root, "/a/b/up/abs/../../a/b/f") == root / "a/b/f"
    assert _resolve_in_root(root, "a/abs", follow_last=False) == root / "a/abs"
    assert _resolve_in_root(root, "../../..") == root
    with pytest.raises(OSError) as loop:
        _resolve_in_root(root, "a/self/f")
    assert loop.value.errno == errno.ELOOP
    with pytest.raises(NotADirectoryError):
        _resolve_in_root(root, "a/b/f/g")
    with pytest.raises(FileNotFoundError):
        _resolve_in_root(root, "a/nothing/f")
    # With "/" as the root it is the kernel's own resolution.
    real = Path(os.path.realpath(root))
    assert _resolve_in_root(Path("/"), str(real / "a/rel/f")) == real / "a/b/f"
    assert _resolve_in_root(Path("/"), str(real / "a/rel/../rel/./f")) == real / "a/b/f"


def test_cli_scan_of_a_planted_tree(tree, secret, capsys):
    gpu = tree.add_function("0000:01:00.0", iommu_group="1")
    relink(gpu / "device", str(secret))
    relink(gpu / "class", escape(secret))
    relink(gpu / "numa_node", "/dev/zero")
    os.symlink(escape("/dev/zero"), tree.sys / "bus/pci/devices/0000:09:00.0")
    other = tree.add_function("0000:02:00.0", iommu_group="2")
    (other / "vendor").unlink()
    os.mkfifo(other / "vendor")
    looped = tree.add_function("0000:03:00.0", iommu_group="3")
    relink(looped / "device", "device")
    tree.add_function("0000:04:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="4")
    mdev = tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:04:00.0")
    relink(mdev / "mdev_type", str(secret.parent))
    for output in ("table", "json"):
        code = run_bounded([other / "vendor"], main, ["scan", "--sysfs-root", str(tree.root), "-o", output])
        out, err = capsys.readouterr()
        assert code == 1 and err == ""
        assert "Traceback" not in out and "TOPSECRET" not in out
        assert "unreadable-device-id" in out and "unreadable-file" in out and "mdev-without-type" in out


def test_permitted_host_devices_from_scan(tree, capsys):
    import yaml

    two_a10_with_audio(tree)
    tree.add_function("0000:86:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="40")
    tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:86:00.0", "GRID T4-1Q\n", "nvidia-222")
    tree.add_mdev("11111111-0000-4000-8000-000000000002", "0000:86:00.0", "\n", "nvidia-223")  # looked up in v1.6.0
    tree.add_function("0000:87:00.0", device="0x20B5\n", iommu_group="41")  # unusual spelling: no selector names it

    def permitted(release):
        code = main(["permitted-host-devices", "--from-scan", str(tree.root), "--profile", release])
        out, err = capsys.readouterr()
        return code, yaml.safe_load(out)["permittedHostDevices"], err

    code, new, err = permitted("v1.6.0")  # per function: the audio functions too
    assert code == 0
    assert [(e["pciVendorSelector"], e["resourceName"]) for e in new["pciHostDevices"]] == [
        ("10DE:2236", "nvidia.com/GA102GL_A10"),
        ("10DE:1AEF", "nvidia.com/GA102_HIGH_DEFINITION_AUDIO_CONTROLLER"),
    ]
    assert [(e["mdevNameSelector"], e["resourceName"]) for e in new["mediatedDevices"]] == [
        ("GRID T4-1Q", "nvidia.com/GRID_T4-1Q")
    ]
    assert "left out '10de:20B5'" in err and "mdev-type-looked-up" in err
    code, old, err = permitted("v1.4.0")  # per group: the GPUs only
    assert [e["pciVendorSelector"] for e in old["pciHostDevices"]] == ["10DE:2236"]
    # A node where the plugin crashes permits nothing: exit 2, said why.
    (tree.sys / "devices/pci0000:00/0000:3b:00.1/device").write_text("")
    assert main(["permitted-host-devices", "--from-scan", str(tree.root), "--profile", "v1.6.0"]) == 2
    err = capsys.readouterr().err
    assert "plugin-crash" in err and "nothing to permit" in err and "Traceback" not in err


# -- paths the tests above do not reach, pinned before the scan was split into phases ----


def test_mdev_entries_the_plugin_skips_or_dies_on(tree):
    tree.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12")
    tree.add_function("0000:86:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="40")
    tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:86:00.0", "GRID T4-1Q\n")
    devices = tree.sys / "bus/mdev/devices"
    # A directory among the links, with a readable type: not a device.
    (devices / "real/mdev_type").mkdir(parents=True)
    (devices / "real/mdev_type/name").write_text("GRID T4-2Q\n")
    # A link whose target has no "/": the plugin's readGpuIDForVgpu indexes out of range.
    os.symlink("real", devices / "22222222-0000-4000-8000-000000000002")
    result = scan(tree.root)
    assert [(d.code, d.severity, d.subject) for d in result.diagnoses] == [
        ("plugin-crash", "error", "22222222-0000-4000-8000-000000000002"),
        ("not-a-device-link", "warning", "real"),
    ]
    assert "links to a target without '/'" in result.diagnoses[0].message
    assert [(m.uuid, m.type_name, m.parent, m.resource_name) for m in result.mdevs] == [
        ("11111111-0000-4000-8000-000000000001", "GRID T4-1Q", "0000:86:00.0", "nvidia.com/GRID_T4-1Q"),
        ("22222222-0000-4000-8000-000000000002", "GRID T4-2Q", None, None),
    ]
    assert result.mdevs[1].status == "link target without '/': the plugin panics"
    # The plugin dies: nothing it would register works.
    assert resources(result) == {
        "nvidia.com/GA102GL_A10": ("10de:2236", 1, False),
        "nvidia.com/GRID_T4-1Q": ("GRID T4-1Q", 1, False),
    }
    assert result.errors == [result.diagnoses[0]]


def test_mdev_type_names_are_trimmed_of_newlines_at_both_ends(tree):
    # mdev_type/name: "\n" trimmed from both ends, then white-space runs to "_".
    tree.add_function("0000:86:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="40")
    tree.add_mdev("11111111-0000-4000-8000-000000000001", "0000:86:00.0", "\nGRID  T4-1Q\n\n", "nvidia-222")
    tree.add_mdev("11111111-0000-4000-8000-000000000002", "0000:86:00.0", "\n GRID T4-2Q\n", "nvidia-223")
    result = scan(tree.root)
    assert [m.type_name for m in result.mdevs] == ["GRID  T4-1Q", " GRID T4-2Q"]
    assert resources(result) == {
        "nvidia.com/GRID_T4-1Q": ("GRID  T4-1Q", 1, True),
        "nvidia.com/_GRID_T4-2Q": (" GRID T4-2Q", 1, False),
    }
    assert [(d.code, d.subject) for d in result.diagnoses] == [("invalid-resource-name", "nvidia.com/_GRID_T4-2Q")]
    assert result.mdevs[1].status == "nvidia.com/_GRID_T4-2Q is refused: never advertised"


def test_report_only_attributes(tree):
    # class and numa_node are only for the report: absent or odd, nothing is diagnosed.
    tree.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12", numa_node="-1\n")
    tree.add_function("0000:5e:00.0", device="0x2236\n", iommu_group="40", numa_node="x\n", pci_class=None)
    tree.add_function("0000:af:00.0", device="0x2236\n", iommu_group="87", numa_node=None)
    result = scan(tree.root)
    assert result.diagnoses == []
    assert [(f.pci_class, f.numa_node) for f in result.functions] == [
        ("0x030200", -1),
        (None, None),
        ("0x030200", None),
    ]
    assert resources(result) == {"nvidia.com/GA102GL_A10": ("10de:2236", 3, True)}


def test_nvidia_function_without_a_device_file_in_a_taken_group(tree):
    # The plugin reads `device` only for the first function of a group: a
    # later one without it rides along, undiagnosed.
    tree.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12")
    tree.add_function("0000:3b:00.1", device=None, pci_class="0x040300\n", iommu_group="12")
    result = scan(tree.root, "v1.4.0")
    assert result.diagnoses == []
    audio = result.functions[1]
    assert (audio.device, audio.counted, audio.kubelet_id) == (None, True, None)
    assert audio.status == "in IOMMU group 12 with 0000:3b:00.0: passed through with it"
    assert audio.to_dict()["device"] is None


def test_short_device_file_of_a_group_s_first_function(tree):
    tree.add_function("0000:3b:00.0", device="0", iommu_group="12")
    tree.add_function("0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group="12")
    result = scan(tree.root)
    assert [(d.code, d.subject) for d in result.diagnoses] == [("plugin-crash", "0000:3b:00.0")]
    assert "device has fewer than 2 bytes" in result.diagnoses[0].message
    assert result.functions[0].status == "device file shorter than 2 bytes: the plugin panics"
    assert not result.functions[0].counted
    assert resources(result) == {"nvidia.com/GA102_HIGH_DEFINITION_AUDIO_CONTROLLER": ("10de:1aef", 1, False)}


# -- the diagnosis codes: one list, in the code and in README.md ----------------------------

README = REPO / "docs" / "passthrough.md"


def readme_scan_codes():
    """code -> (severity, meaning) from README.md's table of scan diagnoses:
    the first table after the text about ``pciname scan [--sysfs-root DIR]``."""
    lines = README.read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if "`pciname scan [--sysfs-root DIR]`" in line)
    header = next(i for i in range(start, len(lines)) if lines[i].strip().startswith("|"))
    assert [c.strip() for c in lines[header].strip().strip("|").split("|")] == ["code", "severity", "meaning"]
    assert set(lines[header + 1].replace("|", "").split()) == {"---"}
    rows = {}
    for line in lines[header + 2 :]:
        if not line.strip().startswith("|"):
            break
        code, severity, meaning = (c.strip().replace("`", "") for c in line.strip().strip("|").split("|"))
        assert code not in rows, f"{code} is listed twice"
        rows[code] = (severity, meaning)
    return rows


def test_readme_lists_exactly_the_scan_codes():
    listed = readme_scan_codes()
    assert sorted(set(CODES) - set(listed)) == [], "codes missing from README.md"
    assert sorted(set(listed) - set(CODES)) == [], "codes in README.md the scan does not have"
    assert list(listed) == list(CODES)  # in one order
    for code, (severity, meaning) in listed.items():
        assert (severity, meaning) == tuple(CODES[code]), code


def test_every_code_is_a_named_constant():
    constants = {
        value
        for name, value in vars(diagnoses).items()
        if name.isupper()
        and isinstance(value, str)
        and value not in (diagnoses.ERROR, diagnoses.WARNING, diagnoses.INFO)
    }
    assert constants == set(CODES)
    assert {c.severity for c in CODES.values()} <= {diagnoses.ERROR, diagnoses.WARNING, diagnoses.INFO}


def _a_node_with_every_problem(path):
    """A node whose functions and mdevs show most of the scan's codes (noted on each line)."""
    node = SysfsTree(path)
    (node.sys / "bus/pci/devices/0000:99:00.0").mkdir()  # not-a-device-link
    node.add_function("0000:01:00.0", pci_class="0x" + "3" * MAX_SYSFS_ATTR_BYTES, iommu_group="1")  # unreadable-file
    node.add_function("0000:02:00.0", device="0x" + "2" * MAX_SYSFS_ATTR_BYTES, iommu_group="2")  # unreadable-device-id
    node.add_function("0000:03:00.0", device="0x2236 \n", iommu_group="3")  # unusual-device-id
    node.add_function("0000:04:00.0", iommu_group=None)  # no-iommu-group
    node.add_function("0000:05:00.0", device="0x1eb8\n", driver="nouveau", iommu_group="5")  # host-driver
    node.add_function("0000:06:00.0", device="0x1eb8\n", driver=None, iommu_group="6")  # no-driver
    node.add_function("0000:07:00.0", device="0x20b1\n", iommu_group="7")  # name-collision
    node.add_function("0000:08:00.0", device="0x20f1\n", iommu_group="8")
    node.add_function(
        "0000:08:00.1", device="0x1aef\n", pci_class="0x040300\n", driver="snd_hda_intel", iommu_group="8"
    )
    node.add_function("0000:09:00.0", device="0x24fa\n", iommu_group="9")  # invalid-resource-name (v1.5.0)
    node.add_function("0000:0a:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="10")
    node.add_mdev(
        "11111111-0000-4000-8000-000000000001", "0000:0a:00.0", "A" * 63 + "\n", "nvidia-1"
    )  # socket-path-too-long
    node.add_mdev("11111111-0000-4000-8000-000000000002", "0000:0a:00.0", None, "nvidia-2")  # mdev-without-type
    node.add_function("0000:0b:00.0", vendor="0x8086\n", device="0x3e92\n", driver="i915", iommu_group="11")
    node.add_mdev(
        "11111111-0000-4000-8000-000000000003", "0000:0b:00.0", "i915-GVTg_V5_4\n", "i915-4"
    )  # non-nvidia-mdev
    return node


def test_every_listed_code_is_one_the_scan_reports(tmp_path, monkeypatch):
    seen = []

    def note(result):
        seen.extend((d.code, d.severity) for d in result.diagnoses)

    node = _a_node_with_every_problem(tmp_path / "node")
    note(scan(node.root, "latest"))
    note(scan(node.root, "v1.5.0"))

    vgpus = SysfsTree(tmp_path / "vgpus")
    vgpus.add_function("0000:0a:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="10")
    vgpus.add_mdev("11111111-0000-4000-8000-000000000001", "0000:0a:00.0", "GRID T4-1Q\n", "nvidia-222")
    vgpus.add_mdev("11111111-0000-4000-8000-000000000002", "0000:0a:00.0", "GRID T4-2Q\n", "nvidia-223")
    vgpus.add_mdev("11111111-0000-4000-8000-000000000003", "0000:0a:00.0", "\n", "nvidia-224")
    note(scan(vgpus.root, "v1.1.1"))  # mdev-type-leak
    note(scan(vgpus.root, "v1.6.0"))  # mdev-type-looked-up ("" is the first NVIDIA device line)

    names = SysfsTree(tmp_path / "names")
    names.add_function("0000:3b:00.0", device="0x2236\n", iommu_group="12")
    note(scan(names.root, "v1.0.0"))  # not-advertised
    note(scan(names.root, "v1.0.1"))  # unnamed-device

    grace = SysfsTree(tmp_path / "grace")
    grace.add_function("0009:01:00.0", device="0x2342\n", driver=NVGRACE_VFIO, iommu_group="9", bus="pci0009:00")
    note(scan(grace.root, "v1.4.0"))  # unsupported-vfio-driver

    crash = SysfsTree(tmp_path / "crash")
    crash.add_function(
        "0000:00:1f.0", vendor="8", device="0x0001\n", pci_class="0x060100\n", driver="lpc_ich", iommu_group="2"
    )
    note(scan(crash.root))  # plugin-crash

    # An mdev entry that is no link but has a type: only a tree changing
    # under the scan gives one; here readlink is made to fail.
    parent = SysfsTree(tmp_path / "parent")
    parent.add_function("0000:0a:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="10")
    parent.add_mdev("11111111-0000-4000-8000-000000000001", "0000:0a:00.0", "GRID T4-1Q\n")

    def no_link(*args):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))

    monkeypatch.setattr(rootfs, "link_target", no_link)
    note(scan(parent.root))  # mdev-parent-unknown
    monkeypatch.undo()

    sriov = SysfsTree(tmp_path / "sriov")
    sriov.add_function("0000:26:00.0", device="0x26b9\n", driver="nvidia", iommu_group="39")
    sriov.add_vf("0000:26:00.4", "0000:26:00.0", "ID : vGPU Name\n1155 : NVIDIA L40S-24Q\n", "1155\n")
    sriov.add_vf("0000:26:00.5", "0000:26:00.0", "ID : vGPU Name\n1152 : NVIDIA L40S-8Q\n", "1152\n", iommu_group="41")
    note(scan(sriov.root))  # sriov-vgpu-types-mixed

    seen += kata_codes_seen(tmp_path / "kata")  # the Kata plugin's (tests/host/test_scan_kata.py)
    seen += dra_codes_seen(tmp_path / "dra")  # the DRA driver's (tests/host/test_scan_dra.py)
    seen += doctor_codes_seen(tmp_path / "doctor")  # the host doctor's (tests/host/test_doctor.py)
    assert {code for code, _ in seen} == set(CODES)
    assert {(code, severity) for code, severity in seen} == {(code, c.severity) for code, c in CODES.items()}
