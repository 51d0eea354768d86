"""Kata sandbox device plugin nodes for the scan tests: functions as the
kernel shows them, with the ``resource`` file go-nvlib reads, and nodes
that give every Kata diagnosis."""

from __future__ import annotations

from pciname.host.sysfs import scan
from tests.sysfs_tree import SysfsTree

V001 = "sandbox-device-plugin@v0.0.1"
V005 = "sandbox-device-plugin@v0.0.5"
# What a real function's resource file holds: lines of "start end flags".
RESOURCE = "0x00000000fb000000 0x00000000fbffffff 0x0000000000040200\n0x0000000000000000 0x0000000000000000 0x0\n"


def add(tree, address, resource=RESOURCE, vfio_dev=None, **kwargs):
    """A function as the kernel shows it, with the resource file go-nvlib reads."""
    path = tree.add_function(address, **kwargs)
    if resource is not None:
        (path / "resource").write_text(resource)
    if vfio_dev is not None:
        (path / "vfio-dev" / vfio_dev).mkdir(parents=True)
    return path


def a10_with_audio_and_a100(tree):
    # An A10 and its audio function in IOMMU group 12, an A100 80GB in 87,
    # all on vfio-pci; an Intel SATA controller on its host driver.
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    add(tree, "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group="12")
    add(tree, "0000:af:00.0", device="0x20b5\n", iommu_group="87")
    add(
        tree,
        "0000:00:1f.2",
        vendor="0x8086\n",
        device="0xa182\n",
        pci_class="0x010601\n",
        driver="ahci",
        iommu_group="5",
    )


def kata_codes_seen(tmp_path):
    """(code, severity) of every Kata diagnosis, from nodes that give each."""
    seen = []
    for name, build, profile in (
        ("shared", a10_with_audio_and_a100, V005),  # not-gpu-class, shared-socket
        ("hosts", _host_driver_node, V001),  # gpu-not-on-vfio-pci, function-not-on-vfio-pci
        ("groupless", _groupless_node, V005),  # iommu-group-minus-one
        ("iommufd", _iommufd_node, V001),  # no-iommufd-device
        ("failed", _resourceless_node, V005),  # discovery-failed
    ):
        tree = SysfsTree(tmp_path / name)
        build(tree)
        seen += [(d.code, d.severity) for d in scan(tree.root, profile).diagnoses]
    return seen


def _host_driver_node(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n", driver="nvidia", iommu_group="12")
    add(tree, "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", driver="snd_hda_intel", iommu_group="12")


def _groupless_node(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group=None)


def _iommufd_node(tree):
    (tree.root / "dev").mkdir(parents=True)
    (tree.root / "dev" / "iommu").write_text("")
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")


def _resourceless_node(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12", resource=None)
