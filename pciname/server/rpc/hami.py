"""The RPC over HAMi: ``ImageCheck`` (the servicer,
:mod:`pciname.server.service`, calls it). It checks the message's limits,
builds :class:`~pciname.capabilities.image_check.ImageCheckRequest` from it,
answers it and sends the verdict ``pciname image-check -o json`` prints for
the same image. The tarball's size is bounded by the server's
``--max-recv-message-bytes`` (gRPC refuses a larger message before this
runs); an image pciname will not read is INVALID_ARGUMENT with its one line."""

from __future__ import annotations

from typing import TYPE_CHECKING

import grpc

from pciname.capabilities.image_check import ImageCheckRequest
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.data import DataSet
from pciname.server.rpc.mapping import to_message
from pciname.server.rpc.shared import answer, check, declared, needs, request_from

if TYPE_CHECKING:
    from pciname.server.service import PciNameService

IMAGE_RULES = (needs("tarball", "tarball"), declared(ImageCheckRequest, "hami"))


def image_check(
    request: pb.ImageCheckRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.ImageCheckResponse, int]:
    """The verdict for the image the request carries, under its HAMi release."""
    check(request, IMAGE_RULES)
    asked = request_from("ImageCheck", request, {"tarball": "image"}).validated()
    result = answer("ImageCheck", asked)
    return to_message(pb.ImageCheckResponse, result.as_dict()), 1


__all__ = ["image_check"]
