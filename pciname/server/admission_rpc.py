"""The AdmissionPolicy RPC: ``pciname admission-policy`` over gRPC.

The handler checks the request's fields, builds the allowed set (devices and
mdev types under the profile, or a KubeVirt CR the caller sends or the
server reads with ``--kube``) and answers the policy and binding as YAML and
JSON text, exactly as the command prints them
(:mod:`pciname.kube.admission`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import grpc

from ..errors import LintInputError, PcinameError
from ._proto import pciname_pb2 as pb
from .data import DataSet, served_profile
from .kube_rpcs import INVALID, ClusterAccess, no_auto, read_from_cluster
from .wire import (
    FILE_KEY,
    LINE_KEY,
    LINT_INPUT,
    MAX_NAME_CHARS,
    MAX_PROFILE_CHARS,
    RpcFailure,
    admission_policy_response,
    check_batch,
    check_length,
    failure,
    metadata_text,
)

if TYPE_CHECKING:
    from ..kube.generate import Skipped


def admission_policy(
    request: pb.AdmissionPolicyRequest,
    context: grpc.ServicerContext,
    data: DataSet,
    *,
    max_batch: int,
    max_bytes: int,
    cluster: ClusterAccess | None,
    log: logging.Logger,
) -> tuple[pb.AdmissionPolicyResponse, int]:
    """The answer, and how many devices and mdev types it names."""
    import yaml

    from ..kube.admission import DEFAULT_ACTIONS, DEFAULT_NAME, allowed_from_cr, allowed_from_devices
    from ..kube.admission import admission_policy as build
    from ..yaml_out import Dumper

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
    no_auto(request.profile)
    profile = served_profile(data, request.profile)
    left_out: tuple[Skipped, ...] = ()
    findings: list[str] = []
    try:
        if request.from_cluster:
            kubevirt, _ = read_from_cluster(cluster, kubevirt_name, context, log)
            permitted, findings = allowed_from_cr(
                yaml.dump(kubevirt, Dumper=Dumper, sort_keys=False),
                "cluster:kubevirt",
                profile.key,
                resolver=data.resolver,
            )
        elif from_cr:
            permitted, findings = allowed_from_cr(
                request.kubevirt_cr, "kubevirt_cr", profile.key, resolver=data.resolver
            )
        else:
            permitted, left_out = allowed_from_devices(devices, mdev_types, profile.key, resolver=data.resolver)
    except LintInputError as error:
        extra: list[tuple[str, Any]] = [(FILE_KEY, metadata_text(error.file))]
        if error.line is not None:
            extra.append((LINE_KEY, str(error.line)))
        raise failure(INVALID, str(error), LINT_INPUT, *extra) from None
    try:
        result = build(
            permitted,
            profile.key,
            list(request.actions) or DEFAULT_ACTIONS,
            name=request.name.strip() or DEFAULT_NAME,
            left_out=left_out,
            resolver=data.resolver,
        )
    except PcinameError as error:
        raise RpcFailure(INVALID, str(error)) from None
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
