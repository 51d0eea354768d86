"""audit and gpu-options find the cluster's Cozystack release where the
cluster says it: the cozystack-operator Deployment (env COZYSTACK_VERSION,
else its image tag), read through the real kubernetes client from a fake API
server on loopback; otherwise they take --cozystack. The release names GPUs
as its GPU Operator deploys them (cozystack@VERSION) unless a profile is
given."""

from __future__ import annotations

import json

import pytest

from pciname.cozystack.releases import release_in_cluster
from tests.cli_run import pciname as run
from tests.fake_kube import FakeKube, cozystack_operator, kubevirt, node

IMAGE = "ghcr.io/cozystack/cozystack/cozystack-operator:{}@sha256:41ea5ca9c6a7d471105920b09fc8ed68279b8ca0dbffe7f839dccd530b42e4c7"
GB200 = {
    "pciVendorSelector": "10DE:2941",
    "resourceName": "nvidia.com/GB100_GB200_SKU",
    "externalResourceProvider": True,
}


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "KUBECONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


def cluster(deployment=None):
    """A v1.3 cluster's view: GB200 named as plugin v1.3.1 names it."""
    fake = FakeKube(
        nodes=[node("gpu-1", {"nvidia.com/GB100_GB200_SKU": "4"})], kubevirts=[kubevirt({"pciHostDevices": [GB200]})]
    )
    if deployment is not None:
        fake.deployments[("cozy-system", "cozystack-operator")] = deployment
    return fake.start()


def test_release_in_the_operator_deployment():
    found = release_in_cluster(cozystack_operator(IMAGE.format("v1.3.2")))
    assert (found.version, found.release.version) == ("v1.3.2", "v1.3.2")
    assert (
        found.evidence
        == "Deployment cozy-system/cozystack-operator, image tag of ghcr.io/cozystack/cozystack/cozystack-operator:v1.3.2"
    )
    env = release_in_cluster(
        cozystack_operator(IMAGE.format("v1.6.0-rc.1"), env=[{"name": "COZYSTACK_VERSION", "value": "v1.6.0"}])
    )
    assert (env.version, env.evidence) == ("v1.6.0", "Deployment cozy-system/cozystack-operator, env COZYSTACK_VERSION")
    empty_env = release_in_cluster(
        cozystack_operator(IMAGE.format("v1.6.1"), env=[{"name": "COZYSTACK_VERSION", "value": ""}])
    )
    assert empty_env.version == "v1.6.1"  # empty: the operator falls back to its build's version, the image's
    unknown = release_in_cluster(cozystack_operator(IMAGE.format("v9.1.0")))
    assert (unknown.version, unknown.release) == ("v9.1.0", None)
    assert release_in_cluster(cozystack_operator("ghcr.io/cozystack/cozystack/cozystack-operator:latest")) is None
    assert release_in_cluster(None) is None and release_in_cluster({"spec": {}}) is None


def test_audit_takes_the_release_the_cluster_says(tmp_path, capsys):
    fake = cluster(cozystack_operator(IMAGE.format("v1.3.2")))
    try:
        code, out, _err = run("audit", "--kubeconfig", fake.kubeconfig(tmp_path), "-o", "json")
    finally:
        fake.stop()
    report = json.loads(out)
    assert report["cozystack"] == {
        "version": "v1.3.2",
        "known": True,
        "source": "Deployment cozy-system/cozystack-operator, image tag of ghcr.io/cozystack/cozystack/cozystack-operator:v1.3.2",
    }
    assert report["profile"] == "cozystack@v1.3.2" and report["profile_source"].startswith(
        "Cozystack v1.3.2 (Deployment"
    )
    assert (code, report["findings"]) == (0, [])  # v1.3.2's plugin names GB200 so: clean
    assert any(r.path == "/apis/apps/v1/namespaces/cozy-system/deployments/cozystack-operator" for r in fake.requests)
    assert {r.method for r in fake.requests} == {"GET"}


def test_audit_of_a_newer_release_flags_the_old_name(tmp_path, capsys):
    fake = cluster(cozystack_operator(IMAGE.format("v1.4.0")))
    try:
        code, out, _ = run("audit", "--kubeconfig", fake.kubeconfig(tmp_path), "-o", "table")
    finally:
        fake.stop()
    assert code == 1
    assert "Cozystack: v1.4.0 (Deployment cozy-system/cozystack-operator, image tag" in out
    assert "profile: cozystack@v1.4.0" in out and "nvidia.com/GB100_HGX_GB200" in out


def test_without_the_deployment_audit_takes_cozystack(tmp_path, capsys):
    fake = cluster()
    try:
        code, out, _ = run("audit", "--kubeconfig", fake.kubeconfig(tmp_path), "-o", "json", "--cozystack", "v1.3.0")
        report = json.loads(out)
        assert (code, report["profile"], report["cozystack"]["source"]) == (
            0,
            "cozystack@v1.3.0",
            "given (--cozystack)",
        )
        code, out, _ = run("audit", "--kubeconfig", fake.kubeconfig(tmp_path), "-o", "json")
        report = json.loads(out)
        assert report["cozystack"] is None and report["profile"] == "kubevirt-gpu-device-plugin@v1.6.0"
        # A profile given wins over the release's.
        code, out, _ = run(
            "audit",
            "--kubeconfig",
            fake.kubeconfig(tmp_path),
            "-o",
            "json",
            "--cozystack",
            "v1.3.0",
            "-p",
            "v1.6.0",
        )
        assert json.loads(out)["profile"] == "kubevirt-gpu-device-plugin@v1.6.0"
        code, out, err = run("audit", "--kubeconfig", fake.kubeconfig(tmp_path), "--cozystack", "v0.1.0")
        assert (code, out) == (2, "") and "unknown Cozystack release 'v0.1.0'" in err
    finally:
        fake.stop()


def test_an_unknown_release_in_the_cluster_is_said_and_not_guessed(tmp_path, capsys):
    fake = cluster(cozystack_operator(IMAGE.format("v9.1.0")))
    try:
        _code, out, err = run("audit", "--kubeconfig", fake.kubeconfig(tmp_path), "-o", "json")
    finally:
        fake.stop()
    report = json.loads(out)
    assert report["cozystack"]["version"] == "v9.1.0" and report["cozystack"]["known"] is False
    assert report["profile"] == "kubevirt-gpu-device-plugin@v1.6.0"  # the default, not a guess
    assert "the cluster runs Cozystack v9.1.0" in err and "no facts for" in err


def test_gpu_options_takes_the_release(tmp_path, capsys):
    fake = cluster(
        cozystack_operator(IMAGE.format("v1.6.0-rc.1"), env=[{"name": "COZYSTACK_VERSION", "value": "v1.3.6"}])
    )
    try:
        code, out, err = run("gpu-options", "--kubeconfig", fake.kubeconfig(tmp_path), "-o", "json")
    finally:
        fake.stop()
    assert code == 0
    assert err == "pciname: Cozystack v1.3.6 (Deployment cozy-system/cozystack-operator, env COZYSTACK_VERSION)\n"
    (option,) = json.loads(out)
    assert option["resource_name"] == "nvidia.com/GB100_GB200_SKU" and option["allocatable"] == 4
