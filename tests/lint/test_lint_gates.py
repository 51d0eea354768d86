"""Rule ``feature-gates`` (pciname.lint.kinds.gates) on upstream documents:
KubeVirt's own example VMI (kubevirt/kubevirt@79d34c1762169e5b0370ec491cef5ca12e6b504c,
tag v1.9.0, examples/vmi-gpu.yaml, its devices) and the KubeVirt CR of NVIDIA's
"GPU Operator with KubeVirt" page (tests/data/lint-corpus/nvidia-gpu-operator-kubevirt.yaml),
which lists the GPU gate but not HostDevices. The messages are the VMI
admitter's (vmi-create-admitter.go, read by tools/kubevirt_extract.py)."""

from __future__ import annotations

from pciname.lint.linter import Linter
from tests.kube_documents import NVIDIA_CR, VMI_GPU

GPU_MESSAGE = "GPU feature gate is not enabled in kubevirt-config"
HOST_DEVICES_MESSAGE = "Host Devices feature gate is not enabled in kubevirt-config"


#: The same VMI asking for the GPU as a host device.
VMI_HOST_DEVICE = VMI_GPU.replace("gpus:", "hostDevices:").replace("vmi-gpu", "vmi-hostdev")


#: The same CR with no developerConfiguration (no gate listed).
BARE_CR = NVIDIA_CR.replace(
    "    developerConfiguration:\n      featureGates:\n      - GPU\n      - DisableMDEVConfiguration\n", ""
)


def _lint(*texts: str, kubevirt: str | None = None) -> Linter:
    linter = Linter("latest", kubevirt=kubevirt)
    linter.add_text("\n---\n".join(texts), "input.yaml")
    linter.findings_ = linter.run()  # type: ignore[attr-defined]
    return linter


def _gate_findings(linter: Linter) -> list[tuple[int, str, object]]:
    return [(f.line, f.path, f.expected) for f in linter.findings_ if f.code == "missing-feature-gate"]  # type: ignore[attr-defined]


def test_a_vm_with_host_devices_beside_a_cr_without_the_gate_is_the_admitters_rejection():
    for release in ("v0.36.0", "v1.3.0", "v1.9.0"):
        linter = _lint(NVIDIA_CR, VMI_HOST_DEVICE, kubevirt=release)
        findings = [f for f in linter.findings_ if f.code == "missing-feature-gate"]  # type: ignore[attr-defined]
        assert [(f.path, f.expected) for f in findings] == [
            ("spec.domain.devices.hostDevices[0].deviceName", "HostDevices")
        ]
        assert findings[0].message.startswith(HOST_DEVICES_MESSAGE + f": KubeVirt {release} rejects this VM")
        assert "vmi-create-admitter.go:" in findings[0].message


def test_the_gpu_gate_is_required_until_v1_4_0_and_ga_after():
    assert _gate_findings(_lint(BARE_CR, VMI_GPU, kubevirt="v1.3.1")) == [
        (23, "spec.domain.devices.gpus[0].deviceName", "GPU")
    ]
    message = [
        f.message for f in _lint(BARE_CR, VMI_GPU, kubevirt="v1.0.0").findings_ if f.code == "missing-feature-gate"
    ]  # type: ignore[attr-defined]
    assert message and message[0].startswith(GPU_MESSAGE)
    assert _gate_findings(_lint(BARE_CR, VMI_GPU, kubevirt="v1.4.0")) == []
    assert _gate_findings(_lint(BARE_CR, VMI_GPU)) == []  # the newest known, v1.9.0


def test_nvidias_cr_lists_the_gpu_gate_its_vms_need_and_it_is_a_note_once_ga():
    old = _lint(NVIDIA_CR, VMI_GPU, kubevirt="v1.3.0")
    assert _gate_findings(old) == [] and not [n for n in old.notes if "feature gate" in n]
    new = _lint(NVIDIA_CR, VMI_GPU, kubevirt="v1.9.0")
    assert _gate_findings(new) == []
    notes = [n for n in new.notes if "feature gate GPU is deprecated" in n]
    assert len(notes) == 1
    assert notes[0].startswith(
        "input.yaml:10: spec.configuration.developerConfiguration.featureGates[0]: KubeVirt v1.9.0:"
    )
    assert '(feature state is "General Availability")' in notes[0]


def test_without_a_kubevirt_cr_the_gates_are_a_note_not_silence():
    linter = _lint(VMI_GPU, VMI_HOST_DEVICE, kubevirt="v1.3.0")
    assert _gate_findings(linter) == []
    notes = [n for n in linter.notes if "was not checked" in n]
    assert len(notes) == 2
    assert notes[0].startswith("input.yaml:9: spec.domain.devices.gpus[0].deviceName: no KubeVirt CR in the input")
    assert GPU_MESSAGE in notes[0] and HOST_DEVICES_MESSAGE in notes[1]
    newest = [n for n in _lint(VMI_GPU, VMI_HOST_DEVICE).notes if "was not checked" in n]
    assert len(newest) == 1 and "HostDevices" in newest[0]  # v1.9.0's GPU gate is GA: always on


def test_a_vm_without_gpus_or_host_devices_needs_no_gate():
    linter = _lint(
        BARE_CR, VMI_GPU.replace("gpus:", "disks:").replace("deviceName: nvidia.com/GP102GL_Tesla_P40", "disk: {}")
    )
    assert _gate_findings(linter) == [] and not [n for n in linter.notes if "feature gate" in n]


def test_a_hyperconverged_cr_has_hco_set_the_gates_a_note_says_so_and_no_finding():
    """kubevirt/hyperconverged-cluster-operator v1.4.0 to v1.18.1 hard-code HostDevices (and GPU until v1.15.0)."""
    hco = "apiVersion: hco.kubevirt.io/v1beta1\nkind: HyperConverged\nmetadata: {name: kubevirt-hyperconverged}\n"
    linter = _lint(hco, VMI_HOST_DEVICE, kubevirt="v1.9.0")
    assert _gate_findings(linter) == []
    notes = [n for n in linter.notes if "feature gate" in n]
    assert len(notes) == 1 and "HCO v1.4.0 and later: hardCodeKvFgs" in notes[0]
    assert "not checked" not in notes[0]


#: A VMI whose host device is a DRA claim's (kubevirt/kubevirt v1.9.0
#: vmi-create-admitter_test.go 1374-1400 builds it so, with the HostDevices gate enabled).
VMI_CLAIMED_HOST_DEVICE = VMI_HOST_DEVICE.replace(
    "- deviceName: nvidia.com/GP102GL_Tesla_P40\n        name: gpu1\n",
    "- name: hostdev1\n        claimName: claim1\n        requestName: vf\n",
)


def test_a_dra_host_device_needs_the_host_devices_gate_too():
    """v1.9.0 vmi-create-admitter.go:555 checks the hostDevices list, claims or not."""
    assert "claimName: claim1" in VMI_CLAIMED_HOST_DEVICE and "deviceName" not in VMI_CLAIMED_HOST_DEVICE
    linter = _lint(NVIDIA_CR, VMI_CLAIMED_HOST_DEVICE, kubevirt="v1.9.0")
    findings = [f for f in linter.findings_ if f.code == "missing-feature-gate"]  # type: ignore[attr-defined]
    assert [(f.path, f.expected) for f in findings] == [("spec.domain.devices.hostDevices[0].claimName", "HostDevices")]
    assert findings[0].message.startswith(HOST_DEVICES_MESSAGE)
    listed = NVIDIA_CR.replace("      - GPU\n", "      - GPU\n      - HostDevices\n")
    assert [f for f in _lint(listed, VMI_CLAIMED_HOST_DEVICE).findings_ if f.code == "missing-feature-gate"] == []  # type: ignore[attr-defined]
