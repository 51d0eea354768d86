"""Lint on public GPU configurations nobody here wrote (tests/data/lint-corpus/,
SOURCES says where each comes from): the findings are exactly the expected
ones, each with its reason beside it, under the default ``--nvidia-plugin
auto`` and under ``yes`` and ``no``, with the newest plugin and v1.0.1."""

from __future__ import annotations

import pytest

from pciname.lint.linter import Linter
from tests.conftest import REPO

CORPUS = REPO / "tests" / "data" / "lint-corpus"
LATEST, V1_0 = "latest", "kubevirt-gpu-device-plugin@v1.0.1"

#: (file, profile, --nvidia-plugin) -> the expected (line, code) findings,
#: each with the reason it is right, and how many notes.
EXPECTED: dict[tuple[str, str, str], tuple[list[tuple[int, str, str]], int]] = {
    # KubeVirt user guide: the T4 entry with externalResourceProvider: true is
    # NVIDIA's plugin's, and every release from v1.1.0 upper-cases the name
    # (TU104GL_TESLA_T4): the guide's TU104GL_Tesla_T4 is v1.0.x's. The GRID
    # T4-1Q entry has no externalResourceProvider: KubeVirt's own plugin
    # serves it as written (a note under auto; a finding only where NVIDIA's
    # plugin also serves vGPU types on those nodes).
    ("kubevirt-user-guide-host-devices.yaml", LATEST, "auto"): (
        [(14, "wrong-resource-name", "v1.1.0+ names 10DE:1EB8 TU104GL_TESLA_T4")],
        1,
    ),
    ("kubevirt-user-guide-host-devices.yaml", LATEST, "yes"): (
        [
            (14, "wrong-resource-name", "as under auto"),
            (19, "missing-external-resource-provider", "NVIDIA's plugin serves GRID T4-1Q too: two plugins"),
        ],
        0,
    ),
    ("kubevirt-user-guide-host-devices.yaml", LATEST, "no"): (
        [(14, "wrong-resource-name", "the entry itself says NVIDIA's plugin serves it")],
        0,
    ),
    ("kubevirt-user-guide-host-devices.yaml", V1_0, "auto"): ([], 1),  # v1.0.1's name, as the guide wrote it
    # KubeVirt's developer docs: both NVIDIA entries without
    # externalResourceProvider, so KubeVirt's own plugins serve them under
    # the names given. Under the newest plugin the T4's name is not NVIDIA's
    # (no clash, nothing to note); under v1.0.1 it is, which is a mistake
    # only where NVIDIA's plugin runs too.
    ("kubevirt-devel-host-devices.yaml", LATEST, "auto"): ([], 1),  # the GRID entry's note
    ("kubevirt-devel-host-devices.yaml", LATEST, "no"): ([], 0),
    ("kubevirt-devel-host-devices.yaml", LATEST, "yes"): (
        [(20, "missing-external-resource-provider", "NVIDIA's plugin serves GRID T4-1Q too")],
        0,
    ),
    ("kubevirt-devel-host-devices.yaml", V1_0, "auto"): ([], 2),  # both names are v1.0.1's NVIDIA names: notes
    ("kubevirt-devel-host-devices.yaml", V1_0, "yes"): (
        [
            (15, "missing-external-resource-provider", "v1.0.1 names 10DE:1EB8 TU104GL_Tesla_T4 too"),
            (20, "missing-external-resource-provider", "NVIDIA's plugin serves GRID T4-1Q too"),
        ],
        0,
    ),
    # Cozystack's SR-IOV vGPU guide: KubeVirt v1.9 serves the L40S VFs under
    # the name given (externalResourceProvider omitted, as the guide says),
    # a name NVIDIA's plugin gives no device, so nothing clashes even where
    # it runs; the VM asks for that name.
    ("cozystack-gpu-vgpu-sriov.yaml", LATEST, "auto"): ([], 0),
    ("cozystack-gpu-vgpu-sriov.yaml", LATEST, "yes"): ([], 0),
    ("cozystack-gpu-vgpu-sriov.yaml", V1_0, "auto"): ([], 0),
}


def test_every_corpus_file_has_expectations_and_a_source():
    files = sorted(p.name for p in CORPUS.glob("*.yaml"))
    assert files == sorted({file for file, _, _ in EXPECTED})
    sources = (CORPUS / "SOURCES").read_text(encoding="utf-8")
    for name in files:
        entry = ("\n" + sources).split(f"\n{name}\n", 1)[1].split("\n\n", 1)[0]
        commit = entry.split("commit: ", 1)[1][:40]
        assert "repository: github.com/" in entry and "licence: " in entry, name
        assert commit in (CORPUS / name).read_text(encoding="utf-8"), name  # the file's header names it too


@pytest.mark.parametrize(("file", "profile", "plugin"), sorted(EXPECTED))
def test_lint_finds_exactly_the_expected(file, profile, plugin):
    linter = Linter(profile, nvidia_plugin=plugin)
    linter.add_text((CORPUS / file).read_text(encoding="utf-8"), file)
    findings = [(f.line, f.code) for f in linter.run()]
    expected, notes = EXPECTED[file, profile, plugin]
    assert findings == [(line, code) for line, code, _reason in expected]
    assert len(linter.notes) == notes
