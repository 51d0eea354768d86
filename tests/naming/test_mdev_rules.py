"""vGPU resource names per plugin release (docs/naming.md, section 4): v1.0.x
keeps the second space-separated field of ``mdev_type/name`` (and panics
without one); v1.1.x and later turn white-space runs into ``_``. The rule on
generated strings, then every surface under a v1.0.1 and a v1.6.0 profile."""

from __future__ import annotations

import json
import textwrap

import pytest
from hypothesis import example, given, settings, strategies as st

from pciname.cozystack.node_pool import node_pool
from pciname.host.sysfs import scan
from pciname.kubevirt.generate import mdev_names, permitted_host_devices, vm_gpus
from pciname.lint.linter import lint_text
from pciname.naming import checks, gotext, mdev
from pciname.naming.profiles import custom_profile, get_profile, load_registry
from tests.cli_run import pciname as run
from tests.conftest import PLUGIN_PCIIDS, PROFILES_JSON
from tests.sysfs_tree import SysfsTree

OLD, NEW = "kubevirt-gpu-device-plugin@v1.0.1", "kubevirt-gpu-device-plugin@v1.6.0"

# -- the rule ---------------------------------------------------------------------

TYPE_TEXT = st.text(alphabet=[" ", "\t", "\n", "\r", "\f", "\v", "G", "T", "4", "-", "1", "Q", "é"], max_size=14)


@settings(max_examples=500, deadline=None)
@given(TYPE_TEXT)
@example("GRID T4-1Q")
@example("GRID T4-1Q\n")
@example("\n\nGRID T4-1Q\n\n")
@example("GRID  T4-1Q")
@example("GRID\tT4-1Q")
@example("GRID T4-1Q\r\n")
@example("T4")
@example("")
@example("\n")
@example(" ")
def test_fast_rules_equal_the_go_like_references(type_name):
    for rule in mdev.MDEV_NAME_RULES:
        assert mdev.type_string(type_name, rule) == mdev.type_string_reference(type_name, rule)
    assert mdev.mdev_resource(type_name, mdev.WHITESPACE_RUNS) == checks.mdev_resource_name(type_name)


@pytest.mark.parametrize(
    ("type_name", "second_field", "whitespace_runs"),
    [
        ("GRID T4-1Q", "T4-1Q", "GRID_T4-1Q"),
        ("GRID T4-1Q\n", "T4-1Q", "GRID_T4-1Q"),
        ("\nGRID T4-1Q\n\n", "T4-1Q", "GRID_T4-1Q"),
        ("NVIDIA A100-40C", "A100-40C", "NVIDIA_A100-40C"),
        ("NVIDIA A100 4-20C", "A100", "NVIDIA_A100_4-20C"),  # only field 1, nothing after it
        ("GRID  T4-1Q", "", "GRID_T4-1Q"),  # two spaces: an empty field
        ("GRID\tT4-1Q", None, "GRID_T4-1Q"),  # a tab is no space: no field 1
        ("GRID T4-1Q\r\n", "T4-1Q\r", "GRID_T4-1Q_"),  # only \n is trimmed
        ("GRID\t T4-1Q", "T4-1Q", "GRID_T4-1Q"),
        ("T4", None, "T4"),
        ("", None, ""),
        (" T4-1Q", "T4-1Q", "_T4-1Q"),
    ],
)
def test_the_two_rules(type_name, second_field, whitespace_runs):
    assert mdev.type_string(type_name, mdev.SECOND_FIELD) == second_field
    assert mdev.type_string(type_name, mdev.WHITESPACE_RUNS) == whitespace_runs


def test_warnings_by_rule():
    assert [w.code for w in mdev.mdev_warnings("T4", mdev.SECOND_FIELD)] == [checks.PLUGIN_CRASH]
    assert mdev.mdev_warnings("T4", mdev.WHITESPACE_RUNS) == []
    assert mdev.mdev_resource("GRID  T4-1Q", mdev.SECOND_FIELD) == "nvidia.com/"
    assert [w.code for w in mdev.mdev_warnings("GRID  T4-1Q", mdev.SECOND_FIELD)] == [checks.INVALID_RESOURCE_NAME]
    assert checks.PLUGIN_CRASH in checks.BLOCKING_CODES
    with pytest.raises(Exception, match="unknown mdev naming rule"):
        mdev.type_string("GRID T4-1Q", "upper")


# -- the rule as a per-release fact ---------------------------------------------------


def test_each_release_carries_its_rule():
    facts = json.loads(PROFILES_JSON.read_text(encoding="utf-8"))
    assert sorted(facts["mdev_names"]) == sorted(mdev.MDEV_NAME_RULES)
    for version, entry in facts["kubevirt_gpu_device_plugin"].items():
        expected = mdev.SECOND_FIELD if version.startswith("v1.0.") else mdev.WHITESPACE_RUNS
        assert entry["mdev_name"] == expected, version
        assert get_profile(version).mdev_name == expected
    for profile in load_registry().operator_releases():
        assert profile.mdev_name == get_profile(profile.plugin_release).mdev_name, profile.name
    assert get_profile("latest").mdev_name == mdev.WHITESPACE_RUNS
    assert get_profile("preview").mdev_name == mdev.WHITESPACE_RUNS
    assert custom_profile(PLUGIN_PCIIDS / "2019-08-14.ids", "whole-file-2019").mdev_name == mdev.WHITESPACE_RUNS


def test_an_empty_field_finds_no_name_in_the_v1_0_x_file():
    """v1.0.x looks the field up in pci.ids as if it were a device id; an
    empty field is contained in the first non-empty line, which Go's
    strings.Split(line, "") cuts into one part per character: only a line of
    exactly two characters would give a name. The 2019 file has none, so the
    field stays empty (``nvidia.com/``)."""
    lines = gotext.scan_lines((PLUGIN_PCIIDS / "2019-08-14.ids").read_text(encoding="utf-8"))
    first = next(gotext.trim_space(line) for line in lines if gotext.trim_space(line))
    assert len(first) != 2


# -- mdev-name ------------------------------------------------------------------------


def test_mdev_name_cli_by_release(capsys):
    assert run("mdev-name", "GRID T4-1Q", "--profile", "v1.0.1") == (0, "nvidia.com/T4-1Q\n", "")
    assert run("mdev-name", "GRID T4-1Q", "--profile", "v1.6.0") == (0, "nvidia.com/GRID_T4-1Q\n", "")
    code, out, err = run("mdev-name", "T4", "GRID  T4-1Q", "--profile", "v1.0.1", "-o", "json")
    assert code == 1
    crash, empty = json.loads(out)
    assert crash["resource_name"] is None and crash["env_var"] is None and crash["socket_path"] is None
    assert [w["code"] for w in crash["warnings"]] == ["plugin-crash"]
    assert empty["resource_name"] == "nvidia.com/"
    assert [w["code"] for w in empty["warnings"]] == ["invalid-resource-name"]
    code, out, err = run("mdev-name", "T4", "--profile", "v1.0.0")
    assert (code, out) == (1, "\n") and "plugin-crash" in err
    assert run("mdev-name", "T4", "--profile", "v1.6.0") == (0, "nvidia.com/T4\n", "")


def test_env_var_follows_the_name():
    old, new = mdev_names(["GRID T4-1Q"], OLD)[0], mdev_names(["GRID T4-1Q"], NEW)[0]
    assert old["env_var"] == "MDEV_PCI_RESOURCE_NVIDIA_COM_T4-1Q"
    assert old["socket_path"] == "/var/lib/kubelet/device-plugins/kubevirt-T4-1Q.sock"
    assert new["env_var"] == "MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q"
    assert mdev_names(["GRID T4-1Q"])[0] == new  # the default profile is the newest release


# -- generate ---------------------------------------------------------------------------


def test_permitted_host_devices_by_release():
    old = permitted_host_devices([], ["GRID T4-1Q", "T4", "GRID  A10-2Q"], OLD)
    assert old.data == {
        "mediatedDevices": [
            {"mdevNameSelector": "GRID T4-1Q", "resourceName": "nvidia.com/T4-1Q", "externalResourceProvider": True}
        ]
    }
    assert [(s.item, s.resource_name, s.codes) for s in old.left_out] == [
        ("T4", None, ("plugin-crash",)),
        ("GRID  A10-2Q", "nvidia.com/", ("invalid-resource-name",)),
    ]
    # include_broken keeps the refused name, never the crash (it has no name)
    kept = permitted_host_devices([], ["T4", "GRID  A10-2Q"], OLD, include_broken=True)
    assert [e["resourceName"] for e in kept.data["mediatedDevices"]] == ["nvidia.com/"]
    new = permitted_host_devices([], ["GRID T4-1Q", "T4"], NEW)
    assert [e["resourceName"] for e in new.data["mediatedDevices"]] == ["nvidia.com/GRID_T4-1Q", "nvidia.com/T4"]
    assert new.left_out == ()


def test_node_pool_and_vm_gpus_by_release():
    old = node_pool("gpu", [], OLD, mdevs=[("GRID T4-1Q", 2), ("T4", 1)], fragment=True)
    assert old.data == {"nodeGroups": {"gpu": {"gpus": [{"name": "nvidia.com/T4-1Q"}] * 2}}}
    assert [(s.item, s.codes) for s in old.left_out] == [("T4", ("plugin-crash",))]
    assert node_pool("gpu", [], OLD, True, mdevs=[("T4", 1)], fragment=True).data == {
        "nodeGroups": {"gpu": {"gpus": []}}
    }
    new = node_pool("gpu", [], NEW, mdevs=[("GRID T4-1Q", 1)], fragment=True)
    assert new.data == {"nodeGroups": {"gpu": {"gpus": [{"name": "nvidia.com/GRID_T4-1Q"}]}}}
    vm_old = vm_gpus([], OLD, mdevs=[("GRID T4-1Q", 1)], prefix="vgpu")
    vm_new = vm_gpus([], NEW, mdevs=[("GRID T4-1Q", 1)], prefix="vgpu")
    assert vm_old.data == {"gpus": [{"name": "vgpu1", "deviceName": "nvidia.com/T4-1Q"}]}
    assert vm_new.data == {"gpus": [{"name": "vgpu1", "deviceName": "nvidia.com/GRID_T4-1Q"}]}


def test_generate_cli_by_release(capsys):
    code, out, _ = run("vm-gpus", "--mdev", "GRID T4-1Q", "--profile", "v1.0.1", "-o", "json")
    assert code == 0 and json.loads(out)["gpus"][0]["deviceName"] == "nvidia.com/T4-1Q"
    code, out, _ = run("vm-gpus", "--mdev", "GRID T4-1Q", "--profile", "v1.6.0", "-o", "json")
    assert code == 0 and json.loads(out)["gpus"][0]["deviceName"] == "nvidia.com/GRID_T4-1Q"
    code, out, err = run("permitted-host-devices", "--mdev", "T4", "--profile", "v1.0.1", "-o", "json")
    assert code == 1 and "plugin-crash" in out + err


# -- lint ---------------------------------------------------------------------------------

KUBEVIRT = textwrap.dedent(
    """\
    apiVersion: kubevirt.io/v1
    kind: KubeVirt
    metadata:
      name: kubevirt
      namespace: kubevirt
    spec:
      configuration:
        permittedHostDevices:
          mediatedDevices:
          - mdevNameSelector: GRID T4-1Q
            resourceName: {t4}
            externalResourceProvider: true
          - mdevNameSelector: {bare}
            resourceName: nvidia.com/{bare}
            externalResourceProvider: true
    """
)


def lint_codes(text, profile, upgrade_to=None):
    return [(f.path, f.code, f.expected) for f in lint_text(text, "kv.yaml", profile, upgrade_to)]


def test_lint_by_release():
    old_names = KUBEVIRT.format(t4="nvidia.com/T4-1Q", bare="A10")
    new_names = KUBEVIRT.format(t4="nvidia.com/GRID_T4-1Q", bare="A10")
    selector = "spec.configuration.permittedHostDevices.mediatedDevices[1].mdevNameSelector"
    t4 = "spec.configuration.permittedHostDevices.mediatedDevices[0].resourceName"
    assert lint_codes(old_names, OLD) == [(selector, "plugin-crash", None)]
    assert lint_codes(new_names, NEW) == []
    assert lint_codes(new_names, OLD) == [
        (t4, "wrong-mdev-resource-name", "nvidia.com/T4-1Q"),
        (selector, "plugin-crash", None),
    ]
    assert lint_codes(old_names, NEW) == [(t4, "wrong-mdev-resource-name", "nvidia.com/GRID_T4-1Q")]
    messages = [f.message for f in lint_text(new_names, "kv.yaml", OLD)]
    assert "second space-separated field" in messages[0] and "panics" in messages[1]


def test_lint_upgrade_renames_vgpu_types():
    text = KUBEVIRT.format(t4="nvidia.com/T4-1Q", bare="GRID  A10-2Q").replace(
        "resourceName: nvidia.com/GRID  A10-2Q", "resourceName: nvidia.com/A10-2Q"
    )
    found = lint_codes(text, OLD, NEW)
    assert (
        "spec.configuration.permittedHostDevices.mediatedDevices[0].resourceName",
        "renamed-by-upgrade",
        "nvidia.com/GRID_T4-1Q",
    ) in found
    assert lint_codes(KUBEVIRT.format(t4="nvidia.com/GRID_T4-1Q", bare="A10"), "v1.1.1", NEW) == []


# -- scan ---------------------------------------------------------------------------------


def vgpu_tree(tmp_path, *type_names):
    tree = SysfsTree(tmp_path / "node")
    tree.add_function("0000:3b:00.0", device="0x1eb8\n", driver="nvidia", iommu_group="12")
    tree.add_function("0000:af:00.0", device="0x1db4\n", iommu_group="87")  # a passthrough V100
    for i, type_name in enumerate(type_names):
        tree.add_mdev(f"11111111-0000-4000-8000-00000000000{i}", "0000:3b:00.0", type_name, f"nvidia-{222 + i}")
    return tree


def resources(result):
    return {r.resource_name: (r.source, r.count, r.works) for r in result.resources}


def test_scan_by_release(tmp_path):
    tree = vgpu_tree(tmp_path, "GRID T4-1Q\n", "NVIDIA T4-1Q\n", "GRID T4-2Q\n")
    old, new = scan(tree.root, OLD), scan(tree.root, NEW)
    assert [d.code for d in old.diagnoses] == ["mdev-type-leak"] and new.diagnoses == []  # v1.0.x leaks between types
    # v1.0.x: two types with one second field are one resource
    assert resources(old) == {
        "nvidia.com/GV100GL_Tesla_V100_PCIe_16GB": ("10de:1db4", 1, True),
        "nvidia.com/T4-1Q": ("GRID T4-1Q", 2, True),
        "nvidia.com/T4-2Q": ("GRID T4-2Q", 1, True),
    }
    assert resources(new) == {
        "nvidia.com/GV100GL_TESLA_V100_PCIE_16GB": ("10de:1db4", 1, True),
        "nvidia.com/GRID_T4-1Q": ("GRID T4-1Q", 1, True),
        "nvidia.com/NVIDIA_T4-1Q": ("NVIDIA T4-1Q", 1, True),
        "nvidia.com/GRID_T4-2Q": ("GRID T4-2Q", 1, True),
    }
    assert {m.resource_name for m in old.mdevs} == {"nvidia.com/T4-1Q", "nvidia.com/T4-2Q"}


def test_scan_a_type_without_a_space_crashes_v1_0_x(tmp_path):
    tree = vgpu_tree(tmp_path, "GRID T4-1Q\n", "T4\n")
    old, new = scan(tree.root, OLD), scan(tree.root, NEW)
    assert [(d.code, d.subject) for d in old.diagnoses] == [("plugin-crash", "11111111-0000-4000-8000-000000000001")]
    assert all(not r.works for r in old.resources)  # nothing at all on the node, passthrough neither
    assert {r.resource_name for r in old.resources} == {"nvidia.com/GV100GL_Tesla_V100_PCIe_16GB", "nvidia.com/T4-1Q"}
    crashed = next(m for m in old.mdevs if m.type_name == "T4")
    assert crashed.resource_name is None and "panics" in crashed.status
    assert new.diagnoses == [] and all(r.works for r in new.resources)
    assert "nvidia.com/T4" in resources(new)


def test_scan_double_space_is_refused_in_v1_0_x(tmp_path):
    tree = vgpu_tree(tmp_path, "GRID  T4-1Q\n")
    old, new = scan(tree.root, OLD), scan(tree.root, NEW)
    assert [d.code for d in old.diagnoses] == ["invalid-resource-name"]
    assert resources(old)["nvidia.com/"] == ("GRID  T4-1Q", 1, False)
    assert resources(new)["nvidia.com/GRID_T4-1Q"] == ("GRID  T4-1Q", 1, True)


def test_scan_cli_by_release(tmp_path, capsys):
    tree = vgpu_tree(tmp_path, "T4\n")
    code_old, out_old, _ = run("scan", "--sysfs-root", tree.root, "--profile", "v1.0.1", "-o", "json")
    code_new, out_new, _ = run("scan", "--sysfs-root", tree.root, "--profile", "v1.6.0", "-o", "json")
    assert "plugin-crash" in out_old and "plugin-crash" not in out_new
    assert (code_old, code_new) == (1, 0)
