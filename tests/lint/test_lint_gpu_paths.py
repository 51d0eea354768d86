"""Every GPU path in lint, never silently clean (issue 40): the container
plugin's names in VMs (rule ``vm-container-names``, code
``container-name-in-vm``, with virt-launcher's own error per KubeVirt
release, read by tools/kubevirt_extract.py from
pkg/virt-launcher/virtwrap/device/hostdevice/gpu/hostdev.go) and a note on
each GPU name no model judged (rule ``unmodelled-names``). The three inputs
the issue found linting clean, with no output, each get their word: a VM
asking for ``nvidia.com/mig-1g.5gb``, a pod asking for a made-up
``nvidia.com/`` name (the missing HostDevices gate: tests/lint/test_lint_gates.py)."""

from __future__ import annotations

import textwrap

from pciname.lint.linter import Linter
from tests.cli_run import pciname
from tests.kube_documents import NVIDIA_CR, VMI_GPU

#: virt-launcher's error in v1.9.0 (kubevirt/kubevirt@79d34c17 gpu/hostdev.go:33 and :93).
MISMATCH_V1_9 = (
    "failed to create GPU host-devices: the number of device plugin GPU/s do not match the number of devices"
)
VMI_MIG = VMI_GPU.replace("nvidia.com/GP102GL_Tesla_P40", "nvidia.com/mig-1g.5gb")
POD = textwrap.dedent(
    """\
    apiVersion: v1
    kind: Pod
    metadata:
      name: cuda
    spec:
      {runtime}containers:
      - name: cuda
        image: nvcr.io/nvidia/cuda:12.4.1-base-ubuntu22.04
        resources:
          limits:
            {name}: 1
    """
)


def _pod(name: str, runtime: str = "") -> str:
    return POD.format(name=name, runtime=f"runtimeClassName: {runtime}\n  " if runtime else "")


def _lint(*texts: str, kubevirt: str | None = None) -> tuple[list[tuple[int, str, str]], list[str]]:
    linter = Linter("latest", kubevirt=kubevirt)
    linter.add_text("\n---\n".join(texts), "input.yaml")
    findings = [(f.line, f.code, f.message) for f in linter.run()]
    return findings, linter.notes


def test_a_mig_name_in_a_vm_is_virt_launchers_failure_with_what_works_instead():
    findings, _ = _lint(VMI_MIG)
    assert [(line, code) for line, code, _ in findings] == [(9, "container-name-in-vm")]
    message = findings[0][2]
    assert message.startswith("nvidia.com/mig-1g.5gb is a MIG device's name of NVIDIA's container device plugin")
    assert "KubeVirt v1.9.0 admits the VM" in message
    assert f"{MISMATCH_V1_9!r}" in message
    assert "pkg/virt-launcher/virtwrap/device/hostdevice/gpu/hostdev.go:93" in message
    assert "`pciname vgpu-types DEVICE`" in message and "mediatedDevices" in message


def test_the_quoted_failure_is_the_kubevirt_releases_own():
    old = _lint(VMI_MIG, kubevirt="v0.45.0")[0][0][2]
    assert "'the number of GPU/s do not match the number of devices'" in old and "failed to create" not in old
    older = _lint(VMI_MIG, kubevirt="v0.44.0")[0][0][2]
    assert "not in pciname's facts" in older and "hostdev.go" not in older


def test_the_container_plugins_whole_gpu_name_in_a_vm_is_the_same_failure_and_no_unknown_name():
    for name in ("nvidia.com/gpu", "nvidia.com/gpu.shared"):
        findings, _ = _lint(VMI_GPU.replace("nvidia.com/GP102GL_Tesla_P40", name))
        assert [(line, code) for line, code, _ in findings] == [(9, "container-name-in-vm")]
        assert "MIG" not in findings[0][2] and "passthrough name" in findings[0][2]
    host = VMI_GPU.replace("gpus:", "hostDevices:").replace("nvidia.com/GP102GL_Tesla_P40", "nvidia.com/gpu")
    findings, _ = _lint(host)
    assert [code for _, code, _ in findings] == ["container-name-in-vm"]
    assert "hostDevices[] entry and fails the VMI (" in findings[0][2]


def test_a_mig_name_a_kubevirt_cr_does_not_permit_is_also_not_permitted():
    findings, _ = _lint(NVIDIA_CR, VMI_MIG)
    assert sorted(code for _, code, _ in findings) == ["container-name-in-vm", "not-permitted"]


def test_a_made_up_nvidia_name_in_a_pod_is_a_note_naming_it():
    findings, notes = _lint(_pod("nvidia.com/made-up-thing"))
    assert findings == []
    assert notes == [
        'input.yaml:11: spec.containers[0].resources.limits["nvidia.com/made-up-thing"]: nvidia.com/made-up-thing '
        "is not a name any device plugin pciname models advertises (KubeVirt's own and NVIDIA's "
        "kubevirt-gpu-device-plugin (PCI and vGPU names, under the profile), the Kata sandbox-device-plugin, the "
        "container plugin's nvidia.com/gpu, nvidia.com/gpu.shared and nvidia.com/mig-*) by default; the container "
        "plugin's config file (its resources section) can name a GPU anything under nvidia.com/: no model covers it"
    ]


def test_the_cli_says_so_on_stderr_and_exits_0_for_a_note_1_for_a_finding(tmp_path):
    pod = tmp_path / "pod.yaml"
    pod.write_text(_pod("nvidia.com/made-up-thing"), encoding="utf-8")
    ran = pciname("lint", pod)
    assert ran.returncode == 0 and ran.stdout == ""
    assert "note: " in ran.stderr and "nvidia.com/made-up-thing is not a name any device plugin" in ran.stderr
    vm = tmp_path / "vm.yaml"
    vm.write_text(VMI_MIG, encoding="utf-8")
    ran = pciname("lint", vm)
    assert ran.returncode == 1 and ": container-name-in-vm: " in ran.stdout


def test_other_vendors_names_say_no_model_covers_them_and_the_container_plugins_what_its_model_says():
    _, notes = _lint(_pod("amd.com/gpu"), _pod("gpu.intel.com/i915"), _pod("nvidia.com/mig-1g.5gb"))
    assert len(notes) == 3
    assert notes[0].endswith("pciname has no model of amd.com's device plugins: amd.com/gpu was not checked")
    assert "gpu.intel.com's device plugins" in notes[1]
    assert "k8s-device-plugin v0.15.0..v0.20.0 advertises nvidia.com/mig-1g.5gb for MIG profile 1g.5gb" in notes[2]
    assert notes[2].endswith("whether a node offers it was not checked")


def test_a_passthrough_name_in_a_pod_without_kata_says_what_it_is():
    _, notes = _lint(_pod("nvidia.com/GP102GL_TESLA_P40"))
    assert len(notes) == 1 and "advertises for a passthrough GPU" in notes[0]


def test_a_kata_pods_names_are_the_kata_rules_not_noted_twice():
    findings, notes = _lint(_pod("nvidia.com/pgpu", runtime="kata-qemu-nvidia-gpu"))
    assert findings == []
    assert len(notes) == 1 and "Kata pods' GPU names are checked under" in notes[0]  # the kata-pods rule's note


def test_non_gpu_names_are_left_alone():
    _, notes = _lint(_pod("cpu"), _pod("intel.com/qat"), _pod("example.com/thing"))
    assert notes == []


def test_a_vms_vgpu_name_without_permitted_host_devices_is_a_note_and_with_them_is_judged():
    vgpu = VMI_GPU.replace("nvidia.com/GP102GL_Tesla_P40", "nvidia.com/GRID_T4-1Q")
    findings, notes = _lint(vgpu)
    assert findings == []
    assert [n for n in notes if "nvidia.com/GRID_T4-1Q" in n] == [
        "input.yaml:9: spec.domain.devices.gpus[0].deviceName: no permittedHostDevices in the input: whether a "
        "vGPU type (or an entry) is advertised as nvidia.com/GRID_T4-1Q was not checked (give the KubeVirt CR with "
        "the VMs; `pciname vgpu-types DEVICE` lists vGPU types' names)"
    ]
    findings, notes = _lint(NVIDIA_CR, vgpu)
    assert [code for _, code, _ in findings] == ["not-permitted"]
    assert not [n for n in notes if "nvidia.com/GRID_T4-1Q" in n]


def test_a_made_up_name_with_a_dash_in_a_vm_is_never_silent():
    findings, notes = _lint(VMI_GPU.replace("nvidia.com/GP102GL_Tesla_P40", "nvidia.com/made-up-thing"))
    assert findings == [] and any("nvidia.com/made-up-thing was not checked" in n for n in notes)
    other = _lint(VMI_GPU.replace("nvidia.com/GP102GL_Tesla_P40", "amd.com/gpu"))[1]
    assert any(n.endswith("amd.com/gpu was not checked") for n in other)


def test_a_name_the_cr_does_not_permit_quotes_the_releases_own_rejection():
    host = VMI_GPU.replace("gpus:", "hostDevices:").replace("nvidia.com/GP102GL_Tesla_P40", "nvidia.com/GA102GL_A10")
    cr = NVIDIA_CR.replace("- DisableMDEVConfiguration", "- HostDevices")
    findings, _ = _lint(cr, host)
    assert [code for _, code, _ in findings] == ["not-permitted"]
    assert findings[0][2].endswith(
        "; KubeVirt v1.9.0 fails it with 'HostDevice nvidia.com/GA102GL_A10 is not permitted in permittedHostDevices "
        "configuration' (kubevirt/kubevirt@79d34c176216 pkg/virt-controller/services/renderresources.go:523)"
    )
    gpu = _lint(cr, VMI_GPU.replace("nvidia.com/GP102GL_Tesla_P40", "nvidia.com/GA102GL_A10"), kubevirt="v0.44.0")
    assert "'GPU nvidia.com/GA102GL_A10 is not permitted in permittedHostDevices configuration'" in gpu[0][0][2]
    assert "vmi-create-admitter.go" in gpu[0][0][2]
    assert "KubeVirt" not in _lint(cr, host, kubevirt="v0.36.0")[0][0][2].partition("given; ")[2]


def test_the_lint_rpc_gives_the_same_finding_and_notes_as_the_library(server):
    from pciname.client import Client

    files = {"vm.yaml": VMI_MIG, "pod.yaml": _pod("nvidia.com/made-up-thing")}
    linter = Linter("latest")
    for name, text in files.items():
        linter.add_text(text, name)
    findings = linter.run()
    with Client(f"127.0.0.1:{server.port}", timeout=60) as client:
        result = client.lint(files)
    assert [(f.file, f.line, f.code, f.message) for f in result.findings] == [
        (f.file, f.line, f.code, f.message) for f in findings
    ]
    assert [f.code for f in result.findings] == ["container-name-in-vm"]
    assert result.notes == linter.notes and any("nvidia.com/made-up-thing is not a name" in n for n in result.notes)


def test_docs_naming_section_9_transcript_is_what_the_cli_prints(tmp_path, monkeypatch):
    from tests.conftest import REPO

    section = (REPO / "docs" / "naming.md").read_text(encoding="utf-8").split("\n## 9. ", 1)[1]
    document = section.split("```yaml\n", 1)[1].split("```", 1)[0]
    transcript = section.split("```text\n", 1)[1].split("```", 1)[0]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "gpu-paths.yaml").write_text(document, encoding="utf-8")
    ran = pciname("lint", "gpu-paths.yaml")
    assert ran.returncode == 1
    assert ran.stdout + ran.stderr == transcript
