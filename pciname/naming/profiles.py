"""Naming profiles: which algorithm runs on which pci.ids file.

A profile is what a given deployment computes names with:

* ``kubevirt-gpu-device-plugin@vX.Y.Z``: a plugin release (algorithm and the
  pci.ids file inside its image, known by sha256);
* ``gpu-operator@vX.Y.Z``: a GPU Operator release, i.e. the sandbox device
  plugin release it deploys;
* ``cozystack@vX.Y.Z``: a Cozystack release, i.e. the sandbox device plugin
  release its GPU Operator chart deploys (``cozystack@latest``: the newest
  known; the facts are ``data/cozystack/releases.json``);
* ``latest``: the newest plugin release, the one the newest GPU Operator
  deploys (an alias: its canonical name is that release's); the default,
  because it is what clusters advertise;
* ``preview``: vendor-section over the newest Debian pci.ids that ships with
  pciname (``data/pci.ids``): names that no release advertises yet, for a
  plugin that may one day carry that file (``embedded`` is its old name);
* a custom profile: any algorithm over any file (:func:`custom_profile`).

The facts come from ``data/profiles.json``. Spellings are forgiving
(``v1.2.2``, ``plugin@1.2.2``, ``GPU-Operator@23.9.2``); :attr:`Profile.name`
is the canonical one.
"""

from __future__ import annotations

import re
from collections import namedtuple
from functools import lru_cache
from pathlib import Path
from typing import Any

from pciname.base.paths import cozystack_releases_path, embedded_pciids_path, embedded_profiles_path
from pciname.errors import PcinameError, UnknownProfileError
from pciname.naming.algorithms import VENDOR_SECTION, check_algorithm
from pciname.naming.mdev import DEFAULT_MDEV_NAME, check_mdev_rule

PLUGIN = "kubevirt-gpu-device-plugin"
GPU_OPERATOR = "gpu-operator"
COZYSTACK = "cozystack"
PREVIEW = "preview"
LEGACY_PREVIEW = "embedded"  # the preview's name before 0.2: still accepted
from pciname.naming import DEFAULT_PROFILE as DEFAULT_PROFILE, LATEST as LATEST  # noqa: E402  (defined once, light to import)

# Unnamed devices: v1.0.1+ advertise the id itself, v1.0.0 skips the device.
UNNAMED_DEVICE_ID = "device-id"
UNNAMED_NOT_ADVERTISED = "not-advertised"

# What a kubelet device is (``discovery`` in profiles.json): an IOMMU group
# (its number is the device ID; up to v1.4.0) or a PCI function (its address
# is the device ID; v1.5.0 and later, and custom and preview profiles).
PER_GROUP = "per-group"
PER_FUNCTION = "per-function"
DISCOVERIES = (PER_GROUP, PER_FUNCTION)


def check_discovery(discovery: str) -> str:
    """``discovery`` if it is a known discovery unit, else PcinameError."""
    if discovery not in DISCOVERIES:
        raise PcinameError(f"unknown discovery {discovery!r}: use one of {', '.join(DISCOVERIES)}")
    return discovery


_PLUGIN_ALIASES = (PLUGIN, "plugin", "sandbox-device-plugin", "kubevirt-gpu-device-plugin")
_OPERATOR_ALIASES = (GPU_OPERATOR, "operator", "gpu-operator")
_COZYSTACK_ALIASES = (COZYSTACK,)


# Value types are named tuples rather than dataclasses: they are built on
# every start-up, and `pciname lookup` is measured against `python -c pass`.


class Snapshot(namedtuple("Snapshot", "key sha256 size url note", defaults=("",))):
    """A pci.ids file a plugin image carries, known by its sha256.

    ``key`` is the file's Version (e.g. ``2023.05.23``), or the date it was
    added for files without one; ``size`` in bytes; ``url`` upstream.
    """

    __slots__ = ()

    @property
    def filename(self) -> str:
        return f"{self.key}.ids"


class Profile(
    namedtuple(
        "Profile",
        "name kind algorithm unnamed_device released plugin_release snapshot path note aliases mdev_name "
        "discovery mdev_leak",
        defaults=(UNNAMED_DEVICE_ID, None, None, None, None, "", (), DEFAULT_MDEV_NAME, PER_FUNCTION, False),
    )
):
    """One way of computing names: an algorithm over one pci.ids file.

    ``name`` is the canonical spelling; ``kind`` is ``plugin``,
    ``gpu-operator``, ``cozystack``, ``preview`` or ``custom``; ``plugin_release`` is the
    plugin release whose names these are; the file is ``snapshot`` (known by
    sha256) or, when that is None, ``path``; ``mdev_name`` is the rule its
    plugin names vGPU types by (:mod:`pciname.naming.mdev`: ``second-field``
    in v1.0.x, ``whitespace-runs`` after; custom and preview profiles follow
    the newest releases). ``discovery`` is what one kubelet device is
    (:data:`PER_GROUP` up to v1.4.0, :data:`PER_FUNCTION` after) and
    ``mdev_leak`` whether each vGPU type's plugin also lists the mdevs of the
    types before it (v1.1.1 and earlier), both read by :mod:`pciname.host.sysfs`.
    """

    __slots__ = ()

    @property
    def pci_ids_label(self) -> str | None:
        """The pci.ids version this profile is known to use, without reading it."""
        return self.snapshot.key if self.snapshot else None


class Registry:
    """Every known profile, by canonical name, in release order."""

    __slots__ = ("cozystack_latest", "cozystack_missing", "latest_plugin", "profiles")

    def __init__(
        self,
        profiles: dict[str, Profile],
        latest_plugin: str,
        cozystack_latest: str | None = None,
        cozystack_missing: dict[str, str] | None = None,
    ) -> None:
        self.profiles = profiles
        self.latest_plugin = latest_plugin
        #: The newest known Cozystack release (``cozystack@latest``).
        self.cozystack_latest = cozystack_latest
        #: Cozystack releases whose plugin release has no profile: release -> plugin.
        self.cozystack_missing = cozystack_missing or {}

    def get(self, spelling: str) -> Profile:
        canonical = canonical_name(spelling, self)
        return self.profiles[canonical]

    def plugin_releases(self) -> list[Profile]:
        return [p for p in self.profiles.values() if p.kind == "plugin"]

    def operator_releases(self) -> list[Profile]:
        return [p for p in self.profiles.values() if p.kind == "gpu-operator"]

    def cozystack_releases(self) -> list[Profile]:
        return [p for p in self.profiles.values() if p.kind == COZYSTACK]


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _canonical_version(text: str) -> str:
    text = text.strip().lower()
    return text if text.startswith("v") else f"v{text}"


def canonical_name(spelling: str, registry: Registry | None = None) -> str:
    """The canonical name of a profile spelling; UnknownProfileError if none."""
    registry = registry or load_registry()
    text = spelling.strip()
    lowered = text.lower()
    if lowered in (PREVIEW, LEGACY_PREVIEW):
        return PREVIEW
    if lowered in (LATEST, ""):
        return f"{PLUGIN}@{registry.latest_plugin}"
    family, sep, version = lowered.partition("@")
    if not sep:
        # A bare release ("v1.2.2", "1.2.2") means a plugin release.
        family, version = PLUGIN, lowered
    if family in _PLUGIN_ALIASES:
        name = f"{PLUGIN}@{_canonical_version(version)}"
    elif family in _OPERATOR_ALIASES:
        name = f"{GPU_OPERATOR}@{_canonical_version(version)}"
    elif family in _COZYSTACK_ALIASES:
        release = registry.cozystack_latest if version.strip() == LATEST else _canonical_version(version)
        name = f"{COZYSTACK}@{release}"
        missing = registry.cozystack_missing.get(release or "")
        if missing is not None:
            raise UnknownProfileError(
                f"profile {spelling!r}: Cozystack {release} deploys {PLUGIN}@{missing}, which this pciname has no "
                "facts for (its algorithm and pci.ids are unknown): use a newer pciname, or --pciids FILE "
                "--algorithm A with the pci.ids file of that plugin image"
            )
    else:
        name = ""
    if name not in registry.profiles:
        raise UnknownProfileError(_unknown_message(spelling, registry))
    return name


def _unknown_message(spelling: str, registry: Registry) -> str:
    plugins = [p.name.split("@")[1] for p in registry.plugin_releases()]
    operators = [p.name.split("@")[1] for p in registry.operator_releases()]
    cozystacks = [p.name.split("@")[1] for p in registry.cozystack_releases()]
    cozystack = f", {COZYSTACK}@{{{cozystacks[0]}..{cozystacks[-1]}}} or {COZYSTACK}@{LATEST}" if cozystacks else ""
    return (
        f"unknown profile {spelling!r}: use {LATEST}, {PREVIEW}, "
        f"{PLUGIN}@{{{plugins[0]}..{plugins[-1]}}}{',' if cozystack else ' or'} "
        f"{GPU_OPERATOR}@{{{operators[0]}..{operators[-1]}}}{cozystack} "
        "(see `pciname profiles`)"
    )


def build_registry(facts: dict[str, Any], cozystack: dict[str, Any] | None = None) -> Registry:
    """The registry from the contents of profiles.json (and of the Cozystack
    release facts, ``data/cozystack/releases.json``: each release a profile
    like a GPU Operator release's, named by the plugin its chart deploys)."""
    snapshots = {
        key: Snapshot(key, entry["sha256"], int(entry["bytes"]), entry["upstream_url"], entry.get("note", ""))
        for key, entry in facts["snapshots"].items()
    }
    profiles: dict[str, Profile] = {}
    profiles[PREVIEW] = preview_profile()
    plugin_items = sorted(facts["kubevirt_gpu_device_plugin"].items(), key=lambda kv: _version_key(kv[0]))
    for version, entry in plugin_items:
        name = f"{PLUGIN}@{version}"
        profiles[name] = Profile(
            name=name,
            kind="plugin",
            algorithm=check_algorithm(entry["algorithm"]),
            unnamed_device=entry.get("unnamed_device", UNNAMED_DEVICE_ID),
            released=entry.get("released"),
            plugin_release=version,
            snapshot=snapshots[entry["snapshot"]],
            note=entry.get("note", ""),
            mdev_name=check_mdev_rule(entry.get("mdev_name", DEFAULT_MDEV_NAME)),
            discovery=check_discovery(entry["discovery"]),
            mdev_leak=bool(entry["mdev_leak"]),
        )
    latest_plugin = plugin_items[-1][0]
    latest = profiles[f"{PLUGIN}@{latest_plugin}"]
    profiles[latest.name] = latest._replace(aliases=(LATEST,))
    for version, entry in sorted(facts["gpu_operator"].items(), key=lambda kv: _version_key(kv[0])):
        plugin = profiles[f"{PLUGIN}@{entry['sandbox_device_plugin']}"]
        name = f"{GPU_OPERATOR}@{version}"
        profiles[name] = Profile(
            name=name,
            kind="gpu-operator",
            algorithm=plugin.algorithm,
            unnamed_device=plugin.unnamed_device,
            released=entry.get("released"),
            plugin_release=plugin.plugin_release,
            snapshot=plugin.snapshot,
            note=f"deploys {plugin.name}",
            mdev_name=plugin.mdev_name,
            discovery=plugin.discovery,
            mdev_leak=plugin.mdev_leak,
        )
    missing: dict[str, str] = {}
    releases = (cozystack or {}).get("releases", {})
    for version, entry in sorted(releases.items(), key=lambda kv: _version_key(kv[0])):
        plugin_version = entry["sandbox_device_plugin"]["version"]
        deployed = profiles.get(f"{PLUGIN}@{plugin_version}")
        if deployed is None:
            missing[version] = plugin_version
            continue
        plugin = deployed
        name = f"{COZYSTACK}@{version}"
        profiles[name] = Profile(
            name=name,
            kind=COZYSTACK,
            algorithm=plugin.algorithm,
            unnamed_device=plugin.unnamed_device,
            released=entry.get("date"),
            plugin_release=plugin.plugin_release,
            snapshot=plugin.snapshot,
            note=f"deploys {plugin.name} (GPU Operator {entry['gpu_operator']['version']})",
            mdev_name=plugin.mdev_name,
            discovery=plugin.discovery,
            mdev_leak=plugin.mdev_leak,
        )
    newest = max(releases, key=_version_key) if releases else None
    if newest is not None and newest not in missing:
        name = f"{COZYSTACK}@{newest}"
        profiles[name] = profiles[name]._replace(aliases=(f"{COZYSTACK}@{LATEST}",))
    return Registry(profiles, latest_plugin, newest, missing)


@lru_cache(maxsize=1)
def load_registry() -> Registry:
    """The registry of the embedded profiles.json and Cozystack release facts
    (read once per process)."""
    import json

    with open(embedded_profiles_path(), encoding="utf-8") as handle:
        facts = json.load(handle)
    try:
        with open(cozystack_releases_path(), encoding="utf-8") as handle:
            cozystack = json.load(handle)
    except FileNotFoundError:
        cozystack = None
    return build_registry(facts, cozystack)


def preview_profile() -> Profile:
    """The preview profile, without reading the release facts."""
    return Profile(
        name=PREVIEW,
        kind=PREVIEW,
        algorithm=VENDOR_SECTION,
        path=embedded_pciids_path(),
        note="preview: vendor-section over the newest Debian pci.ids shipped with pciname; no release advertises these names yet",
    )


def get_profile(spelling: str) -> Profile:
    """A profile by any accepted spelling (empty: the default, ``latest``)."""
    if spelling.strip().lower() in (PREVIEW, LEGACY_PREVIEW):
        return preview_profile()
    return load_registry().get(spelling)


def default_profile_help() -> str:
    """How help texts name the default profile."""
    return f"{LATEST}, the newest plugin release: {canonical_name(LATEST)}"


#: The algorithm a pci.ids file of one's own is named with unless one is
#: given: the newest releases' (``--pciids FILE`` without ``--algorithm``).
CUSTOM_ALGORITHM = VENDOR_SECTION


def custom_profile(path: str | Path, algorithm: str = CUSTOM_ALGORITHM) -> Profile:
    """Any of the four algorithms over any pci.ids file."""
    check_algorithm(algorithm)
    resolved = Path(path)
    return Profile(
        name=f"custom:{algorithm}:{resolved}",
        kind="custom",
        algorithm=algorithm,
        path=resolved,
        note=f"{algorithm} over {resolved}",
    )
