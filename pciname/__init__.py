"""pciname: exact GPU resource names of NVIDIA's KubeVirt device plugin.

The plugin (the GPU Operator's sandbox device plugin) advertises each GPU
model under a name derived from the PCI IDs database; pciname derives the
same names, exactly as a given plugin or GPU Operator release does.

>>> import pciname
>>> pciname.resolve("10de:2236").resource_name
'nvidia.com/GA102GL_A10'

Beside the names, the library's face is the capabilities: every question
the command line and the gRPC service answer, as a request that validates
itself and the registry that answers it (:mod:`pciname.capabilities.registry`):

>>> from pciname import MdevNameRequest, ask
>>> ask("mdev-name", MdevNameRequest(("NVIDIA A10-24Q",)).validated(), "latest")[0]["resource_name"]
'nvidia.com/NVIDIA_A10-24Q'

The domain rooms behind them (kubevirt, lint, cozystack, ...) are not the
library's face. The names below are imported on first use (PEP 562), so that the
``pciname`` command loads only what the command it runs needs; and
:func:`resolve` answers a plain NVIDIA device id under a packaged profile
from the packaged answers (:mod:`pciname.resolution.answers`), with the very
Resolution the full path (:func:`pciname.api.resolve`) gives, before the
catalog, the resolver or cachetools are imported.
"""

from pciname._version import __version__
from pciname.resolution import answers as _answers

# Not typing.TYPE_CHECKING: importing typing costs `pciname lookup` several
# milliseconds (type checkers treat any TYPE_CHECKING name alike).
TYPE_CHECKING = False

_EXPORTS = {
    "DeviceId": "api",
    "DiffEntry": "api",
    "ProfileInfo": "api",
    "Resolution": "api",
    "Resolver": "api",
    "NameWarning": "api",
    "clear_caches": "api",
    "custom_profile": "api",
    "default_resolver": "api",
    "devices": "api",
    "diff": "api",
    "load": "api",
    "parse_device": "api",
    "profiles": "api",
    "resolve_many": "api",
    "reverse": "api",
    "with_aliases": "api",
    "InvalidDeviceError": "errors",
    "PciIdsError": "errors",
    "PciIdsSyntaxError": "errors",
    "PcinameError": "errors",
    "SnapshotCacheError": "errors",
    "SnapshotMissingError": "errors",
    "SnapshotVerifyError": "errors",
    "UnknownAlgorithmError": "errors",
    "UnknownProfileError": "errors",
    # the capabilities: the registry, its request types and the one error a request raises
    "CAPABILITIES": "capabilities.registry",
    "Capability": "capabilities.registry",
    "ask": "capabilities.registry",
    "capability": "capabilities.registry",
    "RequestError": "requests.spelling",
    "Spelling": "requests.spelling",
    "AdmissionPolicyRequest": "capabilities.admission",
    "ApplyRequest": "capabilities.apply",
    "AuditRequest": "capabilities.audit",
    "CheckRequest": "capabilities.pciids",
    "DescribeRequest": "capabilities.pciids",
    "DiffRequest": "capabilities.names",
    "DraClaimsRequest": "capabilities.dra_claims",
    "GpuOptionsRequest": "capabilities.audit",
    "ImageCheckRequest": "capabilities.image_check",
    "KataPodRequest": "capabilities.kata_pod",
    "LintRequest": "capabilities.lint",
    "LookupRequest": "capabilities.names",
    "MdevNameRequest": "capabilities.mdev_name",
    "NodePoolRequest": "capabilities.node_pool",
    "PermittedHostDevicesRequest": "capabilities.permitted",
    "ProfilesRequest": "capabilities.catalog",
    "ReverseRequest": "capabilities.names",
    "ScanRequest": "capabilities.scan",
    "SnapshotFetchRequest": "capabilities.catalog",
    "SnapshotImportRequest": "capabilities.catalog",
    "SnapshotPackRequest": "capabilities.catalog",
    "SnapshotsRequest": "capabilities.catalog",
    "VgpuTypesRequest": "capabilities.vgpu_types",
    "VmGpusRequest": "capabilities.vm_gpus",
}

__all__ = ["__version__", *sorted([*_EXPORTS, "resolve"])]

_remembered = _answers.memo.get  # the default resolver's memo


def resolve(device: str, profile: "ProfileLike" = _answers.DEFAULT_PROFILE) -> "Resolution":
    """The resource name and everything around it for one device.

    ``profile`` is a profile name (``latest``, ``preview``,
    ``kubevirt-gpu-device-plugin@v1.2.2``, ``gpu-operator@v24.9.0``) or a
    :class:`~pciname.naming.profiles.Profile` (e.g. from
    :func:`custom_profile`). Raises InvalidDeviceError, UnknownProfileError,
    SnapshotMissingError. As :func:`pciname.api.resolve`, which answers
    whatever the packaged answers do not.
    """
    try:
        hit = _remembered((device, profile))
    except TypeError:  # an unhashable profile: the full path says what is wrong
        hit = None
    return hit if hit is not None else _resolve(device, profile)


def _resolve(device: str, profile: "ProfileLike") -> "Resolution":
    record = None
    if type(device) is str and type(profile) is str:
        record = _answers.packaged_record(device, profile)
    if record is None:
        from pciname.api import resolve as full

        return full(device, profile)
    from pciname.resolution.results import Resolution

    return _answers.remember(_answers.memo, (device, profile), Resolution.from_record(record))  # type: ignore[no-any-return]


def __getattr__(name: str) -> object:
    if name == "Warning":  # deprecated alias of NameWarning, for one release (0.3)
        from pciname import api

        return api.Warning
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'pciname' has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value  # later lookups are plain attribute reads
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))


if TYPE_CHECKING:
    from pciname.api import (
        DeviceId as DeviceId,
        DiffEntry as DiffEntry,
        NameWarning as NameWarning,
        ProfileInfo as ProfileInfo,
        ProfileLike,
        Resolution as Resolution,
        Resolver as Resolver,
        clear_caches as clear_caches,
        custom_profile as custom_profile,
        default_resolver as default_resolver,
        devices as devices,
        diff as diff,
        load as load,
        parse_device as parse_device,
        profiles as profiles,
        resolve_many as resolve_many,
        reverse as reverse,
    )
    from pciname.capabilities.admission import AdmissionPolicyRequest as AdmissionPolicyRequest
    from pciname.capabilities.apply import ApplyRequest as ApplyRequest
    from pciname.capabilities.audit import AuditRequest as AuditRequest, GpuOptionsRequest as GpuOptionsRequest
    from pciname.capabilities.catalog import (
        ProfilesRequest as ProfilesRequest,
        SnapshotFetchRequest as SnapshotFetchRequest,
        SnapshotImportRequest as SnapshotImportRequest,
        SnapshotPackRequest as SnapshotPackRequest,
        SnapshotsRequest as SnapshotsRequest,
    )
    from pciname.capabilities.dra_claims import DraClaimsRequest as DraClaimsRequest
    from pciname.capabilities.image_check import ImageCheckRequest as ImageCheckRequest
    from pciname.capabilities.kata_pod import KataPodRequest as KataPodRequest
    from pciname.capabilities.lint import LintRequest as LintRequest
    from pciname.capabilities.mdev_name import MdevNameRequest as MdevNameRequest
    from pciname.capabilities.names import (
        DiffRequest as DiffRequest,
        LookupRequest as LookupRequest,
        ReverseRequest as ReverseRequest,
    )
    from pciname.capabilities.node_pool import NodePoolRequest as NodePoolRequest
    from pciname.capabilities.pciids import CheckRequest as CheckRequest, DescribeRequest as DescribeRequest
    from pciname.capabilities.permitted import PermittedHostDevicesRequest as PermittedHostDevicesRequest
    from pciname.capabilities.registry import (
        CAPABILITIES as CAPABILITIES,
        Capability as Capability,
        ask as ask,
        capability as capability,
    )
    from pciname.capabilities.scan import ScanRequest as ScanRequest
    from pciname.capabilities.vgpu_types import VgpuTypesRequest as VgpuTypesRequest
    from pciname.capabilities.vm_gpus import VmGpusRequest as VmGpusRequest
    from pciname.errors import (
        InvalidDeviceError as InvalidDeviceError,
        PciIdsError as PciIdsError,
        PciIdsSyntaxError as PciIdsSyntaxError,
        PcinameError as PcinameError,
        SnapshotCacheError as SnapshotCacheError,
        SnapshotMissingError as SnapshotMissingError,
        SnapshotVerifyError as SnapshotVerifyError,
        UnknownAlgorithmError as UnknownAlgorithmError,
        UnknownProfileError as UnknownProfileError,
    )
    from pciname.requests.spelling import RequestError as RequestError, Spelling as Spelling
