"""The ``GpuOptions`` RPC and the server's read-only access to its cluster:
the message as a :class:`~pciname.capabilities.audit.GpuOptionsRequest`,
answered by :func:`~pciname.capabilities.audit.answer_gpu_options` (as
``pciname gpu-options`` answers it) over the KubeVirt CR and Nodes the
caller sends, or, on a server started with ``--kube``, over the ones
:class:`~pciname.capabilities.cluster_access.ClusterAccess` reads (read-only, with
the server's kubeconfig or in-cluster service account). The objects sent
are read by :mod:`pciname.capabilities.served`, their YAML bounded first."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import grpc

from pciname.capabilities.audit import NO_KUBEVIRT_CR, GpuOptionsRequest
from pciname.capabilities.cluster_access import CONFIG, ClusterAccess as ClusterAccess
from pciname.capabilities.served import parse_objects, pick_kubevirt, pick_nodes, ref
from pciname.errors import ClusterError
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.budget import check_alive, count_nodes
from pciname.server.data import DataSet, served_profile
from pciname.server.logs import fields
from pciname.server.rpc.mapping import to_message
from pciname.server.rpc.shared import INVALID, PRECONDITION, answer, check, declared, request_from
from pciname.server.rpc.wire import (
    CLUSTER_CONFIG,
    CLUSTER_DISABLED,
    CLUSTER_REFUSED,
    CLUSTER_UNREACHABLE,
    KUBEVIRT_AMBIGUOUS,
    KUBEVIRT_NOT_FOUND,
    NO_KUBEVIRT,
    OBJECTS_INPUT,
    RpcFailure,
    failure,
)

if TYPE_CHECKING:
    from pciname.server.service import PciNameService

#: The limits of a GpuOptions request (its objects' YAML: at most --max-lint-nodes), in order.
RULES = (declared(GpuOptionsRequest, "profile", "cozystack", "kubevirt_name"),)


def _refuse(message: str, ambiguous: bool) -> RpcFailure:
    """INVALID_ARGUMENT for objects sent that cannot be read, with their reason."""
    return failure(INVALID, message, KUBEVIRT_AMBIGUOUS if ambiguous else OBJECTS_INPUT)


# -- GpuOptions: the cluster ------------------------------------------------------------------


def cluster_failure(error: Any, context: grpc.ServicerContext) -> RpcFailure:
    """The status for a :class:`pciname.errors.ClusterError`."""
    message = str(error)
    if error.reason == CONFIG:
        return failure(PRECONDITION, message, CLUSTER_CONFIG)
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
        if error.reason in ("unreachable", "refused", CONFIG):
            log.warning(
                "cannot read the cluster", extra=fields(method="GpuOptions", error=str(error), code=reason.code.name)
            )
        raise reason from None
    if state.kubevirt is None:
        raise failure(PRECONDITION, NO_KUBEVIRT_CR, NO_KUBEVIRT)
    return state.kubevirt, state.nodes


def gpu_options(
    request: pb.GpuOptionsRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.GpuOptionsResponse, int]:
    """The answer: the request's limits checked here, its rules by
    :class:`~pciname.capabilities.audit.GpuOptionsRequest` (a bad profile or
    release fails before any cluster I/O)."""

    check(request, RULES)
    name = request.kubevirt_name.strip() or None
    cozystack = request.cozystack if request.cozystack.strip() else None
    asked = request_from(
        "GpuOptions", request, profile=request.profile, cozystack=cozystack, kubevirt_name=name
    ).validated()
    given = None if asked.auto else served_profile(data, str(asked.chosen_profile or ""))
    if asked.from_cluster:
        kubevirt, nodes = read_from_cluster(service.cluster, name, context, service.log)
    else:

        def bounded(text: str, field: str) -> None:  # YAML: at most max_nodes nodes (JSON is compact)
            count_nodes(text, field, service.max_lint_nodes, context, flag="--max-lint-nodes", reason=OBJECTS_INPUT)

        kubevirt = pick_kubevirt(parse_objects(request.kubevirt, "kubevirt", _refuse, bounded), name, _refuse)
        nodes = pick_nodes(parse_objects(request.nodes, "nodes", _refuse, bounded), _refuse)

    def alive() -> None:  # the work stops once the caller is gone or its deadline passed
        check_alive(context)

    answered = answer(
        "GpuOptions",
        asked,
        kubevirt,
        nodes,
        served=given.key if given is not None else None,
        default=data.default.key,
        resolver=data.resolver,
        check=alive,
    )
    profile = data.resolver.view(answered.profile).profile.name  # the served profile's name
    response = to_message(
        pb.GpuOptionsResponse,
        options=answered.options,
        profile=profile,
        profile_source=answered.profile_source,
        kubevirt=ref(kubevirt),
    )
    return response, 0


__all__ = ["ClusterAccess", "gpu_options", "read_from_cluster"]
