"""A small reader of the DRA CEL selectors people write: :func:`parse` turns
an expression into a tree, or raises :class:`Unjudgeable` for anything
outside the part of CEL it reads; :func:`evaluate` runs the tree on one
device whose host-dependent values are unknown (:class:`Host`).

What it reads, as cel-go reads it (google/cel-go v0.28.1,
14f6746a286f198c2a976749331b7bf4aa2d4bd2: ``parser/gen/CEL.g4``,
``parser/parser.go``, ``parser/unescape.go``, ``interpreter/interpretable.go``,
``common/types``): string literals (quoted, raw; every escape, a code point
past U+10FFFF or a surrogate refused as cel-go's ``unescape`` refuses it),
integer literals (decimal, a leading zero included: ``ParseInt(text, 10,
64)``, ``0x`` hex, a ``-`` sign; past int64 refused), ``true``/``false``,
lists, ``device``, field selection and indexing, ``== != < <= > >= in && ||
!``, parentheses, ``has()``, ``size()``, ``cel.bind()`` and the string
methods ``startsWith``, ``endsWith``, ``contains``, ``lowerAscii``,
``upperAscii`` (ASCII letters only, as cel-go's strings extension). Anything
else (``? :``, arithmetic, ``matches``, doubles, uints, quantities, the
semver functions) is :class:`Unjudgeable`: the caller says lint cannot
judge the selector rather than guess.

Bounds: a selector longer than :data:`MAX_SELECTOR_BYTES` (Kubernetes' own
limit), nested deeper than :data:`MAX_NESTING` or with a tree deeper than
:data:`MAX_DEPTH` is Unjudgeable (cel-go refuses nesting past 250 of one
rule, ``parser/parser.go`` ``maxRecursionDepth``); ``&&`` and ``||`` chains
are n-ary and a run of ``!`` is counted (cel-go drops an even run), so no
recursion follows the selector's length. The tokenizer is linear; a list of
literals is a set, looked up once per ``in``. ``check`` (a deadline or a
cancellation) is called as the work goes and raises to stop it.

:func:`evaluate` returns every result the expression can have on the device
(an over-approximation: a value that is unknown gives both outcomes of a
comparison, and the outcomes of the operands of ``&&`` are combined without
their correlation), with :data:`ERROR` for CEL's evaluation errors (a
missing attribute: "any reference to an unknown field will cause an
evaluation error and allocation to abort", ``k8s.io/api/resource/v1``
``CELDeviceSelector``). ``&&`` and ``||`` absorb errors as cel-go's do
(``false && error`` is false, ``true || error`` true), ``==`` of values of
two types is false (``types.Equal``; a version on its left: no such
overload), ``!=`` is true unless ``==`` is (``evalNe``), booleans are
ordered (false < true). So when no result is ``True`` the selector surely
matches nothing on that device.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from pciname.errors import PcinameBaseError


class Unjudgeable(PcinameBaseError):
    """The expression uses CEL this reader does not evaluate (the text says what)."""


class Invalid(Unjudgeable):
    """The expression is no valid CEL: cel-go refuses it (the text says why)."""


class Beyond(Unjudgeable):
    """The expression is past one of the reader's bounds (the text says which)."""


class _Error:
    def __repr__(self) -> str:
        return "ERROR"


#: CEL's evaluation error (a missing field, no matching overload).
ERROR: Any = _Error()

#: Kubernetes' limit on a selector (``CELSelectorExpressionMaxLength``,
#: kubernetes/api ``resource/v1/types.go`` at
#: 10b39a39bcee995dfe7cd5e8e7b922be5e46f1e2: 10 * 1024, Go's len: bytes);
#: the API server refuses a longer one, and the reader judges none.
MAX_SELECTOR_BYTES = 10 * 1024
#: Parentheses, brackets and calls nested deeper than this are not judged
#: (cel-go refuses past 250; Python's own stack is the bound here).
MAX_NESTING = 50
#: cel-go's parser refuses nesting past this (``parser/parser.go``, the
#: default ``maxRecursionDepth``, counted per grammar rule).
CEL_MAX_NESTING = 250
#: A tree deeper than this (chains of fields, comparisons) is not judged.
MAX_DEPTH = 100
#: Nodes read (tokens, tree nodes evaluated) between two calls of ``check``.
CHECK_EVERY = 256


def _nothing() -> None:
    return None


class Version(str):
    """A DRA attribute of type ``version``: in Kubernetes' CEL a semver value
    (k8s.io/dynamic-resource-allocation's ``semver.Parse`` of the slice's
    text, k8s.io/apiserver's ``Semver``), no string: ``==`` with a string has
    no overload, and no string method applies. The text is the slice's (a
    str, so reports show it as it is)."""

    __slots__ = ()


@dataclass(frozen=True)
class Host:
    """A host-dependent value: its CEL type and what it can equal."""

    kind: str  # "string", "int", "bool", "version", "quantity"
    could_be: Callable[[Any], bool] = lambda value: True


class Attributes(dict[str, Any]):
    """One domain's attributes; ``optional`` ones may be absent (``has`` is unknown)."""

    def __init__(self, values: dict[str, Any], optional: Iterable[str] = ()) -> None:
        super().__init__(values)
        self.optional = frozenset(optional)


class Domains(dict[str, Attributes]):
    """``device.attributes`` / ``device.capacity``: an unknown domain is an empty map."""

    def lookup(self, domain: str) -> Attributes:
        found = self.get(domain)
        return found if found is not None else _EMPTY


_EMPTY = Attributes({})
Tree = tuple[Any, ...]

_TOKEN = re.compile(
    r"""[\t\n\f\r ]*(?:(?P<str>(?:"(?:[^"\\\n\r]|\\.)*"|'(?:[^'\\\n\r]|\\.)*'))
    |(?P<raw>[rR](?:"[^"\n\r]*"|'[^'\n\r]*'))
    |(?P<num>0x[0-9a-fA-F]+(?![\w.])|[0-9]+(?![\w.]))
    |(?P<id>[A-Za-z_][A-Za-z0-9_]*)
    |(?P<op>==|!=|&&|\|\||<=|>=|[<>!()\[\].,-]))""",
    re.X | re.S,
)
_BLANK = re.compile(r"[\t\n\f\r ]*\Z")
_ESCAPES = {
    **{c: c for c in "\\\"'`?"},
    **{"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v"},
}
_HEX = {"x": 2, "X": 2, "u": 4, "U": 8}
_ESCAPE = re.compile(r"\\(?:([xXuU])([0-9a-fA-F]*)|([0-3][0-7][0-7])|(.))", re.S)
_RELATIONS = ("==", "!=", "<", "<=", ">", ">=", "in")
_KEYWORDS = {"true": True, "false": False}
_INT64 = 2**63


def _code_point(match: re.Match[str]) -> str:
    kind, digits, octal, char = match.groups()
    if octal:
        return chr(int(octal, 8))
    if kind:
        width = _HEX[kind]
        if len(digits) < width:
            raise Invalid(f"the escape \\{kind}{digits[:8]} has fewer than {width} hex digits")
        value = int(digits[:width], 16)
        if value > 0x10FFFF or 0xD800 <= value <= 0xDFFF:  # parser/unescape.go: utf8.ValidRune
            raise Invalid(f"the escape \\{kind}{digits[:width]} is no Unicode character (a surrogate or past U+10FFFF)")
        return chr(value) + digits[width:]
    if char in _ESCAPES:
        return _ESCAPES[char]
    raise Invalid(f"the escape \\{char!r}"[:40])


def _string(token: str) -> str:
    body = token[1:-1]
    return _ESCAPE.sub(_code_point, body) if "\\" in body else body


def _number(text: str, negative: bool) -> int:
    digits = text[2:] if text.startswith("0x") else text
    if len(digits) > 20:  # past int64 in any base (and past Python's int() limit long before)
        raise Invalid(f"the integer {text[:24]}... is past int64")
    value = int(digits, 16 if text.startswith("0x") else 10)  # a leading zero: ParseInt(text, 10, 64)
    value = -value if negative else value
    if not -_INT64 <= value < _INT64:
        raise Invalid(f"the integer {'-' if negative else ''}{text} is past int64")
    return value


def _surrogate(text: str) -> None:
    for char in text:
        if 0xD800 <= ord(char) <= 0xDFFF:
            raise Invalid(f"the character U+{ord(char):04X} is a lone surrogate, no Unicode character")


def tokens(text: str, check: Callable[[], None] | None = None) -> list[tuple[str, Any]]:
    """The tokens of ``text``: (kind, value); Unjudgeable for anything else.
    Linear: each token is matched in place."""
    check = check or _nothing
    found: list[tuple[str, Any]] = []
    position = 0
    while not _BLANK.match(text, position):
        if len(found) % CHECK_EVERY == 0:
            check()
        match = _TOKEN.match(text, position)
        if match is None or match.group(0).lstrip().startswith(('"""', "'''")):
            raise Unjudgeable(f"{text[position : position + 40].strip()[:20]!r}")
        kind = match.lastgroup or ""
        value: Any = match.group(kind)
        if kind == "str":
            value = _string(value)
        elif kind == "raw":
            kind, value = "str", value[2:-1]
        elif kind == "num":
            value = _number(value, False)
        found.append((kind, value))
        position = match.end()
    return found


class _Parser:
    def __init__(self, text: str, check: Callable[[], None]) -> None:
        self.items = tokens(text, check)
        self.at = 0
        self.nesting = 0
        self.check = check
        #: Equal field selections made one object (the evaluator evaluates each once).
        self.shared: dict[Tree, Tree] = {}

    def peek(self) -> tuple[str, Any]:
        return self.items[self.at] if self.at < len(self.items) else ("end", None)

    def take(self, op: str | None = None) -> tuple[str, Any]:
        token = self.peek()
        if op is not None and token != ("op", op):
            raise Unjudgeable(f"expected {op!r}, found {token[1]!r}")
        self.at += 1
        if self.at % CHECK_EVERY == 0:
            self.check()
        return token

    def expression(self) -> Tree:
        self.nesting += 1
        if self.nesting > MAX_NESTING:
            if _nesting(self.items) > CEL_MAX_NESTING:
                raise Invalid(
                    f"it nests deeper than {CEL_MAX_NESTING} levels, cel-go's limit (parser/parser.go maxRecursionDepth)"
                )
            raise Beyond(f"it nests deeper than {MAX_NESTING} levels, more than this reader follows")
        tree = self._chain(self.conjunction, "||", "or")
        self.nesting -= 1
        return tree

    def conjunction(self) -> Tree:
        return self._chain(self.relation, "&&", "and")

    def _chain(self, part: Callable[[], Tree], op: str, name: str) -> Tree:
        parts = [part()]
        while self.peek() == ("op", op):
            self.take()
            parts.append(part())
        return parts[0] if len(parts) == 1 else (name, parts)

    def relation(self) -> Tree:
        tree = self.unary()
        while self.peek()[1] in _RELATIONS and self.peek()[0] in ("op", "id"):
            op = self.take()[1]
            tree = ("cmp", op, tree, self.unary())
        return tree

    def unary(self) -> Tree:
        count = 0
        while self.peek() == ("op", "!"):
            self.take()
            count += 1
        if self.peek() == ("op", "-"):
            return self.negative(count)
        tree = self.member()
        return ("not", tree) if count % 2 else tree  # parser.go VisitLogicalNot: an even run is dropped

    def negative(self, nots: int) -> Tree:
        signs = 0
        while self.peek() == ("op", "-"):
            self.take()
            signs += 1
        kind, value = self.take()
        if kind != "num" or self.peek() in (("op", "."), ("op", "[")):
            raise Unjudgeable("'-' before anything but an integer literal")
        tree = ("lit", -value if signs % 2 else value)
        if not -_INT64 <= tree[1] < _INT64:
            raise Invalid(f"the integer {tree[1]} is past int64")
        return ("not", tree) if nots % 2 else tree

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
            tree = ("call", name, tree, self.arguments()) if self.peek() == ("op", "(") else self.share(tree, name)
        return tree

    def share(self, tree: Tree, name: str) -> Tree:
        node = ("sel", tree, name)
        try:
            return self.shared.setdefault(node, node)
        except TypeError:  # a selection from a call (its arguments are a list)
            return node

    def arguments(self, close: str = ")") -> list[Tree]:
        self.take("(" if close == ")" else "[")
        found: list[Tree] = []
        while self.peek() != ("op", close):
            found.append(self.expression())
            if self.peek() != ("op", close):
                self.take(",")
                if close == ")" and self.peek() == ("op", close):
                    raise Invalid("a ',' before ')'")  # CEL.g4 exprList: no trailing comma
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
            return _list(self.arguments("]"))
        raise Unjudgeable(f"{value!r}" if value is not None else "an expression that ends too soon")


def _nesting(items: list[tuple[str, Any]]) -> int:
    deepest = level = 0
    for item in items:
        if item in (("op", "("), ("op", "[")):
            level += 1
            deepest = max(deepest, level)
        elif item in (("op", ")"), ("op", "]")):
            level -= 1
    return deepest


def _list(items: list[Tree]) -> Tree:
    """A list node; a list of literals also carries the set of its (type, value)s."""
    if all(item[0] == "lit" for item in items):
        return ("list", items, frozenset((_type(item[1]), item[1]) for item in items))
    return ("list", items, None)


def parse(text: str, check: Callable[[], None] | None = None) -> Tree:
    """The tree of ``text``; Unjudgeable for CEL this reader does not take,
    and past :data:`MAX_SELECTOR_BYTES`, :data:`MAX_NESTING` or :data:`MAX_DEPTH`."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_SELECTOR_BYTES:
        raise Beyond(
            f"it is {size} bytes, longer than Kubernetes' limit of {MAX_SELECTOR_BYTES} "
            "(CELSelectorExpressionMaxLength): the API server refuses it"
        )
    _surrogate(text)
    parser = _Parser(text, check or _nothing)
    tree = parser.expression()
    if parser.peek()[0] != "end":
        raise Unjudgeable(f"{parser.peek()[1]!r}")
    if depth(tree) > MAX_DEPTH:
        raise Beyond(f"its tree is deeper than {MAX_DEPTH} levels, more than this reader follows")
    return tree


def _children(node: Tree) -> list[Tree]:
    kind = node[0]
    if kind in ("and", "or", "list"):
        return list(node[1])
    if kind in ("sel", "not"):
        return [node[1]]
    if kind == "index":
        return [node[1], node[2]]
    if kind == "cmp":
        return [node[2], node[3]]
    if kind == "call":
        return ([node[2]] if node[2] is not None else []) + list(node[3])
    return []


def depth(tree: Tree) -> int:
    """How deep ``tree`` is (iteratively: any depth is measured)."""
    deepest, stack = 0, [(tree, 1)]
    while stack:
        node, level = stack.pop()
        deepest = max(deepest, level)
        stack.extend((child, level + 1) for child in _children(node))
    return deepest


# -- evaluation: every result one device can give ----------------------------------------

Results = list[Any]


@dataclass(frozen=True)
class Items:
    """A list value: its items and the set of their (type, value)s, for ``in``."""

    values: tuple[Any, ...]
    index: frozenset[tuple[str, Any]]


_KINDS = {bool: "bool", int: "int", str: "string", Version: "version", Items: "list"}


def _unique(values: Iterable[Any]) -> Results:
    out: Results = []
    if isinstance(values, list) and len(values) == 1:
        return values
    for value in values:
        if not any(value is seen or (type(value) is type(seen) and value == seen) for seen in out):
            out.append(value)
    return out


def _type(value: Any) -> str:
    if isinstance(value, Host):
        return value.kind
    return _KINDS.get(type(value), "map")


def _logic(op: str, a: Any, b: Any) -> Any:
    stop = op == "or"  # the value that decides: true for ||, false for &&
    if a is stop or b is stop:
        return stop
    if isinstance(a, bool) and isinstance(b, bool):
        return not stop
    return ERROR


def _equal(a: Any, b: Any) -> Results:
    """``a == b`` as cel-go's ``types.Equal``: values of two types are not
    equal, but a version (Kubernetes' Semver) on the left has no overload."""
    if a is ERROR or b is ERROR:
        return [ERROR]
    left, right = _type(a), _type(b)
    if "quantity" in (left, right):
        raise Unjudgeable("a comparison of quantities")
    if left != right:
        return [ERROR] if left == "version" else [False]
    if isinstance(a, Host) or isinstance(b, Host):
        host, other = (a, b) if isinstance(a, Host) else (b, a)
        if isinstance(other, Host):
            raise Unjudgeable("a comparison of two host-dependent values")
        return [True, False] if host.could_be(other) else [False]
    if left in ("list", "map"):
        raise Unjudgeable("a comparison of lists or maps")
    if left == "version" and a != b:
        raise Unjudgeable("a comparison of two versions")
    return [a == b]


def _not_equal(a: Any, b: Any) -> Results:
    """``a != b``: cel-go's evalNe, true unless ``==`` is true (its error too)."""
    if a is ERROR or b is ERROR:
        return [ERROR]
    return _unique(r is not True for r in _equal(a, b))


def _order(op: str, a: Any, b: Any) -> Results:
    if a is ERROR or b is ERROR:
        return [ERROR]
    kinds = {_type(a), _type(b)}
    if kinds & {"quantity", "version"}:
        raise Unjudgeable("an ordering of quantities or versions")
    if len(kinds) != 1 or not kinds <= {"int", "string", "bool"}:
        return [ERROR]  # no such overload (CEL orders ints, strings, booleans; no doubles or uints here)
    if isinstance(a, Host) or isinstance(b, Host):
        return [True, False]
    return [{"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]]


def _contains(item: Any, container: Any) -> Results:
    if container is ERROR or item is ERROR:
        return [ERROR]
    if isinstance(container, Items):  # cel-go's list Contains: true when an item Equal()s, else false
        if _type(item) == "quantity":
            raise Unjudgeable("an 'in' of a quantity")
        if isinstance(item, Host):
            could = any(_type(v) == item.kind and item.could_be(v) for v in container.values)
            return [True, False] if could else [False]
        return [(_type(item), item) in container.index]
    if isinstance(container, Attributes) and _type(item) == "string":
        return _has(container, item)
    if _type(container) in ("string", "int", "bool", "version"):
        return [ERROR]  # no such overload
    raise Unjudgeable("an 'in' on something that is no list or map of attributes")


def _has(value: Any, name: str) -> Results:
    """``has(value.name)``."""
    if value is ERROR:
        return [ERROR]
    if isinstance(value, Domains):
        # Kubernetes answers an empty map for any domain, found (kubernetes/dynamic-resource-allocation
        # cel/compile.go newStringInterfaceMapWithDefault, 3d036712930cdac0b0d46c4c21316a78147c551f), so
        # cel-go's has() is true (interpreter/attributes.go refQualify); an engine on plain maps says false.
        raise Unjudgeable(f"has() of the domain {name!r} (Kubernetes' map of domains finds an empty map for any)")
    if isinstance(value, Attributes):
        if name not in value:
            return [False]
        return [True, False] if name in value.optional else [True]
    if isinstance(value, dict):
        if name not in value:
            raise Unjudgeable(f"has(device.{name})")
        return [True]
    if _type(value) in ("string", "int", "bool", "list"):
        return [ERROR]
    raise Unjudgeable(f"has() of a field of a {_type(value)}")


def _field(value: Any, name: str) -> Results:
    if value is ERROR:
        return [ERROR]
    if isinstance(value, Domains):
        return [value.lookup(name)]
    if isinstance(value, Attributes):
        if name not in value:
            return [ERROR]
        found = value[name]
        # a host-dependent bool is either: && || ! and comparisons then take it as CEL does
        values = [True, False] if isinstance(found, Host) and found.kind == "bool" else [found]
        return [*values, ERROR] if name in value.optional else values
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
#: cel-go's strings extension changes ASCII letters only (ext/strings.go lowerASCII/upperASCII).
_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
_UPPER = str.maketrans("abcdefghijklmnopqrstuvwxyz", "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
_STRING_CASES = {"lowerAscii": _LOWER, "upperAscii": _UPPER}


def _size(target: Any) -> Results:
    kind = _type(target)
    if isinstance(target, Host):
        if kind == "string":
            return [Host("int", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0)]
        if kind == "quantity":
            raise Unjudgeable("size() of a quantity")
        return [ERROR]
    if isinstance(target, Items):
        return [len(target.values)]
    if kind == "string":
        return [len(target)]  # code points, as cel-go's size of a string
    if isinstance(target, Attributes) and not isinstance(target, Domains) and not target.optional:
        return [len(target)]
    if kind in ("int", "bool", "version"):
        return [ERROR]
    raise Unjudgeable(f"size() of a {kind}")


def _method(name: str, target: Any, arguments: list[Any]) -> Results:
    if target is ERROR or ERROR in arguments:
        return [ERROR]
    if name == "size" and not arguments:
        return _size(target)
    if name not in _STRING_TESTS and name not in _STRING_CASES:
        raise Unjudgeable(f"the method {name}()")
    if _type(target) == "quantity" or any(isinstance(a, Host) for a in arguments):
        raise Unjudgeable(f"{name}() of a quantity or host-dependent value")
    if len(arguments) != (1 if name in _STRING_TESTS else 0):
        raise Unjudgeable(f"{name}() with {len(arguments)} arguments")
    if _type(target) != "string" or not all(_type(a) == "string" for a in arguments):
        return [ERROR]  # no such overload
    if name in _STRING_TESTS:
        return [True, False] if isinstance(target, Host) else [_STRING_TESTS[name](target, arguments[0])]
    return [Host("string")] if isinstance(target, Host) else [target.translate(_STRING_CASES[name])]


class Evaluator:
    """Evaluates trees on one device (``device``: a dict with ``driver``,
    ``attributes`` and ``capacity``, the last two :class:`Domains`);
    ``check`` is called every :data:`CHECK_EVERY` nodes."""

    def __init__(self, device: dict[str, Any], check: Callable[[], None] | None = None) -> None:
        self.device = device
        self.check = check or _nothing
        self.count = 0
        #: Results of the nodes evaluated outside any cel.bind (the parser
        #: makes equal subtrees one object: each is evaluated once).
        self._known: dict[int, Results] = {}

    def run(self, tree: Tree, scope: dict[str, Any] | None = None) -> Results:
        """Every result of ``tree`` on the device."""
        if scope:
            return self._run(tree, scope)
        found = self._known.get(id(tree))
        if found is None:
            found = self._known[id(tree)] = self._run(tree, {})
        return found

    def _run(self, tree: Tree, scope: dict[str, Any]) -> Results:
        self.count += 1
        if self.count % CHECK_EVERY == 0:
            self.check()
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
            return self._list(tree, scope)
        if kind in ("and", "or"):
            return self._logic(kind, tree[1], scope)
        if kind == "not":
            return _unique(not v if isinstance(v, bool) else ERROR for v in self.run(tree[1], scope))
        return self._rest(tree, scope)

    def _logic(self, kind: str, parts: list[Tree], scope: dict[str, Any]) -> Results:
        stop = kind == "or"
        found = self.run(parts[0], scope)
        for part in parts[1:]:
            if len(found) == 1 and found[0] is stop:  # decided: false && anything is false, true || anything true
                break
            right = self.run(part, scope)
            found = _unique(_logic(kind, a, b) for a in found for b in right)
        return found

    def _list(self, tree: Tree, scope: dict[str, Any]) -> Results:
        if tree[2] is not None:
            return [Items(tuple(item[1] for item in tree[1]), tree[2])]
        values = []
        for item in tree[1]:
            results = self.run(item, scope)
            if len(results) != 1 or isinstance(results[0], Host) or _type(results[0]) in ("list", "map"):
                raise Unjudgeable("a list of other things than known values")
            values.append(results[0])
        return [Items(tuple(values), frozenset((_type(v), v) for v in values))]

    def _rest(self, tree: Tree, scope: dict[str, Any]) -> Results:
        kind = tree[0]
        if kind == "sel":
            return _unique(r for v in self.run(tree[1], scope) for r in _field(v, tree[2]))
        if kind == "index":
            keys = self.run(tree[2], scope)
            if len(keys) != 1 or _type(keys[0]) != "string":
                raise Unjudgeable("an index that is no string literal")
            return _unique(r for v in self.run(tree[1], scope) for r in _field(v, keys[0]))
        if kind == "cmp":
            return self._compare(tree[1], tree[2], tree[3], scope)
        return self._call(tree[1], tree[2], tree[3], scope)

    def _compare(self, op: str, left: Tree, right: Tree, scope: dict[str, Any]) -> Results:
        found: Results = []
        rights = self.run(right, scope)
        for a in self.run(left, scope):
            for b in rights:
                if op == "==":
                    found += _equal(a, b)
                elif op == "!=":
                    found += _not_equal(a, b)
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
        if target is None and name == "has":
            if len(arguments) != 1 or arguments[0][0] != "sel":
                raise Invalid("has() of anything but a field selection")
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


def evaluate(tree: Tree, device: dict[str, Any], check: Callable[[], None] | None = None) -> Results:
    """Every result ``tree`` can have on ``device`` (:data:`ERROR` among them);
    ``check`` is called as it goes (a deadline raises there)."""
    return Evaluator(device, check).run(tree)


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


#: The (kind, domain, name) a node reads (``device.attributes[D].N``), or None.
reference = _reference
#: A node's operands.
children = _children


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
    "MAX_DEPTH",
    "MAX_NESTING",
    "MAX_SELECTOR_BYTES",
    "Attributes",
    "Beyond",
    "Domains",
    "Evaluator",
    "Host",
    "Invalid",
    "Items",
    "Tree",
    "Unjudgeable",
    "Version",
    "attribute_references",
    "children",
    "comparisons",
    "depth",
    "evaluate",
    "parse",
    "reference",
]
