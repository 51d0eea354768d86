"""The host doctor's judgement: what each variant needs of the node
(:func:`examine`), each finding with its way back (the exact steps, and
for Cozystack the values to set), and, without a variant, the variants the
node could serve as it is.

The variants are Cozystack's (``packages/core/platform/sources/gpu-operator.yaml``
at v1.6.2, bfde94fd26d35c5f0281a1285f194e7ca3041b6a: ``default``, ``vgpu``,
``container``), each a values file of the GPU Operator chart
(``packages/system/gpu-operator/values-passthrough.yaml``: sandboxWorkloads on,
``defaultWorkload: vm-passthrough``, driver off; ``values-vgpu.yaml``:
``vm-vgpu``, the vGPU manager on; ``values-container.yaml``: sandboxWorkloads
off, driver off, so the host's own driver serves). The platform's iaas
bundle (``packages/core/platform/templates/bundles/iaas.yaml``) takes
``bundles.iaas.gpuOperatorVariant`` and refuses any value but ``default``
and ``vgpu``; ``container`` is the Package CR's ``spec.variant``
(``api/v1alpha1/package_types.go``). The GPU Operator v25.10.1
(``controllers/state_manager.go``) reads ``nvidia.com/gpu.workload.config``
per node (:data:`WORKLOADS`); without sandbox workloads every node is
``container``.

The IOMMU: torvalds/linux 00939bebe51c23d325c9796ad57ace49833a5813
``drivers/iommu/intel/iommu.c``: ``dmar_disabled =
!IS_ENABLED(CONFIG_INTEL_IOMMU_DEFAULT_ON)``, and ``intel_iommu_setup`` takes
``intel_iommu=`` options separated by commas, each matched by its start
(``on``, ``off``, the later winning), so an Intel kernel built without the
default needs ``intel_iommu=on``. AMD: torvalds/linux
00a7dd64888d6dd72110b40e2824a088cf7b7386 ``drivers/iommu/amd/init.c``:
``amd_iommu_disabled`` starts false and ``parse_amd_iommu_options``
(``__setup("amd_iommu=")``) sets it for an option starting ``off`` among the
commas (``amd_iommu=pgtbl_v2,off``), so AMD's IOMMU is on unless that or
the firmware (no IVRS table: ``amd_iommu_detect``) turns it off.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from pciname.host.diagnoses import ERROR, Diagnosis
from pciname.host.doctor.codes import (
    CONTAINER_NEEDS_HOST_DRIVER,
    HOST_DRIVER_PREINSTALLED,
    IOMMU_OFF,
    NOUVEAU_BOUND,
    OPEN_MODULES_REQUIRED,
    VFIO_NOT_LOADED,
    VGPU_MANAGER_MISSING,
)
from pciname.host.doctor.facts import NOUVEAU, NVIDIA, VFIO_PCI, VFIO_TYPE1, VGPU_VFIO, HostFacts

DEFAULT, VGPU, CONTAINER = "default", "vgpu", "container"
VARIANTS = (DEFAULT, VGPU, CONTAINER)
#: Cozystack's variant -> the GPU Operator's nvidia.com/gpu.workload.config.
WORKLOADS = {DEFAULT: "vm-passthrough", VGPU: "vm-vgpu", CONTAINER: "container"}
#: The values that choose each variant in Cozystack (v1.5.0 to v1.6.2).
COZYSTACK_VALUES = {
    DEFAULT: {"bundles.iaas.gpuOperatorVariant": "default"},
    VGPU: {"bundles.iaas.gpuOperatorVariant": "vgpu"},
    CONTAINER: {"Package cozystack.gpu-operator spec.variant": "container"},
}
#: GPUs that need the open kernel modules, by device id, with the evidence
#: (inferred: no NVIDIA file says "requires open"; see the module docstring).
OPEN_ONLY: dict[str, str] = {
    "10de:2bb5": "RTX PRO 6000 Blackwell Server Edition: Blackwell; cozystack/cozystack#3563, on the proprietary "
    "modules nvidia-smi says 'No devices found' and nothing logs an error",
}
_BLACKLIST = (
    "blacklist nouveau in /etc/modprobe.d (`blacklist nouveau`, `options nouveau modeset=0`), rebuild the "
    "initramfs (update-initramfs -u, dracut -f) and reboot; on Talos, the machine config's kernel modules"
)


@dataclass(frozen=True)
class Finding:
    """One diagnosis with the way back: ``steps`` in order, and for
    Cozystack the ``values`` to set (empty: none)."""

    diagnosis: Diagnosis
    steps: tuple[str, ...]
    values: dict[str, str]

    def to_dict(self) -> dict[str, Any]:
        return {**self.diagnosis.to_dict(), "way_back": list(self.steps), "cozystack": dict(self.values)}


@dataclass(frozen=True)
class Checkup:
    """The doctor's answer for one node: the variant asked about (None:
    all), its findings, and the variants the node could serve as it is."""

    root: str
    variant: str | None
    findings: tuple[Finding, ...]
    servable: tuple[str, ...]
    facts: HostFacts

    @property
    def modules_read(self) -> bool:
        """Whether the root shows the loaded modules (``sys/module``, ``proc/modules``): without them the
        doctor cannot tell a variant's needs, and plain ``scan`` says nothing of the variants."""
        return bool(self.facts.loaded or self.facts.builtin)

    @property
    def workload(self) -> str | None:
        """The GPU Operator's ``nvidia.com/gpu.workload.config`` of the variant asked about."""
        return WORKLOADS.get(self.variant or "")

    def to_dict(self) -> dict[str, Any]:
        f = self.facts
        return {
            "root": self.root,
            "variant": self.variant,
            "workload": self.workload,
            "servable": list(self.servable),
            "findings": [x.to_dict() for x in self.findings],
            "host": {
                "gpus": [{"address": g.address, "device": g.device, "driver": g.driver} for g in f.gpus],
                "iommu_groups": f.iommu_groups,
                "modules": sorted(m for m in (NVIDIA, NOUVEAU, VFIO_PCI, VFIO_TYPE1, VGPU_VFIO) if f.has(m)),
                "cpu_vendor": f.cpu_vendor,
                "nvidia_version": f.nvidia_version,
            },
        }


def _finding(
    code: str, subject: str, message: str, steps: tuple[str, ...], values: dict[str, str] | None = None
) -> Finding:
    return Finding(Diagnosis.of(code, subject, message), steps, dict(values or {}))


# -- what every variant needs ---------------------------------------------------------------


def _nouveau(h: HostFacts, variant: str) -> Iterator[Finding]:
    on = [g.address for g in h.gpus if g.driver == NOUVEAU]
    if not on and NOUVEAU not in h.loaded:
        return
    where = f"GPU {', '.join(on)} on nouveau" if on else "nouveau is loaded"
    does = (
        "k8s-driver-manager's uninstall_driver unloads it (delete_module), which fails while it drives a GPU or "
        "the console, and the init container fails"
    )
    yield _finding(NOUVEAU_BOUND, on[0] if on else "node", f"{where}: {does}", (_BLACKLIST,), None)


def _open_modules(h: HostFacts, variant: str) -> Iterator[Finding]:
    if h.open_modules is not False or variant == DEFAULT:
        return
    for g in h.gpus:
        evidence = OPEN_ONLY.get(g.device or "")
        if evidence is not None:
            yield _finding(
                OPEN_MODULES_REQUIRED,
                g.address,
                f"{g.device} on the proprietary nvidia module ({h.nvidia_version}): inferred, {evidence}",
                (
                    "install the open kernel modules of the same driver release (nvidia-open, or the .run's "
                    "-m=kernel-open), reboot, and check that /proc/driver/nvidia/version says 'Open Kernel Module'",
                ),
            )


# -- default: passthrough -------------------------------------------------------------------


def _preinstalled(h: HostFacts) -> Iterator[Finding]:
    on = [g.address for g in h.gpus if g.driver == NVIDIA]
    if not (h.nvidia_smi and NVIDIA in h.loaded and on):
        return
    yield _finding(
        HOST_DRIVER_PREINSTALLED,
        on[0],
        f"the host's nvidia module drives {', '.join(on)} and usr/bin/nvidia-smi is there: k8s-driver-manager's "
        "isHostDriver gets a driver version, labels the node nvidia.com/gpu.deploy.driver=pre-installed and "
        "fails 'driver is pre-installed on host'; vfio-manager's init container fails, so vfio-manage never binds "
        "vfio-pci",
        (
            "keep the host driver from loading: blacklist nvidia, nvidia_drm, nvidia_modeset and nvidia_uvm in "
            "/etc/modprobe.d (or remove the driver package), rebuild the initramfs, reboot",
            "kubectl label node NODE nvidia.com/gpu.deploy.driver- (the pre-installed label stays otherwise)",
            "kubectl -n NAMESPACE delete pod -l app=nvidia-vfio-manager --field-selector spec.nodeName=NODE",
            "or, to keep the host driver, serve the container variant instead (Cozystack: the value below)",
        ),
        COZYSTACK_VALUES[CONTAINER],
    )


def _options(words: list[str], key: str) -> list[str]:
    """The comma-separated options of every ``key=`` word of the command line, in order (as the kernel's
    ``__setup`` handlers walk them: ``intel_iommu_setup``, ``parse_amd_iommu_options``, x86's
    ``iommu_setup``: torvalds/linux bcb71abe7d4c5a0d0368c67da0a7def4fc73497a arch/x86/kernel/pci-dma.c)."""
    return [o for w in words if w.startswith(key + "=") for o in w[len(key) + 1 :].split(",") if o]


def _iommu(h: HostFacts) -> Iterator[Finding]:
    if h.iommu_groups:
        return
    words = (h.cmdline or "").split()
    intel = [o.startswith("on") for o in _options(words, "intel_iommu") if o.startswith(("on", "off"))]
    amd_off = any(o.startswith("off") for o in _options(words, "amd_iommu"))
    # x86's iommu_setup (arch/x86/kernel/pci-dma.c): any option of iommu= starting "off" sets no_iommu
    x86_off = any(o.startswith("off") for o in _options(words, "iommu"))
    if h.cpu_vendor == "GenuineIntel" and intel[-1:] != [True]:
        need = "Intel: the command line lacks intel_iommu=on"
        step = "add intel_iommu=on iommu=pt to the kernel command line (GRUB_CMDLINE_LINUX), update the boot loader, reboot"
    elif amd_off or x86_off or intel[-1:] == [False]:
        need = "the command line turns it off"
        step = "remove amd_iommu=off / intel_iommu=off / iommu=off from the kernel command line, reboot"
    else:
        need = f"{h.cpu_vendor or 'this CPU'}: the command line asks for nothing more, so the firmware has it off"
        step = "turn on the IOMMU (VT-d, AMD-Vi/IOMMU, SVM) in the firmware setup, reboot"
    yield _finding(IOMMU_OFF, "node", f"no IOMMU groups under sys/kernel/iommu_groups; {need}", (step,))


def _vfio(h: HostFacts) -> Iterator[Finding]:
    missing = [m for m in (VFIO_PCI, VFIO_TYPE1) if not h.has(m)]
    if missing:
        yield _finding(
            VFIO_NOT_LOADED,
            "node",
            f"{' and '.join(missing)} neither loaded nor built in",
            (f"load them at boot: {' '.join(missing)} in /etc/modules-load.d/vfio.conf, then modprobe each",),
        )


def _passthrough(h: HostFacts) -> Iterator[Finding]:
    yield from _preinstalled(h)
    yield from _iommu(h)
    yield from _vfio(h)


# -- vgpu -----------------------------------------------------------------------------------


def _vgpu(h: HostFacts) -> Iterator[Finding]:
    values = COZYSTACK_VALUES[VGPU]
    if VGPU_VFIO not in h.loaded:
        yield _finding(
            VGPU_MANAGER_MISSING,
            "node",
            f"no {VGPU_VFIO} module: no vGPU manager is loaded",
            (
                "install NVIDIA's vGPU manager (the GPU Operator's vgpuManager image: Cozystack's "
                "vgpuManager.repository, image, version), reboot if a host driver was loaded",
            ),
            values,
        )
        return
    for g in h.gpus:
        if not g.vgpu_types:
            yield _finding(
                VGPU_MANAGER_MISSING,
                g.address,
                "offers no vGPU type: no mdev_supported_types, no SR-IOV VF with nvidia/creatable_vgpu_types",
                (
                    "Ampere and later: enable the virtual functions (/usr/lib/nvidia/sriov-manage -e ADDRESS); "
                    "before Ampere: check the GPU is supported by this vGPU release",
                ),
                values,
            )


# -- container ------------------------------------------------------------------------------


def _container(h: HostFacts) -> Iterator[Finding]:
    if NVIDIA not in h.loaded or h.nvidia_version is None:
        yield _finding(
            CONTAINER_NEEDS_HOST_DRIVER,
            "node",
            "no nvidia module or proc/driver/nvidia/version: Cozystack's container variant deploys no driver",
            ("install the NVIDIA driver on the host (or turn the GPU Operator's driver on), reboot",),
            COZYSTACK_VALUES[CONTAINER],
        )
    for g in h.gpus:
        if g.driver == "vfio-pci":
            yield _finding(
                CONTAINER_NEEDS_HOST_DRIVER,
                g.address,
                "on vfio-pci: the host driver does not see it",
                (
                    f"echo {g.address} > /sys/bus/pci/drivers/vfio-pci/unbind; echo > "
                    f"/sys/bus/pci/devices/{g.address}/driver_override; echo {g.address} > /sys/bus/pci/drivers_probe",
                ),
                COZYSTACK_VALUES[CONTAINER],
            )


_VARIANT_RULES: dict[str, Callable[[HostFacts], Iterator[Finding]]] = {
    DEFAULT: _passthrough,
    VGPU: _vgpu,
    CONTAINER: _container,
}


def findings(h: HostFacts, variant: str) -> list[Finding]:
    """What stands in ``variant``'s way on the node, every GPU's first."""
    found = [*_nouveau(h, variant), *_VARIANT_RULES[variant](h), *_open_modules(h, variant)]
    return found


def examine(h: HostFacts, variant: str | None = None) -> Checkup:
    """The doctor's answer: ``variant``'s findings (None: every variant's),
    and the variants with no error among theirs."""
    per = {v: findings(h, v) for v in VARIANTS}
    servable = tuple(v for v in VARIANTS if not any(f.diagnosis.severity == ERROR for f in per[v]))
    if variant is not None:
        shown = per[variant]
    else:
        seen: dict[tuple[str, str], Finding] = {}
        for v in VARIANTS:
            for f in per[v]:
                seen.setdefault((f.diagnosis.code, f.diagnosis.subject), f)
        shown = list(seen.values())
    return Checkup(h.root, variant, tuple(shown), servable, h)
