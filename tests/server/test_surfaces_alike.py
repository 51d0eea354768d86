"""The library, the CLI and gRPC give one answer (issue 16): one rule for a
reverse look-up's resource name, surrounding blanks removed
(``pciname.naming.checks.reverse_query``, since no advertised name has any),
and Lint reading YAML as consumers do; and (issue 23) Lint, AdmissionPolicy
and VgpuTypes answer what the commands print because both surfaces answer
one request of :mod:`pciname.capabilities`."""

from __future__ import annotations

import json

import grpc
import pytest

import pciname
from pciname.cli import main
from pciname.naming.checks import reverse_query
from pciname.server._proto import pciname_pb2 as pb
from tests.kube_documents import ONE_WRONG_NAME_CR as KUBEVIRT_CR
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


# -- one request behind both surfaces (issue 23, item 1) --------------------------------------------

NODE_GROUPS = """nodeGroups:
  gpu:
    minReplicas: 0
    maxReplicas: 2
    instanceType: u1.large
    ephemeralStorage: 20Gi
    gpus:
    - name: nvidia.com/GA102GL_A10
"""


def test_lint_cli_grpc_and_the_request_answer_alike(stub, server_env, tmp_path, capsys):
    from pciname.capabilities.lint import LintRequest, answer

    files = {tmp_path / "cr.yaml": KUBEVIRT_CR, tmp_path / "pool.yaml": NODE_GROUPS}
    for path, text in files.items():
        path.write_text(text)
    assert main(["lint", *map(str, files), "--cozystack", "v1.4.0", "-p", "latest"]) == 1
    printed = capsys.readouterr()
    response = stub.Lint(
        pb.LintRequest(
            files=[pb.LintFile(name=str(path), text=text) for path, text in files.items()],
            cozystack="v1.4.0",
            profile="latest",
        ),
        timeout=30,
    )
    request = LintRequest(tuple((str(p), t) for p, t in files.items()), "latest", cozystack="v1.4.0").validated()
    result = answer(request, request.chosen_profile)
    assert response.text == printed.out == "".join(f.format() + "\n" for f in result.findings)
    assert {"wrong-resource-name", "field-not-in-release"} <= {f.code for f in response.findings}
    assert list(response.notes) == result.notes and response.documents == result.documents == 2


def test_admission_policy_cli_grpc_and_the_request_answer_alike(stub, server_env, tmp_path, capsys):
    from pciname.capabilities.admission import AdmissionPolicyRequest, answer

    cr = tmp_path / "cr.yaml"
    cr.write_text(KUBEVIRT_CR)
    assert main(["admission-policy", "--from-cr", str(cr), "--action", "Deny"]) == 1
    printed = capsys.readouterr()
    response = stub.AdmissionPolicy(pb.AdmissionPolicyRequest(kubevirt_cr=KUBEVIRT_CR, actions=["Deny"]), timeout=60)
    result = answer(
        AdmissionPolicyRequest(kubevirt_cr=True, actions=("Deny",)).validated(),
        "latest",
        cr=(KUBEVIRT_CR, "kubevirt_cr"),
    )
    assert response.yaml == printed.out == result.policy.to_yaml()
    assert list(response.findings) == list(result.findings)
    assert printed.err == "".join(
        f"pciname: left out: {f.replace('kubevirt_cr', str(cr), 1)}\n" for f in result.findings
    )


@pytest.mark.parametrize("device", ["10de:2236", "10DE:2684"])
def test_vgpu_types_cli_grpc_and_the_request_answer_alike(device, stub, server_env, capsys):
    from pciname.capabilities.vgpu_types import VgpuTypesRequest, answer
    from pciname.server.rpc.wire import vgpu_types_response

    code = main(["vgpu-types", device, "-o", "json"])
    printed = capsys.readouterr()
    response = stub.VgpuTypes(pb.VgpuTypesRequest(device=device), timeout=30)
    result = answer(VgpuTypesRequest(device).validated(), "latest")
    assert response.covered == result.covered and response.device == result.device
    if result.types is None:
        assert (code, printed.out, printed.err) == (1, "", f"pciname: {result.message}\n")
        assert response.message == result.message
    else:
        assert code == 0 and json.loads(printed.out) == result.types
        assert response == vgpu_types_response(result.types)
