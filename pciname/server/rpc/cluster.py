"""The ``GpuOptions`` RPC and the server's read-only access to its cluster:
the message as a :class:`~pciname.capabilities.audit.GpuOptionsRequest`,
answered by :func:`~pciname.capabilities.audit.answer_gpu_options` (as
``pciname gpu-options`` answers it) over the KubeVirt CR and Nodes the
caller sends, or, on a server started with ``--kube``, over the ones
:func:`pciname.cluster.kube.read_cluster` reads (read-only, with the
server's kubeconfig or in-cluster service account)."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Sequence
from typing import Any

import grpc
import yaml

from pciname.capabilities.audit import NO_KUBEVIRT_CR, GpuOptionsRequest, answer_gpu_options
from pciname.errors import ClusterError
from pciname.kubevirt.shapes import (
    ShapeError,
    check_kubevirt as check_kubevirt_shape,
    check_node as check_node_shape,
    go_strings,
    type_name,
)
from pciname.lint.linter import refuse_surrogates
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.config import DEFAULT_MAX_LINT_NODES
from pciname.server.data import DataSet, served_profile
from pciname.server.logs import fields
from pciname.server.rpc.access import ClusterAccess as ClusterAccess
from pciname.server.rpc.budget import check_alive, count_nodes
from pciname.server.rpc.shared import INVALID, PRECONDITION
from pciname.server.rpc.wire import (
    CLUSTER_DISABLED,
    CLUSTER_REFUSED,
    CLUSTER_UNREACHABLE,
    KUBEVIRT_AMBIGUOUS,
    KUBEVIRT_NOT_FOUND,
    MAX_NAME_CHARS,
    MAX_PROFILE_CHARS,
    NO_KUBEVIRT,
    OBJECTS_INPUT,
    RpcFailure,
    check_length,
    failure,
    gpu_options_response,
    shown,
)

# -- GpuOptions: objects the caller sends ---------------------------------------------------


def _objects_error(message: str) -> RpcFailure:
    return failure(INVALID, message, OBJECTS_INPUT)


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


def _yaml_documents(text: str, field: str) -> list[Any]:

    # The pure-Python loader: libyaml's (CSafeLoader) recurses in C and
    # crashes the process on deeply nested input; this one raises
    # RecursionError. kubectl's JSON takes the fast path above anyway.
    try:
        return list(yaml.load_all(text, Loader=_loader()))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = ": ".join(p for p in (error.context, error.problem) if p) or "invalid YAML"
        where = f"{field}:{mark.line + 1}:{mark.column + 1}" if mark is not None else field
        raise _objects_error(f"{where}: neither JSON nor YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise _objects_error(f"{field}: neither JSON nor YAML: {' '.join(str(error).split())}") from None
    except (ValueError, TypeError, ArithmeticError, LookupError) as error:
        # Raised outside a node's construction: still the input's fault.
        raise _objects_error(f"{field}: not valid YAML: {type(error).__name__}: {error}") from None


def parse_objects(
    text: str, field: str, before_yaml: Callable[[str, str], object] | None = None
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
            documents = _yaml_documents(text, field)
    except RecursionError:
        raise _objects_error(f"{field}: nested too deeply to read") from None
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
                raise _objects_error(f"{field}: expected Kubernetes objects (mappings), got {type_name(item)}")
            objects.append(item)
    return objects


def check_kubevirt(obj: dict[str, Any], where: str = "kubevirt") -> None:
    """The fields gpu_options reads have the types it expects
    (:func:`pciname.kubevirt.shapes.check_kubevirt`; objects-input if not)."""
    try:
        check_kubevirt_shape(obj, where)
    except ShapeError as error:
        raise _objects_error(str(error)) from None


def check_node(obj: dict[str, Any], where: str) -> None:
    """:func:`pciname.kubevirt.shapes.check_node`; objects-input if not."""
    try:
        check_node_shape(obj, where)
    except ShapeError as error:
        raise _objects_error(str(error)) from None


def _ref(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def pick_kubevirt(objects: Sequence[dict[str, Any]], name: str | None) -> dict[str, Any]:
    """The one KubeVirt CR among the objects sent (``name``: [NAMESPACE/]NAME)."""
    if not objects:
        raise _objects_error("kubevirt: no object in it; send the KubeVirt CR (kubectl get kubevirt -A -o json)")
    for i, obj in enumerate(objects):
        check_kubevirt(obj, "kubevirt" if len(objects) == 1 else f"kubevirt.items[{i}]")
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
            raise _objects_error(f"kubevirt: no KubeVirt CR {shown(name, quote=False)} among the {len(objects)} sent")
    if len(candidates) > 1:
        names = ", ".join(shown(_ref(o), quote=False) for o in candidates)
        raise failure(
            INVALID,
            f"kubevirt holds several KubeVirt CRs ({names}): choose one with kubevirt_name NAMESPACE/NAME",
            KUBEVIRT_AMBIGUOUS,
        )
    return candidates[0]


def pick_nodes(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    for i, obj in enumerate(objects):
        check_node(obj, f"nodes[{i}]")
    return list(objects)


# -- GpuOptions: the cluster ------------------------------------------------------------------


def cluster_failure(error: Any, context: grpc.ServicerContext) -> RpcFailure:
    """The status for a :class:`pciname.errors.ClusterError`."""
    message = str(error)
    if error.reason == "not-found":
        return failure(grpc.StatusCode.NOT_FOUND, message, KUBEVIRT_NOT_FOUND)
    if error.reason == "ambiguous":
        message = message.replace("--kubevirt NAMESPACE/NAME", "kubevirt_name NAMESPACE/NAME")
        return failure(INVALID, message, KUBEVIRT_AMBIGUOUS)
    if error.reason == "refused":
        status = error.status or 0
        if status in (401, 403):
            return failure(
                PRECONDITION,
                f"{message}; the server's credentials need get and list on nodes and kubevirts.kubevirt.io",
                CLUSTER_REFUSED,
            )
        if status == 429 or status >= 500:
            return failure(grpc.StatusCode.UNAVAILABLE, message, CLUSTER_REFUSED)
        return failure(PRECONDITION, message, CLUSTER_REFUSED)
    if context.time_remaining() <= 0:
        return failure(grpc.StatusCode.DEADLINE_EXCEEDED, message, CLUSTER_UNREACHABLE)
    return failure(grpc.StatusCode.UNAVAILABLE, message, CLUSTER_UNREACHABLE)


def read_from_cluster(
    cluster: ClusterAccess | None, name: str | None, context: grpc.ServicerContext, log: logging.Logger
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The cluster's KubeVirt CR and Nodes (FAILED_PRECONDITION without ``--kube``)."""

    if cluster is None:
        raise failure(
            PRECONDITION,
            "this server does not read the cluster (it was started without --kube): send the KubeVirt CR "
            "and the Nodes in kubevirt and nodes",
            CLUSTER_DISABLED,
        )
    try:
        state = cluster.read(name, context.time_remaining())
    except ClusterError as error:
        reason = cluster_failure(error, context)
        if error.reason in ("unreachable", "refused"):
            log.warning(
                "cannot read the cluster", extra=fields(method="GpuOptions", error=str(error), code=reason.code.name)
            )
        raise reason from None
    except RpcFailure as refused:
        log.warning(
            "cannot read the cluster", extra=fields(method="GpuOptions", error=refused.details, code=refused.code.name)
        )
        raise
    if state.kubevirt is None:
        raise failure(PRECONDITION, NO_KUBEVIRT_CR, NO_KUBEVIRT)
    return state.kubevirt, state.nodes


def gpu_options(
    request: pb.GpuOptionsRequest,
    context: grpc.ServicerContext,
    data: DataSet,
    *,
    cluster: ClusterAccess | None,
    log: logging.Logger,
    max_nodes: int = DEFAULT_MAX_LINT_NODES,
) -> pb.GpuOptionsResponse:
    """The answer: the request's limits checked here, its rules by
    :class:`~pciname.capabilities.audit.GpuOptionsRequest` (a bad profile or
    release fails before any cluster I/O)."""

    check_length(request.profile, "profile", MAX_PROFILE_CHARS)
    check_length(request.cozystack, "cozystack", MAX_NAME_CHARS)
    name = check_length(request.kubevirt_name, "kubevirt_name", MAX_NAME_CHARS).strip() or None
    asked = GpuOptionsRequest(
        request.profile,
        request.cozystack if request.cozystack.strip() else None,
        name,
        from_cluster=request.from_cluster,
        kubevirt=request.kubevirt,
        nodes=request.nodes,
    ).validated()
    given = None if asked.auto else served_profile(data, str(asked.chosen_profile or ""))
    if asked.from_cluster:
        kubevirt, nodes = read_from_cluster(cluster, name, context, log)
    else:

        def bounded(text: str, field: str) -> None:  # YAML: at most max_nodes nodes (JSON is compact)
            count_nodes(text, field, max_nodes, context, flag="--max-lint-nodes", reason=OBJECTS_INPUT)

        kubevirt = pick_kubevirt(parse_objects(request.kubevirt, "kubevirt", bounded), name)
        nodes = pick_nodes(parse_objects(request.nodes, "nodes", bounded))

    def check() -> None:  # the work stops once the caller is gone or its deadline passed
        check_alive(context)

    answered = answer_gpu_options(
        asked,
        kubevirt,
        nodes,
        served=given.key if given is not None else None,
        default=data.default.key,
        resolver=data.resolver,
        check=check,
    )
    profile = data.resolver.view(answered.profile).profile.name  # the served profile's name
    return gpu_options_response(
        answered.options, profile=profile, profile_source=answered.profile_source, kubevirt=_ref(kubevirt)
    )


__all__ = ["ClusterAccess", "gpu_options", "parse_objects", "read_from_cluster"]
