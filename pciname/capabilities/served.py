"""What the gRPC service needs of the domain rooms beside each capability's
request and answer, so that :mod:`pciname.server.rpc` imports no domain
room: the KubeVirt formats and their texts (PermittedHostDevices), the
admission policy's default name, and the Kubernetes objects a ``GpuOptions`` caller sends as
JSON or YAML text, read and checked as the command reads a cluster's.

Errors about the objects sent are made by the caller's ``refuse(message,
ambiguous)`` (the service: INVALID_ARGUMENT with its reason,
``objects-input``, or ``kubevirt-ambiguous`` when ``ambiguous``)."""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from pciname.base.echo import shown
from pciname.base.render import dump_json, dump_yaml
from pciname.kubevirt.generate import FORMATS as FORMATS, render
from pciname.kubevirt.shapes import ShapeError, check_kubevirt, check_node, go_strings, type_name
from pciname.lint.linter import refuse_surrogates
from pciname.policy.admission import DEFAULT_NAME as ADMISSION_NAME

#: Makes the error for objects that cannot be read: (message, whether the KubeVirt CR is ambiguous).
Refuse = Callable[[str, bool], Exception]


def texts(data: Any) -> tuple[str, str]:
    """(YAML, JSON) of ``data`` exactly as the CLI's ``-o yaml|json`` prints it."""
    yaml_text, json_text = io.StringIO(), io.StringIO()
    dump_yaml(data, yaml_text)
    dump_json(data, json_text)
    return yaml_text.getvalue(), json_text.getvalue()


def permitted_texts(block: dict[str, Any], fmt: str, replace_defaults: bool) -> tuple[str, str]:
    """(YAML, JSON) of the permittedHostDevices ``block`` placed as ``fmt``
    says, exactly as ``pciname permitted-host-devices -o yaml|json`` prints it."""
    return texts(render(block, fmt, replace_defaults=True if replace_defaults else None))


_LOADER: type[Any] | None = None


def _loader() -> type[Any]:
    """yaml.SafeLoader whose scalar constructors' own errors (``0x_``,
    ``!!float x``, ``!!timestamp 2020-13-45``: ValueError and the like)
    become ConstructorErrors marked with the value's place."""
    global _LOADER
    if _LOADER is None:

        class Loader(yaml.SafeLoader):
            def compose_scalar_node(self, anchor: Any) -> yaml.ScalarNode:
                node: yaml.ScalarNode = super().compose_scalar_node(anchor)
                refuse_surrogates(node)
                return node

            def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
                try:
                    return super().construct_object(node, deep)
                except (ValueError, TypeError, ArithmeticError, LookupError) as error:
                    tag = node.tag.rpartition(":")[2] or node.tag
                    value = node.value if isinstance(node.value, str) else ""
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"{shown(value)} is not a valid {shown(tag, quote=False)} ({error})",
                        node.start_mark,
                    ) from None

        _LOADER = Loader
    return _LOADER


def _yaml_documents(text: str, field: str, refuse: Refuse) -> list[Any]:
    # The pure-Python loader: libyaml's (CSafeLoader) recurses in C and
    # crashes the process on deeply nested input; this one raises
    # RecursionError. kubectl's JSON takes the fast path above anyway.
    try:
        return list(yaml.load_all(text, Loader=_loader()))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = ": ".join(p for p in (error.context, error.problem) if p) or "invalid YAML"
        where = f"{field}:{mark.line + 1}:{mark.column + 1}" if mark is not None else field
        raise refuse(f"{where}: neither JSON nor YAML: {problem}", False) from None
    except yaml.YAMLError as error:
        raise refuse(f"{field}: neither JSON nor YAML: {' '.join(str(error).split())}", False) from None
    except (ValueError, TypeError, ArithmeticError, LookupError) as error:
        # Raised outside a node's construction: still the input's fault.
        raise refuse(f"{field}: not valid YAML: {type(error).__name__}: {error}", False) from None


def parse_objects(
    text: str, field: str, refuse: Refuse, before_yaml: Callable[[str, str], object] | None = None
) -> list[dict[str, Any]]:
    """Kubernetes objects from JSON or YAML text: one object, a ``*List``
    (``items``), a JSON/YAML list, or several YAML documents.
    ``before_yaml(text, field)`` runs before text that is not JSON is
    loaded as YAML (the server bounds its nodes there)."""
    if not text.strip():
        return []
    try:
        try:
            documents = [go_strings(json.loads(text), text)]
        except ValueError:
            if before_yaml is not None:
                before_yaml(text, field)
            documents = _yaml_documents(text, field, refuse)
    except RecursionError:
        raise refuse(f"{field}: nested too deeply to read", False) from None
    objects: list[dict[str, Any]] = []
    for document in documents:
        if document is None:
            continue
        if isinstance(document, list):
            items = document
        elif (
            isinstance(document, dict)
            and isinstance(document.get("items"), list)
            and str(document.get("kind") or "List").endswith("List")
        ):
            items = document["items"]
        else:
            items = [document]
        for item in items:
            if not isinstance(item, dict):
                raise refuse(f"{field}: expected Kubernetes objects (mappings), got {type_name(item)}", False)
            objects.append(item)
    return objects


def ref(obj: dict[str, Any]) -> str:
    """An object's NAMESPACE/NAME (blank where it has none)."""
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def pick_kubevirt(objects: Sequence[dict[str, Any]], name: str | None, refuse: Refuse) -> dict[str, Any]:
    """The one KubeVirt CR among the objects sent (``name``: [NAMESPACE/]NAME),
    the fields gpu_options reads of the types it expects
    (:func:`pciname.kubevirt.shapes.check_kubevirt`)."""
    if not objects:
        raise refuse("kubevirt: no object in it; send the KubeVirt CR (kubectl get kubevirt -A -o json)", False)
    for i, obj in enumerate(objects):
        try:
            check_kubevirt(obj, "kubevirt" if len(objects) == 1 else f"kubevirt.items[{i}]")
        except ShapeError as error:
            raise refuse(str(error), False) from None
    candidates = list(objects)
    if name:
        namespace, _, short = name.rpartition("/")
        candidates = [
            o
            for o in candidates
            if (o.get("metadata") or {}).get("name") == short
            and (not namespace or (o.get("metadata") or {}).get("namespace") == namespace)
        ]
        if not candidates:
            raise refuse(f"kubevirt: no KubeVirt CR {shown(name, quote=False)} among the {len(objects)} sent", False)
    if len(candidates) > 1:
        names = ", ".join(shown(ref(o), quote=False) for o in candidates)
        raise refuse(
            f"kubevirt holds several KubeVirt CRs ({names}): choose one with kubevirt_name NAMESPACE/NAME", True
        )
    return candidates[0]


def pick_nodes(objects: Sequence[dict[str, Any]], refuse: Refuse) -> list[dict[str, Any]]:
    """The Nodes sent, each checked (:func:`pciname.kubevirt.shapes.check_node`)."""
    for i, obj in enumerate(objects):
        try:
            check_node(obj, f"nodes[{i}]")
        except ShapeError as error:
            raise refuse(str(error), False) from None
    return list(objects)


__all__ = [
    "ADMISSION_NAME",
    "FORMATS",
    "parse_objects",
    "permitted_texts",
    "pick_kubevirt",
    "pick_nodes",
    "ref",
    "texts",
]
