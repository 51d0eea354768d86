"""scan reads what the node offers: each GPU's mdev_supported_types and each
SR-IOV VF's nvidia/creatable_vgpu_types and current_vgpu_type, on sysfs
trees built from the documented layouts with files copied from real hosts
(Harvester's pcidevices testdata: tests/data/harvester-gpuhelper-sysfs.source.txt)."""

from __future__ import annotations

import json
import shutil
import tarfile
from pathlib import Path

import pytest
import yaml

from pciname.cli import main
from pciname.errors import PcinameError
from pciname.host.diagnoses import SRIOV_VGPU_TYPES_MIXED
from pciname.host.offered import mdev_config, parse_creatable
from pciname.host.sysfs import scan, scan_requests
from tests.conftest import TEST_DATA
from tests.sysfs_tree import SysfsTree

HARVESTER = "pkg/util/gpuhelper/testdata/sys"
A2_PF = "0000:08:01.7"  # the address Harvester's files were copied from
L40S_PF, L40S_VF = "0000:26:00.0", "0000:26:00.4"


@pytest.fixture(scope="module")
def harvester(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("harvester")
    with tarfile.open(TEST_DATA / "harvester-gpuhelper-sysfs.tar.xz") as tar:
        tar.extractall(out, filter="data")
    return out / HARVESTER


def node(tmp_path: Path, harvester: Path, *, vf_current: str | None = None) -> SysfsTree:
    """An A2 on the nvidia driver with Harvester's real mdev_supported_types,
    and an L40S PF with one VF holding Harvester's real creatable_vgpu_types."""
    tree = SysfsTree(tmp_path / "node")
    a2 = harvester / "class" / "mdev_bus" / A2_PF
    path = tree.add_function(
        A2_PF,
        device=(a2 / "device").read_text(),
        vendor=(a2 / "vendor").read_text(),
        pci_class=(a2 / "class").read_text(),
        driver="nvidia",
        iommu_group="21",
    )
    shutil.copytree(a2 / "mdev_supported_types", path / "mdev_supported_types")
    tree.add_function(L40S_PF, device="0x26b9\n", driver="nvidia", iommu_group="39")
    vf = harvester / "bus" / "pci" / "devices" / L40S_VF / "nvidia"
    current = vf_current if vf_current is not None else (vf / "current_vgpu_type").read_text()
    tree.add_vf(L40S_VF, L40S_PF, (vf / "creatable_vgpu_types").read_text(), current)
    return tree


def test_mdev_supported_types_are_read_exactly(tmp_path, harvester):
    result = scan(node(tmp_path, harvester).root)
    mdevs = [o for o in result.offered if o.kind == "mdev"]
    assert len(mdevs) == 15 and {o.address for o in mdevs} == {A2_PF}
    a2_4q = next(o for o in mdevs if o.type_id == "nvidia-746")
    assert (a2_4q.name, a2_4q.available_instances, a2_4q.device_api) == ("NVIDIA A2-4Q", 1, "vfio-pci")
    assert a2_4q.resource_name == "nvidia.com/NVIDIA_A2-4Q"
    assert a2_4q.device == "10de:25b6" and a2_4q.catalogue_max == 4
    # B and A series: real types the catalogue (C and Q only) does not list
    assert next(o for o in mdevs if o.name == "NVIDIA A2-1B").catalogue_max is None


def test_sriov_creatable_types_are_read_exactly(tmp_path, harvester):
    result = scan(node(tmp_path, harvester).root)
    sriov = [o for o in result.offered if o.kind == "sriov"]
    assert len(sriov) == 23 and {(o.address, o.physfn) for o in sriov} == {(L40S_VF, L40S_PF)}
    l40s = next(o for o in sriov if o.type_id == "1155")
    # NVIDIA's plugin reads only /sys/bus/mdev/devices: no resource of its own
    assert (l40s.name, l40s.resource_name, l40s.current) == ("NVIDIA L40S-24Q", None, False)
    assert l40s.catalogue_max == 2
    assert not any(o.current for o in sriov)  # current_vgpu_type 0: none


def test_parse_creatable_skips_the_header():
    text = "ID    : vGPU Name\n1155  : NVIDIA L40S-24Q\n\ngarbage\n2164  : NVIDIA L40S-3B\n"
    assert parse_creatable(text) == [("1155", "NVIDIA L40S-24Q"), ("2164", "NVIDIA L40S-3B")]


def test_mixed_sriov_types_under_one_device_id(tmp_path, harvester):
    tree = node(tmp_path, harvester, vf_current="1155\n")
    tree.add_vf("0000:26:00.5", L40S_PF, "ID    : vGPU Name\n1152  : NVIDIA L40S-8Q\n", "1152\n")
    result = scan(tree.root)
    (mixed,) = [d for d in result.diagnoses if d.code == SRIOV_VGPU_TYPES_MIXED]
    assert mixed.subject == "10de:26b9" and mixed.severity == "warning"
    assert "NVIDIA L40S-24Q on 0000:26:00.4" in mixed.message and "NVIDIA L40S-8Q on 0000:26:00.5" in mixed.message


def test_one_type_on_every_vf_is_fine(tmp_path, harvester):
    tree = node(tmp_path, harvester, vf_current="1155\n")
    tree.add_vf("0000:26:00.5", L40S_PF, "ID    : vGPU Name\n1155  : NVIDIA L40S-24Q\n", "1155\n")
    assert not [d for d in scan(tree.root).diagnoses if d.code == SRIOV_VGPU_TYPES_MIXED]


def test_mdev_config_uses_the_nodes_ids(tmp_path, harvester):
    result = scan(node(tmp_path, harvester).root)
    assert mdev_config(result.offered, ["A2-4Q", "NVIDIA A2-8Q"]) == {
        "mediatedDevicesConfiguration": {"mediatedDeviceTypes": ["nvidia-746", "nvidia-747"]}
    }
    with pytest.raises(PcinameError, match="only by SR-IOV VFs"):
        mdev_config(result.offered, ["L40S-24Q"])
    with pytest.raises(PcinameError, match="no mdev_supported_types"):
        mdev_config(result.offered, ["A10-24Q"])


def test_scan_cli_mdev_config_and_table(tmp_path, harvester, capsys):
    tree = node(tmp_path, harvester)
    assert main(["scan", "--sysfs-root", str(tree.root), "--mdev-config", "A2-4Q"]) == 0
    assert yaml.safe_load(capsys.readouterr().out) == {
        "mediatedDevicesConfiguration": {"mediatedDeviceTypes": ["nvidia-746"]}
    }
    main(["scan", "--sysfs-root", str(tree.root)])
    out = capsys.readouterr().out
    rows = [line.split() for line in out.splitlines()]
    assert [A2_PF, "mdev", "nvidia-746", "NVIDIA", "A2-4Q", "1", "nvidia.com/NVIDIA_A2-4Q"] in rows
    assert [L40S_VF, "sriov", "1155", "NVIDIA", "L40S-24Q", "-"] in rows
    main(["scan", "--sysfs-root", str(tree.root), "-o", "json"])
    assert len(json.loads(capsys.readouterr().out)["offered"]) == 38


def test_from_scan_offered_permits_offered_types(tmp_path, harvester, capsys):
    tree = node(tmp_path, harvester)
    requests = scan_requests(scan(tree.root), offered=True)
    assert "NVIDIA A2-4Q" in requests.mdev_types and len(requests.mdev_types) == 15
    assert any("SR-IOV" in line for line in requests.skipped)
    assert scan_requests(scan(tree.root)).mdev_types == []  # none created
    code = main(["permitted-host-devices", "--from-scan", str(tree.root), "--offered"])
    out = yaml.safe_load(capsys.readouterr().out)
    assert code == 0
    entry = {
        "mdevNameSelector": "NVIDIA A2-4Q",
        "resourceName": "nvidia.com/NVIDIA_A2-4Q",
        "externalResourceProvider": True,
    }
    assert entry in out["permittedHostDevices"]["mediatedDevices"]


def test_offered_needs_from_scan(capsys):
    assert main(["permitted-host-devices", "10de:2236", "--offered"]) == 2
    assert "--offered goes with --from-scan" in capsys.readouterr().err
