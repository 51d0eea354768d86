"""Generated protobuf and gRPC stubs of ``proto/pciname/v1/pciname.proto``.

Do not edit: regenerate with ``python -m tools.protogen``.
"""

from . import pciname_pb2, pciname_pb2_grpc

__all__ = ["pciname_pb2", "pciname_pb2_grpc"]
