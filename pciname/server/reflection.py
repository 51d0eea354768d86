"""gRPC server reflection, both versions clients ask: ``grpc.reflection.v1``
(current grpcurl, grpcui, Postman, @grpc/grpc-js ask it first) and
``grpc.reflection.v1alpha`` (older clients, and grpcio-reflection's own
``ProtoReflectionDescriptorDatabase``).

grpcio-reflection (1.85, the newest release) serves v1alpha only
(grpc/grpc#38576). The two protocols are the same file under two package
names, message for message and field number for field number, so v1 is the
library's own servicer, registered a second time under the v1 service name:
its requests are parsed and its answers written by the v1alpha message
types, whose bytes are the v1 messages' bytes. The v1 file itself is the
library's v1alpha descriptor renamed (package ``grpc.reflection.v1``, file
``grpc/reflection/v1/reflection.proto``), added to the default descriptor
pool, so that v1 clients can describe the v1 service too.

Both versions are answered by one servicer, the library's with one fix:
asked for the file containing a method (``pciname.v1.PciName.Resolve``,
what ``grpcurl describe`` sends for a method), the library answers
NOT_FOUND, because protobuf's own pool finds services and messages by name
but not their methods (grpc/grpc#34743, open on grpcio-reflection 1.85). A
method's file is its service's: ``SERVICE.METHOD`` names a method when the
pool has ``SERVICE`` and the service has ``METHOD``, and is answered with
that file.
"""

from __future__ import annotations

from collections.abc import Iterable

import grpc
from google.protobuf import descriptor_pb2, descriptor_pool
from grpc_reflection.v1alpha import reflection, reflection_pb2 as alpha_pb2, reflection_pb2_grpc

V1ALPHA_SERVICE_NAME: str = reflection.SERVICE_NAME
V1_PACKAGE = "grpc.reflection.v1"
V1_FILE = "grpc/reflection/v1/reflection.proto"
V1_SERVICE_NAME = f"{V1_PACKAGE}.ServerReflection"
SERVICE_NAMES = (V1_SERVICE_NAME, V1ALPHA_SERVICE_NAME)
_ALPHA_PACKAGE = alpha_pb2.DESCRIPTOR.package
# The options of upstream's grpc/reflection/v1/reflection.proto.
_V1_OPTIONS = {
    "go_package": "google.golang.org/grpc/reflection/grpc_reflection_v1",
    "java_multiple_files": True,
    "java_package": "io.grpc.reflection.v1",
    "java_outer_classname": "ServerReflectionProto",
}


def _renamed(type_name: str) -> str:
    prefix = f".{_ALPHA_PACKAGE}."
    return f".{V1_PACKAGE}." + type_name[len(prefix) :] if type_name.startswith(prefix) else type_name


def v1_file_proto() -> descriptor_pb2.FileDescriptorProto:
    """The v1 reflection file: the library's v1alpha file under v1's names."""
    proto = descriptor_pb2.FileDescriptorProto()
    alpha_pb2.DESCRIPTOR.CopyToProto(proto)
    proto.name, proto.package = V1_FILE, V1_PACKAGE
    for message in proto.message_type:
        for field in message.field:
            if field.HasField("type_name"):
                field.type_name = _renamed(field.type_name)
    for service in proto.service:
        for method in service.method:
            method.input_type, method.output_type = _renamed(method.input_type), _renamed(method.output_type)
    proto.options.Clear()
    for option, value in _V1_OPTIONS.items():
        setattr(proto.options, option, value)
    return proto


def _add_v1_file() -> None:
    """The v1 file in the default pool (once: a pool refuses a second,
    different file of the same name, and accepts the same one again)."""
    pool = descriptor_pool.Default()
    try:
        pool.FindFileByName(V1_FILE)
    except KeyError:
        pool.Add(v1_file_proto())


class _ReflectionServicer(reflection.ReflectionServicer):  # type: ignore[misc]
    """grpcio-reflection's servicer, which also finds the file of a method."""

    def _file_containing_symbol(
        self, request: alpha_pb2.ServerReflectionRequest, fully_qualified_name: str
    ) -> alpha_pb2.ServerReflectionResponse:
        answer = super()._file_containing_symbol(request, fully_qualified_name)
        if not answer.HasField("error_response"):
            return answer
        service, _, method = fully_qualified_name.rpartition(".")
        try:
            found = self._pool.FindServiceByName(service)
        except KeyError:
            return answer
        if method not in found.methods_by_name:
            return answer
        return self._file_by_filename(request, found.file.name)


def enable_server_reflection(service_names: Iterable[str], server: grpc.Server) -> None:
    """Serve reflection v1 and v1alpha on ``server`` for ``service_names``
    (and the two reflection services)."""
    _add_v1_file()
    names = tuple(dict.fromkeys([*service_names, *SERVICE_NAMES]))
    servicer = _ReflectionServicer(names)
    reflection_pb2_grpc.add_ServerReflectionServicer_to_server(servicer, server)
    handler = grpc.stream_stream_rpc_method_handler(
        servicer.ServerReflectionInfo,
        request_deserializer=alpha_pb2.ServerReflectionRequest.FromString,
        response_serializer=alpha_pb2.ServerReflectionResponse.SerializeToString,
    )
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler(V1_SERVICE_NAME, {"ServerReflectionInfo": handler}),)
    )


__all__ = ["SERVICE_NAMES", "V1ALPHA_SERVICE_NAME", "V1_SERVICE_NAME", "enable_server_reflection"]
