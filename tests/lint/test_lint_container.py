"""The container variant in lint (pciname.lint.kinds.gfd), judged by the
model of NVIDIA's k8s-device-plugin (data/k8s-device-plugin/releases.json):
rule ``container-pods`` (a pod's MIG name no release advertises by default),
rule ``gfd-selectors`` (a node selector on a GFD label value no release
writes), and the notes of rule ``unmodelled-names`` saying what the model
says of the names it does advertise. Documents: the node labels of the
plugin's own GFD README (tests/kube_documents.GFD_NODE_LABELS), the names
of its README, and labels the model gives (each must lint clean)."""

from __future__ import annotations

import pytest

from pciname.lint.linter import Linter
from pciname.naming.container import Gpus, gfd_labels, releases
from tests.cli_run import pciname
from tests.kube_documents import GFD_NODE_LABELS, pod

NEVER_SET = "gfd-label-value-never-set"
NOT_ADVERTISED = "container-name-not-advertised"


def _lint(*texts: str) -> tuple[list, list[str]]:
    linter = Linter("latest")
    linter.add_text("---\n".join(texts), "input.yaml")
    return linter.run(), linter.notes


def test_the_upstream_readmes_node_labels_as_a_node_selector_lint_clean():
    findings, notes = _lint(pod({"nvidia.com/gpu": 1}, GFD_NODE_LABELS))
    assert findings == []
    assert notes == [
        'input.yaml:14: spec.containers[0].resources.limits["nvidia.com/gpu"]: k8s-device-plugin v0.15.0..v0.20.0 '
        "advertises nvidia.com/gpu for whole GPUs (and for MIG devices under strategy single): whether a node "
        "offers it was not checked (HAMi's chart registers it too: --hami RELEASE checks it as HAMi reads it)"
    ]


def test_every_label_the_model_gives_lints_clean_as_a_node_selector():
    """Every release, whole and shared (renamed or not) GPUs of every family."""
    selectors = []
    for release in releases().values():
        for major, minor in ((7, 0), (7, 5), (8, 9), (9, 0), (12, 0), (13, 0), (4, 0)):
            for replicas, renamed in ((1, False), (4, False), (4, True)):
                gpus = Gpus("NVIDIA H100 80GB HBM3", 8, 81559, (major, minor), replicas, renamed, "mps")
                selectors.append(gfd_labels(release, gpus))
    assert len({label for s in selectors for label in s}) == 8  # nvidia.com/gpu's, renamed or not
    findings, _ = _lint(*(pod({}, s, name=f"p{i}") for i, s in enumerate(selectors)))
    assert findings == []


@pytest.mark.parametrize(
    ("label", "value", "expected"),
    [
        ("nvidia.com/gpu.family", "ada", "ada-lovelace"),
        ("nvidia.com/gpu.sharing-strategy", "timeslicing", "time-slicing"),
        ("nvidia.com/gpu.shared.product", "Tesla-T4", "nvidia.com/gpu.product"),
        ("nvidia.com/gpu.memory", "40GB", None),
        ("nvidia.com/mig-1g.5gb.count", "many", None),
    ],
)
def test_a_selected_value_no_release_writes_is_a_finding(label, value, expected):
    findings, _ = _lint(pod({}, {**GFD_NODE_LABELS, label: value}))
    assert [(f.code, f.path, f.value) for f in findings] == [(NEVER_SET, f'spec.nodeSelector["{label}"]', value)]
    got = findings[0].expected
    assert expected in got if isinstance(got, list) else got == expected
    assert findings[0].message.startswith(f"no GPU Feature Discovery release (v0.15.0..v0.20.0) labels a node {label}")
    assert "NVIDIA/k8s-device-plugin@1b826acc " in findings[0].message or expected is None


def test_a_node_affinity_in_expression_is_judged_and_not_in_is_not():
    affinity = (
        "kind: Pod\nspec:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n"
        "        nodeSelectorTerms:\n        - matchExpressions:\n"
        "          - {key: nvidia.com/gpu.family, operator: In, values: [hopper, ada]}\n"
        "          - {key: nvidia.com/gpu.family, operator: NotIn, values: [ada]}\n"
        "          - {key: nvidia.com/gpu.machine, operator: In, values: [anything]}\n"
    )
    findings, _ = _lint(affinity)
    assert [(f.line, f.path) for f in findings] == [
        (
            8,
            "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]"
            ".matchExpressions[0].values[1]",
        )
    ]


def test_the_readmes_mig_names_are_advertised_and_a_plus_or_c_not_g_is_a_finding():
    """NVIDIA/k8s-device-plugin v0.20.0 README.md lines 499-512: the names under strategy mixed."""
    readme = [f"nvidia.com/mig-{p}" for p in ("1g.5gb", "2g.10gb", "3g.20gb", "7g.40gb", "1g.10gb", "7g.80gb")]
    findings, notes = _lint(pod(dict.fromkeys(readme, 1)))
    assert findings == [] and len(notes) == len(readme)
    assert all("under strategy mixed: whether a node offers it was not checked" in n for n in notes)
    findings, notes = _lint(pod({"nvidia.com/mig-1g.10gb+me": 1, "nvidia.com/mig-1c.2g.10gb": 1}))
    assert [(f.code, f.expected) for f in findings] == [
        (NOT_ADVERTISED, "nvidia.com/mig-1g.10gb.me"),
        (NOT_ADVERTISED, None),
    ]
    assert "it writes '+' as '.' (NVIDIA/k8s-device-plugin@1b826acc internal/rm/rm.go:145)" in findings[0].message
    assert "skips profiles with C != G (NVIDIA/k8s-device-plugin@1b826acc internal/rm/rm.go:142" in findings[1].message
    assert notes == []  # judged: no note besides the findings


def test_the_cli_reports_a_gfd_finding_with_exit_1(tmp_path):
    path = tmp_path / "pod.yaml"
    path.write_text(pod({"nvidia.com/gpu": 1}, {"nvidia.com/gpu.family": "ada"}))
    done = pciname("lint", str(path), "-o", "json")
    assert done.returncode == 1
    assert '"code": "gfd-label-value-never-set"' in done.stdout


def test_docs_naming_section_10_transcript_is_what_the_cli_prints(tmp_path, monkeypatch):
    from tests.conftest import REPO

    section = (REPO / "docs" / "naming.md").read_text(encoding="utf-8").split("\n## 10. ", 1)[1]
    document = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    transcript = section.split("```text\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gfd-doc.yaml").write_text(document, encoding="utf-8")
    ran = pciname("lint", "gfd-doc.yaml")
    assert ran.returncode == 1
    assert ran.stdout + ran.stderr == transcript
