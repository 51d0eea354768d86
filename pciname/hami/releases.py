"""HAMi's facts per release, as :mod:`tools.hami_extract` read them from
HAMi's tags (``data/hami/releases.json``): the chart's resource names, the
values key and labels of the device plugin's node selector, the split count
each GPU is advertised with, the defaults of a request that leaves out
``gpumem`` or ``gpucores``, and the HAMi-core (``libvgpu``) commit with how
its code finds the real ``dlsym``. Each fact says where it was read
(``Project-HAMi/HAMi@COMMIT PATH:LINE``). Per Cozystack release, the HAMi
its chart ships and the tenant values key that turns it on (:func:`cozystack`)."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from pciname.base.paths import hami_releases_path
from pciname.errors import PcinameError

REPOSITORY = "Project-HAMi/HAMi"
CORE_REPOSITORY = "Project-HAMi/HAMi-core"
COZYSTACK_REPOSITORY = "cozystack/cozystack"


@dataclass(frozen=True)
class Names:
    """The chart's resource names (values ``resourceName`` and the others)."""

    gpu: str
    memory: str
    memory_percentage: str
    cores: str
    priority: str

    def all(self) -> tuple[str, ...]:
        return (self.gpu, self.memory, self.memory_percentage, self.cores, self.priority)


@dataclass(frozen=True)
class DlsymLookup:
    """How one HAMi-core function finds the real ``dlsym``: the ``dlvsym``
    versions it tries, in order, and whether it then calls glibc's private
    ``_dl_sym``."""

    path: str
    function: str
    line: int
    versions: tuple[str, ...]
    falls_back_to_dl_sym: bool


@dataclass(frozen=True)
class Inferred:
    """For a pinned HAMi-core commit the history read lacks: the lookups of
    HAMi-core's main branch at ``source`` (a commit read before the pin), taken
    as the pinned commit's (inferred, not read), and the dates that say why."""

    source: str
    evidence: str
    lookups: tuple[DlsymLookup, ...]


@dataclass(frozen=True)
class Release:
    """One HAMi release's facts."""

    release: str
    commit: str
    names: Names
    node_selector_key: str
    node_selector: dict[str, str]
    node_selector_where: str
    split_count: int
    default_memory_mb: int
    default_cores: int
    libvgpu_commit: str
    #: None when HAMi-core's mirror did not hold the pinned commit (nothing is guessed).
    dlsym_lookups: tuple[DlsymLookup, ...] | None
    #: With no lookups read: HAMi-core main's, inferred (None: nothing inferred).
    inferred: Inferred | None = None

    def where(self, path: str, line: int | None = None) -> str:
        return f"{REPOSITORY}@{self.commit[:12]} {path}" + (f":{line}" if line else "")


def _lookups(code: list[dict[str, Any]]) -> tuple[DlsymLookup, ...]:
    return tuple(
        DlsymLookup(c["path"], c["function"], c["line"], tuple(c["dlvsym_versions"]), c["falls_back_to_dl_sym"])
        for c in code
    )


def _release(row: dict[str, Any]) -> Release:
    names = row["names"]
    selector = row["node_selector"]
    code = row["libvgpu"]["code"]
    inferred = row["libvgpu"].get("inferred")
    return Release(
        release=row["release"],
        commit=row["commit"],
        names=Names(
            names["resourceName"],
            names["resourceMem"],
            names["resourceMemPercentage"],
            names["resourceCores"],
            names["resourcePriority"],
        ),
        node_selector_key=selector["values_key"],
        node_selector=dict(selector["labels"]),
        node_selector_where=f"{REPOSITORY}@{row['commit'][:12]} {selector['path']}:{selector['line']}",
        split_count=int(row["device_split_count"]["value"]),
        default_memory_mb=int(row["defaults"]["memory_mb"]),
        default_cores=int(row["defaults"]["cores"]),
        libvgpu_commit=row["libvgpu"]["commit"],
        dlsym_lookups=None if code is None else _lookups(code),
        inferred=None
        if inferred is None
        else Inferred(inferred["from"], inferred["evidence"], _lookups(inferred["code"])),
    )


@dataclass(frozen=True)
class Shipped:
    """The HAMi one Cozystack release ships (None: none) and the tenant values
    key that turns it on (``addons.hami.enabled``), with where each was read."""

    cozystack: str
    hami: str | None
    values_key: str | None
    where: str

    @property
    def values_path(self) -> tuple[str, ...]:
        return tuple((self.values_key or "").split("."))


@functools.cache
def _document() -> dict[str, Any]:
    with open(hami_releases_path(), encoding="utf-8") as handle:
        found: dict[str, Any] = json.load(handle)
    return found


@functools.cache
def _releases() -> dict[str, Release]:
    return {row["release"]: _release(row) for row in _document()["releases"]}


def cozystack_range() -> str:
    """The Cozystack releases the facts cover, and those that ship HAMi."""
    rows = _document()["cozystack"]["releases"]
    shipping = [row["release"] for row in rows if row["hami"] is not None]
    return f"{rows[0]['release']} to {rows[-1]['release']}; HAMi from {shipping[0]}"


def cozystack(version: str) -> Shipped | None:
    """What Cozystack ``version`` (``v1.6.2``) ships of HAMi; None for a
    release the facts do not cover."""
    for row in _document()["cozystack"]["releases"]:
        if row["release"] == version:
            at = f"{COZYSTACK_REPOSITORY}@{row['commit'][:12]}"
            if row["hami"] is None:
                return Shipped(version, None, None, f"{at}: no packages/system/hami")
            chart, switch = row["chart"], row["switch"]
            where = f"{at} {chart['path']}:{chart['line']}, {switch['path']}:{switch['line']}"
            return Shipped(version, row["hami"], switch["values_key"], where)
    return None


def releases() -> list[str]:
    """Every HAMi release the facts cover, oldest first."""
    return list(_releases())


def release(tag: str) -> Release:
    """The facts of ``tag`` (``v2.8.1``; ``2.8.1`` too), or a
    :class:`~pciname.errors.PcinameError` naming the releases covered."""
    spelled = tag.strip()
    spelled = spelled if spelled.startswith("v") else "v" + spelled
    found = _releases().get(spelled)
    if found is None:
        known = releases()
        raise PcinameError(
            f"HAMi {tag.strip()!r} is not a release pciname knows (final tags {known[0]} to {known[-1]})"
        )
    return found
