"""pciname: exact GPU resource names of NVIDIA's KubeVirt device plugin.

The plugin (the GPU Operator's sandbox device plugin) advertises each GPU
model under a name derived from the PCI IDs database; pciname derives the
same names, exactly as a given plugin or GPU Operator release does.

>>> import pciname
>>> pciname.resolve("10de:2236").resource_name
'nvidia.com/GA102GL_A10'
"""

from ._version import __version__
from .api import (
    DeviceId,
    DiffEntry,
    ProfileInfo,
    Resolution,
    Resolver,
    Warning,
    clear_caches,
    default_resolver,
    devices,
    custom_profile,
    diff,
    load,
    parse_device,
    profiles,
    resolve,
    resolve_many,
    reverse,
)
from .errors import (
    InvalidDeviceError,
    PciIdsError,
    PcinameError,
    SnapshotMissingError,
    UnknownAlgorithmError,
    UnknownProfileError,
)

__all__ = [
    "DeviceId",
    "DiffEntry",
    "InvalidDeviceError",
    "PciIdsError",
    "PcinameError",
    "ProfileInfo",
    "Resolution",
    "Resolver",
    "SnapshotMissingError",
    "UnknownAlgorithmError",
    "UnknownProfileError",
    "Warning",
    "__version__",
    "clear_caches",
    "custom_profile",
    "default_resolver",
    "devices",
    "diff",
    "load",
    "parse_device",
    "profiles",
    "resolve",
    "resolve_many",
    "reverse",
]
