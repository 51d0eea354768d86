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
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pciname.dra.cel import Version
from pciname.dra.facts import facts

if TYPE_CHECKING:
    from pciname.kubevirt.objects import KubeObject

__all__ = [
    "CANNOT_JUDGE",
    "NO_DEVICE_CLASS",
    "SATISFIABLE",
    "UNSATISFIABLE",
    "CannotJudge",
    "audit_dra",
    "evaluate",
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


class CannotJudge(ValueError):
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


def _terms(expression: str) -> list[_Term]:
    """The equalities of a conjunction; CannotJudge for anything else."""
    terms = []
    for part in _split_and(expression):
        match = _TERM.fullmatch(part)
        if match is None:
            raise CannotJudge(f"pciname evaluates only conjunctions of attribute equalities, not {expression!r}")
        domain = match["domain"]
        terms.append(_Term(domain[1:-1] if domain else None, match["name"] or "driver", _literal(match["value"])))
    return terms


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


# -- the audit -------------------------------------------------------------------------


def _selectors(body: dict[str, Any]) -> list[Any]:
    return [_map(s, "cel").get("expression") if isinstance(s, dict) else None for s in _list(body.get("selectors"))]


def _judge(
    request: dict[str, Any], classes: dict[str, Any], devices: list[dict[str, Any]], taken: dict[Any, str]
) -> dict[str, Any]:
    """One request's verdict, and the free devices that satisfy it
    (``taken``: the devices other claims hold, and which claim)."""
    if "firstAvailable" in request:
        return _first_available(request, classes, devices, taken)
    body: dict[str, Any] = request["exactly"] if isinstance(request.get("exactly"), dict) else request
    name = request.get("name")
    class_name = body.get("deviceClassName")
    row: dict[str, Any] = {"request": name, "device_class": class_name, "count": _count(body)}
    if class_name not in classes:
        return row | {"verdict": NO_DEVICE_CLASS, "why": f"the cluster has no DeviceClass {class_name!r}"}
    expressions = _selectors(_map(classes[class_name], "spec")) + _selectors(body)
    matching: list[dict[str, Any]] = []
    try:
        if any(not isinstance(e, str) for e in expressions):
            raise CannotJudge("a selector without a CEL expression")
        for device in devices:
            if all(evaluate(e, device) for e in expressions):
                matching.append(device)
    except CannotJudge as why:
        return row | {"verdict": CANNOT_JUDGE, "why": str(why)}
    nodes: dict[str, list[str]] = {}
    held: list[str] = []
    for device in matching:
        holder = taken.get(_key(device["driver"], device["pool"], device["name"]))
        if holder is None:
            nodes.setdefault(device["node"], []).append(device["name"])
        else:
            held.append(f"{device['node']}: {device['name']} ({holder})")
    enough = {node: names for node, names in nodes.items() if len(names) >= (row["count"] or 1)}
    verdict = SATISFIABLE if enough else UNSATISFIABLE
    reason = _why(verdict, row, nodes, devices, held)
    return row | {"verdict": verdict, "nodes": nodes, "allocated_elsewhere": held, "why": reason}


def _first_available(
    request: dict[str, Any], classes: dict[str, Any], devices: list[dict[str, Any]], taken: dict[Any, str]
) -> dict[str, Any]:
    """A request of ``firstAvailable`` subrequests: the allocator takes the
    first subrequest it can allocate, so the request is satisfiable when one
    is, and says which; unsatisfiable when none is and all were judged."""
    name = request.get("name")
    judged = [(sub.get("name"), _judge(sub, classes, devices, taken)) for sub in _dicts(request["firstAvailable"])]
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


def _together(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A claim's requests are allocated together, on one node, each device
    once: when each is satisfiable alone but no node has distinct devices for
    all of them, each is unsatisfiable, and says so."""
    if len(rows) < 2 or any(r["verdict"] != SATISFIABLE for r in rows):
        return rows
    nodes = set.intersection(*(set(r["nodes"]) for r in rows))
    if any(_matched([r["nodes"][n] for r in rows for _ in range(r["count"] or 1)]) for n in sorted(nodes)):
        return rows
    if any(r.get("alternatives") for r in rows):
        why = "the requests together, with other firstAvailable subrequests than the first that fits, are not evaluated"
        return [r | {"verdict": CANNOT_JUDGE, "why": why} for r in rows]
    why = f"no node publishes distinct selected devices for all {len(rows)} requests of the claim together"
    held = sorted({device for r in rows for device in r["allocated_elsewhere"]})
    if held:
        why = f"no node has distinct free selected devices for all {len(rows)} requests of the claim together"
        why += f" (allocated to other claims: {'; '.join(held)})"
    return [r | {"verdict": UNSATISFIABLE, "why": why} for r in rows]


def _matched(slots: list[list[str]]) -> bool:
    """Whether every slot gets a device of its own (augmenting paths)."""
    owner: dict[str, int] = {}

    def place(slot: int, seen: set[str]) -> bool:
        for device in slots[slot]:
            if device not in seen:
                seen.add(device)
                if device not in owner or place(owner[device], seen):
                    owner[device] = slot
                    return True
        return False

    return all(place(i, set()) for i in range(len(slots)))


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
        return "selected: " + "; ".join(f"{node}: {', '.join(names)}" for node, names in nodes.items())
    if held:
        free = "; ".join(f"{node}: {len(names)} free" for node, names in nodes.items())
        return f"the selected devices are allocated to other claims: {'; '.join(held)}" + (
            f" ({free}, {row['count']} needed)" if free else ""
        )
    if nodes:
        return (
            f"no node publishes {row['count']} selected devices ("
            + "; ".join(f"{node}: {len(names)}" for node, names in nodes.items())
            + ")"
        )
    kinds = sorted({_shown(d) for d in devices})
    return "no published device is selected; the driver publishes " + ("; ".join(kinds) if kinds else "no device")


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


def _vm_rows(
    vm: KubeObject,
    index: dict[str, Any],
    classes: dict[str, Any],
    devices: list[dict[str, Any]],
    held: dict[tuple[str, str, str], KubeObject],
) -> Any:
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
        taken = {
            key: f"ResourceClaim {_holder(c)}"
            for key, c in held.items()
            if not _held_by(c, namespace, str(name), claim)
        }
        claim_rows = []
        for request in requests:
            if request.get("name") in used:
                claim_rows.append(
                    {"vm": f"{namespace}/{name}", "claim": claim.get("name"), "source": what}
                    | _judge(request, classes, devices, taken)
                )
        rows += _together(claim_rows)
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


def audit_dra(resource_api: str | None, objects: dict[str, list[KubeObject]], vms: list[KubeObject]) -> dict[str, Any]:
    """The report: the published vfio devices, the DeviceClasses, and per VM
    claim request its verdict; findings for claims or requests that do not exist."""
    driver = next(iter(facts()["driver_releases"].values()))["driver_name"]
    devices = published(objects.get("resourceslices", []), driver)
    classes = {str(_map(c, "metadata").get("name")): c for c in objects.get("deviceclasses", [])}
    index = {
        plural: {
            (_map(o, "metadata").get("namespace") or "default", str(_map(o, "metadata").get("name"))): o
            for o in objects.get(plural, [])
        }
        for plural in ("resourceclaimtemplates", "resourceclaims")
    }
    held = allocated(objects.get("resourceclaims", []))
    rows, findings = [], []
    for vm in vms:
        more_rows, more_findings = _vm_rows(vm, index, classes, devices, held)
        rows += more_rows
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
            for d in devices
        ],
        "device_classes": sorted(classes),
        "requests": rows,
        "findings": findings,
        "note": NOTE,
    }
