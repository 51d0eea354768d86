"""Selectors over the vocabulary NVIDIA's DRA driver publishes for vfio
devices, as hypothesis strategies, and the fully known devices they run on
(for tests/dra/test_cel_differential.py, whose docstring says why each
piece is as it is).

Every generated selector is an :class:`Expr` with two spellings of one CEL
expression: ``k8s``, the text a user writes in a ResourceClaim (what
pciname's reader parses), and ``engine``, the same expression as the two
Python CEL engines can run it: ``cel.bind(v, init, body)`` inlined (``body``
with ``(init)`` for ``v``), literals in one plain spelling (the value
matters, not its escapes), and a string's ``size()`` as ``cpSize()``. Both
engines get ``lowerAscii``, ``upperAscii`` and ``cpSize`` as functions
written after cel-go's (see :data:`FUNCTIONS`).
"""

from __future__ import annotations

import functools
import uuid
from dataclasses import dataclass
from typing import Any

from hypothesis import strategies as st

from pciname.dra.cel import Attributes, Domains, Host
from pciname.dra.claims import predicted_device
from pciname.dra.facts import Combination, choose, facts

#: Domains no attribute is published in: DRA gives an empty map for them
#: (k8s.io/dynamic-resource-allocation/cel newStringInterfaceMapWithDefault),
#: so the engines' devices hold them as empty maps. "example" is a CEL
#: identifier (``has(device.attributes.example)``), "example.com" is not.
EMPTY_DOMAINS = ("example.com", "example")
#: Names no release publishes for vfio devices (some are published by other
#: device types or by later releases), per domain.
UNPUBLISHED = {
    "gpu.nvidia.com": ("foo", "partition2", "gpuModuleID", "driverVersion", "index"),
    "resource.kubernetes.io": ("numaNode", "foo"),
    "example.com": ("deviceID",),
}
#: The fully known devices: (device id, numa, iommuFDEnabled, pcieRoot or
#: None when omitted, PCI address, Fabric Manager module id or None when
#: the driver omits gpuModuleID and partitionN).
SAMPLES = (
    ("2236", 0, True, "pci0000:3a", "0000:3b:00.0", None),
    ("20b5", 1, False, None, "0000:af:00.0", 6),
    ("1db6", -1, True, "pci0000:00", "0000:02:00.0", None),
    ("fffe", 0, False, "pci0000:80", "0001:81:00.1", 1),
)
BIND_NAMES = ("g", "x", "dev2", "v")
#: Strings that are not any device's but show CEL's quirks: the empty
#: string, non-ASCII letters whose Unicode case mapping reaches ASCII
#: (long s, Kelvin sign, dotted I), escapes' characters, an NVML-style name.
EXTRA_STRINGS = (
    "",
    "a",
    "A",
    "\u00c4",
    "\u00e4",
    "\u017f",
    "\u212a",
    "\u0130",
    "NVIDIA A10",
    "0X10DE",
    "\n",
    "'",
    '"',
    "\\",
    "a\\",
)
INTS = (-1, 0, 1, 2, 3, 7, 10, 255, 4318, 9223372036854775807)


# -- devices -----------------------------------------------------------------------------


def working_drivers() -> list[str]:
    """The driver releases of the combinations that work (they publish vfio devices)."""
    compatibility = facts()["compatibility"]
    return [d for d in facts()["driver_releases"] if any(e["works"] for e in compatibility[d].values())]


def _host_value(name: str, kind: str, sample: tuple[Any, ...]) -> Any:
    _, numa, iommu, root, address, module = sample
    if name.startswith("partition") and name[len("partition") :].isdigit():
        return None if module is None else (module - 1) // int(name[len("partition") :])
    values = {
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_DNS, address)),  # the driver's form: HOST_FORMS in selectors.py
        "pciBusID": address,
        "pcieRoot": root,
        "numa": numa,
        "numaNode": numa if numa >= 0 else None,  # published only when the node has one
        "iommuFDEnabled": iommu,
        "gpuModuleID": module,
    }
    if name in values:
        return values[name]
    return {"string": "sample", "int": 0, "bool": False}[kind]


@dataclass(frozen=True)
class KnownDevice:
    """One published device with every attribute concrete, as the reader
    (``reader``) and as the engines (``engine``, nested maps) see it."""

    device_id: str
    reader: dict[str, Any]
    engine: dict[str, Any]


def known_device(combination: Combination, sample: tuple[Any, ...]) -> KnownDevice:
    predicted = predicted_device(sample[0], combination)
    driver = predicted.driver
    attributes: dict[str, dict[str, Any]] = {driver: dict(predicted.attributes)}
    for fact in combination.vfio["attributes"]:
        domain, _, name = fact["name"].rpartition("/")
        if name not in predicted.attributes or domain != driver:
            value = _host_value(name, fact["type"], sample)
            if value is not None:  # an attribute the driver omits (pcieRoot, numaNode, Fabric Manager's)
                attributes.setdefault(domain, {})[name] = value
    capacity: dict[str, dict[str, Any]] = {}
    for fact in combination.vfio["capacity"]:
        domain, _, name = fact["name"].rpartition("/")
        capacity.setdefault(domain, {})[name] = "24Gi"  # no selector here compares a quantity
    reader = {
        "driver": driver,
        "attributes": Domains({d: Attributes(v) for d, v in attributes.items()}),
        "capacity": Domains({d: Attributes({n: Host("quantity") for n in v}) for d, v in capacity.items()}),
    }
    empty: dict[str, dict[str, Any]] = {d: {} for d in EMPTY_DOMAINS}
    engine = {"driver": driver, "attributes": {**empty, **attributes}, "capacity": {**empty, **capacity}}
    return KnownDevice(predicted.device, reader, engine)


@functools.cache
def known_devices(driver: str) -> tuple[KnownDevice, ...]:
    combination = choose(driver)
    return tuple(known_device(combination, sample) for sample in SAMPLES)


@dataclass(frozen=True)
class Vocabulary:
    """What a release publishes for vfio devices: each attribute's type by
    (domain, name), the capacity names, the strings and ints its devices hold."""

    driver: str
    types: dict[tuple[str, str], str]
    capacity: tuple[tuple[str, str], ...]
    strings: tuple[str, ...]
    ints: tuple[int, ...]


@functools.cache
def vocabulary(driver: str) -> Vocabulary:
    combination = choose(driver)
    types = {}
    for fact in combination.vfio["attributes"]:
        domain, _, name = fact["name"].rpartition("/")
        types[(domain, name)] = fact["type"]
    capacity = tuple(tuple(c["name"].rpartition("/")[::2]) for c in combination.vfio["capacity"])
    strings: dict[str, None] = {combination.driver_facts["driver_name"]: None}
    ints: dict[int, None] = dict.fromkeys(INTS)
    for device in known_devices(driver):
        for values in device.engine["attributes"].values():
            for value in values.values():
                if isinstance(value, str):
                    strings[value] = None
                elif isinstance(value, int) and not isinstance(value, bool):
                    ints[value] = None
    return Vocabulary(
        combination.driver_facts["driver_name"],
        types,
        capacity,  # type: ignore[arg-type]
        tuple(strings),
        tuple(ints),
    )


# -- expressions ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Expr:
    """One expression: its two spellings, its static CEL type (``dyn`` for
    an attribute), the type of its value on the known devices (``missing``:
    an evaluation error), and ``mixed``: whether it applies an operator to
    values of two types (where celpy strays from cel-go: see the test)."""

    k8s: str
    engine: str
    static: str
    actual: str
    mixed: bool = False


def _plain(value: str) -> str:
    """The engines' spelling of a string literal."""
    out = value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{out}"'


def _escaped(char: str, style: int) -> str:
    """``char`` as one of CEL's escapes (parser/unescape.go: in a string,
    ``\\x``, ``\\X`` and octal give a code point, not a byte)."""
    code = ord(char)
    if style == 0 and code < 0x100:
        return f"\\x{code:02x}"
    if style == 1 and code < 0x100:
        return f"\\X{code:02X}"
    if style == 2 and code < 0x100:
        return f"\\{code:03o}"
    if style == 3 and code < 0x10000:
        return f"\\u{code:04X}"
    return f"\\U{code:08x}"


@st.composite
def string_literal(draw: Any, pool: tuple[str, ...]) -> Expr:
    value = draw(st.sampled_from(pool))
    change = draw(st.sampled_from(("same", "same", "upper", "lower", "head", "tail")))
    cut = draw(st.integers(0, 4))
    value = {
        "upper": value.upper(),
        "lower": value.lower(),
        "head": value[:cut],
        "tail": value[len(value) - cut :],
    }.get(change, value)
    quote = draw(st.sampled_from(('"', "'")))
    style = draw(st.sampled_from(("plain", "plain", "raw", "escape")))
    if style == "raw" and not any(c in value for c in "\n'\""):  # a backslash is itself in a raw string
        k8s = f"r{quote}{value}{quote}"
    elif style == "escape" or any(c in value for c in "\\\n'\""):
        escapes = draw(st.integers(0, 4))
        k8s = quote + "".join(_escaped(c, escapes) for c in value) + quote
    else:
        k8s = f"{quote}{value}{quote}"
    return Expr(k8s, _plain(value), "string", "string")


@st.composite
def int_literal(draw: Any, pool: tuple[int, ...]) -> Expr:
    value = draw(st.sampled_from(pool))
    style = draw(st.sampled_from(("decimal", "decimal", "zeros", "hex")))
    if value < 0:
        text = str(value)
    elif style == "zeros":
        text = "0" * draw(st.integers(1, 3)) + str(value)  # CEL reads 010 as ten (base 10)
    elif style == "hex":
        text = f"0x{value:x}"
    else:
        text = str(value)
    return Expr(text, str(value), "int", "int")


def bool_literal() -> st.SearchStrategy[Expr]:
    return st.sampled_from((Expr("true", "true", "bool", "bool"), Expr("false", "false", "bool", "bool")))


def literal(vocab: Vocabulary, kind: str) -> st.SearchStrategy[Expr]:
    if kind == "string":
        return string_literal(vocab.strings + EXTRA_STRINGS)
    if kind == "int":
        return int_literal(vocab.ints)
    return bool_literal()


@dataclass(frozen=True)
class Scope:
    """The names ``cel.bind`` has bound: name -> (domain or "", the init's engine text, its Expr)."""

    domains: tuple[tuple[str, str, str], ...] = ()  # (name, domain, engine text)
    values: tuple[tuple[str, Expr], ...] = ()

    def names(self) -> set[str]:
        return {n for n, _, _ in self.domains} | {n for n, _ in self.values}


def _domain_text(draw: Any, domain: str) -> tuple[str, str]:
    """``device.attributes[<domain>]``: the user's spelling and the engines'."""
    quote = draw(st.sampled_from(('"', "'")))
    return f"device.attributes[{quote}{domain}{quote}]", f"device.attributes[{_plain(domain)}]"


def _member(draw: Any, holder: tuple[str, str], name: str) -> tuple[str, str]:
    if draw(st.booleans()):
        return f"{holder[0]}.{name}", f"{holder[1]}.{name}"
    quote = draw(st.sampled_from(('"', "'")))
    return f"{holder[0]}[{quote}{name}{quote}]", f"{holder[1]}[{_plain(name)}]"


@st.composite
def attribute(draw: Any, vocab: Vocabulary, scope: Scope, want: str | None = None) -> Expr:
    """A reference to one attribute (published or not), directly or through a bound name."""
    published = [k for k, t in vocab.types.items() if want is None or t == want]
    unpublished = [(d, n) for d, names in UNPUBLISHED.items() for n in names]
    domain, name = draw(
        st.sampled_from(published or unpublished) if draw(st.integers(0, 5)) else st.sampled_from(unpublished)
    )
    bound = [(n, text) for n, d, text in scope.domains if d == domain]
    if bound and draw(st.booleans()):
        var, text = draw(st.sampled_from(bound))
        holder = (var, f"({text})")
    else:
        holder = _domain_text(draw, domain)
    k8s, engine = _member(draw, holder, name)
    return Expr(k8s, engine, "dyn", vocab.types.get((domain, name), "missing"))


@st.composite
def string_expr(draw: Any, vocab: Vocabulary, scope: Scope, depth: int) -> Expr:
    choice = draw(st.integers(0, 5 if depth > 0 else 2))
    if choice == 0:
        return draw(literal(vocab, "string"))
    if choice == 1:
        return draw(attribute(vocab, scope, "string"))
    if choice == 2:
        bound = [e for _, e in scope.values if e.actual == "string"]
        names = [n for n, e in scope.values if e.actual == "string"]
        if bound:
            index = draw(st.integers(0, len(bound) - 1))
            return Expr(names[index], f"({bound[index].engine})", bound[index].static, "string", bound[index].mixed)
        return Expr("device.driver", "device.driver", "string", "string")
    inner = draw(string_expr(vocab, scope, depth - 1))
    method = draw(st.sampled_from(("lowerAscii", "upperAscii")))
    wrong = inner.actual != "string"
    return Expr(f"{inner.k8s}.{method}()", f"{inner.engine}.{method}()", "string", "string", inner.mixed or wrong)


@st.composite
def int_expr(draw: Any, vocab: Vocabulary, scope: Scope, depth: int) -> Expr:
    choice = draw(st.integers(0, 4 if depth > 0 else 1))
    if choice == 0:
        return draw(literal(vocab, "int"))
    if choice == 1:
        return draw(attribute(vocab, scope, "int"))
    if choice == 2:
        items = draw(st.lists(literal(vocab, draw(st.sampled_from(("string", "int")))), max_size=3))
        text = ", ".join(i.k8s for i in items)
        return Expr(f"size([{text}])", f"size([{', '.join(i.engine for i in items)}])", "int", "int")
    inner = draw(string_expr(vocab, scope, depth - 1))
    k8s = f"size({inner.k8s})" if choice == 3 else f"{inner.k8s}.size()"
    return Expr(k8s, f"cpSize({inner.engine})", "int", "int", inner.mixed or inner.actual != "string")


def value_expr(vocab: Vocabulary, scope: Scope, depth: int, kind: str) -> st.SearchStrategy[Expr]:
    if kind == "string":
        return string_expr(vocab, scope, depth)
    if kind == "int":
        return int_expr(vocab, scope, depth)
    return st.one_of(bool_literal(), attribute(vocab, scope, "bool"))


def _mixed(*parts: Expr) -> bool:
    """An operator over values of two types (an evaluation error is no type)."""
    kinds = {p.actual for p in parts} - {"missing"}
    return len(kinds) > 1 or any(p.mixed for p in parts)


@st.composite
def comparison(draw: Any, vocab: Vocabulary, scope: Scope, depth: int) -> Expr:
    """``a OP b`` for every relation, of every type, booleans included; a
    dyn attribute against a literal of another type now and then (CEL
    compiles it: the attribute is dyn)."""
    kind = draw(st.sampled_from(("string", "string", "int", "bool")))
    left = draw(value_expr(vocab, scope, depth, kind))
    other = (
        kind if left.static != "dyn" or draw(st.integers(0, 4)) else draw(st.sampled_from(("string", "int", "bool")))
    )
    right = draw(value_expr(vocab, scope, depth, other) if left.static == "dyn" else literal(vocab, other))
    if right.static not in (left.static, "dyn") and left.static != "dyn":
        right = draw(literal(vocab, left.static))
    if draw(st.booleans()):
        left, right = right, left
    op = draw(st.sampled_from(("==", "!=", "<", "<=", ">", ">=")))
    return Expr(
        f"{left.k8s} {op} {right.k8s}", f"{left.engine} {op} {right.engine}", "bool", "bool", _mixed(left, right)
    )


@st.composite
def membership(draw: Any, vocab: Vocabulary, scope: Scope, depth: int) -> Expr:
    """``x in [literals of one type]`` (CEL's lists are homogeneous in
    Kubernetes: cel.HomogeneousAggregateLiterals), or ``"name" in`` a domain's map."""
    if draw(st.integers(0, 4)) == 0:
        name = draw(st.sampled_from([n for _, n in vocab.types] + ["foo", "numaNode"]))
        domain = draw(st.sampled_from(sorted({d for d, _ in vocab.types} | set(EMPTY_DOMAINS))))
        holder = _domain_text(draw, domain)
        return Expr(f"{_plain(name)} in {holder[0]}", f"{_plain(name)} in {holder[1]}", "bool", "bool")
    kind = draw(st.sampled_from(("string", "int", "bool")))
    item = draw(value_expr(vocab, scope, depth, kind))
    list_kind = kind if item.static != "dyn" or draw(st.integers(0, 4)) else draw(st.sampled_from(("string", "int")))
    items = draw(st.lists(literal(vocab, list_kind), max_size=4))
    k8s = f"{item.k8s} in [{', '.join(i.k8s for i in items)}]"
    engine = f"{item.engine} in [{', '.join(i.engine for i in items)}]"
    return Expr(k8s, engine, "bool", "bool", item.mixed or (bool(items) and _mixed(item, items[0])))


@st.composite
def string_test(draw: Any, vocab: Vocabulary, scope: Scope, depth: int) -> Expr:
    target = draw(string_expr(vocab, scope, depth))
    argument = draw(literal(vocab, "string"))
    method = draw(st.sampled_from(("startsWith", "endsWith", "contains")))
    k8s = f"{target.k8s}.{method}({argument.k8s})"
    return Expr(k8s, f"{target.engine}.{method}({argument.engine})", "bool", "bool", target.mixed)


@st.composite
def presence(draw: Any, vocab: Vocabulary, scope: Scope) -> Expr:
    """``has()`` of a field of device, of a domain, of an attribute (published or not)."""
    choice = draw(st.integers(0, 4))
    if choice == 0:
        field = draw(st.sampled_from(("driver", "attributes", "capacity")))
        return Expr(f"has(device.{field})", f"has(device.{field})", "bool", "bool")
    if choice == 1:
        return Expr("has(device.attributes.example)", "has(device.attributes.example)", "bool", "bool")
    if choice == 2 and vocab.capacity:
        domain, name = draw(st.sampled_from(vocab.capacity))
        text = f"has(device.capacity[{_plain(domain)}].{name})"
        return Expr(text, text, "bool", "bool")
    reference = draw(attribute(vocab, scope))
    while "[" in reference.k8s.rpartition("]")[2] or reference.k8s.endswith("]"):
        reference = draw(attribute(vocab, scope))  # has() takes a field selection only
    return Expr(f"has({reference.k8s})", f"has({reference.engine})", "bool", "bool")


@st.composite
def binding(draw: Any, vocab: Vocabulary, scope: Scope, depth: int) -> Expr:
    """``cel.bind(name, init, body)``: init a domain's map or a value."""
    free = [n for n in BIND_NAMES if n not in scope.names()]
    if not free:
        return draw(bool_expr(vocab, scope, depth - 1))
    name = draw(st.sampled_from(free))
    if draw(st.booleans()):
        domain = draw(st.sampled_from(sorted({d for d, _ in vocab.types} | {"example.com"})))
        k8s, engine = _domain_text(draw, domain)
        inner = Scope(((name, domain, engine), *scope.domains), scope.values)
        init = Expr(k8s, engine, "dyn", "map")
    else:
        init = draw(string_expr(vocab, scope, depth - 1))
        inner = Scope(scope.domains, ((name, init), *scope.values))
    body = draw(bool_expr(vocab, inner, depth - 1))
    return Expr(f"cel.bind({name}, {init.k8s}, {body.k8s})", body.engine, "bool", body.actual, body.mixed or init.mixed)


@st.composite
def bool_expr(draw: Any, vocab: Vocabulary, scope: Scope, depth: int) -> Expr:
    leaves = ("literal", "attribute", "has", "cmp", "cmp", "in", "test")
    inner = ("not", "and", "or", "paren", "bind") * 2 if depth > 0 else ()
    choice = draw(st.sampled_from(leaves + inner))
    if choice == "literal":
        return draw(bool_literal())
    if choice == "attribute":  # a bare attribute: a bool one selects; another type is an error
        found = draw(attribute(vocab, scope, draw(st.sampled_from(("bool", "bool", "int", "string")))))
        return Expr(found.k8s, found.engine, "dyn", found.actual, found.actual not in ("bool", "missing"))
    if choice in ("has", "cmp", "in", "test"):
        strategy = {
            "has": presence(vocab, scope),
            "cmp": comparison(vocab, scope, depth),
            "in": membership(vocab, scope, depth),
        }
        return draw(strategy.get(choice, string_test(vocab, scope, depth)))
    if choice == "bind":
        return draw(binding(vocab, scope, depth))
    a = draw(bool_expr(vocab, scope, depth - 1))
    if choice == "not":
        return Expr(f"!{_grouped(a.k8s)}", f"!{_grouped(a.engine)}", "bool", "bool", _logic_mixed(a))
    if choice == "paren":
        return Expr(f"({a.k8s})", f"({a.engine})", a.static, a.actual, a.mixed)
    b = draw(bool_expr(vocab, scope, depth - 1))
    op = "&&" if choice == "and" else "||"
    k8s = f"{_grouped(a.k8s)} {op} {_grouped(b.k8s)}"
    return Expr(k8s, f"{_grouped(a.engine)} {op} {_grouped(b.engine)}", "bool", "bool", _logic_mixed(a, b))


def _logic_mixed(*parts: Expr) -> bool:
    return any(p.mixed or p.actual not in ("bool", "missing") for p in parts)


def _grouped(text: str) -> str:
    """``text`` as an operand: in parentheses unless it is one term."""
    simple = text.replace("_", "").replace(".", "").replace('"', "").isalnum()
    return text if simple else f"({text})"


@dataclass(frozen=True)
class Deep:
    """A selector made long or deep around an inner one: ``n`` parentheses,
    ``n`` negations, or ``true && ... && inner`` of ``n`` terms."""

    kind: str
    n: int

    def k8s(self, inner: str) -> str:
        if self.kind == "parens":
            return "(" * self.n + inner + ")" * self.n
        if self.kind == "nots":
            return "!" * self.n + f"({inner})"
        return "true && " * self.n + f"({inner})"

    def engine(self, inner: str) -> str:
        """The same expression, short: what cel-go computes for the deep one."""
        if self.kind == "nots":
            return "!" * (self.n % 2) + f"({inner})"
        if self.kind == "chain":
            return f"true && ({inner})"
        return inner


def deep() -> st.SearchStrategy[Deep | None]:
    sizes = st.integers(1, 1300)
    return st.one_of(st.none(), st.builds(Deep, st.sampled_from(("parens", "nots", "chain")), sizes))


def selectors(driver: str, depth: int = 3) -> st.SearchStrategy[Expr]:
    """Boolean selectors over ``driver``'s vfio vocabulary."""
    return bool_expr(vocabulary(driver), Scope(), depth)
