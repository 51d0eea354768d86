"""The fake API server the hostile cluster tests share (module-scoped: each
test module that takes it gets its own), one Node with two A10s and a
KubeVirt CR permitting them; each test may set its ``misbehave`` hook,
which is cleared after it. Proxies are off, so the client talks to
127.0.0.1 directly."""

from __future__ import annotations

import pytest

from .fake_kube import FakeKube, kubevirt, node

A10 = {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/GA102GL_A10", "externalResourceProvider": True}


@pytest.fixture(autouse=True)
def no_proxies(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "KUBECONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")


@pytest.fixture(scope="module")
def fake():
    server = FakeKube(
        nodes=[node("gpu-1", {"nvidia.com/GA102GL_A10": "2"})], kubevirts=[kubevirt({"pciHostDevices": [A10]})]
    ).start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def well_behaved(fake):
    yield
    fake.misbehave = None
