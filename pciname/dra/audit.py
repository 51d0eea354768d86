"""Which VMs' DRA claims a cluster's published GPUs can satisfy: the
ResourceSlices of NVIDIA's DRA driver, the DeviceClasses, and each
VirtualMachine's ``resourceClaims`` (a ResourceClaimTemplate or a
ResourceClaim of its namespace) with the ``gpus[]`` that name them.

For each request of a claim a VM uses: whether its DeviceClass exists, and
which published devices its DeviceClass's and its own CEL selectors select,
evaluated as the allocator does (the class's selectors first, then the
request's; ``false`` ends a device's evaluation; of ``firstAvailable``
subrequests, the first that fits). Only the selectors
pciname writes and other conjunctions (``&&``) of equalities between
``device.driver`` or ``device.attributes['<domain>'].<name>`` and a string
(without escapes), integer or ``true``/``false`` literal are evaluated;
for any other expression, and where an attribute a term reads is missing (a
CEL runtime error, which fails the allocation), the verdict is
``cannot-judge`` with why: never a verdict the selectors do not give.

A device a ResourceClaim's ``status.allocation`` holds is not free for
another VM: it counts only for the VM whose claim holds it. A VM's claims
are the ResourceClaim its ``resourceClaimName`` names and the claims
generated from its templates for its launcher pod (the claim's
``resource.kubernetes.io/pod-claim-name`` annotation names the VM's claim,
its controller is the pod KubeVirt names ``virt-launcher-<VM>-<5 random
characters>``: an inference from the name, which the report says).

The devices are the ones the allocator sees (:func:`gather_pools`): per
node, each pool's newest generation only; a pool whose newest generation
names a device twice is invalid and none of its devices counts; an
incomplete one counts to an exact count but not for a request of All
devices. A claim's requests are allocated together, each device once (a
search bounded by :data:`SEARCH_STEPS`, and the caller's deadline), and
never more than :data:`CLAIM_DEVICES_MAX` devices to a claim.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from pciname.dra.cel import Version
from pciname.dra.facts import facts
from pciname.errors import PcinameBaseError

#: An object as the API server sends it (as :data:`pciname.kubevirt.objects.KubeObject`,
#: a room above this one).
KubeObject = dict[str, Any]

__all__ = [
    "CANNOT_JUDGE",
    "CLAIM_DEVICES_MAX",
    "NO_DEVICE_CLASS",
    "SATISFIABLE",
    "SEARCH_STEPS",
    "UNSATISFIABLE",
    "CannotJudge",
    "audit_dra",
    "evaluate",
    "fits_distinct",
    "gather_pools",
    "published",
]

SATISFIABLE, UNSATISFIABLE, CANNOT_JUDGE, NO_DEVICE_CLASS = (
    "satisfiable",
    "unsatisfiable",
    "cannot-judge",
    "no-device-class",
)
_STRING = r"'[^'\\\n]*'|\"[^\"\\\n]*\""
_TERM = re.compile(
    rf"\s*(?:device\.driver|device\.attributes\[(?P<domain>{_STRING})\]\.(?P<name>[A-Za-z_][A-Za-z0-9_]*))"
    rf"\s*==\s*(?P<value>{_STRING}|-?[0-9]+|true|false)\s*"
)


#: What Kubernetes' resource claim controller annotates a claim it generates
#: from a pod's template with: the pod's name for the claim.
POD_CLAIM_NAME = "resource.kubernetes.io/pod-claim-name"
#: The GenerateName of a VM instance's pod, ``"virt-launcher-" + VMI name +
#: "-"`` (kubevirt/kubevirt pkg/virt-controller/services/template.go, v1.9.0
#: f20534373b1a9237666760e2e3f5f27486c4da96), a VMI being named as its VM;
#: Kubernetes appends 5 random characters to a base of at most 58.
LAUNCHER_PREFIX, _GENERATED_BASE, _GENERATED_SUFFIX = "virt-launcher-", 58, 5
NOTE = (
    "a device another claim holds (status.allocation) is not free; a template's claim is a VM's by its"
    f" pod-claim-name annotation and its controller pod {LAUNCHER_PREFIX}<VM>-xxxxx (inferred from KubeVirt's pod names)"
)


class CannotJudge(PcinameBaseError, ValueError):
    """An expression or a device pciname does not evaluate: why."""


@dataclass(frozen=True)
class _Term:
    domain: str | None  # None: device.driver
    name: str
    value: str | int | bool


def _literal(text: str) -> str | int | bool:
    if text in ("true", "false"):
        return text == "true"
    if text[0] in "'\"":
        return text[1:-1]
    return int(text)


@functools.lru_cache(maxsize=1024)
def _terms(expression: str) -> tuple[_Term, ...]:
    """The equalities of a conjunction, read once per expression; CannotJudge for anything else."""
    terms = []
    for part in _split_and(expression):
        match = _TERM.fullmatch(part)
        if match is None:
            raise CannotJudge(f"pciname evaluates only conjunctions of attribute equalities, not {_quoted(expression)}")
        domain = match["domain"]
        terms.append(_Term(domain[1:-1] if domain else None, match["name"] or "driver", _literal(match["value"])))
    return tuple(terms)


#: The most of an expression a why quotes.
_QUOTED = 200


def _quoted(expression: str) -> str:
    """``expression`` as a why quotes it: its start, and its length when it is long."""
    if len(expression) <= _QUOTED:
        return repr(expression)
    return f"{expression[:_QUOTED]!r}... ({len(expression)} characters)"


def _split_and(expression: str) -> list[str]:
    """The expression split at ``&&`` outside string literals."""
    parts, start, quote = [], 0, ""
    for i, char in enumerate(expression):
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif expression.startswith("&&", i) and (i == 0 or expression[i - 1] != "&"):
            parts.append(expression[start:i])
            start = i + 2
    parts.append(expression[start:])
    return parts


def evaluate(expression: str, device: dict[str, Any]) -> bool:
    """Whether ``expression`` selects ``device`` (``driver``, and
    ``attributes`` by domain and name, values typed); :class:`CannotJudge`
    where pciname cannot say."""
    terms = _terms(expression)
    missing = None
    for term in terms:
        if term.domain is None:
            value: Any = device["driver"]
        else:
            value = device["attributes"].get(term.domain, {}).get(term.name, _MISSING)
        if value is _MISSING:
            missing = missing or f"{device['name']} has no attribute {term.domain}/{term.name} (a CEL runtime error)"
            continue
        if type(value) is not type(term.value) or value != term.value:
            return False  # false && anything is false, even an error
    if missing:
        raise CannotJudge(missing)
    return True


_MISSING = object()


# -- what the slices publish -----------------------------------------------------------


def _typed(attribute: Any) -> Any:
    """A DeviceAttribute's value (string, int, bool, version: a semver in
    DRA's CEL, no string); _MISSING otherwise."""
    if isinstance(attribute, dict):
        for key in ("string", "int", "bool", "version"):
            if key in attribute:
                value = attribute[key]
                return Version(value) if key == "version" and isinstance(value, str) else value
    return _MISSING


def published(slices: list[KubeObject], driver: str) -> list[dict[str, Any]]:
    """The devices of ``driver``'s ResourceSlices: name, node, pool and
    attributes by domain (v1beta1's ``basic`` unwrapped)."""
    devices = []
    for item in slices:
        spec = _map(item, "spec")
        if spec.get("driver") != driver:
            continue
        for entry in _dicts(spec.get("devices")):
            body: dict[str, Any] = entry["basic"] if isinstance(entry.get("basic"), dict) else entry
            attributes: dict[str, dict[str, Any]] = {}
            for key, attribute in _map(body, "attributes").items():
                domain, _, name = str(key).rpartition("/")
                value = _typed(attribute)
                if value is not _MISSING:
                    attributes.setdefault(domain or driver, {})[name] = value
            devices.append(
                {
                    "name": str(entry.get("name")),
                    "node": spec.get("nodeName") or "",
                    "pool": _map(spec, "pool").get("name"),
                    "driver": driver,
                    "attributes": attributes,
                }
            )
    return devices


#: Where the allocator's reading of pools is:
#: kubernetes/kubernetes staging/src/k8s.io/dynamic-resource-allocation/structured/internal/stable/pools_stable.go
#: (030880a5dc5449403c6d1f0aa146a7dc21d6c6dc: GatherPools, addSlice, poolIsInvalid) and
#: .../internal/stable/allocator_stable.go (c4b5de207d1f469249888c498a965c58443e6964: validateDeviceRequest,
#: allocateOne).
INVALID_POOL = "the allocator allocates no device of an invalid pool"


def _generation(value: Any) -> int:
    """A pool's generation or slice count as the API gives it (an integer; anything else: 0)."""
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def gather_pools(slices: list[KubeObject], driver: str) -> tuple[list[KubeObject], list[dict[str, Any]]]:
    """The slices of ``driver`` the allocator uses, and its pools as it sees them.

    As GatherPools does for a node: the slices of a pool (its driver and
    name; here per ``spec.nodeName``, the node the driver's slices name) of
    the highest ``spec.pool.generation`` only (an older one is outdated,
    ignored); the pool is incomplete when it has another number of them than
    their ``resourceSliceCount`` says, and invalid when their devices name
    one device twice. allocateOne fails on an invalid pool (none of its
    devices is allocated: its slices are left out here); validateDeviceRequest
    refuses a request for All devices while a pool of the node is incomplete
    or invalid, and otherwise an incomplete pool's devices are allocated."""
    pools: dict[tuple[str, str], list[KubeObject]] = {}
    outdated: dict[tuple[str, str], int] = {}
    for item in slices:
        spec = _map(item, "spec")
        if spec.get("driver") != driver:
            continue
        key = (str(spec.get("nodeName") or ""), str(_map(spec, "pool").get("name")))
        kept = pools.setdefault(key, [])
        generation = _generation(_map(spec, "pool").get("generation"))
        newest = _generation(_map(kept[0], "spec", "pool").get("generation")) if kept else generation
        if generation != newest:
            outdated[key] = outdated.get(key, 0) + (1 if generation < newest else len(kept))
            if generation < newest:
                continue
            kept.clear()
        kept.append(item)
    used: set[int] = set()
    report = []
    for (node, name), kept in pools.items():
        pool = _map(kept[0], "spec", "pool")
        row = {
            "node": node,
            "pool": name,
            "generation": _generation(pool.get("generation")),
            "slices": len(kept),
            "resource_slice_count": pool.get("resourceSliceCount"),
            "outdated_slices": outdated.get((node, name), 0),
        }
        twice = _named_twice(kept)
        if twice is not None:
            report.append(row | {"state": "invalid", "why": f"duplicate device name {twice}"})
            continue
        used.update(id(item) for item in kept)
        if len(kept) != _generation(pool.get("resourceSliceCount")):
            why = (
                f"{len(kept)} of the {pool.get('resourceSliceCount')} ResourceSlices of generation {row['generation']}"
            )
            report.append(row | {"state": "incomplete", "why": why})
        else:
            report.append(row | {"state": "complete"})
    return [item for item in slices if id(item) in used], report


def _named_twice(slices: list[KubeObject]) -> str | None:
    """The first device name the slices list twice (poolIsInvalid)."""
    seen: set[str] = set()
    for item in slices:
        for entry in _dicts(_map(item, "spec").get("devices")):
            name = str(entry.get("name"))
            if name in seen:
                return name
            seen.add(name)
    return None


def _key(driver: Any, pool: Any, device: Any) -> tuple[str, str, str]:
    return str(driver), str(pool), str(device)


def allocated(claims: list[KubeObject]) -> dict[tuple[str, str, str], KubeObject]:
    """The devices the claims' ``status.allocation`` holds, (driver, pool,
    device) -> the claim holding it."""
    held = {}
    for claim in claims:
        for result in _dicts(_map(claim, "status", "allocation", "devices").get("results")):
            held[_key(result.get("driver"), result.get("pool"), result.get("device"))] = claim
    return held


def _launcher_of(pod: str, vm: str) -> bool:
    """Whether ``pod`` is a name Kubernetes generates for KubeVirt's launcher pod of ``vm``."""
    base = (LAUNCHER_PREFIX + vm + "-")[:_GENERATED_BASE]
    return pod.startswith(base) and len(pod) == len(base) + _GENERATED_SUFFIX


def _held_by(claim: KubeObject, namespace: str, vm: str, entry: dict[str, Any]) -> bool:
    """Whether ``claim`` is the claim a VM's ``resourceClaims`` ``entry`` stands for."""
    meta = _map(claim, "metadata")
    if (meta.get("namespace") or "default") != namespace:
        return False
    if entry.get("resourceClaimName"):
        return bool(meta.get("name") == entry["resourceClaimName"])
    if _map(meta, "annotations").get(POD_CLAIM_NAME) != entry.get("name"):
        return False
    return any(
        owner.get("controller") is True and owner.get("kind") == "Pod" and _launcher_of(str(owner.get("name")), vm)
        for owner in _dicts(meta.get("ownerReferences"))
    )


class _Shared(dict[tuple[str, str, str], str]):
    """The devices claims hold, by whom: the one mapping all the VMs no
    claim holds a device of are judged with (:class:`_Held`)."""


class _Held:
    """The devices other claims hold, for a VM's claim: every device a
    claim's ``status.allocation`` holds (``names``: by whom), but the ones of
    the claims that are the VM's (:func:`_held_by`), found through the claims
    by namespace and name or ``pod-claim-name`` annotation, not by a look at each."""

    def __init__(self, held: dict[tuple[str, str, str], KubeObject]) -> None:
        self.names = _Shared((key, f"ResourceClaim {_holder(c)}") for key, c in held.items())
        self.claims: dict[tuple[Any, ...], dict[int, tuple[KubeObject, list[tuple[str, str, str]]]]] = {}
        for key, claim in held.items():
            meta = _map(claim, "metadata")
            namespace = meta.get("namespace") or "default"
            for index in (
                (namespace, "name", meta.get("name")),
                (namespace, "for", _map(meta, "annotations").get(POD_CLAIM_NAME)),
            ):
                if isinstance(index[2], str):
                    self.claims.setdefault(index, {}).setdefault(id(claim), (claim, []))[1].append(key)
        self.everything = list(held.items())

    def taken(self, namespace: str, vm: str, entry: dict[str, Any]) -> dict[tuple[str, str, str], str]:
        named = entry.get("resourceClaimName")
        value = named if named else entry.get("name")
        if isinstance(value, str):
            found = self.claims.get((namespace, "name" if named else "for", value), {}).values()
            own = {key for claim, keys in found if _held_by(claim, namespace, vm, entry) for key in keys}
        else:  # a name of another type: each claim looked at
            own = {key for key, claim in self.everything if _held_by(claim, namespace, vm, entry)}
        return {key: name for key, name in self.names.items() if key not in own} if own else self.names


# -- the audit -------------------------------------------------------------------------

#: The most devices the allocator allocates to one claim: AllocationResultsMaxSize
#: (kubernetes/kubernetes staging/src/k8s.io/api/resource/v1/types.go,
#: 7fc9c57df50702c276dcdc36c1e8f652a923eb16), which Allocate checks against a
#: claim's smallest number of devices (allocator_stable.go, as above).
CLAIM_DEVICES_MAX = 32
#: The steps (edges looked at) the search for distinct devices for a claim's
#: requests may take; past it the requests are cannot-judge.
SEARCH_STEPS = 1_000_000
#: How many devices are judged between two looks at the caller's deadline.
_CHECK_EVERY = 256


def _no_deadline() -> None:
    """No deadline to check."""


@dataclass(frozen=True)
class _Cluster:
    """What every request is judged against: the DeviceClasses by name, the
    devices the allocator uses, why a node refuses a request for All devices
    (its pools that are incomplete or invalid), why devices are not counted
    (the invalid pools), and the caller's deadline (raises once it has passed)."""

    classes: dict[str, Any]
    devices: list[dict[str, Any]]
    not_whole: dict[str, list[str]] = field(default_factory=dict)
    invalid: list[str] = field(default_factory=list)
    check: Callable[[], None] = _no_deadline
    #: The devices each list of expressions selects (or why pciname cannot
    #: say), once per list: VMs made alike ask alike.
    selected: dict[tuple[str, ...], _Selection | CannotJudge] = field(default_factory=dict)


def _selectors(body: dict[str, Any]) -> list[Any]:
    return [_map(s, "cel").get("expression") if isinstance(s, dict) else None for s in _list(body.get("selectors"))]


def _selected(expressions: list[Any], cluster: _Cluster) -> _Selection:
    """The devices all ``expressions`` select; CannotJudge where pciname cannot say."""
    if any(not isinstance(e, str) for e in expressions):
        raise CannotJudge("a selector without a CEL expression")
    known = cluster.selected.get(tuple(expressions))
    if known is None:
        try:
            known = _selecting(expressions, cluster)
        except CannotJudge as why:
            known = why
        cluster.selected[tuple(expressions)] = known
    if isinstance(known, CannotJudge):
        raise known
    return known


def _selecting(expressions: list[str], cluster: _Cluster) -> _Selection:
    matching = []
    for i, device in enumerate(cluster.devices):
        if i % _CHECK_EVERY == 0:
            cluster.check()
        if all(evaluate(e, device) for e in expressions):
            matching.append(device)
    on: dict[str, list[dict[str, Any]]] = {}
    for device in matching:
        on.setdefault(device["node"], []).append(device)
    nodes = {node: [d["name"] for d in devices] for node, devices in on.items()}
    free: dict[str, list[Hashable]] = {node: [(d["pool"], d["name"]) for d in devices] for node, devices in on.items()}
    where = {_key(d["driver"], d["pool"], d["name"]): d["node"] for d in matching}
    return _Selection(on, nodes, free, where)


@dataclass(frozen=True)
class _Selection:
    """The devices a list of expressions selects, by node: the devices, their
    names and keys (pool, name), what a request gets when no other claim
    holds one; and each one's node by its (driver, pool, name)."""

    on: dict[str, list[dict[str, Any]]]
    nodes: dict[str, list[str]]
    free: dict[str, list[Hashable]]
    where: dict[tuple[str, str, str], str]
    #: :func:`_by_node`'s answer for the devices held as :class:`_Shared`
    #: (the one answer for all the VMs no claim holds a device of).
    shared: list[_ByNode] = field(default_factory=list)


_ByNode = tuple[dict[str, list[str]], dict[str, list[Hashable]], dict[str, list[str]]]


def _by_node(selection: _Selection, taken: dict[Any, str]) -> _ByNode:
    """The selected devices by node: the free ones' names and keys, and the
    held ones as "name (holder)"; only the nodes where another claim holds
    one are looked at again."""
    if isinstance(taken, _Shared) and selection.shared:
        return selection.shared[0]
    gone = selection.where.keys() & taken.keys()
    if not gone:
        return selection.nodes, selection.free, {}
    nodes, free, held = dict(selection.nodes), dict(selection.free), {}
    affected = {selection.where[key] for key in gone}
    for node in [n for n in selection.on if n in affected]:
        on = selection.on[node]
        holders = [taken.get(_key(d["driver"], d["pool"], d["name"])) for d in on]
        held[node] = [f"{d['name']} ({h})" for d, h in zip(on, holders, strict=True) if h is not None]
        nodes[node] = [d["name"] for d, h in zip(on, holders, strict=True) if h is None]
        free[node] = [(d["pool"], d["name"]) for d, h in zip(on, holders, strict=True) if h is None]
        if not nodes[node]:
            del nodes[node], free[node]
    if isinstance(taken, _Shared):
        selection.shared.append((nodes, free, held))
    return nodes, free, held


def _judge(request: dict[str, Any], cluster: _Cluster, taken: dict[Any, str]) -> dict[str, Any]:
    """One request's verdict, and the free devices that satisfy it
    (``taken``: the devices other claims hold, and which claim)."""
    if "firstAvailable" in request:
        return _first_available(request, cluster, taken)
    return _exactly(request, cluster, taken)


def _exactly(request: dict[str, Any], cluster: _Cluster, taken: dict[Any, str]) -> dict[str, Any]:
    """A request of one kind of device (or a subrequest: a DeviceSubRequest
    has no ``firstAvailable`` of its own, so one is not read)."""
    body: dict[str, Any] = request["exactly"] if isinstance(request.get("exactly"), dict) else request
    class_name = body.get("deviceClassName")
    row: dict[str, Any] = {"request": request.get("name"), "device_class": class_name, "count": _count(body)}
    if class_name not in cluster.classes:
        return row | {"verdict": NO_DEVICE_CLASS, "why": f"the cluster has no DeviceClass {class_name!r}"}
    try:
        selection = _selected(_selectors(_map(cluster.classes[class_name], "spec")) + _selectors(body), cluster)
    except CannotJudge as why:
        return row | {"verdict": CANNOT_JUDGE, "why": str(why)}
    nodes, free, held = _by_node(selection, taken)
    refused = _refusing_all(nodes, held, cluster) if row["count"] is None else {}
    enough = [n for n, names in nodes.items() if len(names) >= (row["count"] or 1) and n not in refused]
    verdict = SATISFIABLE if enough else UNSATISFIABLE
    elsewhere = [f"{node}: {device}" for node, devices in held.items() for device in devices]
    reason = _why(verdict, row, nodes, cluster.devices, elsewhere)
    if refused and not enough:
        reason = _all_refused(refused)
    usable = {node: keys for node, keys in free.items() if node not in refused}
    return row | {"verdict": verdict, "nodes": nodes, "allocated_elsewhere": elsewhere, "why": reason, "_free": usable}


_ALL = (
    "a request for All devices, which the allocator refuses on a node with a pool it cannot use whole: ",
    "a request for All devices, which the allocator refuses on a node where one is another claim's: ",
)


def _refusing_all(
    nodes: dict[str, list[str]], held: dict[str, list[str]], cluster: _Cluster
) -> dict[str, tuple[str, str]]:
    """The nodes that refuse a request for All devices, and why: a pool of
    the node is incomplete or invalid (validateDeviceRequest), or a device
    it selects there is another claim's (allocateDevice, which must take each)."""
    refused = {}
    for node in nodes:
        if node in cluster.not_whole:
            refused[node] = (_ALL[0], "; ".join(cluster.not_whole[node]))
        elif node in held:
            refused[node] = (_ALL[1], _listed(held[node], ", "))
    return refused


def _all_refused(refused: dict[str, tuple[str, str]]) -> str:
    """Why no node takes a request for All devices (:func:`_refusing_all`), by kind."""
    by_kind: dict[str, list[str]] = {}
    for node, (kind, text) in refused.items():
        by_kind.setdefault(kind, []).append(f"{node}: {text}")
    return "; ".join(kind + _listed(lines) for kind, lines in by_kind.items())


def _first_available(request: dict[str, Any], cluster: _Cluster, taken: dict[Any, str]) -> dict[str, Any]:
    """A request of ``firstAvailable`` subrequests: the allocator takes the
    first subrequest it can allocate, so the request is satisfiable when one
    is, and says which; unsatisfiable when none is and all were judged."""
    name = request.get("name")
    judged = [(sub.get("name"), _exactly(sub, cluster, taken)) for sub in _dicts(request["firstAvailable"])]
    for sub, row in judged:
        if row["verdict"] == SATISFIABLE:
            alternatives = sum(r["verdict"] == SATISFIABLE for _, r in judged) > 1
            why = f"subrequest {sub}: {row['why']}"
            return row | {"request": name, "subrequest": sub, "alternatives": alternatives, "why": why}
    if not judged:
        return {"request": name, "verdict": CANNOT_JUDGE, "why": "firstAvailable lists no subrequest"}
    unjudged = [(sub, row) for sub, row in judged if row["verdict"] == CANNOT_JUDGE]
    shown = "; ".join(f"subrequest {sub}: {row['why']}" for sub, row in unjudged or judged)
    row = {"request": name, "device_class": judged[0][1].get("device_class"), "count": judged[0][1].get("count")}
    if unjudged:
        return row | {"verdict": CANNOT_JUDGE, "why": shown}
    verdict = NO_DEVICE_CLASS if all(r["verdict"] == NO_DEVICE_CLASS for _, r in judged) else UNSATISFIABLE
    return row | {"verdict": verdict, "why": f"no subrequest can be allocated: {shown}"}


def _together(rows: list[dict[str, Any]], check: Callable[[], None]) -> list[dict[str, Any]]:
    """A claim's requests are allocated together, on one node, each device
    once: when each is satisfiable alone but no node has distinct devices for
    all of them, each is unsatisfiable, and says so."""
    if len(rows) < 2 or any(r["verdict"] != SATISFIABLE for r in rows):
        return rows
    try:
        if any(_fit_on(rows, node, check) for node in sorted(set.intersection(*(set(r["_free"]) for r in rows)))):
            return rows
    except CannotJudge as bound:
        return [r | {"verdict": CANNOT_JUDGE, "why": str(bound)} for r in rows]
    if any(r.get("alternatives") for r in rows):
        why = "the requests together, with other firstAvailable subrequests than the first that fits, are not evaluated"
        return [r | {"verdict": CANNOT_JUDGE, "why": why} for r in rows]
    why = f"no node publishes distinct selected devices for all {len(rows)} requests of the claim together"
    held = sorted({device for r in rows for device in r["allocated_elsewhere"]})
    if held:
        why = f"no node has distinct free selected devices for all {len(rows)} requests of the claim together"
        why += f" (allocated to other claims: {_listed(held)})"
    return [r | {"verdict": UNSATISFIABLE, "why": why} for r in rows]


def _fit_on(rows: list[dict[str, Any]], node: str, check: Callable[[], None]) -> bool:
    """Whether ``node``'s free selected devices give each request its count
    (All: every one it selects) of devices of its own."""
    return fits_distinct([(r["count"] or len(r["_free"][node]), r["_free"][node]) for r in rows], check=check)


def fits_distinct(
    demands: list[tuple[int, list[Hashable]]], *, steps: int = SEARCH_STEPS, check: Callable[[], None] = _no_deadline
) -> bool:
    """Whether each demand (a number of devices, and the devices that may
    serve it) gets that many devices of its own, no device serving two.

    A maximum flow from the demands to the devices, where the devices
    selected by the same demands are one group (interchangeable), found by
    augmenting along shortest paths (Edmonds-Karp), iteratively: no
    recursion, whatever the counts. :class:`CannotJudge` past ``steps``
    edges looked at; ``check`` (the caller's deadline) is called on each path."""
    members: dict[Hashable, set[int]] = {}
    for i, (_, devices) in enumerate(demands):
        for device in devices:
            members.setdefault(device, set()).add(i)
    sizes: dict[frozenset[int], int] = {}
    for owners in members.values():
        sizes[frozenset(owners)] = sizes.get(frozenset(owners), 0) + 1
    need = [max(count, 0) for count, _ in demands]
    if sum(need) > len(members):
        return False
    groups = list(sizes)
    search = _Search(
        need=need,
        reaches=[[g for g, group in enumerate(groups) if i in group] for i in range(len(demands))],
        left=[sizes[g] for g in groups],
        held=[{} for _ in groups],
        steps=steps,
        bound=steps,
    )
    while any(need):
        check()
        path = search.path()
        if path is None:
            return False
        search.augment(path)
    return True


@dataclass
class _Search:
    """The residual graph of :func:`fits_distinct`: what each demand still
    needs, the groups it may take from, what each group has left, and how
    many of each group each demand holds (``held[group][demand]``)."""

    need: list[int]
    reaches: list[list[int]]
    left: list[int]
    held: list[dict[int, int]]
    steps: int
    bound: int

    def _step(self) -> None:
        self.steps -= 1
        if self.steps < 0:
            raise CannotJudge(f"the search for distinct devices passes pciname's bound of {self.bound} steps")

    def path(self) -> list[tuple[int, int]] | None:
        """A shortest path from a demand still short to a group with devices
        left, through groups and the demands holding some of them: its
        (demand, group) edges from the end, forward and back alternately;
        None: there is none (the flow is maximal)."""
        came: dict[int, int | None] = {i: None for i, n in enumerate(self.need) if n}
        reached: dict[int, int] = {}  # group -> the demand it was reached from
        queue = list(came)
        for demand in queue:
            for group in self.reaches[demand]:
                self._step()
                if group in reached:
                    continue
                reached[group] = demand
                if self.left[group]:
                    return self._edges(group, came, reached)
                for other in self.held[group]:
                    self._step()
                    if other not in came:
                        came[other] = group
                        queue.append(other)
        return None

    @staticmethod
    def _edges(group: int, came: dict[int, int | None], reached: dict[int, int]) -> list[tuple[int, int]]:
        edges = []
        while True:
            demand = reached[group]
            edges.append((demand, group))
            back = came[demand]
            if back is None:
                return edges
            edges.append((demand, back))  # ``demand`` gives up one of group ``back``'s devices
            group = back

    def augment(self, path: list[tuple[int, int]]) -> None:
        """Move as many devices along ``path`` as it allows."""
        forward, backward = path[0::2], path[1::2]
        start, end = forward[-1][0], path[0][1]
        amount = min([self.need[start], self.left[end]] + [self.held[g][d] for d, g in backward])
        for demand, group in forward:
            self.held[group][demand] = self.held[group].get(demand, 0) + amount
        for demand, group in backward:
            self.held[group][demand] -= amount
            if not self.held[group][demand]:
                del self.held[group][demand]
        self.need[start] -= amount
        self.left[end] -= amount


def _count(body: dict[str, Any]) -> int | None:
    """ExactCount's count (default 1); None for All."""
    if body.get("allocationMode") == "All":
        return None
    count = body.get("count", 1)
    return count if isinstance(count, int) else 1


def _why(
    verdict: str, row: dict[str, Any], nodes: dict[str, list[str]], devices: list[dict[str, Any]], held: list[str]
) -> str:
    if verdict == SATISFIABLE:
        return "selected: " + _listed([f"{node}: {_listed(names, ', ')}" for node, names in nodes.items()])
    if held:
        free = _listed([f"{node}: {len(names)} free" for node, names in nodes.items()])
        return f"the selected devices are allocated to other claims: {_listed(held)}" + (
            f" ({free}, {row['count']} needed)" if free else ""
        )
    if nodes:
        counted = _listed([f"{node}: {len(names)}" for node, names in nodes.items()])
        return f"no node publishes {row['count']} selected devices ({counted})"
    kinds = sorted({_shown(d) for d in devices})
    return "no published device is selected; the driver publishes " + (_listed(kinds) if kinds else "no device")


#: The most items a why lists (the report's fields hold them all).
_LISTED = 20


def _listed(items: list[str], separator: str = "; ") -> str:
    """``items`` joined, at most :data:`_LISTED` of them, and how many more."""
    shown = separator.join(items[:_LISTED])
    return shown + (f"{separator}... ({len(items) - _LISTED} more)" if len(items) > _LISTED else "")


def _shown(device: dict[str, Any]) -> str:
    own = device["attributes"].get(device["driver"], {})
    return ", ".join(f"{k}={own[k]!r}" for k in ("type", "vendorID", "deviceID", "productName") if k in own)


def _claim_requests(claim: dict[str, Any], namespace: str, index: dict[str, dict[tuple[str, str], Any]]) -> Any:
    """The device requests of a VM's ``resourceClaims`` entry (None: its object is missing), and what it names."""
    if claim.get("resourceClaimTemplateName"):
        kind, name, plural = "ResourceClaimTemplate", claim["resourceClaimTemplateName"], "resourceclaimtemplates"
    else:
        kind, name, plural = "ResourceClaim", claim.get("resourceClaimName"), "resourceclaims"
    found = index[plural].get((namespace, str(name)))
    if found is None:
        return None, f"{kind} {namespace}/{name}"
    spec = _map(found, "spec", "spec") if plural == "resourceclaimtemplates" else _map(found, "spec")
    return _dicts(_map(spec, "devices").get("requests")), f"{kind} {namespace}/{name}"


def _least(request: dict[str, Any]) -> int:
    """The fewest devices the allocator counts for a request (validateDeviceRequest:
    ExactCount's count; of subrequests, the fewest; All: none known before the node)."""
    if "firstAvailable" in request:
        return min((_count(sub) or 0 for sub in _dicts(request["firstAvailable"])), default=0)
    body: dict[str, Any] = request["exactly"] if isinstance(request.get("exactly"), dict) else request
    return _count(body) or 0


def _claim_rows(
    requests: list[dict[str, Any]], used: set[Any], head: dict[str, Any], cluster: _Cluster, taken: dict[Any, str]
) -> list[dict[str, Any]]:
    """The rows of a claim's ``requests`` the VM ``used``: each judged,
    then together; all unsatisfiable when the claim asks for more devices than
    the allocator allocates to one claim (Allocate refuses it before any search)."""
    least = sum(_least(request) for request in requests)
    if least > CLAIM_DEVICES_MAX:
        why = f"the claim asks for at least {least} devices; the allocator allocates at most {CLAIM_DEVICES_MAX} to a claim"
        return [
            head | {"request": r.get("name"), "count": _least(r), "verdict": UNSATISFIABLE, "why": why}
            for r in requests
            if r.get("name") in used
        ]
    rows = [head | _judge(request, cluster, taken) for request in requests if request.get("name") in used]
    return _together(rows, cluster.check)


def _vm_rows(vm: KubeObject, index: dict[str, Any], cluster: _Cluster, held: _Held) -> Any:
    meta = _map(vm, "metadata")
    namespace, name = meta.get("namespace") or "default", meta.get("name")
    template = _map(vm, "spec", "template", "spec")
    gpus = [g for g in _dicts(_map(template, "domain", "devices").get("gpus")) if g.get("claimName")]
    rows, findings = [], []
    for claim in _dicts(template.get("resourceClaims")):
        requests, what = _claim_requests(claim, namespace, index)
        used = {g.get("requestName") for g in gpus if g.get("claimName") == claim.get("name")}
        if requests is None:
            if used:
                findings.append(_finding("dra-claim-missing", f"{namespace}/{name}", f"{what} does not exist"))
            continue
        taken = held.taken(namespace, str(name), claim)
        head = {"vm": f"{namespace}/{name}", "claim": claim.get("name"), "source": what}
        rows += _claim_rows(requests, used, head, cluster, taken)
        for request_name in sorted(str(u) for u in used - {r.get("name") for r in requests}):
            findings.append(
                _finding("dra-request-missing", f"{namespace}/{name}", f"{what} has no request {request_name!r}")
            )
    for gpu in gpus:
        if gpu.get("claimName") not in {c.get("name") for c in _dicts(template.get("resourceClaims"))}:
            findings.append(
                _finding(
                    "dra-claim-missing",
                    f"{namespace}/{name}",
                    f"gpus[] {gpu.get('name')!r} names claim {gpu.get('claimName')!r}, which spec.template.spec.resourceClaims does not list",
                )
            )
    return rows, findings


def _holder(claim: KubeObject | None) -> str | None:
    """A claim as the report names it: "namespace/name"."""
    if claim is None:
        return None
    meta = _map(claim, "metadata")
    return f"{meta.get('namespace') or 'default'}/{meta.get('name')}"


def _map(value: Any, *keys: str) -> dict[str, Any]:
    """``value[key]...`` as a mapping: empty where a level is missing or no
    mapping (an object's fields are as a cluster sends them, any shape)."""
    for key in keys:
        value = value.get(key) if isinstance(value, dict) else None
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _dicts(value: Any) -> list[dict[str, Any]]:
    """The mappings of a list (anything else: none)."""
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _finding(code: str, vm: str, message: str) -> dict[str, str]:
    return {"code": code, "vm": vm, "message": message}


def _cluster(objects: dict[str, list[KubeObject]], driver: str, check: Callable[[], None]) -> tuple[_Cluster, Any]:
    """What requests are judged against, and the pools as the allocator sees them."""
    used, pools = gather_pools(objects.get("resourceslices", []), driver)
    not_whole: dict[str, list[str]] = {}
    for pool in pools:
        if pool["state"] != "complete":
            not_whole.setdefault(pool["node"], []).append(f"pool {pool['pool']} is {pool['state']}: {pool['why']}")
    invalid = [f"pool {p['pool']} on node {p['node']} is invalid: {p['why']}" for p in pools if p["state"] == "invalid"]
    classes = {str(_map(c, "metadata").get("name")): c for c in objects.get("deviceclasses", [])}
    return _Cluster(classes, published(used, driver), not_whole, invalid, check), pools


def _reported(row: dict[str, Any], cluster: _Cluster) -> dict[str, Any]:
    """A row as the report shows it: an unsatisfiable one says which pools' devices were not counted."""
    shown = {k: v for k, v in row.items() if not k.startswith("_")}
    if row["verdict"] == UNSATISFIABLE and cluster.invalid:
        shown["why"] += f" (not counted: {_listed(cluster.invalid)}; {INVALID_POOL})"
    return shown


def audit_dra(
    resource_api: str | None,
    objects: dict[str, list[KubeObject]],
    vms: list[KubeObject],
    *,
    check: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The report: the published vfio devices, their pools, the DeviceClasses,
    and per VM claim request its verdict; findings for claims or requests
    that do not exist. ``check``: the caller's deadline, called as the work
    goes (it raises once the deadline has passed)."""
    driver = next(iter(facts()["driver_releases"].values()))["driver_name"]
    check = check or _no_deadline
    cluster, pools = _cluster(objects, driver, check)
    index = {
        plural: {
            (_map(o, "metadata").get("namespace") or "default", str(_map(o, "metadata").get("name"))): o
            for o in objects.get(plural, [])
        }
        for plural in ("resourceclaimtemplates", "resourceclaims")
    }
    held = allocated(objects.get("resourceclaims", []))
    holders = _Held(held)
    rows, findings = [], []
    for vm in vms:
        check()
        more_rows, more_findings = _vm_rows(vm, index, cluster, holders)
        rows += [_reported(row, cluster) for row in more_rows]
        findings += more_findings
    for row in rows:
        if row["verdict"] in (UNSATISFIABLE, NO_DEVICE_CLASS):
            findings.append(
                _finding(
                    f"dra-{row['verdict']}", row["vm"], f"claim {row['claim']} request {row['request']}: {row['why']}"
                )
            )
    return {
        "resource_api": f"resource.k8s.io/{resource_api}" if resource_api else None,
        "driver": driver,
        "devices": [
            {k: d[k] for k in ("node", "pool", "name")}
            | {"attributes": d["attributes"], "allocated_to": _holder(held.get(_key(driver, d["pool"], d["name"])))}
            for d in cluster.devices
        ],
        "pools": pools,
        "device_classes": sorted(cluster.classes),
        "requests": rows,
        "findings": findings,
        "note": NOTE,
    }
