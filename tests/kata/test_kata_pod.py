"""``pciname kata-pod``: a Pod asking for GPUs under the names NVIDIA's Kata
sandbox device plugin advertises, through the real command line.

The expected names are written from the upstream rules (docs/naming.md,
section 8): with ``P_GPU_ALIAS`` unset (as the GPU Operator deploys the
plugin) every GPU model is ``nvidia.com/pgpu``; with ``P_GPU_ALIAS=""`` each
model is its go-nvlib name through ``formatDeviceName``, which keeps ``-``.
The runtime class is the release fact ``gpu_pod_runtime_classes``
(``createGFDPod`` of ``pkg/device_plugin/gfd.go``)."""

from __future__ import annotations

import json

import pytest
import yaml

from pciname.capabilities.kata_pod import KataPodRequest, answer
from pciname.errors import PcinameError
from pciname.resolution.resolver import default_resolver
from tests.cli_run import pciname as run

KATA = "gpu-operator@v26.7.0+kata"
IMAGE = "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04"
INFERRED = (
    "pciname: runtimeClassName kata-qemu-nvidia-gpu is inferred: the GPU Operator installs no Kata RuntimeClass "
    "(kata-deploy does); kata-qemu-nvidia-gpu is the class sandbox-device-plugin v0.0.5's own GPU pod uses "
    "(NVIDIA/sandbox-device-plugin v0.0.5: pkg/device_plugin/gfd.go createGFDPod)"
)


def pod(limits: dict[str, int], runtime_class: str = "kata-qemu-nvidia-gpu", name: str = "gpu-pod") -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {
            "restartPolicy": "OnFailure",
            "runtimeClassName": runtime_class,
            "containers": [{"name": "gpu", "image": IMAGE, "resources": {"limits": limits}}],
        },
    }


def test_a_gpu_is_nvidia_com_pgpu_and_the_runtime_class_is_labelled_inferred():
    code, out, err = run("kata-pod", "10de:2236=2", "-p", KATA)
    assert (code, yaml.safe_load(out)) == (0, pod({"nvidia.com/pgpu": 2}))
    assert err.splitlines() == [INFERRED]


def test_without_a_profile_the_newest_gpu_operator_in_kata_mode_names_them():
    assert run("kata-pod", "10de:2236=2") == run("kata-pod", "10de:2236=2", "-p", KATA)


def test_a_given_runtime_class_is_used_and_nothing_is_said():
    code, out, err = run("kata-pod", "10de:2236", "-p", KATA, "--runtime-class", "kata-qemu-nvidia-gpu-snp")
    assert (code, yaml.safe_load(out), err) == (0, pod({"nvidia.com/pgpu": 1}, "kata-qemu-nvidia-gpu-snp"), "")


def test_two_models_under_the_shared_alias_are_summed_with_a_note():
    code, out, err = run("kata-pod", "10de:2236", "10de:2335=3", "10de:2236", "-p", KATA)
    assert (code, yaml.safe_load(out)) == (0, pod({"nvidia.com/pgpu": 5}))
    inferred, note = err.splitlines()
    assert inferred == INFERRED
    assert note.startswith(
        "pciname: note: 10de:2236 (GA102GL [A10]) and 10de:2335 (GH100 [H200 SXM 141GB]) are summed into one "
        "nvidia.com/pgpu limit (5): a node serves one model at a time under it"
    )
    assert "P_GPU_ALIAS is 'pgpu' (unset: the release's default)" in note


def test_with_an_empty_alias_each_model_is_its_own_name_and_keeps_its_dashes():
    # pci.ids 2025.07.11: 20b3 "GA100 [A100-SXM-64GB]"; formatDeviceName: upper case, runs of
    # white space to _, everything outside [a-zA-Z0-9_-] deleted.
    code, out, err = run("kata-pod", "10de:20b3", "10de:2236=2", "-p", KATA, "--alias", "")
    limits = {"nvidia.com/GA100_A100-SXM-64GB": 1, "nvidia.com/GA102GL_A10": 2}
    assert (code, yaml.safe_load(out), err.splitlines()) == (0, pod(limits), [INFERRED])
    # The KubeVirt plugin deletes the dashes: not the name a Kata pod asks for.
    assert run("lookup", "10de:20b3")[1] == "nvidia.com/GA100_A100SXM64GB\n"


def test_a_deployment_as_json():
    code, out, err = run("kata-pod", "10de:2236", "-p", KATA, "--kind", "deployment", "--name", "cuda", "-o", "json")
    assert code == 0 and err.splitlines() == [INFERRED]
    assert json.loads(out) == {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "cuda"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "cuda"}},
            "template": {
                "metadata": {"labels": {"app": "cuda"}},
                "spec": {
                    "runtimeClassName": "kata-qemu-nvidia-gpu",
                    "containers": [{"name": "gpu", "image": IMAGE, "resources": {"limits": {"nvidia.com/pgpu": 1}}}],
                },
            },
        },
    }


def test_yaml_and_json_say_the_same():
    yaml_out = run("kata-pod", "10de:2236", "--runtime-class", "kata-1e3", "--image", "on")[1]
    json_out = run("kata-pod", "10de:2236", "--runtime-class", "kata-1e3", "--image", "on", "-o", "json")[1]
    assert "image: 'on'" in yaml_out  # the project's dumper quotes what go-yaml would read as a boolean
    assert yaml.safe_load(yaml_out) == json.loads(json_out)


@pytest.mark.parametrize("profile", ["latest", "kubevirt-gpu-device-plugin@v1.6.0", "gpu-operator@v26.3.1"])
def test_a_kubevirt_profile_is_refused_in_one_line(profile):
    code, out, err = run("kata-pod", "10de:2236", "-p", profile)
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert err.startswith("pciname: error: ") and "is a KubeVirt GPU device plugin profile" in err


def test_a_release_without_a_runtime_class_fact_refuses_unless_one_is_given():
    code, out, err = run("kata-pod", "10de:2236", "-p", "sandbox-device-plugin@v0.0.1")
    assert (code, out, err.count("\n")) == (2, "", 1)
    assert "sandbox-device-plugin v0.0.1 names no runtime class" in err and "no gfd.go" in err
    # v0.0.1 reads P_GPU_ALIAS with os.Getenv: unset is the per-model name (its vendor-section algorithm).
    code, out, err = run("kata-pod", "10de:2236", "-p", "sandbox-device-plugin@v0.0.1", "--runtime-class", "kata-qemu")
    assert (code, yaml.safe_load(out), err) == (0, pod({"nvidia.com/GA102GL_A10": 1}, "kata-qemu"), "")


def test_a_device_the_plugin_does_not_advertise_is_left_out():
    code, out, err = run("kata-pod", "8086:1234", "10de:2236", "--runtime-class", "kata")
    assert (code, yaml.safe_load(out)) == (1, pod({"nvidia.com/pgpu": 1}, "kata"))
    assert err.splitlines() == [
        "pciname: left out 8086:1234: not-advertised: vendor 8086 is not NVIDIA (10de); the plugin only advertises "
        "NVIDIA devices"
    ]
    code, out, err = run("kata-pod", "8086:1234", "--runtime-class", "kata")
    assert (code, out, err.count("\n")) == (2, "", 1) and "no GPU left to ask for" in err


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ((), "no GPUs given"),
        (("10de:2236=0",), "malformed count"),
        (("10de:2236=1025",), "more than the 1024 GPUs"),
        (("10de:2236=600", "10de:2335=600"), "nvidia.com/pgpu: 1200 GPUs is more than the 1024"),
        (("nvidia.com/pgpu",), "takes device ids"),
        (("10de:zz",), "10de:zz"),
        (("10de:2236", "--name", "GPU_Pod"), "not a DNS-1123 label"),
        (("10de:2236", "--runtime-class", "Kata QEMU"), "not a RuntimeClass name"),
        (("10de:2236", "--image", "a b"), "without white space"),
        (("10de:2236", "-p", KATA, "--nvswitch-alias", " x"), "blanks around it"),
    ],
)
def test_bad_input_is_one_line_exit_2(argv, message):
    code, out, err = run("kata-pod", *argv)
    assert (code, out, err.count("\n")) == (2, "", 1), err
    assert message in err


def test_the_generated_pod_passes_lint_clean(tmp_path):
    generated = tmp_path / "pod.yaml"
    generated.write_text(run("kata-pod", "10de:2236", "10de:2335", "-p", KATA)[1])
    assert run("lint", str(generated), "-p", KATA) == (0, "", "")
    code, out, err = run("lint", str(generated))  # a KubeVirt profile: checked under the newest Kata one, said so
    assert (code, out, err.count("\n")) == (0, "", 1) and f"checked under {KATA}" in err
    per_model = tmp_path / "per-model.yaml"
    per_model.write_text(run("kata-pod", "10de:20b3", "-p", KATA, "--alias", "", "--kind", "deployment")[1])
    assert run("lint", str(per_model), "-p", KATA, "--alias", "") == (0, "", "")
    # ... but the GPU Operator sets no P_GPU_ALIAS: under its plugin that name is not advertised.
    code, out, _ = run("lint", str(per_model), "-p", KATA)
    assert code == 1 and "wrong-kata-resource-name" in out and "this GPU is nvidia.com/pgpu" in out


def test_the_request_and_its_answer_as_a_library():
    request = KataPodRequest(("10de:2236=2",), name="lib").validated()
    assert request.requests == (("10de:2236", 2),)
    result = answer(request, KATA, resolver=default_resolver())
    assert (result.profile, result.runtime_class) == (KATA, "kata-qemu-nvidia-gpu")
    assert result.data == pod({"nvidia.com/pgpu": 2}, name="lib")
    assert result.inferred is not None and result.inferred in INFERRED
    with pytest.raises(PcinameError, match="kind 'job'"):
        KataPodRequest(("10de:2236",), kind="job").validated()
