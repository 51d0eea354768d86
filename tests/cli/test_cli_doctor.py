"""``pciname scan --variant``: the host doctor through the real command
line (text, JSON, exit codes, one line for bad input)."""

from __future__ import annotations

import json

import pytest

from pciname.cli import main
from tests.host.doctor_nodes import HostTree, passthrough_node
from tests.sysfs_tree import SysfsTree


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def broken_passthrough(root) -> None:
    """nvidia-smi answers on the host, nouveau loaded, the IOMMU off (Intel, no intel_iommu=on)."""
    t = HostTree(root, cmdline="BOOT_IMAGE=/vmlinuz ro quiet")
    t.vfio()
    t.nvidia_driver()
    t.load("nouveau")
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="nvidia", iommu_group=None)


def test_a_healthy_passthrough_node(capsys, tmp_path):
    passthrough_node(tmp_path)
    code, out, err = run(capsys, "scan", "--sysfs-root", str(tmp_path), "--variant", "default")
    assert (code, err) == (0, "")
    assert out == (
        "variant default (nvidia.com/gpu.workload.config=vm-passthrough); as it is, the node could serve: default\n"
    )


def test_a_broken_passthrough_node_gives_each_finding_with_its_way_back(capsys, tmp_path):
    broken_passthrough(tmp_path)
    code, out, err = run(capsys, "scan", "--sysfs-root", str(tmp_path), "--variant", "default")
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0].endswith("the node could serve: none")
    found = [line.split(": ")[1] for line in lines if line.startswith("error: ")]
    assert found == ["nouveau-bound", "host-driver-preinstalled", "iommu-off"]
    assert (
        "  2. kubectl label node NODE nvidia.com/gpu.deploy.driver- (the pre-installed label stays otherwise)" in lines
    )
    assert "  Cozystack: Package cozystack.gpu-operator spec.variant: container" in lines


def test_json_and_every_variant(capsys, tmp_path):
    passthrough_node(tmp_path)
    code, out, err = run(capsys, "scan", "--sysfs-root", str(tmp_path), "--variant", "all", "-o", "json")
    answer = json.loads(out)
    assert (code, err) == (1, "")  # the container variant's findings are errors
    assert answer["servable"] == ["default"] and answer["variant"] is None
    assert {f["code"] for f in answer["findings"]} == {"container-needs-host-driver", "vgpu-manager-missing"}
    assert all(f["way_back"] for f in answer["findings"])


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (("--variant", "vgpu", "--dra"), "pciname: error: --variant goes without --dra\n"),
        (("--sysfs-root", "/nonexistent-i38", "--variant", "vgpu"), None),
    ],
)
def test_bad_input_is_one_line(capsys, argv, line):
    code, out, err = run(capsys, "scan", *argv)
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and err.startswith("pciname: error: ")
    if line is not None:
        assert err == line


def test_plain_scan_says_which_variants_the_node_could_serve(capsys, tmp_path):
    passthrough_node(tmp_path)
    code, out, err = run(capsys, "scan", "--sysfs-root", str(tmp_path))
    assert (code, err) == (0, "")
    assert out.endswith(
        "\nas it is, the node could serve the variants: default (scan --variant all: what stands in the others' way)\n"
    )
    code, out, err = run(capsys, "scan", "--sysfs-root", str(tmp_path), "-o", "json")
    assert json.loads(out)["variants"] == ["default"]


def test_plain_scan_of_a_broken_node_says_none(capsys, tmp_path):
    broken_passthrough(tmp_path)
    code, out, err = run(capsys, "scan", "--sysfs-root", str(tmp_path), "-o", "yaml")
    assert "\nvariants: []\n" in out


def test_plain_scan_of_sys_alone_says_nothing_of_the_variants(capsys, tmp_path):
    """A copy of sys/ without sys/module or proc/modules: the doctor cannot tell, so scan is as it was."""
    SysfsTree(tmp_path).add_function("0000:3b:00.0", pci_class="0x030200\n", driver="vfio-pci", iommu_group="12")
    code, out, err = run(capsys, "scan", "--sysfs-root", str(tmp_path))
    assert "RESOURCE OR WHY NOT" in out and "variants" not in out
    code, out, err = run(capsys, "scan", "--sysfs-root", str(tmp_path), "-o", "json")
    assert "variants" not in json.loads(out)
