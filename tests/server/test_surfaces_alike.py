"""The library, the CLI and gRPC give one answer (issue 16): one rule for a
reverse look-up's resource name, surrounding blanks removed
(``pciname.naming.checks.reverse_query``, since no advertised name has any),
and Lint reading YAML as consumers do."""

from __future__ import annotations

import json

import grpc
import pytest

import pciname
from pciname.cli import main
from pciname.naming.checks import reverse_query
from pciname.server._proto import pciname_pb2 as pb
from tests.server.conftest import custom_spec


@pytest.fixture(scope="module")
def server_spec(custom_setup):
    """The custom server of tests/server/conftest.py (``server_env`` is its
    environment in each test)."""
    return custom_spec(custom_setup)


SPELLINGS = [
    "nvidia.com/GA102GL_A10",
    " nvidia.com/GA102GL_A10",
    "nvidia.com/GA102GL_A10\n",
    "\tGA102GL_A10 ",
    "GA102GL_A10",
]


def test_reverse_query():
    assert {reverse_query(s) for s in SPELLINGS} == {"nvidia.com/GA102GL_A10"}
    assert reverse_query(" \t\n") == ""
    assert reverse_query("nvidia.com/GRID_T4-1Q ") == "nvidia.com/GRID_T4-1Q"


def test_no_advertised_name_has_surrounding_blanks():
    """What makes stripping safe: it can never hide a real name (every
    installed profile, every device)."""
    for info in pciname.profiles():
        if info.installed:
            for r in pciname.devices(info.name):
                assert r.resource_name is None or r.resource_name == r.resource_name.strip(), (info.name, r.device)


@pytest.mark.parametrize("spelling", SPELLINGS)
def test_library_cli_and_grpc_answer_alike(spelling, stub, server_env, capsys):
    assert pciname.reverse(spelling, "latest") == ["10de:2236"]
    assert main(["reverse", spelling, "-p", "latest", "-o", "json"]) == 0
    assert json.loads(capsys.readouterr().out) == {"resource_name": "nvidia.com/GA102GL_A10", "devices": ["10de:2236"]}
    response = stub.Reverse(pb.ReverseRequest(resource_name=spelling, profile="latest"), timeout=10)
    assert (response.resource_name, list(response.devices)) == ("nvidia.com/GA102GL_A10", ["10de:2236"])


def test_a_blank_name_is_refused_alike(stub, server_env, capsys):
    assert pciname.reverse("  ", "latest") == []
    assert main(["reverse", "  "]) == 2
    assert "no resource name given" in capsys.readouterr().err
    with pytest.raises(grpc.RpcError) as raised:
        stub.Reverse(pb.ReverseRequest(resource_name=" \t", profile="latest"), timeout=10)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT


def test_grpc_lint_sees_what_the_library_sees(stub, server_env):
    """Issue 16 item 1 over gRPC: the Lint RPC reports the duplicate key and
    checks its last value, as the library and the CLI do."""
    from pciname.lint.linter import lint_text

    text = (
        'pciHostDevices:\n- pciVendorSelector: "10DE:2236"\n  resourceName: nvidia.com/GA102GL_A10\n'
        "  resourceName: nvidia.com/GA102GL_A10_TYPO\n  externalResourceProvider: true\n"
    )
    response = stub.Lint(pb.LintRequest(files=[pb.LintFile(name="d.yaml", text=text)], profile="latest"), timeout=20)
    got = [(f.line, f.code, f.message) for f in response.findings]
    assert got == [(f.line, f.code, f.message) for f in lint_text(text, "d.yaml", "latest")]
    assert [code for _, code, _ in got] == ["duplicate-key", "wrong-resource-name"]
