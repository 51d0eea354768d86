"""A NodeList whose paging never ends (issue 22, defect 11): a ``continue``
token the API server sends twice, or a new one on every page, is one line
(``the API server's NodeList paging does not end``) after a few requests,
not ``--timeout`` of requests flat out then "did not answer": for
``audit`` and ``gpu-options`` (the CLI as a subprocess), the library, and
``GpuOptions(from_cluster)`` on a ``serve --kube`` process."""

from __future__ import annotations

import grpc
import pytest

from pciname.cluster.kube import MAX_NODE_PAGES, MAX_NODES, NODE_PAGE, connect, read_cluster
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from tests.cli_run import pciname_process
from tests.cluster.conftest import endless_pages, kube_serve
from tests.conftest import REPO

# The misbehaving API server (tests/cluster/conftest.py), its hook cleared after each test.
pytestmark = pytest.mark.usefixtures("well_behaved")

#: Long enough that paging until it runs out would fail the tests below
#: (their subprocess and RPC deadlines are shorter than it is generous).
TIMEOUT = 120
REPEATED = "cannot list nodes: the API server's NodeList paging does not end: continue token repeated after 2 pages"
ENDLESS = (
    "cannot list nodes: the API server's NodeList paging does not end: still a continue token after "
    f"{MAX_NODE_PAGES} pages ({MAX_NODE_PAGES} Nodes; at most {MAX_NODES} are read, {NODE_PAGE} a page)"
)
CASES = {"repeated": ("same-token", REPEATED, 2), "endless": (None, ENDLESS, MAX_NODE_PAGES)}


def node_requests(fake) -> int:
    return sum(1 for r in fake.requests if r.path == "/api/v1/nodes")


def cli_process(*argv):
    unset = dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "KUBECONFIG"))
    # paging until --timeout would raise TimeoutExpired
    return pciname_process(*argv, env={**unset, "NO_PROXY": "127.0.0.1"}, timeout=TIMEOUT / 2)


def test_the_page_limit_is_what_the_node_limit_takes():
    assert MAX_NODE_PAGES * NODE_PAGE >= MAX_NODES > (MAX_NODE_PAGES - 1) * NODE_PAGE


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", ["audit", "gpu-options"])
def test_the_cli_says_the_paging_does_not_end(fake, tmp_path, command, case):
    token, says, pages = CASES[case]
    fake.misbehave = endless_pages(token)
    before = node_requests(fake)
    proc = cli_process(command, "--kubeconfig", fake.kubeconfig(tmp_path), "--timeout", TIMEOUT)
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", f"pciname: error: {says}\n")
    assert node_requests(fake) - before == pages


def test_the_library_sends_the_tokens_back_and_stops(fake, tmp_path):
    from pciname.errors import ClusterError

    served: list[str] = []
    fake.misbehave = endless_pages(served=served)
    with pytest.raises(ClusterError) as caught:
        read_cluster(connect(str(fake.kubeconfig(tmp_path))), timeout=TIMEOUT)
    assert (str(caught.value), caught.value.reason) == (ENDLESS, "unreachable")
    assert served == [""] + [f"page-{n}" for n in range(1, MAX_NODE_PAGES)]

    served.clear()
    fake.misbehave = endless_pages("same-token", served=served)
    with pytest.raises(ClusterError) as caught:
        read_cluster(connect(str(fake.kubeconfig(tmp_path))), timeout=TIMEOUT)
    assert (str(caught.value), caught.value.reason) == (REPEATED, "unreachable")
    assert served == ["", "same-token"]


@pytest.fixture(scope="module")
def kube_server(fake, tmp_path_factory, session_cache):
    with kube_serve(fake.kubeconfig(tmp_path_factory.mktemp("kube")), session_cache, TIMEOUT) as server:
        yield server


@pytest.mark.parametrize("case", list(CASES))
def test_gpu_options_from_cluster_says_the_paging_does_not_end(fake, kube_server, case):
    token, says, pages = CASES[case]
    with grpc.insecure_channel(kube_server.address) as channel:
        stub = pb_grpc.PciNameStub(channel)
        assert stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=30).options  # warm: connected
        fake.misbehave = endless_pages(token)
        before = node_requests(fake)
        with pytest.raises(grpc.RpcError) as caught:
            stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=TIMEOUT / 2)
        assert (caught.value.code(), caught.value.details()) == (grpc.StatusCode.UNAVAILABLE, says)
        assert dict(caught.value.trailing_metadata() or ()).get("pciname-error") == "cluster-unreachable"
        assert node_requests(fake) - before == pages
        fake.misbehave = None
        assert stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=30).options  # still serving


def test_readme_states_the_page_limit():
    text = " ".join((REPO / "docs" / "limits-and-security.md").read_text().split())
    assert f"at most {MAX_NODES:,} in all, in at most {MAX_NODE_PAGES} pages" in text
