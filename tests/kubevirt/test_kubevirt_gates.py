"""The feature gates a VM's GPUs need per KubeVirt release
(pciname.kubevirt.gates): the shipped facts are what tools/kubevirt_extract.py
makes of the vendored upstream files (test_kubevirt_selectors runs it), and
each names the line of KubeVirt's code that says it."""

from __future__ import annotations

import pytest

from pciname.errors import PcinameError
from pciname.kubevirt.gates import gate
from pciname.kubevirt.selectors import releases
from tests.extract_util import Extracted

FAMILY = Extracted("kubevirt", "kubevirt_extract")
GPU_MESSAGE = "GPU feature gate is not enabled in kubevirt-config"
HOST_DEVICES_MESSAGE = "Host Devices feature gate is not enabled in kubevirt-config"


def _line(release: str, path: str, line: int) -> str:
    sidecar = FAMILY.sidecar()["repositories"]["kubevirt/kubevirt"]["tags"]
    blob = sidecar[release]["files"][path]
    return FAMILY.tarball()[f"blobs/{blob}"].decode().splitlines()[line - 1]


def test_each_gate_fact_names_the_line_of_kubevirts_code_that_says_it():
    for row in FAMILY.shipped()["releases"]:
        for name, fact in row["gates"].items():
            constant = fact["constant"]
            assert f'"{name}"' in _line(row["release"], constant["path"], constant["line"])
            if fact["admitter"] is not None:
                admitter = fact["admitter"]
                assert f'"{admitter["message"]}"' in _line(row["release"], admitter["path"], admitter["line"])
            if fact["state"] is not None:
                state = fact["state"]
                line = _line(row["release"], state["path"], state["line"])
                assert f"Name: {constant['identifier']}, State: {state['state']}" in line


def test_both_gates_are_required_until_v1_4_0_makes_gpu_ga_and_host_devices_stays_required():
    known = releases()
    assert known[0] == "v0.36.0" and known[-1] == "v1.9.0"
    gpu_ga = [r for r in known if not gate("GPU", r).required]
    assert gpu_ga == known[known.index("v1.4.0") :]
    assert all(gate("HostDevices", r).required for r in known)
    for release in ("v0.36.0", "v1.0.0", "v1.3.1"):
        assert gate("GPU", release).message == GPU_MESSAGE
        assert gate("HostDevices", release).message == HOST_DEVICES_MESSAGE
        assert gate("GPU", release).warning is None


def test_a_ga_gate_says_what_listing_it_warns_and_where():
    newest = gate("GPU")
    assert newest.release == "v1.9.0" and not newest.required and newest.message is None
    assert newest.warning is not None
    assert newest.warning.startswith('feature gate GPU is deprecated (feature state is "General Availability")')
    assert "pkg/virt-config/featuregate/inactive.go:200" in newest.where
    first = gate("GPU", "1.4.0")
    assert "pkg/virt-config/deprecation/feature-gates.go" in first.where
    host = gate("HostDevices", "v1.9.0")
    assert host.required and host.warning is None and "vmi-create-admitter.go:558" in host.where


def test_a_release_pciname_does_not_know_is_one_line():
    with pytest.raises(PcinameError, match="v0.36.0 to v1.9.0"):
        gate("GPU", "v0.35.0")


def test_the_later_failures_name_the_line_of_kubevirts_code_that_says_them():
    for row in FAMILY.shipped()["releases"]:
        for kind, fact in row["not_permitted"].items():
            if fact is not None:
                line = _line(row["release"], fact["path"], fact["line"])
                assert f'"{fact["message"]}"' in line and fact["message"].startswith(f"{kind} %s ")
        mismatch = row["gpu_mismatch"]
        if mismatch is not None:
            line = _line(row["release"], mismatch["path"], mismatch["line"])
            prefix = "failed to create GPU host-devices: "
            assert f'"{mismatch["message"].removeprefix(prefix)}:' in line
            if mismatch["prefix_line"] is not None:
                assert f'"{prefix}%v"' in _line(row["release"], mismatch["path"], mismatch["prefix_line"])


def test_where_each_release_checks_permitted_host_devices_and_fails_a_container_plugins_gpu():
    from pciname.kubevirt.gates import gpu_mismatch, not_permitted

    assert not_permitted("GPU", "v0.36.0") is None
    admitter = not_permitted("GPU", "v0.44.0")
    assert admitter is not None and "vmi-create-admitter.go" in admitter.where
    newest = not_permitted("HostDevice", "v1.9.0")
    assert newest is not None
    assert newest.message == "HostDevice %s is not permitted in permittedHostDevices configuration"
    assert "pkg/virt-controller/services/renderresources.go:523" in newest.where
    assert gpu_mismatch("v0.44.0") is None
    old = gpu_mismatch("v0.45.0")
    assert old is not None and old.message == "the number of GPU/s do not match the number of devices"
    new = gpu_mismatch()
    assert new is not None and new.release == "v1.9.0"
    assert new.message == (
        "failed to create GPU host-devices: the number of device plugin GPU/s do not match the number of devices"
    )
    assert new.where.endswith("pkg/virt-launcher/virtwrap/device/hostdevice/gpu/hostdev.go:93")
