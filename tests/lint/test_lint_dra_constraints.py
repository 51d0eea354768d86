"""``lint`` of a DRA claim's constraints and of what the driver release does
when it prepares the claim (pciname.dra.constraints, the DRA kind's
``_check_release``).

A ``matchAttribute`` / ``distinctAttribute`` naming an attribute the
release does not publish for vfio devices leaves no device for the
requests it covers: Kubernetes' allocator fails a device that lacks it
(kubernetes/dynamic-resource-allocation ``matchAttributeConstraint.add``).
The example is a public GPU Operator v26.7.0 walkthrough's
``constraints: [{matchAttribute: gpu.nvidia.com/partition2}]``: under v0.4.x
no vfio device carries it (only main does, with its FabricManagerPartitioning
gate). Under v0.4.0 every vfio request also gets the plugin's crash on a GPU
without SR-IOV (fixed in v0.4.1)."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
import yaml

from pciname.cli import main
from pciname.dra.constraints import dead_requests, publishing
from pciname.dra.facts import choose, facts
from pciname.lint.codes import CODES, DRA_CONSTRAINT_NOT_PUBLISHED, DRA_PREPARE_CRASH, RuleName
from pciname.lint.linter import Linter
from pciname.server._proto import pciname_pb2 as pb
from tests.cli_run import call

D = 'device.attributes["gpu.nvidia.com"]'
A10 = f'{D}.vendorID == "0x10de" && {D}.deviceID == "0x2236"'
VFIO = "vfio.gpu.nvidia.com"


def request(name: str, device_class: str = VFIO) -> dict[str, Any]:
    return {"name": name, "exactly": {"deviceClassName": device_class, "selectors": [{"cel": {"expression": A10}}]}}


def claim(*constraints: dict[str, Any], requests: tuple[dict[str, Any], ...] | None = None) -> str:
    devices: dict[str, Any] = {"requests": list(requests or (request("gpu1"), request("gpu2")))}
    if constraints:
        devices["constraints"] = list(constraints)
    document = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "vm-gpus"},
        "spec": {"spec": {"devices": devices}},
    }
    return yaml.safe_dump(document, sort_keys=False)


def lint(text: str, driver: str) -> list[Any]:
    linter = Linter("latest", dra=choose(driver))
    linter.add_text(text, "claims.yaml")
    return linter.run()


def codes(found: list[Any]) -> list[str]:
    return [f.code for f in found]


PARTITION2 = {"matchAttribute": "gpu.nvidia.com/partition2"}


# -- the facts behind the check --------------------------------------------------------------


def test_only_main_publishes_partition2_and_only_with_its_gate():
    assert "gpu.nvidia.com/partition2" not in {
        a["name"] for a in facts()["driver_releases"]["v0.4.1"]["vfio"]["attributes"]
    }
    assert publishing("gpu.nvidia.com/partition2") == ("main (unreleased main) with gate FabricManagerPartitioning",)
    assert publishing("resource.kubernetes.io/numaNode") == ("main (unreleased main)",)
    assert publishing("gpu.nvidia.com/numa") == ("v0.4.0", "v0.4.1")
    assert publishing("gpu.nvidia.com/nosuch") == ()


def test_which_requests_a_constraint_leaves_without_a_device():
    vfio_only = {"gpu1": [("gpu1", True)], "gpu2": [("gpu2", True)]}
    assert dead_requests([], vfio_only) == ("gpu1", "gpu2")  # no requests: every request
    assert dead_requests(["gpu2"], vfio_only) == ("gpu2",)
    # A request with another alternative (firstAvailable) can still be allocated.
    mixed = {"gpu1": [("gpu1/a", True), ("gpu1/b", False)]}
    assert dead_requests([], mixed) == ()
    # A constraint on one subrequest leaves the request its other one.
    both = {"gpu1": [("gpu1/a", True), ("gpu1/b", True)]}
    assert dead_requests(["gpu1/a"], both) == ()
    assert dead_requests(["gpu1/a", "gpu1/b"], both) == dead_requests(["gpu1"], both) == ("gpu1",)
    # Requests for another class are not the vfio devices' to fail.
    assert dead_requests([], {"nic": [("nic", False)]}) == ()


# -- lint ------------------------------------------------------------------------------------


@pytest.mark.parametrize("driver", ["v0.4.0", "v0.4.1"])
def test_the_walkthroughs_partition2_constraint_is_a_finding_under_v0_4(driver):
    found = [f for f in lint(claim(PARTITION2), driver) if f.code == DRA_CONSTRAINT_NOT_PUBLISHED]
    assert len(found) == 1
    (finding,) = found
    assert finding.path == "spec.spec.devices.constraints[0].matchAttribute"
    assert CODES[finding.code].severity == "error"
    assert finding.message == (
        f"DRA driver {driver} publishes no gpu.nvidia.com/partition2 on vfio devices, and Kubernetes' allocator "
        "fails every device that lacks a matchAttribute attribute, so request gpu1, gpu2 is never allocated "
        "(releases that publish it: main (unreleased main) with gate FabricManagerPartitioning)"
    )


def test_under_main_partition2_is_published_with_its_gate_and_numa_is_not():
    assert DRA_CONSTRAINT_NOT_PUBLISHED not in codes(lint(claim(PARTITION2), "main"))
    numa = {"matchAttribute": "gpu.nvidia.com/numa", "requests": ["gpu1", "gpu2"]}
    (finding,) = [f for f in lint(claim(numa), "main") if f.code == DRA_CONSTRAINT_NOT_PUBLISHED]
    assert finding.message.endswith("(releases that publish it: v0.4.0; v0.4.1)")
    # main's replacement, resource.kubernetes.io/numaNode, is none of v0.4.1's.
    node = {"distinctAttribute": "resource.kubernetes.io/numaNode"}
    (finding,) = [f for f in lint(claim(node), "v0.4.1") if f.code == DRA_CONSTRAINT_NOT_PUBLISHED]
    assert "lacks a distinctAttribute attribute" in finding.message
    assert finding.message.endswith("(releases that publish it: main (unreleased main))")


@pytest.mark.parametrize(
    "constraint",
    [
        {"matchAttribute": "resource.kubernetes.io/pcieRoot"},  # published (omitted on some nodes)
        {"matchAttribute": "gpu.nvidia.com/productName"},
        {"distinctAttribute": "gpu.nvidia.com/uuid", "requests": ["gpu1", "gpu2"]},
        {"matchAttribute": "gpu.nvidia.com/partition2", "requests": ["nic"]},  # over another class's request
    ],
)
def test_constraints_the_release_can_meet_are_clean(constraint):
    text = claim(constraint, requests=(request("gpu1"), request("gpu2"), request("nic", "nic.example.com")))
    assert DRA_CONSTRAINT_NOT_PUBLISHED not in codes(lint(text, "v0.4.1"))


def test_v0_4_0_warns_once_per_claim_of_its_crash_and_v0_4_1_does_not():
    found = [f for f in lint(claim(), "v0.4.0") if f.code == DRA_PREPARE_CRASH]
    assert len(found) == 1 and CODES[DRA_PREPARE_CRASH].severity == "warning"
    assert found[0].path == "spec.spec.devices.requests[0].exactly.deviceClassName"
    assert found[0].message.startswith("DRA driver v0.4.0 crashes (a nil-pointer panic of its kubelet plugin)")
    assert "no sriov_totalvfs" in found[0].message and "fixed in v0.4.1" in found[0].message
    assert DRA_PREPARE_CRASH not in codes(lint(claim(), "v0.4.1"))
    assert DRA_PREPARE_CRASH not in codes(lint(claim(), "main"))


def test_the_codes_belong_to_the_dra_rule():
    for code in (DRA_CONSTRAINT_NOT_PUBLISHED, DRA_PREPARE_CRASH):
        assert CODES[code].rules == (RuleName.DRA_CLAIMS,)


def test_the_cli_and_grpc_report_the_constraint(tmp_path, monkeypatch, stub):
    monkeypatch.chdir(tmp_path)
    text = claim(PARTITION2)
    (tmp_path / "claims.yaml").write_text(text)
    code, out, err = call(main, ["lint", "claims.yaml", "--dra-driver", "v0.4.1"])
    assert code == 1 and "Traceback" not in err
    assert f"claims.yaml:24: {DRA_CONSTRAINT_NOT_PUBLISHED}: spec.spec.devices.constraints[0].matchAttribute:" in out
    files = [pb.LintFile(name="claims.yaml", text=text)]
    response = stub.Lint(pb.LintRequest(files=files, dra_driver="v0.4.1"), timeout=30)
    assert [f.code for f in response.findings] == [DRA_CONSTRAINT_NOT_PUBLISHED]
    assert response.findings[0].path == "spec.spec.devices.constraints[0].matchAttribute"
    with pytest.raises(grpc.RpcError) as error:
        stub.Lint(pb.LintRequest(files=files, dra_driver="v0.4.2"), timeout=30)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_under_main_lint_says_once_that_it_rests_on_unreleased_main():
    linter = Linter("latest", dra=choose("v0.5.0"))  # what GPU Operator v26.7.0 deploys: modelled by main
    linter.add_text(claim() + "---\n" + claim(), "claims.yaml")
    linter.run()
    said = [n for n in linter.notes if "unreleased main" in n]
    assert (
        len(said) == 1
        and "DRA driver main is unreleased main (kubernetes-sigs/dra-driver-nvidia-gpu commit " in said[0]
    )
    assert said[0].endswith("what v0.5.0 most likely publishes, not a release")
    released = Linter("latest", dra=choose("v0.4.1"))
    released.add_text(claim(), "claims.yaml")
    released.run()
    assert not [n for n in released.notes if "unreleased" in n]
