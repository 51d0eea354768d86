"""The RPCs over KubeVirt objects: ``PermittedHostDevices``, ``NodePool``
and ``VgpuTypes`` (the servicer, :mod:`pciname.server.service`, calls
them). Each builds the capability's request from the message
(:mod:`pciname.capabilities`), answers it and renders the answer as the
matching command prints it for the same input.

Errors that are not about profiles are :class:`~pciname.server.rpc.wire.RpcFailure`
with a stable reason in the trailing metadata ``pciname-error``
(:mod:`pciname.server.rpc.wire` defines them). Inputs they echo go through
:func:`~pciname.server.rpc.wire.shown`, so details stay short whatever was sent.
"""

from __future__ import annotations

import io
from typing import Any

from pciname.base.render import dump_json, dump_yaml
from pciname.capabilities.node_pool import NodePoolRequest, answer as node_pool_answer, gpu_names
from pciname.capabilities.permitted import PermittedHostDevicesRequest, answer as permitted_answer, no_devices
from pciname.capabilities.vgpu_types import VgpuTypesRequest, answer as vgpu_types_answer
from pciname.capabilities.vm_gpus import DEFAULT_NAME, DEFAULT_PREFIX, no_gpus
from pciname.kubevirt.generate import FORMATS, render
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.config import DEFAULT_MAX_LINT_BYTES
from pciname.server.data import DataSet, served_profile
from pciname.server.rpc.shared import INVALID, no_auto, texts
from pciname.server.rpc.wire import (
    MAX_DEVICE_CHARS,
    MAX_NAME_CHARS,
    MAX_PROFILE_CHARS,
    RpcFailure,
    check_batch,
    check_length,
    node_pool_response,
    permitted_response,
    shown,
    vgpu_types_response,
)

# -- PermittedHostDevices -------------------------------------------------------------------


def permitted_host_devices(
    request: pb.PermittedHostDevicesRequest, data: DataSet, *, max_batch: int
) -> tuple[pb.PermittedHostDevicesResponse, int]:
    """The answer, and how many devices and mdev types it names: the
    request's limits checked here, its rules by
    :class:`~pciname.capabilities.permitted.PermittedHostDevicesRequest`."""

    devices = list(request.devices)
    mdev_types = list(request.mdev_types)
    if not devices and not mdev_types:
        raise no_devices()
    check_batch(len(devices) + len(mdev_types), "devices and mdev types", max_batch)
    for i, device in enumerate(devices):
        check_length(device, f"devices[{i}]", MAX_DEVICE_CHARS)
    for i, mdev_type in enumerate(mdev_types):
        check_length(mdev_type, f"mdev_types[{i}]", MAX_NAME_CHARS)
    for name in ("profile", "cozystack", "variant"):
        check_length(getattr(request, name), name, MAX_PROFILE_CHARS if name == "profile" else MAX_NAME_CHARS)
    fmt = permitted_format(request)
    no_auto(request.profile)
    size = len(request.cozystack_defaults.encode("utf-8", "surrogatepass"))
    if size > DEFAULT_MAX_LINT_BYTES:
        raise RpcFailure(INVALID, f"cozystack_defaults is too large ({size} bytes, at most {DEFAULT_MAX_LINT_BYTES})")
    asked = PermittedHostDevicesRequest(
        tuple(devices),
        tuple(mdev_types),
        profile=request.profile or None,
        include_broken=request.include_broken,
        format=fmt,
        cozystack=request.cozystack or None,
        variant=request.variant or None,
        replace_defaults=request.replace_defaults,
        vgpu_device_manager=request.vgpu_device_manager,
        cozystack_defaults=(request.cozystack_defaults, "cozystack_defaults") if request.cozystack_defaults else None,
    ).validated()
    profile = served_profile(data, str(asked.chosen_profile or ""))
    result = permitted_answer(asked, profile.key, resolver=data.resolver)
    yaml_text, json_text = render_texts(result.snippet.data, fmt, request.replace_defaults)
    response = permitted_response(
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
    return response, len(devices) + len(mdev_types)


def render_texts(block: dict[str, Any], fmt: str, replace_defaults: bool) -> tuple[str, str]:
    """(YAML, JSON) of the permittedHostDevices ``block`` placed as ``fmt``
    says, exactly as ``pciname permitted-host-devices -o yaml|json`` prints it."""

    data = render(block, fmt, replace_defaults=True if replace_defaults else None)
    yaml_text, json_text = io.StringIO(), io.StringIO()
    dump_yaml(data, yaml_text)
    dump_json(data, json_text)
    return yaml_text.getvalue(), json_text.getvalue()


def permitted_format(request: pb.PermittedHostDevicesRequest) -> str:
    """The request's format (kubevirt when empty); INVALID_ARGUMENT for
    another, its text echoed bounded."""

    fmt = request.format.strip().lower() or "kubevirt"
    if fmt not in FORMATS:
        raise RpcFailure(INVALID, f"unknown format {shown(request.format)}: use one of {', '.join(FORMATS)}")
    return fmt


# -- NodePool ---------------------------------------------------------------------------------


def node_pool(request: pb.NodePoolRequest, data: DataSet, *, max_batch: int) -> tuple[pb.NodePoolResponse, int]:
    """The answer (what ``pciname node-pool`` prints for the same input), and
    how many device and mdev type requests it names."""

    devices = list(request.devices)
    mdev_types = list(request.mdev_types)
    roles = list(request.roles)
    if not devices and not mdev_types:
        raise no_gpus()
    check_batch(len(devices) + len(mdev_types), "devices and mdev types", max_batch)
    check_batch(len(roles), "roles", max_batch)
    check_length(request.group, "group", MAX_NAME_CHARS)
    for name, values in (("devices", devices), ("mdev_types", mdev_types), ("roles", roles)):
        for i, value in enumerate(values):
            check_length(value, f"{name}[{i}]", MAX_NAME_CHARS)
    for name in ("format", "instance_type", "ephemeral_storage", "cpu", "memory", "cozystack", "cluster"):
        check_length(getattr(request, name), name, MAX_NAME_CHARS)
    check_length(request.profile, "profile", MAX_PROFILE_CHARS)
    no_auto(request.profile)

    def given(name: str) -> Any:
        return getattr(request, name) if request.HasField(name) else None

    asked = NodePoolRequest(
        request.group,
        tuple(devices),
        tuple(mdev_types),
        profile=request.profile or None,
        include_broken=request.include_broken,
        fragment=request.fragment,
        format=request.format,
        cozystack=request.cozystack or None,
        cluster=request.cluster or None,
        fields={
            **{name: given(name) for name in ("instance_type", "min_replicas", "max_replicas", "cpu", "memory")},
            "ephemeral_storage": given("ephemeral_storage"),
            "roles": roles or None,
        },
    ).validated()
    fmt = asked.format
    profile = served_profile(data, str(asked.chosen_profile or ""))
    snippet = node_pool_answer(asked, profile.key, resolver=data.resolver)
    yaml_text, json_text = texts(snippet.data)
    response = node_pool_response(
        profile=profile.name,
        format=fmt,
        yaml=yaml_text,
        json=json_text,
        gpus=gpu_names(snippet, request.group),
        left_out=snippet.left_out,
        notes=snippet.notes,
    )
    return response, len(devices) + len(mdev_types)


# -- VgpuTypes --------------------------------------------------------------------------------


def vgpu_types(request: pb.VgpuTypesRequest, data: DataSet) -> pb.VgpuTypesResponse:
    """What ``pciname vgpu-types DEVICE -o json`` answers; a device the
    catalogue does not cover is ``covered: false`` with the one line."""

    check_length(request.device, "device", MAX_DEVICE_CHARS)
    check_length(request.profile, "profile", MAX_PROFILE_CHARS)
    if not request.device.strip():
        raise RpcFailure(INVALID, "empty request: no device given")
    no_auto(request.profile)
    asked = VgpuTypesRequest(request.device, request.profile or None).validated()
    profile = served_profile(data, str(asked.chosen_profile or ""))
    result = vgpu_types_answer(asked, profile.key, resolver=data.resolver)
    if result.types is None:
        return pb.VgpuTypesResponse(device=result.device, profile=profile.name, covered=False, message=result.message)
    return vgpu_types_response(result.types)


def dra_claims(request: pb.DraClaimsRequest, *, max_batch: int) -> tuple[pb.DraClaimsResponse, int]:
    """What ``pciname vm-gpus --dra`` prints for the same input (documents
    and notes), and how many device requests it names."""
    from pciname.base.render import emit_documents
    from pciname.capabilities.dra_claims import DraClaimsRequest, answer as dra_answer

    devices = list(request.devices)
    if not devices:
        raise RpcFailure(INVALID, "empty request: no devices given")
    check_batch(len(devices), "devices", max_batch)
    for i, value in enumerate(devices):
        check_length(value, f"devices[{i}]", MAX_NAME_CHARS)
    for name in ("dra_driver", "kubevirt", "resource_api", "name", "prefix"):
        check_length(getattr(request, name), name, MAX_NAME_CHARS)
    asked = DraClaimsRequest(
        tuple(devices),
        dra_driver=request.dra_driver or None,
        kubevirt=request.kubevirt or None,
        resource_api=request.resource_api or None,
        name=request.name or DEFAULT_NAME,
        prefix=request.prefix or DEFAULT_PREFIX,
        product_name=request.product_name,
    ).validated()
    objects = dra_answer(asked)
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
    return response, len(devices)


__all__ = ["dra_claims", "node_pool", "permitted_format", "permitted_host_devices", "render_texts", "vgpu_types"]
