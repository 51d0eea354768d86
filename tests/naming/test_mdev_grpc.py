"""vGPU names per plugin release over gRPC: PermittedHostDevices and Lint go
through kube.generate and kube.lint, so v1.0.x keeps the second field of a
vGPU type (and panics without one) and v1.1.x on turns white space into '_'."""

from __future__ import annotations

import yaml

from pciname.server._proto import pciname_pb2 as pb
from tests.fake_kube import kubevirt

# ``stub``: conftest's, on a server with the packaged snapshots (2019-08-14
# among them).


def test_permitted_host_devices_by_release(stub):
    request = pb.PermittedHostDevicesRequest(mdev_types=["GRID T4-1Q", "T4", "GRID  A10-2Q"], profile="v1.0.1")
    old = stub.PermittedHostDevices(request, timeout=20)
    assert [(m.mdev_name_selector, m.resource_name) for m in old.mediated_devices] == [
        ("GRID T4-1Q", "nvidia.com/T4-1Q")
    ]
    assert [
        (e.item, e.resource_name if e.HasField("resource_name") else None, [w.code for w in e.reasons])
        for e in old.left_out
    ] == [
        ("T4", None, ["plugin-crash"]),
        ("GRID  A10-2Q", "nvidia.com/", ["invalid-resource-name"]),
    ]
    request = pb.PermittedHostDevicesRequest(mdev_types=["GRID T4-1Q", "T4", "GRID  A10-2Q"], profile="v1.6.0")
    new = stub.PermittedHostDevices(request, timeout=20)
    assert [m.resource_name for m in new.mediated_devices] == [
        "nvidia.com/GRID_T4-1Q",
        "nvidia.com/T4",
        "nvidia.com/GRID_A10-2Q",
    ]
    assert list(new.left_out) == []


def test_lint_by_release(stub):
    entries = [
        {"mdevNameSelector": "GRID T4-1Q", "resourceName": "nvidia.com/GRID_T4-1Q", "externalResourceProvider": True},
        {"mdevNameSelector": "T4", "resourceName": "nvidia.com/T4", "externalResourceProvider": True},
    ]
    text = yaml.safe_dump(kubevirt({"mediatedDevices": entries}))
    for profile, expected in (
        ("v1.0.1", [("wrong-mdev-resource-name", "nvidia.com/T4-1Q"), ("plugin-crash", None)]),
        ("v1.6.0", []),
    ):
        request = pb.LintRequest(files=[pb.LintFile(name="kv.yaml", text=text)], profile=profile)
        found = stub.Lint(request, timeout=20).findings
        got = [(f.code, f.expected.string_value if f.HasField("expected") else None) for f in found]
        assert got == expected, profile
