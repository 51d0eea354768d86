"""The admission policy on UPDATE and on objects being deleted (issue 22,
finding 6), run in two real CEL implementations (tests/kubevirt/admission_util.py):
an UPDATE is checked only for the wrong names (and KubeVirt CR entries) it
adds to what the old object held, so objects written before the allowed set
changed can still be updated, finalizers removed and deletions finished;
an object being deleted is not checked at all (matchConditions)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from pciname.policy.admission import NOT_BEING_DELETED, TARGETS, admission_policy, allowed_from_devices
from tests.kubevirt.admission_util import Evaluator

GOOD = "nvidia.com/GA102GL_A10"  # 10de:2236, allowed
WRONG = "nvidia.com/GA102GL_A10G"  # a real name, not allowed
OTHER = "nvidia.com/TU104GL_TESLA_T4"  # another real name, not allowed


@pytest.fixture(scope="module")
def evaluator() -> Evaluator:
    permitted, _ = allowed_from_devices(["10de:2236"], ["NVIDIA A10-24Q"], "latest")
    return Evaluator(admission_policy(permitted, "latest", ("Deny",)).objects[0])


def _object(kind: str, names: list[str], **metadata: Any) -> dict[str, Any]:
    target = next(t for t in TARGETS if t.kind == kind)
    obj: dict[str, Any] = {"apiVersion": "kubevirt.io/v1", "kind": kind, "metadata": {"name": "vm", **metadata}}
    node = obj
    for key in target.devices:
        node = node.setdefault(key, {})
    node["gpus"] = [{"name": f"g{i}", "deviceName": n} for i, n in enumerate(names)]
    return obj


def _kubevirt(entries: list[dict[str, Any]], mdevs: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    permitted: dict[str, Any] = {"pciHostDevices": entries}
    if mdevs is not None:
        permitted["mediatedDevices"] = mdevs
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": {"permittedHostDevices": permitted}},
    }


def _pci(selector: str, name: str, **more: Any) -> dict[str, Any]:
    return {"pciVendorSelector": selector, "resourceName": name, "externalResourceProvider": True, **more}


def _helm(kind: str, groups: dict[str, list[str]]) -> dict[str, Any]:
    values: dict[str, Any]
    if kind == "Kubernetes":
        values = {"nodeGroups": {g: {"gpus": [{"name": n} for n in names]} for g, names in groups.items()}}
    else:
        values = {"cluster": "c", "gpus": [{"name": n} for n in groups["pool"]]}
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {"name": "k", "namespace": "tenant-a", "labels": {"apps.cozystack.io/application.kind": kind}},
        "spec": {"values": values},
    }


@pytest.mark.parametrize("kind", [t.kind for t in TARGETS])
def test_an_update_that_adds_no_wrong_name_passes(evaluator, kind):
    old = _object(kind, [WRONG])
    assert not evaluator(old).allowed  # CREATE: refused
    new = copy.deepcopy(old)
    new["metadata"]["labels"] = {"touched": "yes"}
    assert evaluator(new, old).allowed
    # Removing the finalizer of a VM that holds a now-wrong name (virt-controller, during delete):
    finalizing = copy.deepcopy(old)
    finalizing["metadata"]["finalizers"] = ["kubevirt.io/virtualMachineControllerFinalize"]
    done = copy.deepcopy(old)
    assert evaluator(done, finalizing).allowed
    # Dropping the wrong name, or keeping it beside a right one, passes too.
    assert evaluator(_object(kind, [GOOD]), old).allowed
    assert evaluator(_object(kind, [WRONG, GOOD]), old).allowed


@pytest.mark.parametrize("kind", [t.kind for t in TARGETS])
def test_an_update_that_adds_a_wrong_name_is_refused_naming_it(evaluator, kind):
    old = _object(kind, [WRONG])
    (message,) = evaluator(_object(kind, [WRONG, OTHER]), old).messages
    assert f"GPU deviceName {OTHER} is not permitted" in message
    (message,) = evaluator(_object(kind, [WRONG]), _object(kind, [GOOD])).messages
    assert f"GPU deviceName {WRONG} is not permitted" in message


def test_an_object_being_deleted_is_not_checked(evaluator):
    deleting = _object("VirtualMachine", [WRONG], deletionTimestamp="2026-12-01T10:00:00Z")
    verdict = evaluator(deleting, _object("VirtualMachine", [GOOD]))
    assert verdict.allowed and not verdict.matched
    assert evaluator.conditions == [NOT_BEING_DELETED]
    # And the condition is what lets it through: without it, the same object is refused.
    assert not evaluator(_object("VirtualMachine", [WRONG]), _object("VirtualMachine", [GOOD])).allowed


def test_a_kubevirt_cr_update_is_checked_for_the_entries_it_adds(evaluator):
    held = _pci("10DE:2236", "nvidia.com/A10")  # a wrong name for 10de:2236
    old = _kubevirt([held])
    assert not evaluator(old).allowed
    # virt-operator writes the CR again (status, another field): it passes.
    new = copy.deepcopy(old)
    new["spec"]["configuration"]["developerConfiguration"] = {"featureGates": ["HostDevices"]}
    assert evaluator(new, old).allowed
    # A new wrong entry is refused and named.
    added = _kubevirt([held, _pci("10DE:2236", "nvidia.com/A10_NEW")])
    (message,) = evaluator(added, old).messages
    assert message.endswith(f"advertises it as {GOOD}, not nvidia.com/A10_NEW"), message
    # Enabling an entry the old CR held disabled adds it.
    disabled = _kubevirt([_pci("10DE:2236", "nvidia.com/A10", disabled=True)])
    assert not evaluator(old, disabled).allowed
    # So does turning on externalResourceProvider (NVIDIA's plugin then advertises it).
    kubevirts = _kubevirt([{**held, "externalResourceProvider": False}])
    assert evaluator(kubevirts).allowed and not evaluator(old, kubevirts).allowed


def test_a_kubevirt_cr_update_keeps_held_mdev_entries(evaluator):
    held = {"mdevNameSelector": "NVIDIA A10-24Q", "resourceName": "nvidia.com/A10-24Q"}  # wrong: NVIDIA_A10-24Q
    old = _kubevirt([], [held])
    assert not evaluator(old).allowed
    assert evaluator(copy.deepcopy(old), old).allowed
    renamed = _kubevirt([], [{**held, "resourceName": "nvidia.com/A10_24Q"}])
    (message,) = evaluator(renamed, old).messages
    assert "not nvidia.com/A10_24Q" in message


@pytest.mark.parametrize("kind", ["Kubernetes", "KubernetesNodes"])
def test_a_cozystack_helmrelease_update_is_checked_for_the_names_it_adds(evaluator, kind):
    groups = {"gpu": [WRONG]} if kind == "Kubernetes" else {"pool": [WRONG]}
    old = _helm(kind, groups)
    assert not evaluator(old).allowed
    assert evaluator(copy.deepcopy(old), old).allowed
    more = {"gpu": [WRONG], "gpu2": [OTHER]} if kind == "Kubernetes" else {"pool": [WRONG, OTHER]}
    (message,) = evaluator(_helm(kind, more), old).messages
    assert f": {OTHER} is not permitted" in message, message
    assert WRONG not in message.partition(" is not permitted")[0]


def test_the_old_object_is_not_read_on_create(evaluator):
    """CREATE carries no old object (null): the policy must not read it."""
    verdict = evaluator(_object("VirtualMachine", [GOOD]), None, "CREATE")
    assert verdict.allowed and verdict.variables["heldDevices"] == []
