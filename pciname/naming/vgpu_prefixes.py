"""What comes before the vGPU type in ``mdev_type/name``, per GPU family,
each with the observed string and its source (never a guess).

The driver names a vGPU type ``<prefix> <type>``: ``GRID T4-16Q``, ``NVIDIA
A10-24Q``, ``NVIDIA RTX Pro 6000 Blackwell DC-48C``. go-nvlib keeps only the
last token, so NVIDIA's own tools never need the prefix, and no NVIDIA
table states it. KubeVirt's ``mdevNameSelector`` and the plugin's resource
name need all of it. The strings observed so far go by GPU family (the
``GPU`` part of the type), not by driver branch: Turing and Volta types
read ``GRID`` on drivers 525 to 580, Ampere ``A100D`` reads ``GRID`` on 525,
the other Ampere, Ada and later families read ``NVIDIA``. Cozystack's
``gpu-vgpu-defaults.yaml`` calls the prefix driver-branch dependent; no
string found shows one family with two prefixes, so none is modelled.

Each fact is one family (optionally only some of its device ids, where a
family spans GPUs named differently) with the kind of its evidence:

* ``sysfs``: the file's content as read on a host (``cat .../name``,
  ``mdevctl types``, a test tree copied from a host);
* ``kubevirt-config``: a vendor's or distribution's KubeVirt / OpenShift
  documentation permitting the string (and, where stated, the node
  advertising the resource made from it);
* ``guest``: the name ``nvidia-smi`` shows inside a VM given that vGPU. It
  is the vGPU type's name, the same string, but seen from the guest: an
  inference, labelled as such;
* ``code``: a string in NVIDIA's source (a comment or test), not a host.

``certain`` facts (sysfs, kubevirt-config, from a located source) are what
``lint`` flags on; the rest are shown as inferred. A family without a fact has no known prefix:
the output says so and names :data:`READ_ON_HOST`.
"""

from __future__ import annotations

from dataclasses import dataclass

#: The commands that read the exact strings on a host.
READ_MDEV = "cat /sys/bus/pci/devices/*/mdev_supported_types/*/name"
READ_SRIOV = "cat /sys/bus/pci/devices/<VF>/nvidia/creatable_vgpu_types"
READ_ON_HOST = f"`{READ_MDEV}` (SR-IOV GPUs, Ada and later: `{READ_SRIOV}`), or `pciname scan`"

SYSFS = "sysfs"
KUBEVIRT_CONFIG = "kubevirt-config"
GUEST = "guest"
CODE = "code"
#: Evidence kinds that make a prefix certain enough to flag a selector on.
CERTAIN_KINDS = (SYSFS, KUBEVIRT_CONFIG)
EVIDENCE_KINDS = (SYSFS, KUBEVIRT_CONFIG, GUEST, CODE)


@dataclass(frozen=True, slots=True)
class PrefixFact:
    """``family`` types read ``<prefix> <type>`` (on ``devices`` only, when
    given), as ``observed``, per ``source`` (``kind`` of evidence; ``driver``
    branch when the source states it)."""

    family: str
    prefix: str
    observed: str
    kind: str
    source: str
    driver: str | None = None
    devices: tuple[str, ...] = ()
    #: False: public text found by full-text search whose repository or
    #: page was not recorded; shown, never relied on for a finding.
    located: bool = True

    @property
    def certain(self) -> bool:
        return self.kind in CERTAIN_KINDS and self.located


_HARVESTER = "harvester/pcidevices@bdd8025 pkg/util/gpuhelper/testdata/sys"
_GPU_OPERATOR_DOCS = "NVIDIA/cloud-native-docs gpu-operator/gpu-operator-kubevirt.rst (docs.nvidia.com/datacenter/cloud-native/gpu-operator/latest/gpu-operator-kubevirt.html)"

_UNLOCATED = "public text found by full-text search; repository not recorded"

FACTS: tuple[PrefixFact, ...] = (
    PrefixFact(
        "T4",
        "GRID",
        "GRID T4-1Q",
        KUBEVIRT_CONFIG,
        "kubevirt/kubevirt@d923fdb pkg/virt-handler/device-manager/device_controller.go removeSelectorSpaces "
        "(selector 'such as GRID T4-1Q'); KubeVirt user guide, host devices (mediatedDevices example)",
    ),
    PrefixFact(
        "T4",
        "GRID",
        "GRID T4-2Q",
        KUBEVIRT_CONFIG,
        "openshift/openshift-docs, OpenShift Virtualization mediated devices (HyperConverged mediatedDevices)",
    ),
    PrefixFact(
        "T4",
        "GRID",
        "GRID T4-8Q",
        KUBEVIRT_CONFIG,
        f"a KubeVirt vGPU how-to, HyperConverged mediatedDevices ({_UNLOCATED})",
        located=False,
    ),
    PrefixFact(
        "V100", "GRID", "GRID V100-8C", SYSFS, f"mdevctl types output, nvidia-300 ({_UNLOCATED})", located=False
    ),
    PrefixFact(
        "V100", "GRID", "GRID V100-8Q", CODE, "NVIDIA/go-nvlib@3c16156 pkg/nvmdev/nvmdev_test.go TestParseMdevTypeName"
    ),
    PrefixFact("V100D", "GRID", "GRID V100D-8C", GUEST, f"nvidia-smi in a guest ({_UNLOCATED})", located=False),
    PrefixFact(
        "V100DX", "GRID", "GRID V100DX-32C", GUEST, f"nvidia-smi in a guest ({_UNLOCATED})", driver="580", located=False
    ),
    PrefixFact(
        "A100D",
        "GRID",
        "GRID A100D-4C",
        SYSFS,
        "stackhpc/ansible-collection-linux roles/vgpu README (the host's mdev types nvidia-692..707, "
        "driver NVIDIA-GRID-Linux-KVM-525.85.07)",
        driver="525",
    ),
    PrefixFact("A10", "NVIDIA", "NVIDIA A10-24Q", KUBEVIRT_CONFIG, _GPU_OPERATOR_DOCS),
    PrefixFact(
        "A10",
        "NVIDIA",
        "NVIDIA A10-12Q",
        KUBEVIRT_CONFIG,
        f"{_GPU_OPERATOR_DOCS}; the node advertises nvidia.com/NVIDIA_A10-12Q",
    ),
    PrefixFact(
        "A2",
        "NVIDIA",
        "NVIDIA A2-4Q",
        SYSFS,
        f"{_HARVESTER}/class/mdev_bus/0000:08:01.7/mdev_supported_types/nvidia-746/name (device 0x25b6)",
        devices=("25b6",),
    ),
    PrefixFact(
        "A40",
        "NVIDIA",
        "NVIDIA A40-1B",
        SYSFS,
        f"cat .../mdev_supported_types/nvidia-555/name on a host ({_UNLOCATED})",
        located=False,
    ),
    PrefixFact(
        "A30", "NVIDIA", "NVIDIA A30-24C", GUEST, f"nvidia-smi in a guest ({_UNLOCATED})", driver="580", located=False
    ),
    PrefixFact("A16", "NVIDIA", "NVIDIA A16-2Q", GUEST, f"nvidia-smi in a guest ({_UNLOCATED})", located=False),
    PrefixFact(
        "L40S",
        "NVIDIA",
        "NVIDIA L40S-24Q",
        SYSFS,
        f"{_HARVESTER}/bus/pci/devices/0000:26:00.4/nvidia/creatable_vgpu_types (SR-IOV VF)",
    ),
    PrefixFact(
        "DC",
        "NVIDIA RTX Pro 6000 Blackwell",
        "NVIDIA RTX Pro 6000 Blackwell DC-48C",
        CODE,
        "NVIDIA/go-nvlib@3c16156 pkg/nvmdev/nvmdev.go parseMdevTypeName (doc comment)",
        devices=("2bb5",),
    ),
)


def facts_for(family: str, device: str | None = None) -> list[PrefixFact]:
    """The facts for ``family`` (on ``device``, a 4-digit id, when given)."""
    return [f for f in FACTS if f.family == family and (not f.devices or device is None or device in f.devices)]


def prefix_of(family: str, device: str | None = None) -> PrefixFact | None:
    """The best fact for ``family`` on ``device``: a certain one first. None
    when nothing is known (or, without ``device``, a device-bound fact)."""
    found = [f for f in facts_for(family, device) if device is not None or not f.devices]
    if not found:
        return None
    return sorted(found, key=lambda f: (not f.certain, not f.located, EVIDENCE_KINDS.index(f.kind)))[0]
