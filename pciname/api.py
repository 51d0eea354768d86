"""pciname's library API: resource names exactly as a plugin release derives them.

>>> import pciname
>>> pciname.resolve("10de:2236").resource_name
'nvidia.com/GA102GL_A10'
>>> pciname.resolve("10de:2330", "gpu-operator@v23.9.2").resource_name
'nvidia.com/GH100H100_SXM5_80GB'

Everything here is pure with respect to its inputs and the pci.ids files,
and cached: the second ``resolve`` of the same device and profile is a
dictionary lookup.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from threading import Lock

from cachetools import LRUCache

from .catalog import Catalog, catalog_for
from .errors import InvalidDeviceError
from .naming import checks
from .naming.algorithms import NVIDIA_VENDOR_ID
from .naming.checks import Warning
from .naming.profiles import (
    DEFAULT_PROFILE,
    EMBEDDED,
    UNNAMED_NOT_ADVERTISED,
    Profile,
    custom_profile,
    get_profile,
    load_registry,
)
from .paths import embedded_pciids_path

__all__ = [
    "DeviceId",
    "DiffEntry",
    "ProfileInfo",
    "Resolution",
    "Resolver",
    "Warning",
    "default_resolver",
    "devices",
    "custom_profile",
    "diff",
    "load",
    "parse_device",
    "profiles",
    "resolve",
    "resolve_many",
    "reverse",
]

ProfileLike = str | Profile

_DEVICE = re.compile(r"\s*(?:(?:0[xX])?([0-9a-fA-F]{4})\s*:)?\s*(?:0[xX])?([0-9a-fA-F]{4})\s*\Z")


@dataclass(frozen=True, slots=True)
class DeviceId:
    """A PCI vendor and device id, lower-case hex (``10de``, ``2236``)."""

    vendor: str
    device: str

    def __str__(self) -> str:
        return f"{self.vendor}:{self.device}"


def parse_device(text: str) -> DeviceId:
    """``10de:2236``, ``10DE:2236``, ``0x10de:0x2236`` or a bare ``2236``
    (vendor 10de) -> :class:`DeviceId`; anything else is InvalidDeviceError."""
    match = _DEVICE.match(text) if isinstance(text, str) else None
    if not match:
        raise InvalidDeviceError(
            f"malformed device {text!r}: expected VENDOR:DEVICE in hex, e.g. 10de:2236 (or 0x10de:0x2236)"
        )
    vendor, device = match.groups()
    return DeviceId((vendor or NVIDIA_VENDOR_ID).lower(), device.lower())


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

    @property
    def advertised(self) -> bool:
        blocking = (checks.NOT_ADVERTISED, checks.INVALID_RESOURCE_NAME, checks.SOCKET_PATH_TOO_LONG)
        return self.resource_name is not None and not any(w.code in blocking for w in self.warnings)

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


# -- profiles and their data ------------------------------------------------


def _profile(profile: ProfileLike) -> Profile:
    return profile if isinstance(profile, Profile) else get_profile(profile)


def _catalog(profile: Profile) -> Catalog:
    if profile.snapshot is None:
        return catalog_for(profile.path)
    from .snapshots import require_snapshot

    return catalog_for(require_snapshot(profile))


def _resource_of(profile: Profile, catalog: Catalog, device_id: str) -> str | None:
    name = catalog.name(profile.algorithm, device_id)
    if not name and profile.unnamed_device == UNNAMED_NOT_ADVERTISED:
        return None
    return checks.resource_name(name or device_id)


class _ProfileView:
    """One profile bound to its catalog: names, the id universe, collisions."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.catalog = _catalog(profile)
        self._universe: list[str] | None = None
        self._by_resource: dict[str, list[str]] | None = None
        self._lock = Lock()

    def universe(self) -> list[str]:
        """NVIDIA device ids this profile is asked about: those of its own
        pci.ids file and those of the newest file pciname knows (embedded).
        Computed once per view, so a pinned resolver keeps its answer."""
        if self._universe is None:
            ids = dict.fromkeys(self.catalog.nvidia_ids())
            if self.profile.kind != "embedded":
                ids.update(dict.fromkeys(catalog_for(embedded_pciids_path()).nvidia_ids()))
            self._universe = sorted(ids)
        return self._universe

    def resource(self, device_id: str) -> str | None:
        return _resource_of(self.profile, self.catalog, device_id)

    def by_resource(self) -> dict[str, list[str]]:
        if self._by_resource is None:
            with self._lock:
                if self._by_resource is None:
                    grouped: dict[str, list[str]] = {}
                    names = self.catalog.names(self.profile.algorithm)  # universe ids are all indexable
                    skip_unnamed = self.profile.unnamed_device == UNNAMED_NOT_ADVERTISED
                    for device_id in self.universe():
                        name = names.get(device_id) or ("" if skip_unnamed else device_id)
                        if name:
                            grouped.setdefault(checks.resource_name(name), []).append(device_id)
                    self._by_resource = grouped
        return self._by_resource


class Resolver:
    """Resolves devices against profiles, caching everything it loads.

    The module-level functions (:func:`resolve`, :func:`reverse`, ...) use one
    shared default resolver, which notices a changed pci.ids file the next
    time a profile is looked up (memoised resolutions stay until
    :func:`clear_caches`). A *pinned* resolver never looks at the files again
    once a profile is loaded: a server builds a new one beside the old,
    preloads it, and swaps the reference, so requests in flight
    finish on the data they started with.
    """

    def __init__(self, *, pinned: bool = False) -> None:
        self.pinned = pinned
        # Pinned: one view per profile for the resolver's life, never evicted
        # (an evicted view would be rebuilt from whatever is on disk then).
        self._views: dict | LRUCache = {} if pinned else LRUCache(maxsize=64)
        self._lock = Lock()
        self._memo: dict[tuple[str, ProfileLike], Resolution] = {}

    def view(self, profile: ProfileLike) -> _ProfileView:
        if self.pinned:
            key = profile
        else:
            resolved = _profile(profile)
            key = (resolved, _catalog(resolved).identity)
        with self._lock:
            view = self._views.get(key)
        if view is None:
            view = _ProfileView(_profile(profile))
            with self._lock:
                self._views[key] = view
        return view

    def preload(self, profile_names: Iterable[str] | None = None, *, strict: bool = True) -> list[str]:
        """Load the named profiles (default: every installed one) now.

        Returns the canonical names loaded. With ``strict``, a pci.ids file
        with malformed lines raises PciIdsSyntaxError instead of loading.
        """
        from .snapshots import find_snapshot

        names = list(profile_names) if profile_names is not None else [
            p.name for p in load_registry().profiles.values() if p.snapshot is None or find_snapshot(p.snapshot)
        ]
        loaded = []
        for name in names:
            view = self.view(name)
            if strict and view.catalog.issues:
                from .errors import PciIdsSyntaxError

                raise PciIdsSyntaxError(view.catalog.issues[0], str(view.catalog.path))
            view.by_resource()
            loaded.append(view.profile.name)
        return loaded

    def resolve(self, device: str, profile: ProfileLike = DEFAULT_PROFILE) -> Resolution:
        key = (device, profile)
        try:
            return self._memo[key]
        except KeyError:
            pass
        except TypeError:  # an unhashable argument: let parsing reject it
            return _resolve(parse_device(device), self.view(profile))
        result = _resolve(parse_device(device), self.view(profile))
        if len(self._memo) >= _MEMO_MAX:
            self._memo.clear()
        self._memo[key] = result
        return result

    def resolve_many(self, devices: Iterable[str], profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]:
        view = self.view(profile)
        parsed = [parse_device(device) for device in devices]  # all-or-nothing on bad input
        return [_resolve(device, view) for device in parsed]

    def reverse(self, resource: str, profile: ProfileLike = DEFAULT_PROFILE) -> list[str]:
        view = self.view(profile)
        wanted = resource if "/" in resource else checks.resource_name(resource)
        ids = set(view.by_resource().get(wanted, ()))
        tail = wanted.partition("/")[2]
        # A device pci.ids does not name is advertised under its own id.
        if re.fullmatch(r"[0-9a-fA-F]{4}", tail) and view.resource(tail.lower()) == wanted:
            ids.add(tail.lower())
        return [f"{NVIDIA_VENDOR_ID}:{device_id}" for device_id in sorted(ids)]

    def diff(self, old: ProfileLike, new: ProfileLike) -> list[DiffEntry]:
        before, after = self.view(old), self.view(new)
        ids = sorted(set(before.universe()) | set(after.universe()))
        entries = []
        for device_id in ids:
            was, now = before.resource(device_id), after.resource(device_id)
            if was != now:
                entries.append(DiffEntry(f"{NVIDIA_VENDOR_ID}:{device_id}", was, now))
        return entries

    def devices(self, profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]:
        """A resolution for every NVIDIA device id the profile knows of."""
        view = self.view(profile)
        return [_resolve(DeviceId(NVIDIA_VENDOR_ID, device_id), view) for device_id in view.universe()]

    def clear(self) -> None:
        with self._lock:
            self._views.clear()
            self._memo.clear()


_MEMO_MAX = 100_000
_default = Resolver()


def default_resolver() -> Resolver:
    return _default


def resolve(device: str, profile: ProfileLike = DEFAULT_PROFILE) -> Resolution:
    """The resource name and everything around it for one device.

    ``profile`` is a profile name (``embedded``, ``latest``,
    ``kubevirt-gpu-device-plugin@v1.2.2``, ``gpu-operator@v24.9.0``) or a
    :class:`Profile` (e.g. from :func:`custom_profile`). Raises
    InvalidDeviceError, UnknownProfileError, SnapshotMissingError.
    """
    try:
        return _default._memo[(device, profile)]
    except (KeyError, TypeError):
        return _default.resolve(device, profile)


def resolve_many(devices: Iterable[str], profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]:
    """:func:`resolve` for each device, in order (the profile loaded once)."""
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


def _resolve(device: DeviceId, view: _ProfileView) -> Resolution:
    profile, catalog = view.profile, view.catalog
    is_nvidia = device.vendor == NVIDIA_VENDOR_ID
    warnings: list[Warning] = []
    if is_nvidia:
        vendor_name = catalog.nvidia_vendor_name
        device_name = catalog.nvidia_devices.get(device.device)
        name = catalog.name(profile.algorithm, device.device)
        resource = view.resource(device.device)
    else:
        vendor_name, device_name = catalog.other_names(device.vendor, device.device)
        name, resource = "", None
        warnings.append(
            Warning(
                checks.NOT_ADVERTISED,
                f"vendor {device.vendor} is not NVIDIA (10de); the plugin only advertises NVIDIA devices",
            )
        )
    if is_nvidia and not name:
        if resource is None:
            warnings.append(
                Warning(
                    checks.NOT_ADVERTISED,
                    f"pci.ids {_version_label(profile, catalog)} does not name {device}, "
                    f"and {profile.plugin_release or profile.name} skips devices it cannot name",
                )
            )
        else:
            warnings.append(
                Warning(
                    checks.UNNAMED_DEVICE,
                    f"pci.ids {_version_label(profile, catalog)} gives no name for {device}; "
                    f"the plugin falls back to the device id: {resource}",
                )
            )
    env = socket = None
    if resource is not None:
        advertised_name = resource.partition("/")[2]
        warnings.extend(checks.name_warnings(advertised_name))
        sharing = view.by_resource().get(resource, ())
        collision = checks.collision_warning(device.device, resource, sharing)
        if collision:
            warnings.append(collision)
        env = checks.env_var(resource)
        socket = checks.socket_path(advertised_name)
    return Resolution(
        device=str(device),
        profile=profile.name,
        algorithm=profile.algorithm,
        plugin_release=profile.plugin_release,
        name=name,
        resource_name=resource,
        vendor_name=vendor_name,
        device_name=device_name,
        pci_ids_version=_version_label(profile, catalog),
        pci_ids_sha256=catalog.sha256,
        env_var=env,
        socket_path=socket,
        warnings=tuple(warnings),
    )


def _version_label(profile: Profile, catalog: Catalog) -> str | None:
    return catalog.version or profile.pci_ids_label


# -- reverse, diff, profiles, load -----------------------------------------------


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
    from .snapshots import find_snapshot
    from .catalog import verified_paths

    infos = []
    verified = verified_paths()
    found: dict[str, Path | None] = {}
    for profile in load_registry().profiles.values():
        if profile.snapshot is None:
            path = profile.path
            catalog = catalog_for(path) if profile.name == EMBEDDED else None
            version = catalog.version if catalog else None
            sha = catalog.sha256 if catalog else None
        else:
            snap = profile.snapshot
            if snap.sha256 not in found:
                found[snap.sha256] = find_snapshot(snap, verified)
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


_databases: LRUCache = LRUCache(maxsize=16)
_databases_lock = Lock()


def load(path: str | Path | None = None):
    """The parsed pci.ids database of ``path`` (default: the embedded file),
    cached per file identity. Malformed lines are skipped and listed in
    ``.issues``; use ``pciname check`` to see them."""
    from .catalog import _read, file_identity
    from .errors import PciIdsError
    from .pciids.loader import load_bytes

    path = Path(path) if path is not None else embedded_pciids_path()
    try:
        identity = file_identity(path)
    except OSError as error:
        raise PciIdsError(f"{path}: cannot read pci.ids file: {error.strerror or error}") from None
    with _databases_lock:
        db = _databases.get(identity)
    if db is None:
        db = load_bytes(_read(path))
        with _databases_lock:
            _databases[identity] = db
    return db


def clear_caches() -> None:
    """Forget every cached file, catalog and resolution (after files changed)."""
    from . import catalog

    _default.clear()
    with _databases_lock:
        _databases.clear()
    with catalog._catalogs_lock:
        catalog._catalogs.clear()
