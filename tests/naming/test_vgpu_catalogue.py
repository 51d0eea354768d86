"""NVIDIA's vGPU type catalogue: the shipped data is what the maintainer
script writes from the vendored configs of every vgpu-device-manager
release, and ``pciname vgpu-types`` agrees with the newest config on every
device id it names (the type set and every count)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tarfile

import pytest
import yaml

from pciname.errors import PcinameError
from pciname.naming import mdev, vgpu, vgpu_prefixes
from tests.conftest import REPO, TEST_DATA
from tools import vgpu_catalogue

ARCHIVE = TEST_DATA / "vgpu-device-manager-configs.tar.xz"
SHIPPED = REPO / "data" / "vgpu-types.json"


def newest_config() -> dict:
    releases = vgpu_catalogue.read_archive(ARCHIVE)
    tag, _commit, text = max(releases, key=lambda r: vgpu_catalogue._version_key(r[0]))
    assert tag == "v0.5.0"
    return yaml.safe_load(text)


def test_shipped_data_is_the_scripts_output_of_the_vendored_configs():
    text = vgpu_catalogue.render(vgpu_catalogue.build(vgpu_catalogue.read_archive(ARCHIVE)))
    assert SHIPPED.read_text(encoding="utf-8") == text


def test_check_mode_fails_on_stale_data(tmp_path, capsys):
    stale = tmp_path / "vgpu-types.json"
    data = json.loads(SHIPPED.read_text(encoding="utf-8"))
    data["families"]["A10"]["types"][-1][2] += 1
    stale.write_text(vgpu_catalogue.render(data), encoding="utf-8")
    assert vgpu_catalogue.main(["--check", str(stale)]) == 1
    assert "STALE" in capsys.readouterr().out


def test_archive_holds_every_release_tag_with_its_commit():
    with tarfile.open(ARCHIVE, "r:xz") as tar:
        names = [m.name for m in tar.getmembers()]
    tags = [n.partition("@")[0] for n in names]
    assert tags == [
        "v0.1.0",
        "v0.2.0",
        *[f"v0.2.{i}" for i in range(1, 9)],
        "v0.3.0",
        "v0.4.0",
        "v0.4.1",
        "v0.4.2",
        "v0.5.0",
    ]
    assert all(re.fullmatch(r"v[\d.]+@[0-9a-f]{40}\.yaml", n) for n in names)
    data = json.loads(SHIPPED.read_text())
    assert [r["release"] for r in data["releases"]] == tags
    assert data["source"]["commit"] == names[-1].partition("@")[2][:-5]


def test_issue_counts_hold():
    data = json.loads(SHIPPED.read_text())
    assert sum(len(f["types"]) for f in data["families"].values()) == 710
    assert len(data["families"]) == 51
    assert len(data["devices"]) == 54
    assert data["devices"]["2236"] == ["A10"]
    assert data["devices"]["25b6"] == ["A16", "A2"]


def expected_types(config: dict) -> dict[str, dict[str, int]]:
    """device id -> {config: count}, read straight from the YAML: every
    single-type config of the families the default config names there."""
    configs = config["vgpu-configs"]
    families: dict[str, set[str]] = {}
    for entry in configs["default"]:
        device = entry["device-filter"][2:6].lower()
        for t in entry["vgpu-devices"]:
            families.setdefault(device, set()).add(vgpu.family_of(t))
    out: dict[str, dict[str, int]] = {}
    for device, fams in families.items():
        out[device] = {
            name: entries[0]["vgpu-devices"][name]
            for name, entries in configs.items()
            if name != "default" and vgpu.family_of(name) in fams
        }
    return out


def test_every_device_id_of_the_catalogue_agrees():
    expected = expected_types(newest_config())
    assert len(expected) == 54
    for device, configs in expected.items():
        listed = vgpu.device_types(device)
        assert {t.vgpu_config: t.max_instances for t in listed} == configs, device
        assert len(listed) == len(configs)


@pytest.mark.parametrize(
    ("device", "wanted", "mdev_name", "resource"),
    [
        ("2236", "A10-24Q", "NVIDIA A10-24Q", "nvidia.com/NVIDIA_A10-24Q"),
        ("1eb8", "T4-1Q", "GRID T4-1Q", "nvidia.com/GRID_T4-1Q"),
        ("25b6", "A2-4Q", "NVIDIA A2-4Q", "nvidia.com/NVIDIA_A2-4Q"),
        ("26b9", "L40S-24Q", "NVIDIA L40S-24Q", "nvidia.com/NVIDIA_L40S-24Q"),
        ("20b5", "A100D-4C", "GRID A100D-4C", "nvidia.com/GRID_A100D-4C"),
    ],
)
def test_observed_strings(device, wanted, mdev_name, resource):
    t = vgpu.find_type([device], wanted)
    assert (t.mdev_name, t.resource_name, t.certainty) == (mdev_name, resource, vgpu.OBSERVED)


def test_other_types_of_an_observed_family_say_so():
    t = vgpu.find_type(["2236"], "A10-4Q")
    assert (t.mdev_name, t.certainty, t.evidence.family) == ("NVIDIA A10-4Q", vgpu.FAMILY_OBSERVED, "A10")
    t = vgpu.find_type(["1eb8"], "T4-8Q")  # seen, but in a page whose origin was not recorded
    assert (t.mdev_name, t.certainty, t.resource_name) == ("GRID T4-8Q", vgpu.FAMILY_OBSERVED, "nvidia.com/GRID_T4-8Q")


def test_unlocated_or_guest_evidence_is_inferred_never_certain():
    for device, wanted in (("1db4", "V100-8Q"), ("1db6", "V100D-8C"), ("2235", "A40-24Q"), ("25b6", "A16-4Q")):
        t = vgpu.find_type([device], wanted)
        assert t.certainty == vgpu.INFERRED and not t.evidence.certain, (device, wanted)
        assert "is exact" in t.note()


def test_v1_0_rule_takes_the_second_field():
    t = vgpu.find_type(["2236"], "A10-24Q", mdev.SECOND_FIELD)
    assert t.resource_name == "nvidia.com/A10-24Q"


def test_unknown_prefix_is_never_guessed():
    listed = vgpu.device_types("2331")  # H100 PCIe: no observed H100 string
    assert listed and all(t.mdev_name is None and t.certainty == vgpu.UNKNOWN for t in listed)
    assert vgpu_prefixes.READ_MDEV in listed[0].note()
    with pytest.raises(PcinameError, match="prefix.*unknown"):
        vgpu.find_type(["2331"], "H100-40C")


def test_type_of_another_gpu_is_an_error():
    with pytest.raises(PcinameError, match=r"does not belong to 10de:2236.*10de:1eb8"):
        vgpu.find_type(["2236"], "T4-16Q")


def test_device_not_in_catalogue_says_where_it_stops():
    with pytest.raises(PcinameError, match=r"not in NVIDIA's vGPU type catalogue .*v0\.5\.0 \(commit acb72704ad7c\)"):
        vgpu.device_types("2684")


def test_gfx_configs_create_the_plain_type():
    t = vgpu.find_type(["2bb5"], "DC-1-24QGFX")
    assert (t.type, t.vgpu_config, t.mdev_name) == ("DC-1-24Q", "DC-1-24QGFX", "NVIDIA RTX Pro 6000 Blackwell DC-1-24Q")
    assert t.certainty == vgpu.INFERRED  # a doc comment of go-nvlib, not a host


def test_last_token_is_the_type_as_go_nvlib_reads_it():
    assert vgpu.type_token("NVIDIA RTX Pro 6000 Blackwell DC-48C\n") == "DC-48C"
    assert vgpu.type_token("GRID T4-1Q") == "T4-1Q"


def test_every_prefix_fact_names_a_catalogue_family_and_matches_its_string():
    cat = vgpu.catalogue()
    for fact in vgpu_prefixes.FACTS:
        assert fact.family in cat.families, fact
        assert fact.kind in vgpu_prefixes.EVIDENCE_KINDS
        prefix, _, token = fact.observed.rpartition(" ")
        assert prefix == fact.prefix and vgpu.family_of(token) == fact.family, fact
        assert all(d in cat.family_devices[fact.family] for d in fact.devices)


def test_maintainer_script_runs_as_a_module():
    done = subprocess.run(
        [sys.executable, "-m", "tools.vgpu_catalogue", "--check"],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "up to date" in done.stdout


def test_readme_prefix_table_is_the_facts():
    text = (REPO / "docs" / "vgpu.md").read_text(encoding="utf-8")
    header = "| family | prefix | observed string | evidence | driver | counts for lint | source |"
    lines = text[text.index(header) :].split("\n")[2:]
    rows = [line for line in lines[: next(i for i, line in enumerate(lines) if not line.startswith("|"))]]
    expected = []
    for f in vgpu_prefixes.FACTS:
        devices = f" (10de:{', 10de:'.join(f.devices)} only)" if f.devices else ""
        expected.append(
            f"| {f.family}{devices} | `{f.prefix}` | `{f.observed}` | {f.kind} | {f.driver or '-'} | "
            f"{'yes' if f.certain else 'no'} | {f.source} |"
        )
    assert rows == expected


def test_archive_round_trip_is_reproducible(tmp_path):
    releases = vgpu_catalogue.read_archive(ARCHIVE)
    again = tmp_path / "again.tar.xz"
    vgpu_catalogue.write_archive(releases, again)
    assert vgpu_catalogue.read_archive(again) == releases
    other = tmp_path / "other.tar.xz"
    vgpu_catalogue.write_archive(list(reversed(releases)), other)
    assert other.read_bytes() == again.read_bytes()


def test_a_newest_release_without_counts_is_refused():
    releases = vgpu_catalogue.read_archive(ARCHIVE)
    oldest = [r for r in releases if r[0] == "v0.1.0"]
    with pytest.raises(ValueError, match="without counts"):
        vgpu_catalogue.build(oldest)


def test_board_memory_comes_from_the_default_config():
    cat = vgpu.catalogue()
    assert (cat.board_gb("2236", "A10"), cat.board_gb("2bb5", "DC"), cat.board_gb("2c3a", "DC")) == (24, 96, 32)
    assert (cat.board_gb("25b6", "A16"), cat.board_gb("25b6", "A2")) == (16, 16)
    assert cat.board_gb("2342", "GH200") == 96


def test_a_family_spanning_boards_says_where_its_counts_stop():
    # DC: RTX PRO 6000 (96 GB) and RTX PRO 4500 (32 GB) Blackwell share the types
    on_4500 = {t.vgpu_config: t for t in vgpu.device_types("2c3a")}
    assert on_4500["DC-16Q"].max_instances == 6  # the catalogue's count, for the 96 GB board
    assert on_4500["DC-16Q"].inferred_max == 2
    assert on_4500["DC-96Q"].inferred_max == 0 and "does not fit" in on_4500["DC-96Q"].note()
    assert on_4500["DC-8Q"].inferred_max == 4
    assert on_4500["DC-1-24Q"].inferred_max is None and "MIG-backed" in on_4500["DC-1-24Q"].note()
    assert all(t.inferred_max is None and t.board_note is None for t in vgpu.device_types("2bb5"))
    spanning = {t.device for d in vgpu.catalogue().devices for t in vgpu.device_types(d) if t.board_note}
    assert spanning == {"2c3a"}
