"""NVIDIA's vGPU type catalogue (``data/vgpu-types.json``, written by
``python -m tools.vgpu_catalogue``): which types a GPU supports, the most
instances of each one GPU takes, and the exact ``mdev_type/name`` string
where the prefix evidence (:mod:`pciname.naming.vgpu_prefixes`) knows it.

The catalogue is NVIDIA ``vgpu-device-manager`` ``examples/config-example.yaml``
(its source release and commit are in the data). Its ``default`` config ties
PCI device ids to families; a device id with two families (``10de:25b6``:
A16 or A2; ``10de:1e78``: RTX8000P or RTX6000P) is one die sold as several
boards, and which family a board offers is not in the id. A family that
spans GPUs of different memory (``DC``: RTX PRO 6000 and 4500 Blackwell) has
one count per type, for the largest. The node itself (``pciname scan``)
is exact; the catalogue says what a GPU can offer.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pciname.errors import NotInCatalogueError, PcinameError
from pciname.naming import mdev
from pciname.naming.vgpu_prefixes import READ_ON_HOST, PrefixFact, facts_for, prefix_of

GFX_SUFFIX = "GFX"
#: The manager's vGPU type patterns (pkg/types/vgpu_type.go).
_TIME_SLICED = re.compile(r"(?P<GPU>[A-Z0-9]+(-([a-zA-Z]+))*)-(?P<GB>0|[1-9][0-9]*)(?P<S>A|B|C|Q)\Z")
_MIG_BACKED = re.compile(
    r"(?P<GPU>[A-Z0-9]+)-(?P<G>[1-9])-(?P<GB>0|[1-9][0-9]*)(?P<S>A|B|C|Q)(?P<ATTR>(ME|NOME|MEALL|GFX))?\Z"
)

#: How certain an ``mdev_name`` is: this very string is in a certain source;
#: another type of its family is (the prefix goes by family); only a guest's
#: or a code's string shows the prefix; nothing does.
OBSERVED = "observed"
FAMILY_OBSERVED = "family-observed"
INFERRED = "inferred"
UNKNOWN = "unknown"
CERTAINTIES = (OBSERVED, FAMILY_OBSERVED, INFERRED, UNKNOWN)
#: The certainties ``lint`` flags a selector on.
CERTAIN = (OBSERVED, FAMILY_OBSERVED)


def family_of(type_name: str) -> str | None:
    """The GPU family of a vGPU type (``A10-24Q`` -> ``A10``), None if it is
    not a vGPU type name by the manager's patterns."""
    m = _TIME_SLICED.match(type_name) or _MIG_BACKED.match(type_name)
    return m.group("GPU") if m else None


def type_token(mdev_name: str) -> str:
    """What go-nvlib makes of ``mdev_type/name``: the last space-separated
    token (``NVIDIA A10-24Q`` -> ``A10-24Q``)."""
    return mdev_name.strip().split(" ")[-1]


@dataclass(frozen=True, slots=True)
class Catalogue:
    source: dict[str, str]
    releases: tuple[dict[str, Any], ...]
    devices: dict[str, tuple[str, ...]]
    #: device id -> ((config, count), ...) of the ``default`` config there
    default: dict[str, tuple[tuple[str, int], ...]]
    #: family -> ((config, type, max_instances, since), ...)
    families: dict[str, tuple[tuple[str, str, int, str], ...]]
    family_devices: dict[str, tuple[str, ...]]
    #: type -> families offering it
    type_families: dict[str, tuple[str, ...]] = field(default_factory=dict)

    def board_gb(self, device: str, family: str) -> int | None:
        """The framebuffer of ``device``'s ``family`` board in GB, as its
        ``default`` config gives it (NVIDIA's rule for it: the Q type of half
        the memory, twice; or one type of all of it): type GB x count."""
        for config, count in self.default.get(device, ()):
            m = _TIME_SLICED.match(config)
            if m is not None and m.group("GPU") == family:
                return int(m.group("GB")) * count
        return None

    @property
    def release(self) -> str:
        return self.source["release"]

    @property
    def where(self) -> str:
        """Where the catalogue stops: its source release and commit."""
        s = self.source
        return f"{s['repo']} {s['path']} {s['release']} (commit {s['commit'][:12]})"


def load(data: dict[str, Any]) -> Catalogue:
    families = {
        f: tuple((str(c), str(t), int(n), str(s)) for c, t, n, s in e["types"]) for f, e in data["families"].items()
    }
    type_families: dict[str, list[str]] = {}
    for family, types in families.items():
        for _, vgpu_type, _, _ in types:
            if family not in type_families.setdefault(vgpu_type, []):
                type_families[vgpu_type].append(family)
    return Catalogue(
        source=dict(data["source"]),
        releases=tuple(data["releases"]),
        devices={d: tuple(f) for d, f in data["devices"].items()},
        default={d: tuple((str(c), int(n)) for c, n in e) for d, e in data["default"].items()},
        families=families,
        family_devices={f: tuple(e["devices"]) for f, e in data["families"].items()},
        type_families={t: tuple(f) for t, f in type_families.items()},
    )


@lru_cache(maxsize=1)
def catalogue() -> Catalogue:
    """The packaged catalogue."""
    from pciname.base.paths import data_dir

    with open(data_dir() / "vgpu-types.json", encoding="utf-8") as f:
        return load(json.load(f))


@dataclass(frozen=True, slots=True)
class VgpuType:
    """One vGPU type a GPU supports, as the catalogue and the prefix evidence
    state it, and what the profile's plugin makes of it."""

    device: str
    family: str
    type: str
    vgpu_config: str
    max_instances: int
    since: str
    mdev_name: str | None
    certainty: str
    evidence: PrefixFact | None
    resource_name: str | None
    shared_id: bool  # the device id stands for boards of more than one family
    #: When the family spans boards of different memory and this device's is
    #: smaller than the one the catalogue counts for: the most that fit on
    #: it (time-sliced: board GB // type GB; 0: not offered), inferred.
    inferred_max: int | None = None
    board_note: str | None = None

    def to_dict(self) -> dict[str, Any]:
        e = self.evidence
        return {
            "device": f"10de:{self.device}",
            "family": self.family,
            "type": self.type,
            "vgpu_config": self.vgpu_config,
            "max_instances": self.max_instances,
            "since": self.since,
            "mdev_name": self.mdev_name,
            "mdev_name_certainty": self.certainty,
            "mdev_name_evidence": None
            if e is None
            else {"observed": e.observed, "kind": e.kind, "source": e.source, "driver": e.driver, "located": e.located},
            "resource_name": self.resource_name,
            "inferred_max_instances": self.inferred_max,
            "note": self.note(),
        }

    def note(self) -> str | None:
        parts = []
        if self.mdev_name is None:
            parts.append(f"no observed {self.family} type string: the prefix is unknown; read it with {READ_ON_HOST}")
        elif self.certainty == INFERRED and self.evidence is not None:
            e = self.evidence
            seen = f"{e.kind} evidence" if e.located else f"{e.kind} evidence of unrecorded origin"
            parts.append(f"prefix inferred from {seen} ({e.observed!r}); {READ_ON_HOST} is exact")
        if self.shared_id:
            parts.append(f"10de:{self.device} is more than one board: the node offers only its own family's types")
        if self.board_note is not None:
            parts.append(self.board_note)
        if self.vgpu_config != self.type:
            parts.append(f"config {self.vgpu_config} creates {self.type} vGPUs (the manager strips {GFX_SUFFIX})")
        return "; ".join(parts) or None


def mdev_name_of(family: str, vgpu_type: str, device: str | None = None) -> tuple[str | None, str, PrefixFact | None]:
    """(mdev_type/name string or None, certainty, evidence) of a type."""
    fact = prefix_of(family, device)
    if fact is None:
        return None, UNKNOWN, None
    name = f"{fact.prefix} {vgpu_type}"
    if not fact.certain:
        return name, INFERRED, fact
    exact = [f for f in facts_for(family, device) if f.certain and f.observed == name]
    return (name, OBSERVED, exact[0]) if exact else (name, FAMILY_OBSERVED, fact)


def device_types(device: str, rule: str = mdev.DEFAULT_MDEV_NAME, cat: Catalogue | None = None) -> list[VgpuType]:
    """Every vGPU type the catalogue lists for a 4-digit NVIDIA device id, in
    its order; PcinameError when the catalogue does not cover the id."""
    cat = cat or catalogue()
    families = cat.devices.get(device)
    if families is None:
        raise NotInCatalogueError(
            f"10de:{device} is not in NVIDIA's vGPU type catalogue ({cat.where}: {len(cat.devices)} device ids); "
            f"if the GPU runs vGPUs, read its types with {READ_ON_HOST}"
        )
    out = []
    for family in families:
        boards = {d: cat.board_gb(d, family) for d in cat.family_devices[family]}
        sizes = sorted({gb for gb in boards.values() if gb is not None}, reverse=True)
        board = boards.get(device)
        smaller = board is not None and len(sizes) > 1 and board < sizes[0]
        for config, vgpu_type, count, since in cat.families[family]:
            name, certainty, fact = mdev_name_of(family, vgpu_type, device)
            inferred_max, board_note = None, None
            if smaller:
                assert board is not None
                shown = " and ".join(f"{gb} GB" for gb in sizes)
                m = _TIME_SLICED.match(vgpu_type)
                if m is not None:
                    fit = min(count, board // int(m.group("GB")))
                    if fit < count:
                        inferred_max = fit
                        board_note = (
                            f"the {family} family spans boards of {shown} (by their default configs) and the catalogue "
                            f"counts for the {sizes[0]} GB one: on 10de:{device} ({board} GB) "
                            + (
                                f"at most {fit} fit (inferred)"
                                if fit
                                else f"a {m.group('GB')} GB vGPU does not fit (inferred)"
                            )
                        )
                else:
                    board_note = (
                        f"the {family} family spans boards of {shown}; this MIG-backed count is for the "
                        f"{sizes[0]} GB one, and 10de:{device} has {board} GB"
                    )
            out.append(
                VgpuType(
                    device=device,
                    family=family,
                    type=vgpu_type,
                    vgpu_config=config,
                    max_instances=count,
                    since=since,
                    mdev_name=name,
                    certainty=certainty,
                    evidence=fact,
                    resource_name=None if name is None else mdev.mdev_resource(name, rule),
                    shared_id=len(families) > 1,
                    inferred_max=inferred_max,
                    board_note=board_note,
                )
            )
    return out


def find_type(devices: list[str], wanted: str, rule: str = mdev.DEFAULT_MDEV_NAME) -> VgpuType:
    """The catalogue entry of ``wanted`` (a type or config name, e.g.
    ``A10-24Q``) on one of ``devices``; PcinameError when it belongs to none
    of them, or when its exact string is not known."""
    cat = catalogue()
    for device in devices:
        if device not in cat.devices:
            continue
        for t in device_types(device, rule, cat):
            if wanted in (t.vgpu_config, t.type):
                if t.mdev_name is None:
                    raise PcinameError(
                        f"vGPU type {wanted}: no observed {t.family} type string, so its mdev_type/name (prefix) is "
                        f"unknown; read it with {READ_ON_HOST} and pass it with --mdev"
                    )
                return t
    shown = ", ".join(f"10de:{d}" for d in devices)
    family = family_of(wanted)
    where = cat.family_devices.get(family or "", ())
    hint = f" ({family} types are for {', '.join('10de:' + d for d in where)})" if where else ""
    raise PcinameError(f"vGPU type {wanted} does not belong to {shown} in {cat.where}{hint}")
