"""The AdmissionPolicy RPC on a real loopback server: the same text as
``pciname admission-policy``, and bad input as one-line INVALID_ARGUMENT."""

from __future__ import annotations

import grpc
import pytest
import yaml

from pciname.server._proto import pciname_pb2 as pb
from tests.cli_run import pciname as _cli
from tests.conftest import ServerSpec

CR = yaml.safe_dump(
    {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {
            "configuration": {
                "permittedHostDevices": {
                    "pciHostDevices": [
                        {
                            "pciVendorSelector": "10DE:2236",
                            "resourceName": "nvidia.com/GA102GL_A10",
                            "externalResourceProvider": True,
                        },
                        {
                            "pciVendorSelector": "10DE:2237",
                            "resourceName": "nvidia.com/A10G",
                            "externalResourceProvider": True,
                        },
                    ]
                }
            }
        },
    },
    sort_keys=False,
)


@pytest.fixture(scope="module")
def server_spec():
    """conftest's server, its client given a minute a call."""
    return ServerSpec(client_timeout=60)


def test_grpc_gives_what_the_cli_prints(client):
    answer = client.admission_policy(["10de:2236"], ["NVIDIA A10-24Q"], actions=["Deny"])
    assert answer.allowed == ["nvidia.com/GA102GL_A10", "nvidia.com/NVIDIA_A10-24Q"]
    assert answer.actions == ["Deny"] and answer.profile == "kubevirt-gpu-device-plugin@v1.6.0"
    assert answer.yaml == _cli("admission-policy", "10de:2236", "--mdev", "NVIDIA A10-24Q", "--action", "Deny").stdout
    assert (
        answer.json
        == _cli("admission-policy", "10de:2236", "--mdev", "NVIDIA A10-24Q", "--action", "Deny", "-o", "json").stdout
    )
    default = client.admission_policy(["10de:2236"])
    assert default.actions == ["Warn", "Audit"]


def test_grpc_from_a_kubevirt_cr_reports_what_lint_finds(client):
    answer = client.admission_policy(kubevirt_cr=CR, profile="latest")
    assert answer.allowed == ["nvidia.com/GA102GL_A10"]
    assert len(answer.findings) == 1 and "wrong-resource-name" in answer.findings[0]
    cli = _cli("admission-policy", "--from-cr", "-", stdin=CR)
    assert cli.returncode == 1 and answer.yaml == cli.stdout


def test_grpc_leaves_out_what_will_not_work(client):
    answer = client.admission_policy(["10de:2236", "15b3:101e"])
    assert answer.allowed == ["nvidia.com/GA102GL_A10"]
    assert [s.item for s in answer.left_out] == ["15b3:101e"]


def _code(stub, request):
    try:
        stub.AdmissionPolicy(request, timeout=60)
    except grpc.RpcError as error:
        return error.code(), error.details(), dict(error.trailing_metadata() or ())
    return grpc.StatusCode.OK, "", {}


@pytest.mark.parametrize(
    "request_message, code, needle",
    [
        (pb.AdmissionPolicyRequest(), grpc.StatusCode.INVALID_ARGUMENT, "empty request"),
        (pb.AdmissionPolicyRequest(devices=["zz"]), grpc.StatusCode.INVALID_ARGUMENT, "zz"),
        (
            pb.AdmissionPolicyRequest(devices=["10de:2236"], actions=["Deny", "Warn"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "Deny and Warn",
        ),
        (
            pb.AdmissionPolicyRequest(devices=["10de:2236"], actions=["Block"]),
            grpc.StatusCode.INVALID_ARGUMENT,
            "unknown validation action",
        ),
        (
            pb.AdmissionPolicyRequest(devices=["10de:2236"], name="Bad_Name"),
            grpc.StatusCode.INVALID_ARGUMENT,
            "DNS subdomain",
        ),
        (
            pb.AdmissionPolicyRequest(devices=["10de:2236"], kubevirt_cr=CR),
            grpc.StatusCode.INVALID_ARGUMENT,
            "go without",
        ),
        (pb.AdmissionPolicyRequest(kubevirt_cr="a: [b"), grpc.StatusCode.INVALID_ARGUMENT, "YAML syntax error"),
        (pb.AdmissionPolicyRequest(kubevirt_cr="a: 1\n"), grpc.StatusCode.INVALID_ARGUMENT, "no permittedHostDevices"),
        (pb.AdmissionPolicyRequest(devices=["10de:2236"], profile="v9.9.9"), grpc.StatusCode.NOT_FOUND, "v9.9.9"),
        (pb.AdmissionPolicyRequest(devices=["10de:2236"], profile="auto"), grpc.StatusCode.INVALID_ARGUMENT, "auto"),
        (pb.AdmissionPolicyRequest(from_cluster=True), grpc.StatusCode.FAILED_PRECONDITION, "--kube"),
    ],
)
def test_grpc_bad_input_is_one_line(stub, request_message, code, needle):
    got, details, metadata = _code(stub, request_message)
    assert got == code, details
    assert needle in details and "\n" not in details and len(details) < 1100
    if "YAML" in needle:
        assert metadata.get("pciname-error") == "lint-input"


# -- from the cluster (a fake API server on loopback) ------------------------------------


def _fake_cluster():
    from tests.fake_kube import FakeKube, kubevirt

    return FakeKube(
        nodes=[],
        kubevirts=[
            kubevirt(
                {
                    "pciHostDevices": [
                        {
                            "pciVendorSelector": "10DE:2236",
                            "resourceName": "nvidia.com/GA102GL_A10",
                            "externalResourceProvider": True,
                        },
                        {
                            "pciVendorSelector": "10DE:2237",
                            "resourceName": "nvidia.com/A10G",
                            "externalResourceProvider": True,
                        },
                    ]
                }
            )
        ],
    ).start()


def test_cli_from_cluster_reads_the_kubevirt_cr_only(tmp_path):
    fake = _fake_cluster()
    try:
        out = _cli("admission-policy", "--from-cluster", "--kubeconfig", fake.kubeconfig(tmp_path), "--action", "Deny")
    finally:
        fake.stop()
    assert out.returncode == 1, out.stderr  # the A10G entry is wrong: left out, reported
    docs = list(yaml.safe_load_all(out.stdout))
    assert docs[0]["metadata"]["annotations"]["pciname.io/allowed-names"] == "1"
    assert "cluster:kubevirt" in out.stderr and "wrong-resource-name" in out.stderr
    assert {r.method for r in fake.requests} == {"GET"}
    missing = _cli("admission-policy", "--from-cluster", "--kubeconfig", str(tmp_path / "none"))
    assert missing.returncode == 2 and len(missing.stderr.splitlines()) == 1
    assert _cli("admission-policy", "10de:2236", "--kubeconfig", "x").returncode == 2


def test_grpc_from_cluster_on_a_kube_server(server, client, tmp_path, monkeypatch):
    from pciname.server.rpc.cluster import ClusterAccess

    fake = _fake_cluster()
    try:
        monkeypatch.setattr(server.service, "cluster", ClusterAccess(str(fake.kubeconfig(tmp_path))))
        answer = client.admission_policy(from_cluster=True)
    finally:
        fake.stop()
    assert answer.allowed == ["nvidia.com/GA102GL_A10"] and len(answer.findings) == 1
