"""KubeVirt's selector matching per release (pciname.kubevirt.selectors):
the shipped facts are what tools/kubevirt_extract.py makes of the vendored
upstream files, and they say what KubeVirt's code does."""

from __future__ import annotations

import pytest

from pciname.errors import PcinameError
from pciname.kubevirt.selectors import case_sensitive, known_release, releases
from tests.extract_util import Extracted

FAMILY = Extracted("kubevirt", "kubevirt_extract")


def test_the_shipped_facts_are_what_the_script_makes_of_the_inputs():
    done = FAMILY.run("--from-inputs", str(FAMILY.inputs), "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "up to date" in done.stdout


def test_the_facts_name_kubevirts_code_lines():
    shipped = FAMILY.shipped()
    blobs = FAMILY.tarball()
    sidecar = FAMILY.sidecar()["repositories"]["kubevirt/kubevirt"]["tags"]
    for row in shipped["releases"]:
        selector = row["pci"]["selector"]
        blob = sidecar[row["release"]]["files"][selector["path"]]
        line = blobs[f"blobs/{blob}"].decode().splitlines()[selector["line"] - 1]
        assert f"supportedPCIDeviceMap[{selector['key']}] = pciDev.ResourceName" in line, row["release"]


def test_v0_39_0_lowers_both_sides_and_earlier_releases_compare_as_written():
    assert releases()[0] == "v0.36.0"
    assert [r for r in releases() if case_sensitive(r) is not None][-1] == "v0.38.2"
    assert case_sensitive("v0.39.0") is None and case_sensitive(None) is None
    fact = case_sensitive("0.36.0")
    assert fact is not None and "device_controller.go:129 keys by pciDev.PCIVendorSelector" in fact.where
    with pytest.raises(PcinameError, match="v0.36.0 to v1.9.0"):
        known_release("v0.35.0")
