"""A small reader of the DRA CEL selectors people write: :func:`parse` turns
an expression into a tree, or raises :class:`Unjudgeable` for anything
outside the part of CEL it reads; :func:`evaluate` runs the tree on one
device whose host-dependent values are unknown (:class:`Host`).

What it reads: string (quoted, raw; the common escapes), integer and boolean
literals, lists, ``device``, field selection and indexing, ``== != < <= > >=
in && || !``, parentheses, ``has()``, ``size()``, ``cel.bind()`` and the
string methods ``startsWith``, ``endsWith``, ``contains``, ``lowerAscii``,
``upperAscii``. Anything else (``? :``, arithmetic, ``matches``, doubles,
quantities) is :class:`Unjudgeable`: the caller says lint cannot judge the
selector rather than guess.

:func:`evaluate` returns every result the expression can have on the device
(an over-approximation: a value that is unknown gives both outcomes of a
comparison, and the outcomes of the two sides of ``&&`` are combined without
their correlation), with :data:`ERROR` for CEL's evaluation errors (a
missing attribute: "any reference to an unknown field will cause an
evaluation error and allocation to abort", ``k8s.io/api/resource/v1``
``CELDeviceSelector``). ``&&`` and ``||`` absorb errors as CEL's do
(``false && error`` is false, ``true || error`` true). So when no result is
``True`` the selector surely matches nothing on that device.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any


class Unjudgeable(Exception):
    """The expression uses CEL this reader does not evaluate (the text says what)."""


class _Error:
    def __repr__(self) -> str:
        return "ERROR"


#: CEL's evaluation error (a missing field, no matching overload).
ERROR: Any = _Error()


@dataclass(frozen=True)
class Host:
    """A host-dependent value: its CEL type and what it can equal."""

    kind: str  # "string", "int", "bool", "quantity"
    could_be: Callable[[Any], bool] = lambda value: True


class Attributes(dict[str, Any]):
    """One domain's attributes; ``optional`` ones may be absent (``has`` is unknown)."""

    def __init__(self, values: dict[str, Any], optional: Iterable[str] = ()) -> None:
        super().__init__(values)
        self.optional = frozenset(optional)


class Domains(dict[str, Attributes]):
    """``device.attributes`` / ``device.capacity``: an unknown domain is an empty map."""

    def lookup(self, domain: str) -> Attributes:
        return self.get(domain, Attributes({}))


Tree = tuple[Any, ...]

_TOKEN = re.compile(
    r"""\s*(?:(?P<str>[rR]?(?:"(?:[^"\\\n]|\\.)*"|'(?:[^'\\\n]|\\.)*'))
    |(?P<num>0[xX][0-9a-fA-F]+(?![\w.])|\d+(?![\w.]))
    |(?P<id>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>==|!=|&&|\|\||<=|>=|[<>!()\[\].,]))""",
    re.X,
)
_ESCAPES = {"\\": "\\", '"': '"', "'": "'", "n": "\n", "t": "\t", "r": "\r", "`": "`", "?": "?"}
_RELATIONS = ("==", "!=", "<", "<=", ">", ">=", "in")
_KEYWORDS = {"true": True, "false": False}


def _string(token: str) -> str:
    raw = token[0] in "rR"
    body = token[2:-1] if raw else token[1:-1]
    if raw or "\\" not in body:
        return body
    out, i = [], 0
    while i < len(body):
        char = body[i]
        if char != "\\":
            out.append(char)
            i += 1
            continue
        code = body[i + 1]
        if code in _ESCAPES:
            out.append(_ESCAPES[code])
            i += 2
        elif code in "xuU":
            width = {"x": 2, "u": 4, "U": 8}[code]
            digits = body[i + 2 : i + 2 + width]
            if not re.fullmatch(rf"[0-9a-fA-F]{{{width}}}", digits):
                raise Unjudgeable(f"the escape \\{code}{digits}")
            out.append(chr(int(digits, 16)))
            i += 2 + width
        else:
            raise Unjudgeable(f"the escape \\{code}")
    return "".join(out)


def tokens(text: str) -> list[tuple[str, Any]]:
    """The tokens of ``text``: (kind, value); Unjudgeable for anything else."""
    found: list[tuple[str, Any]] = []
    position = 0
    while text[position:].strip():
        match = _TOKEN.match(text, position)
        if match is None or '"""' in match.group(0) or "'''" in match.group(0):
            raise Unjudgeable(f"{text[position:].strip()[:20]!r}")
        kind = match.lastgroup or ""
        value: Any = match.group(kind)
        if kind == "str":
            value = _string(value)
        elif kind == "num":
            value = int(value, 0)
        found.append((kind, value))
        position = match.end()
    return found


class _Parser:
    def __init__(self, text: str) -> None:
        self.items = tokens(text)
        self.at = 0

    def peek(self) -> tuple[str, Any]:
        return self.items[self.at] if self.at < len(self.items) else ("end", None)

    def take(self, op: str | None = None) -> tuple[str, Any]:
        token = self.peek()
        if op is not None and token != ("op", op):
            raise Unjudgeable(f"expected {op!r}, found {token[1]!r}")
        self.at += 1
        return token

    def expression(self) -> Tree:
        return self._binary(self.conjunction, "||", "or")

    def conjunction(self) -> Tree:
        return self._binary(self.relation, "&&", "and")

    def _binary(self, part: Callable[[], Tree], op: str, name: str) -> Tree:
        tree = part()
        while self.peek() == ("op", op):
            self.take()
            tree = (name, tree, part())
        return tree

    def relation(self) -> Tree:
        tree = self.unary()
        while self.peek()[1] in _RELATIONS and self.peek()[0] in ("op", "id"):
            op = self.take()[1]
            tree = ("cmp", op, tree, self.unary())
        return tree

    def unary(self) -> Tree:
        if self.peek() == ("op", "!"):
            self.take()
            return ("not", self.unary())
        return self.member()

    def member(self) -> Tree:
        tree = self.primary()
        while self.peek() in (("op", "."), ("op", "[")):
            if self.take()[1] == "[":
                tree = ("index", tree, self.expression())
                self.take("]")
                continue
            kind, name = self.take()
            if kind != "id":
                raise Unjudgeable(f"a field named {name!r}")
            tree = ("call", name, tree, self.arguments()) if self.peek() == ("op", "(") else ("sel", tree, name)
        return tree

    def arguments(self, close: str = ")") -> list[Tree]:
        self.take("(" if close == ")" else "[")
        found: list[Tree] = []
        while self.peek() != ("op", close):
            found.append(self.expression())
            if self.peek() != ("op", close):
                self.take(",")
        self.take(close)
        return found

    def primary(self) -> Tree:
        kind, value = self.peek()
        if kind in ("str", "num"):
            self.take()
            return ("lit", value)
        if kind == "id":
            self.take()
            if value in _KEYWORDS:
                return ("lit", _KEYWORDS[value])
            return ("call", value, None, self.arguments()) if self.peek() == ("op", "(") else ("ident", value)
        if (kind, value) == ("op", "("):
            self.take()
            tree = self.expression()
            self.take(")")
            return tree
        if (kind, value) == ("op", "["):
            return ("list", self.arguments("]"))
        raise Unjudgeable(f"{value!r}" if value is not None else "an expression that ends too soon")


def parse(text: str) -> Tree:
    """The tree of ``text``; Unjudgeable for CEL this reader does not take."""
    parser = _Parser(text)
    tree = parser.expression()
    if parser.peek()[0] != "end":
        raise Unjudgeable(f"{parser.peek()[1]!r}")
    return tree


# -- evaluation: every result one device can give ----------------------------------------

Results = list[Any]


def _unique(values: Iterable[Any]) -> Results:
    out: Results = []
    for value in values:
        if not any(value is seen or (type(value) is type(seen) and value == seen) for seen in out):
            out.append(value)
    return out


def _type(value: Any) -> str:
    if isinstance(value, Host):
        return value.kind
    return {bool: "bool", int: "int", str: "string", tuple: "list"}.get(type(value), "map")


def _logic(op: str, a: Any, b: Any) -> Any:
    stop = op == "or"  # the value that decides: true for ||, false for &&
    if a is stop or b is stop:
        return stop
    if isinstance(a, bool) and isinstance(b, bool):
        return not stop
    return ERROR


def _equal(a: Any, b: Any) -> Results:
    if a is ERROR or b is ERROR:
        return [ERROR]
    if isinstance(a, Host) or isinstance(b, Host):
        host, other = (a, b) if isinstance(a, Host) else (b, a)
        if isinstance(other, Host) or host.kind == "quantity":
            raise Unjudgeable("a comparison of two host-dependent values")
        if _type(other) != host.kind:
            return [False, ERROR]
        return [True, False] if host.could_be(other) else [False]
    if _type(a) != _type(b):
        return [False, ERROR]  # heterogeneous equality is false, or no overload: either way no match
    if _type(a) in ("list", "map"):
        raise Unjudgeable("a comparison of lists or maps")
    return [a == b]


def _order(op: str, a: Any, b: Any) -> Results:
    if a is ERROR or b is ERROR:
        return [ERROR]
    kinds = {_type(a), _type(b)}
    if len(kinds) != 1 or not kinds <= {"int", "string"}:
        if "quantity" in kinds:
            raise Unjudgeable("a comparison of quantities")
        return [ERROR]
    if isinstance(a, Host) or isinstance(b, Host):
        return [True, False]
    return [{"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]]


def _contains(item: Any, container: Any) -> Results:
    if container is ERROR or item is ERROR:
        return [ERROR]
    if isinstance(container, tuple):
        found: Results = [False]
        for element in container:
            found = _unique(_logic("or", a, b) for a in found for b in _equal(item, element))
        return found
    if isinstance(container, Attributes) and isinstance(item, str):
        return _has(container, item)
    raise Unjudgeable("an 'in' on something that is no list of literals or map")


def _has(attributes: Any, name: str) -> Results:
    if not isinstance(attributes, Attributes):
        return [ERROR]
    if name not in attributes:
        return [False]
    return [True, False] if name in attributes.optional else [True]


def _field(value: Any, name: str) -> Results:
    if value is ERROR:
        return [ERROR]
    if isinstance(value, Domains):
        return [value.lookup(name)]
    if isinstance(value, Attributes):
        if name not in value:
            return [ERROR]
        return [value[name], ERROR] if name in value.optional else [value[name]]
    if isinstance(value, dict):
        if name not in value:
            raise Unjudgeable(f"device.{name}")
        return [value[name]]
    raise Unjudgeable(f"a field of a {_type(value)}")


_STRING_TESTS: dict[str, Callable[[str, str], bool]] = {
    "startsWith": str.startswith,
    "endsWith": str.endswith,
    "contains": str.__contains__,
}
_STRING_CASES: dict[str, Callable[[str], str]] = {"lowerAscii": str.lower, "upperAscii": str.upper}


def _method(name: str, target: Any, arguments: list[Any]) -> Results:
    if target is ERROR or ERROR in arguments:
        return [ERROR]
    if name == "size" and not arguments and _type(target) in ("string", "list", "map"):
        return [Host("int")] if isinstance(target, Host) else [len(target)]
    if _type(target) != "string" or not all(isinstance(a, str) for a in arguments):
        raise Unjudgeable(f"{name}() on a {_type(target)}")
    if name in _STRING_TESTS and len(arguments) == 1:
        return [True, False] if isinstance(target, Host) else [_STRING_TESTS[name](target, arguments[0])]
    if name in _STRING_CASES and not arguments:
        return [Host("string")] if isinstance(target, Host) else [_STRING_CASES[name](target)]
    raise Unjudgeable(f"the method {name}()")


class Evaluator:
    """Evaluates trees on one device (``device``: a dict with ``driver``,
    ``attributes`` and ``capacity``, the last two :class:`Domains`)."""

    def __init__(self, device: dict[str, Any]) -> None:
        self.device = device

    def run(self, tree: Tree, scope: dict[str, Any] | None = None) -> Results:
        """Every result of ``tree`` on the device."""
        scope = scope or {}
        kind = tree[0]
        if kind == "lit":
            return [tree[1]]
        if kind == "ident":
            if tree[1] == "device":
                return [self.device]
            if tree[1] in scope:
                return [scope[tree[1]]]
            raise Unjudgeable(f"the name {tree[1]!r}")
        if kind == "list":
            return self._list(tree[1], scope)
        if kind in ("and", "or"):
            left, right = self.run(tree[1], scope), self.run(tree[2], scope)
            return _unique(_logic(kind, a, b) for a in left for b in right)
        if kind == "not":
            return _unique(not v if isinstance(v, bool) else ERROR for v in self.run(tree[1], scope))
        return self._rest(tree, scope)

    def _list(self, items: list[Tree], scope: dict[str, Any]) -> Results:
        values = []
        for item in items:
            results = self.run(item, scope)
            if len(results) != 1 or isinstance(results[0], Host) or _type(results[0]) not in ("string", "int", "bool"):
                raise Unjudgeable("a list of other things than literals")
            values.append(results[0])
        return [tuple(values)]

    def _rest(self, tree: Tree, scope: dict[str, Any]) -> Results:
        kind = tree[0]
        if kind == "sel":
            return _unique(r for v in self.run(tree[1], scope) for r in _field(v, tree[2]))
        if kind == "index":
            keys = self.run(tree[2], scope)
            if len(keys) != 1 or not isinstance(keys[0], str):
                raise Unjudgeable("an index that is no string literal")
            return _unique(r for v in self.run(tree[1], scope) for r in _field(v, keys[0]))
        if kind == "cmp":
            return self._compare(tree[1], tree[2], tree[3], scope)
        return self._call(tree[1], tree[2], tree[3], scope)

    def _compare(self, op: str, left: Tree, right: Tree, scope: dict[str, Any]) -> Results:
        found: Results = []
        for a in self.run(left, scope):
            for b in self.run(right, scope):
                if op in ("==", "!="):
                    equal = _equal(a, b)
                    found += equal if op == "==" else [not v if isinstance(v, bool) else v for v in equal]
                elif op == "in":
                    found += _contains(a, b)
                else:
                    found += _order(op, a, b)
        return _unique(found)

    def _call(self, name: str, target: Tree | None, arguments: list[Tree], scope: dict[str, Any]) -> Results:
        if target == ("ident", "cel") and name == "bind" and len(arguments) == 3 and arguments[0][0] == "ident":
            return _unique(
                r for v in self.run(arguments[1], scope) for r in self.run(arguments[2], {**scope, arguments[0][1]: v})
            )
        if target is None and name == "has" and len(arguments) == 1 and arguments[0][0] == "sel":
            inner = arguments[0]
            return _unique(r for v in self.run(inner[1], scope) for r in _has(v, inner[2]))
        if target is None and name == "size" and len(arguments) == 1:
            target, arguments = arguments[0], []
        if target is None:
            raise Unjudgeable(f"the function {name}()")
        values = [self.run(a, scope) for a in arguments]
        if any(len(v) != 1 for v in values):
            raise Unjudgeable(f"{name}() of a value that is not known")
        return _unique(r for t in self.run(target, scope) for r in _method(name, t, [v[0] for v in values]))


def evaluate(tree: Tree, device: dict[str, Any]) -> Results:
    """Every result ``tree`` can have on ``device`` (:data:`ERROR` among them)."""
    return Evaluator(device).run(tree)


def attribute_references(tree: Tree) -> list[tuple[str, str, str]]:
    """Every ``device.attributes[D].N`` / ``device.capacity[D].N`` (also
    ``[D]["N"]``, and ``has()`` of one) in ``tree``: (``attributes`` or
    ``capacity``, D, N), in order."""
    found: list[tuple[str, str, str]] = []

    def visit(node: Any) -> None:
        if not isinstance(node, tuple) or not node:
            if isinstance(node, list):
                for item in node:
                    visit(item)
            return
        reference = _reference(node)
        if reference is not None:
            found.append(reference)
            return
        for part in node[1:]:
            visit(part)

    visit(tree)
    return found


def _reference(node: Tree) -> tuple[str, str, str] | None:
    if node[0] not in ("sel", "index") or not isinstance(node[1], tuple):
        return None
    name = node[2] if node[0] == "sel" else (node[2][1] if node[2][0] == "lit" else None)
    domain_node = node[1]
    if not isinstance(name, str) or domain_node[0] != "index" or domain_node[2][0] != "lit":
        return None
    holder = domain_node[1]
    if holder[0] == "sel" and holder[1] == ("ident", "device") and holder[2] in ("attributes", "capacity"):
        return (holder[2], str(domain_node[2][1]), name)
    return None


def comparisons(tree: Tree) -> list[tuple[tuple[str, str, str] | str, Any]]:
    """Every ``==`` of an attribute reference (or ``device.driver``) with a
    literal in ``tree``, and every literal of an ``in`` list it is tested
    against: (the reference, or ``"driver"``; the literal)."""
    found: list[tuple[tuple[str, str, str] | str, Any]] = []

    def visit(node: Any) -> None:
        if isinstance(node, list):
            for item in node:
                visit(item)
        if not isinstance(node, tuple) or not node:
            return
        if node[0] == "cmp" and node[1] in ("==", "in"):
            pairs = [(node[2], node[3])] if node[1] == "in" else [(node[2], node[3]), (node[3], node[2])]
            for side, other in pairs:
                literals = [other] if node[1] == "==" else (other[1] if other[0] == "list" else [])
                reference = "driver" if side == ("sel", ("ident", "device"), "driver") else _reference(side)
                if reference is not None:
                    found.extend((reference, item[1]) for item in literals if item[0] == "lit")
        for part in node[1:]:
            visit(part)

    visit(tree)
    return found


__all__ = [
    "ERROR",
    "Attributes",
    "Domains",
    "Host",
    "Unjudgeable",
    "attribute_references",
    "comparisons",
    "evaluate",
    "parse",
]
