"""``pciname lint --hami RELEASE``: pods and VMs checked as HAMi's release
reads them (pciname.lint.kinds.hami), on the CLI, the library and the Lint RPC."""

from __future__ import annotations

import pytest

from pciname.errors import PcinameError
from pciname.lint.linter import Linter
from pciname.server._proto import pciname_pb2 as pb
from tests.cli_run import pciname

DEPLOYMENT = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: train}
spec:
  template:
    spec:
      containers:
      - name: main
        resources:
          limits:
            nvidia.com/gpu: 2
            nvidia.com/gpucores: 101
      - name: side
        resources:
          limits: {nvidia.com/gpumem: 4096}
      - name: fine
        resources:
          limits: {nvidia.com/gpu: 1, nvidia.com/gpumem-percentage: 25, nvidia.com/gpucores: 30}
      - name: renamed
        resources:
          requests: {nvidia.com/gpu-a100: 1}
"""
VM = """\
kind: VirtualMachine
metadata: {name: vm}
spec:
  template:
    spec:
      domain:
        devices:
          gpus:
          - {name: g, deviceName: nvidia.com/gpumem}
"""


def _lint(text, hami="v2.8.1"):
    linter = Linter("latest", hami=hami)
    linter.add_text(text, "input.yaml")
    return [(f.line, f.path, f.code) for f in linter.run()]


def test_each_container_as_hami_reads_it():
    assert _lint(DEPLOYMENT) == [
        (11, 'spec.template.spec.containers[0].resources.limits["nvidia.com/gpu"]', "hami-whole-memory"),
        (12, 'spec.template.spec.containers[0].resources.limits["nvidia.com/gpucores"]', "hami-cores-range"),
        (15, 'spec.template.spec.containers[1].resources.limits["nvidia.com/gpumem"]', "hami-without-gpu"),
        (21, 'spec.template.spec.containers[3].resources.requests["nvidia.com/gpu-a100"]', "hami-unknown-name"),
    ]


def test_a_vm_asking_for_a_hami_name():
    found = [f for f in _lint(VM) if f[2].startswith("hami-")]
    assert found == [(9, "spec.template.spec.domain.devices.gpus[0].deviceName", "hami-in-vm")]


def test_without_hami_the_names_are_not_checked_and_an_unknown_release_is_one_line():
    assert [c for _, _, c in _lint(DEPLOYMENT, hami=None) if c.startswith("hami-")] == []
    with pytest.raises(PcinameError, match="HAMi 'v9.9.9' is not a release pciname knows"):
        Linter("latest", hami="v9.9.9")


def test_the_cli(tmp_path):
    (tmp_path / "deploy.yaml").write_text(DEPLOYMENT)
    code, out, err = pciname("lint", str(tmp_path / "deploy.yaml"), "--hami", "hami@v2.8.1")
    assert code == 1 and err == ""
    assert "deploy.yaml:12: hami-cores-range: " in out
    assert (
        "nvidia.com/gpucores: '101' is not a per cent from 0 to 100: HAMi's scheduler takes it as 100, the whole GPU exclusively"
        in out
    )
    code, out, err = pciname("lint", str(tmp_path / "deploy.yaml"), "--hami", "v1")
    assert (
        (code, out) == (2, "") and err.startswith("pciname: error: HAMi 'v1' is not a release") and err.count("\n") == 1
    )


def test_the_rpc(stub):
    import grpc

    files = [pb.LintFile(name="deploy.yaml", text=DEPLOYMENT)]
    response = stub.Lint(pb.LintRequest(files=files, hami="v2.8.1"), timeout=60)
    codes = [f.code for f in response.findings if f.code.startswith("hami-")]
    assert codes == ["hami-whole-memory", "hami-cores-range", "hami-without-gpu", "hami-unknown-name"]
    with pytest.raises(grpc.RpcError) as caught:
        stub.Lint(pb.LintRequest(files=files, hami="v0"), timeout=60)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def _notes(text, hami):
    linter = Linter("latest", hami=hami)
    linter.add_text(text, "input.yaml")
    linter.run()
    return linter.notes


def test_hamis_names_are_judged_by_the_hami_rule_and_without_it_named_as_unchecked():
    """Never silently clean (issue 40) meets HAMi (issue 39): with --hami the
    ``nvidia.com/gpu...`` names of pods are the HAMi rule's, so no note
    repeats them; without it each HAMi-only name is noted as not checked,
    with the option that checks it."""
    assert [n for n in _notes(DEPLOYMENT, "v2.8.1") if "nvidia.com/gpu" in n] == []
    unchecked = [n for n in _notes(DEPLOYMENT, None) if "a name HAMi's chart registers" in n]
    assert len(unchecked) == 4 and all("give --hami RELEASE to check it" in n for n in unchecked)
    assert any('limits["nvidia.com/gpumem"]' in n for n in unchecked)
    # nvidia.com/gpu is the container plugin's name first; the note says HAMi's chart registers it too.
    container = [n for n in _notes(DEPLOYMENT, None) if 'limits["nvidia.com/gpu"]' in n]
    assert len(container) == 2 and all("k8s-device-plugin" in n and "--hami RELEASE checks it" in n for n in container)


# -- a Cozystack tenant's addons.hami.enabled implies its release's HAMi ------------------------------

TENANT_HAMI = """\
apiVersion: apps.cozystack.io/v1alpha1
kind: Kubernetes
metadata: {name: dev, namespace: tenant-team}
spec:
  addons:
    gpuOperator: {enabled: true}
    hami: {enabled: true}
---
"""


def _implied(cozystack, text=TENANT_HAMI + DEPLOYMENT):
    linter = Linter("latest", cozystack=cozystack)
    linter.add_text(text, "input.yaml")
    return [f.code for f in linter.run()], linter.notes


@pytest.mark.parametrize(
    ("cozystack", "hami", "where"),
    [
        ("v1.4.0", "v2.8.1", "cozystack/cozystack@e84677782c27"),
        ("v1.6.2", "v2.9.0", "cozystack/cozystack@bfde94fd26d3"),
    ],
)
def test_a_tenant_switching_hami_on_implies_the_hami_its_cozystack_ships(cozystack, hami, where):
    codes, notes = _implied(cozystack)
    assert codes == ["hami-whole-memory", "hami-cores-range", "hami-without-gpu", "hami-unknown-name"]
    assert notes[0] == (
        f"input.yaml:7: spec.addons.hami.enabled: Cozystack {cozystack} ships HAMi {hami} ({where} "
        "packages/system/hami/charts/hami/Chart.yaml:2, packages/apps/kubernetes/templates/helmreleases/hami.yaml:1): "
        f"pods are checked as it reads them (--hami {hami})"
    )
    assert not any("give --hami" in note for note in notes)  # the names are judged, not left unchecked


def test_a_cozystack_release_without_hami_says_the_switch_turns_nothing_on():
    codes, notes = _implied("v1.3.6")
    assert codes == []
    assert notes[0].startswith(
        "input.yaml:7: spec.addons.hami.enabled: Cozystack v1.3.6 ships no HAMi (cozystack/cozystack@4c7443e0"
    )
    assert notes[0].endswith(": no packages/system/hami): this switch turns nothing on")


def test_the_switch_off_or_hami_asked_for_implies_nothing():
    codes, notes = _implied(
        "v1.6.2", TENANT_HAMI.replace("hami: {enabled: true}", "hami: {enabled: false}") + DEPLOYMENT
    )
    assert codes == [] and not any("ships HAMi" in note for note in notes)
    linter = Linter("latest", cozystack="v1.6.2", hami="v2.7.1")
    linter.add_text(TENANT_HAMI + DEPLOYMENT, "input.yaml")
    assert len(linter.run()) == 4 and not any("ships HAMi" in note for note in linter.notes)
    assert linter.hami is not None and linter.hami.release == "v2.7.1"


def test_the_cli_on_a_tenants_values_file(tmp_path):
    (tmp_path / "values.yaml").write_text("addons:\n  gpuOperator: {enabled: true}\n  hami:\n    enabled: true\n")
    (tmp_path / "train.yaml").write_text(DEPLOYMENT)
    ran = pciname("lint", "values.yaml", "train.yaml", "--cozystack", "v1.5.4", cwd=tmp_path)
    assert ran.code == 1
    assert [line.split(": ")[1] for line in ran.out.splitlines()] == [
        "hami-whole-memory",
        "hami-cores-range",
        "hami-without-gpu",
        "hami-unknown-name",
    ]
    assert "values.yaml:4: addons.hami.enabled: Cozystack v1.5.4 ships HAMi v2.8.1 (" in ran.err


def test_hami_as_the_release_a_cozystack_release_ships(tmp_path):
    (tmp_path / "train.yaml").write_text(DEPLOYMENT)
    ran = pciname("lint", "train.yaml", "--hami", "cozystack@v1.6.2", cwd=tmp_path)
    assert ran.code == 1 and "HAMi v2.9.0 gives this container every requested GPU's whole memory" in ran.out
