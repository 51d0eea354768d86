"""``scan --dra``: the vfio devices NVIDIA's DRA driver publishes in a node's
ResourceSlice, on sysfs-shaped trees, for every driver release in the facts.

Every expected value is written from the upstream code
(NVIDIA/k8s-dra-driver-gpu ``cmd/gpu-kubelet-plugin/nvlib.go``
``enumerateAllPossibleDevices``, ``enumerateGpuPciDevices`` (v25.12.0),
``enumerateGpuVfioDevices`` and ``getVfioDeviceInfo`` (v0.4.0),
``deviceinfo.go`` ``VfioDeviceInfo.GetDevice``, the vendored go-nvlib
``pkg/nvpci`` and ``k8s.io/dynamic-resource-allocation/deviceattribute``):

* devices ``gpu-vfio-<i>``, ``i`` the GPU's position among the NVIDIA
  functions of class 0x030000/0x030200 that are no VF, sorted by address;
* ``uuid`` = ``uuid.NewSHA1(uuid.NameSpaceDNS, address)`` (the values below
  were computed with Python's ``uuid.uuid5``, the same RFC 4122 name-based
  SHA-1 UUID);
* ``addressableMemory`` = the 64-bit BARs summed, rounded up to a power of
  two; ``productName`` go-nvlib's raw name from pci.ids 2025.07.11.
"""

from __future__ import annotations

import json
import os
import uuid

import pytest
import yaml

from pciname.capabilities.scan import ScanRequest, answer
from pciname.cli import main
from pciname.dra.claims import STABLE_ATTRIBUTES, predicted_device
from pciname.dra.facts import DraCombinationError, choose, drivers, facts, for_driver
from pciname.errors import PcinameError
from pciname.host.diagnoses import CODES
from pciname.host.dra_scan import binary_si, dra_scan
from tests.host.dra_nodes import (
    A10_RESOURCE,
    EMPTY,
    a10_and_audio,
    a10_audio_and_a100,
    add,
    dra_codes_seen,
    readme_commands,
    replay,
)
from tests.sysfs_tree import SysfsTree

PUBLISHING = [d for d in drivers() if facts()["driver_releases"][d]["vfio"]["publishes"]]
SILENT = [d for d in drivers() if not facts()["driver_releases"][d]["vfio"]["publishes"]]
A10_UUID = "5f36833e-54b9-5234-b457-89cdb0ccb109"


def codes(result):
    return [(d.code, d.subject) for d in result.diagnoses]


def statuses(result):
    return {f.address: f.status for f in result.functions}


@pytest.fixture
def tree(tmp_path):
    return SysfsTree(tmp_path / "node")


def test_the_release_list_has_both_kinds():
    # The facts hold releases that publish and releases that do not; the tests
    # below run over every one of them.
    assert PUBLISHING == ["v0.4.0", "v0.4.1", "main"]
    assert "v25.12.0" in SILENT


# -- v0.4.0: what it publishes --------------------------------------------------------


def test_v040_publishes_every_gpu_with_its_attributes(tree):
    a10_audio_and_a100(tree)
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    assert [(d.name, d.address, d.device) for d in result.devices] == [
        ("gpu-vfio-0", "0000:3b:00.0", "10de:2236"),
        ("gpu-vfio-1", "0000:af:00.0", "10de:20b5"),
    ]
    assert result.devices[0].attributes == {
        "type": "vfio",
        "uuid": A10_UUID,
        "deviceID": "0x2236",
        "vendorID": "0x10de",
        "numa": 0,
        "productName": "GA102GL [A10]",
        "iommuFDEnabled": False,
        "resource.kubernetes.io/pciBusID": "0000:3b:00.0",
        "resource.kubernetes.io/pcieRoot": "pci0000:00",
    }
    assert result.devices[0].capacity == {"addressableMemory": "64Gi"}
    a100 = result.devices[1].attributes
    assert (a100["numa"], a100["productName"]) == (1, "GA100 [A100 PCIe 80GB]")
    assert a100["uuid"] == str(uuid.uuid5(uuid.NAMESPACE_DNS, "0000:af:00.0"))
    assert (result.release, result.driver, result.gate, result.device_class) == (
        "v0.4.0",
        "gpu.nvidia.com",
        "PassthroughSupport",
        "vfio.gpu.nvidia.com",
    )
    # The audio function is read but is no GPU; the SATA controller is not NVIDIA's.
    assert statuses(result) == {
        "0000:3b:00.0": "published as gpu-vfio-0",
        "0000:3b:00.1": "class 0x040300: no GPU, not published",
        "0000:af:00.0": "published as gpu-vfio-1 (on nvidia: rebound to vfio-pci when a claim is prepared)",
    }
    assert codes(result) == [("dra-not-a-gpu", "0000:3b:00.1"), ("dra-gpu-on-nvidia", "0000:af:00.0")]
    assert result.errors == []
    assert any("embedded pci.ids 2025.07.11" in text for text in result.inferred)
    assert any("MIG devices" in text for text in result.inferred)


def test_the_slice_entry_has_typed_attributes(tree):
    a10_audio_and_a100(tree)
    entry = dra_scan(tree.root, for_driver("v0.4.0")).devices[0].slice_entry()
    assert entry["name"] == "gpu-vfio-0"
    assert entry["attributes"]["type"] == {"string": "vfio"}
    assert entry["attributes"]["numa"] == {"int": 0}
    assert entry["attributes"]["iommuFDEnabled"] == {"bool": False}
    assert entry["capacity"] == {"addressableMemory": {"value": "64Gi"}}


@pytest.mark.parametrize("release", PUBLISHING)
def test_the_attribute_names_are_the_releases(tree, release):
    # Each name the facts list for the release (the driver's own unqualified
    # in the slice), no other.
    add(tree, "0000:3b:00.0", device="0x2236\n")
    device = dra_scan(tree.root, for_driver(release)).devices[0]
    vfio = facts()["driver_releases"][release]["vfio"]
    # main's Fabric Manager attributes only with their gate (NVML and Fabric Manager, not sysfs): not scanned.
    published = [a for a in vfio["attributes"] if "only with gate" not in a["computed"]]
    assert set(device.attributes) == {a["name"].removeprefix("gpu.nvidia.com/") for a in published}
    assert set(device.capacity) == {c["name"].removeprefix("gpu.nvidia.com/") for c in vfio["capacity"]}


@pytest.mark.parametrize("release", PUBLISHING)
@pytest.mark.parametrize("device_id", ["2236", "20b5", "1eb8", "2331", "26b9", "ffff"])
def test_the_scanned_device_is_the_predicted_device(tree, release, device_id):
    # One truth: the stable attributes scan reads from sysfs equal those
    # dra.claims.predicted_device gives the claims for the same id (ffff: an
    # id go-nvlib's pci.ids does not name, UNKNOWN_DEVICE).
    add(tree, "0000:3b:00.0", device=f"0x{device_id}\n")
    device = dra_scan(tree.root, for_driver(release)).devices[0]
    predicted = predicted_device(device_id, choose(driver=release))
    assert {name: device.attributes[name] for name in STABLE_ATTRIBUTES} == predicted.attributes
    assert predicted.driver == "gpu.nvidia.com"
    if device_id == "ffff":
        assert device.attributes["productName"] == "UNKNOWN_DEVICE"


def test_the_index_counts_gpus_only_in_address_order(tree):
    # The audio function between the GPUs and an SR-IOV VF take no index;
    # the listing order (by name) is the address order here.
    add(tree, "0000:af:00.0", device="0x20b5\n", iommu_group="87")
    add(tree, "0000:3b:00.0", device="0x2236\n")
    add(tree, "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n")
    add(tree, "0000:5e:00.0", device="0x26b9\n", iommu_group="40")
    vf = add(tree, "0000:5e:00.4", device="0x26b9\n", iommu_group="41")
    os.symlink("../0000:5e:00.0", vf / "physfn")
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    assert [(d.name, d.address) for d in result.devices] == [
        ("gpu-vfio-0", "0000:3b:00.0"),
        ("gpu-vfio-1", "0000:5e:00.0"),
        ("gpu-vfio-2", "0000:af:00.0"),
    ]
    assert statuses(result)["0000:5e:00.4"] == "an SR-IOV VF: no GPU, not published"
    assert ("dra-not-a-gpu", "0000:5e:00.4") in codes(result)


def test_class_must_be_exactly_a_gpu_class(tree):
    # IsGPU compares the whole class: 0x030001 (a VGA programming interface)
    # and 0x038000 (a display controller) are no GPUs to go-nvlib.
    add(tree, "0000:3b:00.0", device="0x2236\n", pci_class="0x030001\n")
    add(tree, "0000:3c:00.0", device="0x2236\n", pci_class="0x038000\n")
    add(tree, "0000:3d:00.0", device="0x1eb8\n", pci_class="0x030000\n")
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    assert [(d.name, d.address) for d in result.devices] == [("gpu-vfio-0", "0000:3d:00.0")]


def test_iommufd_enabled_when_dev_iommu_exists(tree):
    (tree.root / "dev").mkdir(parents=True)
    (tree.root / "dev" / "iommu").write_text("")
    add(tree, "0000:3b:00.0", device="0x2236\n")
    assert dra_scan(tree.root, for_driver("v0.4.0")).devices[0].attributes["iommuFDEnabled"] is True


def test_pcie_root_is_the_first_directory_under_sys_devices(tree):
    # A GPU behind a bridge: the root is still the first component.
    add(tree, "0000:3b:00.0", device="0x2236\n", bus="pci0000:3a/0000:3a:00.0")
    add(tree, "0001:01:00.0", device="0x2236\n", bus="pci0001:00")
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    roots = [d.attributes["resource.kubernetes.io/pcieRoot"] for d in result.devices]
    assert roots == ["pci0000:3a", "pci0001:00"]


def test_an_absolute_bus_link_gives_no_pcie_root(tmp_path):
    from tests.host.dra_nodes import _rootless_node

    tree = SysfsTree(tmp_path / "node")
    _rootless_node(tree)
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    assert "resource.kubernetes.io/pcieRoot" not in result.devices[0].attributes
    assert codes(result) == [("dra-no-pcie-root", "0000:3b:00.0")]
    assert result.devices[0].attributes["resource.kubernetes.io/pciBusID"] == "0000:3b:00.0"


def test_a_gpu_on_no_driver_is_published_but_cannot_be_prepared(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n", driver=None)
    add(tree, "0000:3c:00.0", device="0x2236\n", driver="nouveau")
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    assert [d.name for d in result.devices] == ["gpu-vfio-0", "gpu-vfio-1"]
    assert codes(result) == [("dra-cannot-prepare", "0000:3b:00.0"), ("dra-cannot-prepare", "0000:3c:00.0")]
    assert statuses(result)["0000:3c:00.0"] == "published as gpu-vfio-1, but a claim for it fails (driver nouveau)"
    assert [d.severity for d in result.errors] == ["error", "error"]


# -- addressable memory -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("bars", "expected"),
    [
        ([], "0"),  # no 64-bit BAR
        (["0x0000038000000000 0x00000383ffffffff 0x000000000014220c"], "16Gi"),  # exactly 16 GiB: no rounding
        (
            [
                "0x0000038000000000 0x00000383ffffffff 0x000000000014220c",
                "0x0000038800000000 0x0000038801ffffff 0x000000000014220c",
            ],
            "32Gi",  # 16 GiB + 32 MiB, rounded up
        ),
        (["0x00000000fb000000 0x00000000fbffffff 0x0000000000040200"], "0"),  # 32-bit memory only
    ],
)
def test_addressable_memory_sums_64_bit_bars(tree, bars, expected):
    add(tree, "0000:3b:00.0", device="0x2236\n", resource="\n".join([*bars, *[EMPTY] * (13 - len(bars))]) + "\n")
    assert dra_scan(tree.root, for_driver("v0.4.0")).devices[0].capacity == {"addressableMemory": expected}


def test_a_seventh_region_is_not_a_bar(tree):
    # Only the first six regions are BARs (the ROM and SR-IOV BARs follow).
    lines = [EMPTY] * 6 + ["0x0000038000000000 0x00000383ffffffff 0x000000000014220c"] + [EMPTY] * 6
    add(tree, "0000:3b:00.0", device="0x2236\n", resource="\n".join(lines) + "\n")
    assert dra_scan(tree.root, for_driver("v0.4.0")).devices[0].capacity == {"addressableMemory": "0"}


@pytest.mark.parametrize(
    ("value", "text"),
    [(0, "0"), (512, "512"), (1000, "1k"), (1536, "1536"), (3072, "3Ki"), (1 << 35, "32Gi"), (1 << 60, "1Ei")],
)
def test_binary_si_is_kubernetes_canonical_form(value, text):
    assert binary_si(value) == text


# -- discovery fails: nothing is published ------------------------------------------------


def test_an_unreadable_file_of_any_nvidia_function_fails_discovery(tmp_path):
    from tests.host.dra_nodes import _numaless_audio_node

    tree = SysfsTree(tmp_path / "node")
    _numaless_audio_node(tree)
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    assert result.devices == []
    assert codes(result) == [("dra-discovery-failed", "0000:3b:00.1")]
    assert "unable to read PCI numa_node" in result.diagnoses[0].message
    assert result.inferred == ()


def test_a_mellanox_function_is_read_too(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n")
    add(tree, "0000:4b:00.0", vendor="0x15b3\n", device="0x101d\n", pci_class="0x020000\n", resource=None)
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    assert result.devices == []
    assert codes(result) == [("dra-discovery-failed", "0000:4b:00.0")]
    assert statuses(result) == {"0000:3b:00.0": "not published: the driver's discovery fails"}


def test_a_resource_line_of_other_than_three_fields_fails_discovery(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n", resource=A10_RESOURCE.replace(EMPTY, "0x0 0x0", 1))
    assert codes(dra_scan(tree.root, for_driver("v0.4.0"))) == [("dra-discovery-failed", "0000:3b:00.0")]


def test_an_upper_case_address_fails_v040_discovery(tree):
    # GetPCIBusIDAttribute's error is getVfioDeviceInfo's, which fails discovery.
    add(tree, "0000:3B:00.0", device="0x2236\n")
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    assert result.devices == []
    assert codes(result) == [("dra-discovery-failed", "0000:3B:00.0")]


def test_a_physfn_loop_crashes(tree):
    a = add(tree, "0000:3b:00.0", device="0x2236\n")
    b = add(tree, "0000:3c:00.0", device="0x2236\n")
    os.symlink("../0000:3c:00.0", a / "physfn")
    os.symlink("../0000:3b:00.0", b / "physfn")
    result = dra_scan(tree.root, for_driver("v0.4.0"))
    assert result.devices == []
    assert "stack overflows" in result.diagnoses[0].message


# -- releases that publish nothing -------------------------------------------------------


@pytest.mark.parametrize("release", SILENT)
def test_releases_without_working_vfio_code_publish_nothing(tree, release):
    a10_audio_and_a100(tree)
    result = dra_scan(tree.root, for_driver(release))
    assert result.devices == []
    assert codes(result) == [("dra-no-vfio-devices", release)]
    message = result.diagnoses[0].message
    vfio = facts()["driver_releases"][release]["vfio"]
    if vfio["code"]:
        # v25.12.0: the vfio code is there, the bug skips every GPU.
        assert message.startswith(f"DRA driver {release} publishes no vfio device on any node, even with ")
        assert "PassthroughSupport=true: a bug: enumerateGpuPciDevices flattens its own new empty map" in message
        assert result.device_class == "vfio.gpu.nvidia.com"
    else:
        assert "no cmd/gpu-kubelet-plugin/vfio-device.go" in message
        assert (result.gate, result.device_class) == (None, None)
    assert statuses(result) == {
        "0000:3b:00.0": "not published: a GPU, but the release publishes none",
        "0000:3b:00.1": "not published: no GPU",
        "0000:af:00.0": "not published: a GPU, but the release publishes none",
    }


def test_every_dra_code_is_seen(tmp_path):
    seen = dra_codes_seen(tmp_path)
    dra = {code: c for code, c in CODES.items() if code.startswith("dra-")}
    assert {code for code, _ in seen} == set(dra)
    assert {(code, severity) for code, severity in seen} == {(code, c.severity) for code, c in dra.items()}


# -- the request, the library and the CLI ------------------------------------------------


def test_the_request_scans_the_newest_publishing_release_by_default(tree):
    a10_audio_and_a100(tree)
    scanned = answer(ScanRequest(str(tree.root), dra=True).validated())
    assert scanned.result is None
    assert scanned.dra is not None
    assert scanned.dra.release == "v0.4.1"  # the newest tagged release, not main
    assert [d.name for d in scanned.dra.devices] == ["gpu-vfio-0", "gpu-vfio-1"]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (ScanRequest(dra=True, dra_driver="v9.9.9"), "--dra-driver 'v9.9.9': no such release"),
        (ScanRequest(dra_driver="v0.4.0"), "--dra-driver is for scan --dra"),
        (ScanRequest(dra=True, profile="v1.5.0"), "scan --dra takes no profile"),
        (ScanRequest(dra=True, mdev_config=("A10-24Q",)), "scan --dra takes no profile and no --mdev-config"),
    ],
)
def test_the_request_refuses_what_cannot_be(request_, message):
    with pytest.raises(PcinameError, match=message.replace("(", r"\(")):
        request_.validated()


def test_an_unknown_release_is_a_combination_error():
    with pytest.raises(DraCombinationError):
        for_driver("v0.6.0")


def test_cli_json_and_yaml(tree, capsys):
    a10_audio_and_a100(tree)
    assert main(["scan", "--dra", "--sysfs-root", str(tree.root), "-o", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["dra_driver"] == "v0.4.1"
    assert shown["devices"][0]["name"] == "gpu-vfio-0"
    assert shown["devices"][0]["attributes"]["deviceID"] == {"string": "0x2236"}
    assert shown["devices"][0]["pciAddress"] == "0000:3b:00.0"
    assert [d["code"] for d in shown["diagnoses"]] == ["dra-not-a-gpu", "dra-gpu-on-nvidia"]
    assert main(["scan", "--dra", "--sysfs-root", str(tree.root), "-o", "yaml"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == shown


def test_cli_table(tree, capsys):
    a10_audio_and_a100(tree)
    assert main(["scan", "--dra", "--dra-driver", "0.4.0", "--sysfs-root", str(tree.root)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(
        "DRA driver gpu.nvidia.com v0.4.0, vfio GPUs with its feature gate PassthroughSupport=true (default false); "
        "DeviceClass vfio.gpu.nvidia.com\n"
    )
    assert "device gpu-vfio-0 (0000:3b:00.0, 10de:2236)\n" in out
    assert f"uuid                             string    {A10_UUID}\n" in out
    assert "iommuFDEnabled                   bool      false\n" in out
    assert "addressableMemory                quantity  64Gi\n" in out


def test_cli_exit_codes(tree, capsys):
    a10_audio_and_a100(tree)
    root = str(tree.root)
    assert main(["scan", "--dra", "--dra-driver", "v25.12.0", "--sysfs-root", root]) == 1
    assert "error: dra-no-vfio-devices: v25.12.0: " in capsys.readouterr().out
    for args in (
        ["--dra", "--dra-driver", "v0.6.0"],
        ["--dra-driver", "v0.4.0"],
        ["--dra", "--profile", "latest"],
        ["--dra", "--alias", "x"],
    ):
        assert main(["scan", *args, "--sysfs-root", root]) == 2
        err = capsys.readouterr().err
        assert err.startswith("pciname: error: ") and err.count("\n") == 1, err
    assert main(["scan", "--dra", "--sysfs-root", str(tree.root / "nowhere")]) == 2
    assert "no such directory" in capsys.readouterr().err


def test_readme_transcripts_replay(tmp_path):
    # README.md's scan --dra transcripts, on the node they show.
    from tests.conftest import REPO

    commands = readme_commands("--sysfs-root /tmp/dra-node")
    assert len(commands) == 2
    tree = SysfsTree(tmp_path / "dra-node")
    a10_and_audio(tree)
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(REPO), "HOME": str(tmp_path)}
    for command, shown in commands:
        assert replay(command.replace("/tmp/dra-node", str(tree.root)), tmp_path, env) == shown, command


def test_a_scan_under_main_says_it_rests_on_unreleased_main(tree):
    a10_audio_and_a100(tree)
    scanned = dra_scan(tree.root, for_driver("main"))
    assert scanned.inferred[0].startswith("DRA driver main is unreleased main (kubernetes-sigs/dra-driver-nvidia-gpu")
    assert scanned.devices[0].attributes["resource.kubernetes.io/numaNode"] == 0
    assert "numa" not in scanned.devices[0].attributes
    assert not any("unreleased" in text for text in dra_scan(tree.root, for_driver("v0.4.1")).inferred)
