"""Server reflection through a client of each version, on a real server on
loopback: grpcio-reflection's ProtoReflectionDescriptorDatabase (it speaks
``grpc.reflection.v1alpha``), and a raw ``grpc.reflection.v1`` client whose
messages are defined here, from the v1 protocol's field numbers (as grpcurl
or @grpc/grpc-js would have them), not from pciname's or the library's."""

from __future__ import annotations

import grpc
import pytest
from google.protobuf import descriptor_pb2, descriptor_pool, message_factory
from google.protobuf.descriptor_pool import DescriptorPool
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase

SERVICES = {
    "pciname.v1.PciName",
    "grpc.health.v1.Health",
    "grpc.reflection.v1.ServerReflection",
    "grpc.reflection.v1alpha.ServerReflection",
}
V1_METHOD = "/grpc.reflection.v1.ServerReflection/ServerReflectionInfo"
_F = descriptor_pb2.FieldDescriptorProto
# The v1 messages a client needs: (message, [(field, number, type, label, message type)]).
V1_MESSAGES = {
    "ServerReflectionRequest": [
        ("host", 1, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
        ("file_by_filename", 3, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
        ("file_containing_symbol", 4, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
        ("list_services", 7, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
    ],
    "ServerReflectionResponse": [
        ("valid_host", 1, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
        ("original_request", 2, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, "ServerReflectionRequest"),
        ("file_descriptor_response", 4, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, "FileDescriptorResponse"),
        ("list_services_response", 6, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, "ListServiceResponse"),
        ("error_response", 7, _F.TYPE_MESSAGE, _F.LABEL_OPTIONAL, "ErrorResponse"),
    ],
    "FileDescriptorResponse": [("file_descriptor_proto", 1, _F.TYPE_BYTES, _F.LABEL_REPEATED, None)],
    "ListServiceResponse": [("service", 1, _F.TYPE_MESSAGE, _F.LABEL_REPEATED, "ServiceResponse")],
    "ServiceResponse": [("name", 1, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None)],
    "ErrorResponse": [
        ("error_code", 1, _F.TYPE_INT32, _F.LABEL_OPTIONAL, None),
        ("error_message", 2, _F.TYPE_STRING, _F.LABEL_OPTIONAL, None),
    ],
}


def v1_types() -> tuple[type, type]:
    """The v1 request and response message classes, in a pool of their own."""
    proto = descriptor_pb2.FileDescriptorProto(
        name="test_v1_client.proto", package="grpc.reflection.v1", syntax="proto3"
    )
    for name, fields in V1_MESSAGES.items():
        message = proto.message_type.add(name=name)
        for field, number, kind, label, type_name in fields:
            entry = message.field.add(name=field, number=number, type=kind, label=label)
            if type_name:
                entry.type_name = f".grpc.reflection.v1.{type_name}"
    pool = descriptor_pool.DescriptorPool()
    file = pool.Add(proto)
    classes = [message_factory.GetMessageClass(file.message_types_by_name[n]) for n in V1_MESSAGES]
    return classes[0], classes[1]


V1Request, V1Response = v1_types()


def ask_v1(channel: grpc.Channel, *requests: object) -> list:
    """The v1 answers to ``requests``, sent on one stream."""
    call = channel.stream_stream(
        V1_METHOD, request_serializer=lambda m: m.SerializeToString(), response_deserializer=V1Response.FromString
    )
    return list(call(iter(requests), timeout=10))


def files_of(response) -> dict[str, descriptor_pb2.FileDescriptorProto]:
    found = {}
    for blob in response.file_descriptor_response.file_descriptor_proto:
        proto = descriptor_pb2.FileDescriptorProto.FromString(blob)
        found[proto.name] = proto
    return found


def test_v1alpha_client_lists_and_describes(channel):
    database = ProtoReflectionDescriptorDatabase(channel)
    assert set(database.get_services()) == SERVICES
    service = DescriptorPool(database).FindServiceByName("pciname.v1.PciName")
    assert service.file.name == "pciname/v1/pciname.proto"
    assert service.methods_by_name["Resolve"].output_type.full_name == "pciname.v1.Resolution"


def test_v1_client_lists_the_services(channel):
    (answer,) = ask_v1(channel, V1Request(list_services="*"))
    assert {s.name for s in answer.list_services_response.service} == SERVICES
    assert answer.original_request.list_services == "*"


def test_v1_client_describes_the_name_service_as_v1alpha_does(channel):
    (answer,) = ask_v1(channel, V1Request(file_containing_symbol="pciname.v1.PciName"))
    files = files_of(answer)
    assert "pciname/v1/pciname.proto" in files
    pool = descriptor_pool.DescriptorPool()
    for name in sorted(files, key=lambda n: n != "google/protobuf/struct.proto"):  # dependencies first
        if not name.startswith("pciname/"):
            pool.Add(files[name])
    pool.Add(files["pciname/v1/pciname.proto"])
    methods = pool.FindServiceByName("pciname.v1.PciName").methods_by_name
    assert methods["ListDevices"].server_streaming and not methods["Resolve"].server_streaming
    alpha = DescriptorPool(ProtoReflectionDescriptorDatabase(channel)).FindServiceByName("pciname.v1.PciName")
    assert sorted(methods) == sorted(alpha.methods_by_name)


def test_v1_client_describes_v1_itself_with_the_protocols_numbers(channel):
    (answer,) = ask_v1(channel, V1Request(file_containing_symbol="grpc.reflection.v1.ServerReflection"))
    (served,) = files_of(answer).values()
    assert (served.name, served.package) == ("grpc/reflection/v1/reflection.proto", "grpc.reflection.v1")
    messages = {m.name: {f.name: (f.number, f.type_name) for f in m.field} for m in served.message_type}
    for name, fields in V1_MESSAGES.items():
        for field, number, _, _, type_name in fields:
            assert messages[name][field] == (number, f".grpc.reflection.v1.{type_name}" if type_name else "")
    (method,) = served.service[0].method
    assert (method.input_type, method.output_type, method.client_streaming, method.server_streaming) == (
        ".grpc.reflection.v1.ServerReflectionRequest",
        ".grpc.reflection.v1.ServerReflectionResponse",
        True,
        True,
    )


@pytest.mark.parametrize("symbol", ["pciname.v1.Nope", "grpc.reflection.v2.ServerReflection"])
def test_v1_client_is_told_an_unknown_symbol_is_not_found(channel, symbol):
    answers = ask_v1(channel, V1Request(file_containing_symbol=symbol), V1Request(list_services="*"))
    assert answers[0].error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
    assert answers[0].original_request.file_containing_symbol == symbol
    assert answers[1].list_services_response.service  # the stream goes on


def test_v1_client_gets_files_by_name(channel):
    (answer,) = ask_v1(channel, V1Request(file_by_filename="grpc/reflection/v1/reflection.proto"))
    assert list(files_of(answer)) == ["grpc/reflection/v1/reflection.proto"]


# -- a method by name (grpcurl describe pciname.v1.PciName.Resolve): grpc/grpc#34743 --------

METHODS = {
    "pciname.v1.PciName.Resolve": "pciname/v1/pciname.proto",
    "pciname.v1.PciName.ListDevices": "pciname/v1/pciname.proto",
    "grpc.health.v1.Health.Check": "grpc_health/v1/health.proto",
    "grpc.reflection.v1.ServerReflection.ServerReflectionInfo": "grpc/reflection/v1/reflection.proto",
}


@pytest.mark.parametrize(("method", "file"), METHODS.items())
def test_v1_client_finds_the_file_of_a_method(channel, method, file):
    (answer,) = ask_v1(channel, V1Request(file_containing_symbol=method))
    assert not answer.HasField("error_response"), answer.error_response
    assert file in files_of(answer)
    assert answer.original_request.file_containing_symbol == method


@pytest.mark.parametrize(("method", "file"), METHODS.items())
def test_v1alpha_client_finds_the_file_of_a_method(channel, method, file):
    database = ProtoReflectionDescriptorDatabase(channel)
    assert database.FindFileContainingSymbol(method).name == file
    service, _, name = method.rpartition(".")
    assert name in DescriptorPool(database).FindServiceByName(service).methods_by_name


@pytest.mark.parametrize(
    "symbol",
    [
        "pciname.v1.PciName.Nope",  # a service, no such method
        "pciname.v1.Nope.Resolve",
        "Resolve",
        ".pciname.v1.PciName.Resolve",
    ],
)
def test_what_is_no_method_stays_not_found_in_both_versions(channel, symbol):
    answers = ask_v1(channel, V1Request(file_containing_symbol=symbol), V1Request(list_services="*"))
    assert answers[0].error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0]
    assert answers[1].list_services_response.service
    with pytest.raises(KeyError):
        ProtoReflectionDescriptorDatabase(channel).FindFileContainingSymbol(symbol)
