"""``pciname vgpu-types`` and ``--vgpu TYPE[=COUNT]`` of the generators,
through the real command line."""

from __future__ import annotations

import json

import pytest
import yaml

from pciname.cli import main
from pciname.naming import vgpu
from tests.cli_run import pciname as run


def test_vgpu_types_json_fields(capsys):
    code, out, err = run("vgpu-types", "10de:2236", "-o", "json")
    assert code == 0 and err == ""
    answer = json.loads(out)
    assert answer["catalogue"]["commit"] == vgpu.catalogue().source["commit"]
    row = next(t for t in answer["types"] if t["type"] == "A10-24Q")
    assert row["max_instances"] == 1
    assert row["mdev_name"] == "NVIDIA A10-24Q"
    assert row["resource_name"] == "nvidia.com/NVIDIA_A10-24Q"
    assert row["vgpu_config"] == "A10-24Q"
    assert row["mdev_name_certainty"] == "observed"
    assert row["mdev_name_evidence"]["kind"] == "kubevirt-config"


def test_vgpu_types_under_v1_0_x(capsys):
    _code, out, _ = run("vgpu-types", "10de:1eb8", "-p", "v1.0.1", "-o", "yaml")
    row = next(t for t in yaml.safe_load(out)["types"] if t["type"] == "T4-16Q")
    assert (row["mdev_name"], row["resource_name"]) == ("GRID T4-16Q", "nvidia.com/T4-16Q")


def test_every_catalogue_device_through_the_cli(capsys):
    for device in vgpu.catalogue().devices:
        code, out, _ = run("vgpu-types", f"10de:{device}", "-o", "json")
        assert code == 0
        listed = json.loads(out)["types"]
        assert {t["vgpu_config"]: t["max_instances"] for t in listed} == {
            t.vgpu_config: t.max_instances for t in vgpu.device_types(device)
        }


def test_device_not_covered_is_one_line_exit_1(capsys):
    code, out, err = run("vgpu-types", "10de:2684")
    assert code == 1 and out == ""
    assert err.count("\n") == 1 and "v0.5.0" in err and "mdev_supported_types" in err


def test_unknown_prefix_in_table_names_the_command(capsys):
    code, out, _ = run("vgpu-types", "10de:2331")
    assert code == 0
    assert "unknown" in out and "cat /sys/bus/pci/devices/*/mdev_supported_types/*/name" in out


def test_help_says_which_prefixes_are_known(capsys):
    with pytest.raises(SystemExit):
        main(["vgpu-types", "--help"])
    out = capsys.readouterr().out
    assert "GRID" in out and "NVIDIA" in out and "unknown" in out and "mdev_supported_types" in " ".join(out.split())


def test_bad_device_is_exit_2(capsys):
    code, _, err = run("vgpu-types", "zz")
    assert code == 2 and err.startswith("pciname: error:")


@pytest.mark.parametrize(
    ("device", "wanted", "selector", "resource"),
    [
        ("10de:2236", "A10-24Q", "NVIDIA A10-24Q", "nvidia.com/NVIDIA_A10-24Q"),
        ("10de:1eb8", "T4-8Q", "GRID T4-8Q", "nvidia.com/GRID_T4-8Q"),
        ("10de:25b6", "A2-4Q", "NVIDIA A2-4Q", "nvidia.com/NVIDIA_A2-4Q"),
        ("10de:26b9", "L40S-24Q", "NVIDIA L40S-24Q", "nvidia.com/NVIDIA_L40S-24Q"),
    ],
)
def test_permitted_host_devices_vgpu(capsys, device, wanted, selector, resource):
    code, out, err = run("permitted-host-devices", device, "--vgpu", wanted)
    assert code == 0, err
    assert yaml.safe_load(out) == {
        "permittedHostDevices": {
            "mediatedDevices": [
                {"mdevNameSelector": selector, "resourceName": resource, "externalResourceProvider": True}
            ]
        }
    }


def test_vgpu_in_cozystack_values(capsys):
    code, out, _ = run(
        "permitted-host-devices", "10de:2236", "--vgpu", "A10-24Q", "--format", "cozystack", "--variant", "vgpu"
    )
    assert code == 0
    assert (
        yaml.safe_load(out)["gpu"]["permittedHostDevices"]["mediatedDevices"][0]["mdevNameSelector"] == "NVIDIA A10-24Q"
    )


def test_vm_gpus_and_node_pool_take_counts(capsys):
    code, out, _ = run("vm-gpus", "10de:2236", "--vgpu", "A10-12Q=2")
    assert code == 0
    assert [g["deviceName"] for g in yaml.safe_load(out)["gpus"]] == ["nvidia.com/NVIDIA_A10-12Q"] * 2
    code, out, _ = run("node-pool", "gpu", "10de:2236", "--vgpu", "A10-4Q=3", "--fragment")
    assert code == 0
    assert yaml.safe_load(out)["nodeGroups"]["gpu"]["gpus"] == [{"name": "nvidia.com/NVIDIA_A10-4Q"}] * 3


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (("permitted-host-devices", "10de:2236", "--vgpu", "T4-8Q"), "does not belong to 10de:2236"),
        (("permitted-host-devices", "10de:2331", "--vgpu", "H100-40C"), "unknown"),
        (("permitted-host-devices", "--vgpu", "A10-24Q"), "needs the GPUs"),
        (("vm-gpus", "10de:2236=2", "--vgpu", "A10-12Q"), "give the count to --vgpu"),
        (("permitted-host-devices", "10de:2236", "--vgpu", "A10-24Q=2"), "takes no COUNT"),
    ],
)
def test_vgpu_errors_are_one_line(capsys, argv, message):
    code, out, err = run(*argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and message in err
