"""The AdmissionPolicy RPC: ``pciname admission-policy`` over gRPC.

The handler checks the request's fields, builds the allowed set (devices and
mdev types under the profile, or a KubeVirt CR the caller sends or the
server reads with ``--kube``) and answers the policy and binding as YAML and
JSON text, exactly as the command prints them
(:mod:`pciname.kubevirt.admission`). A CR costs what a Lint request may
(:mod:`pciname.server.rpc.budget`): one of the ``--max-concurrent-lints``
slots, at most ``--max-lint-nodes`` nodes counted before it is composed,
the caller's deadline and cancellation checked while it is composed,
linted and its hints written.
"""

from __future__ import annotations

import contextlib
import functools
import logging
from typing import TYPE_CHECKING, Any, cast

import grpc

from pciname.errors import LintInputError, PcinameError
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

if TYPE_CHECKING:
    from collections.abc import Callable

    from pciname.kubevirt.admission import AdmissionPolicy
    from pciname.kubevirt.generate import Skipped


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
    from pciname.kubevirt.admission import allowed_from_devices

    devices, mdev_types, kubevirt_name, from_cr = _checked(request, max_batch, max_bytes)
    no_auto(request.profile)
    profile = served_profile(data, request.profile)
    left_out: tuple[Skipped, ...] = ()
    findings: list[str] = []
    alive = functools.partial(check_alive, context)
    # A CR's YAML takes the budget Lint takes: a slot, the nodes counted
    # (aliases as what they stand for) before anything is composed, the
    # caller checked while composing, linting and writing hints, and the
    # memory given back after a large one.
    with slots.take() if from_cr and slots is not None else contextlib.nullcontext():
        nodes = 0
        try:
            try:
                if from_cr:
                    text, name = _cr_text(request, cluster, kubevirt_name, context, log)
                    nodes = count_nodes(text, name, max_nodes, context, flag="--max-lint-nodes")
                    permitted, findings = _allowed_from_cr(text, name, profile.key, data, context)
                else:
                    permitted, left_out = allowed_from_devices(devices, mdev_types, profile.key, resolver=data.resolver)
            except LintInputError as error:
                raise lint_input_failure([error]) from None
            alive()
            result = _policy(request, permitted, profile.key, left_out, data, alive)
        finally:
            if nodes > RELEASE_AFTER_NODES:
                release_memory()
    alive()
    response = admission_policy_response(
        profile=result.profile,
        yaml=result.to_yaml(),
        json=result.to_json(),
        allowed=result.allowed,
        actions=result.objects[1]["spec"]["validationActions"],
        left_out=result.left_out,
        findings=findings,
    )
    return response, len(devices) + len(mdev_types)


def _checked(
    request: pb.AdmissionPolicyRequest, max_batch: int, max_bytes: int
) -> tuple[list[str], list[str], str | None, bool]:
    """The request's devices, mdev types and KubeVirt CR name once its
    fields are checked (RpcFailure: INVALID_ARGUMENT), and whether the
    allowed set comes from a CR."""
    devices = list(request.devices)
    mdev_types = list(request.mdev_types)
    check_batch(len(devices) + len(mdev_types), "devices and mdev types", max_batch)
    for name, values in (("devices", devices), ("mdev_types", mdev_types), ("actions", list(request.actions))):
        for i, value in enumerate(values):
            check_length(value, f"{name}[{i}]", MAX_NAME_CHARS)
    check_length(request.profile, "profile", MAX_PROFILE_CHARS)
    check_length(request.name, "name", MAX_NAME_CHARS)
    kubevirt_name = check_length(request.kubevirt_name, "kubevirt_name", MAX_NAME_CHARS).strip() or None
    size = len(request.kubevirt_cr.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise RpcFailure(
            INVALID, f"kubevirt_cr is {size} bytes, more than this server's maximum of {max_bytes} (--max-lint-bytes)"
        )
    from_cr = bool(request.kubevirt_cr.strip()) or request.from_cluster
    if from_cr and (devices or mdev_types):
        raise RpcFailure(
            INVALID, "devices and mdev_types go without kubevirt_cr / from_cluster: the CR says what is allowed"
        )
    if request.kubevirt_cr.strip() and request.from_cluster:
        raise RpcFailure(INVALID, "from_cluster reads the KubeVirt CR from the cluster: leave kubevirt_cr empty")
    if not from_cr and not devices and not mdev_types:
        raise RpcFailure(INVALID, "empty request: no devices, mdev_types, kubevirt_cr or from_cluster")
    return devices, mdev_types, kubevirt_name, from_cr


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
    import yaml

    from pciname.base.yaml_out import Dumper

    kubevirt, _ = read_from_cluster(cluster, kubevirt_name, context, log)
    return yaml.dump(kubevirt, Dumper=Dumper, sort_keys=False), "cluster:kubevirt"


def _policy(
    request: pb.AdmissionPolicyRequest,
    permitted: dict[str, Any],
    profile: Any,
    left_out: tuple[Skipped, ...],
    data: DataSet,
    alive: Callable[[], None],
) -> AdmissionPolicy:
    """The policy of the allowed set, with the request's actions and name
    (a PcinameError of theirs: INVALID_ARGUMENT)."""
    from pciname.kubevirt.admission import DEFAULT_ACTIONS, DEFAULT_NAME, admission_policy as build

    try:
        return build(
            permitted,
            profile,
            list(request.actions) or DEFAULT_ACTIONS,
            name=request.name.strip() or DEFAULT_NAME,
            left_out=left_out,
            resolver=data.resolver,
            check=alive,
        )
    except PcinameError as error:
        raise RpcFailure(INVALID, str(error)) from None


def _allowed_from_cr(
    text: str, name: str, profile: Any, data: DataSet, context: grpc.ServicerContext
) -> tuple[dict[str, Any], list[str]]:
    """:func:`pciname.kubevirt.admission.allowed_from_cr`, composed from a
    stream that checks the caller every 4 KiB, linted with the caller
    checked before each hint."""
    from pciname.kubevirt.admission import allowed_from_linter
    from pciname.lint.linter import Linter

    linter = Linter(profile, resolver=data.resolver, check=functools.partial(check_alive, context))
    try:
        documents = linter.add_text(cast(Any, CheckedText(text, context)), name)
    except RecursionError:
        raise LintInputError(f"{name}: nested too deeply to read as YAML", file=name) from None
    if not documents:
        raise PcinameError(f"{name}: no YAML document in it")
    check_alive(context)
    try:
        return allowed_from_linter(linter, name)
    except RecursionError:
        raise failure(INVALID, "the YAML is nested too deeply to check", LINT_INPUT) from None
