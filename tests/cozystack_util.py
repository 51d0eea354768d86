"""The upstream Cozystack files of every release, from the vendored inputs
(tests/data/cozystack-inputs.tar.xz and its sidecar .json: the files
``python -m tools.cozystack_extract`` read, each blob once), and the
strict validation the node-pool tests use: no unknown field anywhere, no
default relied on. Read straight from the upstream files, not from the
facts pciname ships."""

from __future__ import annotations

import copy
import json
from functools import cache, lru_cache
from typing import Any

import jsonschema

from tests.conftest import REPO
from tools.cozystack_extract import KUBERNETES_SCHEMA, NODES_SCHEMA, vendored
from tools.upstream import VendoredSource, version_key

INPUTS = REPO / "tests" / "data" / "cozystack-inputs"


@lru_cache(maxsize=1)
def source() -> VendoredSource:
    return vendored(INPUTS)


@lru_cache(maxsize=1)
def sidecar() -> dict[str, Any]:
    """The inputs' sidecar: repository, licence, and per tag its commit and the blob of each path read."""
    document: dict[str, Any] = json.loads(INPUTS.with_suffix(".json").read_text(encoding="utf-8"))
    return document


def tags() -> list[str]:
    return sorted((tag for tag, _, _ in source().tags()), key=version_key)


def commit(tag: str) -> str:
    return str(source().rows[tag]["commit"])


@cache
def _json(tag: str, path: str) -> Any:
    data = source().read(commit(tag), path)
    return None if data is None else json.loads(data)


def values_schema(tag: str) -> dict[str, Any]:
    """packages/apps/kubernetes/values.schema.json at ``tag``."""
    return copy.deepcopy(_json(tag, KUBERNETES_SCHEMA))


def nodes_schema(tag: str) -> dict[str, Any] | None:
    """packages/apps/kubernetes-nodes/values.schema.json at ``tag`` (None: no such app)."""
    found = _json(tag, NODES_SCHEMA)
    return None if found is None else copy.deepcopy(found)


def strict(schema: Any) -> Any:
    """The schema with ``additionalProperties: false`` on every object that
    declares none (unless it keeps unknown fields on purpose:
    ``x-kubernetes-preserve-unknown-fields``), and without defaults."""
    schema = copy.deepcopy(schema)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            node.pop("default", None)
            is_object = node.get("type") == "object" or "properties" in node
            if (
                is_object
                and "additionalProperties" not in node
                and not node.get("x-kubernetes-preserve-unknown-fields")
            ):
                node["additionalProperties"] = False
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    return schema


@cache
def _validators(tag: str, which: str) -> list[Any]:
    schema = values_schema(tag) if which == "kubernetes" else nodes_schema(tag)
    assert schema is not None, f"{tag} has no {which} schema"
    # No $schema in them; Helm reads them as draft 7, and 2020-12 is checked
    # too so nothing passes through a draft's leniency.
    return [cls(strict(schema)) for cls in (jsonschema.Draft7Validator, jsonschema.Draft202012Validator)]


def errors_of(values: Any, tag: str, which: str = "kubernetes") -> list[str]:
    """Messages of every way ``values`` fails the strict schema of ``tag``
    (``which``: the kubernetes app's values, or kubernetes-nodes' spec)."""
    found = set()
    for validator in _validators(tag, which):
        found.update(e.message for e in validator.iter_errors(values))
    return sorted(found)
