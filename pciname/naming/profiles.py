"""Naming profiles: which algorithm runs on which pci.ids file.

A profile is what a given deployment computes names with:

* ``kubevirt-gpu-device-plugin@vX.Y.Z``: a plugin release (algorithm and the
  pci.ids file inside its image, known by sha256);
* ``gpu-operator@vX.Y.Z``: a GPU Operator release, i.e. the sandbox device
  plugin release it deploys;
* ``cozystack@vX.Y.Z``: a Cozystack release, i.e. the sandbox device plugin
  release its GPU Operator chart deploys (``cozystack@latest``: the newest
  known; the facts are ``data/cozystack/releases.json``);
* ``sandbox-device-plugin@v0.0.Z``: a release of NVIDIA's Kata sandbox device
  plugin (its own family, :mod:`pciname.naming.kata`; ``@latest``: the
  newest), and ``gpu-operator@vX.Y.Z+kata``: a GPU Operator release in Kata
  mode (``sandboxWorkloads.mode: kata``), i.e. the Kata plugin release it
  deploys (the facts are ``data/kata/releases.json``). A Kata profile
  carries the ``P_GPU_ALIAS`` and ``NVSWITCH_ALIAS`` it runs with
  (:func:`with_aliases`; None: unset, as the operator leaves them);
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

from pciname.base.paths import (
    cozystack_releases_path,
    embedded_pciids_path,
    embedded_profiles_path,
    kata_releases_path,
)
from pciname.errors import PcinameError, UnknownProfileError
from pciname.naming import checks, kata
from pciname.naming.algorithms import GO_NVLIB, VENDOR_SECTION, check_algorithm
from pciname.naming.mdev import DEFAULT_MDEV_NAME, check_mdev_rule

PLUGIN = checks.KUBEVIRT_PLUGIN
GPU_OPERATOR = "gpu-operator"
COZYSTACK = "cozystack"
#: The Kata plugin family's profile kinds: its releases, and GPU Operator
#: releases in Kata mode (spelled ``gpu-operator@vX.Y.Z+kata``).
KATA_PLUGIN = kata.KATA_PLUGIN
KATA_OPERATOR = "gpu-operator-kata"
KATA_MODE = "+kata"
#: Which plugin a profile's names are those of (:attr:`Profile.plugin`).
KUBEVIRT_FAMILY = PLUGIN
KATA_KINDS = (KATA_PLUGIN, KATA_OPERATOR)
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


# "sandbox-device-plugin" was an old spelling of the KubeVirt plugin (its
# image is nvidia-sandbox-device-plugin too): its v1.x releases still mean
# that; v0.0.x and "latest" mean the Kata plugin, whose repository has the name.
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
        "discovery mdev_leak plugin alias nvswitch_alias alias_unset nvswitch_unset classes sources",
        defaults=(
            UNNAMED_DEVICE_ID,
            None,
            None,
            None,
            None,
            "",
            (),
            DEFAULT_MDEV_NAME,
            PER_FUNCTION,
            False,
            PLUGIN,
            None,
            None,
            "",
            None,
            None,
            None,
        ),
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

    ``plugin`` is the plugin family whose names these are
    (``kubevirt-gpu-device-plugin``, or the Kata ``sandbox-device-plugin``).
    For the Kata family: ``alias`` and ``nvswitch_alias`` are the values of
    ``P_GPU_ALIAS`` and ``NVSWITCH_ALIAS`` (None: unset), ``alias_unset`` and
    ``nvswitch_unset`` what the release takes for an unset one (``""``: the
    per-model name; ``nvswitch_unset`` None: the release has no NVSwitch
    alias, ``P_GPU_ALIAS`` names every device), ``classes`` the PCI classes
    it takes (None: any NVIDIA function bound to vfio-pci) and ``sources``
    the release facts' sources (repo, commit, paths).
    """

    __slots__ = ()

    @property
    def pci_ids_label(self) -> str | None:
        """The pci.ids version this profile is known to use, without reading it."""
        return self.snapshot.key if self.snapshot else None

    @property
    def is_kata(self) -> bool:
        return bool(self.plugin == KATA_PLUGIN)

    def alias_in_force(self, nvswitch: bool = False) -> str:
        """The ``<name>`` every device of the kind is advertised as (``""``:
        none, each model its own name)."""
        if nvswitch and self.nvswitch_unset is not None:
            return kata.effective_alias(self.nvswitch_alias, self.nvswitch_unset)
        return kata.effective_alias(self.alias, self.alias_unset) if self.is_kata else ""


class Registry:
    """Every known profile, by canonical name, in release order."""

    __slots__ = ("cozystack_latest", "cozystack_missing", "kata_latest", "latest_plugin", "profiles")

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
        #: The newest Kata sandbox device plugin release (``sandbox-device-plugin@latest``).
        self.kata_latest: str | None = None

    def get(self, spelling: str) -> Profile:
        canonical = canonical_name(spelling, self)
        return self.profiles[canonical]

    def plugin_releases(self) -> list[Profile]:
        return [p for p in self.profiles.values() if p.kind == "plugin"]

    def operator_releases(self) -> list[Profile]:
        return [p for p in self.profiles.values() if p.kind == "gpu-operator"]

    def cozystack_releases(self) -> list[Profile]:
        return [p for p in self.profiles.values() if p.kind == COZYSTACK]

    def kata_releases(self) -> list[Profile]:
        return [p for p in self.profiles.values() if p.kind == KATA_PLUGIN]

    def kata_operator_releases(self) -> list[Profile]:
        return [p for p in self.profiles.values() if p.kind == KATA_OPERATOR]


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
    kata_mode = family in _OPERATOR_ALIASES and version.endswith(KATA_MODE)
    if kata_mode:
        name = f"{GPU_OPERATOR}@{_canonical_version(version[: -len(KATA_MODE)])}{KATA_MODE}"
    elif family == KATA_PLUGIN and (version.strip() == LATEST or _canonical_version(version).startswith("v0.")):
        release = registry.kata_latest if version.strip() == LATEST else _canonical_version(version)
        name = f"{KATA_PLUGIN}@{release}"
    elif family in _PLUGIN_ALIASES:
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
        if kata_mode and name.removesuffix(KATA_MODE) in registry.profiles:
            release = name.partition("@")[2].removesuffix(KATA_MODE)
            kata_ones = [p.name.split("@")[1] for p in registry.kata_operator_releases()]
            raise UnknownProfileError(
                f"profile {spelling!r}: GPU Operator {release} deploys no Kata sandbox device plugin (its "
                f"values.yaml has no kataSandboxDevicePlugin); Kata mode exists in "
                f"{GPU_OPERATOR}@{{{kata_ones[0]}..{kata_ones[-1]}}}"
            )
        raise UnknownProfileError(_unknown_message(spelling, registry))
    return name


def _unknown_message(spelling: str, registry: Registry) -> str:
    plugins = [p.name.split("@")[1] for p in registry.plugin_releases()]
    operators = [p.name.split("@")[1] for p in registry.operator_releases()]
    cozystacks = [p.name.split("@")[1] for p in registry.cozystack_releases()]
    cozystack = f", {COZYSTACK}@{{{cozystacks[0]}..{cozystacks[-1]}}} or {COZYSTACK}@{LATEST}" if cozystacks else ""
    katas = [p.name.split("@")[1] for p in registry.kata_releases()]
    kata_ops = [p.name.split("@")[1] for p in registry.kata_operator_releases()]
    kata_text = (
        f"; for Kata: {KATA_PLUGIN}@{{{katas[0]}..{katas[-1]}}} or {GPU_OPERATOR}@{{{kata_ops[0]}..{kata_ops[-1]}}}"
        if katas and kata_ops
        else ""
    )
    return (
        f"unknown profile {spelling!r}: use {LATEST}, {PREVIEW}, "
        f"{PLUGIN}@{{{plugins[0]}..{plugins[-1]}}}{',' if cozystack else ' or'} "
        f"{GPU_OPERATOR}@{{{operators[0]}..{operators[-1]}}}{cozystack}{kata_text} "
        "(see `pciname profiles`)"
    )


def build_registry(
    facts: dict[str, Any], cozystack: dict[str, Any] | None = None, kata_facts: dict[str, Any] | None = None
) -> Registry:
    """The registry from the contents of profiles.json (and of the Cozystack
    release facts, ``data/cozystack/releases.json``: each release a profile
    like a GPU Operator release's, named by the plugin its chart deploys; and
    of the Kata facts, ``data/kata/releases.json``: :func:`_kata_profiles`)."""
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
    registry = Registry(profiles, latest_plugin, newest, missing)
    if kata_facts is not None:
        registry.kata_latest = _kata_profiles(kata_facts, snapshots, profiles)
    return registry


def _kata_profiles(facts: dict[str, Any], snapshots: dict[str, Snapshot], profiles: dict[str, Profile]) -> str | None:
    """Add the Kata plugin's releases and the GPU Operator's Kata-mode
    releases to ``profiles``; the newest plugin release.

    The pci.ids of a release is the one its facts name by sha256 (v0.0.1:
    the image's ``/usr/pci.ids``; later: go-nvlib's embedded copy, which it
    reads unless the image holds a system pci.ids, a fact git cannot
    establish: the profile's note says so)."""
    by_sha = {snap.sha256: snap for snap in snapshots.values()}
    repo = facts["plugin_repository"]
    items = sorted(facts["plugin_releases"].items(), key=lambda kv: _version_key(kv[0]))
    for version, entry in items:
        pci_ids = entry["pci_ids"]
        snapshot = by_sha.get(pci_ids["sha256"])
        if snapshot is None:
            raise PcinameError(
                f"{KATA_PLUGIN}@{version}: its pci.ids (sha256 {pci_ids['sha256']}) is no known snapshot"
            )
        aliases = entry["aliases"]
        nvswitch = aliases["NVSWITCH_ALIAS"]
        established = pci_ids.get("established")
        note = f"pci.ids {pci_ids['version']} ({pci_ids['path']})" + (
            f"; inferred: {established}" if established else ""
        )
        name = f"{KATA_PLUGIN}@{version}"
        profiles[name] = Profile(
            name=name,
            kind=KATA_PLUGIN,
            algorithm=check_algorithm(entry["algorithm"]),
            released=entry.get("date"),
            plugin_release=version,
            snapshot=snapshot,
            note=note,
            discovery=PER_GROUP,
            plugin=KATA_PLUGIN,
            alias_unset=aliases["P_GPU_ALIAS"]["unset"],
            nvswitch_unset=nvswitch["unset"] if nvswitch else None,
            classes=tuple(int(c, 16) for c in entry["classes"]) if entry["classes"] else None,
            sources=(repo, entry["commit"], tuple(sorted(set(entry["sources"].values())))),
        )
    latest = items[-1][0] if items else None
    if latest is not None:
        name = f"{KATA_PLUGIN}@{latest}"
        profiles[name] = profiles[name]._replace(aliases=(f"{KATA_PLUGIN}@{LATEST}",))
    operator_repo = facts["operator_repository"]
    for version, entry in sorted(facts["operator_releases"].items(), key=lambda kv: _version_key(kv[0])):
        plugin = profiles[f"{KATA_PLUGIN}@{entry['plugin']}"]
        name = f"{GPU_OPERATOR}@{version}{KATA_MODE}"
        profiles[name] = plugin._replace(
            name=name,
            kind=KATA_OPERATOR,
            released=entry.get("date"),
            aliases=(),
            note=f"deploys {plugin.name} in Kata mode (sandboxWorkloads.mode: kata); {plugin.note}",
            sources=(operator_repo, entry["commit"], tuple(sorted({*entry["sources"].values()} - {"see mode.source"}))),
        )
    return latest


def with_aliases(profile: Profile, alias: str | None = None, nvswitch_alias: str | None = None) -> Profile:
    """``profile`` run with ``P_GPU_ALIAS=alias`` and ``NVSWITCH_ALIAS=nvswitch_alias``
    (None: unset; ``""``: set to empty). Only Kata profiles read them:
    PcinameError for another; and a release without an NVSwitch alias
    (v0.0.1) refuses ``nvswitch_alias``."""
    if alias is None and nvswitch_alias is None:
        return profile
    if not profile.is_kata:
        raise PcinameError(
            f"--alias and --nvswitch-alias are the Kata sandbox device plugin's ({kata.PGPU_ALIAS_ENV}, "
            f"{kata.NVSWITCH_ALIAS_ENV}); {profile.name} is not a {KATA_PLUGIN} profile"
        )
    if nvswitch_alias is not None and profile.nvswitch_unset is None:
        raise PcinameError(
            f"--nvswitch-alias: {profile.name} reads no {kata.NVSWITCH_ALIAS_ENV} ({profile.plugin_release} has only "
            f"{kata.PGPU_ALIAS_ENV}, which names every device)"
        )
    for flag, value in (("--alias", alias), ("--nvswitch-alias", nvswitch_alias)):
        if value and value != value.strip():
            raise PcinameError(f"{flag}: {value!r} has blanks around it; the plugin uses the value as is")
    return profile._replace(alias=alias, nvswitch_alias=nvswitch_alias)


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
    try:
        with open(kata_releases_path(), encoding="utf-8") as handle:
            kata_facts = json.load(handle)
    except FileNotFoundError:
        kata_facts = None
    return build_registry(facts, cozystack, kata_facts)


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
    """Any algorithm over any pci.ids file (go-nvlib: as the Kata plugin's
    newest release, with its alias defaults)."""
    check_algorithm(algorithm)
    resolved = Path(path)
    custom = Profile(
        name=f"custom:{algorithm}:{resolved}",
        kind="custom",
        algorithm=algorithm,
        path=resolved,
        note=f"{algorithm} over {resolved}",
    )
    if algorithm == GO_NVLIB:
        newest = load_registry().kata_latest
        model = load_registry().profiles[f"{KATA_PLUGIN}@{newest}"]
        custom = custom._replace(
            plugin=KATA_PLUGIN,
            discovery=PER_GROUP,
            alias_unset=model.alias_unset,
            nvswitch_unset=model.nvswitch_unset,
            classes=model.classes,
        )
    return custom
