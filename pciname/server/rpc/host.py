"""The ``Doctor`` RPC: the host doctor (:mod:`pciname.capabilities.doctor`, as
``pciname scan --variant VARIANT -o json`` answers) on the server's own
node, read under the root ``serve --host-root DIR`` names (the DaemonSet
mounts the host read-only); a server without one reads no node."""

from __future__ import annotations

from typing import TYPE_CHECKING

import grpc

from pciname.capabilities.doctor import DoctorRequest
from pciname.errors import PcinameError
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.data import DataSet
from pciname.server.rpc.mapping import to_message
from pciname.server.rpc.shared import PRECONDITION, answer, check, declared, request_from
from pciname.server.rpc.wire import HOST_NOT_READ, failure

if TYPE_CHECKING:
    from pciname.server.service import PciNameService

RULES = (declared(DoctorRequest, "variant"),)
NO_HOST = "this server reads no node (it was started without --host-root DIR)"


def doctor(
    request: pb.DoctorRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.DoctorResponse, int]:
    """The checkup of the server's node for the variant asked (empty: every variant)."""
    check(request, RULES)
    asked = request_from("Doctor", request, root=service.host_root or "/").validated()
    if service.host_root is None:
        raise failure(PRECONDITION, NO_HOST, HOST_NOT_READ)
    try:
        checkup = answer("Doctor", asked)
    except PcinameError as error:  # the root holds no sysfs: the server's setup, not the request
        raise failure(PRECONDITION, f"--host-root: {error}", HOST_NOT_READ) from None
    findings = [f.to_dict() for f in checkup.findings]
    return to_message(pb.DoctorResponse, checkup, servable=list(checkup.servable), findings=findings), 0


__all__ = ["doctor"]
