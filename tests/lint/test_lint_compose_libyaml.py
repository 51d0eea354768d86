"""Lint composes with libyaml, then settles the nodes in one pass
(pciname.lint.compose._compose_fast): the same nodes, keys written twice,
lines and error lines as PyYAML's pure-Python composer (_ConsumerLoader),
which is what lint reads where libyaml is absent."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pciname.base.requests import MAX_YAML_DEPTH
from pciname.errors import LintInputError
from pciname.lint import compose as composer
from pciname.lint.linter import lint_text
from tests.kube_documents import KUBEVIRT_CR, vm

CORPUS = sorted((Path(__file__).parents[1] / "data" / "lint-corpus").glob("*.yaml"))

LAUGHS = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)
)

#: Texts both composers read: merges, keys written twice, aliases, odd keys.
READ = {
    "merge": "base: &b {resourceName: nvidia.com/A, x: 1}\nentry:\n  <<: *b\n  resourceName: nvidia.com/B\n",
    "merge-list": "a: &a {k: 1, j: 2}\nb: &b {k: 3, l: 4}\nc:\n  <<: [*a, *b]\n  m: 5\n",
    "merge-of-merged": "a: &a {k: 1}\nb: &b\n  <<: *a\n  j: 2\nc:\n  <<: *b\n  k: 9\n",
    "twice": "a: 1\nb: 2\na: 3\nyes: 1\ntrue: 2\n",
    "twice-nested": "- {k: 1, k: 2}\n- m:\n    n: 1\n    n: 2\n",
    "value-key": "=: 1\nk: v\n",
    "collection-key": "? [a, b]\n: 1\n? {c: d}\n: 2\n",
    "documents": "---\na: 1\n---\n---\nb: 2\na: 1\nb: 3\n...\n",
    "laughs": LAUGHS,
    "tagged": "a: !!str 1\nb: !!binary aGVsbG8=\nc: 2001-12-14\nc: 2001-12-14t21:59:43.10-05:00\n",
    "utf-16": "k: v\u00e9\nk: w\n".encode("utf-16"),
    "bom": "\ufeffk: 1\n".encode(),
    "block-scalars": "a: |\n  line 1\n  line 2\nb: >-\n  folded\n  text\n",
}

#: Texts neither reads: the error line is PyYAML's, whoever found it.
REFUSED = {
    "surrogate": 'a: "x\\uD800y"\n',
    "syntax": "a: b: c\n",
    "tab": "a:\n\t- b\n",
    "merge-scalar": "a:\n  <<: 1\n",
    "merge-list-scalar": "a: &a {k: 1}\nb:\n  <<: [*a, 2]\n",
    "undefined-alias": "a: *nope\n",
    "deep": "[" * 50_000 + "]" * 50_000,
    "deep-block": "".join(
        f"{'  ' * i}k:\n" for i in range(1200)
    ),  # well past the recursion limit (400 was at its edge)
    "self-merge": "a: &a\n  <<: *a\n",
    "not-utf8": b"a: \xff\xfe\xfa\n",
    "control": "a: \x07\n",
}


def shape(node: Node, seen: dict[int, int]) -> Any:
    """A node as plain data (tags, values, styles, lines and columns); a
    node met again is its first number (aliases stay shared)."""
    if id(node) in seen:
        return ("again", seen[id(node)])
    seen[id(node)] = len(seen)
    where = (node.start_mark.line, node.start_mark.column, node.end_mark.line, node.end_mark.column)
    if isinstance(node, ScalarNode):
        return (node.tag, node.value, node.style, where)
    if isinstance(node, MappingNode):
        return (node.tag, where, [(shape(k, seen), shape(v, seen)) for k, v in node.value])
    return (node.tag, where, [shape(item, seen) for item in node.value])


def composed(text: str | bytes) -> Any:
    try:
        roots, duplicates = composer.compose_documents(text, "in.yaml")
    except LintInputError as error:
        return ("refused", str(error), error.line)
    seen: dict[int, int] = {}
    trees = [(n, shape(root, seen)) for n, root in roots]
    twice = sorted(
        (seen[node_id], [(kept.start_mark.line, earlier.start_mark.line, kept.value) for kept, earlier in pairs])
        for node_id, pairs in duplicates.items()
    )
    return trees, twice


def both(text: str | bytes, monkeypatch: pytest.MonkeyPatch) -> tuple[Any, Any]:
    fast = composed(text)
    with monkeypatch.context() as patch:
        patch.setattr(composer, "_libyaml", lambda: None)
        pure = composed(text)
    return fast, pure


@pytest.mark.parametrize("name", sorted(READ))
def test_libyaml_composes_what_pyyaml_composes(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    text = READ[name]
    assert composer._compose_fast(text, yaml.CSafeLoader) is not None  # libyaml read it: no fallback
    fast, pure = both(text, monkeypatch)
    assert fast == pure
    assert fast[0], name


def test_keys_written_twice_are_found_by_both() -> None:
    _, twice = composed(READ["twice"])
    assert [lines for _, lines in twice] == [[(2, 0, "a"), (4, 3, "true")]]


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_an_error_is_pyyamls_line(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    fast, pure = both(REFUSED[name], monkeypatch)
    assert fast == pure
    assert fast[0] == "refused", fast


def deep(levels: int, shape: str) -> str:
    """YAML holding ``levels`` collections open at once, as flow sequences,
    block mappings (one a line) or compact block sequences (``- - a``)."""
    if shape == "flow":
        return "[" * levels + "]" * levels + "\n"
    if shape == "block":
        return "".join(f"{'  ' * i}k:\n" for i in range(levels - 1)) + f"{'  ' * (levels - 1)}k: v\n"
    return "- " * levels + "a\n"


#: Where the first collection past the budget starts (1-based line, column).
PAST = {
    "flow": (1, MAX_YAML_DEPTH + 1),
    "block": (MAX_YAML_DEPTH + 1, 2 * MAX_YAML_DEPTH + 1),
    "compact": (1, 2 * MAX_YAML_DEPTH + 1),
}


def _no_scan(*_: Any) -> bool:
    raise AssertionError("a libyaml that bounds nesting needs no scan first")


def _no_pure(*_: Any) -> Any:
    raise AssertionError("libyaml read it: PyYAML's composer is not asked")


@pytest.fixture(params=["libyaml", "libyaml-unbounded", "pure"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """How lint composes: libyaml (which bounds nesting itself: no scan
    first, no fallback), a libyaml that would not (its events counted
    first), or PyYAML's composer (no libyaml)."""
    if request.param == "libyaml":
        monkeypatch.setattr(composer, "_nested_deeper", _no_scan)
    elif request.param == "libyaml-unbounded":
        monkeypatch.setattr(composer, "_libyaml_bounds_nesting", lambda _: False)
    else:
        monkeypatch.setattr(composer, "_libyaml", lambda: None)
    return str(request.param)


def depth(node: Node) -> int:
    inner = node.value if isinstance(node, SequenceNode) else [n for pair in node.value for n in pair]
    return 1 + max((depth(n) for n in inner if not isinstance(n, ScalarNode)), default=0)


@pytest.mark.parametrize("shape", sorted(PAST))
def test_yaml_nested_as_deep_as_the_budget_is_read(shape: str, path: str, monkeypatch: pytest.MonkeyPatch) -> None:
    if path == "libyaml":
        monkeypatch.setattr(composer, "_compose_pure", _no_pure)
    [(_, root)], _ = composer.compose_documents(deep(MAX_YAML_DEPTH, shape), "in.yaml")
    assert depth(root) == MAX_YAML_DEPTH


@pytest.mark.parametrize("shape", sorted(PAST))
def test_one_level_past_the_budget_is_one_line_at_that_collection(
    shape: str, path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    if path == "libyaml":
        monkeypatch.setattr(composer, "_compose_pure", _no_pure)  # refused on the composed nodes themselves
    line, column = PAST[shape]
    with pytest.raises(LintInputError) as refused:
        composer.compose_documents(deep(MAX_YAML_DEPTH + 1, shape), "in.yaml")
    assert str(refused.value) == f"in.yaml:{line}:{column}: YAML nested too deeply to read (more than 200 levels)"
    assert refused.value.line == line


def test_the_installed_libyaml_bounds_nesting_and_pyyamls_parser_does_not() -> None:
    """What lets lint skip the depth scan; PyYAML's own parser reads any depth."""
    assert composer._libyaml_bounds_nesting(yaml.CSafeLoader)
    assert not composer._libyaml_bounds_nesting(yaml.SafeLoader)


@pytest.mark.parametrize("path", CORPUS, ids=lambda p: p.name)
def test_the_corpus_lints_the_same_either_way(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = path.read_bytes()
    assert composer._compose_fast(text, yaml.CSafeLoader) is not None
    fast = [str(f) for f in lint_text(text, path.name, "latest")]
    with monkeypatch.context() as patch:
        patch.setattr(composer, "_libyaml", lambda: None)
        pure = [str(f) for f in lint_text(text, path.name, "latest")]
    assert fast == pure


def places(node: Node) -> list[tuple[int, int]]:
    """(line, column) where each node starts, in document order."""
    inner = [] if isinstance(node, ScalarNode) else node.value
    if isinstance(node, MappingNode):
        inner = [n for pair in inner for n in pair]
    return [(node.start_mark.line, node.start_mark.column), *(p for n in inner for p in places(n))]


@pytest.mark.parametrize("fast", [True, False])
def test_a_nodes_marks_are_one_position_where_pyyaml_says_it_starts(fast: bool, monkeypatch) -> None:
    text = KUBEVIRT_CR + "---\n" + vm("nvidia.com/GA102GL_A10")
    if not fast:
        monkeypatch.setattr(composer, "_libyaml", lambda: None)
    ours = [root for _, root in composer.compose(text, "in.yaml")]
    theirs = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
    assert [places(root) for root in ours] == [places(root) for root in theirs]
    assert type(ours[0].start_mark) is composer.Position and ours[0].end_mark is ours[0].start_mark
