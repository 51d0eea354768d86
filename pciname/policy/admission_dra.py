"""The admission policy's DRA part: a ValidatingAdmissionPolicy that holds
claims for NVIDIA's vfio DeviceClass to the allowed GPUs.

Pure: the allowed GPUs (NVIDIA device ids) and a DRA driver release in,
the policy ``<name>-dra`` and its binding out, as plain data. It matches
``resource.k8s.io`` ResourceClaims and ResourceClaimTemplates of every
version pciname writes claims for (:data:`~pciname.dra.facts.RESOURCE_APIS`),
and checks each device request for the driver's vfio DeviceClass: the
request itself where it is flat (v1beta1), its ``exactly`` (v1, v1beta2), and
each ``firstAvailable`` subrequest. Requests for other DeviceClasses pass.

The rule (:data:`RULE`, also the message's and the README's): a vfio
request passes only when one of its selectors' ``cel.expression`` is,
but for leading and trailing spaces, tabs and line breaks
(:data:`PADDING`), exactly a selector ``pciname vm-gpus --dra`` writes for
an allowed GPU (:func:`pciname.dra.claims.selector`, with or without the
product name). A device must match all the selectors of a request, so such a
request can be given that GPU model only; any other selector (an NVML-style
product name, a ``GPU-`` uuid, an upper-case device id, a selector written
another way) is not proved to be held to the allowed GPUs and fails.

The CEL is core CEL only (as :mod:`pciname.policy.admission`'s): the
exact strings are keys of map literals (one lookup); a padded one is told by
a regular expression of the selector's shape (``matches``, RE2 syntax that
Python's and Rust's regex engines read alike) and found by ``contains`` over
the keys of the same form, which, given that shape, only the selector itself
passes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Any

from pciname.base.cel import cel_string
from pciname.dra.claims import PredictedDevice, predicted_device, selector
from pciname.dra.facts import RESOURCE_APIS, Combination, DraCombinationError, choose, drivers, facts, released
from pciname.errors import PcinameError
from pciname.pciids.ids import NVIDIA_VENDOR_ID
from pciname.policy.admission import (
    API_VERSION,
    MAX_EXPRESSION_CODE_POINTS,
    MAX_POLICY_BYTES,
    NOT_BEING_DELETED,
    AdmissionPolicy,
    _Cel,
    _has_chain,
    _in_any,
    check_name,
)

#: The DRA policy's and binding's name is the policy's with this suffix.
SUFFIX = "-dra"
GROUP = "resource.k8s.io"
#: The claim kinds checked, their resources and where their device requests are.
KINDS = {
    "ResourceClaim": ("resourceclaims", ("spec", "devices", "requests")),
    "ResourceClaimTemplate": ("resourceclaimtemplates", ("spec", "spec", "devices", "requests")),
}
#: What the rule trims off a selector before comparing it: spaces, tabs and line breaks.
PADDING = " \t\n\r"
#: The rule every vfio request is held to ({device_class}: the driver's vfio DeviceClass).
RULE = (
    "a request for DeviceClass {device_class} passes only when one of its selectors is, but for leading and "
    "trailing spaces, tabs and line breaks, exactly one `pciname vm-gpus DEVICE --dra` writes for an allowed GPU "
    "(with or without --product-name)"
)
#: A validation's message when its messageExpression cannot be evaluated.
STATIC_MESSAGE = "a DRA claim's vfio GPU request is not held to the allowed GPUs (pciname admission policy)"
#: The most allowed GPUs the message lists by id (more: a count).
LIST_GPUS_MAX = 8
_REGEX_SPECIAL = set("\\.+*?()|[]{}^$")


def publishing_drivers() -> list[str]:
    """The driver releases that publish vfio devices, in release order."""
    return [d for d in drivers() if facts()["driver_releases"][d]["vfio"]["publishes"]]


def dra_combination(driver: str | None, word: str = "--dra-driver") -> Combination:
    """The facts of the driver release ``driver`` (None: the newest that
    publishes vfio devices); DraCombinationError, one line, for a release
    pciname does not know or one that publishes no vfio device (``word``:
    what the surface calls the driver release)."""
    publishing = [d for d in publishing_drivers() if d in released()]  # the default: a tagged release, not main
    newest = f"the newest that does: {word} {publishing[-1]}" if publishing else "no release does"
    if driver is None:
        if not publishing:  # pragma: no cover - the shipped facts have one (a test holds it)
            raise DraCombinationError("no DRA driver release in pciname's facts publishes vfio devices")
        driver = publishing[-1]
    try:
        combination = choose(driver)
    except DraCombinationError as error:
        release = driver.strip().lower()
        release = release if release.startswith("v") else f"v{release}"
        if release not in drivers():
            raise DraCombinationError(str(error).replace("--dra-driver", word, 1)) from None
        vfio = facts()["driver_releases"][release]["vfio"]
        bug = (vfio.get("enumeration") or {}).get("bug")
        why = f", by a bug: {bug}" if bug else ""
        raise DraCombinationError(f"{word} {release}: the driver publishes no vfio device{why}; {newest}") from None
    return combination


def allowed_gpus(permitted: dict[str, Any]) -> list[str]:
    """The NVIDIA device ids (4 lower-case hex digits) of a permittedHostDevices
    block's ``pciHostDevices`` entries, in order, each once."""
    out: dict[str, None] = {}
    for entry in permitted.get("pciHostDevices") or []:
        text = entry.get("pciVendorSelector") if isinstance(entry, dict) else None
        vendor, _, device = str(text or "").lower().partition(":")
        if vendor == NVIDIA_VENDOR_ID and len(device) == 4:
            out.setdefault(device, None)
    return list(out)


def allowed_selectors(devices: Sequence[str], combination: Combination) -> tuple[list[str], list[str]]:
    """The selectors pciname writes for ``devices``: without, and with, the product name."""
    predicted = [predicted_device(d, combination) for d in devices]
    return [selector(p) for p in predicted], [selector(p, product_name=True) for p in predicted]


def _regex_literal(text: str) -> str:
    return "".join("\\" + c if c in _REGEX_SPECIAL else c for c in text)


def shape(combination: Combination, *, product_name: bool) -> str:
    """The regular expression of a padded selector of pciname's form: any
    device id of four lower-case hex digits, any CEL string as product name."""
    hole = "\ue000"  # a private-use character: cel_string and _regex_literal keep it as it is
    template = PredictedDevice(
        device="",
        driver=combination.driver_facts["driver_name"],
        attributes={"vendorID": f"0x{NVIDIA_VENDOR_ID}", "deviceID": hole, "productName": hole},
        host_dependent=(),
    )
    quoted = _regex_literal(selector(template, product_name=product_name)).replace('"' + hole + '"', "\x01")
    parts = quoted.split("\x01")
    pieces = ['"0x[0-9a-f]{4}"', r'"(?:[^"\\]|\\.)*"']
    body = parts[0] + "".join(pieces[i] + part for i, part in enumerate(parts[1:]))
    padding = "[" + PADDING.replace("\t", "\\t").replace("\n", "\\n").replace("\r", "\\r") + "]*"
    return f"^{padding}{body}{padding}$"


# -- CEL text ------------------------------------------------------------------


def _held(maps: tuple[list[str], list[str]], shapes: tuple[str, str], value: str) -> str:
    """Whether the selector text ``value`` is one of the allowed selectors, trimmed."""
    plain, named = maps
    exact = _in_any(value, plain + named)
    padded = [
        f"({value}.matches({cel_string(pattern)}) && ("
        + " || ".join(f"variables.{m}.exists(s, {value}.contains(s))" for m in variables)
        + "))"
        for pattern, variables in zip(shapes, maps)
    ]
    return "(" + " || ".join([exact, *padded]) + ")"


def _units(r: str) -> str:
    """The device requests of request ``r``: its ``exactly``, itself where it
    is flat (v1beta1), its ``firstAvailable`` subrequests."""
    return (
        f"((has({r}.exactly) ? [{r}.exactly] : []) + (has({r}.deviceClassName) ? [{r}] : []) + "
        f"(has({r}.firstAvailable) ? {r}.firstAvailable : []))"
    )


def _bad(device_class: str, held: str) -> str:
    """Whether request ``r`` has a vfio device request no selector of which is held."""
    vfio = f"has(u.deviceClassName) && u.deviceClassName == {cel_string(device_class)}"
    selected = f"has(u.selectors) && u.selectors.exists(x, has(x.cel) && has(x.cel.expression) && {held})"
    return f"{_units('r')}.exists(u, {vfio} && !({selected}))"


def _requests(root: str) -> str:
    """The device requests of ``root``, a ResourceClaim or a ResourceClaimTemplate."""
    expr = "[]"
    for kind, (_, path) in reversed(KINDS.items()):
        chain = f"{root}." + ".".join(path)
        expr = f"({root}.kind == {cel_string(kind)} ? ({_has_chain(root, path)} ? {chain} : []) : {expr})"
    return expr


def _cel(devices: Sequence[str], combination: Combination) -> _Cel:
    cel = _Cel()
    held = "false"  # no GPU allowed: no selector is held
    if devices:
        plain, named = allowed_selectors(devices, combination)
        maps = (cel.add_maps("plain", [(s, True) for s in plain]), cel.add_maps("named", [(s, True) for s in named]))
        shapes = (shape(combination, product_name=False), shape(combination, product_name=True))
        held = _held(maps, shapes, "x.cel.expression")
    bad = _bad(combination.vfio["device_class"]["name"], held)
    cel.add("updating", "request.operation == 'UPDATE'")
    # An UPDATE is checked for what it adds: a request the old object already
    # held, as it was, is let through (metadata and finalizers can change).
    cel.held("heldRequests", f"{_requests('oldObject')}.filter(r, {bad})")
    cel.add("badRequests", f"{_requests('object')}.filter(r, {bad} && !(r in variables.heldRequests))")
    cel.add(
        "objectName",
        "has(object.metadata.name) ? object.metadata.name : "
        "(has(object.metadata.generateName) ? object.metadata.generateName + '*' : '')",
    )
    return cel


def message(devices: Sequence[str], combination: Combination) -> str:
    """The text after the request's name in a refusal."""
    ids = [f"{NVIDIA_VENDOR_ID}:{d}" for d in devices]
    listed = ", ".join(ids) if len(ids) <= LIST_GPUS_MAX else f"{len(ids)} GPUs"
    allowed = f"allowed: {listed}" if ids else "the policy allows no GPU"
    rule = RULE.format(device_class=combination.vfio["device_class"]["name"])
    return f": no selector holds it to an allowed GPU (pciname admission policy, DRA driver {combination.driver}): {rule}; {allowed}"


def _validation(devices: Sequence[str], combination: Combination) -> dict[str, str]:
    first = "variables.badRequests[0]"
    return {
        "expression": "size(variables.badRequests) == 0",
        "messageExpression": f"object.kind + ' ' + variables.objectName + ': request ' + "
        f"(has({first}.name) ? {first}.name : '') + {cel_string(message(devices, combination))}",
        "message": STATIC_MESSAGE,
        "reason": "Invalid",
    }


# -- the objects -----------------------------------------------------------------


def dra_policy(
    devices: Sequence[str], combination: Combination, actions: Sequence[str], *, name: str, labels: dict[str, str]
) -> tuple[dict[str, Any], dict[str, Any]]:
    """The policy ``name + SUFFIX`` and its binding (``actions``), allowing vfio
    claims for ``devices`` (NVIDIA device ids) as ``combination``'s driver publishes them."""
    dra_name = check_name(name + SUFFIX)
    cel = _cel(devices, combination)
    annotations = {
        "pciname.io/dra-driver": combination.driver,
        "pciname.io/device-class": combination.vfio["device_class"]["name"],
        "pciname.io/allowed-gpus": str(len(devices)),
    }
    policy = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": dra_name, "labels": dict(labels), "annotations": annotations},
        "spec": {
            "failurePolicy": "Fail",
            "matchConditions": [{"name": "not-being-deleted", "expression": NOT_BEING_DELETED}],
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [GROUP],
                        "apiVersions": list(RESOURCE_APIS),
                        "operations": ["CREATE", "UPDATE"],
                        "resources": [resource for resource, _ in KINDS.values()],
                    }
                ]
            },
            "variables": cel.variables,
            "validations": [_validation(devices, combination)],
        },
    }
    binding = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": dra_name, "labels": dict(labels)},
        "spec": {"policyName": dra_name, "validationActions": list(actions)},
    }
    return policy, binding


def with_dra(policy: AdmissionPolicy, permitted: dict[str, Any], combination: Combination) -> AdmissionPolicy:
    """``policy`` with the DRA policy and binding after its own two: named
    as it is with :data:`SUFFIX`, its binding's actions, allowing vfio claims
    for the NVIDIA GPUs of ``permitted``'s ``pciHostDevices`` (what the
    policy allows by name: the GPUs left out of the names are left out here too)."""
    main, binding = policy.objects[0], policy.objects[1]
    dra = dra_policy(
        allowed_gpus(permitted),
        combination,
        binding["spec"]["validationActions"],
        name=main["metadata"]["name"],
        labels=main["metadata"]["labels"],
    )
    for v in dra[0]["spec"]["variables"]:
        if len(v["expression"]) > MAX_EXPRESSION_CODE_POINTS:  # pragma: no cover - maps are chunked below it
            raise PcinameError(f"the DRA policy's variable {v['name']} is over the CEL size limit")
    size = len(json.dumps(dra[0]).encode())
    if size > MAX_POLICY_BYTES:  # pragma: no cover - every NVIDIA GPU allowed stays below it (a test holds it)
        raise PcinameError(f"the DRA policy would be {size} bytes, over the {MAX_POLICY_BYTES} pciname allows")
    return replace(policy, objects=(*policy.objects, *dra))


__all__ = [
    "KINDS",
    "PADDING",
    "RULE",
    "SUFFIX",
    "allowed_gpus",
    "allowed_selectors",
    "dra_combination",
    "dra_policy",
    "publishing_drivers",
    "shape",
    "with_dra",
]
