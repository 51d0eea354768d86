"""HAMi's facts per release (pciname.hami.releases): the shipped facts are
what tools/hami_extract.py makes of the vendored upstream files (HAMi's chart
and code, HAMi-core's code at each pinned commit), and they say what that
code says."""

from __future__ import annotations

import pytest

from pciname.errors import PcinameError
from pciname.hami.releases import release, releases
from tests.extract_util import Extracted

FAMILY = Extracted("hami", "hami_extract")
HAMI = "Project-HAMi/HAMi"
CORE = "Project-HAMi/HAMi-core"


def _blob(repository: str, key: str, path: str) -> str:
    sidecar = FAMILY.sidecar()["repositories"][repository]["tags"]
    blob = sidecar[key]["files"][path]
    return FAMILY.tarball()[f"blobs/{blob}"].decode()


def test_the_shipped_facts_are_what_the_script_makes_of_the_inputs():
    done = FAMILY.run("--from-inputs", str(FAMILY.inputs), "--check")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "up to date" in done.stdout


def test_a_changed_fact_is_reported_stale(tmp_path):
    shipped = FAMILY.shipped_path.read_text(encoding="utf-8")
    (tmp_path / "releases.json").write_text(shipped.replace('"nvidia.com/gpumem"', '"nvidia.com/gpumemory"', 1))
    done = FAMILY.run("--from-inputs", str(FAMILY.inputs), "--check", "--out", str(tmp_path))
    assert done.returncode == 1 and "STALE: 1 facts differ: releases" in done.stdout, done.stdout


def test_every_release_from_v2_4_0_to_the_newest_tag_is_covered():
    assert releases()[0] == "v2.4.0" and releases()[-1] == "v2.10.0"
    assert len(releases()) == 16
    assert release("2.8.1") is release("v2.8.1")
    with pytest.raises(PcinameError, match="v2.4.0 to v2.10.0"):
        release("v2.3.0")


def test_the_names_are_the_charts_in_every_release():
    for tag in releases():
        names = release(tag).names
        values = _blob(HAMI, tag, "charts/hami/values.yaml")
        for key, name in zip(
            ("resourceName", "resourceMem", "resourceMemPercentage", "resourceCores", "resourcePriority"),
            names.all(),
            strict=True,
        ):
            assert f'\n{key}: "{name}"' in values, (tag, key)
    assert release("v2.9.0").names.all() == (
        "nvidia.com/gpu",
        "nvidia.com/gpumem",
        "nvidia.com/gpumem-percentage",
        "nvidia.com/gpucores",
        "nvidia.com/priority",
    )


def test_the_node_selector_key_changes_case_at_v2_8_0_and_the_daemonset_reads_its_own():
    for tag in releases():
        facts = release(tag)
        major_minor = tuple(int(part) for part in tag[1:].split(".")[:2])
        expected = "devicePlugin.nvidiaNodeSelector" if major_minor >= (2, 8) else "devicePlugin.nvidianodeSelector"
        assert facts.node_selector_key == expected, tag
        assert facts.node_selector == {"gpu": "on"}, tag
        line = int(facts.node_selector_where.rpartition(":")[2])
        daemonset = _blob(HAMI, tag, "charts/hami/templates/device-plugin/daemonsetnvidia.yaml")
        assert f"toYaml .Values.{expected} " in daemonset.splitlines()[line - 1], tag


def test_defaults_and_split_count():
    for tag in releases():
        facts = release(tag)
        assert (facts.default_memory_mb, facts.default_cores, facts.split_count) == (0, 0, 10), tag


def test_the_libvgpu_commits_and_the_dl_sym_fallback_per_release():
    pinned = {tag: release(tag).libvgpu_commit[:7] for tag in releases()}
    assert pinned["v2.4.0"] == "fb11ec3" and pinned["v2.8.1"] == "94fff56" and pinned["v2.9.0"] == "5091a2f"
    assert pinned["v2.10.0"] == "b216ba1"
    # v2.10.0 pins a commit HAMi-core's mirror does not hold: recorded, not guessed.
    assert release("v2.10.0").dlsym_lookups is None
    falls_back = {
        tag: any(lookup.falls_back_to_dl_sym for lookup in release(tag).dlsym_lookups or ()) for tag in releases()
    }
    assert [tag for tag, yes in falls_back.items() if not yes] == ["v2.8.3", "v2.9.0", "v2.10.0"]
    dlsym = {tag: next(x for x in release(tag).dlsym_lookups or () if x.function == "dlsym") for tag in releases()[:-1]}
    # 85c9055 (in v2.8.0) made the dlsym hook try GLIBC_2.17, arm64's base version, after x86-64's GLIBC_2.2.5.
    assert dlsym["v2.7.1"].versions == ("GLIBC_2.2.5",)
    assert dlsym["v2.8.0"].versions[:2] == ("GLIBC_2.2.5", "GLIBC_2.17")
    # v2.4.x's preInit and load_nvml_libraries call _dl_sym without trying dlvsym first (9e62420, 7fa7c0d came later).
    first = {x.function: x for x in release("v2.4.0").dlsym_lookups or ()}
    assert first["preInit"].versions == () and first["preInit"].falls_back_to_dl_sym
    assert first["load_nvml_libraries"].versions == ()


def test_the_dlsym_lookups_name_hami_cores_code_lines():
    for tag in releases()[:-1]:
        facts = release(tag)
        for lookup in facts.dlsym_lookups or ():
            text = _blob(CORE, facts.libvgpu_commit, lookup.path)
            assert lookup.function + "(" in text.splitlines()[lookup.line - 1].replace(" (", "("), (tag, lookup)
            assert ("_dl_sym(RTLD_NEXT" in text) is (
                lookup.falls_back_to_dl_sym or any(x.falls_back_to_dl_sym for x in facts.dlsym_lookups or ())
            )


COZYSTACK = "cozystack/cozystack"


def test_each_cozystack_release_ships_the_hami_its_chart_says():
    rows = FAMILY.shipped()["cozystack"]["releases"]
    shipped = {row["release"]: row["hami"] for row in rows}
    assert [v for v, h in shipped.items() if h is None][-1] == "v1.3.6"
    assert {h for h in shipped.values() if h} == {"v2.8.1", "v2.9.0"}
    assert [v for v, h in shipped.items() if h == "v2.9.0"] == ["v1.6.0", "v1.6.1", "v1.6.2"]
    for row in rows:
        if row["hami"] is None:
            assert (
                FAMILY.sidecar()["repositories"][COZYSTACK]["tags"][row["release"]]["files"][
                    "packages/system/hami/charts/hami/Chart.yaml"
                ]
                is None
            )
            continue
        chart = _blob(COZYSTACK, row["release"], row["chart"]["path"]).splitlines()
        assert chart[row["chart"]["line"] - 1] == f"appVersion: {row['hami'][1:]}"
        switch = _blob(COZYSTACK, row["release"], row["switch"]["path"]).splitlines()
        assert ".Values.addons.hami.enabled" in switch[row["switch"]["line"] - 1]


def test_what_a_cozystack_release_ships_from_the_library():
    from pciname.hami.releases import cozystack

    shipped = cozystack("v1.5.4")
    assert shipped is not None and (shipped.hami, shipped.values_path) == ("v2.8.1", ("addons", "hami", "enabled"))
    assert shipped.where.startswith("cozystack/cozystack@fe2fbd0d2448 packages/system/hami/charts/hami/Chart.yaml:2")
    none = cozystack("v1.0.0")
    assert none is not None and none.hami is None
    assert cozystack("v0.9.0") is None


def test_a_pinned_hami_core_commit_not_read_is_said_and_inferred_from_main_labelled_as_such():
    facts = release("v2.10.0")
    assert facts.dlsym_lookups is None and facts.inferred is not None
    assert facts.inferred.source == "8f3a89c67b037d8fdfe6c4cd4d8c4f0cd6504811"
    assert "inferred" in facts.inferred.evidence and "2026-06-30" in facts.inferred.evidence
    assert [(x.function, x.falls_back_to_dl_sym) for x in facts.inferred.lookups] == [
        ("dlsym", False),
        ("preInit", False),
        ("load_nvml_libraries", False),
    ]
    for lookup in facts.inferred.lookups:  # what main's own files say
        assert "_dl_sym(" not in _blob(CORE, facts.inferred.source, lookup.path)
    assert release("v2.9.0").inferred is None  # a commit read needs no inference


@pytest.mark.parametrize(
    ("spelled", "tag"),
    [("v2.8.1", "v2.8.1"), ("hami@v2.8.1", "v2.8.1"), ("cozystack@v1.5.4", "v2.8.1"), ("Cozystack@v1.6.0", "v2.9.0")],
)
def test_a_release_is_a_hami_tag_or_the_one_a_cozystack_release_ships(spelled, tag):
    from pciname.hami.check import release_tag

    assert release_tag(spelled) == tag


def test_a_cozystack_release_without_hami_or_unknown_is_one_line():
    from pciname.hami.check import release_tag

    with pytest.raises(PcinameError, match=r"^Cozystack v1\.3\.6 ships no HAMi \(cozystack/cozystack@4c7443e0"):
        release_tag("cozystack@v1.3.6")
    with pytest.raises(PcinameError, match=r"no Cozystack release pciname has HAMi facts for \(v1\.0\.0 to v1\.6\.2"):
        release_tag("cozystack@v9.9.9")
