"""pciname's library API: resource names exactly as a plugin release derives them.

>>> import pciname
>>> pciname.resolve("10de:2236").resource_name
'nvidia.com/GA102GL_A10'
>>> pciname.resolve("10de:2330", "gpu-operator@v23.9.2").resource_name
'nvidia.com/GH100H100_SXM5_80GB'

Everything here is pure with respect to its inputs and the pci.ids files,
and cached: the second ``resolve`` of the same device and profile is a
dictionary lookup. The work is done by :mod:`pciname.resolution.resolver`; the typed
results are those of :mod:`pciname.resolution.results`.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from pciname.base.paths import embedded_pciids_path
from pciname.naming.checks import NameWarning
from pciname.naming.profiles import DEFAULT_PROFILE, PREVIEW, custom_profile, load_registry
from pciname.resolution import answers
from pciname.resolution.catalog import FileCache, catalog_for, catalogs
from pciname.resolution.resolver import DeviceId, ProfileLike, Resolver, ResolverLike, default_resolver, parse_device
from pciname.resolution.results import DiffEntry, ProfileInfo, Resolution

if TYPE_CHECKING:
    from pciname.naming.profiles import Profile
    from pciname.pciids.model import PciDatabase

__all__ = [
    "DeviceId",
    "DiffEntry",
    "NameWarning",
    "ProfileInfo",
    "ProfileLike",
    "Resolution",
    "Resolver",
    "ResolverLike",
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
    "with_aliases",
]

_default = default_resolver()


def resolve(device: str, profile: ProfileLike = DEFAULT_PROFILE) -> Resolution:
    """The resource name and everything around it for one device.

    ``profile`` is a profile name (``embedded``, ``latest``,
    ``kubevirt-gpu-device-plugin@v1.2.2``, ``gpu-operator@v24.9.0``) or a
    :class:`~pciname.naming.profiles.Profile` (e.g. from
    :func:`custom_profile`). Raises InvalidDeviceError, UnknownProfileError,
    SnapshotMissingError.
    """
    return _default.resolve(device, profile)


def resolve_many(devices: Iterable[str], profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]:
    """:func:`resolve` for each device, in order (the profile loaded once);
    a malformed device rejects the whole call."""
    return _default.resolve_many(devices, profile)


def reverse(resource: str, profile: ProfileLike = DEFAULT_PROFILE) -> list[str]:
    """Every NVIDIA device id (``10de:xxxx``) the profile advertises as
    ``resource`` (``nvidia.com/GA102GL_A10`` or just ``GA102GL_A10``)."""
    return _default.reverse(resource, profile)


def diff(old: ProfileLike, new: ProfileLike) -> list[DiffEntry]:
    """Every NVIDIA device id whose resource name differs from ``old`` to
    ``new`` (renamed, appears or vanishes), over both profiles' device ids."""
    return _default.diff(old, new)


def with_aliases(profile: ProfileLike, alias: str | None = None, nvswitch_alias: str | None = None) -> Profile:
    """A Kata profile (``sandbox-device-plugin@v0.0.5``,
    ``gpu-operator@v26.7.0+kata``) run with ``P_GPU_ALIAS=alias`` and
    ``NVSWITCH_ALIAS=nvswitch_alias`` (None: unset, the release's default;
    ``""``: set to empty, each model its own name), for any function here.

    >>> import pciname
    >>> pciname.resolve("10de:2236", "sandbox-device-plugin@v0.0.5").resource_name
    'nvidia.com/pgpu'
    >>> pciname.resolve("10de:2236", with_aliases("sandbox-device-plugin@v0.0.5", alias="")).resource_name
    'nvidia.com/GA102GL_A10'
    """
    from pciname.naming.profiles import with_aliases as run_with
    from pciname.resolution.resolver import as_profile

    return run_with(as_profile(profile), alias, nvswitch_alias)


def devices(profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]:
    """A resolution for every NVIDIA device id the profile knows of."""
    return _default.devices(profile)


def profiles() -> list[ProfileInfo]:
    """Every known profile: release, algorithm, pci.ids and whether it is usable."""
    from pciname.resolution.catalog import verified_paths
    from pciname.resolution.snapshots import locate

    infos = []
    verified = verified_paths()
    found: dict[str, object] = {}
    for profile in load_registry().profiles.values():
        if profile.snapshot is None:
            path = profile.path
            catalog = catalog_for(path) if profile.name == PREVIEW else None
            version = catalog.version if catalog else None
            sha = catalog.sha256 if catalog else None
        else:
            snap = profile.snapshot
            if snap.sha256 not in found:
                found[snap.sha256] = locate(snap, verified)
            path, version, sha = found[snap.sha256], snap.key, snap.sha256
            catalog = None
        infos.append(
            ProfileInfo(
                name=profile.name,
                kind=profile.kind,
                # the embedded profile is as new as its pci.ids file
                released=profile.released
                or (catalog.date[:10] if profile.snapshot is None and catalog and catalog.date else None),
                algorithm=profile.algorithm,
                plugin_release=profile.plugin_release,
                pci_ids_version=version,
                pci_ids_sha256=sha,
                installed=path is not None,
                path=str(path) if path else None,
                aliases=profile.aliases,
                note=profile.note,
                plugin=profile.plugin,
                source=f"{profile.sources[0]}@{profile.sources[1]}" if profile.sources else None,
            )
        )
    return infos


_databases: FileCache[PciDatabase] = FileCache(maxsize=16)


def load(path: str | Path | None = None) -> PciDatabase:
    """The parsed pci.ids database of ``path`` (default: the embedded file),
    cached per file identity. Malformed lines are skipped and listed in
    ``.issues``; use ``pciname check`` to see them."""
    from pciname.pciids.loader import load_bytes
    from pciname.resolution.catalog import read_pciids

    path = Path(path) if path is not None else embedded_pciids_path()
    return _databases.get(path, lambda p, _: load_bytes(read_pciids(p)))


def clear_caches() -> None:
    """Forget every cached file, catalog and resolution (after files changed)."""
    _default.clear()
    answers.clear()
    _databases.clear()
    catalogs.clear()


def __getattr__(name: str) -> object:
    if name == "Warning":  # the name before 0.3, which shadowed the builtin
        import warnings

        warnings.warn("pciname.Warning is deprecated: use pciname.NameWarning", DeprecationWarning, stacklevel=2)
        return NameWarning
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
