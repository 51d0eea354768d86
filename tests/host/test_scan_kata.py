"""``scan`` under Kata profiles: the node as NVIDIA's Kata sandbox device
plugin of each release sees it, on sysfs-shaped trees.

Every expected value is written from the upstream code
(NVIDIA/sandbox-device-plugin, pkg/device_plugin/device_plugin.go
createIommuDeviceMap / createDevicePlugins at v0.0.1 and v0.0.5, and the
go-nvlib nvpci it vendors) and from the names in pci.ids 2025.07.11:

* v0.0.1: every vendor-10de function whose driver link ends in exactly
  ``vfio-pci``, any class, keyed by IOMMU group; the first function of a
  group adds it to its device id; P_GPU_ALIAS read with Getenv (unset = "",
  per-model names by the vendor-section rule, which deletes ``-``).
* v0.0.2+: nvpci GetAllDevices (sorted by address as a hex number), only
  class 0x030000/0x030200/0x068000 on exactly ``vfio-pci``; P_GPU_ALIAS
  unset = ``pgpu``, NVSWITCH_ALIAS unset = ``nvswitch``; per-model names by
  formatDeviceName (keeps ``-``), UNKNOWN_DEVICE for ids go-nvlib's parse
  lacks.
"""

from __future__ import annotations

import json
import os

import pytest

from pciname.cli import main
from pciname.host.diagnoses import CODES
from pciname.host.sysfs import scan
from pciname.naming.profiles import get_profile, with_aliases
from tests.host.kata_nodes import V001, V005, a10_with_audio_and_a100, add, kata_codes_seen
from tests.sysfs_tree import SysfsTree

V004 = "sandbox-device-plugin@v0.0.4"
SOCKETS = "/var/lib/kubelet/device-plugins/"


def kata(profile, alias=None, nvswitch_alias=None):
    return with_aliases(get_profile(profile), alias, nvswitch_alias)


def resources(result):
    return [(r.resource_name, r.source, r.members, r.works, r.socket_path) for r in result.resources]


def codes(result):
    return [(d.code, d.subject) for d in result.diagnoses]


def by_address(result):
    return {f.address: f for f in result.functions}


@pytest.fixture
def tree(tmp_path):
    return SysfsTree(tmp_path / "node")


# -- two models on one node ------------------------------------------------------------


@pytest.mark.parametrize("profile", [V005, "gpu-operator@v26.7.0+kata", "gpu-operator@v26.3.0+kata"])
def test_two_models_under_the_default_alias_share_one_socket(tree, profile):
    a10_with_audio_and_a100(tree)
    result = scan(tree.root, profile)
    socket = SOCKETS + "sandbox-pgpu.sock"
    # One plugin per device id, both named pgpu (P_GPU_ALIAS unset): two
    # plugins on one socket, neither reliably served.
    assert resources(result) == [
        ("nvidia.com/pgpu", "10de:2236", ("12",), False, socket),
        ("nvidia.com/pgpu", "10de:20b5", ("87",), False, socket),
    ]
    assert codes(result) == [("not-gpu-class", "0000:3b:00.1"), ("shared-socket", "nvidia.com/pgpu")]
    shared = result.diagnoses[1]
    assert shared.severity == "error"
    for part in (
        "10de:2236 (GA102GL [A10]) and 10de:20b5 (GA100 [A100 PCIe 80GB])",
        "P_GPU_ALIAS is 'pgpu' (unset: the release default)",
        socket,
        "one model at a time",
        'P_GPU_ALIAS="" gives each model its own name (nvidia.com/GA102GL_A10, nvidia.com/GA100_A100_PCIE_80GB)',
        "one model per node",
    ):
        assert part in shared.message
    data = result.to_dict()
    assert data["plugin"] == "sandbox-device-plugin"
    assert data["aliases"] == {"P_GPU_ALIAS": "pgpu", "NVSWITCH_ALIAS": "nvswitch"}
    assert data["resources"][0]["socket_path"] == socket and data["resources"][0]["members"] == ["12"]
    funcs = by_address(result)
    assert funcs["0000:3b:00.0"].kubelet_id == "12" and funcs["0000:3b:00.0"].resource_name == "nvidia.com/pgpu"
    assert not funcs["0000:3b:00.1"].counted and funcs["0000:3b:00.1"].kubelet_id is None
    assert "0000:00:1f.2" not in funcs  # NVIDIA functions only


def test_two_models_under_an_empty_alias_get_their_own_names(tree):
    a10_with_audio_and_a100(tree)
    # 10de:2345 is "GH100 [GH100-88K-A1]": formatDeviceName keeps the '-'.
    add(tree, "0000:c1:00.0", device="0x2345\n", iommu_group="90")
    result = scan(tree.root, kata(V005, alias=""))
    assert resources(result) == [
        ("nvidia.com/GA102GL_A10", "10de:2236", ("12",), True, SOCKETS + "sandbox-GA102GL_A10.sock"),
        ("nvidia.com/GA100_A100_PCIE_80GB", "10de:20b5", ("87",), True, SOCKETS + "sandbox-GA100_A100_PCIE_80GB.sock"),
        ("nvidia.com/GH100_GH100-88K-A1", "10de:2345", ("90",), True, SOCKETS + "sandbox-GH100_GH100-88K-A1.sock"),
    ]
    assert codes(result) == [("not-gpu-class", "0000:3b:00.1")]
    assert result.errors == []
    assert result.to_dict()["aliases"] == {"P_GPU_ALIAS": "", "NVSWITCH_ALIAS": "nvswitch"}
    # v0.0.1 (P_GPU_ALIAS unset means per-model names) names by the
    # vendor-section rule: '-' deleted.
    old = scan(tree.root, V001)
    assert [r.resource_name for r in old.resources] == [
        "nvidia.com/GA102GL_A10",
        "nvidia.com/GA100_A100_PCIE_80GB",
        "nvidia.com/GH100_GH10088KA1",
    ]
    assert old.to_dict()["aliases"] == {"P_GPU_ALIAS": ""}


def test_one_alias_set_for_every_model_is_a_shared_socket_on_v001_too(tree):
    a10_with_audio_and_a100(tree)
    result = scan(tree.root, kata(V001, alias="gpu"))
    assert [(r.resource_name, r.source, r.works) for r in result.resources] == [
        ("nvidia.com/gpu", "10de:2236", False),
        ("nvidia.com/gpu", "10de:20b5", False),
    ]
    assert codes(result) == [("shared-socket", "nvidia.com/gpu")]
    assert "P_GPU_ALIAS is 'gpu' (as set)" in result.diagnoses[0].message


def test_unknown_models_share_the_unknown_device_name(tmp_path, tree):
    # A pci.ids of one's own naming only 10de:2236: go-nvlib names the other
    # two UNKNOWN_DEVICE, so even per-model names share a socket.
    pciids = tmp_path / "pci.ids"
    pciids.write_text("10de  NVIDIA Corporation\n\t2236  Custom-Name X\n")
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    add(tree, "0000:af:00.0", device="0x20b5\n", iommu_group="87")
    add(tree, "0000:b0:00.0", device="0x2330\n", iommu_group="88")
    code = main(["scan", "--sysfs-root", str(tree.root), "--pciids", str(pciids), "--algorithm", "go-nvlib"])
    assert code == 1  # pgpu for all three: shared socket
    result = scan(tree.root, with_aliases(_custom(pciids), alias=""))
    assert [(r.resource_name, r.source, r.works) for r in result.resources] == [
        ("nvidia.com/CUSTOM-NAME_X", "10de:2236", True),
        ("nvidia.com/UNKNOWN_DEVICE", "10de:20b5", False),
        ("nvidia.com/UNKNOWN_DEVICE", "10de:2330", False),
    ]
    found = codes(result)
    assert ("shared-socket", "nvidia.com/UNKNOWN_DEVICE") in found
    assert ("unnamed-device", "10de:20b5") in found and ("unnamed-device", "10de:2330") in found
    shared = next(d for d in result.diagnoses if d.code == "shared-socket")
    assert "keep one of the models per node" in shared.message


def _custom(path):
    from pciname.naming.profiles import custom_profile

    return custom_profile(path, "go-nvlib")


# -- NVSwitches: by sysfs class --------------------------------------------------------


def hgx_node(tree):
    # Two H100 SXM5 and an H100 NVSwitch (class 0x068000), each its own group.
    add(tree, "0000:18:00.0", device="0x2330\n", iommu_group="40")
    add(tree, "0000:2a:00.0", device="0x2330\n", iommu_group="41")
    add(tree, "0000:07:00.0", device="0x22a3\n", pci_class="0x068000\n", iommu_group="30")


def test_nvswitch_takes_its_own_alias(tree):
    hgx_node(tree)
    result = scan(tree.root, V005)
    # GetAllDevices sorts by address: the NVSwitch (07) comes first.
    assert resources(result) == [
        ("nvidia.com/nvswitch", "10de:22a3", ("30",), True, SOCKETS + "sandbox-nvswitch.sock"),
        ("nvidia.com/pgpu", "10de:2330", ("40", "41"), True, SOCKETS + "sandbox-pgpu.sock"),
    ]
    assert result.diagnoses == []
    named = scan(tree.root, kata(V005, alias="", nvswitch_alias="sw"))
    assert [r.resource_name for r in named.resources] == ["nvidia.com/sw", "nvidia.com/GH100_H100_SXM5_80GB"]
    per_model = scan(tree.root, kata(V005, alias="", nvswitch_alias=""))
    assert [r.resource_name for r in per_model.resources] == [
        "nvidia.com/GH100_H100_NVSWITCH",
        "nvidia.com/GH100_H100_SXM5_80GB",
    ]
    # v0.0.1 has no NVSwitch alias: unset, every device its per-model name.
    old = scan(tree.root, V001)
    assert [r.resource_name for r in old.resources] == [
        "nvidia.com/GH100_H100_NVSWITCH",
        "nvidia.com/GH100_H100_SXM5_80GB",
    ]


def test_the_class_read_from_sysfs_decides_what_an_nvswitch_is(tree):
    # An NVSwitch's id with a GPU class is a GPU (P_GPU_ALIAS); a GPU's id
    # with class 0x068000 is an NVSwitch (NVSWITCH_ALIAS).
    add(tree, "0000:07:00.0", device="0x22a3\n", pci_class="0x030200\n", iommu_group="30")
    add(tree, "0000:18:00.0", device="0x2330\n", pci_class="0x068000\n", iommu_group="40")
    result = scan(tree.root, V005)
    assert [(r.resource_name, r.source) for r in result.resources] == [
        ("nvidia.com/pgpu", "10de:22a3"),
        ("nvidia.com/nvswitch", "10de:2330"),
    ]


# -- what each release takes -----------------------------------------------------------


def test_audio_function_in_the_gpu_group(tree):
    a10_with_audio_and_a100(tree)
    new = scan(tree.root, kata(V005, alias=""))
    audio = by_address(new)["0000:3b:00.1"]
    assert not audio.counted and "class 0x040300" in audio.status
    assert next(d for d in new.diagnoses if d.subject == "0000:3b:00.1").severity == "info"
    # v0.0.1 takes any class: the audio function joins the GPU's group key,
    # and the GPU, read first, decided the group's device id.
    old = scan(tree.root, V001)
    audio = by_address(old)["0000:3b:00.1"]
    assert audio.counted and audio.kubelet_id is None and "with 0000:3b:00.0" in audio.status
    assert [(r.resource_name, r.members) for r in old.resources] == [
        ("nvidia.com/GA102GL_A10", ("12",)),
        ("nvidia.com/GA100_A100_PCIE_80GB", ("87",)),
    ]
    assert old.diagnoses == []


def test_the_first_function_of_a_group_decides_in_v001(tree):
    # The audio function is read first (lower address): v0.0.1 files the
    # group under the audio controller's device id; v0.0.5 skips it by class.
    add(tree, "0000:3b:00.0", device="0x1aef\n", pci_class="0x040300\n", iommu_group="12")
    add(tree, "0000:3b:00.1", device="0x2236\n", iommu_group="12")
    # An audio function alone in a group on vfio-pci: its own resource in v0.0.1.
    add(tree, "0000:af:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group="88")
    old = scan(tree.root, V001)
    assert [(r.resource_name, r.source, r.members) for r in old.resources] == [
        ("nvidia.com/GA102_HIGH_DEFINITION_AUDIO_CONTROLLER", "10de:1aef", ("12", "88")),
    ]
    assert "with 0000:3b:00.0" in by_address(old)["0000:3b:00.1"].status
    new = scan(tree.root, kata(V005, alias=""))
    assert [(r.resource_name, r.source, r.members) for r in new.resources] == [
        ("nvidia.com/GA102GL_A10", "10de:2236", ("12",)),
    ]
    assert codes(new) == [("not-gpu-class", "0000:3b:00.0"), ("not-gpu-class", "0000:af:00.1")]


def test_go_nvlib_orders_by_address_as_a_number(tree):
    # Two models in one group, in different PCI domains: the plugin's own
    # walk (v0.0.1) reads by name ("10000:..." before "2000:..."), go-nvlib
    # sorts by the address as a hex number (0x200000000 < 0x1000000000).
    add(tree, "10000:00:00.0", device="0x2236\n", iommu_group="7", bus="pci10000:00")
    add(tree, "2000:00:00.0", device="0x20b5\n", iommu_group="7", bus="pci2000:00")
    old = scan(tree.root, V001)
    assert [(r.source, r.members) for r in old.resources] == [("10de:2236", ("7",))]
    new = scan(tree.root, kata(V005, alias=""))
    assert [(r.source, r.members) for r in new.resources] == [("10de:20b5", ("7",))]
    assert [f.address for f in new.functions] == ["2000:00:00.0", "10000:00:00.0"]


def test_nvgrace_vfio_driver_is_skipped(tree):
    add(tree, "0009:01:00.0", device="0x2342\n", driver="nvgrace_gpu_vfio_pci", iommu_group="9", bus="pci0009:00")
    for profile in (V001, V005):
        result = scan(tree.root, profile)
        assert result.resources == [] and codes(result) == [("gpu-not-on-vfio-pci", "0009:01:00.0")], profile
        assert result.errors
    message = scan(tree.root, V005).diagnoses[0].message
    assert 'Skipping GPU 0009:01:00.0: driver is "nvgrace_gpu_vfio_pci", not vfio-pci' in message
    # The KubeVirt plugin takes it from v1.5.0: the same node differs.
    assert [r.source for r in scan(tree.root, "v1.5.0").resources] == ["10de:2342"]


def test_host_drivers(tree):
    # A GPU on nvidia, its audio function on snd_hda_intel in the same group.
    add(tree, "0000:3b:00.0", device="0x2236\n", driver="nvidia", iommu_group="12")
    add(tree, "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", driver="snd_hda_intel", iommu_group="12")
    old = scan(tree.root, V001)
    assert codes(old) == [("gpu-not-on-vfio-pci", "0000:3b:00.0"), ("function-not-on-vfio-pci", "0000:3b:00.1")]
    assert [d.severity for d in old.diagnoses] == ["error", "info"]
    new = scan(tree.root, V005)
    assert codes(new) == [("gpu-not-on-vfio-pci", "0000:3b:00.0"), ("not-gpu-class", "0000:3b:00.1")]
    # A GPU on vfio-pci whose audio function stays on the host driver: VFIO refuses the group.
    split = SysfsTree(tree.root.parent / "split")
    add(split, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    add(split, "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", driver="snd_hda_intel", iommu_group="12")
    assert ("iommu-group-split", "iommu_group 12") in codes(scan(split.root, V005))


def test_no_iommu_group(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group=None)
    add(tree, "0000:af:00.0", device="0x2236\n", iommu_group=None)
    old = scan(tree.root, V001)  # readLink fails: skipped
    assert old.resources == []
    assert codes(old) == [("no-iommu-group", "0000:3b:00.0"), ("no-iommu-group", "0000:af:00.0")]
    # go-nvlib reads group -1: both are kubelet device -1, the first registers it.
    new = scan(tree.root, V005)
    assert [(r.source, r.members) for r in new.resources] == [("10de:2236", ("-1",))]
    assert codes(new) == [("iommu-group-minus-one", "0000:3b:00.0"), ("iommu-group-minus-one", "0000:af:00.0")]


def test_iommufd_devices_are_the_kubelet_devices(tree):
    (tree.root / "dev").mkdir()
    (tree.root / "dev" / "iommu").write_text("")
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12", vfio_dev="vfio0")
    add(tree, "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group="12", vfio_dev="vfio1")
    add(tree, "0000:af:00.0", device="0x2236\n", iommu_group="87")  # no vfio-dev
    new = scan(tree.root, kata(V005, alias=""))
    # The iommufd number, "vfio" stripped; without one, the group number.
    assert [(r.source, r.members) for r in new.resources] == [("10de:2236", ("0", "87"))]
    assert new.iommufd is True and new.to_dict()["iommufd"] is True
    old = scan(tree.root, V001)
    # v0.0.1 keys by the vfio-dev name itself: one key per function, so the
    # audio function is a device of its own; without vfio-dev, skipped.
    assert [(r.source, r.members) for r in old.resources] == [("10de:2236", ("vfio0",)), ("10de:1aef", ("vfio1",))]
    assert codes(old) == [("no-iommufd-device", "0000:af:00.0")]


def test_go_nvlib_discovery_fails_on_a_file_it_needs(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    add(tree, "0000:af:00.0", device="0x2236\n", iommu_group="87", resource=None)
    new = scan(tree.root, V005)
    assert new.resources == [] and codes(new) == [("discovery-failed", "0000:af:00.0")]
    assert "resource" in new.diagnoses[0].message and "advertises nothing" in new.diagnoses[0].message
    # v0.0.1 reads no resource file.
    assert [(r.source, r.members) for r in scan(tree.root, V001).resources] == [("10de:2236", ("12", "87"))]


def test_go_nvlib_reads_every_vendor_file(tree):
    # A non-NVIDIA function without a vendor file: v0.0.1 skips it ("Could
    # not get vendor ID"), GetAllDevices fails on it.
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    add(
        tree,
        "0000:00:1f.2",
        vendor=None,
        device="0xa182\n",
        pci_class="0x010601\n",
        driver="ahci",
        iommu_group="5",
        resource=None,
    )
    assert [r.source for r in scan(tree.root, V001).resources] == ["10de:2236"]
    new = scan(tree.root, V005)
    assert new.resources == [] and codes(new) == [("discovery-failed", "0000:00:1f.2")]
    assert [f.status for f in new.functions] == ["not advertised: go-nvlib's discovery fails"]


def test_subsystem_files_are_read_from_v005(tree):
    path = add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    (path / "subsystem_vendor").write_text("zz\n")
    assert codes(scan(tree.root, V005)) == [("discovery-failed", "0000:3b:00.0")]
    assert [r.source for r in scan(tree.root, V004).resources] == ["10de:2236"]


def test_a_go_nvlib_panic_on_pci_ids_crashes_the_plugin(tmp_path, tree):
    pciids = tmp_path / "pci.ids"
    pciids.write_text("\t\t1028 0001  a subsystem before any device\n10de  NVIDIA Corporation\n")
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    result = scan(tree.root, _custom(pciids))
    assert result.resources == [] and codes(result) == [("plugin-crash", "0000:3b:00.0")]


# -- the command -----------------------------------------------------------------------


def test_scan_command_json_and_alias(capsys, tree):
    a10_with_audio_and_a100(tree)
    code = main(["scan", "--sysfs-root", str(tree.root), "-p", V005, "-o", "json"])
    out, err = capsys.readouterr()
    assert (code, err) == (1, "")
    data = json.loads(out)
    assert (data["profile"], data["plugin"], data["aliases"]) == (
        V005,
        "sandbox-device-plugin",
        {"P_GPU_ALIAS": "pgpu", "NVSWITCH_ALIAS": "nvswitch"},
    )
    assert [(r["resource_name"], r["members"], r["socket_path"]) for r in data["resources"]] == [
        ("nvidia.com/pgpu", ["12"], SOCKETS + "sandbox-pgpu.sock"),
        ("nvidia.com/pgpu", ["87"], SOCKETS + "sandbox-pgpu.sock"),
    ]
    assert data["mdevs"] == [] and data["classes"] == ["0x030000", "0x030200", "0x068000"]
    assert [d["code"] for d in data["diagnoses"]] == ["not-gpu-class", "shared-socket"]
    code = main(["scan", "--sysfs-root", str(tree.root), "-p", V005, "--alias", "", "-o", "json"])
    data = json.loads(capsys.readouterr().out)
    assert code == 0  # the audio function's note is information, not an error
    assert data["aliases"]["P_GPU_ALIAS"] == ""
    assert [(r["resource_name"], r["members"], r["socket_path"]) for r in data["resources"]] == [
        ("nvidia.com/GA102GL_A10", ["12"], SOCKETS + "sandbox-GA102GL_A10.sock"),
        ("nvidia.com/GA100_A100_PCIE_80GB", ["87"], SOCKETS + "sandbox-GA100_A100_PCIE_80GB.sock"),
    ]


def test_scan_command_table(capsys, tree):
    a10_with_audio_and_a100(tree)
    code = main(["scan", "--sysfs-root", str(tree.root), "-p", "gpu-operator@v26.7.0+kata"])
    out = capsys.readouterr().out
    assert code == 1
    lines = out.splitlines()
    assert lines[0].startswith("profile gpu-operator@v26.7.0+kata (sandbox-device-plugin); the plugin takes NVIDIA")
    assert "of class 0x030000, 0x030200, 0x068000 bound to exactly vfio-pci" in lines[0]
    assert "P_GPU_ALIAS='pgpu'" in lines[0]
    header = next(line for line in lines if line.startswith("RESOURCE"))
    assert header.split() == ["RESOURCE", "FROM", "COUNT", "WORKS", "DEVICE", "IDS", "SOCKET"]
    assert any(line.startswith("error: shared-socket: nvidia.com/pgpu: ") for line in lines)
    code = main(["scan", "--sysfs-root", str(tree.root), "-p", V001])
    assert "of any class bound to exactly vfio-pci" in capsys.readouterr().out.splitlines()[0]


def test_scan_command_bad_input(capsys, tmp_path):
    assert main(["scan", "--sysfs-root", str(tmp_path / "empty"), "-p", V005]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert main(["scan", "--sysfs-root", str(tmp_path), "-p", V001, "--nvswitch-alias", "x"]) == 2
    assert "NVSWITCH_ALIAS" in capsys.readouterr().err


# -- every Kata code is one the scan reports -------------------------------------------


def test_every_kata_code_is_seen(tmp_path):
    kata_codes = {
        "discovery-failed",
        "not-gpu-class",
        "gpu-not-on-vfio-pci",
        "function-not-on-vfio-pci",
        "iommu-group-minus-one",
        "no-iommufd-device",
        "shared-socket",
    }
    seen = kata_codes_seen(tmp_path)
    assert {code for code, _ in seen} == kata_codes  # and no other
    assert all(CODES[code].severity == severity for code, severity in seen)


def test_a_physfn_loop_crashes_go_nvlib(tree):
    # A VF whose physfn leads back to itself: getNvidiaDeviceByPciBusID
    # recurses (nothing cached yet) until Go's stack overflows.
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    os.symlink("../0000:3b:00.0", tree.device_dir("0000:3b:00.0") / "physfn")
    result = scan(tree.root, V005)
    assert result.resources == [] and codes(result) == [("plugin-crash", "0000:3b:00.0")]
    # v0.0.1 reads no physfn.
    assert [r.source for r in scan(tree.root, V001).resources] == ["10de:2236"]
