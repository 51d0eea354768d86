"""permittedHostDevices, Cozystack values, node pools, VM gpus, mdev names."""

from __future__ import annotations

import pytest

from pciname.base.requests import parse_request
from pciname.cozystack.node_pool import node_pool
from pciname.errors import InvalidDeviceError, PcinameError, UnknownProfileError
from pciname.kubevirt.generate import (
    mdev_names,
    pci_selector,
    permitted_host_devices,
    render,
    vm_gpus,
)
from tests.conftest import LATEST

A10 = {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/GA102GL_A10", "externalResourceProvider": True}


def test_kubevirt_block_default_profile():
    snippet = permitted_host_devices(["10de:2236", "0x10DE:0x1EB8"], ["GRID T4-1Q", "NVIDIA A100-40C"])
    assert snippet.profile == LATEST
    assert snippet.data == {
        "pciHostDevices": [
            A10,
            {
                "pciVendorSelector": "10DE:1EB8",
                "resourceName": "nvidia.com/TU104GL_TESLA_T4",
                "externalResourceProvider": True,
            },
        ],
        "mediatedDevices": [
            {
                "mdevNameSelector": "GRID T4-1Q",
                "resourceName": "nvidia.com/GRID_T4-1Q",
                "externalResourceProvider": True,
            },
            {
                "mdevNameSelector": "NVIDIA A100-40C",
                "resourceName": "nvidia.com/NVIDIA_A100-40C",
                "externalResourceProvider": True,
            },
        ],
    }
    assert snippet.left_out == () and snippet.notes == ()


def test_duplicates_are_dropped_and_order_kept():
    snippet = permitted_host_devices(["10de:1eb8", "10DE:2236", "10de:1EB8"], ["GRID T4-1Q", "GRID T4-1Q"])
    assert [e["pciVendorSelector"] for e in snippet.data["pciHostDevices"]] == ["10DE:1EB8", "10DE:2236"]
    assert len(snippet.data["mediatedDevices"]) == 1


def test_only_mdevs_gives_no_pci_list():
    assert permitted_host_devices([], ["GRID T4-1Q"]).data == {
        "mediatedDevices": [
            {
                "mdevNameSelector": "GRID T4-1Q",
                "resourceName": "nvidia.com/GRID_T4-1Q",
                "externalResourceProvider": True,
            }
        ]
    }


def test_profile_names_follow_the_release():
    old = permitted_host_devices(["10de:2330"], profile="gpu-operator@v23.9.2")
    new = permitted_host_devices(["10de:2330"], profile="latest")
    assert old.data["pciHostDevices"][0]["resourceName"] == "nvidia.com/GH100H100_SXM5_80GB"
    assert new.data["pciHostDevices"][0]["resourceName"] == "nvidia.com/GH100_H100_SXM5_80GB"
    assert old.profile == "gpu-operator@v23.9.2"
    assert new.profile == LATEST


def test_kubelet_invalid_name_is_left_out_unless_asked():
    snippet = permitted_host_devices(["10de:2236", "10de:24fa"], profile="latest")
    assert snippet.data["pciHostDevices"] == [A10]
    (skipped,) = snippet.left_out
    assert skipped.item == "10de:24fa"
    assert skipped.resource_name == "nvidia.com/GA104_RTX_A4500_EMBEDDED_GPU_"
    assert skipped.codes == ("invalid-resource-name",)
    assert "ends with '_'" in skipped.reasons[0].message
    kept = permitted_host_devices(["10de:2236", "10de:24fa"], profile="latest", include_broken=True)
    assert [e["resourceName"] for e in kept.data["pciHostDevices"]] == [
        "nvidia.com/GA102GL_A10",
        "nvidia.com/GA104_RTX_A4500_EMBEDDED_GPU_",
    ]
    assert kept.left_out == snippet.left_out  # still reported


def test_socket_path_too_long_is_left_out():
    # 10de:05be's name is 88 characters: kubelet refuses it and the socket path is too long.
    snippet = permitted_host_devices(["10de:05be"])
    assert "pciHostDevices" not in snippet.data
    assert set(snippet.left_out[0].codes) == {"invalid-resource-name", "socket-path-too-long"}


def test_collision_between_requested_devices_leaves_both_out():
    snippet = permitted_host_devices(["10de:20b1", "10de:20f1", "10de:2236"])
    assert snippet.data["pciHostDevices"] == [A10]
    assert [s.item for s in snippet.left_out] == ["10de:20b1", "10de:20f1"]
    assert all(s.codes == ("name-collision",) for s in snippet.left_out)
    assert "10de:20f1, requested too" in snippet.left_out[0].reasons[0].message


def test_collision_with_a_device_not_requested_is_only_a_note():
    snippet = permitted_host_devices(["10de:20b1"])
    assert snippet.data["pciHostDevices"][0]["resourceName"] == "nvidia.com/GA100_A100_PCIE_40GB"
    assert snippet.left_out == ()
    (note,) = snippet.notes
    assert note.codes == ("name-collision",) and "10de:20f1" in note.reasons[0].message


def test_not_nvidia_is_left_out_even_with_include_broken():
    snippet = permitted_host_devices(["8086:0d58"], include_broken=True)
    assert snippet.data == {}
    assert snippet.left_out[0].codes == ("not-advertised",)


def test_v100_skips_unnamed_devices_and_v101_falls_back_to_the_id():
    skipped = permitted_host_devices(["10de:2236"], profile="v1.0.0")
    assert skipped.data == {} and skipped.left_out[0].codes == ("not-advertised",)
    fallback = permitted_host_devices(["10de:2236"], profile="v1.0.1")
    assert fallback.data["pciHostDevices"][0]["resourceName"] == "nvidia.com/2236"
    assert fallback.notes[0].codes == ("unnamed-device",)


def test_invalid_mdev_type_is_left_out():
    snippet = permitted_host_devices([], ["GRID T4-1Q ", ""])
    assert snippet.data == {}
    assert [s.item for s in snippet.left_out] == ["GRID T4-1Q ", ""]
    assert snippet.left_out[0].resource_name == "nvidia.com/GRID_T4-1Q_"


def test_bad_input_raises():
    with pytest.raises(InvalidDeviceError):
        permitted_host_devices(["10de:22"])
    with pytest.raises(UnknownProfileError):
        permitted_host_devices(["10de:2236"], profile="v9.9.9")


def test_render_formats():
    block = {"pciHostDevices": [A10]}
    assert render(block, "kubevirt") == {"permittedHostDevices": block}
    assert render(block, "cozystack") == {"gpu": {"permittedHostDevices": block}}
    assert render(block, "cozystack", replace_defaults=True) == {
        "gpu": {"replaceDefaults": True, "permittedHostDevices": block}
    }
    assert render(block, "patch") == {"spec": {"configuration": {"permittedHostDevices": block}}}
    with pytest.raises(PcinameError):
        render(block, "helm")


def test_pci_selector_spelling():
    assert pci_selector("0x10de:0x2236") == "10DE:2236"
    assert pci_selector("1eb8") == "10DE:1EB8"


def test_mdev_names():
    (a100, t4, bad) = mdev_names(["NVIDIA A100-40C", "GRID T4-1Q\n", "GRID\tT4 \t1Q "])
    assert a100["resource_name"] == "nvidia.com/NVIDIA_A100-40C"
    assert a100["env_var"] == "MDEV_PCI_RESOURCE_NVIDIA_COM_NVIDIA_A100-40C"
    assert a100["advertised"] and a100["warnings"] == []
    assert t4["resource_name"] == "nvidia.com/GRID_T4-1Q"
    assert bad["resource_name"] == "nvidia.com/GRID_T4_1Q_"
    assert not bad["advertised"] and bad["warnings"][0]["code"] == "invalid-resource-name"


def test_parse_request():
    assert parse_request("10de:2236") == ("10de:2236", 1)
    assert parse_request(" 10de:2236=3 ") == ("10de:2236", 3)
    assert parse_request("nvidia.com/GRID_T4-1Q=2") == ("nvidia.com/GRID_T4-1Q", 2)
    for bad in ("10de:2236=0", "10de:2236=x", "10de:2236=", "", "=2"):
        with pytest.raises(PcinameError):
            parse_request(bad)


def test_node_pool_one_entry_per_gpu():
    snippet = node_pool(
        "md0", [("10de:2236", 2), ("nvidia.com/TU104GL_TESLA_T4", 1)], mdevs=[("GRID T4-1Q", 1)], fragment=True
    )
    assert snippet.data == {
        "nodeGroups": {
            "md0": {
                "gpus": [
                    {"name": "nvidia.com/GA102GL_A10"},
                    {"name": "nvidia.com/GA102GL_A10"},
                    {"name": "nvidia.com/TU104GL_TESLA_T4"},
                    {"name": "nvidia.com/GRID_T4-1Q"},
                ]
            }
        }
    }


def test_node_pool_leaves_out_broken_names():
    snippet = node_pool("gpu", [("10de:05be", 1), ("nvidia.com/BAD_", 2), ("10de:2236", 1)])
    assert snippet.data["nodeGroups"]["gpu"]["gpus"] == [{"name": "nvidia.com/GA102GL_A10"}]
    assert [s.item for s in snippet.left_out] == ["10de:05be", "nvidia.com/BAD_"]
    with pytest.raises(PcinameError):
        node_pool(" ", [("10de:2236", 1)])


def test_vm_gpus_names_and_order():
    snippet = vm_gpus([("10de:2236", 2)], mdevs=[("NVIDIA A100-40C", 1)], prefix="gpu")
    assert snippet.data == {
        "gpus": [
            {"name": "gpu1", "deviceName": "nvidia.com/GA102GL_A10"},
            {"name": "gpu2", "deviceName": "nvidia.com/GA102GL_A10"},
            {"name": "gpu3", "deviceName": "nvidia.com/NVIDIA_A100-40C"},
        ]
    }


def test_snippet_to_dict_is_plain_data():
    import json

    snippet = permitted_host_devices(["10de:2236", "10de:05be"], ["GRID T4-1Q"])
    data = json.loads(json.dumps(snippet.to_dict()))
    assert data["profile"] == LATEST
    assert data["data"]["pciHostDevices"] == [A10]
    assert data["left_out"][0]["item"] == "10de:05be"
    assert {r["code"] for r in data["left_out"][0]["reasons"]} == {"invalid-resource-name", "socket-path-too-long"}
