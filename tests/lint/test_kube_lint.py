"""Linting resource names in realistic KubeVirt / Cozystack YAML, with lines."""

from __future__ import annotations

import textwrap

import pytest

from pciname.lint.linter import CODES, Linter, LintInputError, format_path, lint_data, lint_text
from tests.conftest import REPO
from tests.kube_documents import CLEAN, COZYSTACK_VALUES, HYPERCONVERGED, KUBEVIRT_CR, SRIOV_DOC, TENANT, VMS, vm, y


def codes(findings):
    return [f.code for f in findings]


def test_clean_documents_have_no_findings():
    assert lint_text(CLEAN, "clean.yaml") == []


def test_kubevirt_cr_findings_with_lines_paths_and_expected_values():
    findings = lint_text(KUBEVIRT_CR, "kubevirt.yaml", nvidia_plugin="yes")
    got = [(f.line, f.code, f.path, f.value, f.expected) for f in findings]
    base = "spec.configuration.permittedHostDevices."
    assert got == [
        (
            12,
            "wrong-resource-name",
            base + "pciHostDevices[0].resourceName",
            "nvidia.com/TU104GL_Tesla_T4",
            "nvidia.com/TU104GL_TESLA_T4",
        ),
        (14, "missing-external-resource-provider", base + "pciHostDevices[1].externalResourceProvider", None, True),
        (16, "duplicate-selector", base + "pciHostDevices[2].pciVendorSelector", "10de:2236", None),
        (18, "invalid-external-resource-provider", base + "pciHostDevices[2].externalResourceProvider", "true", True),
        (19, "wrong-selector-field", base + "pciHostDevices[3].pciDeviceSelector", "10DE:27B8", "pciVendorSelector"),
        (22, "invalid-selector", base + "pciHostDevices[4].pciVendorSelector", "10DE:ZZZZ", None),
        (26, "not-advertised", base + "pciHostDevices[5].resourceName", "nvidia.com/CX7", None),
        (
            30,
            "wrong-mdev-resource-name",
            base + "mediatedDevices[0].resourceName",
            "nvidia.com/L40S-24Q",
            "nvidia.com/NVIDIA_L40S-24Q",
        ),
        (32, "unknown-vgpu-type", base + "mediatedDevices[1].mdevNameSelector", "GRID T4-1Q ", ["GRID T4-1Q"]),
        (33, "invalid-resource-name", base + "mediatedDevices[1].resourceName", "nvidia.com/GRID_T4-1Q_", None),
    ]
    assert all(f.file == "kubevirt.yaml" and f.document == 1 for f in findings)
    assert findings[0].column == 23  # the opening quote
    assert "already permitted at line 14" in findings[2].message
    assert (
        findings[0]
        .format()
        .startswith(
            "kubevirt.yaml:12: wrong-resource-name: spec.configuration.permittedHostDevices.pciHostDevices[0].resourceName: "
        )
    )
    assert set(codes(findings)) <= set(CODES)


def test_names_depend_on_the_profile():
    text = y(
        """
        apiVersion: kubevirt.io/v1
        kind: KubeVirt
        metadata: {name: kubevirt, namespace: kubevirt}
        spec:
          configuration:
            permittedHostDevices:
              pciHostDevices:
              - {pciVendorSelector: "10DE:2330", resourceName: nvidia.com/GH100H100_SXM5_80GB, externalResourceProvider: true}
              - {pciVendorSelector: "10DE:2236", resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}
        """
    )
    assert lint_text(text, "kv.yaml", "gpu-operator@v23.9.2") == []
    (wrong,) = lint_text(text, "kv.yaml", "latest")
    assert (wrong.line, wrong.code, wrong.expected) == (8, "wrong-resource-name", "nvidia.com/GH100_H100_SXM5_80GB")
    (renamed,) = lint_text(text, "kv.yaml", "gpu-operator@v23.9.2", upgrade_to="gpu-operator@v24.9.0")
    assert renamed.code == "renamed-by-upgrade"
    assert renamed.expected == "nvidia.com/GH100_H100_SXM5_80GB"
    assert "gpu-operator@v24.9.0" in renamed.message
    old = lint_text(text, "kv.yaml", "v1.0.0")
    assert [(f.line, f.code) for f in old] == [(8, "not-advertised"), (9, "not-advertised")]


def test_hyperconverged_uses_pci_device_selector_and_skips_disabled_entries():
    findings = lint_text(HYPERCONVERGED, "hco.yaml")
    assert [(f.line, f.code, f.expected) for f in findings] == [(12, "wrong-selector-field", "pciDeviceSelector")]
    assert findings[0].path == "spec.permittedHostDevices.pciHostDevices[1].pciVendorSelector"


def test_cozystack_platform_values():
    findings = lint_text(COZYSTACK_VALUES, "values.yaml")
    assert [(f.line, f.code, f.path, f.expected) for f in findings] == [
        (
            15,
            "wrong-resource-name",
            "gpu.permittedHostDevices.pciHostDevices[2].resourceName",
            "nvidia.com/GA100_A100_PCIE_80GB",
        )
    ]


def test_helmrelease_values_and_list_wrappers_are_found():
    text = y(
        """
        apiVersion: v1
        kind: List
        items:
        - apiVersion: helm.toolkit.fluxcd.io/v2
          kind: HelmRelease
          metadata: {name: kubevirt, namespace: cozy-kubevirt}
          spec:
            values:
              permittedHostDevices:
                pciHostDevices:
                - pciVendorSelector: "10DE:2236"
                  resourceName: nvidia.com/GA102GL_A10G
                  externalResourceProvider: true
        """
    )
    (finding,) = lint_text(text, "hr.yaml")
    assert finding.path == "items[0].spec.values.permittedHostDevices.pciHostDevices[0].resourceName"
    assert (finding.line, finding.expected) == (12, "nvidia.com/GA102GL_A10")


def test_bare_defaults_table():
    text = y(
        """
        pciHostDevices:
        - pciVendorSelector: "10DE:2236"
          resourceName: nvidia.com/GA102GL_A10
          externalResourceProvider: true
        - pciVendorSelector: "10DE:1EB8"
          resourceName: nvidia.com/TU104GL_TESLA_T4
        """
    )
    (finding,) = lint_text(text, "defaults.yaml", nvidia_plugin="yes")
    assert (finding.line, finding.code, finding.path) == (
        5,
        "missing-external-resource-provider",
        "pciHostDevices[1].externalResourceProvider",
    )
    nested = "permittedHostDevices:\n" + textwrap.indent(text, "  ")
    assert [f.path for f in lint_text(nested, "d.yaml", nvidia_plugin="yes")] == [
        "permittedHostDevices.pciHostDevices[1].externalResourceProvider"
    ]


def test_vm_and_vmi_references():
    findings = lint_text(VMS, "vms.yaml", "latest")
    got = [(f.document, f.line, f.code) for f in findings]
    assert got == [
        (1, 11, "unknown-resource-name"),
        (1, 13, "unknown-resource-name"),
        (1, 16, "invalid-resource-name"),
        (2, 30, "unknown-resource-name"),
    ]
    assert findings[0].path == "spec.template.spec.domain.devices.gpus[0].deviceName"
    assert findings[0].expected[0] == "nvidia.com/GA102GL_A10"
    assert findings[1].expected[0] == "nvidia.com/TU104GL_TESLA_T4"  # the pre-v1.1 spelling
    assert findings[2].path == "spec.template.spec.domain.devices.hostDevices[0].deviceName"
    assert findings[3].expected == []
    assert "no similar name" in findings[3].message
    # Under v1.0.1 the mixed-case spelling is the right one.
    assert (1, 13) not in [(f.document, f.line) for f in lint_text(VMS, "vms.yaml", "v1.0.1")]


def test_references_to_wrongly_permitted_names_across_files():
    linter = Linter("preview", nvidia_plugin="yes")
    linter.add_text(KUBEVIRT_CR, "kubevirt.yaml")
    linter.add_text(
        vm(
            "nvidia.com/TU104GL_Tesla_T4",
            "nvidia.com/L40S-24Q",
            "nvidia.com/GRID_T4-1q",
            "nvidia.com/NVIDIA_A100-40C",
        ),
        "vm.yaml",
    )
    found = [f for f in linter.run() if f.file == "vm.yaml"]
    assert [(f.line, f.code, f.expected) for f in found] == [
        (10, "wrong-resource-name", "nvidia.com/TU104GL_TESLA_T4"),
        (11, "wrong-mdev-resource-name", "nvidia.com/NVIDIA_L40S-24Q"),
        # Not permitted by the CR given; only entries that work are suggested,
        # and none of this CR's does.
        (12, "not-permitted", []),
        (13, "not-permitted", []),
    ]


def test_mdev_typo_is_suggested_when_the_type_is_permitted():
    text = CLEAN + "---\n" + vm("nvidia.com/GRID_T4-1q", name="v")
    not_permitted, finding = lint_text(text, "x.yaml")
    assert (finding.code, finding.expected, finding.document) == ("unknown-resource-name", ["nvidia.com/GRID_T4-1Q"], 3)
    # The input permits vGPU types, so the name is also not-permitted, with the same suggestion.
    assert (not_permitted.code, not_permitted.expected) == ("not-permitted", ["nvidia.com/GRID_T4-1Q"])


def test_tenant_kubernetes_node_groups():
    assert [(f.line, f.code, f.path) for f in lint_text(TENANT, "tenant.yaml", "preview")] == [
        (19, "unknown-resource-name", "nodeGroups.gpu.gpus[2].name"),
        (28, "unknown-resource-name", "spec.nodeGroups.gpu-pool.gpus[0].name"),
    ]
    findings = lint_text(TENANT, "tenant.yaml", "v1.2.2")
    # v1.2.2's pci.ids lacks 10de:2335 (bare-id fallback) and spells the H100 without a space.
    assert findings == []
    latest = lint_text(TENANT, "tenant.yaml", "latest")
    assert [(f.document, f.line, f.code, f.path) for f in latest] == [
        (1, 19, "unknown-resource-name", "nodeGroups.gpu.gpus[2].name"),
        (2, 28, "unknown-resource-name", "spec.nodeGroups.gpu-pool.gpus[0].name"),
    ]
    assert latest[1].expected[0] == "nvidia.com/GH100_H100_SXM5_80GB"
    upgrade = lint_text(TENANT, "tenant.yaml", "v1.2.2", upgrade_to="latest")
    assert [(f.line, f.code, f.expected) for f in upgrade] == [
        (19, "renamed-by-upgrade", "nvidia.com/GH100_H200_SXM_141GB"),
        (28, "renamed-by-upgrade", "nvidia.com/GH100_H100_SXM5_80GB"),
    ]


def test_anchors_and_aliases():
    text = y(
        """
        x-gpu: &a10
          pciVendorSelector: "10DE:2236"
          resourceName: nvidia.com/GA102GL_A1
          externalResourceProvider: true
        permittedHostDevices:
          pciHostDevices:
          - *a10
        """
    )
    findings = lint_text(text, "a.yaml")
    assert [(f.line, f.code) for f in findings] == [(3, "wrong-resource-name")]


def test_yaml_syntax_error_names_file_and_line():
    bad = y(
        """
        apiVersion: kubevirt.io/v1
        kind: KubeVirt
        spec:
          configuration:
            permittedHostDevices:
              pciHostDevices:
              - pciVendorSelector: "10DE:2236
                resourceName: nvidia.com/GA102GL_A10
        """
    )
    with pytest.raises(LintInputError) as caught:
        lint_text(bad, "broken.yaml")
    message = str(caught.value)
    assert message.startswith("broken.yaml:")
    assert "YAML syntax error" in message and caught.value.line is not None
    with pytest.raises(LintInputError, match=r"^b\.yaml:3:1: YAML syntax error"):
        lint_text("a: 1\nb: [1, 2\n", "b.yaml")


def test_a_syntax_error_in_a_later_document_rejects_the_file():
    first = CLEAN.split("---")[0]
    with pytest.raises(LintInputError, match=r"^m\.yaml:\d+:\d+: YAML syntax error") as caught:
        lint_text(first + "---\nkey: [unclosed\n", "m.yaml")
    assert caught.value.line > first.count("\n")


def test_undecodable_bytes_are_an_input_error():
    with pytest.raises(LintInputError, match="not readable as YAML"):
        lint_text(b"a: \xff\xfe\x00bad\n", "bin.yaml")


def test_lint_data_for_objects_from_a_cluster():
    obj = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {
            "configuration": {
                "permittedHostDevices": {
                    "pciHostDevices": [
                        {
                            "pciVendorSelector": "10DE:2236",
                            "resourceName": "nvidia.com/A10",
                            "externalResourceProvider": True,
                        }
                    ]
                }
            }
        },
    }
    (finding,) = lint_data(obj, "kubevirt/kubevirt")
    assert finding.code == "wrong-resource-name" and finding.expected == "nvidia.com/GA102GL_A10"


def test_format_path():
    assert (
        format_path(["spec", "nodeGroups", "gpu pool", "gpus", 0, "name"]) == 'spec.nodeGroups["gpu pool"].gpus[0].name'
    )
    assert format_path([0, "a"]) == "[0].a"


# -- SR-IOV vGPU: entries KubeVirt's own plugin advertises (issue 10, section 3) ----------------

SRIOV_VALUES = y(
    """
    # Cozystack platform values for SR-IOV vGPU (docs/gpu-vgpu.md's entries
    # in gpu.permittedHostDevices): no externalResourceProvider, any name.
    gpu:
      permittedHostDevices:
        pciHostDevices:
        - pciVendorSelector: "10DE:26B9"
          resourceName: nvidia.com/L40S-24Q
        - pciVendorSelector: "10DE:27B8"
          resourceName: nvidia.com/L4-12Q
          externalResourceProvider: false
        - pciVendorSelector: "10DE:2236"
          resourceName: nvidia.com/GA102GL_A10
          externalResourceProvider: true
    ---
    apiVersion: apps.cozystack.io/v1alpha1
    kind: Kubernetes
    metadata: {name: vgpu, namespace: tenant-team}
    spec:
      nodeGroups:
        vgpu:
          gpus:
          - name: nvidia.com/L40S-24Q
          - name: nvidia.com/L4-12Q
          - name: nvidia.com/GA102GL_A10
    """
)


@pytest.mark.parametrize("profile", ["latest", "preview", "v1.0.1", "gpu-operator@v23.9.2"])
def test_cozystacks_documented_sriov_example_has_no_findings(profile):
    assert "externalResourceProvider" not in SRIOV_DOC.split("---")[0].split("# L40S")[1]
    assert lint_text(SRIOV_DOC, "gpu-vgpu.yaml", profile) == []
    assert lint_text(SRIOV_DOC, "gpu-vgpu.yaml", "v1.2.2", upgrade_to="latest") == []
    assert (
        lint_text(SRIOV_VALUES.replace("GA102GL_A10", "A10-4Q").replace("true", "false"), "values.yaml", profile) == []
    )
    assert lint_text(SRIOV_VALUES, "values.yaml", "latest") == []  # with the A10 under NVIDIA's name


def test_sriov_names_are_permitted_for_vms_across_files_and_beside_mdev_types():
    linter = Linter("latest")
    linter.add_text(SRIOV_DOC, "gpu-vgpu.yaml")
    # A permitted vGPU (mdev) type with a similar name would otherwise make
    # nvidia.com/L40S-24Q look like a typo of it.
    linter.add_text(
        y(
            """
            permittedHostDevices:
              mediatedDevices:
              - mdevNameSelector: NVIDIA L40S-24Q
                resourceName: nvidia.com/NVIDIA_L40S-24Q
                externalResourceProvider: true
            """
        ),
        "mdev.yaml",
    )
    assert linter.run() == []
    # Without the SR-IOV entry, the same VM's name is still suspicious.
    alone = Linter("latest")
    alone.add_text(SRIOV_DOC.split("---")[1], "vm.yaml")
    alone.add_text(
        "mediatedDevices:\n- {mdevNameSelector: NVIDIA L40S-24Q, resourceName: nvidia.com/NVIDIA_L40S-24Q, "
        "externalResourceProvider: true}\n",
        "mdev.yaml",
    )
    assert [(f.file, f.code) for f in alone.run()] == [
        ("vm.yaml", "not-permitted"),
        ("vm.yaml", "unknown-resource-name"),
    ]


def test_kubevirt_advertised_entries_still_catch_real_mistakes():
    text = y(
        """
        pciHostDevices:
        - pciVendorSelector: "10DE:26B9"
          resourceName: nvidia.com/L40S-24Q
        - pciVendorSelector: "10de:26b9"
          resourceName: nvidia.com/L40S-12Q
        - pciVendorSelector: "10DE:26B5"
          resourceName: nvidia.com/L40-24Q_
        - pciVendorSelector: "10DE:27B8"
          resourceName: nvidia.com/GA102GL_A10
        - pciVendorSelector: "10DE:2236"
          resourceName: nvidia.com/GA102GL_A10
          externalResourceProvider: false
        - pciVendorSelector: "10DE:1EB8"
          resourceName: nvidia.com/AN_EXTREMELY_LONG_NAME_FOR_A_VGPU_PROFILE_1234567890
        - pciDeviceSelector: "10DE:2237"
          resourceName: nvidia.com/A10G-4Q
        - pciVendorSelector: "10DE:ZZZZ"
          resourceName: nvidia.com/ZZ-1Q
        - pciVendorSelector: "10DE:2330"
          resourceName: nvidia.com/H100-80C
          disabled: true
        """
    )
    findings = lint_text(text, "sriov.yaml", "latest", nvidia_plugin="yes")
    got = [(f.line, f.code, f.path, f.expected) for f in findings]
    assert got == [
        (4, "duplicate-selector", "pciHostDevices[1].pciVendorSelector", None),
        (7, "invalid-resource-name", "pciHostDevices[2].resourceName", None),
        (9, "resource-name-conflict", "pciHostDevices[3].resourceName", None),
        (12, "missing-external-resource-provider", "pciHostDevices[4].externalResourceProvider", True),
        (14, "socket-path-too-long", "pciHostDevices[5].resourceName", None),
        (15, "wrong-selector-field", "pciHostDevices[6].pciDeviceSelector", "pciVendorSelector"),
        (17, "invalid-selector", "pciHostDevices[7].pciVendorSelector", None),
    ]
    assert set(codes(findings)) <= set(CODES)
    duplicate, invalid, conflict, missing, socket = findings[:5]
    assert "already permitted at line 2" in duplicate.message
    assert "nvidia.com/L40S-24Q, not nvidia.com/L40S-12Q" in duplicate.message
    assert "KubeVirt" in invalid.message and "nvidia.com/AD102GL_L40" in invalid.message  # the note
    assert "10DE:2236" in conflict.message and "two plugins" in conflict.message
    assert "nvidia.com/AD104GL_L4" in conflict.message
    assert missing.value is False and "is the name NVIDIA's device plugin gives 10DE:2236" in missing.message
    assert "kubevirt-nvidia.com-AN_EXTREMELY" in socket.message  # KubeVirt's socket, domain included
    # The same names under externalResourceProvider: true are NVIDIA's, so wrong.
    nvidia = text.replace(
        "  resourceName: nvidia.com/L40S-24Q\n",
        "  resourceName: nvidia.com/L40S-24Q\n  externalResourceProvider: true\n",
    )
    first = lint_text(nvidia, "sriov.yaml", "latest", nvidia_plugin="yes")[0]
    assert (first.line, first.code, first.expected) == (3, "wrong-resource-name", "nvidia.com/AD102GL_L40S")


def test_vms_asking_for_a_broken_kubevirt_name_are_still_reported():
    text = y(
        """
        pciHostDevices:
        - {pciVendorSelector: "10DE:26B5", resourceName: nvidia.com/L40-24Q_}
        - {pciVendorSelector: "10DE:26B9", resourceName: nvidia.com/L40S-24Q}
        ---
        nodeGroups:
          gpu:
            gpus:
            - name: nvidia.com/L40-24Q_
            - name: nvidia.com/L40S-24Q
        """
    )
    assert [(f.document, f.line, f.code) for f in lint_text(text, "t.yaml")] == [
        (1, 2, "invalid-resource-name"),
        (2, 8, "invalid-resource-name"),
    ]


def test_readme_lint_codes_table_lists_every_code_in_order():
    readme = (REPO / "docs" / "passthrough.md").read_text()
    section = readme.split("* `pciname lint FILE...", 1)[1].split("* `pciname scan", 1)[0]
    listed = [line.split("`")[1] for line in section.splitlines() if line.strip().startswith("| `")]
    assert listed == list(CODES)


def test_who_advertises_follows_the_external_resource_provider_value():
    def entry(erp: str, name: str = "nvidia.com/L40S-24Q") -> list[str]:
        text = f'pciHostDevices:\n- pciVendorSelector: "10DE:26B9"\n  resourceName: {name}\n{erp}'
        return sorted(codes(lint_text(text, "e.yaml", "latest", nvidia_plugin="yes")))

    # KubeVirt's own plugin: missing, null or false.
    for erp in (
        "",
        "  externalResourceProvider:\n",
        "  externalResourceProvider: false\n",
        "  externalResourceProvider: no\n",
    ):
        assert entry(erp) == [], erp
    # NVIDIA's plugin: true; a value that is not a boolean is meant for it, and wrong.
    assert entry("  externalResourceProvider: true\n") == ["wrong-resource-name"]
    assert entry('  externalResourceProvider: "true"\n') == [
        "invalid-external-resource-provider",
        "wrong-resource-name",
    ]
    assert entry("  externalResourceProvider: 1\n", "nvidia.com/AD102GL_L40S") == ["invalid-external-resource-provider"]
    assert entry("  externalResourceProvider: false\n", "nvidia.com/AD102GL_L40S") == [
        "missing-external-resource-provider"
    ]


def test_a_kind_less_spec_permitted_host_devices_is_a_hyperconverged_crs():
    """A docs snippet of the HyperConverged CR's spec, without its kind (as
    NVIDIA's OpenShift Virtualization page writes it): read as the CR is,
    pciDeviceSelector and not pciVendorSelector. With ``spec.configuration``
    beside it the document has a KubeVirt CR's shape and stays one."""
    snippet = y(
        """
        spec:
          permittedHostDevices:
            pciHostDevices:
            - pciDeviceSelector: 10DE:2236
              resourceName: nvidia.com/GA102GL_A10
              externalResourceProvider: true
            - pciVendorSelector: 10DE:1EB8
              resourceName: nvidia.com/TU104GL_TESLA_T4
              externalResourceProvider: true
        """
    )
    findings = lint_text(snippet, "hco-snippet.yaml")
    assert [(f.line, f.code, f.path, f.expected) for f in findings] == [
        (
            7,
            "wrong-selector-field",
            "spec.permittedHostDevices.pciHostDevices[1].pciVendorSelector",
            "pciDeviceSelector",
        )
    ]
    assert "a HyperConverged CR reads pciDeviceSelector" in findings[0].message
    # NVIDIA's 2022 KubeVirt CR's shape: a KubeVirt CR's, its block where
    # KubeVirt never reads it
    beside = snippet.replace("spec:\n", "spec:\n  configuration:\n", 1)
    misplaced = (3, "misplaced-permitted-host-devices", "spec.configuration.permittedHostDevices")
    assert [(f.line, f.code, f.expected) for f in lint_text(beside, "kv.yaml")] == [
        misplaced,
        (5, "wrong-selector-field", "pciVendorSelector"),
    ]
    # a kind says what the document is
    findings = lint_text("kind: KubeVirt\n" + snippet, "kind.yaml")
    assert [(f.line, f.code, f.expected) for f in findings] == [
        (misplaced[0], *misplaced[1:]),
        (5, "wrong-selector-field", "pciVendorSelector"),
    ]
    findings = lint_text("kind: VirtualMachine\n" + snippet, "kind.yaml")
    assert [(f.line, f.code, f.expected) for f in findings] == [(5, "wrong-selector-field", "pciVendorSelector")]


def test_a_permitted_host_devices_block_where_its_cr_does_not_read_it():
    """KubeVirt reads spec.configuration.permittedHostDevices (its CRD has no
    spec.permittedHostDevices); a HyperConverged CR reads spec.permittedHostDevices."""
    entry = "    pciHostDevices:\n    - {pciVendorSelector: '10DE:2236', resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}\n"
    kubevirt = "kind: KubeVirt\nspec:\n  permittedHostDevices:\n" + entry
    (finding,) = lint_text(kubevirt, "kv.yaml")
    assert (finding.line, finding.code, finding.path, finding.value, finding.expected) == (
        3,
        "misplaced-permitted-host-devices",
        "spec.permittedHostDevices",
        "spec.permittedHostDevices",
        "spec.configuration.permittedHostDevices",
    )
    assert finding.message == (
        "KubeVirt reads permittedHostDevices at spec.configuration.permittedHostDevices, not at "
        "spec.permittedHostDevices (its CRD has no spec.permittedHostDevices: kubectl refuses it, the API server "
        "prunes it): none of these entries is permitted"
    )
    hco = "kind: HyperConverged\nspec:\n  configuration:\n    permittedHostDevices:\n" + entry.replace("    ", "      ")
    (finding,) = lint_text(hco.replace("pciVendorSelector", "pciDeviceSelector"), "hco.yaml")
    assert (finding.line, finding.code, finding.expected) == (
        4,
        "misplaced-permitted-host-devices",
        "spec.permittedHostDevices",
    )
    assert finding.message.startswith("a HyperConverged CR reads permittedHostDevices at spec.permittedHostDevices")
    for right in (
        "kind: KubeVirt\nspec:\n  configuration:\n    permittedHostDevices:\n" + entry.replace("    ", "      "),
        "kind: HyperConverged\nspec:\n  permittedHostDevices:\n"
        + entry.replace("pciVendorSelector", "pciDeviceSelector"),
        "permittedHostDevices:\n" + entry.replace("    ", "  ", 1).replace("\n    -", "\n  -"),  # a bare table
    ):
        assert lint_text(right, "right.yaml") == [], right


def test_hyperconverged_sriov_entry_is_kubevirts_too():
    text = y(
        """
        apiVersion: hco.kubevirt.io/v1beta1
        kind: HyperConverged
        metadata: {name: kubevirt-hyperconverged, namespace: openshift-cnv}
        spec:
          permittedHostDevices:
            pciHostDevices:
            - pciDeviceSelector: "10DE:26B9"
              resourceName: nvidia.com/L40S-24Q
            - pciVendorSelector: "10DE:26B5"
              resourceName: nvidia.com/L40-24Q
        """
    )
    findings = lint_text(text, "hco.yaml")
    assert [(f.line, f.code, f.expected) for f in findings] == [(9, "wrong-selector-field", "pciDeviceSelector")]


def test_a_kubevirt_pci_name_also_permitted_as_a_vgpu_type_is_a_conflict():
    text = y(
        """
        permittedHostDevices:
          pciHostDevices:
          - pciVendorSelector: "10DE:26B9"
            resourceName: nvidia.com/NVIDIA_L40S-24Q
          mediatedDevices:
          - mdevNameSelector: NVIDIA L40S-24Q
            resourceName: nvidia.com/NVIDIA_L40S-24Q
            externalResourceProvider: true
        """
    )
    (finding,) = lint_text(text, "both.yaml")
    assert (finding.line, finding.code, finding.path) == (
        4,
        "resource-name-conflict",
        "permittedHostDevices.pciHostDevices[0].resourceName",
    )
    assert "mediatedDevices" in finding.message and "two plugins" in finding.message
    # The mdev entry alone, or the pci entry alone, is fine.
    pci, mdev = text.split("  mediatedDevices:\n")
    assert lint_text(pci, "pci.yaml") == []
    assert lint_text("permittedHostDevices:\n  mediatedDevices:\n" + mdev, "mdev.yaml") == []


def test_the_proto_lists_every_lint_code_in_order():
    """Finding.code's comment in the .proto is what gRPC users read: it names
    exactly lint's CODES, in their order."""
    import re

    proto = (REPO / "proto/pciname/v1/pciname.proto").read_text()
    end = proto.index("(pciname.lint.linter.CODES)")
    start = proto.rindex("// Stable code:", 0, end) + len("// Stable code:")
    listed = [c.strip() for c in re.sub(r"\s*//\s*", " ", proto[start:end]).split(",")]
    assert tuple(listed) == tuple(CODES)
