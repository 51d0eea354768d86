"""The AdmissionPolicy RPC: ``pciname admission-policy`` over gRPC.

The handler checks the request's limits, builds the request of
:mod:`pciname.capabilities.admission` from the message (its rules: where
the allowed set comes from), reads the KubeVirt CR it asks for (the
caller's, or the server's cluster with ``--kube``) and answers the policy
and binding as YAML and JSON text, exactly as the command prints them. A
CR costs what a Lint request may (:mod:`pciname.server.rpc.budget`): one of
the ``--max-concurrent-lints`` slots, at most ``--max-lint-nodes`` nodes
counted before it is composed, the caller's deadline and cancellation
checked while it is composed, linted and its hints written.
"""

from __future__ import annotations

import contextlib
import functools
import logging

import grpc

from pciname.capabilities.admission import AdmissionPolicyRequest, answer, cluster_cr
from pciname.errors import LintInputError
from pciname.policy.admission import DEFAULT_NAME
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.config import DEFAULT_MAX_LINT_NODES
from pciname.server.data import DataSet, served_profile
from pciname.server.rpc.budget import RELEASE_AFTER_NODES, CheckedText, Slots, check_alive, count_nodes, release_memory
from pciname.server.rpc.cluster import ClusterAccess, read_from_cluster
from pciname.server.rpc.shared import INVALID, no_auto
from pciname.server.rpc.wire import (
    LINT_INPUT,
    MAX_NAME_CHARS,
    MAX_PROFILE_CHARS,
    RpcFailure,
    admission_policy_response,
    check_batch,
    check_length,
    failure,
    lint_input_failure,
)


def admission_policy(
    request: pb.AdmissionPolicyRequest,
    context: grpc.ServicerContext,
    data: DataSet,
    *,
    max_batch: int,
    max_bytes: int,
    cluster: ClusterAccess | None,
    log: logging.Logger,
    max_nodes: int = DEFAULT_MAX_LINT_NODES,
    slots: Slots | None = None,
) -> tuple[pb.AdmissionPolicyResponse, int]:
    """The answer, and how many devices and mdev types it names."""
    asked = _checked(request, max_batch, max_bytes)
    no_auto(request.profile)
    profile = served_profile(data, str(asked.chosen_profile or ""))
    alive = functools.partial(check_alive, context)
    # A CR's YAML takes the budget Lint takes: a slot, the nodes counted
    # (aliases as what they stand for) before anything is composed, the
    # caller checked while composing, linting and writing hints, and the
    # memory given back after a large one.
    with slots.take() if asked.from_cr and slots is not None else contextlib.nullcontext():
        nodes = 0
        try:
            try:
                cr = _cr_text(request, cluster, asked.kubevirt_name, context, log) if asked.from_cr else None
                if cr is not None:
                    nodes = count_nodes(cr[0], cr[1], max_nodes, context, flag="--max-lint-nodes")
                result = answer(
                    asked,
                    profile.key,
                    cr=cr,
                    resolver=data.resolver,
                    check=alive,
                    stream=functools.partial(CheckedText, context=context),
                )
            except LintInputError as error:
                raise lint_input_failure([error]) from None
            except RecursionError:
                raise failure(INVALID, "the YAML is nested too deeply to check", LINT_INPUT) from None
        finally:
            if nodes > RELEASE_AFTER_NODES:
                release_memory()
    alive()
    policy = result.policy
    response = admission_policy_response(
        profile=policy.profile,
        yaml=policy.to_yaml(),
        json=policy.to_json(),
        allowed=policy.allowed,
        actions=policy.objects[1]["spec"]["validationActions"],
        left_out=policy.left_out,
        findings=list(result.findings),
    )
    return response, len(asked.devices) + len(asked.mdev_types)


def _checked(request: pb.AdmissionPolicyRequest, max_batch: int, max_bytes: int) -> AdmissionPolicyRequest:
    """The request, its limits checked here (RpcFailure: INVALID_ARGUMENT)
    and its rules by :class:`~pciname.capabilities.admission.AdmissionPolicyRequest`."""
    devices = list(request.devices)
    mdev_types = list(request.mdev_types)
    check_batch(len(devices) + len(mdev_types), "devices and mdev types", max_batch)
    for name, values in (("devices", devices), ("mdev_types", mdev_types), ("actions", list(request.actions))):
        for i, value in enumerate(values):
            check_length(value, f"{name}[{i}]", MAX_NAME_CHARS)
    check_length(request.profile, "profile", MAX_PROFILE_CHARS)
    check_length(request.name, "name", MAX_NAME_CHARS)
    check_length(request.dra_driver, "dra_driver", MAX_NAME_CHARS)
    kubevirt_name = check_length(request.kubevirt_name, "kubevirt_name", MAX_NAME_CHARS).strip() or None
    size = len(request.kubevirt_cr.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise RpcFailure(
            INVALID, f"kubevirt_cr is {size} bytes, more than this server's maximum of {max_bytes} (--max-lint-bytes)"
        )
    return AdmissionPolicyRequest(
        tuple(devices),
        tuple(mdev_types),
        kubevirt_cr=bool(request.kubevirt_cr.strip()),
        from_cluster=request.from_cluster,
        kubevirt_name=kubevirt_name,
        actions=tuple(request.actions),
        name=request.name.strip() or DEFAULT_NAME,
        profile=request.profile or None,
        dra=request.dra,
        dra_driver=request.dra_driver.strip() or None,
    ).validated()


def _cr_text(
    request: pb.AdmissionPolicyRequest,
    cluster: ClusterAccess | None,
    kubevirt_name: str | None,
    context: grpc.ServicerContext,
    log: logging.Logger,
) -> tuple[str, str]:
    """The KubeVirt CR's YAML (the request's, or the cluster's) and the name findings give it."""
    if not request.from_cluster:
        return request.kubevirt_cr, "kubevirt_cr"
    kubevirt, _ = read_from_cluster(cluster, kubevirt_name, context, log)
    return cluster_cr(kubevirt)


__all__ = ["admission_policy"]
