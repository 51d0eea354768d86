"""Hostile sysfs trees for ``scan --dra`` and the Kata scan (issue 36, items
10 and 11): numbers past Python's ``int()`` digit limit, and chains of
``physfn`` links.

go-nvlib (``pkg/nvpci/nvpci.go``, as kubernetes-sigs/dra-driver-nvidia-gpu
v0.4.1 vendors it, commit 9036620f6c4f75476f2f27fd68c4de2c2901816b, go-nvlib
v0.11.0) parses ``vendor``, ``class`` and ``device`` with
``strconv.ParseUint(s, 0, bits)``, ``numa_node`` with ``ParseInt(s, 0, 64)``
and ``sriov_totalvfs``/``sriov_numvfs`` with ``ParseUint(s, 10, 16)``: a
value out of range is an error (ErrRange) and fails GetAllDevices. The
``resource`` lines' ParseUint errors are dropped and the value kept: 0 for a
syntax error, the largest uint64 for a value out of range. A VF's
``physfn`` is built by recursion, a VF never cached.
"""

from __future__ import annotations

import os

import pytest

from pciname.cli import main
from pciname.host import rootfs
from pciname.host.dra_scan import dra_scan
from pciname.host.sysfs import scan
from pciname.naming.gotext import go_int, go_parse_uint, go_uint
from tests.host import dra_nodes, kata_nodes
from tests.sysfs_tree import SysfsTree

#: A decimal number of 5,000 digits: over Python's 4,300-digit int() limit,
#: in a file of 5 KB (sysfs attributes are read up to 64 KiB).
HUGE = "1" * 5000
KATA = kata_nodes.V005


@pytest.fixture
def tree(tmp_path):
    return SysfsTree(tmp_path / "node")


def codes(result):
    return [(d.code, d.subject) for d in result.diagnoses]


# -- the one parser of Go numbers ------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "bits", "base", "expected"),
    [
        (HUGE, 16, 0, (0xFFFF, False)),  # ErrRange: the largest value
        (HUGE, 64, 10, ((1 << 64) - 1, False)),
        ("0" * 5000 + "7", 16, 10, (7, True)),  # leading zeros are no digits of the value
        ("0" * 5000 + "7", 16, 0, (7, True)),  # octal, as Go's base 0 reads a leading 0
        ("0x" + "0" * 5000 + "10de", 16, 0, (0x10DE, True)),
        ("0x" + "f" * 5000, 64, 0, ((1 << 64) - 1, False)),
        ("18446744073709551615", 64, 10, ((1 << 64) - 1, True)),
        ("18446744073709551616", 64, 10, ((1 << 64) - 1, False)),
        ("65536", 16, 0, (0xFFFF, False)),
        ("1" * 4999 + "x", 16, 0, (0, False)),  # ErrSyntax: 0
        ("", 16, 0, (0, False)),
    ],
)
def test_go_parse_uint_answers_as_strconv_does(text, bits, base, expected):
    assert go_parse_uint(text, bits, base) == expected
    assert go_uint(text, bits, base) == (expected[0] if expected[1] else None)


@pytest.mark.parametrize("text", [HUGE, "-" + HUGE, "+" + HUGE, "9223372036854775808"])
def test_go_int_refuses_a_number_out_of_range(text):
    assert go_int(text) is None


def test_go_int_takes_the_extremes():
    assert go_int("-9223372036854775808") == -(1 << 63)
    assert go_int("-" + "0" * 5000 + "1") == -1


# -- a number past int()'s limit in each field go-nvlib parses ---------------------------

#: The files parsed as numbers, each with the one the diagnosis names.
FIELDS = {
    "vendor": "vendor",
    "class": "class",
    "device": "device",
    "numa_node": "numa_node",
    "sriov_totalvfs": "sriov_totalvfs",
}


def _huge_in(tree, add, name):
    """An A10 whose ``name`` file holds :data:`HUGE` (a PF with SR-IOV for the counts)."""
    path = add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    if name.startswith("sriov"):
        (path / "sriov_numvfs").write_text("0\n")
    (path / name).write_text(HUGE + "\n")
    return path


@pytest.mark.parametrize("name", FIELDS)
def test_dra_scan_fails_discovery_on_a_huge_number(tree, name):
    _huge_in(tree, dra_nodes.add, name)
    result = dra_scan(tree.root, dra_nodes.for_driver("v0.4.0"))
    assert result.devices == []
    assert codes(result) == [("dra-discovery-failed", "0000:3b:00.0")]
    message = result.diagnoses[0].message
    assert name.replace("numa_node", "NUMA node") in message
    assert len(message) < 600  # the 5,000 digits quoted in part


@pytest.mark.parametrize("name", FIELDS)
def test_kata_scan_fails_discovery_on_a_huge_number(tree, name):
    _huge_in(tree, kata_nodes.add, name)
    result = scan(tree.root, KATA)
    assert result.resources == []
    assert codes(result) == [("discovery-failed", "0000:3b:00.0")]
    message = result.diagnoses[0].message
    assert f"unable to parse PCI {name}" in message and "(5000 characters)" in message
    assert len(message) < 600


@pytest.mark.parametrize("name", FIELDS)
def test_the_cli_reports_a_huge_number_in_one_diagnosis(tree, name, capsys):
    _huge_in(tree, dra_nodes.add, name)
    assert main(["scan", "--dra", "--sysfs-root", str(tree.root)]) == 1
    assert main(["scan", "--profile", KATA, "--sysfs-root", str(tree.root)]) == 1
    out = capsys.readouterr().out
    assert out.count("dra-discovery-failed") == 1 and out.count("discovery-failed: 0000:3b:00.0") == 2


@pytest.mark.parametrize("name", FIELDS)
def test_permitted_host_devices_from_a_kata_scan_with_a_huge_number(tree, name, capsys):
    _huge_in(tree, kata_nodes.add, name)
    assert main(["permitted-host-devices", "--profile", KATA, "--from-scan", str(tree.root)]) == 2
    why, error = capsys.readouterr().err.strip().splitlines()
    assert (
        why
        == f"pciname: --from-scan: left out {tree.root}: go-nvlib's discovery fails there (discovery-failed): it advertises nothing"
    )
    assert error == f"pciname: error: --from-scan {tree.root}: nothing to permit"


def test_dra_resource_keeps_go_values_out_of_range(tree):
    # BAR1 starts at a number of 5,000 digits: ParseUint's error is dropped
    # and its value, the largest uint64, kept. go-nvlib's size, end - start
    # + 1 in uint64, wraps to 0x3ffffffff + 2: just over 16 GiB, rounded up
    # to 32 GiB (a start of 0 would give 16 GiB exactly).
    lines = dra_nodes.A10_RESOURCE.splitlines()
    lines[1] = f"{HUGE} 0x00000003ffffffff 0x000000000014220c"
    lines[3] = dra_nodes.EMPTY
    dra_nodes.add(tree, "0000:3b:00.0", resource="\n".join(lines) + "\n", device="0x2236\n")
    (device,) = dra_scan(tree.root, dra_nodes.for_driver("v0.4.0")).devices
    assert device.capacity["addressableMemory"] == "32Gi"


def test_dra_resource_drops_a_syntax_error_as_zero(tree):
    lines = dra_nodes.A10_RESOURCE.splitlines()
    lines[1] = "0x0000038000000000 0x38zz 0x000000000014220c"  # end 0: start - end wraps, a region
    dra_nodes.add(tree, "0000:3b:00.0", resource="\n".join(lines) + "\n", device="0x2236\n")
    assert len(dra_scan(tree.root, dra_nodes.for_driver("v0.4.0")).devices) == 1


# -- chains of physfn links -------------------------------------------------------------


def _chain(tree, add, length, last_vendor="0x10de\n"):
    """``length`` functions, each one's physfn naming the next; the last a PF."""
    addresses = [f"0000:{n // 32 + 1:02x}:{n % 32:02x}.0" for n in range(length)]
    for n, address in enumerate(addresses):
        vendor = last_vendor if n == length - 1 else "0x10de\n"
        path = add(tree, address, device="0x2236\n", iommu_group=str(n), vendor=vendor)
        if n < length - 1:
            os.symlink(f"../{addresses[n + 1]}", path / "physfn")
    return addresses


def _vendor_reads(monkeypatch):
    """How often each device's vendor file is read."""
    reads: dict[str, int] = {}
    real = rootfs.read_attr

    def counted(root, path):
        if path.startswith("sys/bus/pci/devices/") and path.endswith("/vendor"):  # go-nvlib's reads
            reads[path] = reads.get(path, 0) + 1
        return real(root, path)

    monkeypatch.setattr(rootfs, "read_attr", counted)
    return reads


def test_dra_scan_follows_a_chain_of_600_physfn_links(tree, monkeypatch):
    addresses = _chain(tree, dra_nodes.add, 600)
    reads = _vendor_reads(monkeypatch)
    result = dra_scan(tree.root, dra_nodes.for_driver("v0.4.0"))
    # Every function but the last is a VF: only the PF at the end is published.
    assert [(d.name, d.address) for d in result.devices] == [("gpu-vfio-0", addresses[-1])]
    assert not [d for d in result.diagnoses if d.code == "dra-discovery-failed"]
    assert set(reads.values()) == {1}  # each function's files read once


def test_kata_scan_builds_each_function_of_a_chain_once(tree, monkeypatch):
    addresses = _chain(tree, kata_nodes.add, 600)
    reads = _vendor_reads(monkeypatch)
    result = scan(tree.root, KATA)
    assert set(reads.values()) == {1} and len(reads) == 600
    # The Kata plugin takes VFs too: every function, one kubelet device per IOMMU group.
    assert [(r.resource_name, r.members) for r in result.resources] == [
        ("nvidia.com/pgpu", tuple(str(n) for n in range(len(addresses))))
    ]


@pytest.mark.parametrize("scanner", ["dra", "kata"])
def test_a_failure_at_a_chains_end_fails_every_link_in_one_bounded_line(tree, scanner):
    add = dra_nodes.add if scanner == "dra" else kata_nodes.add
    addresses = _chain(tree, add, 600, last_vendor="0x1xde\n")
    if scanner == "dra":
        result = dra_scan(tree.root, dra_nodes.for_driver("v0.4.0"))
        assert result.devices == []
    else:
        result = scan(tree.root, KATA)
        assert result.resources == []
    (failed,) = [d for d in result.diagnoses if "discovery-failed" in d.code]
    # GetAllDevices fails on the first device listed: 599 links above the bad vendor.
    assert failed.subject == addresses[0]
    assert "unable to detect physfn (599 physfn links down): unable to parse PCI vendor '0x1xde'" in failed.message
    assert len(failed.message) < 600


@pytest.mark.parametrize("scanner", ["dra", "kata"])
def test_a_chain_that_ends_in_a_loop_crashes(tree, scanner):
    add = dra_nodes.add if scanner == "dra" else kata_nodes.add
    addresses = _chain(tree, add, 300)
    os.symlink(f"../{addresses[100]}", tree.device_dir(addresses[-1]) / "physfn")
    if scanner == "dra":
        result = dra_scan(tree.root, dra_nodes.for_driver("v0.4.0"))
        assert result.devices == []
        code = "dra-discovery-failed"
    else:
        result = scan(tree.root, KATA)
        assert result.resources == []
        code = "plugin-crash"
    (failed,) = [d for d in result.diagnoses if d.code == code]
    assert failed.subject == addresses[0]
    assert f"physfn links loop back to {addresses[100]}" in failed.message
    assert "stack overflows" in failed.message


@pytest.mark.parametrize("scanner", ["dra", "kata"])
def test_a_chain_past_the_bound_is_refused_not_followed(tree, scanner, monkeypatch):
    # The bound (65,536 links: a PCI segment's functions) lowered to 50 for a
    # chain of 60: the walk stops and says so; go-nvlib would go on.
    from pciname.host.gonvlib import nvpci

    monkeypatch.setattr(nvpci, "MAX_PHYSFN_LINKS", 50)
    add = dra_nodes.add if scanner == "dra" else kata_nodes.add
    addresses = _chain(tree, add, 60)
    reads = _vendor_reads(monkeypatch)
    if scanner == "dra":
        result = dra_scan(tree.root, dra_nodes.for_driver("v0.4.0"))
    else:
        result = scan(tree.root, KATA)
    (failed,) = [d for d in result.diagnoses if "discovery-failed" in d.code]
    assert failed.subject == addresses[0]
    assert "(50 physfn links down): more than 50 physfn links in a chain" in failed.message
    assert max(reads.values()) == 1
