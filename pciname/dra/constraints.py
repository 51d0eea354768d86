"""A claim's constraints (``spec.devices.constraints``) against the attributes a
DRA driver release publishes for vfio devices.

Kubernetes' structured allocator (kubernetes/dynamic-resource-allocation at
commit 3d036712930cdac0b0d46c4c21316a78147c551f:
``structured/internal/stable/allocator_stable.go`` ``matchAttributeConstraint.add``
and ``lookupAttribute``; ``structured/internal/experimental/constraint.go``
``distinctAttributeConstraint.add``) fails every device that lacks a
constraint's attribute ("Constraint not satisfied, attribute not set"). It
looks the attribute up by its fully qualified name, or by its bare name when
the domain is the device's driver. A constraint applies to the requests its
``requests`` names (a request also covers its ``firstAvailable``
subrequests), or to every request when it names none.

So a constraint naming an attribute the release never publishes on vfio
devices leaves no device for a request whose every alternative is a request
for the driver's vfio DeviceClass: the claim is never allocated. An attribute
the release publishes only on some nodes or with a gate (``pcieRoot``,
main's ``numaNode``, its Fabric Manager ``partition<N>``) is not such a case.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pciname.dra.facts import Combination, drivers, facts

#: The constraint kinds that read a device attribute.
KEYS = ("matchAttribute", "distinctAttribute")
_GATE = re.compile(r"\bonly with gate (\w+)")


@dataclass(frozen=True)
class Unpublished:
    """A constraint on an attribute the release does not publish for vfio
    devices, the requests it leaves without a device, and the releases that
    do publish it (each with what it takes)."""

    key: str
    attribute: str
    requests: tuple[str, ...]
    publishing: tuple[str, ...]


def _qualified(name: str, driver: str) -> str:
    return name if "/" in name else f"{driver}/{name}"


def _published(release: str, attribute: str) -> str | None:
    """How ``release`` publishes ``attribute`` on vfio devices (None: it does not)."""
    entry = facts()["driver_releases"][release]
    vfio = entry["vfio"]
    if not vfio.get("publishes"):
        return None
    driver = entry["driver_name"]
    for fact in vfio.get("attributes", ()):
        if _qualified(fact["name"], driver) == attribute:
            gate = _GATE.search(fact.get("computed", ""))
            label = f"{release} (unreleased main)" if "unreleased" in entry else release
            return f"{label} with gate {gate.group(1)}" if gate else label
    return None


def publishing(attribute: str) -> tuple[str, ...]:
    """The driver releases that publish ``attribute`` for vfio devices, in release order."""
    found = (_published(release, attribute) for release in drivers())
    return tuple(text for text in found if text is not None)


def dead_requests(targets: list[str], alternatives: dict[str, list[tuple[str, bool]]]) -> tuple[str, ...]:
    """The requests a constraint covering ``targets`` (empty: every request)
    leaves without a device: those whose every alternative (the request, or
    its ``request/subrequest`` ones) the constraint covers and is for the vfio
    DeviceClass. ``alternatives`` maps each request to its alternatives'
    names and whether each is a vfio request."""
    covered = set(targets)
    dead = []
    for name, options in alternatives.items():
        hit = [not covered or name in covered or option in covered for option, _ in options]
        if options and all(hit) and all(vfio for _, vfio in options):
            dead.append(name)
    return tuple(dead)


def check(
    key: str,
    attribute: str,
    targets: list[str],
    alternatives: dict[str, list[tuple[str, bool]]],
    combination: Combination,
) -> Unpublished | None:
    """One constraint (``key`` ``attribute``, over ``targets``) under the
    release of ``combination``: None when the release publishes the
    attribute for vfio devices (on some nodes, or with a gate, is enough) or
    the constraint covers no request that only vfio devices can satisfy."""
    if "/" not in attribute or _published(combination.driver, attribute) is not None:
        return None
    dead = dead_requests(targets, alternatives)
    if not dead:
        return None
    return Unpublished(key, attribute, dead, publishing(attribute))


__all__ = ["KEYS", "Unpublished", "check", "dead_requests", "publishing"]
