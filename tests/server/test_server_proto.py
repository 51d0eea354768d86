"""The committed stubs are what grpcio-tools makes of proto/ today, they
import as a normal package, and the CLI's start-up does not import grpc."""

from __future__ import annotations

import os
import re
import subprocess
import sys

from tests.conftest import REPO


def test_stubs_are_not_stale(tmp_path):
    from google.protobuf import descriptor_pb2

    from pciname.server._proto import pciname_pb2
    from tools import protogen

    protogen.generate(tmp_path)
    committed = protogen.stubs_dir()

    # The proto's content, whatever grpcio-tools version generated the stubs.
    fresh_source = (tmp_path / "pciname_pb2.py").read_text()
    fresh_blob = re.search(r"AddSerializedFile\((b'.*?')\)\n", fresh_source, re.S).group(1)
    fresh = descriptor_pb2.FileDescriptorProto.FromString(eval(fresh_blob))
    ours = descriptor_pb2.FileDescriptorProto()
    pciname_pb2.DESCRIPTOR.CopyToProto(ours)
    assert ours == fresh, "pciname/server/_proto is stale: run python -m tools.protogen"

    # Byte for byte when the same grpcio-tools version made them (a fresh
    # install may resolve a newer one: then the descriptor above is the check).
    version = re.search(r"GRPC_GENERATED_VERSION = '([^']+)'", (committed / "pciname_pb2_grpc.py").read_text()).group(1)
    same_tools = version == _tools_version()
    for name in protogen.STUB_NAMES if same_tools else ():
        assert (committed / name).read_bytes() == (tmp_path / name).read_bytes(), (
            f"{name} is stale: run python -m tools.protogen"
        )


def _tools_version() -> str:
    from importlib.metadata import version

    return version("grpcio-tools")


def test_stale_check_notices_a_change(tmp_path):
    from tools import protogen

    proto = tmp_path / "proto"
    (proto / "pciname" / "v1").mkdir(parents=True)
    text = (REPO / "proto" / protogen.PROTO_FILE).read_text()
    (proto / protogen.PROTO_FILE).write_text(
        text.replace("bool advertised = 10;", "bool advertised = 10;\n  string extra = 99;")
    )
    assert set(protogen.stale_files(proto_root=proto)) >= {"pciname_pb2.py", "pciname_pb2.pyi"}


def test_stubs_import_as_a_package_from_anywhere(tmp_path):
    code = (
        "import sys; from pciname.server._proto import pciname_pb2, pciname_pb2_grpc; "
        "assert pciname_pb2_grpc.PciNameStub and pciname_pb2_grpc.PciNameServicer; "
        "assert pciname_pb2.DESCRIPTOR.name == 'pciname/v1/pciname.proto'; "
        "assert pciname_pb2.DESCRIPTOR.package == 'pciname.v1'; "
        "assert 'pciname.v1' not in sys.modules; "
        "print(sorted(pciname_pb2.DESCRIPTOR.services_by_name['PciName'].methods_by_name))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path, env=env, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert "ListDevices" in result.stdout and "PermittedHostDevices" in result.stdout
    grpc_stub = (REPO / "pciname" / "server" / "_proto" / "pciname_pb2_grpc.py").read_text()
    assert "from pciname.v1 import" not in grpc_stub and "from . import pciname_pb2" in grpc_stub


def test_cli_start_up_does_not_import_grpc():
    code = (
        "import sys\n"
        "from pciname.cli import build_parser\n"
        "build_parser()\n"  # every command registered, serve included
        "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('grpc', 'google', 'prometheus_client', "
        "'kubernetes', 'pciname') and (m.startswith(('grpc', 'google', 'prometheus', 'kubernetes')) "
        "or m.startswith(('pciname.server', 'pciname.client'))))\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    # serve's flags are ServeConfig's fields: pciname.server.config (no gRPC in it) loads, nothing else of the server
    assert result.stdout.strip() == "['pciname.server', 'pciname.server.config']"
