"""Every name the real Go code computed (tests/data/nvidia-device-names.json)
and docs/naming.md's examples."""

from __future__ import annotations

import hashlib
import random

import pytest

import pciname
from pciname.base.paths import embedded_pciids_path
from pciname.naming.algorithms import REFERENCE, NameIndex
from pciname.naming.profiles import load_registry
from pciname.resolution.catalog import catalog_for
from pciname.resolution.resolver import profile_catalog
from tests.conftest import DEBIAN_PCIIDS, PLUGIN_PCIIDS


def _vector_key(release: str, profile_facts: dict, vectors: dict) -> str:
    """The vectors' release with the same algorithm and pci.ids file."""
    plugin = profile_facts["kubevirt_gpu_device_plugin"]
    wanted = (plugin[release]["algorithm"], plugin[release]["snapshot"])
    for key in vectors["kubevirt-gpu-device-plugin"]:
        if (plugin[key]["algorithm"], plugin[key]["snapshot"]) == wanted:
            return key
    raise AssertionError(f"no vector covers {release}")


def _plugin_releases() -> list[str]:
    return [p.plugin_release for p in load_registry().plugin_releases()]


@pytest.mark.parametrize("release", _plugin_releases())
def test_every_vector_through_the_api(release, vectors, profile_facts):
    expected = vectors["kubevirt-gpu-device-plugin"][_vector_key(release, profile_facts, vectors)]
    profile = f"kubevirt-gpu-device-plugin@{release}"
    results = pciname.resolve_many([f"10de:{d}" for d in expected], profile)
    got = {r.device[5:]: r.name for r in results}
    assert got == expected
    unnamed = profile_facts["kubevirt_gpu_device_plugin"][release]["unnamed_device"]
    for r in results:
        if r.name:
            assert r.resource_name == f"nvidia.com/{r.name}"
        elif unnamed == "device-id":
            assert r.resource_name == f"nvidia.com/{r.device[5:]}"
            assert "unnamed-device" in r.warning_codes
        else:
            assert r.resource_name is None
            assert "not-advertised" in r.warning_codes


@pytest.mark.parametrize("key", ["v1.0.1", "v1.1.1", "v1.2.1", "v1.2.2", "v1.4.0"])
def test_reference_scan_agrees_with_vectors(key, vectors, profile_facts):
    """The line-by-line reference functions, on a random sample (they scan
    the whole file per id, as Go does)."""
    facts = profile_facts["kubevirt_gpu_device_plugin"][key]
    lines = catalog_for(PLUGIN_PCIIDS / f"{facts['snapshot']}.ids").lines()
    expected = vectors["kubevirt-gpu-device-plugin"][key]
    sample = random.Random(key).sample(sorted(expected), 120)
    reference = REFERENCE[facts["algorithm"]]
    assert {d: reference(lines, d) for d in sample} == {d: expected[d] for d in sample}


def test_debian_vector_is_the_preview_profile(vectors, profile_facts):
    expected = vectors["debian-2026.10.24"]
    # The shipped file is Debian's sid package file, byte for byte.
    digest = hashlib.sha256(embedded_pciids_path().read_bytes()).hexdigest()
    assert digest == profile_facts["debian_pci_ids"]["2026.10.24"]["sha256"]
    got = {r.device[5:]: r.name for r in pciname.resolve_many([f"10de:{d}" for d in expected], "preview")}
    assert got == expected


def test_debian_test_fixtures_are_debians_files(profile_facts):
    for entry in profile_facts["debian_pci_ids"].values():
        path = DEBIAN_PCIIDS / entry["file"].rpartition("/")[2]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], path


@pytest.mark.parametrize(
    "profile, device, resource",
    [
        ("kubevirt-gpu-device-plugin@v1.1.2", "10de:1f08", "nvidia.com/SAS_5_IR_INTEGRATED_RAID_CONTROLLER"),
        ("kubevirt-gpu-device-plugin@v1.2.1", "10de:2330", "nvidia.com/ZYWALL_TURBO_CARD"),
        ("kubevirt-gpu-device-plugin@v1.2.2", "10de:2330", "nvidia.com/GH100H100_SXM5_80GB"),
        ("kubevirt-gpu-device-plugin@v1.2.2", "10de:2335", "nvidia.com/2335"),
        ("kubevirt-gpu-device-plugin@v1.5.0", "10de:1f08", "nvidia.com/TU106_GEFORCE_RTX_2060_REV__A"),
        ("kubevirt-gpu-device-plugin@v1.0.1", "10de:1eb8", "nvidia.com/TU104GL_Tesla_T4"),
        ("gpu-operator@v23.9.2", "10de:2330", "nvidia.com/GH100H100_SXM5_80GB"),
        ("preview", "10de:2236", "nvidia.com/GA102GL_A10"),
    ],
)
def test_naming_md_examples(profile, device, resource):
    assert pciname.resolve(device, profile).resource_name == resource


@pytest.mark.parametrize("release", _plugin_releases())
def test_index_equals_reference_on_ids_in_no_vector(release):
    """Ids the vectors do not list (random, and ones that occur only in
    other vendors' lines) must still get the Go answer."""
    profile = load_registry().get(release)
    catalog = profile_catalog(profile)
    lines = catalog.lines()
    rng = random.Random(release)
    ids = {f"{rng.randrange(0x10000):04x}" for _ in range(40)}
    ids |= set(rng.sample(sorted(NameIndex(lines, profile.algorithm).candidates()), 40))
    reference = REFERENCE[profile.algorithm]
    for device_id in sorted(ids):
        assert catalog.name(profile.algorithm, device_id) == reference(lines, device_id), device_id
