"""Which kind of resource a name on a Node or in a manifest is (one rule set
for the audit, the linter and the generators).

Only ``nvidia.com/`` names are NVIDIA's (anything else belongs to another
device plugin). Of those, ``nvidia.com/gpu``, ``nvidia.com/gpu.shared`` and
``nvidia.com/mig-*`` are the *container* device plugin's; a name part with a
``-`` is a vGPU (mdev) type's, since PCI names never have one (both name
filters drop it); the rest are PCI passthrough names. How a vGPU type becomes
its name, and what kubelet makes of a name, are
:mod:`pciname.naming.checks`.
"""

from __future__ import annotations

from pciname.naming import checks
from pciname.naming.checks import NameWarning

#: ``nvidia.com/``: the names of NVIDIA's device plugins begin with it.
PREFIX = checks.RESOURCE_DOMAIN + "/"

#: nvidia.com resources of NVIDIA's *container* device plugin, not KubeVirt's.
CONTAINER_RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu.shared")
CONTAINER_PREFIXES = ("nvidia.com/mig-",)

#: The kinds :func:`resource_kind` tells apart.
PCI = "pci"
MDEV = "mdev"
CONTAINER = "container"
OTHER = "other"


def is_nvidia(name: str) -> bool:
    """Whether ``name`` is in the ``nvidia.com/`` domain."""
    return name.startswith(PREFIX)


def is_mdev_name(name: str) -> bool:
    """An ``nvidia.com/`` name shaped as a vGPU type's: its name part has a
    ``-`` (PCI names never do)."""
    return is_nvidia(name) and "-" in name[len(PREFIX) :]


def resource_kind(name: str) -> str:
    """``container`` (nvidia.com/gpu, nvidia.com/mig-*), ``mdev`` (has a '-',
    which pci names never have), ``pci`` or ``other`` (not nvidia.com)."""
    if not is_nvidia(name):
        return OTHER
    if name in CONTAINER_RESOURCES or name.startswith(CONTAINER_PREFIXES):
        return CONTAINER
    return MDEV if is_mdev_name(name) else PCI


def resource_warnings(resource: str) -> list[NameWarning]:
    """kubelet validity and socket length of an ``nvidia.com/`` resource
    (nothing for other domains: their plugins are not NVIDIA's)."""
    if not is_nvidia(resource):
        return []
    return checks.name_warnings(resource[len(PREFIX) :])
