"""Composing YAML as its consumers read it, for lint: merge keys merged
(:func:`flatten_merges`), of a key written twice the last value, the keys
written twice recorded (kubectl refuses them), lone surrogates refused
(:func:`refuse_surrogates`). Syntax errors become :class:`LintInputError`
lines (``FILE:LINE:COL: message``)."""

from __future__ import annotations

import functools
import gc
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, ParamSpec, TypeVar

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pciname.base.requests import MAX_YAML_DEPTH, nested_too_deeply
from pciname.errors import LintInputError, PcinameBaseError

__all__ = [
    "Duplicates",
    "Position",
    "collector_paused",
    "compose",
    "compose_data",
    "compose_documents",
    "flatten_merges",
    "paused_collector",
    "position",
    "refuse_surrogates",
    "settle",
]

#: Mapping node id -> (kept key, earlier key) of each key written twice in it.
Duplicates = dict[int, list[tuple[Node, Node]]]


class Position(int):
    """Where a node starts, as lint reads it: ``line`` and ``column``,
    0-based as PyYAML's marks. Each node lint composes has one as both its
    start and its end mark (lint reads only where nodes start): one int of
    32 bytes the collector never walks, against two marks of 96 bytes each
    (libyaml's), which were 23 of the 53 MB the bench input's nodes took."""

    __slots__ = ()

    @property
    def line(self) -> int:
        return self >> 32

    @property
    def column(self) -> int:
        return self & 0xFFFFFFFF

    def __bool__(self) -> bool:  # a mark, not a number: line 0, column 0 is still a place
        return True

    def __repr__(self) -> str:
        return f"Position(line={self.line}, column={self.column})"


def position(mark: Any) -> Position:
    """A mark's :class:`Position`."""
    return Position(mark.line << 32 | mark.column)


class _ConsumerLoader(yaml.SafeLoader):
    """Composes node trees as consumers read them (PyYAML's ``safe_load``,
    Helm, kubectl), in PyYAML's pure-Python composer: each mapping settled
    by :func:`settle` as it is composed, each scalar checked by
    :func:`refuse_surrogates`. The keys written twice are recorded in
    ``duplicates``. :func:`compose_documents` uses it where libyaml is
    absent, and for the words of an error libyaml found."""

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self.duplicates: Duplicates = {}

        self.depth = 0  # collections open

    def compose_scalar_node(self, anchor: Any) -> ScalarNode:
        node: ScalarNode = super().compose_scalar_node(anchor)
        refuse_surrogates(node)
        node.start_mark = node.end_mark = position(node.start_mark)  # as _settle_document does
        return node

    def compose_sequence_node(self, anchor: Any) -> SequenceNode:
        self._open()
        node: SequenceNode = super().compose_sequence_node(anchor)
        node.start_mark = node.end_mark = position(node.start_mark)
        self.depth -= 1
        return node

    def compose_mapping_node(self, anchor: Any) -> MappingNode:  # anchor: its name (typeshed says otherwise)
        self._open()
        node: MappingNode = super().compose_mapping_node(anchor)
        settle(node, self, self.duplicates)
        node.start_mark = node.end_mark = position(node.start_mark)
        self.depth -= 1
        return node

    def _open(self) -> None:
        """One more collection open: :class:`_NestedTooDeeply` past the budget
        (at its start event, before anything in it is composed)."""
        self.depth += 1
        if self.depth > MAX_YAML_DEPTH:
            raise _NestedTooDeeply(self.peek_event().start_mark)  # type: ignore[no-untyped-call]


def _key(constructor: Any, node: Node) -> Any:
    """The Python value PyYAML makes of a key (``yes`` and ``true`` are one
    key); a key it cannot make, or cannot hash, is its tag and text."""
    if isinstance(node, ScalarNode):
        if node.tag == _STR:
            return (True, node.value)  # what PyYAML's str constructor makes of it, without the call
        build = constructor.yaml_constructors.get(node.tag)
        if build is not None:
            try:
                key = build(constructor, node)
                hash(key)
                return (True, key)
            except Exception:  # noqa: BLE001 - a key PyYAML cannot build: compare its text
                pass
        return (False, node.tag, node.value)
    return (None, id(node))  # a collection as a key: never equal to another


def settle(node: MappingNode, constructor: Any, duplicates: Duplicates) -> None:
    """One composed mapping as consumers read it, once its children are
    settled: merge keys (``<<``) merged in, explicit keys overriding merged
    ones (:func:`flatten_merges`), and of a key written twice the last value
    kept. The earlier key of each such pair is recorded in ``duplicates``
    (mapping node id -> pairs of (kept key, earlier key)): kubectl's strict
    decoding refuses those. ``constructor`` (a SafeConstructor) makes the keys."""
    first: dict[Any, Node] = {}
    plain = True  # no merge key, no "=" key and no key twice: nothing to change
    for key_node, _ in node.value:
        if key_node.tag == _MERGE:
            plain = False
            continue
        plain = plain and key_node.tag != _VALUE
        key = _key(constructor, key_node)
        if key in first:
            plain = False
            duplicates.setdefault(id(node), []).append((key_node, first[key]))
        first[key] = key_node
    if plain:
        return
    flatten_merges(node)  # merged pairs first, then the mapping's own: the last wins
    last: dict[Any, int] = {}
    for i, (key_node, _) in enumerate(node.value):
        last[_key(constructor, key_node)] = i
    if len(last) != len(node.value):
        node.value = [pair for i, pair in enumerate(node.value) if last[_key(constructor, pair[0])] == i]


_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"
_STR = "tag:yaml.org,2002:str"


def flatten_merges(node: MappingNode) -> None:
    """Merge keys (``<<``) resolved in place as the YAML merge-key spec and
    its consumers (kubectl's and Helm's go-yaml, PyYAML up to 6.0.3) read
    them: the merged mappings' pairs first, of a merge sequence the earlier
    mapping's winning over the later's, then the mapping's own pairs, which
    win over all merged ones (the caller keeps the last of each key).
    Written here on the composed nodes, not with a parser's helper, so that
    what lint reads does not change with the PyYAML version (6.0.4 changed
    ``flatten_mapping``). A merge of anything but a mapping or a sequence of
    mappings is the error PyYAML gives."""
    merged: list[tuple[Node, Node]] = []
    own: list[tuple[Node, Node]] = []
    for key_node, value_node in node.value:
        if key_node.tag == _VALUE:
            key_node.tag = _STR  # the key "=": a string to every consumer (PyYAML turns it so too)
        if key_node.tag != _MERGE:
            own.append((key_node, value_node))
            continue
        if isinstance(value_node, MappingNode):
            sources = [value_node]
        elif isinstance(value_node, SequenceNode):
            sources = list(value_node.value)
            for sub in sources:
                if not isinstance(sub, MappingNode):
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"expected a mapping for merging, but found {sub.id}",
                        sub.start_mark,
                    )
        else:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"expected a mapping or list of mappings for merging, but found {value_node.id}",
                value_node.start_mark,
            )
        for sub in reversed(sources):  # the earlier mapping last: it wins
            flatten_merges(sub)
            merged.extend(sub.value)
    if merged:
        node.value = merged + own


def refuse_surrogates(node: ScalarNode) -> None:
    """A scalar written with an escape of a lone UTF-16 surrogate
    (``"\\uD800"``): PyYAML reads it as a string that is no text (no
    encoder takes it); kubectl's and Helm's YAML parser (go-yaml) refuse it.
    So is it refused here, as a syntax error at the scalar."""
    value = node.value
    if not value.isascii():
        for char in value:
            if "\ud800" <= char <= "\udfff":
                raise yaml.MarkedYAMLError(
                    None,
                    None,
                    f"found the escape of a lone UTF-16 surrogate (\\u{ord(char):04x}), which is no character: "
                    "kubectl's and Helm's YAML parser refuse it",
                    node.start_mark,
                )


class _NestedTooDeeply(PcinameBaseError):
    """YAML nesting more than :data:`~pciname.base.requests.MAX_YAML_DEPTH`
    collections at once; ``mark``: where the first one past it starts."""

    def __init__(self, mark: Any) -> None:
        super().__init__(mark)
        self.mark = mark


def _libyaml() -> Any:
    return getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None


#: Nesting that libyaml 0.2.6 (and its master, yaml/libyaml 51843fe4
#: ``src/parser.c``, ``MAX_NESTING_LEVEL = 1000``) refuses while parsing.
_PROBE = 1001


@functools.cache
def _libyaml_bounds_nesting(loader_class: Any) -> bool:
    """Whether this libyaml's parser refuses text nested :data:`_PROBE`
    levels deep (in flow and in block collections), so that its composer,
    which recurses in C once per level, is never handed deeper text: then
    the depth budget is checked on the composed nodes, without a scan first.
    Parse events only: nothing recurses."""
    # Block first: PyYAML's own parser reads 1,001 flow levels in a second, the block ones at once.
    for text in ("- " * _PROBE + "a\n", "[" * _PROBE + "]" * _PROBE):
        try:
            for _ in yaml.parse(text, Loader=loader_class):
                pass
        except yaml.YAMLError:
            continue
        return False
    return True


def _nested_deeper(loader: Any, limit: int) -> bool:
    """Whether the parse events of the loader's text open more than ``limit``
    collections at once (libyaml's parser: no node is built). Only for a
    libyaml that does not bound nesting itself (:func:`_libyaml_bounds_nesting`)."""
    depth = 0
    starts, ends = (yaml.MappingStartEvent, yaml.SequenceStartEvent), (yaml.MappingEndEvent, yaml.SequenceEndEvent)
    while loader.check_event():
        event = loader.get_event()
        if isinstance(event, starts):
            depth += 1
            if depth > limit:
                return True
        elif isinstance(event, ends):
            depth -= 1
    return False


def _settle_document(root: Node, constructor: Any, duplicates: Duplicates) -> bool:
    """What :class:`_ConsumerLoader` does while composing, done on one
    document libyaml composed: every node once (an alias is the node it
    names), in the order of the text, a mapping's children before it;
    each node's marks one :class:`Position` (where it starts: all lint
    reads of them); a collection past
    :data:`~pciname.base.requests.MAX_YAML_DEPTH` refused
    (:class:`_NestedTooDeeply`). False for a node that holds itself (an alias
    to a collection still open), left to PyYAML's composer."""
    seen: set[int] = set()  # collections met
    open_: set[int] = set()  # collections met and not yet settled
    stack: list[tuple[Node, int]] = [(root, 1)]  # (node, collections open with it; 0: settle it now)
    while stack:
        node, depth = stack.pop()
        kind = type(node)
        if depth == 0:
            if kind is MappingNode:
                settle(node, constructor, duplicates)  # type: ignore[arg-type]
            open_.discard(id(node))
            continue
        if kind is ScalarNode:
            refuse_surrogates(node)  # type: ignore[arg-type]
            node.style = node.style or None  # type: ignore[attr-defined]  # a plain scalar: libyaml says "", PyYAML None
            node.start_mark = node.end_mark = position(node.start_mark)
            continue
        key = id(node)
        if key in seen:
            if key in open_:
                return False
            continue
        if depth > MAX_YAML_DEPTH:
            raise _NestedTooDeeply(node.start_mark)
        node.start_mark = node.end_mark = position(node.start_mark)
        seen.add(key)
        open_.add(key)
        stack.append((node, 0))
        inner = depth + 1
        if kind is SequenceNode:
            stack.extend([(child, inner) for child in reversed(node.value)])
        else:
            for key_node, value_node in reversed(node.value):
                stack.append((value_node, inner))
                stack.append((key_node, inner))
    return True


def _compose_fast(text: str | bytes, loader_class: Any) -> tuple[list[Node | None], Duplicates] | None:
    """The documents of ``text`` composed by libyaml, each settled
    (:func:`_settle_document`) before the next is composed; None for a node
    that holds itself, or an error (PyYAML's composer then says it in its
    words, as lint always has). A libyaml that does not bound nesting
    (:func:`_libyaml_bounds_nesting`) gets no text nested past the budget:
    its parse events are counted first, and PyYAML's composer refuses it."""
    try:
        if not _libyaml_bounds_nesting(loader_class):
            _rewind(text)
            scan = loader_class(text)
            try:
                if _nested_deeper(scan, MAX_YAML_DEPTH):
                    return None
            finally:
                scan.dispose()
        _rewind(text)
        loader = loader_class(text)
        try:
            docs: list[Node | None] = []
            duplicates: Duplicates = {}
            while loader.check_node():
                doc = loader.get_node()
                if doc is not None and not _settle_document(doc, loader, duplicates):
                    return None
                docs.append(doc)
            return docs, duplicates
        finally:
            loader.dispose()
    except (yaml.YAMLError, UnicodeError, RecursionError):
        return None


def _rewind(text: Any) -> None:
    """A stream that can seek back at its start (each pass reads it whole)."""
    if not isinstance(text, (str, bytes)) and hasattr(text, "seek"):
        text.seek(0)


def _compose_pure(text: str | bytes) -> tuple[list[Node | None], Duplicates]:
    _rewind(text)
    loader = _ConsumerLoader(text)
    try:
        docs: list[Node | None] = []
        while loader.check_node():
            docs.append(loader.get_node())
        return docs, loader.duplicates
    finally:
        loader.dispose()


_collector_lock = threading.Lock()
_collector_users = 0
_collector_was_on = False


@contextmanager
def paused_collector() -> Iterator[None]:
    """Python's cyclic garbage collector paused while lint builds and walks
    node trees: each collection of the older generations walks every node
    alive (a 1.8 MB input holds millions of objects), which took two thirds
    of composing's time and half of the rules'. Nodes are freed by
    reference counting as ever (the rare cycle, a node holding itself, at
    the next collection). Threads that lint at once share one pause; the
    last to finish turns the collector back on if it was on."""
    global _collector_users, _collector_was_on
    with _collector_lock:
        if _collector_users == 0:
            _collector_was_on = gc.isenabled()
            gc.disable()
        _collector_users += 1
    try:
        yield
    finally:
        with _collector_lock:
            _collector_users -= 1
            if _collector_users == 0 and _collector_was_on:
                gc.enable()


P = ParamSpec("P")
R = TypeVar("R")


def collector_paused(function: Callable[P, R]) -> Callable[P, R]:
    """``function`` run under one :func:`paused_collector`, for a whole
    lint (composing, the rules, the answer): its nodes are freed as it
    returns, before the collector is back. Paused only around composing
    and around the rules, the first collections after each walked every
    node still alive: 0.31 s and 0.48 s of the bench input's 2.9 s."""

    @functools.wraps(function)
    def paused(*args: P.args, **kwargs: P.kwargs) -> R:
        with paused_collector():
            return function(*args, **kwargs)

    return paused


def compose_documents(text: str | bytes, filename: str) -> tuple[list[tuple[int, Node]], Duplicates]:
    """:func:`compose`, and the keys written twice in any mapping of
    ``text``. Text (str or bytes) and a stream that can seek back to its
    start (the server's ``CheckedText``, which asks the caller's deadline
    at each read, libyaml's reads too) are composed by libyaml where PyYAML
    has it (:func:`_compose_fast`: it reads the text twice); a stream that
    cannot seek, text without libyaml and the words of any error come from
    :class:`_ConsumerLoader`. Both give the same nodes, keys and lines."""
    try:
        fast = _libyaml() if isinstance(text, (str, bytes)) or hasattr(text, "seek") else None
        with paused_collector():
            composed = None if fast is None else _compose_fast(text, fast)
            docs, duplicates = composed if composed is not None else _compose_pure(text)
        return [(n, doc) for n, doc in enumerate(docs, 1) if doc is not None], duplicates
    except _NestedTooDeeply as error:
        line, column = error.mark.line + 1, error.mark.column + 1
        raise LintInputError(f"{filename}:{nested_too_deeply(line, column)}", file=filename, line=line) from None
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = ": ".join(p for p in (error.context, error.problem) if p) or "invalid YAML"
        if mark is None:
            raise LintInputError(f"{filename}: YAML syntax error: {problem}", file=filename) from None
        raise LintInputError(
            f"{filename}:{mark.line + 1}:{mark.column + 1}: YAML syntax error: {problem}",
            file=filename,
            line=mark.line + 1,
        ) from None
    except yaml.YAMLError as error:  # ReaderError: bytes that are not UTF-8/16
        detail = " ".join(str(error).split())
        raise LintInputError(f"{filename}: not readable as YAML: {detail}", file=filename) from None
    except RecursionError:  # the composer recurses once per nesting level
        raise LintInputError(f"{filename}: YAML nested too deeply to read", file=filename) from None


def compose(text: str | bytes, filename: str) -> list[tuple[int, Node]]:
    """Every non-empty YAML document of ``text`` as (1-based index, node
    tree), as consumers read it: merge keys merged, and of a key written
    twice the last value (:class:`_ConsumerLoader`).

    Raises LintInputError (``FILE:LINE:COL: message``) on a syntax error."""
    return compose_documents(text, filename)[0]


def compose_data(data: Any) -> list[tuple[int, Node]] | None:
    """The one document of ``data``'s YAML dump as libyaml dumps and
    composes it; None without libyaml, or for text it cannot encode. The
    dump (PyYAML's representer, in Python) raises RecursionError past a few
    hundred levels, far below the nesting libyaml's composer recurses too
    deep on (tens of thousands): it never sees text nested deeper."""
    dumper = getattr(yaml, "CSafeDumper", None)
    loader = getattr(yaml, "CSafeLoader", None)
    if dumper is None or loader is None:
        return None
    try:
        text = yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True)
    except UnicodeEncodeError:
        return None
    root = yaml.compose(text, Loader=loader)
    return [] if root is None else [(1, root)]
