"""Which plugin serves an entry (``--nvidia-plugin yes|no|auto``): NVIDIA's
with ``externalResourceProvider: true``, else KubeVirt's own; the codes
that contradict each other never meet on one entry, under every profile and
every ``--nvidia-plugin``; and a lower-case PCI selector is a finding only
under the KubeVirt releases that compare selectors as written."""

from __future__ import annotations

import re
import textwrap
from collections import defaultdict

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pciname.cli import main
from pciname.client import RemoteInvalidArgument
from pciname.lint.codes import CODES, contradicting
from pciname.lint.linter import Linter, lint_text
from pciname.lint.plugin import SANDBOX_PLUGIN_LABEL, NvidiaPlugin
from pciname.naming import mdev
from pciname.naming.profiles import load_registry
from pciname.policy.audit import audit
from pciname.resolution.resolver import resolver_or_default
from tests.kube_documents import vm

PROFILES = list(load_registry().profiles)
PLUGINS = [p.value for p in NvidiaPlugin]
PCI_DEVICES = ("10DE:2236", "10DE:1EB8", "10DE:26B9", "10DE:20B5", "10DE:2330", "10DE:0008")
MDEV_SELECTORS = ("GRID T4-1Q", "NVIDIA A10-24Q", "NVIDIA_A10-24Q", "A10-4Q", "NVIDIA L40S-24Q")
#: externalResourceProvider as written: absent, the booleans, null, and values that are no boolean.
ERPS = ("", "true", "false", "null", '"true"', "1")
_ENTRY = re.compile(r"(?:pciHostDevices|mediatedDevices)\[\d+\]")


def _names(profile: str, selector: str, kind: str) -> list[str]:
    """Right, wrong, upper- and lower-cased names, another device's and a KubeVirt-style one."""
    if kind == "pci":
        right = resolver_or_default(None).resolve(selector.lower(), profile).resource_name or "nvidia.com/GA102GL_A10"
    else:
        rule = resolver_or_default(None).view(profile).profile.mdev_name
        right = mdev.mdev_resource(selector, rule) or "nvidia.com/" + selector.replace(" ", "_")
    base = right.removeprefix("nvidia.com/")
    return [
        right,
        "nvidia.com/" + base.upper(),
        "nvidia.com/" + base.lower(),
        "nvidia.com/" + selector.replace(" ", "_"),
        "nvidia.com/GA102GL_A10",
        "nvidia.com/L40S-24Q",
    ]


def _entry(kind: str, selector: str, name: str, erp: str) -> str:
    key = "pciVendorSelector" if kind == "pci" else "mdevNameSelector"
    line = f"- {key}: {selector!r}\n  resourceName: {name!r}\n"
    return line + (f"  externalResourceProvider: {erp}\n" if erp else "")


def _document(entries: list[tuple[str, str, str, str]], cozystack: bool) -> str:
    pci = "".join(_entry(*e) for e in entries if e[0] == "pci")
    mdevs = "".join(_entry(*e) for e in entries if e[0] == "mdev")
    block = "permittedHostDevices:\n"
    block += "  pciHostDevices:\n" + textwrap.indent(pci, "  ") if pci else ""
    block += "  mediatedDevices:\n" + textwrap.indent(mdevs, "  ") if mdevs else ""
    return "gpu:\n" + textwrap.indent(block, "  ") if cozystack else block


def _every_entry(profile: str) -> list[tuple[str, str, str, str]]:
    """Each selector with each name and each way of writing externalResourceProvider
    (null reads as false, 1 as "true": the random test has them)."""
    entries = []
    for kind, selectors in (("pci", PCI_DEVICES + ("10de:2236",)), ("mdev", MDEV_SELECTORS)):
        for selector in selectors:
            for name in _names(profile, selector, kind):
                entries += [(kind, selector, name, erp) for erp in ERPS if erp not in ("null", "1")]
    return entries


def _contradictions(findings) -> list[tuple[str, set[str]]]:
    by_entry: dict[str, set[str]] = defaultdict(set)
    for f in findings:
        match = _ENTRY.search(f.path)
        if match is not None:
            by_entry[f"{f.document}:{match.group(0)}"].add(f.code)
    pairs = contradicting()
    return [(entry, codes) for entry, codes in by_entry.items() if any(p <= codes for p in pairs)]


def test_the_contradicting_codes_are_codes_and_name_the_plugin_question():
    pairs = contradicting()
    assert pairs and all(len(p) == 2 and p <= set(CODES) for p in pairs)
    assert frozenset({"missing-external-resource-provider", "wrong-mdev-resource-name"}) in pairs
    # What the property tests count: the pair on one entry is one, on two entries none.
    from pciname.lint.linter import Finding

    def at(path, code):
        return Finding("f", 1, 1, 1, path, None, code, "")

    both = [at("mediatedDevices[0].externalResourceProvider", "missing-external-resource-provider")]
    both.append(at("mediatedDevices[0].resourceName", "wrong-mdev-resource-name"))
    assert len(_contradictions(both)) == 1
    both[1] = at("mediatedDevices[1].resourceName", "wrong-mdev-resource-name")
    assert _contradictions(both) == []


@pytest.mark.parametrize("profile", PROFILES)
def test_no_entry_gets_contradicting_findings_under_any_profile(profile):
    """Every entry shape (PCI and mdev; with and without
    externalResourceProvider; right, wrong, upper, lower names) under every
    --nvidia-plugin: no entry gets a contradicting pair of findings."""
    text = _document(_every_entry(profile), cozystack=False)
    seen: set[str] = set()
    for plugin in PLUGINS:
        findings = lint_text(text, "every.yaml", profile, nvidia_plugin=plugin)
        assert _contradictions(findings) == [], plugin
        seen |= {f.code for f in findings}
    # The generated entries reach the codes the pairs are made of.
    assert {"missing-external-resource-provider", "invalid-external-resource-provider"} <= seen


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_inputs_never_get_contradicting_findings(data):
    profile = data.draw(st.sampled_from(PROFILES))
    kind = st.sampled_from(("pci", "mdev"))
    entries = []
    for _ in range(data.draw(st.integers(1, 6))):
        k = data.draw(kind)
        selector = data.draw(st.sampled_from(PCI_DEVICES + ("10de:1eb8",) if k == "pci" else MDEV_SELECTORS))
        name = data.draw(st.sampled_from(_names(profile, selector, k)))
        entries.append((k, selector, name, data.draw(st.sampled_from(ERPS))))
    text = _document(entries, cozystack=data.draw(st.booleans()))
    plugin = data.draw(st.sampled_from(PLUGINS))
    upgrade = data.draw(st.sampled_from([None, "latest", "kubevirt-gpu-device-plugin@v1.0.1"]))
    kubevirt = data.draw(st.sampled_from([None, "v0.36.0", "v1.9.0"]))
    findings = lint_text(text, "random.yaml", profile, upgrade, nvidia_plugin=plugin, kubevirt=kubevirt)
    assert _contradictions(findings) == []


# -- which plugin serves an entry --------------------------------------------------

T4 = "pciHostDevices:\n- pciVendorSelector: '10DE:1EB8'\n  resourceName: nvidia.com/TU104GL_TESLA_T4\n"
GRID = "mediatedDevices:\n- mdevNameSelector: GRID T4-1Q\n  resourceName: nvidia.com/GRID_T4-1Q\n"


def _run(text: str, profile: str = "latest", **options) -> tuple[list[str], list[str]]:
    linter = Linter(profile, **options)
    linter.add_text(text, "in.yaml")
    return [f.code for f in linter.run()], linter.notes


def test_auto_without_evidence_is_a_note_yes_a_finding_no_nothing():
    codes, notes = _run(T4)
    assert codes == []
    (note,) = notes
    assert "KubeVirt's own device plugin serves this entry" in note and "--nvidia-plugin yes" in note
    assert _run(T4, nvidia_plugin="yes")[0] == ["missing-external-resource-provider"]
    assert _run(T4, nvidia_plugin="no") == ([], [])


def test_the_v1_0_mdev_entry_gets_one_verdict_per_plugin_choice():
    """The issue's case: v1.0.x names 'GRID T4-1Q' T4-1Q; the entry (KubeVirt's
    own docs' name, no externalResourceProvider) got both a missing- and a wrong-name finding."""
    profile = "kubevirt-gpu-device-plugin@v1.0.1"
    codes, notes = _run(GRID, profile)
    assert codes == [] and "as nvidia.com/T4-1Q" in notes[0]
    (code,), _ = _run(GRID, profile, nvidia_plugin="yes")
    assert code == "missing-external-resource-provider"
    assert _run(GRID, profile, nvidia_plugin="no") == ([], [])
    erp = GRID + "  externalResourceProvider: true\n"
    assert _run(erp, profile)[0] == ["wrong-mdev-resource-name"]  # NVIDIA's plugin serves it: its name


@pytest.mark.parametrize(
    ("evidence", "runs"),
    [
        ("apiVersion: nvidia.com/v1\nkind: ClusterPolicy\nspec:\n  sandboxWorkloads: {enabled: true}\n", True),
        (
            "kind: ClusterPolicy\nspec:\n  sandboxWorkloads: {enabled: true}\n  sandboxDevicePlugin: {enabled: false}\n",
            False,
        ),
        ("sandboxWorkloads:\n  enabled: false\n", False),
        (
            "kind: DaemonSet\nspec:\n  template:\n    spec:\n      containers:\n"
            "      - {name: p, image: 'nvcr.io/nvidia/kubevirt-gpu-device-plugin:v1.6.0'}\n",
            True,
        ),
    ],
)
def test_auto_takes_nvidias_plugin_from_the_input(evidence, runs):
    codes, notes = _run(T4 + "---\n" + evidence)
    assert codes == (["missing-external-resource-provider"] if runs else [])
    assert bool(notes) is not runs


def test_cozystack_platform_values_run_nvidias_plugin():
    values = "gpu:\n  permittedHostDevices:\n" + textwrap.indent(T4, "    ")
    (finding,) = lint_text(values, "values.yaml")
    assert finding.code == "missing-external-resource-provider"
    assert "Cozystack deploys the GPU Operator" in finding.message
    assert lint_text(values, "values.yaml", nvidia_plugin="no") == []


def test_without_nvidias_plugin_a_name_of_another_device_is_kubevirts_to_give():
    text = T4.replace("TU104GL_TESLA_T4", "GA102GL_A10") + "---\n" + vm("nvidia.com/GA102GL_A10")
    assert _run(text, nvidia_plugin="yes")[0] == ["resource-name-conflict"]
    assert _run(text, nvidia_plugin="no") == ([], [])  # permitted by KubeVirt's plugin, and the VM may ask for it


def test_audit_takes_the_operators_sandbox_plugin_label_for_yes():
    kubevirt = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {
            "configuration": {
                "permittedHostDevices": {
                    "pciHostDevices": [
                        {"pciVendorSelector": "10DE:1EB8", "resourceName": "nvidia.com/TU104GL_TESLA_T4"}
                    ]
                }
            }
        },
    }
    plain = {"metadata": {"name": "n1", "labels": {}}, "status": {"capacity": {}, "allocatable": {}}}
    labelled = {"metadata": {"name": "n2", "labels": {SANDBOX_PLUGIN_LABEL: "true"}}, "status": plain["status"]}

    def codes(nodes):
        return [f["code"] for f in audit(kubevirt, nodes, "latest")["findings"] if f.get("path")]

    assert codes([plain]) == []
    assert codes([plain, labelled]) == ["missing-external-resource-provider"]


# -- selector case per KubeVirt release --------------------------------------------


def test_a_lowercase_selector_is_a_finding_only_where_kubevirt_compares_it_as_written():
    text = "pciHostDevices:\n- pciVendorSelector: '10de:26b9'\n  resourceName: nvidia.com/L40S-24Q\n"
    (finding,) = lint_text(text, "k.yaml", kubevirt="v0.38.2")
    assert (finding.code, finding.expected) == ("invalid-selector", "10DE:26B9")
    assert "KubeVirt v0.38.2" in finding.message
    assert "pkg/virt-handler/device-manager/device_controller.go:129" in finding.message
    for release in (None, "v0.39.0", "v1.9.0"):
        assert lint_text(text, "k.yaml", kubevirt=release) == [], release
    served_by_nvidia = text.replace("L40S-24Q", "AD102GL_L40S") + "  externalResourceProvider: true\n"
    assert lint_text(served_by_nvidia, "k.yaml", kubevirt="v0.36.0") == []  # KubeVirt never reads that selector


# -- the surfaces ---------------------------------------------------------------------


def test_the_cli_takes_both_options_and_refuses_bad_values(tmp_path, capsys):
    path = tmp_path / "t4.yaml"
    path.write_text(T4)
    assert main(["lint", str(path)]) == 0
    assert "note: " in capsys.readouterr().err
    assert main(["lint", "--nvidia-plugin", "yes", str(path)]) == 1
    assert "missing-external-resource-provider" in capsys.readouterr().out
    assert main(["lint", "--kubevirt", "v0.35.0", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pciname: error: --kubevirt: KubeVirt 'v0.35.0' is not a release") and err.count("\n") == 1
    with pytest.raises(SystemExit) as refused:
        main(["lint", "--nvidia-plugin", "maybe", str(path)])
    assert refused.value.code == 2
    assert "invalid choice: 'maybe'" in capsys.readouterr().err


def test_the_rpc_takes_both_fields_and_refuses_bad_values(client):
    assert [f.code for f in client.lint({"t4.yaml": T4}).findings] == []
    assert [f.code for f in client.lint({"t4.yaml": T4}, nvidia_plugin="yes").findings] == [
        "missing-external-resource-provider"
    ]
    lower = T4.replace("1EB8", "1eb8").replace("TU104GL_TESLA_T4", "T4-VF")
    assert [f.code for f in client.lint({"t4.yaml": lower}, kubevirt="v0.37.0").findings] == ["invalid-selector"]
    with pytest.raises(RemoteInvalidArgument, match="nvidia_plugin: 'maybe' is not one of yes, no, auto"):
        client.lint({"t4.yaml": T4}, nvidia_plugin="maybe")
    with pytest.raises(RemoteInvalidArgument, match="kubevirt: KubeVirt 'v9.9.9' is not a release"):
        client.lint({"t4.yaml": T4}, kubevirt="v9.9.9")
