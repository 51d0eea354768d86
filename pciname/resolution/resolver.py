"""The resolution engine: profiles bound to their data, answers as records.

A *record* is one device's resolution as plain data (the ``to_dict()`` form
of :class:`pciname.resolution.results.Resolution`): what the CLI prints and a server
sends. The typed results of :mod:`pciname.resolution.results` are built from records,
and imported only when asked for, so a ``pciname lookup`` process never pays
for creating their dataclasses (start-up time is measured against
``python -c pass``).
"""

from __future__ import annotations

import re
from collections import namedtuple
from collections.abc import Iterable
from threading import Lock
from typing import TYPE_CHECKING, Protocol

from cachetools import LRUCache

from pciname.base.paths import embedded_pciids_path
from pciname.naming import checks, kata
from pciname.naming.gotext import valid_text
from pciname.naming.profiles import (
    DEFAULT_PROFILE,
    PREVIEW,
    UNNAMED_NOT_ADVERTISED,
    Profile,
    get_profile,
    load_registry,
)
from pciname.pciids.ids import NVIDIA_VENDOR_ID, parse_device_id
from pciname.resolution import answers
from pciname.resolution.catalog import Catalog, catalog_for

if TYPE_CHECKING:
    from pciname.resolution.results import DiffEntry, Record, Resolution

ProfileLike = str | Profile


class DeviceId(namedtuple("DeviceId", "vendor device")):
    """A PCI vendor and device id, lower-case hex (``10de``, ``2236``)."""

    __slots__ = ()

    def __str__(self) -> str:
        return f"{self.vendor}:{self.device}"


def parse_device(text: str) -> DeviceId:
    """``10de:2236``, ``10DE:2236``, ``0x10de:0x2236`` or a bare ``2236``
    (vendor 10de) -> :class:`DeviceId`; anything else is InvalidDeviceError."""
    return DeviceId(*parse_device_id(text))


def as_profile(profile: ProfileLike) -> Profile:
    return profile if isinstance(profile, Profile) else get_profile(profile)


def profile_catalog(profile: Profile) -> Catalog:
    """The catalog of the profile's pci.ids file (SnapshotMissingError if absent)."""
    if profile.snapshot is None:
        return catalog_for(profile.path)
    from pciname.resolution.snapshots import snapshot_catalog

    return snapshot_catalog(profile)


class ProfileView:
    """One profile bound to its catalog: names, the id universe, collisions."""

    def __init__(self, profile: Profile) -> None:
        self.profile = profile
        self.catalog = profile_catalog(profile)
        self._universe: list[str] | None = None
        self._by_resource: dict[str, list[str]] | None = None
        self._lock = Lock()

    def aliased(self, profile: Profile) -> ProfileView:
        """A view of ``profile`` (this view's run with other Kata aliases)
        sharing this one's catalog and universe: cheap, never cached."""
        view = ProfileView.__new__(ProfileView)
        view.profile = profile
        view.catalog = self.catalog
        view._universe = self.universe()
        view._by_resource = None
        view._lock = Lock()
        return view

    def universe(self) -> list[str]:
        """NVIDIA device ids this profile is asked about: those of its own
        pci.ids file and those of the newest file pciname knows (the
        preview's Debian pci.ids).
        Computed once per view, so a pinned resolver keeps its answer."""
        if self._universe is None:
            ids = dict.fromkeys(self.catalog.nvidia_devices)
            if self.profile.kind != PREVIEW:
                ids.update(dict.fromkeys(catalog_for(embedded_pciids_path()).nvidia_devices))
            self._universe = sorted(ids)
        return self._universe

    def is_nvswitch(self, device_id: str) -> bool:
        """Whether a Kata profile takes the device for an NVSwitch (inferred
        from its pci.ids name; ``scan`` reads the class)."""
        return kata.looks_like_nvswitch(self.catalog.nvidia_devices.get(device_id))

    def alias(self, device_id: str) -> str | None:
        """The Kata alias the device is advertised under (None: its own name)."""
        if not self.profile.is_kata:
            return None
        return self.profile.alias_in_force(self.is_nvswitch(device_id)) or None

    def resource(self, device_id: str) -> str | None:
        """What the plugin registers for an NVIDIA device id (None: nothing)."""
        alias = self.alias(device_id)
        if alias is not None:
            return checks.resource_name(alias)
        name = self.catalog.name(self.profile.algorithm, device_id)
        if not name and self.profile.unnamed_device == UNNAMED_NOT_ADVERTISED:
            return None
        return checks.resource_name(name or device_id)

    def by_resource(self) -> dict[str, list[str]]:
        """resource -> the universe's device ids advertised under it."""
        if self._by_resource is None:
            with self._lock:
                if self._by_resource is None:
                    grouped: dict[str, list[str]] = {}
                    if self.profile.is_kata:
                        for device_id in self.universe():
                            resource = self.resource(device_id)
                            if resource is not None:
                                grouped.setdefault(resource, []).append(device_id)
                        self._by_resource = grouped
                        return grouped
                    names = self.catalog.names(self.profile.algorithm)  # universe ids are all indexable
                    skip_unnamed = self.profile.unnamed_device == UNNAMED_NOT_ADVERTISED
                    for device_id in self.universe():
                        name = names.get(device_id) or ("" if skip_unnamed else device_id)
                        if name:
                            grouped.setdefault(checks.resource_name(name), []).append(device_id)
                    self._by_resource = grouped
        return self._by_resource

    def _kata_warnings(
        self, device: DeviceId, name: str, alias: str | None, device_name: str | None
    ) -> list[checks.NameWarning]:
        """What a Kata profile says of an NVIDIA device besides its name."""
        profile = self.profile
        found: list[checks.NameWarning] = []
        nvswitch = self.is_nvswitch(device.device)
        if profile.classes is not None and (nvswitch or kata.looks_like_other_function(device_name)):
            kind = (
                "an NVSwitch (class 0x068000)"
                if nvswitch
                else "no GPU or NVSwitch: the plugin takes only classes 0x030000, 0x030200 and 0x068000 "
                "and skips this function if its class is another"
            )
            found.append(
                checks.NameWarning(
                    checks.CLASS_INFERRED,
                    f"taken for {kind}, inferred from its pci.ids name {device_name!r} (an id does not give the "
                    "class): `pciname scan` reads it from sysfs",
                )
            )
        if alias is not None:
            variable = (
                kata.NVSWITCH_ALIAS_ENV if nvswitch and profile.nvswitch_unset is not None else kata.PGPU_ALIAS_ENV
            )
            given = profile.nvswitch_alias if variable == kata.NVSWITCH_ALIAS_ENV else profile.alias
            how = "unset: the release's default" if given is None else "as set"
            kind = "NVSwitch" if variable == kata.NVSWITCH_ALIAS_ENV else "GPU model"
            found.append(
                checks.NameWarning(
                    checks.SHARED_ALIAS,
                    f"{variable} is {alias!r} ({how}): every {kind} of a node is advertised as nvidia.com/{alias} "
                    f"on one socket {kata.socket_path(alias)}; on a node with two models their plugins remove "
                    f'each other\'s socket and one model at a time is served ({variable}="" gives each model '
                    "its own name)",
                )
            )
        elif name == kata.UNKNOWN_DEVICE:
            found.append(
                checks.NameWarning(
                    checks.UNNAMED_DEVICE,
                    f"go-nvlib's {self.file_label()} does not name {device}: the plugin advertises it as "
                    f"nvidia.com/{kata.UNKNOWN_DEVICE}, as every model it cannot name",
                )
            )
        elif not name:
            found.append(
                checks.NameWarning(
                    checks.UNNAMED_DEVICE,
                    f"{self.file_label()} gives no name for {device}; the plugin falls back to the device id: "
                    f"nvidia.com/{device.device}",
                )
            )
        return found

    def _foreign_warning(self, device: DeviceId, source: tuple[int, str, str]) -> checks.NameWarning:
        number, vendor, line = source
        vendor_id, vendor_name = vendor[:4], vendor[4:]  # a vendor line: 4 hex digits, then its name
        release = self.profile.plugin_release or self.profile.name
        message = (
            f"the name comes from {self.file_label()} line {number}, in the section of vendor "
            f"{vendor_id} ({valid_text(vendor_name.strip())}): {valid_text(line)!r}, "
            f"not from NVIDIA's entry for {device}. "
            f"{release} names a device from the first line holding its id anywhere in the file "
            "(the plugin's bug until v1.2.2, which reads NVIDIA's section only): "
            "this is the name that release advertises"
        )
        return checks.NameWarning(checks.NAME_FROM_ANOTHER_VENDOR, message)

    def version_label(self) -> str | None:
        """The file's Version header (else the release's label), as valid text."""
        return valid_text(self.catalog.version or self.profile.pci_ids_label)

    def file_label(self) -> str:
        """How messages name the pci.ids file: by version, else by path."""
        label = self.version_label()
        return f"pci.ids {label}" if label else valid_text(str(self.catalog.path))  # type: ignore[return-value]

    def record(self, device: DeviceId) -> Record:
        """The resolution of one device, as plain data.

        Text taken from the pci.ids file (vendor and device names, its
        version, its path in messages) is valid UTF-8: undecodable bytes are
        U+FFFD (:func:`~pciname.naming.gotext.valid_text`). Derived names
        never hold them (the algorithms' filters drop them).
        """
        profile, catalog = self.profile, self.catalog
        warnings: list[checks.NameWarning] = []
        alias = None
        if device.vendor == NVIDIA_VENDOR_ID:
            vendor_name = catalog.nvidia_vendor_name
            device_name = catalog.nvidia_devices.get(device.device)
            name = catalog.name(profile.algorithm, device.device)
            resource = self.resource(device.device)
            alias = self.alias(device.device)
            if profile.is_kata:
                warnings.extend(self._kata_warnings(device, name, alias, device_name))
            elif name and (source := catalog.sources.get(profile.algorithm, {}).get(device.device)):
                warnings.append(self._foreign_warning(device, source))
            elif not name:
                if resource is None:
                    message = (
                        f"{self.file_label()} does not name {device}, "
                        f"and {profile.plugin_release or profile.name} skips devices it cannot name"
                    )
                    warnings.append(checks.NameWarning(checks.NOT_ADVERTISED, message))
                else:
                    message = (
                        f"{self.file_label()} gives no name for {device}; "
                        f"the plugin falls back to the device id: {resource}"
                    )
                    warnings.append(checks.NameWarning(checks.UNNAMED_DEVICE, message))
        else:
            vendor_name, device_name = catalog.other_names(device.vendor, device.device)
            name, resource = "", None
            message = f"vendor {device.vendor} is not NVIDIA (10de); the plugin only advertises NVIDIA devices"
            warnings.append(checks.NameWarning(checks.NOT_ADVERTISED, message))
        env = socket = None
        if resource is not None:
            advertised_name = resource.partition("/")[2]
            if profile.is_kata:
                socket = kata.socket_path(advertised_name)  # Allocate sets no variable: env stays None
            else:
                socket = checks.socket_path(advertised_name)
                env = checks.env_var(resource)
            warnings.extend(checks.name_warnings(advertised_name, socket))
            if alias is None:  # an alias's sharing is the shared-alias warning
                collision = checks.collision_warning(device.device, resource, self.by_resource().get(resource, ()))
                if collision:
                    warnings.append(collision)
        return {
            "device": str(device),
            "profile": profile.name,
            "algorithm": profile.algorithm,
            "plugin_release": profile.plugin_release,
            "name": name,
            "resource_name": resource,
            "advertised": checks.is_advertised(resource, [w.code for w in warnings]),
            "vendor_name": valid_text(vendor_name),
            "device_name": valid_text(device_name),
            "pci_ids_version": self.version_label(),
            "pci_ids_sha256": catalog.sha256,
            "env_var": env,
            "socket_path": socket,
            "plugin": profile.plugin,
            "alias": alias,
            "warnings": [w.to_dict() for w in warnings],
        }


class ResolverLike(Protocol):
    """What the surfaces (kube, host, server) need of a resolver: a
    :class:`Resolver`, or anything answering the same way (a test double,
    a server's pinned generation). Pass one as ``resolver=``; None means
    the library's shared default."""

    def view(self, profile: ProfileLike) -> ProfileView: ...

    def preload(self, profile_names: Iterable[ProfileLike] | None = None, *, strict: bool = True) -> list[str]: ...

    def records(self, devices: Iterable[str], profile: ProfileLike = DEFAULT_PROFILE) -> list[Record]: ...

    def resolve(self, device: str, profile: ProfileLike = DEFAULT_PROFILE) -> Resolution: ...

    def resolve_many(self, devices: Iterable[str], profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]: ...

    def devices(self, profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]: ...

    def reverse(self, resource: str, profile: ProfileLike = DEFAULT_PROFILE) -> list[str]: ...

    def diff(self, old: ProfileLike, new: ProfileLike) -> list[DiffEntry]: ...


class Resolver:
    """Resolves devices against profiles, caching everything it loads.

    The library's functions (:func:`pciname.resolve`, ...) use one shared
    default resolver, which notices a changed pci.ids file the next time a
    profile is looked up (memoised resolutions stay until
    :func:`pciname.clear_caches`). A *pinned* resolver never looks at the
    files again once a profile is loaded: a server builds a new one beside
    the old, preloads it, and swaps the reference, so requests in flight
    finish on the data they started with.
    """

    def __init__(self, *, pinned: bool = False, memo: dict[tuple[object, object], Resolution] | None = None) -> None:
        self.pinned = pinned
        # Pinned: one view per profile for the resolver's life, never evicted
        # (an evicted view would be rebuilt from whatever is on disk then).
        self._views: dict[object, ProfileView] | LRUCache[object, ProfileView] = {} if pinned else LRUCache(maxsize=64)
        self._lock = Lock()
        #: The memo of :meth:`resolve`: (device, profile) -> Resolution. The
        #: default resolver's is :data:`pciname.resolution.answers.memo`, which
        #: :func:`pciname.resolve` reads (and fills from the packaged answers).
        self.memo: dict[tuple[object, object], Resolution] = {} if memo is None else memo

    def view(self, profile: ProfileLike) -> ProfileView:
        if isinstance(profile, Profile) and (profile.alias is not None or profile.nvswitch_alias is not None):
            # A Kata profile with aliases of its own: its release's view, re-aliased
            # (the aliases are a request's: views of them are not kept).
            plain = profile._replace(alias=None, nvswitch_alias=None)
            return self.view(plain.name if plain.kind != "custom" else plain).aliased(profile)
        key: object
        if self.pinned:
            key = profile
        else:
            resolved = as_profile(profile)
            key = (resolved, profile_catalog(resolved).identity)
        with self._lock:
            view = self._views.get(key)
        if view is None:
            view = ProfileView(as_profile(profile))
            with self._lock:
                self._views[key] = view
        return view

    def preload(self, profile_names: Iterable[ProfileLike] | None = None, *, strict: bool = True) -> list[str]:
        """Load the named profiles (default: every installed one) now.

        Returns the canonical names loaded. With ``strict``, a pci.ids file
        with malformed lines raises PciIdsSyntaxError instead of loading.
        """
        from pciname.resolution.snapshots import locate

        if profile_names is None:
            registry = load_registry().profiles.values()
            profile_names = [p.name for p in registry if p.snapshot is None or locate(p.snapshot)]
        loaded = []
        for name in profile_names:
            view = self.view(name)
            if strict and view.catalog.issues:
                from pciname.errors import PciIdsSyntaxError

                raise PciIdsSyntaxError(view.catalog.issues[0], str(view.catalog.path))
            view.by_resource()
            loaded.append(view.profile.name)
        return loaded

    # -- plain records ----------------------------------------------------

    def records(self, devices: Iterable[str], profile: ProfileLike = DEFAULT_PROFILE) -> list[Record]:
        """Each device's resolution as plain data, in order; all-or-nothing
        on malformed input."""
        view = self.view(profile)
        parsed = [parse_device(device) for device in devices]
        return [view.record(device) for device in parsed]

    # -- typed results (pciname.resolution.results) -----------------------------------

    def resolve(self, device: str, profile: ProfileLike = DEFAULT_PROFILE) -> Resolution:
        from pciname.resolution.results import Resolution

        key = (device, profile)
        try:
            hit = self.memo.get(key)
        except TypeError:  # an unhashable argument: let parsing reject it
            hit = None
        if hit is not None:
            return hit
        result = Resolution.from_record(self.view(profile).record(parse_device(device)))
        return answers.remember(self.memo, key, result)  # type: ignore[no-any-return]

    def resolve_many(self, devices: Iterable[str], profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]:
        """:meth:`resolve` of each device, in order, sharing its memo (the same
        objects); every device not remembered is parsed before any is
        resolved, so a malformed one rejects the whole call."""
        from pciname.resolution.results import Resolution

        wanted = list(devices)
        try:
            found = [self.memo.get((device, profile)) for device in wanted]
        except TypeError:  # an unhashable argument: let parsing reject it
            found = [None] * len(wanted)
        missing = [(i, parse_device(wanted[i])) for i, hit in enumerate(found) if hit is None]
        if missing:
            view = self.view(profile)
            for i, device in missing:
                result = Resolution.from_record(view.record(device))
                found[i] = answers.remember(self.memo, (wanted[i], profile), result)
        return found  # type: ignore[return-value]  # every None was filled

    def devices(self, profile: ProfileLike = DEFAULT_PROFILE) -> list[Resolution]:
        """A resolution for every NVIDIA device id the profile knows of."""
        from pciname.resolution.results import Resolution

        view = self.view(profile)
        return [Resolution.from_record(view.record(DeviceId(NVIDIA_VENDOR_ID, i))) for i in view.universe()]

    def reverse(self, resource: str, profile: ProfileLike = DEFAULT_PROFILE) -> list[str]:
        view = self.view(profile)
        wanted = checks.reverse_query(resource)
        ids = set(view.by_resource().get(wanted, ()))
        tail = wanted.partition("/")[2]
        # A device pci.ids does not name is advertised under its own id.
        if re.fullmatch(r"[0-9a-fA-F]{4}", tail) and view.resource(tail.lower()) == wanted:
            ids.add(tail.lower())
        return [f"{NVIDIA_VENDOR_ID}:{device_id}" for device_id in sorted(ids)]

    def diff(self, old: ProfileLike, new: ProfileLike) -> list[DiffEntry]:
        from pciname.resolution.results import DiffEntry

        before, after = self.view(old), self.view(new)
        entries = []
        for device_id in sorted(set(before.universe()) | set(after.universe())):
            was, now = before.resource(device_id), after.resource(device_id)
            if was != now:
                entries.append(DiffEntry(f"{NVIDIA_VENDOR_ID}:{device_id}", was, now))
        return entries

    def clear(self) -> None:
        with self._lock:
            self._views.clear()
            self.memo.clear()


_default = Resolver(memo=answers.memo)


def default_resolver() -> Resolver:
    """The resolver the library's module-level functions share."""
    return _default


def resolver_or_default(resolver: ResolverLike | None) -> ResolverLike:
    """``resolver``, or the shared default when None (what ``resolver=None``
    means in every function that takes one)."""
    return _default if resolver is None else resolver
