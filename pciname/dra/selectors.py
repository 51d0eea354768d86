"""Whether a DRA CEL selector can match a vfio GPU NVIDIA's DRA driver
publishes, and, when it cannot, what the driver publishes instead.

:func:`judge` runs the selector (read by :mod:`pciname.dra.cel`) on every
vfio device one driver release can publish: one per NVIDIA device id of
the pci.ids its product names come from (the stable attributes exactly as
:func:`pciname.dra.claims.predicted_device` gives them), and one device of
an id that file does not name (``productName`` is then go-nvlib's
unknown-device text); host-dependent attributes (``uuid``, ``numa``,
``pciBusID``, ...) take any value of the form the driver's code gives them.
A selector that no such device can make true is :attr:`Verdict.matches`
False, with the reasons (an attribute the driver does not publish for vfio
devices, a value in a form it never has: an NVML product name, a ``GPU-``
uuid, a device id in another case or without ``0x``) and pciname's own
selector for the GPU it names, when it names one. CEL the reader does not
take is judged None, never guessed.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pciname.base.cel import cel_string
from pciname.dra.cel import (
    Attributes,
    Beyond,
    Domains,
    Evaluator,
    Host,
    Invalid,
    Tree,
    Unjudgeable,
    Version,
    attribute_references,
    children as _children,
    comparisons,
    parse,
    reference as _reference,
)
from pciname.dra.claims import STABLE_ATTRIBUTES, PredictedDevice, predicted_device, selector
from pciname.dra.facts import Combination
from pciname.pciids.ids import NVIDIA_VENDOR_ID

#: The form of each host-dependent string attribute, as the driver's code writes it.
HOST_FORMS = {
    "uuid": r"[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}",  # google/uuid NewSHA1 String()
    "pciBusID": r"[0-9a-f]{4,}:[0-9a-f]{2}:[0-9a-f]{2}\.[0-7]",  # the sysfs address
    "pcieRoot": r"pci[0-9a-f]{4,}:[0-9a-f]{2}",  # the first element under /sys/devices
}
_DEVICE_ID = re.compile(r"0x[0-9a-f]{4}\Z")
_ANY_ID = re.compile(r"(?:0[xX])?([0-9a-fA-F]{4})\Z")
_CEL_TYPES = {"string": str, "int": int, "bool": bool, "version": Version}
#: At most this many selectors in an ``expected`` list.
MAX_EXPECTED = 8
#: At most this many verdicts are kept (then the cache starts anew).
MAX_VERDICTS = 4096
#: The CEL evaluations (tree nodes) one lint run may spend on judging
#: selectors, on every surface (a few seconds of work): a selector
#: judged on all ~2,000 devices of a release costs their number times its
#: nodes; one read by ``==``/``in`` with literals only a few devices.
MAX_EVALUATIONS = 200_000


@dataclass(frozen=True)
class Verdict:
    """What one selector does on the driver's vfio devices: ``matches``
    (None: CEL lint cannot judge, ``unjudgeable`` says which), the reasons
    when it matches nothing, the host-dependent attributes it reads
    (qualified names), and pciname's selector(s) for the GPU(s) it names."""

    matches: bool | None
    reasons: tuple[str, ...] = ()
    host_dependent: tuple[str, ...] = ()
    expected: str | list[str] | None = None
    unjudgeable: str = ""
    devices: tuple[str, ...] = field(default=())
    #: False: the run's budget ran out before the verdict was reached (not cached).
    kept: bool = True


def _qualified(name: str, driver: str) -> tuple[str, str]:
    domain, _, short = name.rpartition("/")
    return (domain or driver, short)


class DriverDevices:
    """The vfio devices one driver release can publish, as DRA's CEL sees them."""

    def __init__(self, combination: Combination) -> None:
        self.combination = combination
        self.driver = combination.driver_facts["driver_name"]
        vfio = combination.vfio
        self.product = vfio["product_name"]
        self.attributes = {_qualified(a["name"], self.driver): a for a in vfio["attributes"]}
        self.capacity = {_qualified(c["name"], self.driver): c for c in vfio["capacity"]}
        names = _names(combination)
        self.known = {f"0x{i}": (i, name) for i, name in names.items()}
        self.names = {name for _, name in self.known.values()} | {self.product["unknown"]}
        self.devices = [self._device(predicted_device(i, combination)) for i in names]
        other = predicted_device("ffff", combination)
        self.devices.append(
            self._device(other, device_id=Host("string", lambda v: bool(_DEVICE_ID.match(v)) and v not in self.known))
        )
        self.varying = frozenset(
            (self.driver, name)
            for name in STABLE_ATTRIBUTES
            if len({repr(d["attributes"].lookup(self.driver).get(name)) for d in self.devices}) > 1
        )
        self.host = sorted(f"{d}/{n}" for d, n in (*self.attributes, *self.capacity) if n not in STABLE_ATTRIBUTES)

    def _device(self, device: PredictedDevice, device_id: Any = None) -> dict[str, Any]:
        domains: dict[str, dict[str, Any]] = {}
        optional: dict[str, set[str]] = {}
        for (domain, name), fact in self.attributes.items():
            value = device.attributes.get(name) if domain == self.driver else None
            if name == "deviceID" and device_id is not None:
                value = device_id
            if value is None or domain != self.driver or name not in STABLE_ATTRIBUTES:
                value = _host(name, fact["type"])
            domains.setdefault(domain, {})[name] = value
            if "omitted" in fact.get("computed", ""):
                optional.setdefault(domain, set()).add(name)
        capacity: dict[str, dict[str, Any]] = {}
        for domain, name in self.capacity:
            capacity.setdefault(domain, {})[name] = Host("quantity")
        return {
            "driver": self.driver,
            "attributes": Domains({d: Attributes(v, optional.get(d, ())) for d, v in domains.items()}),
            "capacity": Domains({d: Attributes(v) for d, v in capacity.items()}),
        }


def _host(name: str, kind: str) -> Host:
    form = HOST_FORMS.get(name)
    if kind == "int":
        return Host("int", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= -1)
    if form is not None:
        return Host(kind, lambda v: isinstance(v, str) and re.fullmatch(form, v) is not None)
    return Host(kind)


def _names(combination: Combination) -> dict[str, str]:
    from pciname.dra.claims import _product_names

    return _product_names(combination.vfio["product_name"]["embedded"]["sha256"])


_DEVICES: dict[str, DriverDevices] = {}
_VERDICTS: dict[tuple[str, str], Verdict] = {}


def driver_devices(combination: Combination) -> DriverDevices:
    """The devices of ``combination``'s driver release (made once per release)."""
    if combination.driver not in _DEVICES:
        _DEVICES[combination.driver] = DriverDevices(combination)
    return _DEVICES[combination.driver]


class Budget:
    """The CEL evaluation one lint run may spend (tree nodes evaluated, over
    every selector it judges): past :data:`MAX_EVALUATIONS` the selectors
    left are not judged (a note), so no input outlasts it on any surface."""

    def __init__(self, limit: int = 0) -> None:
        self.limit = limit or MAX_EVALUATIONS
        self.spent = 0

    def spend(self, count: int) -> None:
        self.spent += count
        if self.spent > self.limit:
            raise Beyond(
                f"this run's budget of {self.limit:,} CEL evaluations is spent (a selector is judged on every device "
                "the release can publish)"
            )


def judge(
    expression: str,
    combination: Combination,
    *,
    check: Callable[[], None] | None = None,
    budget: Budget | None = None,
) -> Verdict:
    """The verdict on ``expression`` for the vfio devices of ``combination``'s
    driver release (judged once per expression and release). ``check`` is
    called as the judging goes (a deadline or a cancellation raises there);
    ``budget`` bounds the evaluation of a whole run (default: one of this
    call alone)."""
    key = (expression, combination.driver)
    if key in _VERDICTS:
        return _VERDICTS[key]
    verdict = _judge(expression, driver_devices(combination), check or _nothing, budget or Budget())
    if not verdict.kept:  # the run's budget was spent: another run judges it
        return verdict
    if len(_VERDICTS) >= MAX_VERDICTS:  # a server lints any number of distinct selectors
        _VERDICTS.clear()
    _VERDICTS[key] = verdict
    return verdict


def _nothing() -> None:
    return None


def _why(error: Unjudgeable) -> str:
    """Why a selector is not judged, as a clause."""
    if isinstance(error, Invalid):
        return f"it is no valid CEL: {error}"
    if isinstance(error, Beyond):
        return str(error)
    return f"it reads CEL lint does not evaluate: {error}"


def _judge(expression: str, devices: DriverDevices, check: Callable[[], None], budget: Budget) -> Verdict:
    try:
        tree = parse(expression, check)
    except Unjudgeable as error:
        return Verdict(None, unjudgeable=_why(error))
    host = tuple(
        dict.fromkeys(
            f"{domain}/{name}"
            for kind, domain, name in attribute_references(tree)
            if (domain, name) in (devices.capacity if kind == "capacity" else devices.attributes)
            and (kind == "capacity" or name not in STABLE_ATTRIBUTES)
        )
    )
    unjudgeable = ""
    for device in _representatives(tree, expression, devices, check):
        check()
        evaluator = Evaluator(device, check)
        results: list[Any] = []
        try:
            results = evaluator.run(tree)
        except Unjudgeable as error:
            unjudgeable = unjudgeable or _why(error)
        try:
            budget.spend(evaluator.count)
        except Beyond as error:
            return Verdict(None, host_dependent=host, unjudgeable=_why(error), kept=False)
        if True in results:
            return Verdict(True, host_dependent=host)
    if unjudgeable:
        return Verdict(None, host_dependent=host, unjudgeable=unjudgeable)
    ids = _named_ids(tree, devices)
    reasons = _reasons(tree, devices) or [_together(ids, devices)]
    product = any(name == "productName" for _, _, name in attribute_references(tree))
    expected = [selector(predicted_device(i, devices.combination), product_name=product) for i in ids]
    shown = expected[0] if len(expected) == 1 else (expected[:MAX_EXPECTED] or None)
    return Verdict(False, tuple(reasons), host, shown, devices=tuple(f"{NVIDIA_VENDOR_ID}:{i}" for i in ids))


def _representatives(
    tree: Tree, expression: str, devices: DriverDevices, check: Callable[[], None]
) -> list[dict[str, Any]]:
    """The devices the selector must be run on. When it reads the attributes
    that differ between devices (deviceID, productName) only in ``==``,
    ``!=``, ``in`` with literals, ``has()``, a string test with a literal
    (``startsWith``, ``endsWith``, ``contains``) or an ordering with a
    literal, two devices whose values are none of those literals and pass
    the same tests give the same result: the devices named by a literal, and
    one of each other kind. Else every device (those the text names first)."""
    observed = _observed(tree, devices.varying)
    if observed is None:
        named = [d for d in devices.devices if _mentioned(d, expression)]
        return named + [d for d in devices.devices if d not in named]
    literals, sites = observed
    chosen: list[dict[str, Any]] = []
    kinds: dict[tuple[Any, ...], dict[str, Any]] = {}
    for device in devices.devices:
        check()
        values = {key: device["attributes"].lookup(key[0]).get(key[1]) for key in devices.varying}
        if any(isinstance(v, Host) or (_cel_type(v), v) in literals for v in values.values()):
            chosen.append(device)
            continue
        kinds.setdefault(tuple(site(values[key]) for key, site in sites), device)
    return chosen + list(kinds.values())


Site = tuple[tuple[str, str], Callable[[Any], Any]]


def _observed(tree: Tree, varying: frozenset[tuple[str, str]]) -> tuple[set[tuple[str, Any]], list[Site]] | None:
    """The (type, value)s of the literals ``tree`` compares the ``varying``
    attributes with, and its other tests of them (:func:`_site`), when it
    reads them (and the device) in no other way; else None."""
    literals: set[tuple[str, Any]] = set()
    sites: list[Site] = []
    stack: list[Any] = [tree]
    while stack:
        node = stack.pop()
        if node[0] == "cmp" and node[1] in ("==", "!=", "in"):
            pairs = [(node[2], node[3])] if node[1] == "in" else [(node[2], node[3]), (node[3], node[2])]
            side = next((s for s, o in pairs if _varying(s, varying) and _literals(o, node[1]) is not None), None)
            if side is not None:
                literals.update(_literals(node[3] if side is node[2] else node[2], node[1]) or ())
                continue
        bound = _bound(node)
        if bound is not None:  # cel.bind(g, device.attributes[D], body): body with g as what it stands for
            stack.append(bound)
            continue
        site = _site(node, varying)
        if site is not None:
            sites.append(site)
            continue
        if node[0] == "call" and node[1:3] == ("has", None) and node[3] and _varying(node[3][0], varying):
            continue
        found = _reference(node) if node[0] in ("sel", "index") else None
        if found is not None and (found[1], found[2]) not in varying:
            continue  # the same on every device
        if node == ("sel", ("ident", "device"), "driver"):
            continue
        if (node[0] == "ident" and node[1] == "device") or _varying(node, varying):
            return None
        stack.extend(_children(node))
    return literals, sites


def _bound(node: Tree) -> Tree | None:
    """The body of ``cel.bind(g, device.attributes[D], body)`` with ``g``
    replaced by what it stands for (the same value: CEL has no side
    effects), or None for any other node."""
    if node[0] != "call" or node[1:3] != ("bind", ("ident", "cel")) or len(node[3]) != 3:
        return None
    name, init, body = node[3]
    holder = ("sel", ("ident", "device"), "attributes")
    if name[0] != "ident" or init[0] != "index" or init[1] != holder or init[2][0] != "lit":
        return None
    substituted: Tree = _substitute(body, name[1], init)
    return substituted


def _substitute(node: Any, name: str, value: Tree) -> Any:
    if isinstance(node, list):
        return [_substitute(item, name, value) for item in node]
    if not isinstance(node, tuple) or node[0] == "lit":
        return node
    if node[0] == "ident":
        return value if node[1] == name else node
    if node[0] == "call" and node[1:3] == ("bind", ("ident", "cel")) and len(node[3]) == 3 and node[3][0][1] == name:
        inner, init, body = node[3]  # rebinds the name: only its value reads the outer one
        return (*node[:3], [inner, _substitute(init, name, value), body])
    return tuple(_substitute(part, name, value) if isinstance(part, tuple | list) else part for part in node)


_TESTS = {"startsWith": str.startswith, "endsWith": str.endswith, "contains": str.__contains__}
_ORDERS = ("<", "<=", ">", ">=")


def _site(node: Tree, varying: frozenset[tuple[str, str]]) -> Site | None:
    """``R.test(literal)``, ``R < literal`` or ``literal < R`` (any ordering)
    of a varying attribute R: its key and what it observes of R's value."""
    if node[0] == "call" and node[1] in _TESTS and node[2] is not None and _varying(node[2], varying):
        arguments = node[3]
        if len(arguments) == 1 and arguments[0][0] == "lit" and isinstance(arguments[0][1], str):
            test, argument = _TESTS[node[1]], arguments[0][1]
            return _site_key(node[2]), lambda v: test(v, argument) if type(v) is str else repr(v)
    if node[0] == "cmp" and node[1] in _ORDERS:
        for side, other in ((node[2], node[3]), (node[3], node[2])):
            if _varying(side, varying) and other[0] == "lit" and type(other[1]) is str:
                return _site_key(side), _ordering(other[1])
    return None


def _ordering(literal: str) -> Callable[[Any], Any]:
    return lambda v: (v < literal, v == literal) if type(v) is str else repr(v)


def _site_key(node: Tree) -> tuple[str, str]:
    found = _reference(node)
    assert found is not None
    return (found[1], found[2])


def _varying(node: Tree, varying: frozenset[tuple[str, str]]) -> bool:
    reference = _reference(node) if node[0] in ("sel", "index") else None
    return reference is not None and reference[0] == "attributes" and (reference[1], reference[2]) in varying


def _literals(node: Tree, op: str) -> list[tuple[str, Any]] | None:
    if op != "in" and node[0] == "lit":
        return [(_cel_type(node[1]), node[1])]
    if op == "in" and node[0] == "list" and node[2] is not None:
        return list(node[2])
    return None


def _mentioned(device: dict[str, Any], expression: str) -> bool:
    value = device["attributes"].lookup(device["driver"]).get("deviceID")
    return isinstance(value, str) and value in expression


def _reasons(tree: Any, devices: DriverDevices) -> list[str]:
    """Why the selector matches nothing: the attributes it reads that the
    driver does not publish, and the values it asks for that they never have."""
    found: list[str] = []
    for kind, domain, name in attribute_references(tree):
        published = devices.capacity if kind == "capacity" else devices.attributes
        if (domain, name) not in published:
            found.append(_unpublished(kind, domain, name, devices))
    for reference, literal in comparisons(tree):
        reason = _value_reason(reference, literal, devices)
        if reason:
            found.append(reason)
    return list(dict.fromkeys(found))


def _unpublished(kind: str, domain: str, name: str, devices: DriverDevices) -> str:
    published = devices.capacity if kind == "capacity" else devices.attributes
    elsewhere = sorted(d for d, n in published if n == name)
    what = "attribute" if kind == "attributes" else "capacity"
    where = f'device.{kind}["{domain}"].{name}'
    release = f"DRA driver {devices.combination.driver}"
    if elsewhere:
        return f"{where}: {release} publishes {name} in the domain {elsewhere[0]}, not {domain}"
    listed = ", ".join(f"{d}/{n}" if d != devices.driver else n for d, n in published)
    return f"{where}: {release} publishes no such {what} for vfio devices (its {what}s: {listed})"


def _value_reason(reference: Any, literal: Any, devices: DriverDevices) -> str:
    if reference == "driver":
        return "" if literal == devices.driver else f"device.driver is {_shown(devices.driver)}, not {_shown(literal)}"
    kind, domain, name = reference
    fact = (devices.capacity if kind == "capacity" else devices.attributes).get((domain, name))
    if fact is None or kind == "capacity":
        return ""
    wanted = _CEL_TYPES.get(fact["type"])
    if wanted is not None and type(literal) is not wanted:
        return f"{name} is a {fact['type']} ({fact['computed']}), not the {_cel_type(literal)} {_shown(literal)}"
    if name not in STABLE_ATTRIBUTES or domain != devices.driver:
        host = _host(name, fact["type"])
        return "" if host.could_be(literal) else f"{name} is never {_shown(literal)}: it is {fact['computed']}"
    return _stable_reason(name, literal, devices)


def _stable_reason(name: str, literal: Any, devices: DriverDevices) -> str:
    sample = devices.devices[0]["attributes"].lookup(devices.driver)
    if name in ("type", "vendorID"):
        value = sample[name]
        return "" if literal == value else f"{name} is {_shown(value)} for every vfio device, not {_shown(literal)}"
    if name == "deviceID":
        if _DEVICE_ID.match(literal):
            return ""
        shape = _ANY_ID.match(literal.strip())
        right = f"0x{shape.group(1).lower()}" if shape else "0x2236"
        return f'deviceID is "0x" and four lower-case hex digits ({_shown(right)}), not {_shown(literal)}'
    if literal in devices.names:
        return ""
    return _product_reason(literal, devices)


def _product_reason(literal: str, devices: DriverDevices) -> str:
    ids = _products(literal, devices)
    basis = (
        f"go-nvlib's pci.ids device name (its embedded pci.ids {devices.product['embedded']['version']}; "
        "inferred: an image with a system pci.ids publishes that file's names)"
    )
    if ids:
        shown = ", ".join(f"{_shown(devices.known['0x' + i][1])} for {NVIDIA_VENDOR_ID}:{i}" for i in ids[:3])
        return f"productName is {basis}: {shown}; not the NVML-style {_shown(literal)}"
    return f"productName is {basis}; no NVIDIA device has the name {_shown(literal)}"


def _shown(value: Any) -> str:
    """A literal as CEL spells it (an int also in hex), a character that is
    not printable (a C1 control such as 0x9B, a format character) as its
    CEL escape: a finding never carries it to a terminal."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, int):
        return f"{value} (0x{value:x})"
    return "".join(c if c.isprintable() else _escape(c) for c in cel_string(str(value)))


def _escape(char: str) -> str:
    return f"\\u{ord(char):04x}" if ord(char) <= 0xFFFF else f"\\U{ord(char):08x}"


def _cel_type(value: Any) -> str:
    return {bool: "bool", int: "int", str: "string", Version: "version"}.get(type(value), type(value).__name__)


def _key(text: str) -> str:
    return re.sub(r"[\s_-]+", " ", text.lower()).strip().removeprefix("nvidia ")


def _products(literal: str, devices: DriverDevices) -> list[str]:
    """The device ids whose pci.ids name (or its bracketed model) is ``literal``
    spelled another way ("NVIDIA A10" for "GA102GL [A10]")."""
    wanted = _key(literal)
    found = []
    for i, name in devices.known.values():
        models = [name, *re.findall(r"\[([^\]]*)\]", name)]
        if any(_key(m) == wanted for m in models):
            found.append(i)
    return found


def _named_ids(tree: Any, devices: DriverDevices) -> list[str]:
    """The known device ids a selector names: by device id in any spelling,
    else by product name in any spelling."""
    by_id: list[str] = []
    by_name: list[str] = []
    for reference, literal in comparisons(tree):
        if reference == "driver" or isinstance(literal, bool) or not isinstance(literal, str | int):
            continue
        name = reference[2]
        shape = _ANY_ID.match(literal.strip() if isinstance(literal, str) else f"{literal:04x}")
        if name == "deviceID" and shape and f"0x{shape.group(1).lower()}" in devices.known:
            by_id.append(shape.group(1).lower())
        elif name == "productName" and isinstance(literal, str):
            by_name += _products(literal, devices)
    return list(dict.fromkeys(by_id or by_name))


def _together(ids: list[str], devices: DriverDevices) -> str:
    if not ids:
        return "its conditions together hold for no vfio device"
    shown = "; ".join(
        f'{NVIDIA_VENDOR_ID}:{i} is deviceID "0x{i}", productName {_shown(devices.known["0x" + i][1])}' for i in ids[:3]
    )
    return f"its conditions together hold for no vfio device ({shown})"


__all__ = [
    "HOST_FORMS",
    "MAX_EVALUATIONS",
    "MAX_EXPECTED",
    "Budget",
    "DriverDevices",
    "Verdict",
    "driver_devices",
    "judge",
]
