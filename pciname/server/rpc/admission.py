"""The AdmissionPolicy RPC: ``pciname admission-policy`` over gRPC.

The handler checks the request's limits, builds the request of
:mod:`pciname.capabilities.admission` from the message (its rules: where
the allowed set comes from), reads the KubeVirt CR it asks for (the
caller's, or the server's cluster with ``--kube``) and answers the policy
and binding as YAML and JSON text, exactly as the command prints them. A
CR costs what a Lint request may (:mod:`pciname.server.budget`): one of
the ``--max-concurrent-lints`` slots, at most ``--max-lint-nodes`` nodes
counted before it is composed, the caller's deadline and cancellation
checked while it is composed, linted and its hints written.
"""

from __future__ import annotations

import contextlib
import functools
from typing import TYPE_CHECKING, Any

import grpc

from pciname.capabilities.admission import AdmissionPolicyRequest, cluster_cr
from pciname.capabilities.served import ADMISSION_NAME
from pciname.errors import LintInputError
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.budget import RELEASE_AFTER_NODES, CheckedText, check_alive, count_nodes, release_memory
from pciname.server.data import DataSet, served_profile
from pciname.server.rpc.cluster import read_from_cluster
from pciname.server.rpc.mapping import to_message
from pciname.server.rpc.shared import INVALID, answer, batch, check, declared, no_auto, request_from
from pciname.server.rpc.wire import (
    LINT_INPUT,
    RpcFailure,
    failure,
    lint_input_failure,
)

if TYPE_CHECKING:
    from pciname.server.service import PciNameService


def admission_policy(
    request: pb.AdmissionPolicyRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.AdmissionPolicyResponse, int]:
    """The answer, and how many devices and mdev types it names."""
    asked = _checked(request, service.max_batch, service.max_lint_bytes)
    check(request, (no_auto("profile"),))
    profile = served_profile(data, str(asked.chosen_profile or ""))
    alive = functools.partial(check_alive, context)
    # A CR's YAML takes the budget Lint takes: a slot, the nodes counted
    # (aliases as what they stand for) before anything is composed, the
    # caller checked while composing, linting and writing hints, and the
    # memory given back after a large one.
    with service.lint_slots.take() if asked.from_cr else contextlib.nullcontext():
        nodes = 0
        try:
            try:
                cr = _cr_text(request, service, asked.kubevirt_name, context) if asked.from_cr else None
                if cr is not None:
                    nodes = count_nodes(cr[0], cr[1], service.max_lint_nodes, context, flag="--max-lint-nodes")
                result = answer(
                    "AdmissionPolicy",
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
    response = to_message(
        pb.AdmissionPolicyResponse,
        profile=policy.profile,
        yaml=policy.to_yaml(),
        json=policy.to_json(),
        allowed=policy.allowed,
        actions=policy.objects[1]["spec"]["validationActions"],
        left_out=policy.left_out,
        findings=list(result.findings),
    )
    return response, len(asked.devices) + len(asked.mdev_types)


RULES = (
    batch("devices and mdev types", "devices", "mdev_types"),
    declared(
        AdmissionPolicyRequest, "devices", "mdev_types", "actions", "profile", "name", "dra_driver", "kubevirt_name"
    ),
)


def _checked(request: pb.AdmissionPolicyRequest, max_batch: int, max_bytes: int) -> Any:
    """The request, its limits checked here (RpcFailure: INVALID_ARGUMENT)
    and its rules by :class:`~pciname.capabilities.admission.AdmissionPolicyRequest`."""
    check(request, RULES, max_batch)
    size = len(request.kubevirt_cr.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise RpcFailure(
            INVALID, f"kubevirt_cr is {size} bytes, more than this server's maximum of {max_bytes} (--max-lint-bytes)"
        )
    return request_from(
        "AdmissionPolicy",
        request,
        kubevirt_cr=bool(request.kubevirt_cr.strip()),
        kubevirt_name=request.kubevirt_name.strip() or None,
        name=request.name.strip() or ADMISSION_NAME,
        dra_driver=request.dra_driver.strip() or None,
    ).validated()


def _cr_text(
    request: pb.AdmissionPolicyRequest,
    service: PciNameService,
    kubevirt_name: str | None,
    context: grpc.ServicerContext,
) -> tuple[str, str]:
    """The KubeVirt CR's YAML (the request's, or the cluster's) and the name findings give it."""
    if not request.from_cluster:
        return request.kubevirt_cr, "kubevirt_cr"
    kubevirt, _ = read_from_cluster(service.cluster, kubevirt_name, context, service.log)
    return cluster_cr(kubevirt)


__all__ = ["admission_policy"]
