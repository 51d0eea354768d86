"""``pciname lint`` of pods that run under a Kata runtime class: the
``nvidia.com/`` names their containers ask for must be the ones NVIDIA's
Kata sandbox device plugin advertises (``wrong-kata-resource-name``).

Expected names are written from the upstream rules (docs/naming.md,
section 8): ``P_GPU_ALIAS`` unset, as the GPU Operator deploys the plugin,
makes every GPU ``nvidia.com/pgpu`` and every NVSwitch
``nvidia.com/nvswitch``; ``P_GPU_ALIAS=""`` gives each model its go-nvlib
name through ``formatDeviceName``, which keeps ``-``."""

from __future__ import annotations

import json

import pytest

from pciname.lint.codes import WRONG_KATA_RESOURCE_NAME
from pciname.lint.linter import Linter, lint_text
from tests import kube_documents as docs
from tests.cli_run import pciname as run

KATA = "gpu-operator@v26.7.0+kata"

WORKLOADS = """\
apiVersion: v1
kind: Pod
metadata: {name: pod}
spec:
  runtimeClassName: kata-qemu-nvidia-gpu
  containers:
  - name: cuda
    image: nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04
    resources:
      limits:
        nvidia.com/GA102GL_A10: 1
        cpu: "1"
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: deployment}
spec:
  selector: {matchLabels: {app: d}}
  template:
    metadata: {labels: {app: d}}
    spec:
      runtimeClassName: kata-qemu-nvidia-gpu-snp
      containers:
      - name: cuda
        resources: {requests: {nvidia.com/pgpu: 1}, limits: {nvidia.com/pgpu: 1}}
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: statefulset}
spec:
  template:
    spec:
      runtimeClassName: kata-qemu-nvidia-gpu-tdx
      initContainers:
      - name: warm-up
        resources: {requests: {nvidia.com/GH100_H200_SXM_141GB: 1}}
      containers:
      - {name: main}
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: daemonset}
spec:
  template:
    spec:
      runtimeClassName: kata
      containers:
      - {name: c, resources: {limits: {nvidia.com/gpu: 1}}}
---
apiVersion: apps/v1
kind: ReplicaSet
metadata: {name: replicaset}
spec:
  template:
    spec:
      runtimeClassName: kata-clh
      containers:
      - {name: c, resources: {limits: {nvidia.com/nvswitch: 1, nvidia.com/GA100_A100SXM64GB: 2}}}
---
apiVersion: batch/v1
kind: Job
metadata: {name: job}
spec:
  template:
    spec:
      runtimeClassName: kata-qemu
      containers:
      - {name: c, resources: {limits: {nvidia.com/GA100_A100-SXM-64GB: 1}}}
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: cronjob}
spec:
  schedule: "@daily"
  jobTemplate:
    spec:
      template:
        spec:
          runtimeClassName: kata-qemu-nvidia-gpu
          containers:
          - {name: c, resources: {limits: {nvidia.com/GA102GL_A10: 1}}}
"""

#: Pods that are no Kata pods: no runtime class, another one, one that only contains "kata".
NOT_KATA = """\
apiVersion: v1
kind: Pod
metadata: {name: runc}
spec:
  containers:
  - {name: c, resources: {limits: {nvidia.com/GA102GL_A10: 1}}}
---
apiVersion: v1
kind: Pod
metadata: {name: nvidia}
spec:
  runtimeClassName: nvidia
  containers:
  - {name: c, resources: {limits: {nvidia.com/gpu: 1}}}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: not-kata}
spec:
  template:
    spec:
      runtimeClassName: my-kata-gpu
      containers:
      - {name: c, resources: {limits: {nvidia.com/GA102GL_A10: 1}}}
"""


def kata_findings(text: str, profile: str = "latest", **kwargs) -> list[tuple[str, object]]:
    return [(f.path, f.expected) for f in lint_text(text, "w.yaml", profile, **kwargs)]


def test_every_workload_kind_under_the_newest_gpu_operator_in_kata_mode():
    found = lint_text(WORKLOADS, "w.yaml", "latest")
    assert {f.code for f in found} == {WRONG_KATA_RESOURCE_NAME}
    assert [(f.document, f.path, f.expected) for f in found] == [
        (1, 'spec.containers[0].resources.limits["nvidia.com/GA102GL_A10"]', "nvidia.com/pgpu"),
        (
            3,
            'spec.template.spec.initContainers[0].resources.requests["nvidia.com/GH100_H200_SXM_141GB"]',
            "nvidia.com/pgpu",
        ),
        (
            4,
            'spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"]',
            ["nvidia.com/nvswitch", "nvidia.com/pgpu"],
        ),
        (5, 'spec.template.spec.containers[0].resources.limits["nvidia.com/GA100_A100SXM64GB"]', "nvidia.com/pgpu"),
        (6, 'spec.template.spec.containers[0].resources.limits["nvidia.com/GA100_A100-SXM-64GB"]', "nvidia.com/pgpu"),
        (
            7,
            'spec.jobTemplate.spec.template.spec.containers[0].resources.limits["nvidia.com/GA102GL_A10"]',
            "nvidia.com/pgpu",
        ),
    ]
    first = found[0]
    assert (first.line, first.column, first.value) == (11, 9, "nvidia.com/GA102GL_A10")
    assert first.message == (
        "under the Kata plugin (gpu-operator@v26.7.0+kata, P_GPU_ALIAS unset) this GPU is nvidia.com/pgpu, not "
        "nvidia.com/GA102GL_A10: nvidia.com/GA102GL_A10 is the KubeVirt plugin's name of 10de:2236, and the Kata "
        'plugin\'s only with P_GPU_ALIAS=""; the pod never schedules'
    )


def test_the_messages_say_which_plugin_spells_a_name_so():
    messages = {f.value: f.message for f in lint_text(WORKLOADS, "w.yaml", KATA)}
    assert messages["nvidia.com/GH100_H200_SXM_141GB"].endswith(
        "is the KubeVirt plugin's name of 10de:2335, and the Kata plugin's only with P_GPU_ALIAS=\"\"; "
        "the pod never schedules"
    )
    assert messages["nvidia.com/GA100_A100SXM64GB"].endswith(
        "is the KubeVirt plugin's name of 10de:20b3; the Kata plugin's own name for it, only with "
        'P_GPU_ALIAS="", is nvidia.com/GA100_A100-SXM-64GB; the pod never schedules'
    )
    assert messages["nvidia.com/GA100_A100-SXM-64GB"].endswith(
        'is the Kata plugin\'s per-model name of 10de:20b3, right only with P_GPU_ALIAS=""; the pod never schedules'
    )
    assert messages["nvidia.com/gpu"] == (
        "under the Kata plugin (gpu-operator@v26.7.0+kata, P_GPU_ALIAS unset) no device is advertised as "
        "nvidia.com/gpu; it advertises nvidia.com/nvswitch, nvidia.com/pgpu"
    )


def test_with_an_empty_alias_per_model_names_are_right_and_keep_their_dashes():
    assert kata_findings(WORKLOADS, KATA) == kata_findings(WORKLOADS, "latest")
    linter = Linter(_aliased(KATA, ""))
    linter.add_text(WORKLOADS, "w.yaml")
    found = {f.value: f for f in linter.run()}
    assert {name: f.expected for name, f in found.items()} == {
        "nvidia.com/pgpu": [],  # no GPU is nvidia.com/pgpu, and no per-model name is close
        "nvidia.com/nvswitch": [],
        "nvidia.com/gpu": [],
        "nvidia.com/GA100_A100SXM64GB": "nvidia.com/GA100_A100-SXM-64GB",
    }
    assert found["nvidia.com/pgpu"].message == (
        'under the Kata plugin (gpu-operator@v26.7.0+kata, P_GPU_ALIAS="") no device is advertised as '
        "nvidia.com/pgpu; nvidia.com/pgpu is every GPU model's name only with P_GPU_ALIAS unset (the GPU "
        "Operator's default)"
    )
    assert found["nvidia.com/nvswitch"].message.endswith(
        "nvidia.com/nvswitch is every NVSwitch's name only with NVSWITCH_ALIAS unset (the GPU Operator's default)"
    )
    assert found["nvidia.com/pgpu"].line == 25  # the Deployment asks twice: requests and limits, one line


def _aliased(profile: str, alias: str):
    from pciname.naming.profiles import get_profile, with_aliases

    return with_aliases(get_profile(profile), alias, alias)


def test_pods_without_a_kata_runtime_class_are_left_alone():
    assert lint_text(NOT_KATA, "n.yaml", "latest") == []
    assert lint_text(NOT_KATA, "n.yaml", KATA) == []


@pytest.mark.parametrize(
    "text",
    [docs.CLEAN, docs.KUBEVIRT_CR, docs.HYPERCONVERGED, docs.COZYSTACK_VALUES, docs.VMS, docs.TENANT, docs.SRIOV_DOC],
)
def test_the_inputs_lint_already_knew_get_no_kata_finding_and_no_note(text):
    linter = Linter("latest")
    linter.add_text(text, "x.yaml")
    assert WRONG_KATA_RESOURCE_NAME not in {f.code for f in linter.run()}
    assert not any("Kata" in note for note in linter.notes)


def test_the_cli_says_once_which_kata_profile_it_checked_under(tmp_path):
    path = tmp_path / "w.yaml"
    path.write_text(WORKLOADS)
    code, out, err = run("lint", str(path))
    assert code == 1 and out.count("wrong-kata-resource-name") == 6
    assert err.splitlines() == [
        f'pciname: note: {path}:11: spec.containers[0].resources.limits["nvidia.com/GA102GL_A10"]: Kata pods\' GPU '
        "names are checked under gpu-operator@v26.7.0+kata (the newest GPU Operator release in Kata mode, "
        "P_GPU_ALIAS unset as it deploys the plugin): kubevirt-gpu-device-plugin@v1.6.0 is not a Kata profile; "
        "give --profile gpu-operator@vX.Y.Z+kata (and --alias) for another"
    ]
    code, out, err = run("lint", str(path), "-p", KATA, "-o", "json")
    assert (code, err) == (1, "")
    rows = json.loads(out)
    assert rows[0]["code"] == WRONG_KATA_RESOURCE_NAME and rows[0]["expected"] == "nvidia.com/pgpu"


def test_v0_0_1_names_each_model_with_the_alias_unset():
    """v0.0.1 reads P_GPU_ALIAS with os.Getenv: unset is the per-model name, its vendor-section one."""
    found = kata_findings(WORKLOADS, "sandbox-device-plugin@v0.0.1")
    assert ('spec.containers[0].resources.limits["nvidia.com/GA102GL_A10"]', "nvidia.com/GA102GL_A10") not in found
    # A go-nvlib per-model name (with its dashes) is no v0.0.1 name: the closest it advertises come first.
    expected = dict(found)['spec.template.spec.containers[0].resources.limits["nvidia.com/GA100_A100-SXM-64GB"]']
    assert expected[0] == "nvidia.com/GA100_A100SXM64GB"


def test_a_pod_spec_reached_through_yaml_aliases_is_checked_once():
    documents = (
        "kind: List\nitems:\n- kind: Pod\n  spec: &spec\n    runtimeClassName: kata\n    containers:\n"
        "    - {name: c, resources: {limits: {nvidia.com/x: 1}}}\n"
    ) + "- {kind: Deployment, spec: {template: {spec: *spec}}}\n" * 500
    found = lint_text(documents, "a.yaml", KATA)
    assert [(f.line, f.path, f.value) for f in found] == [
        (7, 'items[0].spec.containers[0].resources.limits["nvidia.com/x"]', "nvidia.com/x")
    ]
