"""``pciname scan`` against Go itself, release by release.

``tests/go_oracle_scan/main.go`` states each release's discovery (per-group
or per-function, the VFIO drivers it accepts, the vGPU naming rule, the
type string looked up like a device id, the vGPU list never reset up to
v1.1.1, the panics) with the Go calls the plugin makes, on a real directory
tree. Here hypothesis generates sysfs trees (tests/sysfs_tree.py): GPUs with
and without audio functions in one IOMMU group, several models per group,
nvgrace_gpu_vfio_pci and host drivers, odd ``device`` spellings (upper case,
CR, blank, bare ``0x``), missing and empty ``device``/``vendor`` files, and
vGPUs with odd type names (empty, blank, CRLF, tabs, no space). For every
plugin release, the scan must agree with Go on whether the plugin panics
and, when it does not, on every resource and its set of kubelet device IDs.

Go's map order decides which vGPUs a type lists on a release that leaks
(``mdev_leak``): there only the deterministic part is compared (each type's
own vGPUs are among those Go lists for it) and the scan must warn
``mdev-type-leak``. Skipped when Go is not installed (CI installs
``golang-go``).
"""

from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from pciname.host.diagnoses import MDEV_TYPE_LEAK, PLUGIN_CRASH
from pciname.host.sysfs import scan, vfio_drivers
from pciname.naming.profiles import load_registry
from tests.conftest import NEEDS_GO, PLUGIN_PCIIDS
from tests.go_oracles import ask as ask_go, oracle as go_oracle
from tests.sysfs_tree import SysfsTree

pytestmark = NEEDS_GO

RELEASES = load_registry().plugin_releases()

# What a function's files may hold (None: no such file).
DEVICES = [
    "0x2236\n",  # A10
    "0x1aef\n",  # GA102 audio
    "0x20b5\n",  # A100 80GB
    "0x2342\n",  # GH200
    "0x1db4\n",  # V100
    "0x1eb8\n",  # T4
    "0x20B5\n",  # upper case
    "0x2236\r\n",  # CR
    "0x2236 \n",  # a blank
    "0x2236",  # no newline
    "0x",  # empty id
    None,  # no device file: skipped
]
RARE_DEVICES = ["", "0"]  # shorter than 2 bytes: a panic where it is read
VENDORS = ["0x10de\n"] * 8 + ["0x8086\n", "0x10DE\n", None]
DRIVERS = ["vfio-pci"] * 4 + ["nvgrace_gpu_vfio_pci", "nvidia", "snd_hda_intel", None]
TYPE_NAMES = [
    "GRID T4-1Q\n",
    "NVIDIA A10-4Q\n",
    "GRID  T4-2Q\n",
    "GRID\tT4-1Q\r\n",
    "",
    "\n",
    " \n",
    "\t",
    "\r\n",
    " ",
    "T4",  # no space: v1.0.x panics
]

function = st.fixed_dictionaries(
    {
        "device": st.sampled_from(DEVICES * 4 + RARE_DEVICES),
        "vendor": st.sampled_from(VENDORS),
        "driver": st.sampled_from(DRIVERS),
        "grouped": st.sampled_from([True] * 6 + [False]),
    }
)
node = st.fixed_dictionaries(
    {
        "groups": st.lists(st.lists(function, min_size=1, max_size=3), min_size=1, max_size=4),
        "mdevs": st.lists(st.tuples(st.integers(0, 9), st.sampled_from(TYPE_NAMES)), max_size=4),
        "short_vendor": st.sampled_from([False] * 15 + [True]),
    }
)


@pytest.fixture(scope="module")
def oracle() -> Path:
    return go_oracle("scan")


def build(root: Path, spec: dict) -> SysfsTree:
    """The node ``spec`` describes, as a sysfs tree under ``root``."""
    tree = SysfsTree(root)
    addresses = []
    for g, members in enumerate(spec["groups"]):
        for f, fn in enumerate(members):
            address = f"0000:{0x3B + g:02x}:00.{f}"
            tree.add_function(
                address,
                device=fn["device"],
                vendor=fn["vendor"],
                pci_class="0x030200\n" if f == 0 else "0x040300\n",
                driver=fn["driver"],
                iommu_group=str(12 + g) if fn["grouped"] else None,
            )
            addresses.append(address)
    if spec["short_vendor"]:
        tree.add_function("0000:00:1f.0", vendor="8", device="0x0001\n", driver="lpc_ich", iommu_group="2")
    for i, (parent, type_name) in enumerate(spec["mdevs"]):
        tree.add_mdev(f"11111111-0000-4000-8000-{i:012d}", addresses[parent % len(addresses)], type_name, f"nvidia-{i}")
    return tree


def ask(oracle: Path, root: Path) -> list[dict]:
    queries = [
        {
            "root": str(root),
            "pciids": str(PLUGIN_PCIIDS / p.snapshot.filename),
            "algorithm": p.algorithm,
            "discovery": p.discovery,
            "mdev_name": p.mdev_name,
            "mdev_leak": p.mdev_leak,
            "unnamed_device": p.unnamed_device,
            "vfio_drivers": list(vfio_drivers(p)),
        }
        for p in RELEASES
    ]
    answers = json.loads(ask_go(oracle, stdin=json.dumps(queries)))
    assert len(answers) == len(RELEASES)
    return answers


def disagreements(oracle: Path, root: Path) -> list[tuple[str, object, object]]:
    """(release, what Go says, what the scan says) wherever they differ."""
    found: list[tuple[str, object, object]] = []
    for profile, go in zip(RELEASES, ask(oracle, root), strict=True):
        result = scan(root, profile)
        release = profile.plugin_release
        crashed = any(d.code == PLUGIN_CRASH for d in result.diagnoses)
        if crashed != bool(go["crash"]):
            found.append(
                (release, go["crash"] or "no panic", [d.message for d in result.diagnoses if d.code == PLUGIN_CRASH])
            )
            continue
        if crashed:
            continue
        pci_go = Counter((p["resource"], frozenset(p["devices"])) for p in go["plugins"] if p["kind"] == "pci")
        pci_scan = Counter((r.resource_name, frozenset(r.members)) for r in result.resources if r.kind == "pci")
        if pci_go != pci_scan:
            found.append((release, sorted(pci_go.elements()), sorted(pci_scan.elements())))
        mdev_go = [p for p in go["plugins"] if p["kind"] == "mdev"]
        mdev_scan = [r for r in result.resources if r.kind == "mdev"]
        if not profile.mdev_leak:
            want = Counter((p["resource"], frozenset(p["devices"])) for p in mdev_go)
            got = Counter((r.resource_name, frozenset(r.members)) for r in mdev_scan)
            if want != got:
                found.append((release, sorted(want.elements()), sorted(got.elements())))
            continue
        # A leaking release: the names are certain, and each type's own vGPUs.
        if Counter(p["resource"] for p in mdev_go) != Counter(r.resource_name for r in mdev_scan):
            found.append((release, [p["resource"] for p in mdev_go], [r.resource_name for r in mdev_scan]))
            continue
        for r in mdev_scan:
            listed = set().union(*(p["devices"] for p in mdev_go if p["resource"] == r.resource_name))
            if not set(r.members) <= listed:
                found.append((release, sorted(listed), r.members))
        warned = any(d.code == MDEV_TYPE_LEAK for d in result.diagnoses)
        if warned != (len(mdev_go) > 1):
            found.append((release, f"{len(mdev_go)} vGPU types", f"mdev-type-leak warned: {warned}"))
    return found


def fn(device: str, driver: str = "vfio-pci") -> dict:
    return {"device": device, "vendor": "0x10de\n", "driver": driver, "grouped": True}


# An A10 with its audio function in one group; a V100 and an A10 in one
# group next to a T4 on the host driver with vGPUs of odd type names.
A10_WITH_AUDIO = {"groups": [[fn("0x2236\n"), fn("0x1aef\n")]], "mdevs": [], "short_vendor": False}
TWO_MODELS_AND_ODD_TYPES = {
    "groups": [[fn("0x1db4\n"), fn("0x2236\n")], [fn("0x1eb8\n", "nvidia")]],
    "mdevs": [(2, "GRID T4-1Q\n"), (2, " \n"), (2, "\n"), (2, "GRID\tT4-1Q\r\n")],
    "short_vendor": False,
}


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow]
)
@example(spec=A10_WITH_AUDIO)
@example(spec=TWO_MODELS_AND_ODD_TYPES)
@given(spec=node)
def test_scan_agrees_with_go_on_every_release(oracle, spec):
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "node"
        build(root, spec)
        assert disagreements(oracle, root) == []


def test_the_oracle_sees_what_each_release_sees(oracle, tmp_path):
    # The comparison is not vacuous: Go sees the audio function of an A10
    # as its own device from v1.5.0, and a short device file as a panic.
    root = tmp_path / "node"
    build(root, A10_WITH_AUDIO)
    answers = {p.plugin_release: a for p, a in zip(RELEASES, ask(oracle, root), strict=True)}
    assert sorted((p["resource"], p["devices"]) for p in answers["v1.6.0"]["plugins"]) == [
        ("nvidia.com/GA102GL_A10", ["0000:3b:00.0"]),
        ("nvidia.com/GA102_HIGH_DEFINITION_AUDIO_CONTROLLER", ["0000:3b:00.1"]),
    ]
    assert [(p["resource"], p["devices"]) for p in answers["v1.4.0"]["plugins"]] == [("nvidia.com/GA102GL_A10", ["12"])]
    (root / "sys/devices/pci0000:00/0000:3b:00.1/device").write_text("")
    answers = {p.plugin_release: a for p, a in zip(RELEASES, ask(oracle, root), strict=True)}
    assert "out of range" in answers["v1.6.0"]["crash"] and answers["v1.4.0"]["crash"] == ""
