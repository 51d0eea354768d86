"""The requests of vm-gpus, vgpu-types and admission-policy
(:mod:`pciname.capabilities`): their rules in each surface's words, their
answers equal to what the commands print, and the commands building them
without writing into the parsed arguments."""

from __future__ import annotations

import copy
import json

import pytest
import yaml

from pciname.capabilities.admission import (
    CLUSTER_CR,
    AdmissionPolicyRequest,
    answer as admission_answer,
    cluster_cr,
)
from pciname.capabilities.spelling import RequestError, Spelling
from pciname.capabilities.vgpu_types import VgpuTypesRequest, answer as vgpu_types_answer
from pciname.capabilities.vm_gpus import NO_GPUS_CLI, NO_GPUS_RPC, VmGpusRequest, answer as vm_gpus_answer
from pciname.cli import build_parser
from pciname.errors import PcinameError
from pciname.kubevirt.vgpu import vgpu_gpus, with_vgpus
from pciname.policy.admission import DEFAULT_ACTIONS
from tests.cli_run import pciname as run
from tests.conftest import LATEST
from tests.kube_documents import ONE_WRONG_NAME_CR as CR

# -- vm-gpus -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("fields", "cli", "rpc"),
    [
        ({}, NO_GPUS_CLI, NO_GPUS_RPC),
        (
            {"devices": ("10de:2236",), "prefix": ""},
            "--prefix must be a non-empty name without white space",
            "prefix must be a non-empty name without white space",
        ),
        (
            {"mdev_types": ("GRID T4-1Q",), "prefix": "g pu"},
            "--prefix must be a non-empty name without white space",
            "prefix must be a non-empty name without white space",
        ),
    ],
)
def test_vm_gpus_rules_in_each_surfaces_words(fields, cli, rpc):
    with pytest.raises(RequestError) as refused:
        VmGpusRequest(**fields).validated()
    assert (str(refused.value), refused.value.spelled(Spelling.RPC)) == (cli, rpc)


def test_vm_gpus_cli_words_are_the_commands(capsys):
    assert run("vm-gpus")[2] == f"pciname: error: {NO_GPUS_CLI}\n"
    assert run("vm-gpus", "10de:2236", "--prefix", "a b")[2] == (
        "pciname: error: --prefix must be a non-empty name without white space\n"
    )


def test_vm_gpus_answer_is_what_the_command_prints(capsys):
    request = VmGpusRequest(("10de:2236=2", "nvidia.com/FOO"), ("GRID T4-1Q",), prefix="x").validated()
    snippet = vm_gpus_answer(request, LATEST)
    assert [g["name"] for g in snippet.data["gpus"]] == ["x1", "x2", "x3", "x4"]
    code, out, _ = run("vm-gpus", "10de:2236=2", "nvidia.com/FOO", "--mdev", "GRID T4-1Q", "--prefix", "x")
    assert code == 0 and yaml.safe_load(out) == snippet.data


def test_vm_gpus_malformed_count_is_reported_when_answered():
    request = VmGpusRequest(("10de:2236=0",)).validated()
    with pytest.raises(PcinameError, match="malformed count"):
        vm_gpus_answer(request, LATEST)


def test_vgpus_become_exact_mdev_strings_from_plain_sequences():
    assert with_vgpus(["10de:2236"], ["GRID T4-1Q=1"], ["A10-24Q=2"], LATEST, counts=True) == (
        [],
        ["GRID T4-1Q=1", "NVIDIA A10-24Q=2"],
    )
    assert with_vgpus(["10de:2236"], [], [], LATEST, counts=True) == (["10de:2236"], [])
    with pytest.raises(PcinameError, match="give the count to --vgpu"):
        vgpu_gpus(["10de:2236=2"], counts=True)
    assert vgpu_gpus(["10de:2236=2"], counts=False) == ["10de:2236=2"]


# -- vgpu-types ---------------------------------------------------------------------------


def test_vgpu_types_device_must_be_text_in_each_surfaces_words():
    with pytest.raises(RequestError, match="^--device must be a device id") as refused:
        VgpuTypesRequest(2236).validated()  # type: ignore[arg-type]
    assert refused.value.spelled(Spelling.RPC).startswith("device must be a device id")
    assert VgpuTypesRequest("10de:2236", "").validated().chosen_profile is None


def test_vgpu_types_answer_is_what_the_command_prints(capsys):
    result = vgpu_types_answer(VgpuTypesRequest("0x10DE:0x2236").validated(), LATEST)
    assert result.covered and result.device == "10de:2236"
    code, out, _ = run("vgpu-types", "0x10DE:0x2236", "-o", "json")
    assert code == 0 and json.loads(out) == result.types


def test_vgpu_types_not_covered_is_an_answer_with_its_line(capsys):
    result = vgpu_types_answer(VgpuTypesRequest("10DE:2684").validated(), LATEST)
    assert (result.covered, result.types, result.device) == (False, None, "10de:2684")
    assert "catalogue" in result.message
    assert run("vgpu-types", "10DE:2684") == (1, "", f"pciname: {result.message}\n")


def test_vgpu_types_device_is_checked_after_the_profile(capsys):
    """The order both surfaces have always reported the two in."""
    code, _, err = run("vgpu-types", "1234:5678", "-p", "nope")
    assert code == 2 and "unknown profile 'nope'" in err
    with pytest.raises(PcinameError, match="not an NVIDIA device"):
        vgpu_types_answer(VgpuTypesRequest("1234:5678").validated(), LATEST)


# -- admission-policy ------------------------------------------------------------------------

GO_WITHOUT = "go without {cr} / {cluster}: the CR says what is allowed"


@pytest.mark.parametrize(
    ("fields", "cli", "rpc"),
    [
        (
            {"devices": ("10de:2236",), "kubevirt_cr": True},
            "DEVICE, --mdev and --vgpu " + GO_WITHOUT.format(cr="--from-cr", cluster="--from-cluster"),
            "devices and mdev_types " + GO_WITHOUT.format(cr="kubevirt_cr", cluster="from_cluster"),
        ),
        (
            {"mdev_types": ("NVIDIA A10-24Q",), "from_cluster": True},
            "DEVICE, --mdev and --vgpu " + GO_WITHOUT.format(cr="--from-cr", cluster="--from-cluster"),
            "devices and mdev_types " + GO_WITHOUT.format(cr="kubevirt_cr", cluster="from_cluster"),
        ),
        (
            {"kubevirt_cr": True, "from_cluster": True},
            "--from-cluster reads the KubeVirt CR from the cluster: leave --from-cr empty",
            "from_cluster reads the KubeVirt CR from the cluster: leave kubevirt_cr empty",
        ),
        (
            {},
            "nothing to allow: name a DEVICE or --mdev TYPE, or use --from-cr FILE / --from-cluster",
            "empty request: no devices, mdev_types, kubevirt_cr or from_cluster",
        ),
        (
            {"vgpus": ("A10-24Q",)},
            "nothing to allow: name a DEVICE or --mdev TYPE, or use --from-cr FILE / --from-cluster",
            "empty request: no devices, mdev_types, kubevirt_cr or from_cluster",
        ),
    ],
)
def test_admission_rules_in_each_surfaces_words(fields, cli, rpc):
    with pytest.raises(RequestError) as refused:
        AdmissionPolicyRequest(**fields).validated()
    assert (str(refused.value), refused.value.spelled(Spelling.RPC)) == (cli, rpc)


def test_admission_cli_words_are_the_commands(capsys, tmp_path):
    cr = tmp_path / "cr.yaml"
    cr.write_text(CR)
    _, _, err = run("admission-policy", "--from-cr", str(cr), "10de:2236")
    assert (
        err
        == f"pciname: error: DEVICE, --mdev and --vgpu {GO_WITHOUT.format(cr='--from-cr', cluster='--from-cluster')}\n"
    )
    _, _, err = run("admission-policy", "--vgpu", "A10-24Q")
    assert (
        err
        == "pciname: error: nothing to allow: name a DEVICE or --mdev TYPE, or use --from-cr FILE / --from-cluster\n"
    )


def test_admission_actions_default_to_warn_and_audit():
    assert AdmissionPolicyRequest(("10de:2236",)).validated().actions == DEFAULT_ACTIONS
    assert AdmissionPolicyRequest(("10de:2236",), actions=("Deny",)).validated().actions == ("Deny",)


def test_admission_answer_is_what_the_command_prints(capsys, tmp_path):
    request = AdmissionPolicyRequest(("10de:2236",), vgpus=("A10-24Q",), actions=("Deny",)).validated()
    result = admission_answer(request, LATEST)
    assert result.policy.allowed == ("nvidia.com/NVIDIA_A10-24Q",)
    code, out, _ = run("admission-policy", "10de:2236", "--vgpu", "A10-24Q", "--action", "Deny")
    assert code == 0 and out == result.policy.to_yaml()

    cr = tmp_path / "cr.yaml"
    cr.write_text(CR)
    from_cr = admission_answer(AdmissionPolicyRequest(kubevirt_cr=True).validated(), LATEST, cr=(CR, str(cr)))
    code, out, err = run("admission-policy", "--from-cr", str(cr))
    assert code == 1 and out == from_cr.policy.to_yaml()
    assert len(from_cr.findings) == 1 and err == f"pciname: left out: {from_cr.findings[0]}\n"


def test_admission_answer_asks_the_check_and_reads_through_the_stream():
    asked: list[str] = []
    read: list[str] = []

    def stream(text):
        read.append(text)
        return text

    request = AdmissionPolicyRequest(kubevirt_cr=True).validated()
    admission_answer(request, LATEST, cr=(CR, "kubevirt_cr"), check=lambda: asked.append("check"), stream=stream)
    assert read == [CR] and len(asked) >= 2

    class Stop(Exception):
        pass

    def stop():
        raise Stop

    with pytest.raises(Stop):
        admission_answer(request, LATEST, cr=(CR, "kubevirt_cr"), check=stop)
    with pytest.raises(ValueError, match="pass its text as cr"):
        admission_answer(request, LATEST)


def test_cluster_cr_is_the_yaml_of_the_object():
    kubevirt = yaml.safe_load(CR)
    text, name = cluster_cr(kubevirt)
    assert name == CLUSTER_CR == "cluster:kubevirt" and yaml.safe_load(text) == kubevirt


# -- the parsed arguments stay as they were parsed ------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["permitted-host-devices", "10de:2236", "--format", "cozystack", "--cozystack", "v1.5.0"],
        ["node-pool", "gpu", "10de:2236", "--cozystack", "v1.4.0"],
        ["vm-gpus", "10de:2236", "--vgpu", "A10-24Q=2"],
        ["vgpu-types", "10de:2236"],
        ["admission-policy", "10de:2236", "--vgpu", "A10-24Q"],
        ["lint", "{cr}", "--cozystack", "latest"],
    ],
)
def test_commands_do_not_write_into_their_arguments(argv, tmp_path, capsys):
    """Decisions (a --cozystack release's profile, its version) travel in
    the request, not in the argparse Namespace."""
    cr = tmp_path / "cr.yaml"
    cr.write_text(CR)
    argv = [a.format(cr=cr) for a in argv]
    args = build_parser(argv[0]).parse_args(argv)
    before = copy.deepcopy(vars(args))
    assert args.func(args) in (0, 1)
    capsys.readouterr()
    assert vars(args) == before
