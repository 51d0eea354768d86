"""``audit --dra`` against a fake API server on loopback, through the real
``kubernetes`` client: the ResourceSlices hold what ``scan --dra`` computes
for sysfs-shaped nodes (the DRA driver's devices), the claims, VMs and
DeviceClass are what ``vm-gpus --dra`` writes (``dra.claims.dra_objects``),
and every verdict is the one the selectors give, or ``cannot-judge``."""

from __future__ import annotations

import copy
import itertools
import json

import pytest
from hypothesis import given, settings, strategies as st

from pciname.cli import main
from pciname.dra.audit import CannotJudge, evaluate, fits_distinct
from pciname.dra.claims import dra_objects
from pciname.dra.facts import choose, for_driver
from pciname.errors import PcinameError
from pciname.host.dra_scan import dra_scan
from tests.fake_kube import FakeKube, dra_objects as listed
from tests.host.dra_nodes import add, readme_commands, replay
from tests.sysfs_tree import SysfsTree

DRIVER = "gpu.nvidia.com"


def slice_of(tmp_path, node, devices, api="v1"):
    """The ResourceSlice the driver publishes on ``node``, whose sysfs has
    the GPUs ``devices`` (address -> device id), as scan --dra computes it."""
    tree = SysfsTree(tmp_path / node)
    for address, device_id in devices.items():
        add(tree, address, device=f"0x{device_id}\n")
    entries = [d.slice_entry() for d in dra_scan(tree.root, for_driver("v0.4.0")).devices]
    if api == "v1beta1":
        entries = [{"name": e["name"], "basic": {k: e[k] for k in ("attributes", "capacity")}} for e in entries]
    return {
        "apiVersion": f"resource.k8s.io/{api}",
        "kind": "ResourceSlice",
        "metadata": {"name": f"{node}-{DRIVER}-abcde"},
        "spec": {
            "driver": DRIVER,
            "nodeName": node,
            "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
            "devices": entries,
        },
    }


def generated(name, gpus, api="v1", namespace="vms"):
    """vm-gpus --dra's template, VM and DeviceClass for ``gpus``, in ``namespace``."""
    objects = dra_objects(gpus, choose(driver="v0.4.0", resource_api=api), name=name)
    template, vm, device_class = (copy.deepcopy(d) for d in objects.documents)
    for obj in (template, vm):
        obj["metadata"]["namespace"] = namespace
    return template, vm, device_class


def cluster(api, slices, classes, templates, vms, claims=()):
    return FakeKube(listed=listed(api, list(slices), list(classes), list(templates), list(claims), list(vms))).start()


def audit(fake, tmp_path, capsys, *extra):
    code = main(["audit", "--dra", "--kubeconfig", str(fake.kubeconfig(tmp_path)), "-o", "json", *extra])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out else None, captured.err


def audit_once(fake, tmp_path, capsys, *extra):
    """:func:`audit` against ``fake``, which is stopped then."""
    try:
        return audit(fake, tmp_path, capsys, *extra)
    finally:
        fake.stop()


@pytest.fixture
def two_vms(tmp_path):
    """A node with an A10 published; a VM asking for an A10, one for an A100."""
    a10 = generated("vm-a10", [("2236", 1)])
    a100 = generated("vm-a100", [("20b5", 1)])
    fake = cluster(
        "v1",
        [slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})],
        [a10[2]],
        [a10[0], a100[0]],
        [a10[1], a100[1]],
    )
    yield fake
    fake.stop()


def test_verdicts_per_vm_request(two_vms, tmp_path, capsys):
    code, report, _ = audit(two_vms, tmp_path, capsys)
    assert code == 1
    assert report["resource_api"] == "resource.k8s.io/v1"
    assert report["device_classes"] == ["vfio.gpu.nvidia.com"]
    assert [(d["node"], d["name"]) for d in report["devices"]] == [("gpu-1", "gpu-vfio-0")]
    rows = {r["vm"]: r for r in report["requests"]}
    assert rows["vms/vm-a10"]["verdict"] == "satisfiable"
    assert rows["vms/vm-a10"]["nodes"] == {"gpu-1": ["gpu-vfio-0"]}
    assert (rows["vms/vm-a10"]["claim"], rows["vms/vm-a10"]["request"]) == ("vm-a10", "gpu1")
    assert rows["vms/vm-a100"]["verdict"] == "unsatisfiable"
    assert rows["vms/vm-a100"]["why"] == (
        "no published device is selected; the driver publishes type='vfio', vendorID='0x10de', deviceID='0x2236', "
        "productName='GA102GL [A10]'"
    )
    assert [(f["code"], f["vm"]) for f in report["findings"]] == [("dra-unsatisfiable", "vms/vm-a100")]


def test_reads_are_paged_and_read_only(two_vms, tmp_path, capsys):
    audit(two_vms, tmp_path, capsys)
    assert {r.method for r in two_vms.requests} == {"GET"}
    paths = [r.path for r in two_vms.requests]
    for plural in ("resourceslices", "deviceclasses", "resourceclaimtemplates", "resourceclaims"):
        assert f"/apis/resource.k8s.io/v1/{plural}" in paths
    assert "/apis/kubevirt.io/v1/virtualmachines" in paths
    assert all(r.query.get("limit") == ["500"] for r in two_vms.requests)


def test_the_table(two_vms, tmp_path, capsys):
    code = main(["audit", "--dra", "--kubeconfig", str(two_vms.kubeconfig(tmp_path))])
    out = capsys.readouterr().out
    assert code == 1
    assert out.startswith("API: resource.k8s.io/v1; DeviceClasses: vfio.gpu.nvidia.com\n")
    assert "gpu-1  gpu-vfio-0" in out
    assert "dra-unsatisfiable: vms/vm-a100: claim vm-a100 request gpu1: no published device is selected" in out


def test_many_slices_are_read_page_by_page(tmp_path, capsys):
    one = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})
    slices = []
    for i in range(1001):
        entry = copy.deepcopy(one)
        entry["metadata"]["name"] = f"s{i}"
        entry["spec"]["nodeName"] = f"gpu-{i}"
        slices.append(entry)
    a10 = generated("vm-a10", [("2236", 2)])
    fake = cluster("v1", slices, [a10[2]], [a10[0]], [a10[1]])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    assert len(report["devices"]) == 1001
    continues = [r.query.get("continue") for r in fake.requests if r.path.endswith("/resourceslices")]
    assert continues == [None, ["500"], ["1000"]]
    # Two A10s asked for (two requests of one claim), one on each node: no
    # node can give both, though each request alone is satisfiable.
    assert [(r["request"], r["verdict"]) for r in report["requests"]] == [
        ("gpu1", "unsatisfiable"),
        ("gpu2", "unsatisfiable"),
    ]
    assert report["requests"][0]["why"] == (
        "no node publishes distinct selected devices for all 2 requests of the claim together"
    )
    assert code == 1


def test_a_count_more_than_a_node_publishes(tmp_path, capsys):
    template, vm, device_class = generated("vm-a10", [("2236", 1)])
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 3
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236", "0000:af:00.0": "2236"})
    fake = cluster("v1", [node], [device_class], [template], [vm])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    (row,) = report["requests"]
    assert (row["verdict"], row["count"], row["why"]) == (
        "unsatisfiable",
        3,
        "no node publishes 3 selected devices (gpu-1: 2)",
    )
    assert code == 1


def test_two_on_one_node_satisfy_a_count_of_two(tmp_path, capsys):
    a10 = generated("vm-a10", [("2236", 2)])
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236", "0000:af:00.0": "2236"})
    fake = cluster("v1", [node], [a10[2]], [a10[0]], [a10[1]])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    assert code == 0
    assert [(r["request"], r["verdict"]) for r in report["requests"]] == [
        ("gpu1", "satisfiable"),
        ("gpu2", "satisfiable"),
    ]
    assert report["requests"][0]["nodes"] == {"gpu-1": ["gpu-vfio-0", "gpu-vfio-1"]}


def test_v1beta1_cluster(tmp_path, capsys):
    # No v1, no v1beta2 (404): the v1beta1 shapes (basic, requests without exactly).
    a10 = generated("vm-a10", [("2236", 1)], api="v1beta1")
    assert "exactly" not in a10[0]["spec"]["spec"]["devices"]["requests"][0]
    fake = cluster(
        "v1beta1", [slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"}, "v1beta1")], [a10[2]], [a10[0]], [a10[1]]
    )
    code, report, _ = audit_once(fake, tmp_path, capsys)
    assert report["resource_api"] == "resource.k8s.io/v1beta1"
    assert [r["verdict"] for r in report["requests"]] == ["satisfiable"]
    assert code == 0


def test_no_device_class(tmp_path, capsys):
    a10 = generated("vm-a10", [("2236", 1)])
    fake = cluster("v1", [slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})], [], [a10[0]], [a10[1]])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    assert code == 1
    assert report["requests"][0]["verdict"] == "no-device-class"
    assert report["findings"][0]["code"] == "dra-no-device-class"
    assert "the cluster has no DeviceClass 'vfio.gpu.nvidia.com'" in report["findings"][0]["message"]


def test_an_expression_pciname_does_not_evaluate_is_not_judged(tmp_path, capsys):
    template, vm, device_class = generated("vm-a10", [("2236", 1)])
    request = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    request["selectors"] = [
        {"cel": {"expression": "device.attributes['gpu.nvidia.com'].productName.startsWith('GA102')"}}
    ]
    fake = cluster("v1", [slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})], [device_class], [template], [vm])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    assert code == 0
    assert report["requests"][0]["verdict"] == "cannot-judge"
    assert "pciname evaluates only conjunctions of attribute equalities" in report["requests"][0]["why"]
    assert report["findings"] == []


def test_claims_and_requests_that_do_not_exist(tmp_path, capsys):
    _, vm, device_class = generated("vm-a10", [("2236", 1)])  # its template is not in the cluster
    _, other, _ = generated("vm-b", [("2236", 1)])
    template_b, _, _ = generated("vm-b", [("2236", 1)])
    other["spec"]["template"]["spec"]["domain"]["devices"]["gpus"][0]["requestName"] = "gpu9"
    other["spec"]["template"]["spec"]["domain"]["devices"]["gpus"].append(
        {"name": "x", "claimName": "nope", "requestName": "r"}
    )
    fake = cluster("v1", [], [device_class], [template_b], [vm, other])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    assert code == 1
    assert [(f["code"], f["vm"], f["message"]) for f in report["findings"]] == [
        ("dra-claim-missing", "vms/vm-a10", "ResourceClaimTemplate vms/vm-a10 does not exist"),
        ("dra-request-missing", "vms/vm-b", "ResourceClaimTemplate vms/vm-b has no request 'gpu9'"),
        (
            "dra-claim-missing",
            "vms/vm-b",
            "gpus[] 'x' names claim 'nope', which spec.template.spec.resourceClaims does not list",
        ),
    ]


def held_claim(vm, claim, node, device, *, pod=None, name=None, namespace="vms", driver=DRIVER):
    """A ResourceClaim whose status.allocation holds ``device`` of ``node``'s
    pool: generated from ``vm``'s template for its launcher ``pod`` (as
    Kubernetes' claim controller writes it), or the plain claim ``name``."""
    pod = pod or f"virt-launcher-{vm}-x7k2p"
    meta = {"name": name or f"{pod}-{claim}-m4k28", "namespace": namespace}
    if name is None:
        meta["annotations"] = {"resource.kubernetes.io/pod-claim-name": claim}
        meta["ownerReferences"] = [
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "name": pod,
                "uid": "u1",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    return {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": meta,
        "spec": {"devices": {"requests": [{"name": "gpu1", "exactly": {"deviceClassName": "vfio.gpu.nvidia.com"}}]}},
        "status": {
            "allocation": {
                "devices": {"results": [{"request": "gpu1", "driver": driver, "pool": node, "device": device}]}
            }
        },
    }


def one_a10_two_vms(tmp_path, claims):
    """A node with one A10; VMs vm-a and vm-a-b (a name vm-a's prefixes) each asking for an A10."""
    a, ab = generated("vm-a", [("2236", 1)]), generated("vm-a-b", [("2236", 1)])
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})
    return cluster("v1", [node], [a[2]], [a[0], ab[0]], [a[1], ab[1]], claims)


def test_a_device_another_vms_claim_holds_is_not_free(tmp_path, capsys):
    # vm-a runs: the claim generated from its template for its launcher pod
    # holds the one A10. It is vm-a's (satisfied by its own device), not
    # vm-a-b's, though vm-a-b's launcher pods' names start as vm-a's do.
    fake = one_a10_two_vms(tmp_path, [held_claim("vm-a", "vm-a", "gpu-1", "gpu-vfio-0")])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    rows = {r["vm"]: r for r in report["requests"]}
    assert rows["vms/vm-a"]["verdict"] == "satisfiable"
    assert rows["vms/vm-a-b"]["verdict"] == "unsatisfiable"
    assert rows["vms/vm-a-b"]["why"] == (
        "the selected devices are allocated to other claims: "
        "gpu-1: gpu-vfio-0 (ResourceClaim vms/virt-launcher-vm-a-x7k2p-vm-a-m4k28)"
    )
    assert [d["allocated_to"] for d in report["devices"]] == ["vms/virt-launcher-vm-a-x7k2p-vm-a-m4k28"]
    assert [(f["code"], f["vm"]) for f in report["findings"]] == [("dra-unsatisfiable", "vms/vm-a-b")]
    assert code == 1


def test_a_claim_of_vm_a_b_is_not_vm_as(tmp_path, capsys):
    fake = one_a10_two_vms(tmp_path, [held_claim("vm-a-b", "vm-a-b", "gpu-1", "gpu-vfio-0")])
    _, report, _ = audit_once(fake, tmp_path, capsys)
    assert {r["vm"]: r["verdict"] for r in report["requests"]} == {
        "vms/vm-a": "unsatisfiable",
        "vms/vm-a-b": "satisfiable",
    }


@pytest.mark.parametrize(
    ("claim", "why"),
    [
        # the annotation names another claim of the pod
        (held_claim("vm-a", "other", "gpu-1", "gpu-vfio-0"), "virt-launcher-vm-a-x7k2p-other-m4k28"),
        # a pod that is not a launcher pod of vm-a (not 5 generated characters)
        (held_claim("vm-a", "vm-a", "gpu-1", "gpu-vfio-0", pod="virt-launcher-vm-a-x7"), "virt-launcher-vm-a-x7-vm-a"),
        # a claim of another namespace
        (held_claim("vm-a", "vm-a", "gpu-1", "gpu-vfio-0", namespace="other"), "ResourceClaim other/"),
        # a plain ResourceClaim the VM does not name
        (held_claim("vm-a", "vm-a", "gpu-1", "gpu-vfio-0", name="shared"), "ResourceClaim vms/shared"),
    ],
)
def test_claims_that_are_not_the_vms_hold_its_device(tmp_path, capsys, claim, why):
    fake = one_a10_two_vms(tmp_path, [claim])
    _, report, _ = audit_once(fake, tmp_path, capsys)
    rows = {r["vm"]: r for r in report["requests"]}
    assert rows["vms/vm-a"]["verdict"] == "unsatisfiable" and why in rows["vms/vm-a"]["why"]


def test_a_named_resource_claim_holds_the_device_for_its_vm(tmp_path, capsys):
    template, vm, device_class = generated("vm-a", [("2236", 1)])
    claim = held_claim("vm-a", "vm-a", "gpu-1", "gpu-vfio-0", name="a10-claim")
    claim["spec"] = template["spec"]["spec"]
    entry = vm["spec"]["template"]["spec"]["resourceClaims"][0]
    entry.pop("resourceClaimTemplateName")
    entry["resourceClaimName"] = "a10-claim"
    other = generated("vm-b", [("2236", 1)])
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})
    fake = cluster("v1", [node], [device_class], [other[0]], [vm, other[1]], [claim])
    _, report, _ = audit_once(fake, tmp_path, capsys)
    assert {r["vm"]: r["verdict"] for r in report["requests"]} == {
        "vms/vm-a": "satisfiable",
        "vms/vm-b": "unsatisfiable",
    }


def test_two_requests_with_one_of_two_devices_held(tmp_path, capsys):
    a10 = generated("vm-a10", [("2236", 2)])
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236", "0000:af:00.0": "2236"})
    held = held_claim("other", "other", "gpu-1", "gpu-vfio-1")
    fake = cluster("v1", [node], [a10[2]], [a10[0]], [a10[1]], [held])
    _, report, _ = audit_once(fake, tmp_path, capsys)
    assert [r["verdict"] for r in report["requests"]] == ["unsatisfiable", "unsatisfiable"]
    assert report["requests"][0]["why"] == (
        "no node has distinct free selected devices for all 2 requests of the claim together (allocated to other "
        "claims: gpu-1: gpu-vfio-1 (ResourceClaim vms/virt-launcher-other-x7k2p-other-m4k28))"
    )
    assert report["requests"][0]["nodes"] == {"gpu-1": ["gpu-vfio-0"]}  # the free one


def test_a_count_of_two_with_one_held(tmp_path, capsys):
    template, vm, device_class = generated("vm-a10", [("2236", 1)])
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["count"] = 2
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236", "0000:af:00.0": "2236"})
    held = held_claim("other", "other", "gpu-1", "gpu-vfio-0")
    fake = cluster("v1", [node], [device_class], [template], [vm], [held])
    _, report, _ = audit_once(fake, tmp_path, capsys)
    (row,) = report["requests"]
    assert (row["verdict"], row["why"]) == (
        "unsatisfiable",
        "the selected devices are allocated to other claims: "
        "gpu-1: gpu-vfio-0 (ResourceClaim vms/virt-launcher-other-x7k2p-other-m4k28) (gpu-1: 1 free, 2 needed)",
    )


def first_available(tmp_path, capsys, *subrequests):
    """A VM whose one request takes the first of ``subrequests`` (name, device
    id) that fits, on a node with one A10; the report."""
    template, vm, device_class = generated("vm-x", [("2236", 1)])
    request = template["spec"]["spec"]["devices"]["requests"][0]
    request["firstAvailable"] = [
        {"name": name} | generated("s", [(device, 1)])[0]["spec"]["spec"]["devices"]["requests"][0]["exactly"]
        for name, device in subrequests
    ]
    del request["exactly"]
    fake = cluster("v1", [slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})], [device_class], [template], [vm])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    (row,) = report["requests"]
    return code, row


def test_first_available_takes_the_first_subrequest_that_fits(tmp_path, capsys):
    code, row = first_available(tmp_path, capsys, ("a100", "20b5"), ("a10", "2236"))
    assert (code, row["verdict"], row["subrequest"], row["nodes"]) == (
        0,
        "satisfiable",
        "a10",
        {"gpu-1": ["gpu-vfio-0"]},
    )
    assert row["why"] == "subrequest a10: selected: gpu-1: gpu-vfio-0"


def test_first_available_with_no_subrequest_that_fits(tmp_path, capsys):
    code, row = first_available(tmp_path, capsys, ("a100", "20b5"), ("h100", "2330"))
    assert (code, row["verdict"]) == (1, "unsatisfiable")
    assert row["why"].startswith("no subrequest can be allocated: subrequest a100: no published device is selected")
    assert "; subrequest h100: no published device is selected" in row["why"]


_RESULT = {"driver": DRIVER, "pool": "gpu-1", "device": "gpu-vfio-0"}
_ALLOCATED = {"allocation": {"devices": {"results": [_RESULT]}}}


@pytest.mark.parametrize(
    "claim",
    [
        {"status": "x"},
        {"status": {"allocation": "x"}},
        {"status": {"allocation": {"devices": "x"}}},
        {"status": {"allocation": {"devices": {"results": "x"}}}},
        {"status": {"allocation": {"devices": {"results": ["x", 1, None, {"driver": []}]}}}},
        {"metadata": {"name": "c", "namespace": "vms", "annotations": {}, "ownerReferences": []}, "status": _ALLOCATED},
        {
            "metadata": {
                "name": "c",
                "namespace": "vms",
                "annotations": {"resource.kubernetes.io/pod-claim-name": "vm-a"},
                "ownerReferences": [{"kind": "Pod", "controller": "yes", "name": "virt-launcher-vm-a-x7k2p"}],
            },
            "status": _ALLOCATED,
        },
    ],
)
def test_claims_of_any_shape_are_read_as_far_as_they_go(tmp_path, capsys, claim):
    # An object's fields arrive as the cluster sends them (the reader refuses
    # a metadata or spec of another shape in one line): a status field of
    # another shape holds nothing, and the rest of the audit stands.
    fake = one_a10_two_vms(tmp_path, [claim])
    code, report, err = audit_once(fake, tmp_path, capsys)
    assert err == ""
    held = claim.get("status") == _ALLOCATED  # a well-formed allocation: the A10 is another claim's (no VM's)
    verdicts = {r["vm"]: r["verdict"] for r in report["requests"]}
    expected = "unsatisfiable" if held else "satisfiable"
    assert verdicts == {"vms/vm-a": expected, "vms/vm-a-b": expected}
    assert code == (1 if held else 0)


def test_objects_of_any_shape_are_one_verdict_each(tmp_path, capsys):
    template, vm, device_class = generated("vm-a10", [("2236", 1)])
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})
    bad_slices = [
        {"spec": {"driver": DRIVER, "devices": "x"}},
        {"spec": {"driver": DRIVER, "pool": "x", "devices": ["x", 1]}},
    ]
    bad_vm = {"metadata": {"name": "bad", "namespace": "vms"}, "spec": {"template": "x", "running": True}}
    bad_template = {"metadata": {"name": "vm-b", "namespace": "vms"}, "spec": {"spec": {"devices": "x"}}}
    bad_class = {"metadata": {"name": "other"}, "spec": {"selectors": "x"}}
    other = copy.deepcopy(vm)
    other["metadata"]["name"] = "vm-b"
    other["spec"]["template"]["spec"]["resourceClaims"][0]["resourceClaimTemplateName"] = "vm-b"
    fake = cluster("v1", [node, *bad_slices], [device_class, bad_class], [template, bad_template], [vm, bad_vm, other])
    code, report, err = audit_once(fake, tmp_path, capsys)
    assert err == ""
    assert {r["vm"]: r["verdict"] for r in report["requests"]} == {"vms/vm-a10": "satisfiable"}
    assert [(f["code"], f["vm"]) for f in report["findings"]] == [("dra-request-missing", "vms/vm-b")]
    assert code == 1


def test_a_cluster_without_dra(tmp_path, capsys):
    fake = FakeKube().start()
    code, report, _ = audit_once(fake, tmp_path, capsys)
    assert (code, report["resource_api"], report["devices"], report["requests"]) == (0, None, [], [])


def test_a_profile_is_refused(two_vms, tmp_path, capsys):
    code, _, err = audit(two_vms, tmp_path, capsys, "--profile", "latest")
    assert code == 2
    assert err.startswith("pciname: error: audit --dra takes no --profile") and err.count("\n") == 1


def test_a_malformed_answer_is_one_line(tmp_path, capsys):
    fake = FakeKube(listed=listed("v1", ["not an object"], [], [], [], [])).start()
    code, _, err = audit_once(fake, tmp_path, capsys)
    assert code == 2
    assert err.startswith("pciname: error: cannot list resourceslices.resource.k8s.io/v1") and err.count("\n") == 1


# -- the evaluation itself ------------------------------------------------------------------

A10 = {
    "name": "gpu-vfio-0",
    "driver": DRIVER,
    "attributes": {DRIVER: {"type": "vfio", "deviceID": "0x2236", "numa": 0, "iommuFDEnabled": False}},
}


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'", True),
        ('device.attributes["gpu.nvidia.com"].deviceID == "0x2236"', True),
        ("device.attributes['gpu.nvidia.com'].deviceID == '0x2236 && x'", False),  # && inside a string
        ("device.attributes['gpu.nvidia.com'].deviceID == '0x2237'", False),
        ("device.attributes['gpu.nvidia.com'].numa == 0", True),
        ("device.attributes['gpu.nvidia.com'].numa == '0'", False),  # an int is no string
        ("device.attributes['gpu.nvidia.com'].iommuFDEnabled == false", True),
        ("device.attributes['gpu.nvidia.com'].missing == 'x' && device.driver == 'other'", False),  # false && error
    ],
)
def test_evaluate(expression, expected):
    assert evaluate(expression, A10) is expected


@pytest.mark.parametrize(
    "expression",
    [
        "device.attributes['gpu.nvidia.com'].missing == 'x'",  # a CEL runtime error
        "device.attributes['gpu.nvidia.com'].deviceID != '0x2237'",
        "device.attributes['gpu.nvidia.com'].deviceID == '0x2236' || true",
        "device.attributes['gpu.nvidia.com'].deviceID == '\\x30x2236'",  # an escape
    ],
)
def test_evaluate_cannot_judge(expression):
    with pytest.raises(CannotJudge):
        evaluate(expression, A10)


def test_readme_transcript_replays(two_vms, tmp_path):
    # README.md's audit --dra transcript, against the cluster it shows.
    from tests.conftest import REPO

    ((command, shown),) = readme_commands("$ pciname audit --dra")
    env = {
        "PATH": "/usr/bin:/bin",
        "PYTHONPATH": str(REPO),
        "HOME": str(tmp_path),
        "KUBECONFIG": str(two_vms.kubeconfig(tmp_path)),
        "NO_PROXY": "127.0.0.1",
    }
    assert replay(command, tmp_path, env) == shown


# -- pools as the allocator gathers them (issue 36) ------------------------------------------


def pool_slice(base, generation, count=1, suffix="", devices=None):
    """``base`` (a ResourceSlice) as a slice of its pool's ``generation`` of
    ``count`` slices, named with ``suffix``, listing ``devices`` (default: its own)."""
    item = copy.deepcopy(base)
    item["metadata"]["name"] += suffix
    item["spec"]["pool"].update(generation=generation, resourceSliceCount=count)
    if devices is not None:
        item["spec"]["devices"] = devices
    return item


def one_a10_pool(tmp_path, capsys, slices, *, count=2, mode=None):
    """A VM asking for ``count`` A10s (or All, ``mode``) against ``slices`` (made
    from gpu-1's slice, one A10); the report's one row and the report."""
    template, vm, device_class = generated("vm-a10", [("2236", 1)])
    exactly = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    exactly["count"] = count
    if mode:
        exactly["allocationMode"] = mode
        del exactly["count"]
    base = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})
    fake = cluster("v1", slices(base), [device_class], [template], [vm])
    code, report, err = audit_once(fake, tmp_path, capsys)
    assert err == ""
    (row,) = report["requests"]
    return code, row, report


@pytest.mark.parametrize("old_first", [True, False])
def test_an_outdated_generation_of_a_pool_is_not_counted(tmp_path, capsys, old_first):
    # The driver republished gpu-1's pool (generation 2); the slice of
    # generation 1 is not deleted yet. Both list gpu-vfio-0, the node's one
    # A10: the allocator uses the newest generation only, so a VM asking
    # for 2 is not satisfiable.
    def slices(base):
        old, new = pool_slice(base, 1, suffix="-old"), pool_slice(base, 2)
        return [old, new] if old_first else [new, old]

    code, row, report = one_a10_pool(tmp_path, capsys, slices)
    assert (row["verdict"], row["why"]) == ("unsatisfiable", "no node publishes 2 selected devices (gpu-1: 1)")
    assert [(d["node"], d["name"]) for d in report["devices"]] == [("gpu-1", "gpu-vfio-0")]
    assert report["pools"] == [
        {
            "node": "gpu-1",
            "pool": "gpu-1",
            "generation": 2,
            "slices": 1,
            "resource_slice_count": 1,
            "outdated_slices": 1,
            "state": "complete",
        }
    ]
    assert code == 1


def test_a_pool_naming_a_device_twice_is_invalid(tmp_path, capsys):
    # Generation 1 of gpu-1's pool is two slices, each listing gpu-vfio-0:
    # the allocator finds the pool invalid and allocates nothing from it.
    def slices(base):
        return [pool_slice(base, 1, count=2), pool_slice(base, 1, count=2, suffix="-b")]

    code, row, report = one_a10_pool(tmp_path, capsys, slices, count=1)
    assert row["verdict"] == "unsatisfiable"
    assert row["why"].endswith(
        "(not counted: pool gpu-1 on node gpu-1 is invalid: duplicate device name gpu-vfio-0;"
        " the allocator allocates no device of an invalid pool)"
    )
    assert report["devices"] == []
    (pool,) = report["pools"]
    assert (pool["state"], pool["why"], pool["slices"]) == ("invalid", "duplicate device name gpu-vfio-0", 2)
    assert code == 1


def test_the_table_names_a_pool_the_allocator_cannot_use_whole(tmp_path, capsys):
    template, vm, device_class = generated("vm-a10", [("2236", 1)])
    base = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})
    fake = cluster("v1", [pool_slice(base, 3, count=2)], [device_class], [template], [vm])
    try:
        code = main(["audit", "--dra", "--kubeconfig", str(fake.kubeconfig(tmp_path))])
    finally:
        fake.stop()
    out = capsys.readouterr().out
    assert code == 0
    assert "\npool gpu-1 (node gpu-1): incomplete: 1 of the 2 ResourceSlices of generation 3\n" in out


def test_an_incomplete_pool_counts_to_a_count_but_not_for_all(tmp_path, capsys):
    # Generation 2 of gpu-1's pool is to be 2 slices; one is published. The
    # allocator allocates from what there is to an exact count, but refuses
    # a request for All devices while a pool of the node is incomplete.
    def slices(base):
        return [pool_slice(base, 2, count=2)]

    code, row, report = one_a10_pool(tmp_path, capsys, slices, count=1)
    assert (code, row["verdict"]) == (0, "satisfiable")
    (pool,) = report["pools"]
    assert (pool["state"], pool["why"]) == ("incomplete", "1 of the 2 ResourceSlices of generation 2")
    (tmp_path / "all").mkdir()
    code, row, _ = one_a10_pool(tmp_path / "all", capsys, slices, mode="All")
    assert (code, row["verdict"]) == (1, "unsatisfiable")
    assert row["why"] == (
        "a request for All devices, which the allocator refuses on a node with a pool it cannot use whole: "
        "gpu-1: pool gpu-1 is incomplete: 1 of the 2 ResourceSlices of generation 2"
    )


# -- the search for distinct devices, bounded (issue 36) ---------------------------------


def test_many_devices_asked_for_are_one_verdict(tmp_path, capsys):
    # Two requests of 1,200 A10s each, 1,300 published: once a traceback
    # (a RecursionError, one level per device asked for); the allocator
    # refuses a claim of more than 32 devices.
    template, vm, device_class = generated("vm-a10", [("2236", 2)])
    for request in template["spec"]["spec"]["devices"]["requests"]:
        request["exactly"]["count"] = 1200
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})
    (entry,) = node["spec"]["devices"]
    node["spec"]["devices"] = [entry | {"name": f"gpu-vfio-{i}"} for i in range(1300)]
    fake = cluster("v1", [node], [device_class], [template], [vm])
    code, report, err = audit_once(fake, tmp_path, capsys)
    assert err == ""
    assert [(r["request"], r["verdict"]) for r in report["requests"]] == [
        ("gpu1", "unsatisfiable"),
        ("gpu2", "unsatisfiable"),
    ]
    assert report["requests"][0]["why"] == (
        "the claim asks for at least 2400 devices; the allocator allocates at most 32 to a claim"
    )
    assert code == 1


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    st.lists(
        st.tuples(st.integers(0, 4), st.sets(st.integers(0, 6), max_size=7)),
        min_size=1,
        max_size=4,
    )
)
def test_fits_distinct_is_halls_condition(demands):
    # Hall's theorem (each device serving one demand, a demand of count c as
    # c slots): they all fit exactly when every set of demands together
    # selects at least as many devices as they need.
    halls = all(
        sum(demands[i][0] for i in chosen) <= len(set().union(*(demands[i][1] for i in chosen)))
        for size in range(1, len(demands) + 1)
        for chosen in itertools.combinations(range(len(demands)), size)
    )
    assert fits_distinct([(count, sorted(devices)) for count, devices in demands]) is halls


def test_fits_distinct_is_iterative_whatever_the_counts():
    devices = [("gpu-1", f"gpu-vfio-{i}") for i in range(1300)]
    assert fits_distinct([(1200, devices), (1200, devices)]) is False
    assert fits_distinct([(650, devices), (650, devices)]) is True
    # A chain: demand i takes device i or i + 1; the last demand's only
    # device is the first's second choice, so each path is long.
    chain = [(1, [i, i + 1]) for i in range(2000)] + [(1, [1])]
    assert fits_distinct(chain) is True
    assert fits_distinct([*chain, (1, [2000])]) is False  # 2002 demands, 2001 devices


def test_fits_distinct_is_bounded():
    chain = [(1, [i, i + 1]) for i in range(300)] + [(1, [0])]
    with pytest.raises(CannotJudge, match="passes pciname's bound of"):
        fits_distinct(chain, steps=100)
    calls = []

    def deadline():
        calls.append(1)
        if len(calls) > 3:
            raise PcinameError("audit --dra: not done within --timeout (1 seconds)")

    with pytest.raises(PcinameError, match="not done within"):
        fits_distinct(chain, check=deadline)


def test_the_deadline_is_checked_while_judging(tmp_path, capsys, monkeypatch):
    # The command's deadline (--timeout) reaches the judging: once it has
    # passed, one line and exit 2, however far the audit got.
    from pciname.capabilities.audit import Deadline

    def passed(self):
        raise PcinameError(f"{self.command}: not done within --timeout ({self.timeout:g} seconds)")

    monkeypatch.setattr(Deadline, "check", passed)
    a10 = generated("vm-a10", [("2236", 1)])
    fake = cluster("v1", [slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})], [a10[2]], [a10[0]], [a10[1]])
    code, report, err = audit_once(fake, tmp_path, capsys)
    assert (code, report) == (2, None)
    assert err.startswith("pciname: error: audit --dra: not done within --timeout (") and err.count("\n") == 1


def test_a_request_for_all_devices_needs_every_one_free(tmp_path, capsys):
    # allocationMode All: the allocator takes every device the selectors
    # select on the node, and fails when one is another claim's.
    template, vm, device_class = generated("vm-a10", [("2236", 1)])
    exactly = template["spec"]["spec"]["devices"]["requests"][0]["exactly"]
    exactly["allocationMode"] = "All"
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236", "0000:af:00.0": "2236"})
    held = held_claim("other", "other", "gpu-1", "gpu-vfio-1")
    fake = cluster("v1", [node], [device_class], [template], [vm], [held])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    (row,) = report["requests"]
    assert (row["verdict"], row["why"]) == (
        "unsatisfiable",
        "a request for All devices, which the allocator refuses on a node where one is another claim's: "
        "gpu-1: gpu-vfio-1 (ResourceClaim vms/virt-launcher-other-x7k2p-other-m4k28)",
    )
    assert code == 1


def test_vms_made_alike_are_judged_once(tmp_path, monkeypatch):
    # 30 VMs with the same claim: the selectors run once on each device,
    # not once per VM (the cost grows with the devices and the distinct
    # selectors, not with the VMs times the devices).
    from pciname.dra import audit as dra_audit

    calls = []
    real = dra_audit.evaluate
    monkeypatch.setattr(dra_audit, "evaluate", lambda e, d: calls.append(e) or real(e, d))
    made = [generated(f"vm-{i}", [("2236", 1)]) for i in range(30)]
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236", "0000:af:00.0": "2236"})
    objects = {
        "resourceslices": [node],
        "deviceclasses": [made[0][2]],
        "resourceclaimtemplates": [m[0] for m in made],
        "resourceclaims": [],
    }
    report = dra_audit.audit_dra("v1", objects, [m[1] for m in made])
    assert {r["verdict"] for r in report["requests"]} == {"satisfiable"} and len(report["requests"]) == 30
    expressions = len(set(calls))
    assert len(calls) <= 2 * expressions  # each expression on each of the 2 devices, at most


def test_held_claims_are_found_by_name_not_each_looked_at(tmp_path, monkeypatch):
    # 20 VMs, 20 claims holding devices: whether a claim is a VM's is
    # asked of the claims its name or pod-claim-name annotation finds, not
    # of every claim for every VM; the verdicts are as before.
    from pciname.dra import audit as dra_audit

    calls = []
    real = dra_audit._held_by
    monkeypatch.setattr(dra_audit, "_held_by", lambda *a: calls.append(a) or real(*a))
    made = [generated(f"vm-{i}", [("2236", 1)]) for i in range(20)]
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236", "0000:af:00.0": "2236"})
    node["spec"]["devices"] = [node["spec"]["devices"][0] | {"name": f"gpu-vfio-{i}"} for i in range(40)]
    claims = [held_claim(f"vm-{i}", f"vm-{i}", "gpu-1", f"gpu-vfio-{i}") for i in range(10)]
    claims += [held_claim("x", "x", "gpu-1", f"gpu-vfio-{i}", namespace="other") for i in range(10, 20)]
    objects = {
        "resourceslices": [node],
        "deviceclasses": [made[0][2]],
        "resourceclaimtemplates": [m[0] for m in made],
        "resourceclaims": claims,
    }
    report = dra_audit.audit_dra("v1", objects, [m[1] for m in made])
    rows = {r["vm"]: r for r in report["requests"]}
    assert rows["vms/vm-0"]["nodes"]["gpu-1"][0] == "gpu-vfio-0"  # its own claim's device is its
    assert "gpu-vfio-0" not in rows["vms/vm-1"]["nodes"]["gpu-1"]  # another VM's claim's is not
    assert rows["vms/vm-19"]["nodes"]["gpu-1"] == [f"gpu-vfio-{i}" for i in range(20, 40)]
    assert len(calls) == 10  # each of vm-0 .. vm-9 asks of its own claim, once


def test_a_node_refusing_all_is_not_where_the_claim_fits_together(tmp_path, capsys):
    # gpu1 asks for an A100, gpu2 for All A10s. gpu-1 has the A100 and two
    # A10s, one another claim's (so gpu-1 refuses gpu2); gpu-2 has an A10
    # and no A100: no node takes both requests.
    template, vm, device_class = generated("vm-x", [("20b5", 1), ("2236", 1)])
    template["spec"]["spec"]["devices"]["requests"][1]["exactly"]["allocationMode"] = "All"
    one = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "20b5", "0000:af:00.0": "2236", "0000:d8:00.0": "2236"})
    a10 = [e["name"] for e in one["spec"]["devices"] if e["attributes"]["deviceID"]["string"] == "0x2236"]
    two = slice_of(tmp_path, "gpu-2", {"0000:3b:00.0": "2236"})
    held = held_claim("other", "other", "gpu-1", a10[0])
    fake = cluster("v1", [one, two], [device_class], [template], [vm], [held])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    assert [(r["request"], r["verdict"]) for r in report["requests"]] == [
        ("gpu1", "unsatisfiable"),
        ("gpu2", "unsatisfiable"),
    ]
    assert code == 1


def test_a_subrequest_has_no_subrequests(tmp_path):
    # A DeviceSubRequest has no firstAvailable: one nested 600 deep (no API
    # server keeps it) is not followed (once a RecursionError, a level each).
    from pciname.dra.audit import audit_dra

    template, vm, device_class = generated("vm-x", [("2236", 1)])
    request = template["spec"]["spec"]["devices"]["requests"][0]
    inner = {"name": "leaf"} | request.pop("exactly")
    for i in range(600):
        inner = {"name": f"s{i}", "firstAvailable": [inner]}
    request["firstAvailable"] = inner["firstAvailable"]
    objects = {
        "resourceslices": [slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})],
        "deviceclasses": [device_class],
        "resourceclaimtemplates": [template],
        "resourceclaims": [],
    }
    (row,) = audit_dra("v1", objects, [vm])["requests"]
    assert (row["verdict"], row["why"]) == (
        "no-device-class",
        "no subrequest can be allocated: subrequest s598: the cluster has no DeviceClass None",
    )


def test_a_long_expression_is_quoted_in_part(tmp_path, capsys):
    # A selector of 1 MB pciname does not evaluate: the why quotes its start
    # and says how long it is, not the whole megabyte on every line.
    template, vm, device_class = generated("vm-a10", [("2236", 1)])
    expression = "device.attributes['gpu.nvidia.com'].deviceID != '0x2237' || " * 17000 + "true"
    template["spec"]["spec"]["devices"]["requests"][0]["exactly"]["selectors"] = [{"cel": {"expression": expression}}]
    fake = cluster("v1", [slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})], [device_class], [template], [vm])
    code, report, _ = audit_once(fake, tmp_path, capsys)
    (row,) = report["requests"]
    assert row["verdict"] == "cannot-judge"
    assert row["why"].startswith(
        "pciname evaluates only conjunctions of attribute equalities, not \"device.attributes['gpu.nvidia.com']"
    )
    assert row["why"].endswith(f"... ({len(expression)} characters)") and len(row["why"]) < 400
    assert code == 0


def test_a_why_lists_twenty_and_counts_the_rest(tmp_path, capsys):
    # 30 A10s on one node, each another claim's: the why names 20 and says
    # how many more (once every one, on every row and finding); the report's
    # fields hold them all.
    template, vm, device_class = generated("vm-a10", [("2236", 1)])
    node = slice_of(tmp_path, "gpu-1", {"0000:3b:00.0": "2236"})
    (entry,) = node["spec"]["devices"]
    node["spec"]["devices"] = [entry | {"name": f"gpu-vfio-{i}"} for i in range(30)]
    claims = [held_claim(f"o{i}", f"o{i}", "gpu-1", f"gpu-vfio-{i}") for i in range(30)]
    fake = cluster("v1", [node], [device_class], [template], [vm], claims)
    code, report, _ = audit_once(fake, tmp_path, capsys)
    (row,) = report["requests"]
    assert row["verdict"] == "unsatisfiable" and len(row["allocated_elsewhere"]) == 30
    assert row["why"].count("(ResourceClaim vms/") == 20
    assert row["why"].endswith(
        "gpu-1: gpu-vfio-19 (ResourceClaim vms/virt-launcher-o19-x7k2p-o19-m4k28); ... (10 more)"
    )
    assert code == 1
