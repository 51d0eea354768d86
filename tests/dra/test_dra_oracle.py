"""What NVIDIA's DRA driver publishes as a vfio GPU's ``productName``,
against go-nvlib's own code, for every NVIDIA id and every driver release
that publishes vfio devices.

The driver's ``nvpci`` (vendor/github.com/NVIDIA/go-nvlib/pkg/nvpci/nvpci.go)
names a GPU ``pciids.NewDB().GetDeviceName(vendor, device)``, or
``UNKNOWN_DEVICE`` when that fails. Its ``pciids.go`` is git blob
79cb227c82f229cc2ccaa8e17bb0dafedbb3bfb0 in every release that publishes
(tests/data/dra-inputs.json), the very file ``tests/go_oracle_kata/main.go``
joins from the Kata plugin's vendor tree (tests/data/kata-inputs.json), and
its embedded ``default_pci.ids`` is the package's 2025.07.11 snapshot (by
sha256). So the oracle's raw names are the driver's, and pciname's predicted
device (``vm-gpus --dra``, lint, admission) and its scan of a sysfs tree
holding a GPU of every id must both give them."""

from __future__ import annotations

import hashlib
import json

import pytest

from pciname.dra.claims import predicted_device
from pciname.dra.facts import facts, for_driver
from pciname.host.dra_scan import dra_scan
from tests.conftest import NEEDS_GO, PLUGIN_PCIIDS, REPO, TESTS
from tests.go_oracles import ask, oracle as go_oracle
from tests.host.dra_nodes import add
from tests.sysfs_tree import SysfsTree

pytestmark = NEEDS_GO

PCIIDS_GO = "vendor/github.com/NVIDIA/go-nvlib/pkg/pciids/pciids.go"
EMBEDDED = "vendor/github.com/NVIDIA/go-nvlib/pkg/pciids/default_pci.ids"
ORACLE_BLOB = "79cb227c82f229cc2ccaa8e17bb0dafedbb3bfb0"
SNAPSHOT = PLUGIN_PCIIDS / "2025.07.11.ids"


def publishing() -> list[str]:
    return [r for r, f in facts()["driver_releases"].items() if f["vfio"]["publishes"]]


def _tags(name: str, repository: str) -> dict[str, dict]:
    inputs = json.loads((TESTS / "data" / name).read_text(encoding="utf-8"))
    return inputs["repositories"][repository]["tags"]


@pytest.fixture(scope="module")
def go_names() -> dict[str, str]:
    """NVIDIA device id -> go-nvlib's raw name, as its own code reads the snapshot."""
    out = ask(go_oracle("kata"), SNAPSHOT)
    lines = out.decode("utf-8").split("\n")[:-1]
    assert lines[0] == f"FILE {SNAPSHOT}"
    names = {}
    for line in lines[1:]:
        ident, raw, _formatted = line.split("\t")
        names[ident] = raw
    return names


def test_the_oracle_is_the_drivers_code():
    assert "v0.4.0" in publishing() and "v25.12.0" not in publishing()  # its bug publishes none
    dra = _tags("dra-inputs.json", "kubernetes-sigs/dra-driver-nvidia-gpu")
    kata = _tags("kata-inputs.json", "NVIDIA/sandbox-device-plugin")
    assert kata["v0.0.5"]["files"][PCIIDS_GO] == ORACLE_BLOB  # the file the oracle joins
    embedded = json.loads((TESTS / "data" / "dra-inputs.json").read_text(encoding="utf-8"))["pci_ids"]
    for release in publishing():
        assert dra[release]["files"][PCIIDS_GO] == ORACLE_BLOB, release
        blob = dra[release]["files"][EMBEDDED]
        assert embedded[blob]["sha256"] == hashlib.sha256(SNAPSHOT.read_bytes()).hexdigest(), release
        assert for_driver(release).vfio["product_name"]["embedded"]["sha256"] == embedded[blob]["sha256"]


@pytest.mark.parametrize("release", publishing())
def test_every_nvidia_id_is_predicted_as_go_nvlib_names_it(go_names, release):
    combination = for_driver(release)
    assert len(go_names) > 1900
    wrong = {
        ident: (predicted_device(ident, combination).attributes["productName"], raw)
        for ident, raw in go_names.items()
        if predicted_device(ident, combination).attributes["productName"] != raw
    }
    assert wrong == {}


@pytest.mark.parametrize("release", publishing())
def test_an_id_go_nvlib_does_not_know_is_unknown_device(go_names, release):
    combination = for_driver(release)
    newest = (REPO / "data" / "pci.ids").read_text(encoding="utf-8")  # 2026.10.24: ids go-nvlib's copy lacks
    section = newest.split("\n10de  ", 1)[1].split("\n10df  ", 1)[0]
    later = {line[1:5] for line in section.split("\n") if line.startswith("\t") and not line.startswith("\t\t")}
    unknown = sorted((later - set(go_names)) | {"0000", "fffe"})
    assert unknown and all(i not in go_names for i in unknown)
    for ident in unknown:
        assert predicted_device(ident, combination).attributes["productName"] == "UNKNOWN_DEVICE", ident


@pytest.mark.parametrize("release", publishing())
def test_a_node_with_a_gpu_of_every_id_publishes_go_nvlibs_names(go_names, release, tmp_path):
    # One sysfs tree, a vfio-bound GPU of every id go-nvlib names (and of two
    # it does not), each at its own address: what scan --dra publishes for
    # each is the predicted device, productName go-nvlib's.
    tree = SysfsTree(tmp_path / "node")
    idents = sorted(go_names) + ["0000", "fffe"]
    for n, ident in enumerate(idents):
        add(tree, f"0000:{n // 32:02x}:{n % 32:02x}.0", device=f"0x{ident}\n", iommu_group=str(n))
    devices = dra_scan(tree.root, for_driver(release)).devices
    published = {d.slice_entry()["attributes"]["deviceID"]["string"]: d.slice_entry()["attributes"] for d in devices}
    assert len(published) == len(idents)
    for ident in idents:
        attributes = published[f"0x{ident}"]
        assert attributes["productName"] == {"string": go_names.get(ident, "UNKNOWN_DEVICE")}, ident
        predicted = predicted_device(ident, for_driver(release)).attributes
        assert {k: attributes[k] for k in predicted} == {k: {"string": v} for k, v in predicted.items()}, ident
