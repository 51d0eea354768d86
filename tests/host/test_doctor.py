"""The host doctor (pciname.host.doctor): for each variant, a healthy node
gives no finding and each broken case exactly its codes, each with the way
back; without a variant, the variants the node could serve. The trees hold
what each upstream reads (tests/host/doctor_nodes.py names the sources)."""

from __future__ import annotations

import pytest

from pciname.host.diagnoses import CODES
from pciname.host.doctor import codes
from pciname.host.doctor.facts import read_host
from pciname.host.doctor.rules import CONTAINER, DEFAULT, VARIANTS, VGPU, examine
from tests.host.doctor_nodes import (
    AMD,
    OPEN,
    PASSTHROUGH_LABELS,
    HostTree,
    container_node,
    doctor_codes_seen,
    passthrough_node,
    preinstalled_node,
    vgpu_node,
)


def codes_of(root, variant):
    checkup = examine(read_host(root), variant)
    for f in checkup.findings:
        assert f.steps and all(s.strip() for s in f.steps), f  # every finding has its way back
    return sorted((f.diagnosis.code, f.diagnosis.subject) for f in checkup.findings)


@pytest.mark.parametrize(
    ("build", "variant"), [(passthrough_node, DEFAULT), (vgpu_node, VGPU), (container_node, CONTAINER)]
)
def test_a_healthy_node_of_each_variant_shows_nothing(tmp_path, build, variant):
    build(tmp_path)
    assert codes_of(tmp_path, variant) == []
    assert variant in examine(read_host(tmp_path)).servable


def test_the_doctors_codes_are_in_the_one_registry():
    assert set(codes.DOCTOR_CODES) <= set(CODES)
    assert {c: tuple(CODES[c]) for c in codes.DOCTOR_CODES} == codes.DOCTOR_CODES


# -- default (passthrough) -------------------------------------------------------------------


def test_a_host_driver_on_a_passthrough_node_is_preinstalled(tmp_path):
    t = HostTree(tmp_path, cmdline="ro intel_iommu=on")
    t.vfio()
    t.nvidia_driver()
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="nvidia", iommu_group="12")
    assert codes_of(tmp_path, DEFAULT) == [(codes.HOST_DRIVER_PREINSTALLED, "0000:3b:00.0")]
    finding = examine(read_host(tmp_path), DEFAULT).findings[0]
    assert "pre-installed" in finding.diagnosis.message and "vfio-manage never binds" in finding.diagnosis.message
    assert any("nvidia.com/gpu.deploy.driver-" in s for s in finding.steps)
    assert finding.values == {"Package cozystack.gpu-operator spec.variant": "container"}


def test_without_nvidia_smi_the_driver_manager_sees_no_host_driver(tmp_path):
    # v0.8.1's _host_driver checks /host/usr/bin/nvidia-smi first: no binary, no label
    t = HostTree(tmp_path, cmdline="ro intel_iommu=on")
    t.vfio()
    t.nvidia_driver(smi=False)
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="nvidia", iommu_group="12")
    assert codes_of(tmp_path, DEFAULT) == []


def test_nouveau_on_the_gpu(tmp_path):
    t = passthrough_node(tmp_path)
    t.load("nouveau")
    t.add_function("0000:af:00.0", pci_class="0x030000\n", driver="nouveau", iommu_group="40")
    for variant in VARIANTS:
        assert (codes.NOUVEAU_BOUND, "0000:af:00.0") in codes_of(tmp_path, variant)
    finding = next(f for f in examine(read_host(tmp_path), DEFAULT).findings if f.diagnosis.code == codes.NOUVEAU_BOUND)
    assert "blacklist nouveau" in finding.steps[0]


def test_nouveau_loaded_alone(tmp_path):
    passthrough_node(tmp_path).load("nouveau")
    assert codes_of(tmp_path, DEFAULT) == [(codes.NOUVEAU_BOUND, "node")]


def test_iommu_off_on_intel_names_the_missing_argument(tmp_path):
    t = HostTree(tmp_path, cmdline="BOOT_IMAGE=/vmlinuz ro quiet")
    t.vfio()
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="vfio-pci", iommu_group=None)
    assert codes_of(tmp_path, DEFAULT) == [(codes.IOMMU_OFF, "node")]
    finding = examine(read_host(tmp_path), DEFAULT).findings[0]
    assert "intel_iommu=on" in finding.diagnosis.message and "intel_iommu=on" in finding.steps[0]


def test_iommu_off_on_amd_points_at_the_firmware(tmp_path):
    t = HostTree(tmp_path, cpuinfo=AMD, cmdline="ro quiet")
    t.vfio()
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="vfio-pci", iommu_group=None)
    finding = examine(read_host(tmp_path), DEFAULT).findings[0]
    assert finding.diagnosis.code == codes.IOMMU_OFF
    assert "AuthenticAMD" in finding.diagnosis.message and "firmware" in finding.steps[0]


def test_iommu_turned_off_on_the_command_line(tmp_path):
    t = HostTree(tmp_path, cpuinfo=AMD, cmdline="ro amd_iommu=off")
    t.vfio()
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="vfio-pci", iommu_group=None)
    assert "remove amd_iommu=off" in examine(read_host(tmp_path), DEFAULT).findings[0].steps[0]


@pytest.mark.parametrize(
    "cmdline", ["ro amd_iommu=off", "ro amd_iommu=pgtbl_v2,off", "ro amd_iommu=fullflush amd_iommu=off"]
)
def test_amd_iommu_off_among_the_options_is_the_command_line(tmp_path, cmdline):
    """torvalds/linux 00a7dd64888d6dd72110b40e2824a088cf7b7386 drivers/iommu/amd/init.c
    parse_amd_iommu_options: each comma-separated option; one starting "off" sets amd_iommu_disabled."""
    t = HostTree(tmp_path, cpuinfo=AMD, cmdline=cmdline)
    t.vfio()
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="vfio-pci", iommu_group=None)
    finding = examine(read_host(tmp_path), DEFAULT).findings[0]
    assert "the command line turns it off" in finding.diagnosis.message and "firmware" not in finding.steps[0]


@pytest.mark.parametrize("cmdline", ["ro iommu=pt,off", "ro iommu=off,pt", "ro iommu=soft iommu=offline"])
def test_iommu_off_among_the_x86_options_is_the_command_line(tmp_path, cmdline):
    """torvalds/linux bcb71abe7d4c5a0d0368c67da0a7def4fc73497a arch/x86/kernel/pci-dma.c
    iommu_setup: it walks the comma-separated options of every iommu= and one starting "off"
    (strncmp(p, "off", 3)) sets no_iommu, whatever comes before or after it."""
    t = HostTree(tmp_path, cpuinfo=AMD, cmdline=cmdline)
    t.vfio()
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="vfio-pci", iommu_group=None)
    finding = examine(read_host(tmp_path), DEFAULT).findings[0]
    assert "the command line turns it off" in finding.diagnosis.message and "firmware" not in finding.steps[0]


@pytest.mark.parametrize(("cmdline", "missing"), [
    ("ro intel_iommu=sm_on,on", False),  # on among the options: the firmware has it off
    ("ro intel_iommu=on,igfx_off", False),
    ("ro intel_iommu=on intel_iommu=off", True),  # the later wins
    ("ro intel_iommu=igfx_off", True),
])  # fmt: skip
def test_intel_iommu_on_among_the_options(tmp_path, cmdline, missing):
    """torvalds/linux 00939bebe51c23d325c9796ad57ace49833a5813 drivers/iommu/intel/iommu.c
    intel_iommu_setup: comma-separated options, each matched by its start; on and off set dmar_disabled."""
    t = HostTree(tmp_path, cmdline=cmdline)
    t.vfio()
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="vfio-pci", iommu_group=None)
    finding = examine(read_host(tmp_path), DEFAULT).findings[0]
    assert ("lacks intel_iommu=on" in finding.diagnosis.message) is missing
    assert ("firmware" in finding.steps[0]) is not missing


def test_vfio_modules_missing(tmp_path):
    t = HostTree(tmp_path, cmdline="ro intel_iommu=on")
    t.load("vfio_pci")
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver=None, iommu_group="12")
    assert codes_of(tmp_path, DEFAULT) == [(codes.VFIO_NOT_LOADED, "node")]
    assert "vfio_iommu_type1" in examine(read_host(tmp_path), DEFAULT).findings[0].diagnosis.message


def test_built_in_vfio_is_enough(tmp_path):
    t = HostTree(tmp_path, cmdline="ro intel_iommu=on")
    t.load("vfio_pci", "vfio_iommu_type1", builtin=True)
    t.add_function("0000:3b:00.0", pci_class="0x030200\n", driver="vfio-pci", iommu_group="12")
    assert codes_of(tmp_path, DEFAULT) == []


# -- vgpu -------------------------------------------------------------------------------------


def test_vgpu_without_the_manager(tmp_path):
    container_node(tmp_path)
    assert codes_of(tmp_path, VGPU) == [(codes.VGPU_MANAGER_MISSING, "node")]
    finding = examine(read_host(tmp_path), VGPU).findings[0]
    assert finding.values == {"bundles.iaas.gpuOperatorVariant": "vgpu"}


def test_vgpu_manager_but_no_virtual_functions(tmp_path):
    t = container_node(tmp_path, device="0x26b9\n")
    t.load("nvidia_vgpu_vfio")
    assert codes_of(tmp_path, VGPU) == [(codes.VGPU_MANAGER_MISSING, "0000:3b:00.0")]
    assert "sriov-manage" in examine(read_host(tmp_path), VGPU).findings[0].steps[0]


def test_vgpu_on_sriov_virtual_functions(tmp_path):
    t = container_node(tmp_path, device="0x26b9\n")
    t.load("nvidia_vgpu_vfio")
    t.add_vf("0000:3b:00.4", "0000:3b:00.0", "1155 : NVIDIA L40S-48Q\n")
    assert codes_of(tmp_path, VGPU) == []


# -- container --------------------------------------------------------------------------------


def test_container_without_a_host_driver(tmp_path):
    passthrough_node(tmp_path)
    assert codes_of(tmp_path, CONTAINER) == [
        (codes.CONTAINER_NEEDS_HOST_DRIVER, "0000:3b:00.0"),
        (codes.CONTAINER_NEEDS_HOST_DRIVER, "node"),
    ]
    by_subject = {f.diagnosis.subject: f for f in examine(read_host(tmp_path), CONTAINER).findings}
    assert "drivers_probe" in by_subject["0000:3b:00.0"].steps[0]
    assert by_subject["node"].values == {"Package cozystack.gpu-operator spec.variant": "container"}


def test_blackwell_on_the_proprietary_modules_needs_the_open_ones(tmp_path):
    container_node(tmp_path, device="0x2bb5\n")
    assert codes_of(tmp_path, CONTAINER) == [(codes.OPEN_MODULES_REQUIRED, "0000:3b:00.0")]
    message = examine(read_host(tmp_path), CONTAINER).findings[0].diagnosis.message
    assert "inferred" in message and "#3563" in message


def test_blackwell_on_the_open_modules_is_healthy(tmp_path):
    container_node(tmp_path, device="0x2bb5\n", version=OPEN)
    assert codes_of(tmp_path, CONTAINER) == []
    assert read_host(tmp_path).open_modules is True


# -- no variant: what the node could serve ------------------------------------------------------


def test_without_a_variant_the_node_says_what_it_could_serve(tmp_path):
    passthrough_node(tmp_path)
    assert examine(read_host(tmp_path)).servable == (DEFAULT,)
    container_node(tmp_path / "c")
    assert examine(read_host(tmp_path / "c")).servable == (CONTAINER,)


def test_the_cpu_vendor_is_read_from_the_head_of_a_large_cpuinfo(tmp_path):
    block = "processor\t: {}\nvendor_id\t: AuthenticAMD\nflags\t\t: " + "x" * 2000 + "\n\n"
    HostTree(tmp_path, cpuinfo="".join(block.format(i) for i in range(256)))  # over 64 KiB
    assert read_host(tmp_path).cpu_vendor == "AuthenticAMD"


# -- the capability: scan --variant ---------------------------------------------------------------


def test_the_request_refuses_a_variant_the_doctor_does_not_know():
    from pciname.capabilities.doctor import DoctorRequest
    from pciname.requests.spelling import RequestError, Spelling

    with pytest.raises(RequestError) as refused:
        DoctorRequest("/", "passthrough").validated()
    assert "'passthrough': not one of default, vgpu, container" in str(refused.value)
    assert refused.value.spelled(Spelling.RPC).startswith("variant ")


def test_the_registry_answers_scan_variant(tmp_path):
    from pciname.capabilities.doctor import DoctorRequest
    from pciname.capabilities.registry import ask

    passthrough_node(tmp_path)
    checkup = ask("scan --variant", DoctorRequest(str(tmp_path), DEFAULT).validated())
    assert checkup.findings == () and checkup.servable == (DEFAULT,)


# -- the fleet: labels against the node ------------------------------------------------------------


def test_a_preinstalled_label_on_a_passthrough_node(tmp_path):
    from pciname.host.doctor.fleet import node_line

    preinstalled_node(tmp_path)
    labels = {**PASSTHROUGH_LABELS, "nvidia.com/gpu.deploy.driver": "pre-installed"}
    line = node_line("gpu-1", labels, examine(read_host(tmp_path)))
    assert (line.workload, line.preinstalled) == ("vm-passthrough", True)
    assert [f.diagnosis.code for f in line.findings] == [
        codes.PREINSTALLED_LABEL,
        codes.VARIANT_LABEL_MISMATCH,  # as it is, the node serves container
        codes.HOST_DRIVER_PREINSTALLED,
    ]
    assert line.to_dict()["variant"] == DEFAULT


def test_labels_that_match_a_healthy_node_give_nothing(tmp_path):
    from pciname.host.doctor.fleet import node_line, workload_in_effect

    passthrough_node(tmp_path)
    assert node_line("gpu-1", PASSTHROUGH_LABELS, examine(read_host(tmp_path))).findings == ()
    # the deploy labels say what the operator did, whatever the workload label asks
    assert workload_in_effect({"nvidia.com/gpu.deploy.device-plugin": "true"}) == "container"
    assert workload_in_effect({"nvidia.com/gpu.workload.config": "vm-vgpu"}) == "vm-vgpu"
    assert workload_in_effect({}) is None


def test_the_broken_nodes_give_every_doctor_code(tmp_path):
    assert {code for code, _ in doctor_codes_seen(tmp_path)} == set(codes.DOCTOR_CODES)


# -- what the DaemonSet publishes -------------------------------------------------------------------


def test_a_gauge_per_code_and_node_scraped_as_prometheus_text(tmp_path):
    from prometheus_client import CollectorRegistry, Gauge, generate_latest
    from prometheus_client.parser import text_string_to_metric_families

    from pciname.host.doctor.publish import METRIC, gauges

    preinstalled_node(tmp_path)
    registry = CollectorRegistry()
    gauge = Gauge(METRIC, "doctor findings", ("node", "code", "severity"), registry=registry)
    for labels, value in gauges("gpu-1", examine(read_host(tmp_path), DEFAULT).findings):
        gauge.labels(**labels).set(value)
    (family,) = text_string_to_metric_families(generate_latest(registry).decode())
    values = {s.labels["code"]: s.value for s in family.samples}
    assert set(values) == set(codes.DOCTOR_CODES)  # 0 for the others: an alert clears when the node heals
    assert values[codes.HOST_DRIVER_PREINSTALLED] == 1.0
    assert sum(values.values()) == 1.0


def test_an_event_on_the_node_per_finding(tmp_path):
    from pciname.host.doctor.publish import events

    preinstalled_node(tmp_path)
    (event,) = events("gpu-1", examine(read_host(tmp_path), DEFAULT).findings, "2026-12-07T19:00:00Z")
    assert event["involvedObject"] == {"apiVersion": "v1", "kind": "Node", "name": "gpu-1", "uid": "gpu-1"}
    assert (event["reason"], event["type"]) == ("HostDriverPreinstalled", "Warning")
    assert "Way back: keep the host driver from loading" in event["message"]


def test_a_link_out_of_the_root_is_resolved_inside_it(tmp_path):
    # usr/bin -> /opt/bin means ROOT/opt/bin, as chroot /host nvidia-smi would see it
    t = preinstalled_node(tmp_path / "node")
    (t.root / "usr" / "bin" / "nvidia-smi").unlink()
    (t.root / "usr" / "bin").rmdir()
    (tmp_path / "opt" / "bin").mkdir(parents=True)
    (tmp_path / "opt" / "bin" / "nvidia-smi").write_text("outside the root\n")
    (t.root / "usr" / "bin").symlink_to("/opt/bin")
    assert read_host(t.root).nvidia_smi is False  # ROOT/opt/bin does not exist
    (t.root / "opt" / "bin").mkdir(parents=True)
    (t.root / "opt" / "bin" / "nvidia-smi").write_text("#!/bin/sh\n")
    assert read_host(t.root).nvidia_smi is True
