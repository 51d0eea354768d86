"""Reading the YAML nodes lint checks (``yaml.nodes`` as the linter's loader
composes them: merge keys merged in and each key once, as kubectl and Helm
read them): a mapping's scalar keys with their nodes, a value by key, a
scalar's text (``None`` for null), a sequence's items. A node of another
shape reads as absent."""

from __future__ import annotations

from collections.abc import Iterator

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

__all__ = ["YamlPath", "get", "items", "key_node", "scalar", "sequence", "walk"]

#: Where a node is: mapping keys and sequence indexes from the document's root.
YamlPath = tuple[str | int, ...]


def items(node: Node | None) -> Iterator[tuple[str, ScalarNode, Node]]:
    """A mapping's entries with a scalar key: (key text, key node, value node)."""
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                yield key.value, key, value


def get(node: Node | None, key: str) -> Node | None:
    """The value of ``key`` in a mapping (the first: the composer leaves each
    key once). A plain loop: every rule asks this of every mapping it walks."""
    if isinstance(node, MappingNode):
        for name, value in node.value:
            if isinstance(name, ScalarNode) and name.value == key:
                return value  # type: ignore[no-any-return]
    return None


def key_node(node: Node | None, key: str) -> ScalarNode | None:
    """The key node of ``key`` in a mapping (where a finding on the key points)."""
    if isinstance(node, MappingNode):
        for name, _ in node.value:
            if isinstance(name, ScalarNode) and name.value == key:
                return name
    return None


def scalar(node: Node | None) -> str | None:
    """A scalar's text; ``None`` for a null or a node of another kind."""
    if isinstance(node, ScalarNode) and not node.tag.endswith(":null"):
        text: str = node.value
        return text
    return None


def sequence(node: Node | None) -> list[Node]:
    """A sequence's items; none for a node of another kind."""
    return list(node.value) if isinstance(node, SequenceNode) else []


def walk(root: Node) -> Iterator[tuple[Node, YamlPath]]:
    """Every node under ``root`` (itself included) with its path, in document
    order, each once: a node an alias repeats is met at its first place, so
    aliases do not multiply the work. Only the values of scalar keys are
    entered (as :func:`items` reads a mapping). Plain loops, no generator
    per mapping: three rules walk every document."""
    seen: set[int] = set()
    stack: list[tuple[Node, YamlPath]] = [(root, ())]
    push = stack.append
    while stack:
        node, path = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        yield node, path
        if isinstance(node, MappingNode):
            pairs = node.value
            for i in range(len(pairs) - 1, -1, -1):
                key, value = pairs[i]
                if isinstance(key, ScalarNode):
                    push((value, path + (key.value,)))
        elif isinstance(node, SequenceNode):
            values = node.value
            for i in range(len(values) - 1, -1, -1):
                push((values[i], path + (i,)))
