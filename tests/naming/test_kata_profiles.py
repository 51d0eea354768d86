"""The Kata sandbox device plugin as a profile family: its releases and the
GPU Operator's Kata mode from ``data/kata/releases.json``, the aliases
(``P_GPU_ALIAS``, ``NVSWITCH_ALIAS``) each release reads, and the records
every surface prints.

Expected names are written from the upstream code (cmd/main.go and
pkg/device_plugin/device_plugin.go of each release; docs/naming.md section 8),
not from running pciname: an unset alias is ``pgpu``/``nvswitch`` since
v0.0.2 (``LookupEnv``) and per-model in v0.0.1 (``Getenv``); ``""`` is the
per-model name; the per-model name keeps ``-`` (``formatDeviceName``).
"""

from __future__ import annotations

import json

import pytest

import pciname
from pciname.base.paths import kata_releases_path
from pciname.errors import PcinameError, UnknownProfileError
from pciname.naming import kata
from pciname.naming.profiles import get_profile, load_registry, with_aliases
from pciname.resolution.resolver import Resolver

FACTS = json.loads(kata_releases_path().read_text())
PLUGINS = sorted(FACTS["plugin_releases"], key=lambda v: tuple(map(int, v[1:].split("."))))
OPERATORS = sorted(FACTS["operator_releases"], key=lambda v: tuple(map(int, v[1:].split("."))))
A10 = "10de:2236"  # GA102GL [A10]
MAX_Q = "10de:2bb4"  # GB202GL [RTX PRO 6000 Blackwell Max-Q Workstation Edition]
NVSWITCH = "10de:22a3"  # GH100 [H100 NVSwitch]


def record(device: str, profile) -> dict:
    (found,) = Resolver().records([device], profile)
    return found


@pytest.mark.parametrize("version", PLUGINS)
def test_every_plugin_release_is_a_profile_with_its_facts(version):
    facts = FACTS["plugin_releases"][version]
    profile = get_profile(f"sandbox-device-plugin@{version}")
    assert (profile.name, profile.kind, profile.plugin) == (f"sandbox-device-plugin@{version}",) + (
        kata.KATA_PLUGIN,
    ) * 2
    assert profile.algorithm == facts["algorithm"]
    assert profile.snapshot.sha256 == facts["pci_ids"]["sha256"]
    assert profile.sources[:2] == (FACTS["plugin_repository"], facts["commit"])
    assert profile.alias_unset == facts["aliases"]["P_GPU_ALIAS"]["unset"]
    nvswitch = facts["aliases"]["NVSWITCH_ALIAS"]
    assert profile.nvswitch_unset == (nvswitch["unset"] if nvswitch else None)
    assert profile.classes == (tuple(int(c, 16) for c in facts["classes"]) if facts["classes"] else None)
    if facts["pci_ids"].get("established"):
        assert "inferred: " in profile.note  # which file the image reads: said, not guessed


@pytest.mark.parametrize("version", OPERATORS)
def test_every_kata_mode_operator_release_names_as_the_plugin_it_deploys(version):
    facts = FACTS["operator_releases"][version]
    profile = get_profile(f"gpu-operator@{version}+kata")
    plugin = get_profile(f"sandbox-device-plugin@{facts['plugin']}")
    assert profile.kind == "gpu-operator-kata"
    assert profile.sources[:2] == (FACTS["operator_repository"], facts["commit"])
    assert (profile.algorithm, profile.snapshot, profile.alias_unset) == (
        plugin.algorithm,
        plugin.snapshot,
        plugin.alias_unset,
    )
    assert f"deploys {plugin.name}" in profile.note
    # The operator's DaemonSet sets neither variable: the profile runs with both unset.
    assert facts["daemonset"]["sets_p_gpu_alias"] is False and profile.alias is None
    # Its KubeVirt mode is another profile, named by the KubeVirt plugin.
    assert get_profile(f"gpu-operator@{version}").plugin == "kubevirt-gpu-device-plugin"


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("sandbox-device-plugin@0.0.5", "sandbox-device-plugin@v0.0.5"),
        ("sandbox-device-plugin@latest", f"sandbox-device-plugin@{PLUGINS[-1]}"),
        ("GPU-Operator@26.7.0+KATA", "gpu-operator@v26.7.0+kata"),
        ("operator@v26.3.1+kata", "gpu-operator@v26.3.1+kata"),
        # the old spelling of the KubeVirt plugin keeps its v1.x releases
        ("sandbox-device-plugin@v1.2.2", "kubevirt-gpu-device-plugin@v1.2.2"),
    ],
)
def test_spellings(spelling, canonical):
    assert get_profile(spelling).name == canonical


def test_an_operator_release_without_kata_mode_is_one_line_naming_those_with_it():
    with pytest.raises(UnknownProfileError) as caught:
        get_profile("gpu-operator@v25.3.0+kata")
    message = str(caught.value)
    assert "\n" not in message and "deploys no Kata sandbox device plugin" in message
    assert f"gpu-operator@{{{OPERATORS[0]}+kata..{OPERATORS[-1]}+kata}}" in message
    with pytest.raises(UnknownProfileError, match=r"sandbox-device-plugin@\{v0\.0\.1\.\.v0\.0\.5\}"):
        get_profile("sandbox-device-plugin@v0.0.9")


@pytest.mark.parametrize("version", [v for v in PLUGINS if v != "v0.0.1"])
def test_unset_aliases_are_pgpu_and_nvswitch(version):
    profile = f"sandbox-device-plugin@{version}"
    gpu = record(A10, profile)
    assert gpu["resource_name"] == "nvidia.com/pgpu" and gpu["alias"] == "pgpu"
    assert gpu["name"] == "GA102GL_A10"  # the per-model name, not advertised
    assert gpu["socket_path"] == "/var/lib/kubelet/device-plugins/sandbox-pgpu.sock"
    assert gpu["env_var"] is None  # Allocate sets no PCI_RESOURCE_* variable
    assert gpu["plugin"] == "sandbox-device-plugin" and gpu["advertised"] is True
    assert [w["code"] for w in gpu["warnings"]] == ["shared-alias"]
    switch = record(NVSWITCH, profile)
    assert switch["resource_name"] == "nvidia.com/nvswitch"
    assert [w["code"] for w in switch["warnings"]] == ["class-inferred", "shared-alias"]


def test_an_empty_alias_gives_each_model_its_own_name_keeping_the_dash():
    profile = with_aliases(get_profile("gpu-operator@v26.7.0+kata"), alias="")
    assert record(A10, profile)["resource_name"] == "nvidia.com/GA102GL_A10"
    kata_name = record(MAX_Q, profile)
    assert kata_name["resource_name"] == "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_MAX-Q_WORKSTATION_EDITION"
    assert kata_name["socket_path"].endswith("/sandbox-GB202GL_RTX_PRO_6000_BLACKWELL_MAX-Q_WORKSTATION_EDITION.sock")
    assert kata_name["alias"] is None and kata_name["warnings"] == []
    # the KubeVirt plugin deletes the dash
    kubevirt = record(MAX_Q, "gpu-operator@v26.7.0")["resource_name"]
    assert kubevirt == "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_MAXQ_WORKSTATION_EDITION"
    # NVSWITCH_ALIAS stays unset: NVSwitches are still nvswitch
    assert record(NVSWITCH, profile)["resource_name"] == "nvidia.com/nvswitch"
    both = with_aliases(get_profile("gpu-operator@v26.7.0+kata"), alias="", nvswitch_alias="")
    assert record(NVSWITCH, both)["resource_name"] == "nvidia.com/GH100_H100_NVSWITCH"


def test_a_set_alias_is_used_as_is():
    profile = with_aliases(get_profile("sandbox-device-plugin@v0.0.5"), alias="a10", nvswitch_alias="sw")
    assert record(A10, profile)["resource_name"] == "nvidia.com/a10"
    assert record(NVSWITCH, profile)["resource_name"] == "nvidia.com/sw"
    assert "(as set)" in record(A10, profile)["warnings"][0]["message"]


def test_a_device_go_nvlib_does_not_know_is_unknown_device():
    profile = with_aliases(get_profile("sandbox-device-plugin@v0.0.5"), alias="")
    found = record("10de:ffff", profile)
    assert (found["name"], found["resource_name"]) == (kata.UNKNOWN_DEVICE, "nvidia.com/UNKNOWN_DEVICE")
    assert [w["code"] for w in found["warnings"]] == ["unnamed-device", "name-collision"]
    # v0.0.1 reads pci.ids itself and falls back to the device id
    assert record("10de:ffff", "sandbox-device-plugin@v0.0.1")["resource_name"] == "nvidia.com/ffff"


def test_v0_0_1_names_every_device_per_model_unless_p_gpu_alias_is_set():
    assert record(A10, "sandbox-device-plugin@v0.0.1")["resource_name"] == "nvidia.com/GA102GL_A10"
    # vendor-section: the dash is deleted, as the KubeVirt plugin does
    assert record(MAX_Q, "sandbox-device-plugin@v0.0.1")["resource_name"].endswith("_MAXQ_WORKSTATION_EDITION")
    aliased = with_aliases(get_profile("sandbox-device-plugin@v0.0.1"), alias="gpu")
    assert record(NVSWITCH, aliased)["resource_name"] == "nvidia.com/gpu"  # no NVSWITCH_ALIAS in v0.0.1
    with pytest.raises(PcinameError, match="reads no NVSWITCH_ALIAS"):
        with_aliases(get_profile("sandbox-device-plugin@v0.0.1"), nvswitch_alias="x")


def test_aliases_belong_to_kata_profiles_only():
    with pytest.raises(PcinameError, match="is not a sandbox-device-plugin profile"):
        with_aliases(get_profile("latest"), alias="x")
    with pytest.raises(PcinameError, match="blanks around it"):
        with_aliases(get_profile("sandbox-device-plugin@v0.0.5"), alias=" x")


def test_the_library_reverse_and_diff_know_the_family():
    per_model = pciname.with_aliases("gpu-operator@v26.7.0+kata", alias="")
    assert pciname.resolve(A10, per_model).resource_name == "nvidia.com/GA102GL_A10"
    assert pciname.reverse("nvidia.com/GA102GL_A10", per_model) == [A10]
    shared = pciname.reverse("nvidia.com/pgpu", "gpu-operator@v26.7.0+kata")
    assert A10 in shared and NVSWITCH not in shared
    changes = {e.device: e for e in pciname.diff("gpu-operator@v26.7.0", per_model)}
    assert A10 not in changes
    assert changes[MAX_Q].new.endswith("MAX-Q_WORKSTATION_EDITION")
    # renamed: the names holding a dash, the ids go-nvlib's file lacks (UNKNOWN_DEVICE, not the
    # id) and the NVSwitches (NVSWITCH_ALIAS unset: nvswitch)
    for entry in changes.values():
        assert "-" in entry.new or entry.new in ("nvidia.com/UNKNOWN_DEVICE", "nvidia.com/nvswitch"), entry
    assert {d for d, e in changes.items() if e.new == "nvidia.com/nvswitch"} == {"10de:1af1", "10de:22a3"}
    assert load_registry().get("gpu-operator@v26.7.0+kata").snapshot.key == "2025.07.11"


def test_profiles_lists_the_family_with_its_sources():
    infos = {p.name: p for p in pciname.profiles()}
    for version in PLUGINS:
        info = infos[f"sandbox-device-plugin@{version}"]
        assert info.plugin == "sandbox-device-plugin"
        assert info.source == f"{FACTS['plugin_repository']}@{FACTS['plugin_releases'][version]['commit']}"
        assert info.installed
    assert infos[f"sandbox-device-plugin@{PLUGINS[-1]}"].aliases == ("sandbox-device-plugin@latest",)
    assert infos["kubevirt-gpu-device-plugin@v1.6.0"].plugin == "kubevirt-gpu-device-plugin"
