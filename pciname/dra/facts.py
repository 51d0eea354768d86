"""The DRA release facts (``data/dra/releases.json``) and the one choice made
from them: which NVIDIA DRA driver, KubeVirt and ``resource.k8s.io`` release
a request's claims are written for.

:func:`choose` takes what the user gave (None: not given) and returns a
:class:`Combination` that works, or raises :class:`DraCombinationError`: one
line with the reason the code gives (a driver that publishes no vfio device,
a KubeVirt that reads the PCI address where the driver does not put it) and
the nearest combination that works. Defaults are the newest of each that
works with what was given, among the driver's tagged releases: ``main``, the
head of the driver's main branch (what the version the GPU Operator deploys
most likely publishes, not a release), is taken only when asked for, by
``main`` or by that version, and :attr:`Combination.certainty` says so.
Releases are ordered as they were released (the driver moved from calendar
versions, v25.12.0, to v0.4.0, and to kubernetes-sigs after v0.4.0).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pciname.base.paths import dra_releases_path
from pciname.errors import PcinameError

#: The ``resource.k8s.io`` versions pciname writes, newest first (the
#: driver's client and chart use the first one the cluster serves).
RESOURCE_APIS = ("v1", "v1beta2", "v1beta1")
#: The versions whose device requests wrap one device request in ``exactly``.
EXACTLY_APIS = ("v1", "v1beta2")


class DraCombinationError(PcinameError):
    """A driver, KubeVirt or API release that is unknown or cannot work together."""


@dataclass(frozen=True)
class Combination:
    """The releases claims are written for, and their facts."""

    driver: str
    kubevirt: str
    resource_api: str
    driver_facts: dict[str, Any]
    kubevirt_facts: dict[str, Any]

    @property
    def vfio(self) -> dict[str, Any]:
        found: dict[str, Any] = self.driver_facts["vfio"]
        return found

    def gates_off_by_default(self) -> list[str]:
        """KubeVirt's DRA feature gates for GPUs that this release leaves off."""
        gates = self.kubevirt_facts["feature_gates"]
        return [name for name in ("GPUsWithDRA",) if not gates[name]["default"]]

    @property
    def certainty(self) -> str:
        """What the driver facts rest on: a tagged release (its repository,
        commit and date), or unreleased main, labelled as such."""
        unreleased = self.driver_facts.get("unreleased")
        if unreleased is not None:
            return str(unreleased["certainty"])
        facts = self.driver_facts
        return f"release {self.driver} ({facts.get('repository', '')} commit {facts['commit']}, {facts['date']})"

    def prepare_crash(self) -> str | None:
        """What crashes this release's kubelet plugin when it prepares a vfio
        claim, and where it is fixed; None when nothing known does."""
        crash = self.vfio.get("prepare_without_sriov") or {}
        if not crash.get("crashes"):
            return None
        later = drivers()[drivers().index(self.driver) + 1 :]
        fixed = next((d for d in later if not _prepare_crashes(d)), None)
        return (
            f"DRA driver {self.driver} crashes (a nil-pointer panic of its kubelet plugin) preparing a vfio claim for "
            f"{crash['gpus']}: {crash['what']} ({crash['source']})" + (f"; fixed in {fixed}" if fixed else "")
        )

    def driver_gates(self) -> list[str]:
        """The driver feature gates a VM's vfio GPU needs on: the vfio gate, and
        DeviceMetadata where KubeVirt reads the PCI address from its metadata files."""
        needed = [self.vfio["gate"]]
        if self.kubevirt_facts["pci_address"]["mechanism"] == "metadata-file":
            needed.append("DeviceMetadata")
        return needed


@lru_cache(maxsize=1)
def facts() -> dict[str, Any]:
    """The shipped facts (read once)."""
    with open(dra_releases_path(), encoding="utf-8") as handle:
        loaded: dict[str, Any] = json.load(handle)
    return loaded


def drivers() -> list[str]:
    """Driver releases in release order."""
    return list(facts()["driver_releases"])


def released() -> list[str]:
    """Driver releases that are tagged (not ``main``), in release order."""
    return [d for d in drivers() if "unreleased" not in facts()["driver_releases"][d]]


def _prepare_crashes(driver: str) -> bool:
    vfio = facts()["driver_releases"][driver]["vfio"]
    return bool((vfio.get("prepare_without_sriov") or {}).get("crashes"))


def kubevirts() -> list[str]:
    """KubeVirt releases in release order."""
    return list(facts()["kubevirt_releases"])


def _canonical(text: str) -> str:
    text = text.strip().lower()
    return text if text.startswith("v") else f"v{text}"


def _modelled(given: str) -> str | None:
    """The release that models ``given``: ``main`` itself, or the version an
    operator release deploys that main models (``v0.5.0``)."""
    text = given.strip().lower()
    if text in facts()["driver_releases"] and "unreleased" in facts()["driver_releases"][text]:
        return text
    for operator in facts().get("operator_releases", {}).values():
        deployed = operator["dra_driver"]
        if deployed.get("modelled_by") and deployed["version"] == _canonical(text):
            return str(deployed["modelled_by"])
    return None


def _known(what: str, given: str, known: list[str], extra: str = "") -> str:
    release = (_modelled(given) if what == "--dra-driver" else None) or _canonical(given)
    if release not in known:
        raise DraCombinationError(
            f"{what} {given!r}: no such release in pciname's facts (known: {', '.join(known)}, from "
            f"{facts()['repositories']['driver' if what == '--dra-driver' else 'kubevirt']} tags){extra}"
        )
    return release


def _works(driver: str, kubevirt: str) -> tuple[bool, str]:
    """Whether the pair works, and the code's reason when not (a driver bug
    spelled out, not referred to)."""
    entry = facts()["compatibility"][driver][kubevirt]
    reason = str(entry.get("reason", ""))
    if "see vfio.enumeration.bug" in reason:
        bug = facts()["driver_releases"][driver]["vfio"]["enumeration"]["bug"]
        reason = f"the driver publishes no vfio device, by a bug: {bug}"
    return bool(entry["works"]), reason


def _nearest(pairs: list[tuple[str, str]], near: tuple[int, int]) -> tuple[str, str] | None:
    """The working pair closest in release order to positions ``near``
    (driver, KubeVirt), the newer on a tie."""
    order = {release: i for i, release in enumerate(drivers())}, {r: i for i, r in enumerate(kubevirts())}
    working = [p for p in pairs if _works(*p)[0]]
    if not working:
        return None
    return min(
        working,
        key=lambda p: (abs(order[0][p[0]] - near[0]) + abs(order[1][p[1]] - near[1]), -order[0][p[0]], -order[1][p[1]]),
    )


def choose(driver: str | None = None, kubevirt: str | None = None, resource_api: str | None = None) -> Combination:
    """The combination for what was given (None: the newest that works with
    the rest); DraCombinationError for an unknown release or a combination
    the code says cannot work, naming the nearest one that does."""
    all_drivers, all_kubevirts = drivers(), kubevirts()
    missing = "; ".join(facts().get("missing", ()))
    chosen_driver = _known("--dra-driver", driver, all_drivers, f"; {missing}" if missing else "") if driver else None
    chosen_kubevirt = _known("--kubevirt", kubevirt, all_kubevirts) if kubevirt else None
    api = (resource_api or RESOURCE_APIS[0]).strip().removeprefix("resource.k8s.io/")
    if api not in RESOURCE_APIS:
        raise DraCombinationError(f"--resource-api {resource_api!r}: use one of {', '.join(RESOURCE_APIS)}")
    given_drivers = [chosen_driver] if chosen_driver else released()
    given_kubevirts = [chosen_kubevirt] if chosen_kubevirt else all_kubevirts
    newest = (all_drivers.index(released()[-1]), len(all_kubevirts) - 1)
    pair = _nearest([(d, k) for d in given_drivers for k in given_kubevirts], newest)
    if pair is None:
        raise DraCombinationError(_refusal(chosen_driver, chosen_kubevirt))
    d, k = pair
    return Combination(d, k, api, facts()["driver_releases"][d], facts()["kubevirt_releases"][k])


def for_driver(driver: str | None = None) -> Combination:
    """One driver release's facts, for what it publishes on a node (which
    needs no KubeVirt): ``driver`` (None: the newest that publishes vfio
    devices) whether or not a KubeVirt release works with it, even one that
    publishes none; DraCombinationError for an unknown release. Its
    ``kubevirt`` is the newest release, not checked against the driver."""
    all_drivers = drivers()
    missing = "; ".join(facts().get("missing", ()))
    chosen = _known("--dra-driver", driver, all_drivers, f"; {missing}" if missing else "") if driver else None
    release = chosen or (_publishing() or released())[-1]
    newest = kubevirts()[-1]
    return Combination(
        release, newest, RESOURCE_APIS[0], facts()["driver_releases"][release], facts()["kubevirt_releases"][newest]
    )


def _publishing() -> list[str]:
    """Tagged releases that publish vfio devices."""
    return [d for d in released() if facts()["driver_releases"][d]["vfio"]["publishes"]]


def _refusal(driver: str | None, kubevirt: str | None) -> str:
    """Why nothing works with what was given, and the nearest combination
    that does (in release order: the given KubeVirt with another driver, the
    given driver with another KubeVirt, or any pair)."""
    all_drivers, all_kubevirts = drivers(), kubevirts()
    best_driver = (_publishing() or all_drivers)[-1]
    if driver and kubevirt:
        why = f"DRA driver {driver} with KubeVirt {kubevirt} cannot work: {_works(driver, kubevirt)[1]}"
    elif driver:
        why = f"DRA driver {driver} works with no KubeVirt release: {_works(driver, all_kubevirts[-1])[1]}"
    else:
        assert kubevirt is not None
        why = f"KubeVirt {kubevirt} works with no DRA driver release: with {best_driver}, {_works(best_driver, kubevirt)[1]}"
    near = (
        all_drivers.index(driver if driver else released()[-1]),
        all_kubevirts.index(kubevirt) if kubevirt else len(all_kubevirts) - 1,
    )
    nearest = _nearest([(d, k) for d in released() for k in all_kubevirts], near)
    if nearest is None:  # pragma: no cover - the shipped facts have a working pair (a test holds it)
        return why
    return f"{why}; nearest that works: --dra-driver {nearest[0]} --kubevirt {nearest[1]}"


__all__ = [
    "EXACTLY_APIS",
    "RESOURCE_APIS",
    "Combination",
    "DraCombinationError",
    "choose",
    "drivers",
    "facts",
    "for_driver",
    "kubevirts",
    "released",
]
