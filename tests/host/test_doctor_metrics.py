"""The doctor's gauge on a real ``/metrics`` scrape (loopback) of a server
started with ``--host-root`` and ``--metrics-listen``: a gauge per doctor
code for the node, 1 for what the node shows, 0 for the rest; judged at
each scrape, so the gauge clears when the node heals."""

from __future__ import annotations

import shutil

import pytest

from pciname.host.doctor.codes import DOCTOR_CODES
from pciname.server import ServeConfig, ServeError
from tests.conftest import ServerSpec
from tests.host.doctor_nodes import preinstalled_node
from tests.server_util import metric, scrape


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    root = tmp_path_factory.mktemp("node")
    preinstalled_node(root)
    return root


@pytest.fixture(scope="module")
def server_spec(session_cache, node):
    config = {"host_root": str(node), "host_node": "gpu-1", "metrics_listen": "127.0.0.1:0"}
    return ServerSpec(config=config, cache=session_cache)


def _gauges(server) -> dict[str, float]:
    samples = scrape(server.metrics_port)
    return {
        code: metric(samples, "pciname_doctor_findings", code=code, node="gpu-1", severity=severity)
        for code, (severity, _) in DOCTOR_CODES.items()
    }


def test_a_gauge_per_code_and_it_clears_when_the_node_heals(server, node):
    gauges = _gauges(server)
    assert set(gauges) == set(DOCTOR_CODES)
    assert {code for code, value in gauges.items() if value} == {"host-driver-preinstalled"}
    assert gauges["host-driver-preinstalled"] == 1
    # the way back: the host driver gone (its nvidia-smi, its module), the GPU on vfio-pci
    (node / "usr" / "bin" / "nvidia-smi").unlink()
    shutil.rmtree(node / "sys" / "module" / "nvidia")
    (node / "proc" / "modules").write_text(
        "".join(
            line + "\n"
            for line in (node / "proc" / "modules").read_text().splitlines()
            if not line.startswith("nvidia ")
        )
    )
    (node / "proc" / "driver" / "nvidia" / "version").unlink()
    driver = node / "sys" / "bus" / "pci" / "devices" / "0000:3b:00.0" / "driver"
    driver.unlink()
    driver.symlink_to(node / "sys" / "bus" / "pci" / "drivers" / "vfio-pci")
    assert set(_gauges(server).values()) == {0}


def test_a_variant_the_doctor_does_not_know_is_refused():
    with pytest.raises(ServeError, match=r"^--host-variant: invalid choice: 'passthrough'"):
        ServeConfig(insecure=True, host_root="/", host_variant="passthrough").validate()
