"""The rules of a lint run are a registry (pciname.lint.rules: one function
per pciname.lint.codes.RuleName, registered in the module of its kind,
pciname.lint.kinds; pciname.lint.linter.RULES in RuleName order), and each
code names the rules that report it: over the inputs here each code comes
from exactly those rules. No module of pciname/lint/ passes 800 lines."""

from __future__ import annotations

import inspect
import textwrap
from pathlib import Path

import pytest

from pciname.dra.facts import choose
from pciname.lint import codes as lint_codes, linter as lint, rules as lint_rules
from pciname.lint.codes import CODES, RuleName
from pciname.lint.linter import RULES, Linter
from tests import kube_documents as docs

# A CR with an mdev selector the v1.0.x plugin panics on and PCI entries
# KubeVirt advertises (one whose socket path is too long), beside a VM asking for names permitted, wrong,
# close and unknown, and one whose socket path is too long.
MIXED = """\
apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata: {name: kubevirt, namespace: kubevirt}
spec:
  configuration:
    permittedHostDevices:
      pciHostDevices:
      - {pciVendorSelector: "10DE:2236", resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}
      - {pciVendorSelector: "10DE:1EB8", resourceName: nvidia.com/TU104GL_TESLA_T4}
      - {pciVendorSelector: "10DE:26B9", resourceName: nvidia.com/NVIDIA_A10-12Q}
      - {pciVendorSelector: "10DE:20B5", resourceName: nvidia.com/GA102GL_A10}
      - {pciVendorSelector: "10DE:26BA", resourceName: nvidia.com/L40S-VF-WITH-A-NAME-LONG-ENOUGH-FOR-A-TOO-LONG-SOCKET}
      mediatedDevices:
      - {mdevNameSelector: "NVIDIA_A10-24Q", resourceName: nvidia.com/NVIDIA_A10-24Q, externalResourceProvider: true}
      - {mdevNameSelector: "NVIDIA A10-12Q", resourceName: nvidia.com/NVIDIA_A10-12Q, externalResourceProvider: true}
      - {mdevNameSelector: "GRID T4-1Q", resourceName: nvidia.com/T4-1Q, externalResourceProvider: true}
      - {mdevNameSelector: "A10-4Q", resourceName: nvidia.com/A10-4Q, externalResourceProvider: true}
---
""" + docs.vm(
    "nvidia.com/GA102GL_A1",
    "nvidia.com/NVIDIA_A10-12R",
    "nvidia.com/GRID_T4-1Q",
    "nvidia.com/TU104GL_TESLA_T4",
    "nvidia.com/GA100_A100_PCIE_80GB",
    "nvidia.com/T4-1Q",
    "nvidia.com/bad name",
    "nvidia.com/A_NAME_LONG_ENOUGH_THAT_ITS_SOCKET_PATH_IS_TOO_LONG_FOR_A_UNIX",
)

INPUTS = [
    ("kubevirt-gpu-device-plugin@v1.0.0", "latest", MIXED),
    ("latest", "kubevirt-gpu-device-plugin@v1.0.0", MIXED),
    ("latest", None, MIXED),
    *[
        (profile, upgrade, text)
        for text in (
            docs.KUBEVIRT_CR,
            docs.HYPERCONVERGED,
            docs.COZYSTACK_VALUES,
            docs.VMS,
            docs.TENANT,
            docs.SRIOV_DOC,
        )
        for profile, upgrade in (("latest", None), ("kubevirt-gpu-device-plugin@v1.0.0", "latest"))
    ],
    ("latest", None, docs.KUBEVIRT_CR + "\n---\n" + docs.VMS),
    ("latest", None, "a: 1\na: 2\npermittedHostDevices: {pciHostDevices: [{pciVendorSelector: x}]}\n"),
    ("latest", None, "nodeGroups:\n  md0:\n    ephemeralStorage: 20Gi\n    gpus: [{name: nvidia.com/AD102GL_L40S}]\n"),
    (
        "latest",
        None,
        "kind: KubeVirt\npermittedHostDevices:\n  pciHostDevices:\n  - {pciDeviceSelector: '10DE:2236'}\n",
    ),
    ("latest", None, "kind: KubeVirt\nspec:\n  permittedHostDevices: {}\n"),
    ("latest", None, docs.pod({"nvidia.com/mig-1g.10gb+me": 1}, {"nvidia.com/gpu.family": "ada"})),
    (
        "latest",
        None,
        "kind: VirtualMachine\nspec: {domain: {devices: {gpus: [{deviceName: nvidia.com/mig-1g.5gb}]}}}\n",
    ),
    (
        "latest",
        None,
        "permittedHostDevices:\n  pciHostDevices:\n  - {pciVendorSelector: '10DE:0008', resourceName: "
        "nvidia.com/NV1_STG2000XB_SERIES, externalResourceProvider: true}\n  - {pciVendorSelector: '10DE:FFFF', "
        "resourceName: nvidia.com/x, externalResourceProvider: true}\n",
    ),
    (
        "latest",
        None,
        "kind: Pod\nspec:\n  runtimeClassName: kata-qemu-nvidia-gpu\n  containers:\n"
        "  - {name: c, resources: {limits: {nvidia.com/GA102GL_A10: 1}}}\n",
    ),
    (
        "latest",
        None,
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\nspec:\n  spec:\n"
        "    devices:\n      requests:\n"
        "      - {name: a, exactly: {deviceClassName: vfio.gpu.nvidia.com, selectors: [{cel: {expression: "
        '\'device.attributes["gpu.nvidia.com"].productName == "NVIDIA A10"\'}}]}}\n'
        "      - {name: b, exactly: {deviceClassName: vfio.gpu.nvidia.com, selectors: [{cel: {expression: "
        '\'device.attributes["resource.kubernetes.io"].pciBusID == "0000:3b:00.0"\'}}]}}\n'
        "      - {name: c, exactly: {deviceClassName: gpu.nvidia.com}}\n"
        "      - {name: d, deviceClassName: vfio.gpu.nvidia.com}\n"
        "      config:\n      - opaque: {driver: gpu.nvidia.com, parameters: {apiVersion: resource.nvidia.com/v1beta1, "
        "kind: VfioDeviceConfig, iommu: {backendPolicy: Legacy}}}\n"
        "---\nkind: VirtualMachine\nspec:\n  template:\n    spec:\n      resourceClaims: [{name: t, "
        "resourceClaimTemplateName: t}]\n      domain:\n        devices:\n          gpus:\n"
        "          - {name: g1, claimName: t, requestName: c}\n          - {name: g2, claimName: t, requestName: e}\n"
        "          - {name: g3, claimName: u, requestName: a}\n",
    ),
]


#: Claims checked under a DRA driver release: v0.4.0 crashes preparing a
#: vfio claim, and no v0.4.x release publishes gpu.nvidia.com/partition2.
DRA_INPUTS = [
    (
        "v0.4.0",
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: t}\nspec:\n  spec:\n"
        "    devices:\n      requests:\n"
        "      - {name: a, exactly: {deviceClassName: vfio.gpu.nvidia.com}}\n"
        "      - {name: b, exactly: {deviceClassName: vfio.gpu.nvidia.com}}\n"
        "      constraints: [{matchAttribute: gpu.nvidia.com/partition2}]\n",
    ),
]


#: Pods and a VM checked with --hami v2.8.1: one finding of each hami-* code.
HAMI_INPUT = """\
kind: Pod
spec:
  containers:
  - {name: a, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpucores: 150}}}
  - {name: b, resources: {limits: {nvidia.com/gpu: 1, nvidia.com/gpumem: 1000, nvidia.com/gpumem-percentage: 50}}}
  - {name: c, resources: {limits: {nvidia.com/gpumem: 1000, nvidia.com/gpu-a100: 1}}}
---
kind: VirtualMachine
spec: {template: {spec: {domain: {devices: {gpus: [{name: g, deviceName: nvidia.com/gpu}]}}}}}
"""


def test_there_is_a_rule_per_name_in_its_order():
    assert [rule.name for rule in RULES] == list(RuleName)
    assert all(callable(rule.check) for rule in RULES)


def test_each_code_names_rules_of_the_registry_and_each_rule_reports_some():
    for code, c in CODES.items():
        assert c.rules and set(c.rules) <= set(RuleName), code
        assert len(set(c.rules)) == len(c.rules), code
    assert {name for c in CODES.values() for name in c.rules} | set(lint_codes.NOTES_ONLY) == set(RuleName)


@pytest.fixture
def by_rule(monkeypatch):
    """code -> the rules that reported it, over :data:`INPUTS`, with and
    without NVIDIA's plugin said to run beside KubeVirt's (``--nvidia-plugin``)."""
    reported: dict[str, set[str]] = {}

    def watched(rule):
        def check(linter, state):
            before = len(state.findings)
            rule.check(linter, state)
            for finding in state.findings[before:]:
                reported.setdefault(finding.code, set()).add(rule.name)

        return rule._replace(check=check)

    monkeypatch.setattr(lint, "RULES", tuple(watched(rule) for rule in RULES))
    for profile, upgrade, text in INPUTS:
        for plugin in ("auto", "yes"):
            linter = Linter(profile, upgrade, nvidia_plugin=plugin)
            linter.add_text(text, "input.yaml")
            linter.run()
    for driver, text in DRA_INPUTS:
        linter = Linter("latest", dra=choose(driver))
        linter.add_text(text, "claims.yaml")
        linter.run()
    linter = Linter("latest", hami="v2.8.1")
    linter.add_text(HAMI_INPUT, "pods.yaml")
    linter.run()
    return reported


def test_findings_come_from_the_rules_their_codes_name(by_rule):
    for code, rules in by_rule.items():
        assert rules <= set(CODES[code].rules), (code, rules)


def test_every_code_is_reported_by_its_first_rule(by_rule):
    assert set(by_rule) == set(CODES), sorted(set(CODES) - set(by_rule))
    for code, rules in by_rule.items():
        assert CODES[code].rules[0] in rules, code
    assert lint_codes.RuleName.REFERENCES in by_rule[lint_codes.WRONG_RESOURCE_NAME]


def test_each_code_is_reported_by_exactly_the_rules_that_declare_it(by_rule):
    """The rule registry and the code registry agree both ways: over the
    inputs here, each code comes from every rule its entry names and from
    no other."""
    assert {code: rules for code, rules in by_rule.items()} == {code: set(c.rules) for code, c in CODES.items()}


def test_every_rule_is_registered_once_in_the_module_of_its_kind():
    assert [rule.check.__module__.rpartition(".")[0] for rule in RULES] == ["pciname.lint.kinds"] * len(RuleName)
    assert len({rule.check for rule in RULES}) == len(RULES)


def test_a_rule_registered_twice_is_refused_and_the_first_kept():
    first = dict(lint_rules._REGISTRY)
    with pytest.raises(ValueError, match="lint rule permitted-entries is registered twice"):
        lint_rules.rule(RuleName.ENTRIES)(lambda ctx, state: None)
    assert first == lint_rules._REGISTRY
    assert lint_rules.ordered() == RULES


def test_a_rule_name_without_a_check_is_refused(monkeypatch):
    registry = {name: r for name, r in lint_rules._REGISTRY.items() if name is not RuleName.KATA_PODS}
    monkeypatch.setattr(lint_rules, "_REGISTRY", registry)
    with pytest.raises(LookupError, match="lint rules without a check: kata-pods"):
        lint_rules.ordered()


#: No module of pciname/lint/ is longer (issue 37: the linter was 1,683 lines).
MAX_LINT_MODULE_LINES = 800


def test_no_lint_module_is_over_800_lines():
    lint_dir = Path(lint_rules.__file__).parent
    sizes = {str(p.relative_to(lint_dir)): len(p.read_text().splitlines()) for p in sorted(lint_dir.rglob("*.py"))}
    assert len(sizes) >= 15  # every module, the kinds' too
    assert {name: n for name, n in sizes.items() if n > MAX_LINT_MODULE_LINES} == {}


def test_the_architecture_recipe_shows_a_rule_as_the_code_has_it():
    """docs/architecture.md's "A new lint rule" shows a whole rule: it is the code's, word for word."""
    from pciname.lint.kinds import mapping

    doc = (Path(__file__).parents[2] / "docs" / "architecture.md").read_text()
    recipe = doc[doc.index("### A new lint rule") :]
    block = recipe[
        recipe.index("```python\n") + len("```python\n") : recipe.index("   ```\n", recipe.index("```python"))
    ]
    shown = textwrap.dedent(block)
    assert shown == inspect.getsource(mapping.duplicate_keys)
