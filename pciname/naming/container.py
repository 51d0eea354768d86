"""NVIDIA's container device plugin (NVIDIA/k8s-device-plugin), per release:
the resource names it advertises and the resource labels its GPU Feature
Discovery (GFD) sets, as :mod:`tools.k8s_device_plugin_extract` read them
from each tag (``data/k8s-device-plugin/releases.json``; every fact names
``NVIDIA/k8s-device-plugin@COMMIT PATH:LINE``).

* Names: ``nvidia.com/gpu`` for whole GPUs; MIG devices are ``nvidia.com/gpu``
  too under MIG strategy ``single`` and ``nvidia.com/mig-<profile>`` (``+``
  written as ``.``) under ``mixed``, only for profiles with as many compute
  as GPU instances (C == G: go-nvlib writes those ``<G>g.<GB>gb``, the others
  ``<C>c.<G>g.<GB>gb``); a shared resource renamed by default gets ``.shared``.
* Labels: ``<resource>.product``, ``.count``, ``.replicas``,
  ``.sharing-strategy``, and for whole GPUs ``.memory``, ``.family``,
  ``.compute.major``, ``.compute.minor``. The product is NVML's device name
  (not pci.ids'): pciname takes it as given and never derives it.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from typing import Any

from pciname.base.paths import data_dir
from pciname.errors import PcinameError

REPOSITORY = "NVIDIA/k8s-device-plugin"
#: The MIG strategies (the plugin's ``--mig-strategy``).
MIG_STRATEGIES = ("none", "single", "mixed")
#: A MIG profile as go-nvlib's MigProfileInfo.String writes it: C, G, GB, attributes.
PROFILE = re.compile(r"(?:(\d+)c\.)?(\d+)g\.(\d+)gb(?:[+-][a-z0-9,]+)?")


@dataclass(frozen=True)
class Release:
    """One k8s-device-plugin release's facts (the extractor's row)."""

    tag: str
    commit: str
    facts: dict[str, Any]

    def where(self, fact: dict[str, Any]) -> str:
        return f"{REPOSITORY}@{self.commit[:8]} {fact['path']}:{fact['line']}"

    @property
    def names(self) -> dict[str, Any]:
        return dict(self.facts["names"])

    @property
    def gfd(self) -> dict[str, Any]:
        return dict(self.facts["gfd"])

    def resource(self, name: str) -> str:
        return f"{self.names['prefix']['value']}/{name}"

    def shared(self, resource: str) -> str:
        """The name of ``resource`` shared and renamed by default (``renameByDefault``)."""
        return resource + str(self.names["shared_rename"]["suffix"])

    def mixed_name(self, profile: str) -> str | None:
        """The resource a MIG profile gets under strategy ``mixed``; None when
        the plugin skips it (C != G) or it is not a profile go-nvlib writes."""
        m = PROFILE.fullmatch(profile)
        if m is None or m.group(1) is not None:
            return None  # go-nvlib writes a <C>c. part only when C != G
        mixed = self.names["mig_mixed"]
        old, new = mixed["replace"]
        return self.resource((mixed["prefix"] + profile).replace(old, new))

    def mig_profile(self, name: str) -> str | None:
        """The MIG profile whose ``mixed`` resource is ``name`` (None: no profile's)."""
        mixed = self.names["mig_mixed"]
        old, new = mixed["replace"]
        body = name.removeprefix(self.resource(mixed["prefix"]))
        for candidate in (body, body.replace("gb" + new, "gb" + old, 1)):
            if body != name and self.mixed_name(candidate) == name:
                return candidate
        return None

    def part(self, text: str) -> str:
        """One part of a product label, cleaned as this release cleans it."""
        product = self.gfd["product"]
        if product["rule"] == "spaces":
            return text.replace(" ", product["joiner"])
        return str(product["joiner"]).join(re.sub(product["deleted"], "", text).split())

    def product(self, *parts: str, shared: bool = False, renamed: bool = False) -> str:
        """``<resource>.product``: the cleaned parts joined, ``-SHARED`` when shared and not renamed."""
        product = self.gfd["product"]
        kept = [self.part(p) for p in parts if p]
        if not kept:
            return ""
        if shared and not renamed:
            kept.append(product["shared_part"]["value"])
        return str(product["joiner"]).join(kept)

    def family(self, major: int, minor: int) -> str:
        """getArchFamily: the ``.family`` label of a compute capability."""
        table = self.gfd["families"]
        for case in table["cases"]:
            if major in case["majors"]:
                if "minor_below" in case and minor < case["minor_below"]:
                    return str(case["family_below"])
                return str(case["family"])
        return str(table["otherwise"])

    def families(self) -> tuple[str, ...]:
        """Every ``.family`` value this release can set."""
        table = self.gfd["families"]
        found = [v for case in table["cases"] for v in (case.get("family_below"), case["family"]) if v]
        return (*found, table["otherwise"])


@dataclass(frozen=True)
class Gpus:
    """What GFD labels a node's whole GPUs from: NVML's name (given), how many,
    and optionally memory (MiB), compute capability and sharing."""

    product: str
    count: int
    memory_mib: int | None = None
    compute: tuple[int, int] | None = None
    replicas: int = 1
    renamed: bool = False
    #: ``time-slicing`` or ``mps`` (the values of api/config/v1/sharing.go).
    sharing_strategy: str = "time-slicing"


def gfd_labels(release: Release, gpus: Gpus) -> dict[str, str]:
    """The resource labels GFD sets for ``gpus`` (NVIDIA/k8s-device-plugin
    ``internal/lm/resource.go``: NewGPUResourceLabeler, baseLabeler): under
    ``nvidia.com/gpu`` even when the shared resource is renamed, which only
    drops the ``-SHARED`` part."""
    gfd = release.gfd
    resource = gfd["full_gpu_resource"]["name"]  # renamed or not: the labeler names the resource shared
    shared = gpus.replicas > 1
    base = dict(
        zip(
            gfd["base_labels"]["suffixes"],
            (
                release.product(gpus.product, shared=shared, renamed=gpus.renamed),
                str(gpus.count),
                str(gpus.replicas),
                gpus.sharing_strategy if shared else gfd["sharing_strategies"]["values"]["None"],
            ),
            strict=True,
        )
    )
    if gpus.memory_mib:
        base[gfd["memory_label"]["suffix"]] = str(gpus.memory_mib)
    if gpus.compute is not None and gpus.compute[0] != 0:
        major, minor = gpus.compute
        values = (release.family(major, minor), str(major), str(minor))
        base.update(zip(gfd["architecture_labels"]["suffixes"], values, strict=True))
    return {f"{resource}.{suffix}": value for suffix, value in sorted(base.items())}


@functools.cache
def releases() -> dict[str, Release]:
    """Every release, oldest first."""
    document = json.loads((data_dir() / "k8s-device-plugin" / "releases.json").read_text(encoding="utf-8"))
    return {row["release"]: Release(row["release"], row["commit"], row) for row in document["releases"]}


def release(tag: str | None = None) -> Release:
    """The release ``tag`` (None or ``latest``: the newest); an unknown one is a one-line error."""
    known = releases()
    if tag is None or tag == "latest":
        return known[list(known)[-1]]
    if tag not in known:
        tags = list(known)
        raise PcinameError(f"unknown k8s-device-plugin release {tag!r}: pciname knows {tags[0]} .. {tags[-1]}")
    return known[tag]
