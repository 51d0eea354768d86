"""The RPCs over the names that are a capability's request and answer:
``Reverse`` and ``Diff`` (:mod:`pciname.capabilities.names`), and
``GfdLabels`` (:mod:`pciname.capabilities.gfd_labels`: the container
plugin's GFD labels). The lookups,
``Resolve``, ``ResolveBatch`` and ``ListDevices``, answer from the served
data's encoded tables (:mod:`pciname.server.service`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import grpc

from pciname.capabilities.gfd_labels import GfdLabelsRequest
from pciname.capabilities.names import DiffRequest, ReverseRequest, reverse_miss
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.data import DataSet, request_aliases, served_profile, with_request_aliases
from pciname.server.rpc.mapping import to_message
from pciname.server.rpc.shared import answer, check, declared, request_from
from pciname.server.rpc.wire import check_deadline, diff_response

if TYPE_CHECKING:
    from pciname.server.service import PciNameService


def reverse(
    request: pb.ReverseRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.ReverseResponse, int]:
    """The devices a profile gives ``resource_name`` (none: the one line why)."""
    check(request, (declared(ReverseRequest, "resource_name", resource_name="resource"),))
    asked = request_from("Reverse", request, {"resource_name": "resource"}, profile=request.profile).validated()
    profile = with_request_aliases(data, served_profile(data, request.profile), *request_aliases(request))
    devices = answer("Reverse", asked, profile.key, resolver=data.resolver)
    miss = "" if devices else reverse_miss(asked, profile.key, resolver=data.resolver)
    response = to_message(pb.ReverseResponse, asked, profile=profile.name, devices=devices, miss=miss)
    return response, 0


def diff(
    request: pb.DiffRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.DiffResponse, int]:
    """The devices whose resource differs between two profiles (Kata aliases on the Kata side)."""
    check(request, (declared(DiffRequest, "from_profile", "to_profile", from_profile="old", to_profile="new"),))
    sides = {"from_profile": "old", "to_profile": "new"}
    given = {side: getattr(request, name) if getattr(request, name).strip() else None for name, side in sides.items()}
    asked = request_from("Diff", request, sides, **given).validated()
    old = served_profile(data, request.from_profile, "from_profile")
    new = served_profile(data, request.to_profile, "to_profile")
    aliases = request_aliases(request)
    if aliases != (None, None):
        kata = [side for side in (old, new) if data.resolver.view(side.key).profile.is_kata]
        if not kata:
            with_request_aliases(data, new, *aliases)  # INVALID_ARGUMENT: not a Kata profile
        old, new = (with_request_aliases(data, side, *aliases) if side in kata else side for side in (old, new))
    entries = answer("Diff", asked, old.key, new.key, resolver=data.resolver)
    check_deadline(context)
    return diff_response(old.name, new.name, entries), 0


GFD_RULES = (declared(GfdLabelsRequest, "product", "release", "compute"),)


def gfd_labels(
    request: pb.GfdLabelsRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.GfdLabelsResponse, int]:
    """What ``pciname gfd-labels NVML_NAME -o json`` answers (0 for count or replicas: 1)."""
    check(request, GFD_RULES)
    asked = request_from("GfdLabels", request, count=request.count or 1, replicas=request.replicas or 1).validated()
    return to_message(pb.GfdLabelsResponse, answer("GfdLabels", asked)), 0


__all__ = ["diff", "gfd_labels", "reverse"]
