"""Names of NVIDIA's container device plugin (k8s-device-plugin:
``nvidia.com/gpu``, ``nvidia.com/gpu.shared``, ``nvidia.com/mig-*``) in VMs,
for lint (rule ``vm-container-names``, code ``container-name-in-vm``).

That plugin's Allocate gives a container the GPU's ``/dev/nvidia*`` devices
and a device-list variable, no PCI address (NVIDIA/k8s-device-plugin@1b826acc
v0.20.0 ``internal/plugin/server.go``: Allocate at line 306, the device list
at 482, the ``/dev/nvidia*`` nodes from 518; no ``PCI_RESOURCE`` anywhere in
the tree). KubeVirt admits such a VM; virt-launcher then looks a GPU's
devices up in the pod's ``PCI_RESOURCE_<NAME>`` and ``MDEV_PCI_RESOURCE_<NAME>``
variables (kubevirt/kubevirt@79d34c176216 v1.9.0
``pkg/virt-launcher/virtwrap/device/hostdevice/gpu/addresspool.go`` lines 31
and 37, the prefixes in ``staging/src/kubevirt.io/api/core/v1/types.go``
3672-3673), finds none and fails the VMI with the count check's error
(:func:`pciname.kubevirt.gates.gpu_mismatch`, per release). A VM's names and a
Cozystack node pool's ``gpus[].name`` (each a VM's ``gpus[]``) are checked;
the ``references`` rule leaves these names to this one.
"""

from __future__ import annotations

from pciname.kubevirt.gates import gpu_mismatch
from pciname.kubevirt.resources import CONTAINER, resource_kind
from pciname.kubevirt.selectors import known_release, releases
from pciname.lint.codes import CONTAINER_NAME_IN_VM, RuleName
from pciname.lint.document import RunState
from pciname.lint.nodes import scalar as _scalar
from pciname.lint.rules import Context, rule

MIG_PREFIX = "nvidia.com/mig-"


def _device_list(path: tuple[object, ...]) -> str:
    """``gpus`` or ``hostDevices``: the list a reference's path names."""
    return "hostDevices" if len(path) >= 3 and path[-3] == "hostDevices" else "gpus"


@rule(RuleName.VM_CONTAINER_NAMES)
def vm_container_names(ctx: Context, state: RunState) -> None:
    """Each VM or node-pool name of the container plugin: the VMI never starts."""
    release = known_release(ctx.kubevirt) if ctx.kubevirt else releases()[-1]
    failure = gpu_mismatch(release)
    for ref in state.sites.references:
        name = _scalar(ref.node)
        if name is None or resource_kind(name) != CONTAINER:
            continue
        ctx.check()
        device_list = _device_list(ref.path)
        quoted = failure if device_list == "gpus" else None
        state.findings.append(
            ctx.finding(
                ref.doc,
                ref.node,
                ref.path,
                CONTAINER_NAME_IN_VM,
                name=name,
                mig=name.startswith(MIG_PREFIX),
                device_list=device_list,
                release=release,
                failure=quoted.message if quoted else None,
                where=quoted.where if quoted else "",
            )
        )
