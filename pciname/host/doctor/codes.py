"""The host doctor's diagnosis codes and what each means, one line each
(:mod:`pciname.host.diagnoses` puts them in its one registry, ``CODES``;
README.md's table of scan diagnoses lists them). Imports nothing of
pciname: the registry imports this module.

Sources (each read from the code at the commit named):

* NVIDIA/k8s-driver-manager v0.9.1 (be979ef08699fac8a83f2ffb85fa1ff3d606ba20),
  ``cmd/driver-manager/main.go``: ``uninstallDriver`` first asks
  ``isHostDriver`` (``chroot /host nvidia-smi --query-gpu=driver_version
  --format=csv,noheader``; any output), then labels the node
  ``nvidia.com/gpu.deploy.driver=pre-installed``, sleeps 60 s and fails with
  "driver is pre-installed on host"; ``isNouveauLoaded`` is
  ``/sys/module/nouveau/refcnt`` and ``unloadNouveau`` a ``delete_module``
  that fails while nouveau is in use. v0.8.1 (bbce97e5d6dc) ``driver-manager``
  (shell): the same, with ``/host/usr/bin/nvidia-smi`` checked first.
* NVIDIA/gpu-operator v25.10.1 (846018752b8a34d4039feb6f18629b4c64210e32):
  ``assets/state-vfio-manager/0600_daemonset.yaml`` and
  ``assets/state-vgpu-manager/0500_daemonset.yaml`` run that
  ``driver-manager uninstall_driver`` as their first init container, so a
  failing one keeps ``vfio-manage.sh bind --all``
  (``assets/state-vfio-manager/0400_configmap.yaml``: unbinds a GPU from any
  other driver, nouveau and nvidia alike, and binds vfio-pci) from ever running.
"""

from __future__ import annotations

HOST_DRIVER_PREINSTALLED = "host-driver-preinstalled"
NOUVEAU_BOUND = "nouveau-bound"
IOMMU_OFF = "iommu-off"
VFIO_NOT_LOADED = "vfio-not-loaded"
CONTAINER_NEEDS_HOST_DRIVER = "container-needs-host-driver"
VGPU_MANAGER_MISSING = "vgpu-manager-missing"
OPEN_MODULES_REQUIRED = "open-modules-required"
PREINSTALLED_LABEL = "preinstalled-label"
VARIANT_LABEL_MISMATCH = "variant-label-mismatch"

#: code -> (severity, meaning), in README.md's order.
DOCTOR_CODES: dict[str, tuple[str, str]] = {
    HOST_DRIVER_PREINSTALLED: (
        "error",
        "doctor, passthrough: a host NVIDIA driver answers nvidia-smi: k8s-driver-manager labels the node "
        "nvidia.com/gpu.deploy.driver=pre-installed and fails, so vfio-manager never binds vfio-pci",
    ),
    NOUVEAU_BOUND: (
        "error",
        "doctor: nouveau is loaded or drives a GPU: k8s-driver-manager's unload fails while it is in use, and "
        "the GPU serves no variant until nouveau is blacklisted",
    ),
    IOMMU_OFF: (
        "error",
        "doctor, passthrough: no IOMMU groups: the kernel command line lacks what this CPU vendor needs, or the "
        "firmware has the IOMMU off",
    ),
    VFIO_NOT_LOADED: (
        "error",
        "doctor, passthrough: vfio-pci or vfio_iommu_type1 is neither loaded nor built in",
    ),
    CONTAINER_NEEDS_HOST_DRIVER: (
        "error",
        "doctor, container: no working host NVIDIA driver (Cozystack's container variant deploys none), or a "
        "GPU on vfio-pci",
    ),
    VGPU_MANAGER_MISSING: (
        "error",
        "doctor, vgpu: no vGPU manager module (nvidia_vgpu_vfio), or a GPU that offers no vGPU type (no mdev "
        "types, no SR-IOV virtual functions)",
    ),
    OPEN_MODULES_REQUIRED: (
        "error",
        "doctor: a GPU that needs NVIDIA's open kernel modules on the proprietary ones (inferred, with the "
        "evidence): the driver finds no devices",
    ),
    PREINSTALLED_LABEL: (
        "error",
        "doctor, fleet: a node labelled nvidia.com/gpu.deploy.driver=pre-installed whose workload is vm-passthrough "
        "or vm-vgpu: k8s-driver-manager found a host driver there",
    ),
    VARIANT_LABEL_MISMATCH: (
        "error",
        "doctor, fleet: the GPU Operator's labels put the node in a variant the node cannot serve as it is, while "
        "it could serve another",
    ),
}


def reason(code: str) -> str:
    """An Event's reason for ``code``: UpperCamelCase (``host-driver-preinstalled`` -> ``HostDriverPreinstalled``)."""
    return "".join(part.capitalize() for part in code.split("-"))
