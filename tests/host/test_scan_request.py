"""``scan`` as a request (:mod:`pciname.capabilities.scan`): it refuses
profile ``auto`` in each surface's words, and ``pciname scan`` prints its
answer as it is, the report and the mediatedDevicesConfiguration alike."""

from __future__ import annotations

import json

import pytest
import yaml

from pciname.capabilities.scan import ScanRequest, answer
from pciname.capabilities.spelling import RequestError, Spelling
from pciname.errors import PcinameError
from pciname.host.sysfs import scan
from tests.cli_run import pciname as run
from tests.sysfs_tree import SysfsTree

A10 = "0000:3b:00.0"


@pytest.fixture
def tree(tmp_path) -> SysfsTree:
    """An A10 for passthrough, and one on the nvidia driver offering two vGPU types."""
    node = SysfsTree(tmp_path / "node")
    node.add_function(A10)
    node.add_function("0000:af:00.0", driver="nvidia", iommu_group="40")
    node.add_mdev_type("0000:af:00.0", "nvidia-592", "NVIDIA A10-24Q\n")
    node.add_mdev_type("0000:af:00.0", "nvidia-593", "NVIDIA A10-12Q\n", available="2\n")
    return node


@pytest.mark.parametrize(
    ("spelling", "words"),
    [
        (Spelling.CLI, "--profile auto needs a cluster to infer from: it works with audit, gpu-options and apply"),
        (Spelling.RPC, "profile auto needs a cluster to infer from: it works with GpuOptions; name a profile"),
    ],
)
@pytest.mark.parametrize("profile", ["auto", " AUTO "])
def test_profile_auto_is_refused_in_the_surfaces_words(spelling, words, profile):
    with pytest.raises(RequestError) as refused:
        ScanRequest("/", profile).validated()
    assert refused.value.spelled(spelling) == words


@pytest.mark.parametrize("profile", [None, "latest", "kubevirt-gpu-device-plugin@v1.1.2"])
def test_a_profile_to_name_with_is_the_request_itself(profile):
    request = ScanRequest("/", profile, ("A10-24Q",))
    assert request.validated() == request


def test_the_command_refuses_auto_as_the_request_does(tree, capsys):
    code, out, err = run("scan", "--sysfs-root", tree.root, "-p", "auto")
    assert (code, out) == (2, "")
    assert (
        err
        == "pciname: error: --profile auto needs a cluster to infer from: it works with audit, gpu-options and apply\n"
    )


@pytest.mark.parametrize("profile", [None, "kubevirt-gpu-device-plugin@v1.1.2"])
def test_the_command_prints_the_answer(tree, capsys, profile):
    scanned = answer(ScanRequest(str(tree.root), profile).validated())
    assert scanned.mdev_config is None
    assert scanned.result.to_dict() == scan(tree.root, profile or "latest").to_dict()
    argv = ["scan", "--sysfs-root", tree.root, "-o", "json"] + (["-p", profile] if profile else [])
    code, out, _ = run(*argv)
    assert json.loads(out) == scanned.result.to_dict()
    assert code == (1 if scanned.result.errors else 0)
    assert scanned.result.resources[0].resource_name == "nvidia.com/GA102GL_A10"


def test_the_mdev_config_is_the_answers(tree, capsys):
    scanned = answer(ScanRequest(str(tree.root), mdev_config=("A10-12Q", "NVIDIA A10-24Q")).validated())
    assert scanned.mdev_config == {
        "mediatedDevicesConfiguration": {"mediatedDeviceTypes": ["nvidia-593", "nvidia-592"]}
    }
    code, out, _ = run("scan", "--sysfs-root", tree.root, "--mdev-config", "A10-12Q", "--mdev-config", "NVIDIA A10-24Q")
    assert (code, yaml.safe_load(out)) == (0, scanned.mdev_config)
    code, out, _ = run("scan", "--sysfs-root", tree.root, "--mdev-config", "A10-12Q", "-o", "json")
    assert json.loads(out) == {"mediatedDevicesConfiguration": {"mediatedDeviceTypes": ["nvidia-593"]}}


def test_a_type_the_node_does_not_offer_is_the_answers_error(tree, capsys):
    with pytest.raises(PcinameError, match="--mdev-config L4-24Q: the node offers no mdev type 'L4-24Q'"):
        answer(ScanRequest(str(tree.root), mdev_config=("L4-24Q",)).validated())
    code, out, err = run("scan", "--sysfs-root", tree.root, "--mdev-config", "L4-24Q")
    assert (code, out) == (2, "") and "--mdev-config L4-24Q: the node offers no mdev type" in err


def test_no_sysfs_under_the_root_is_the_answers_error(tmp_path):
    with pytest.raises(PcinameError, match="no such directory"):
        answer(ScanRequest(str(tmp_path / "empty")).validated())
