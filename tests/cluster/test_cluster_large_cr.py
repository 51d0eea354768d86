"""A KubeVirt CR with very many permittedHostDevices entries (issue 22,
defect 10): 100,000 entries (11 MB, under the 32 MiB answer limit) made
``audit`` run for a minute and take 600 MB past ``--timeout`` (its lint
of the CR dumped and parsed it as YAML in pure Python, and compared each
vGPU type with every catalogue type for a note nobody saw), and
``gpu-options`` took quadratic time over a name's selectors. Now a CR of
more than MAX_PERMITTED_ENTRIES entries is one line, at once; one at the
limit is read in linear time; and ``--timeout`` is checked in the work.

The CLI runs as a subprocess against the fake API server
(tests/fake_kube.py), its peak RSS measured, and so does a ``serve --kube``
process for ``GpuOptions(from_cluster)``; ``GpuOptions`` with the objects
sent is refused alike."""

from __future__ import annotations

import json
import time
from pathlib import Path

import grpc
import pytest

from pciname.kubevirt.shapes import MAX_PERMITTED_ENTRIES
from pciname.policy.audit import audit, gpu_options
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from tests.cluster.conftest import cli_with_peak, kube_serve
from tests.conftest import REPO
from tests.fake_kube import FakeKube, kubevirt, node
from tests.server_util import peak_rss

#: --timeout of the commands here: the 100,000-entry CR took 35 s (audit)
#: and 75 s (gpu-options) before; refused, it takes well under a second.
TIMEOUT = 10
#: What a command may take past --timeout: its start-up on a busy machine.
STARTUP = 20
#: Peak RSS a command may grow by while it reads the CR (a behaviour check:
#: audit grew 600 MB on the 100,000-entry CR; refused, under 30).
RSS_GROWTH = 100 << 20
HUGE = 100_000
TOO_MANY = (
    "cannot list KubeVirt CRs: the API server sent KubeVirtList items[0].spec.configuration.permittedHostDevices: "
    f"{HUGE} entries, more than the {MAX_PERMITTED_ENTRIES} read"
)


def pci_entries(count: int) -> list[dict]:
    """``count`` entries, each a selector of its own (the 65,536 device ids
    over again), all under one name: a name with many selectors."""
    return [
        {
            "pciVendorSelector": f"10DE:{i % 65536:04X}",
            "resourceName": "nvidia.com/GA102GL_A10",
            "externalResourceProvider": True,
        }
        for i in range(count)
    ]


def mdev_entries(count: int) -> list[dict]:
    """``count`` vGPU types of a known family that the catalogue has not
    (each one worth a note, made by comparing it with every catalogue type)."""
    return [
        {"mdevNameSelector": f"NVIDIA A10-{i}Q", "resourceName": f"nvidia.com/NVIDIA_A10-{i}Q"} for i in range(count)
    ]


def serving(permitted: dict) -> FakeKube:
    return FakeKube(nodes=[node("gpu-1", {"nvidia.com/GA102GL_A10": "2"})], kubevirts=[kubevirt(permitted)]).start()


@pytest.fixture(scope="module")
def huge():
    server = serving({"pciHostDevices": pci_entries(HUGE)})
    assert 10 << 20 < len(json.dumps(server.kubevirts)) < 32 << 20
    yield server
    server.stop()


@pytest.fixture(scope="module")
def at_the_limit():
    half = MAX_PERMITTED_ENTRIES // 2
    server = serving({"pciHostDevices": pci_entries(half), "mediatedDevices": mdev_entries(half)})
    yield server
    server.stop()


def cli(server: FakeKube, directory: Path, *argv: str, timeout: float = TIMEOUT):
    """(process, seconds it took, its peak RSS growth)."""
    return cli_with_peak(server.kubeconfig(directory), directory, *argv, timeout=timeout)


@pytest.mark.parametrize("command", ["audit", "gpu-options"])
def test_a_cr_with_too_many_entries_is_one_line_at_once(huge, tmp_path, command):
    proc, elapsed, growth = cli(huge, tmp_path, command, "-o", "json")
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"pciname: error: {TOO_MANY}\n")
    assert elapsed < TIMEOUT + STARTUP
    assert growth < RSS_GROWTH, f"peak RSS grew {growth >> 20} MiB"


@pytest.mark.parametrize("command", ["audit", "gpu-options"])
def test_a_cr_at_the_limit_is_read_or_refused_within_the_timeout(at_the_limit, tmp_path, command):
    """Done within --timeout here, with every entry in the answer; on a
    machine too busy for that, one line saying --timeout passed: never
    later (the work checks it as it goes)."""
    proc, elapsed, growth = cli(at_the_limit, tmp_path, command, "-o", "json", timeout=30)
    assert elapsed < 30 + STARTUP
    assert growth < RSS_GROWTH, f"peak RSS grew {growth >> 20} MiB"
    if proc.returncode == 2:
        assert proc.stderr == (
            f"pciname: error: {command}: not done within --timeout (30 seconds) with the "
            f"{MAX_PERMITTED_ENTRIES} permittedHostDevices entries and 1 Nodes the cluster sent\n"
        )
        return
    answer = json.loads(proc.stdout)
    if command == "audit":
        assert proc.returncode == 1  # the vGPU types are no A10's
        assert len(answer["permitted"]) == MAX_PERMITTED_ENTRIES
        assert answer["permitted"][0]["nodes"] == {"gpu-1": 2}
    else:
        assert proc.returncode == 0, proc.stderr
        (a10,) = [o for o in answer if o["resource_name"] == "nvidia.com/GA102GL_A10"]
        assert len(a10["selectors"]) == MAX_PERMITTED_ENTRIES // 2 and a10["allocatable"] == 2
        assert len(answer) == 1 + MAX_PERMITTED_ENTRIES // 2


@pytest.mark.parametrize("command", ["audit", "gpu-options"])
def test_the_timeout_is_checked_in_the_work(at_the_limit, tmp_path, command):
    """--timeout 0.5 runs out in the work (the reads of the CR take a tenth
    of it): one line, not the whole work done late. (On a machine so busy
    that the reads took it all, the line says the API server did not
    answer: one line too.)"""
    proc, elapsed, _ = cli(at_the_limit, tmp_path, command, "-o", "json", timeout=0.5)
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr[-2000:]
    assert proc.stderr in (
        f"pciname: error: {command}: not done within --timeout (0.5 seconds) with the "
        f"{MAX_PERMITTED_ENTRIES} permittedHostDevices entries and 1 Nodes the cluster sent\n",
        "pciname: error: cannot list KubeVirt CRs: the API server did not answer within 0.5 seconds\n",
        "pciname: error: cannot list nodes: the API server did not answer within 0.5 seconds\n",
    )
    assert elapsed < 0.5 + STARTUP


class Stop(Exception):
    pass


def counting(limit: int):
    """A check that raises on its ``limit``-th call; ``calls`` counts them."""
    calls = [0]

    def check() -> None:
        calls[0] += 1
        if calls[0] >= limit:
            raise Stop

    return check, calls


@pytest.mark.parametrize("function", [audit, gpu_options])
def test_the_work_calls_its_check_as_it_goes(function):
    cr = kubevirt({"pciHostDevices": pci_entries(200), "mediatedDevices": mdev_entries(200)})
    nodes = [node("gpu-1", {"nvidia.com/GA102GL_A10": "2"})]
    check, calls = counting(10**9)
    function(cr, nodes, "latest", check=check)
    assert calls[0] >= 400  # at least once an entry
    for limit in (1, 150, 350, calls[0]):
        check, _ = counting(limit)
        with pytest.raises(Stop):
            function(cr, nodes, "latest", check=check)


def test_an_entry_nested_too_deeply_is_one_line(tmp_path):
    """The lint of the CR dumped it as YAML: a value nested 600 deep (JSON
    the API server may send) raised RecursionError, a traceback."""
    entry = dict(pci_entries(1)[0], extra=json.loads("[" * 600 + "]" * 600))
    server = serving({"pciHostDevices": [entry]})
    try:
        proc, _, _ = cli(server, tmp_path, "audit")
    finally:
        server.stop()
    assert (proc.returncode, proc.stdout) == (2, "")
    assert proc.stderr == "pciname: error: kubevirt/kubevirt: nested too deeply to check\n"


# -- GpuOptions on serve --kube --------------------------------------------------------------------


@pytest.fixture(scope="module")
def kube_server(huge, tmp_path_factory, session_cache):
    with kube_serve(huge.kubeconfig(tmp_path_factory.mktemp("kube")), session_cache, TIMEOUT) as server:
        yield server


def test_gpu_options_from_the_cluster_refuses_too_many_entries(kube_server):
    with grpc.insecure_channel(kube_server.address) as channel:
        stub = pb_grpc.PciNameStub(channel)
        before = peak_rss(kube_server.proc.pid)
        started = time.monotonic()
        with pytest.raises(grpc.RpcError) as caught:
            stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=TIMEOUT + STARTUP)
        elapsed = time.monotonic() - started
        growth = peak_rss(kube_server.proc.pid) - before
        assert (caught.value.code(), caught.value.details()) == (grpc.StatusCode.UNAVAILABLE, TOO_MANY)
        assert dict(caught.value.trailing_metadata() or ()).get("pciname-error") == "cluster-unreachable"
        assert elapsed < TIMEOUT
        assert growth < RSS_GROWTH, f"peak RSS grew {growth >> 20} MiB"


def test_gpu_options_of_objects_sent_refuses_too_many_entries(kube_server):
    count = 30_000  # 3.4 MB of JSON: within gRPC's 4 MiB; a second of quadratic work per thousand before
    cr = kubevirt({"pciHostDevices": pci_entries(count)})
    with grpc.insecure_channel(kube_server.address) as channel:
        stub = pb_grpc.PciNameStub(channel)
        with pytest.raises(grpc.RpcError) as caught:
            stub.GpuOptions(pb.GpuOptionsRequest(kubevirt=json.dumps(cr), nodes="[]"), timeout=TIMEOUT + STARTUP)
    assert (caught.value.code(), caught.value.details()) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        f"kubevirt.spec.configuration.permittedHostDevices: {count} entries, more than the {MAX_PERMITTED_ENTRIES} read",
    )
    assert dict(caught.value.trailing_metadata() or ()).get("pciname-error") == "objects-input"


def test_readme_states_the_limit():
    text = " ".join((REPO / "docs" / "limits-and-security.md").read_text().split())
    assert f"at most {MAX_PERMITTED_ENTRIES:,} permittedHostDevices entries" in text
