"""The cluster tests' fixtures: proxies are off for every test here, so the
client talks to the fake API servers on 127.0.0.1 directly.

``fake`` is the API server the hostile cluster tests share (module-scoped:
each test module that takes it gets its own), one Node with two A10s and a
KubeVirt CR permitting them; each test may set its ``misbehave`` hook, which
``well_behaved`` clears after it (a module takes it with
``pytestmark = pytest.mark.usefixtures("well_behaved")``), e.g.
:func:`endless_pages` (a NodeList whose paging never ends). A module with a
fake of its own (test_kube_cluster.py) overrides ``fake``.

:func:`cli_with_peak` runs a command as ``python -m pciname`` does and
measures its peak RSS growth; :func:`kube_serve` is ``pciname serve --kube``
on an API server's kubeconfig."""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.fake_kube import FakeKube, kubevirt, node
from tests.server_util import ServerProcess

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


@pytest.fixture
def well_behaved(fake):
    """The test's ``misbehave`` hook cleared after it."""
    yield
    fake.misbehave = None


def endless_pages(token: str | None = None, *, served: list[str] | None = None):
    """A misbehave hook: every NodeList page is one Node (a new name each
    time) and a ``continue`` token: ``token`` every time (a repeated token),
    or, without one, a new token each page (paging that never ends). The
    tokens the client sends back are appended to ``served``."""
    numbers = itertools.count(1)

    def hook(handler, request):
        if request.method != "GET" or request.path != "/api/v1/nodes":
            return False
        if served is not None:
            served.append(request.query.get("continue", [""])[0])
        number = next(numbers)
        page = {
            "apiVersion": "v1",
            "kind": "NodeList",
            "metadata": {"resourceVersion": "81300", "continue": token or f"page-{number}"},
            "items": [node(f"gpu-{number}", {"nvidia.com/GA102GL_A10": "2"})],
        }
        body = json.dumps(page).encode()
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)
        return True

    return hook


# The CLI, as `python -m pciname` runs it, its peak RSS before and after.
PEAK = """
import resource, sys
import kubernetes.client, urllib3, yaml  # what main() imports lazily, in the baseline
import pciname.cluster.kube
from pciname.cli import main
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
try:
    code = main(sys.argv[2:])
finally:
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with open(sys.argv[1], "w") as out:
        out.write(str((after - before) * 1024))
sys.exit(code)
"""


def cli_with_peak(
    kubeconfig: Path, directory: Path, *argv: str, timeout: float, wait: float = 300
) -> tuple[subprocess.CompletedProcess[str], float, int]:
    """``pciname ARGV --kubeconfig KUBECONFIG --timeout TIMEOUT`` in a
    subprocess (at most ``wait`` seconds): (the process, the seconds it
    took, its peak RSS growth in bytes)."""
    peak = directory / "peak"
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_PROXY="127.0.0.1")  # no_proxies cleared the rest
    started = time.monotonic()
    proc = subprocess.run(
        [sys.executable, "-c", PEAK, str(peak), *argv, "--kubeconfig", str(kubeconfig), "--timeout", str(timeout)],
        capture_output=True,
        text=True,
        timeout=wait,
        env=env,
        cwd=REPO,
    )
    return proc, time.monotonic() - started, int(peak.read_text())


@contextmanager
def kube_serve(kubeconfig: Path, cache: Path, kube_timeout: float) -> Iterator[ServerProcess]:
    """A ready ``pciname serve --kube`` process reading the cluster of ``kubeconfig``."""
    env = dict(os.environ, PYTHONPATH=str(REPO), NO_PROXY="127.0.0.1", PCINAME_CACHE_DIR=str(cache))
    for name in ("PCINAME_SNAPSHOTS", "KUBECONFIG", "HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"):
        env.pop(name, None)
    server = ServerProcess(
        ["--listen", "127.0.0.1:0", "--insecure", "--kube", "--kubeconfig", str(kubeconfig)]
        + ["--kube-timeout", str(kube_timeout), "--watch-interval", "0"],
        env,
    )
    try:
        server.ready(60)
        yield server
    finally:
        server.close()
