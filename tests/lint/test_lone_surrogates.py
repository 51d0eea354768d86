"""Lone UTF-16 surrogates (issue 22, findings 5, 8, 9): a ``"\\uD800"`` YAML
escape is valid YAML to PyYAML, which reads it as a string no encoder takes;
kubectl's and Helm's parser (go-yaml) refuse it, and so does pciname, in one
line, on every surface. A ``\\ud800`` JSON escape (Go's encoding/json reads
it as U+FFFD) becomes U+FFFD, in an API answer or a GpuOptions request.
Nothing that leaves the program is invalid UTF-8, and nothing is a
traceback or ``INTERNAL``."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import grpc
import pytest

from pciname.kubevirt.shapes import decode_json
from pciname.lint.linter import Linter
from pciname.server._proto import pciname_pb2 as pb
from tests.conftest import REPO, ServerSpec
from tests.fake_kube import FakeKube, kubevirt, node

CR = (
    "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt, namespace: kubevirt}\n"
    "spec:\n  configuration:\n    permittedHostDevices:\n      pciHostDevices:\n"
    '      - {pciVendorSelector: "10DE:2236", resourceName: "nvidia.com/GA102GL_\\uD800", externalResourceProvider: true}\n'
)
PERMITTED = {
    "pciHostDevices": [
        {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/GA102GL_A10", "externalResourceProvider": True}
    ]
}
REFUSED = (
    "8:56: YAML syntax error: found the escape of a lone UTF-16 surrogate (\\ud800), which is no character: "
    "kubectl's and Helm's YAML parser refuse it"
)


def _cli(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[bytes]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-m", "pciname", *args],
        capture_output=True,
        input=stdin.encode() if stdin is not None else None,
        timeout=120,
        env=env,
    )


def _one_line(data: bytes) -> str:
    text = data.decode("utf-8")  # strict: valid UTF-8 or the test fails
    assert text.count("\n") == 1 and "Traceback" not in text, text
    return text


def test_the_cr_is_what_pyyaml_reads_as_a_lone_surrogate():
    import yaml

    name = yaml.safe_load(CR)["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"][0]["resourceName"]
    with pytest.raises(UnicodeEncodeError):
        name.encode("utf-8")


@pytest.mark.parametrize(
    "args",
    [
        ["lint"],
        ["lint", "-o", "json"],
        ["admission-policy", "--from-cr"],
        ["admission-policy", "-o", "json", "--from-cr"],
    ],
)
def test_cli_refuses_it_in_one_line(tmp_path, args):
    cr = tmp_path / "cr.yaml"
    cr.write_text(CR)
    done = _cli(*args, str(cr))
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.endswith(f"{cr}:{REFUSED}\n"), line
    assert done.stdout.decode("utf-8") in ("", "[]\n")


def test_a_surrogate_pair_escape_is_refused_too():
    """go-yaml checks each \\u escape alone, so a pair is refused as well (JSON would join it)."""
    linter = Linter("latest")
    from pciname.errors import LintInputError

    with pytest.raises(LintInputError, match="lone UTF-16 surrogate"):
        linter.add_text('a: "\\uD83D\\uDE00"\n', "pair.yaml")
    assert linter.add_text('a: "\\U0001F600"\n', "astral.yaml") == 1


def test_json_escapes_are_read_as_go_reads_them():
    assert decode_json('{"a": "x\\ud800y", "b": "\\ud83d\\ude00", "\\udfff": 1}', "answer") == {
        "a": "x\ufffdy",
        "b": "\U0001f600",
        "\ufffd": 1,
    }


@pytest.fixture(scope="module")
def server_spec(session_cache):
    return ServerSpec(cache=session_cache)


def _status(call) -> tuple[grpc.StatusCode, str, dict[str, str]]:
    try:
        call()
    except grpc.RpcError as error:
        return error.code(), error.details(), dict(error.trailing_metadata() or ())
    return grpc.StatusCode.OK, "", {}


def test_rpcs_refuse_the_yaml_escape_as_bad_input(stub):
    for call, where, reason in (
        (
            lambda: stub.Lint(pb.LintRequest(files=[pb.LintFile(name="cr.yaml", text=CR)]), timeout=30),
            "cr.yaml:",
            "lint-input",
        ),
        (
            lambda: stub.AdmissionPolicy(pb.AdmissionPolicyRequest(kubevirt_cr=CR), timeout=30),
            "kubevirt_cr:",
            "lint-input",
        ),
        (lambda: stub.GpuOptions(pb.GpuOptionsRequest(kubevirt=CR), timeout=30), "kubevirt:", "objects-input"),
    ):
        code, details, metadata = _status(call)
        assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, details)
        assert "lone UTF-16 surrogate (\\ud800)" in details and details.startswith(where), details
        assert metadata.get("pciname-error") == reason


def test_gpu_options_reads_a_json_escape_as_u_fffd(stub):
    cr = kubevirt(PERMITTED, name="kube\ud800virt")
    nodes = {"kind": "NodeList", "items": [node("gpu-\ud800", {"nvidia.com/GA102GL_A10": "2"})]}
    answer = stub.GpuOptions(
        pb.GpuOptionsRequest(kubevirt=json.dumps(cr), nodes=json.dumps(nodes), profile="latest"), timeout=30
    )
    assert answer.kubevirt.endswith("kube\ufffdvirt")
    assert answer.SerializeToString()


@pytest.fixture
def fake():
    cr = kubevirt(PERMITTED, name="kube\ud800virt")
    server = FakeKube(nodes=[node("gpu-\ud800", {"nvidia.com/GA102GL_A10": "2"})], kubevirts=[cr]).start()
    yield server
    server.stop()


@pytest.mark.parametrize("command", ["audit", "gpu-options"])
@pytest.mark.parametrize("output", [[], ["-o", "json"]])
def test_cluster_commands_read_an_api_escape_as_u_fffd(fake, tmp_path, command, output):
    """Finding 9: the answer holds \\ud800 escapes (json.dumps writes them so);
    the commands print U+FFFD where Go's decoder would, and exit as usual."""
    done = _cli(command, *output, "--kubeconfig", str(fake.kubeconfig(tmp_path)))
    out, err = done.stdout.decode("utf-8"), done.stderr.decode("utf-8")
    assert "Traceback" not in err and done.returncode in (0, 1), (done.returncode, err)
    assert "\ufffd" in out, out
    if output:
        json.loads(out)
