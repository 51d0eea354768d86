"""pciname's library API: resource names exactly as a plugin release derives them.

>>> import pciname
>>> pciname.resolve("10de:2236").resource_name
'nvidia.com/GA102GL_A10'
>>> pciname.resolve("10de:2330", "gpu-operator@v23.9.2").resource_name
'nvidia.com/GH100H100_SXM5_80GB'

Everything here is pure with respect to its inputs and the pci.ids files,
and cached: the second ``resolve`` of the same device and profile is a
dictionary lookup. The work is done by :mod:`pciname.resolver`; this module
gives it typed results.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from .catalog import FileCache, catalog_for, catalogs
from .naming import checks
from .naming.checks import Warning
from .naming.profiles import DEFAULT_PROFILE, PREVIEW, custom_profile, load_registry
from .paths import embedded_pciids_path
from .resolver import DeviceId, ProfileLike, Record, Resolver, default_resolver, parse_device

if TYPE_CHECKING:
    from .pciids.model import PciDatabase

__all__ = [
    "DeviceId",
    "DiffEntry",
    "ProfileInfo",
    "Resolution",
    "Resolver",
    "Warning",
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

@dataclass(frozen=True, slots=True)
class Resolution:
    """What a profile makes of one PCI device.

    ``resource_name`` is what the plugin registers with kubelet (None: it
    advertises nothing for this device); ``name`` is the name the plugin
    derived from pci.ids (``""``: none, so v1.0.1+ fall back to the id).
    ``advertised`` is False also when kubelet would refuse the name.
    """

    device: str
    profile: str
    algorithm: str
    plugin_release: str | None
    name: str
    resource_name: str | None
    vendor_name: str | None
    device_name: str | None
    pci_ids_version: str | None
    pci_ids_sha256: str | None
    env_var: str | None
    socket_path: str | None
    warnings: tuple[Warning, ...] = field(default=())

    @classmethod
    def from_record(cls, record: Record) -> Resolution:
        """From the engine's plain-data form (:meth:`to_dict`'s shape)."""
        fields = {k: v for k, v in record.items() if k not in ("advertised", "warnings")}
        return cls(**fields, warnings=tuple(Warning(w["code"], w["message"]) for w in record["warnings"]))

    @property
    def advertised(self) -> bool:
        return checks.is_advertised(self.resource_name, self.warning_codes)

    @property
    def warning_codes(self) -> tuple[str, ...]:
        return tuple(w.code for w in self.warnings)

    def to_dict(self) -> dict:
        return {
            "device": self.device,
            "profile": self.profile,
            "algorithm": self.algorithm,
            "plugin_release": self.plugin_release,
            "name": self.name,
            "resource_name": self.resource_name,
            "advertised": self.advertised,
            "vendor_name": self.vendor_name,
            "device_name": self.device_name,
            "pci_ids_version": self.pci_ids_version,
            "pci_ids_sha256": self.pci_ids_sha256,
            "env_var": self.env_var,
            "socket_path": self.socket_path,
            "warnings": [w.to_dict() for w in self.warnings],
        }


_default = default_resolver()


def resolve(device: str, profile: ProfileLike = DEFAULT_PROFILE) -> Resolution:
    """The resource name and everything around it for one device.

    ``profile`` is a profile name (``embedded``, ``latest``,
    ``kubevirt-gpu-device-plugin@v1.2.2``, ``gpu-operator@v24.9.0``) or a
    :class:`~pciname.naming.profiles.Profile` (e.g. from
    :func:`custom_profile`). Raises InvalidDeviceError, UnknownProfileError,
    SnapshotMissingError.
    """
    try:
        return _default._memo[(device, profile)]
    except (KeyError, TypeError):
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


def devices(profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]:
    """A resolution for every NVIDIA device id the profile knows of."""
    return _default.devices(profile)


@dataclass(frozen=True, slots=True)
class DiffEntry:
    """One device whose resource differs between two profiles."""

    device: str
    old: str | None
    new: str | None

    @property
    def change(self) -> str:
        if self.old is None:
            return "appears"
        if self.new is None:
            return "vanishes"
        return "renamed"

    def to_dict(self) -> dict:
        return {"device": self.device, "change": self.change, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True)
class ProfileInfo:
    name: str
    kind: str
    released: str | None
    algorithm: str
    plugin_release: str | None
    pci_ids_version: str | None
    pci_ids_sha256: str | None
    installed: bool
    path: str | None
    aliases: tuple[str, ...]
    note: str

    def to_dict(self) -> dict:
        return {
            "name": self.name,
            "kind": self.kind,
            "released": self.released,
            "algorithm": self.algorithm,
            "plugin_release": self.plugin_release,
            "pci_ids_version": self.pci_ids_version,
            "pci_ids_sha256": self.pci_ids_sha256,
            "installed": self.installed,
            "path": self.path,
            "aliases": list(self.aliases),
            "note": self.note,
        }


def profiles() -> list[ProfileInfo]:
    """Every known profile: release, algorithm, pci.ids and whether it is usable."""
    from .snapshots import locate
    from .catalog import verified_paths

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
                released=profile.released or (catalog.date[:10] if profile.snapshot is None and catalog and catalog.date else None),
                algorithm=profile.algorithm,
                plugin_release=profile.plugin_release,
                pci_ids_version=version,
                pci_ids_sha256=sha,
                installed=path is not None,
                path=str(path) if path else None,
                aliases=profile.aliases,
                note=profile.note,
            )
        )
    return infos


_databases = FileCache(maxsize=16)


def load(path: str | Path | None = None) -> PciDatabase:
    """The parsed pci.ids database of ``path`` (default: the embedded file),
    cached per file identity. Malformed lines are skipped and listed in
    ``.issues``; use ``pciname check`` to see them."""
    from .catalog import read_pciids
    from .pciids.loader import load_bytes

    path = Path(path) if path is not None else embedded_pciids_path()
    return _databases.get(path, lambda p, _: load_bytes(read_pciids(p)))


def clear_caches() -> None:
    """Forget every cached file, catalog and resolution (after files changed)."""
    _default.clear()
    _databases.clear()
    catalogs.clear()
