"""pciname: exact GPU resource names of NVIDIA's KubeVirt device plugin.

The plugin (the GPU Operator's sandbox device plugin) advertises each GPU
model under a name derived from the PCI IDs database; pciname derives the
same names, exactly as a given plugin or GPU Operator release does.

>>> import pciname
>>> pciname.resolve("10de:2236").resource_name
'nvidia.com/GA102GL_A10'

The names below are imported on first use (PEP 562), so that the
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
