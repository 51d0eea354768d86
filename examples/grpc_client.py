"""A pciname gRPC client that needs only grpcio and grpcio-tools.

    python examples/grpc_client.py HOST:PORT DEVICE...

It makes its stubs from proto/pciname/v1/pciname.proto with grpcio-tools'
protoc (into a temporary directory, as docs/grpc.md shows), asks the server
to Resolve the first device and ResolveBatch all of them (plaintext: a
server started with ``pciname serve --insecure``), and prints one line per
device: the device and its resource name (empty when it is not advertised).
"""

from __future__ import annotations

import importlib
import sys
import tempfile
from pathlib import Path

PROTO_ROOT = Path(__file__).resolve().parents[1] / "proto"


def stubs(out: Path):
    """pciname_pb2 and pciname_pb2_grpc, made by protoc into ``out``."""
    import grpc_tools
    from grpc_tools import protoc

    include = Path(grpc_tools.__file__).parent / "_proto"  # google/protobuf/*.proto
    argv = [
        "protoc",
        f"-I{PROTO_ROOT}",
        f"-I{include}",
        f"--python_out={out}",
        f"--grpc_python_out={out}",
        "pciname/v1/pciname.proto",
    ]
    if protoc.main(argv) != 0:
        raise SystemExit("grpc_client: protoc failed on proto/pciname/v1/pciname.proto")
    sys.path.insert(0, str(out))
    return importlib.import_module("pciname.v1.pciname_pb2"), importlib.import_module("pciname.v1.pciname_pb2_grpc")


def main(argv: list[str]) -> int:
    if len(argv) < 2:
        print("usage: grpc_client.py HOST:PORT DEVICE...", file=sys.stderr)
        return 2
    import grpc

    target, devices = argv[0], argv[1:]
    with tempfile.TemporaryDirectory() as tmp:
        pb2, pb2_grpc = stubs(Path(tmp))
        with grpc.insecure_channel(target) as channel:
            stub = pb2_grpc.PciNameStub(channel)
            try:
                one = stub.Resolve(pb2.ResolveRequest(device=devices[0]), timeout=30)
                batch = stub.ResolveBatch(pb2.ResolveBatchRequest(devices=devices), timeout=30)
            except grpc.RpcError as e:
                print(f"grpc_client: {e.code().name}: {e.details()}", file=sys.stderr)
                return 1
    print(f"Resolve: {one.device} {one.resource_name}")
    for result in batch.results:
        print(f"ResolveBatch: {result.device} {result.resource_name}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
