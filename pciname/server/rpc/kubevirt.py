"""The RPCs over KubeVirt objects: ``PermittedHostDevices``, ``NodePool``,
``VgpuTypes`` and ``DraClaims`` (the servicer, :mod:`pciname.server.service`,
calls them). Each checks the message's limits (its rules, in order), builds
the capability's request from it (:mod:`pciname.capabilities`), answers it
and sends the answer as the matching command prints it for the same input.

Errors that are not about profiles are :class:`~pciname.server.rpc.wire.RpcFailure`
with a stable reason in the trailing metadata ``pciname-error``
(:mod:`pciname.server.rpc.wire` defines them). Inputs they echo go through
:func:`~pciname.server.rpc.wire.shown`, so details stay short whatever was sent.
"""

from __future__ import annotations

import io
from typing import TYPE_CHECKING

import grpc

from pciname.base.render import emit_documents
from pciname.capabilities import node_pool as pool, permitted, vm_gpus as gpus
from pciname.capabilities.dra_claims import DraClaimsRequest
from pciname.capabilities.limits import NAME_CHARS
from pciname.capabilities.served import FORMATS, permitted_texts, texts
from pciname.capabilities.vgpu_types import VgpuTypesRequest
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.config import DEFAULT_MAX_LINT_BYTES
from pciname.server.data import DataSet, served_profile
from pciname.server.rpc.mapping import to_message
from pciname.server.rpc.shared import INVALID, answer, batch, chars, check, declared, needs, no_auto, request_from
from pciname.server.rpc.wire import (
    RpcFailure,
    shown,
    vgpu_types_response,
)

if TYPE_CHECKING:
    from pciname.server.service import PciNameService

DEVICES = "devices and mdev types"

# -- PermittedHostDevices -------------------------------------------------------------------

PERMITTED_RULES = (
    needs(permitted.no_devices, "devices", "mdev_types"),
    batch(DEVICES, "devices", "mdev_types"),
    declared(permitted.PermittedHostDevicesRequest, "devices", "mdev_types", "profile", "cozystack", "variant"),
)


def permitted_host_devices(
    request: pb.PermittedHostDevicesRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.PermittedHostDevicesResponse, int]:
    """The answer, and how many devices and mdev types it names: the
    request's limits checked here, its rules by
    :class:`~pciname.capabilities.permitted.PermittedHostDevicesRequest`."""
    check(request, PERMITTED_RULES, service.max_batch)
    fmt = request.format.strip().lower() or "kubevirt"
    if fmt not in FORMATS:
        raise RpcFailure(INVALID, f"unknown format {shown(request.format)}: use one of {', '.join(FORMATS)}")
    check(request, (no_auto("profile"),))
    size = len(request.cozystack_defaults.encode("utf-8", "surrogatepass"))
    if size > DEFAULT_MAX_LINT_BYTES:
        raise RpcFailure(INVALID, f"cozystack_defaults is too large ({size} bytes, at most {DEFAULT_MAX_LINT_BYTES})")
    defaults = request.cozystack_defaults
    asked = request_from(
        "PermittedHostDevices",
        request,
        format=fmt,
        cozystack_defaults=(defaults, "cozystack_defaults") if defaults else None,
    ).validated()
    profile = served_profile(data, str(asked.chosen_profile or ""))
    result = answer("PermittedHostDevices", asked, profile.key, resolver=data.resolver)
    yaml_text, json_text = permitted_texts(result.snippet.data, fmt, request.replace_defaults)
    response = to_message(
        pb.PermittedHostDevicesResponse,
        result.snippet.data,
        profile=profile.name,
        yaml=yaml_text,
        json=json_text,
        format=fmt,
        left_out=result.snippet.left_out,
        notes=result.snippet.notes,
        clashes=result.clashes,
        variant=result.variant,
    )
    return response, len(request.devices) + len(request.mdev_types)


# -- NodePool ---------------------------------------------------------------------------------

POOL_RULES = (
    needs(gpus.no_gpus, "devices", "mdev_types"),
    batch(DEVICES, "devices", "mdev_types"),
    batch("roles", "roles"),
    declared(pool.NodePoolRequest, "group", "devices", "mdev_types"),
    # roles and the node group's fields go to NodePoolRequest.fields, a dict: bounded as a name
    chars(NAME_CHARS, "roles"),
    declared(pool.NodePoolRequest, "format"),
    chars(NAME_CHARS, "instance_type", "ephemeral_storage", "cpu", "memory"),
    declared(pool.NodePoolRequest, "cozystack", "cluster", "profile"),
    no_auto("profile"),
)
#: The NodePoolRequest ``fields``: the group's own settings, as the message has them.
POOL_FIELDS = ("instance_type", "min_replicas", "max_replicas", "cpu", "memory", "ephemeral_storage")


def node_pool(
    request: pb.NodePoolRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.NodePoolResponse, int]:
    """The answer (what ``pciname node-pool`` prints for the same input), and
    how many device and mdev type requests it names."""
    check(request, POOL_RULES, service.max_batch)
    fields = {name: getattr(request, name) if request.HasField(name) else None for name in POOL_FIELDS}
    asked = request_from(
        "NodePool", request, format=request.format, fields=fields | {"roles": list(request.roles) or None}
    ).validated()
    profile = served_profile(data, str(asked.chosen_profile or ""))
    snippet = answer("NodePool", asked, profile.key, resolver=data.resolver)
    yaml_text, json_text = texts(snippet.data)
    response = to_message(
        pb.NodePoolResponse,
        snippet,
        profile=profile.name,
        format=asked.format,
        yaml=yaml_text,
        json=json_text,
        gpus=pool.gpu_names(snippet, request.group),
    )
    return response, len(request.devices) + len(request.mdev_types)


# -- VgpuTypes --------------------------------------------------------------------------------

VGPU_RULES = (declared(VgpuTypesRequest, "device", "profile"), needs("device", "device"), no_auto("profile"))


def vgpu_types(
    request: pb.VgpuTypesRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.VgpuTypesResponse, int]:
    """What ``pciname vgpu-types DEVICE -o json`` answers; a device the
    catalogue does not cover is ``covered: false`` with the one line."""
    check(request, VGPU_RULES)
    asked = request_from("VgpuTypes", request).validated()
    profile = served_profile(data, str(asked.chosen_profile or ""))
    result = answer("VgpuTypes", asked, profile.key, resolver=data.resolver)
    if result.types is None:
        uncovered = pb.VgpuTypesResponse(
            device=result.device, profile=profile.name, covered=False, message=result.message
        )
        return uncovered, 1
    return vgpu_types_response(result.types), 1


# -- DraClaims ----------------------------------------------------------------------------------

DRA_RULES = (
    needs("devices", "devices"),
    batch("devices", "devices"),
    declared(DraClaimsRequest, "devices", "dra_driver", "kubevirt", "resource_api", "name", "prefix"),
)


def dra_claims(
    request: pb.DraClaimsRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.DraClaimsResponse, int]:
    """What ``pciname vm-gpus --dra`` prints for the same input (documents
    and notes), and how many device requests it names."""
    check(request, DRA_RULES, service.max_batch)
    objects = answer("DraClaims", request_from("DraClaims", request).validated())
    texts_by_format = {}
    for fmt in ("yaml", "json"):
        out = io.StringIO()
        emit_documents(objects.documents, fmt, out)
        texts_by_format[fmt] = out.getvalue()
    combination = objects.combination
    response = pb.DraClaimsResponse(
        dra_driver=combination.driver,
        kubevirt=combination.kubevirt,
        resource_api=combination.resource_api,
        yaml=texts_by_format["yaml"],
        json=texts_by_format["json"],
        notes=list(objects.notes),
    )
    return response, len(request.devices)


__all__ = ["dra_claims", "node_pool", "permitted_host_devices", "vgpu_types"]
