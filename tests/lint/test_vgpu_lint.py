"""lint's ``unknown-vgpu-type``: a ``mdevNameSelector`` that is not the
string the driver shows for a catalogue type, flagged only where the
catalogue and certain prefix evidence tell."""

from __future__ import annotations

import pytest

from pciname.kubevirt.vgpu import kubevirt_selector_key
from pciname.lint.linter import UNKNOWN_VGPU_TYPE, lint_text


def cr(selector: str, resource: str) -> str:
    return f"""apiVersion: kubevirt.io/v1
kind: KubeVirt
spec:
  configuration:
    permittedHostDevices:
      mediatedDevices:
      - mdevNameSelector: "{selector}"
        resourceName: {resource}
        externalResourceProvider: true
"""


def vgpu_findings(selector: str, resource: str = "nvidia.com/X") -> list:
    return [f for f in lint_text(cr(selector, resource), "cr.yaml") if f.code == UNKNOWN_VGPU_TYPE]


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("A10-24Q", ["NVIDIA A10-24Q"]),
        ("GRID A10-24Q", ["NVIDIA A10-24Q"]),
        ("NVIDIA T4-16Q", ["GRID T4-16Q"]),
        ("L40S-24Q", ["NVIDIA L40S-24Q"]),
        ("A100D-4C", ["GRID A100D-4C"]),
    ],
)
def test_wrong_strings_of_known_types_are_flagged_with_the_real_one(selector, expected):
    (finding,) = vgpu_findings(selector)
    assert finding.expected == expected
    assert finding.path.endswith("mdevNameSelector") and finding.line == 7
    assert expected[0] in finding.message


@pytest.mark.parametrize(
    "selector",
    [
        "NVIDIA A10-24Q",  # the real string
        "GRID T4-1Q",
        "NVIDIA A100-40C",  # A100: no observed string, so not certain
        "GRID A100-40C",
        "NVIDIA V100D-32C",  # V100D: only a guest's name
        "NVIDIA V100-8Q",  # V100: a test fixture and an unrecorded listing
        "GRID A40-24Q",  # A40: an unrecorded listing
        "NVIDIA H100-80C",  # H100: no evidence
        "NVIDIA A2-1B",  # a real type the catalogue does not list
        "something else",
    ],
)
def test_what_the_evidence_cannot_tell_is_not_flagged(selector):
    assert vgpu_findings(selector) == []


def test_kubevirt_compares_with_spaces_as_underscores():
    assert kubevirt_selector_key("GRID T4-1Q") == "GRID_T4-1Q"
    assert kubevirt_selector_key(" GRID T4-1Q ") == "_GRID_T4-1Q_"  # TrimSpace after the replace
    assert [f.expected for f in vgpu_findings("GRID T4-1Q ")] == [["GRID T4-1Q"]]


def test_cozystack_vgpu_defaults_t4_entry_is_flagged():
    """Cozystack's own vGPU default table, as its newest release ships it
    (from the vendored upstream files)."""
    from tests.cozystack_util import commit, source, tags

    data = source().read(commit(tags()[-1]), "packages/core/platform/files/gpu-vgpu-defaults.yaml")
    assert data is not None
    text = data.decode()
    found = [(f.value, f.expected) for f in lint_text(text, "defaults.yaml") if f.code == UNKNOWN_VGPU_TYPE]
    assert found == [("NVIDIA T4-16Q", ["GRID T4-16Q"])]


def notes_of(selector: str) -> list[str]:
    from pciname.lint.linter import Linter

    linter = Linter()
    linter.add_text(cr(selector, "nvidia.com/X"), "cr.yaml")
    linter.run()
    return linter.notes


@pytest.mark.parametrize(
    ("selector", "words"),
    [
        ("NVIDIA A100-40C", "no A100 type string has been observed"),
        ("NVIDIA V100-8Q", "inferred 'GRID V100-8Q'"),
        ("NVIDIA A100-80C", "the closest are A100D-80C"),
        ("NVIDIA A2-1B", "not among the 8 A2 types"),  # B series: real, not in the catalogue
    ],
)
def test_what_cannot_be_checked_is_a_note(selector, words):
    (note,) = notes_of(selector)
    assert note.startswith("cr.yaml:7: spec.configuration.permittedHostDevices.mediatedDevices[0].mdevNameSelector: ")
    assert words in note and "mdev_supported_types" in note


@pytest.mark.parametrize("selector", ["NVIDIA A10-24Q", "A10-24Q", "GRID V100-8Q", "GRID P4-1Q", "something else"])
def test_no_note_for_checked_or_unknown_family(selector):
    assert notes_of(selector) == []


def test_cli_prints_notes_on_stderr_and_keeps_the_exit_code(tmp_path, capsys):
    from pciname.cli import main

    path = tmp_path / "cr.yaml"
    path.write_text(cr("NVIDIA A100-40C", "nvidia.com/NVIDIA_A100-40C"))
    assert main(["lint", str(path)]) == 0
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("pciname: note: ") and err.count("\n") == 1
