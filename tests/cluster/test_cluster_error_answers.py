"""Error answers (4xx, 5xx) of a misbehaving API server are bounded like
every other answer (issue 16, item 10): a 500 with a 300 MiB body, a 403
trickled byte by byte and a 404 that is not JSON each give one line (the
status and a bounded, escaped excerpt of the message), in bounded memory
and within ``--timeout``, for ``audit``, ``gpu-options``, ``apply`` (the
CLI as a subprocess, its peak RSS measured) and ``GpuOptions(from_cluster)``
on ``serve --kube`` (a server process on loopback, its peak RSS measured)."""

from __future__ import annotations

import json
import threading
import time

import grpc
import pytest

from pciname.cluster.kube import MAX_ERROR_BYTES, MAX_MESSAGE_CHARS, connect, read_cluster
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from tests.cluster.conftest import cli_with_peak, kube_serve
from tests.conftest import REPO
from tests.server_util import peak_rss

HUGE = 300 << 20
#: Peak RSS a command may grow by while it reads an error answer (a
#: behaviour check, not a measurement: unbounded, the 300 MiB body alone
#: costs more than 300 MB).
RSS_GROWTH = 100 << 20
#: --timeout: the whole time a command may spend on the API server. Only the
#: trickle reaches it. On a loaded machine the deadline may pass before the
#: erring request is sent: the CLI test sees that (the hook was never reached)
#: and runs again with twice the timeout, up to :data:`LONGEST`.
TIMEOUT = 8
LONGEST = 128
#: --timeout for the answers that come at once: never reached.
AT_ONCE = 600
#: The trickled 403's body, and how long sending all of it takes: a bounded
#: read stops long before (the test's time bound is this, not a guess at the
#: machine's speed).
TRICKLE_BODY = b'{"kind": "Status", "code": 403, "message": "nodes is forbidden"}' + b" " * 99_000
TRICKLE_SECONDS = len(TRICKLE_BODY) * 0.02


# The misbehaving API server (tests/cluster/conftest.py), its hook cleared after each test.
pytestmark = pytest.mark.usefixtures("well_behaved")


# -- the three error answers, as misbehave hooks --------------------------------------------------


def huge_500(handler) -> None:
    """A 500 whose Status says 300 MiB long, with a terminal escape in its message."""
    handler.send_response(500)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", str(HUGE))
    handler.end_headers()
    head = b'{"kind": "Status", "code": 500, "message": "\x1b]0;owned\x07etcd ' + b"x" * 1000
    handler.wfile.write(head)
    chunk = b"x" * (1 << 20)
    for _ in range(HUGE // len(chunk)):
        handler.wfile.write(chunk)


def trickled_403(handler) -> None:
    """A 403 whose body comes a byte every 20 ms (each read succeeds; the
    whole takes far longer than --timeout)."""
    handler.send_response(403)
    handler.send_header("Content-Type", "application/json")
    handler.send_header("Content-Length", "100000")
    handler.end_headers()
    for byte in TRICKLE_BODY:
        handler.wfile.write(bytes([byte]))
        handler.wfile.flush()
        time.sleep(0.02)


def html_404(handler) -> None:
    """A 404 from a proxy in front of the API server: HTML, not a Status."""
    body = b"<html>\r\n<body>\x1b[2J404 page not found</body>\n</html>\n"
    handler.send_response(404)
    handler.send_header("Content-Type", "text/html")
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


MODES = {"huge-500": huge_500, "trickled-403": trickled_403, "html-404": html_404}
#: What each one-line error says after "cannot WHAT: ".
SAYS = {
    # Cut at MAX_ERROR_BYTES it is no JSON: an excerpt of what came.
    "huge-500": '500 Internal Server Error: {"kind": "Status", "code": 500, "message": "\\x1b]0;owned\\x07etcd xxx',
    "trickled-403": "403 Forbidden: ",
    "html-404": "404 Not Found: <html> <body>\\x1b[2J404 page not found</body> </html>",
}


def misbehave(method: str, path: str, mode: str, reached: threading.Event | None = None):
    def hook(handler, request):
        if request.method != method or not request.path.startswith(path):
            return False
        if reached is not None:
            reached.set()
        try:
            MODES[mode](handler)
        except OSError:  # the client hung up: what a bounded read does
            pass
        handler.close_connection = True
        return True

    return hook


# Where each command meets the error answer: the Node list, or the apply's PATCH.
COMMANDS = {
    "audit": (["audit"], "GET", "/api/v1/nodes", "list nodes"),
    "gpu-options": (["gpu-options"], "GET", "/api/v1/nodes", "list nodes"),
    "apply": (
        ["apply", "permitted-host-devices", "10de:2236"],
        "PATCH",
        "/apis/kubevirt.io/v1/namespaces/",
        "apply to KubeVirt kubevirt/kubevirt",
    ),
}


def check_line(line: str, what: str, mode: str) -> None:
    prefix = f"pciname: error: cannot {what}: "
    assert line.startswith(prefix + SAYS[mode]), line
    assert "\n" not in line.rstrip("\n") and "\x1b" not in line and "\x07" not in line
    assert len(line) < len(prefix) + MAX_MESSAGE_CHARS + 40, len(line)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("command", list(COMMANDS))
def test_cli_error_answers_are_one_bounded_line(fake, tmp_path, command, mode):
    argv, method, path, what = COMMANDS[command]
    timeout = TIMEOUT if mode == "trickled-403" else AT_ONCE
    while True:
        reached = threading.Event()
        fake.misbehave = misbehave(method, path, mode, reached)
        proc, elapsed, growth = cli_with_peak(fake.kubeconfig(tmp_path), tmp_path, *argv, timeout=timeout)
        if reached.is_set() or timeout >= LONGEST:
            break
        timeout *= 2  # the deadline passed before the erring request was sent: a loaded machine
    assert reached.is_set(), proc.stderr
    assert (proc.returncode, proc.stdout) == (2, ""), proc.stderr
    assert proc.stderr.count("\n") == 1, proc.stderr
    check_line(proc.stderr, what, mode)
    if mode != "html-404":
        assert proc.stderr.rstrip("\n").endswith("…")  # cut: at --timeout, at MAX_ERROR_BYTES
    assert elapsed < TRICKLE_SECONDS / 4  # start-up and a bounded read: not the trickle's 2,000 s
    assert growth < RSS_GROWTH, f"peak RSS grew {growth >> 20} MiB"


def test_the_library_raises_one_line_and_the_time_is_the_clocks(fake, tmp_path):
    """read_cluster on a client of its own (not from connect()) is bounded too."""
    from kubernetes import config as kube_config

    from pciname.errors import ClusterError

    client = kube_config.new_client_from_config(str(fake.kubeconfig(tmp_path)), persist_config=False)
    timeout = TIMEOUT
    while True:
        reached = threading.Event()
        fake.misbehave = misbehave("GET", "/api/v1/nodes", "trickled-403", reached)
        started = time.monotonic()
        with pytest.raises(ClusterError) as caught:
            read_cluster(client, timeout=timeout)
        elapsed = time.monotonic() - started
        if reached.is_set() or timeout >= LONGEST:
            break
        timeout *= 2  # the deadline passed before the nodes were asked for: a loaded machine
    # The clock's time: all of it was waited (the trickle kept each read
    # succeeding), and far less than the whole trickle.
    assert timeout <= elapsed < TRICKLE_SECONDS / 4
    assert (caught.value.reason, caught.value.status) == ("refused", 403)
    assert str(caught.value).startswith("cannot list nodes: 403 Forbidden: {")

    fake.misbehave = misbehave("GET", "/api/v1/nodes", "huge-500")
    with pytest.raises(ClusterError) as caught:
        read_cluster(connect(str(fake.kubeconfig(tmp_path))), timeout=10)
    assert caught.value.status == 500 and str(caught.value).endswith("…")


def test_a_status_message_is_what_the_line_says(fake, tmp_path, capsys):
    """A well-formed Status: its message, escaped; a long one cut at MAX_MESSAGE_CHARS."""
    from pciname.cli import main

    message = 'nodes is forbidden: User \x1b[8m"system:anonymous" cannot list ' + "y" * 1000

    def hook(handler, request):
        if not request.path.startswith("/api/v1/nodes"):
            return False
        handler._send(403, {"kind": "Status", "code": 403, "message": message})
        return True

    fake.misbehave = hook
    assert main(["gpu-options", "--kubeconfig", str(fake.kubeconfig(tmp_path))]) == 2
    err = capsys.readouterr().err
    shown = message.replace("\x1b", "\\x1b")
    assert err == f"pciname: error: cannot list nodes: 403 {shown[: MAX_MESSAGE_CHARS - 1]}…\n"
    assert MAX_ERROR_BYTES >= 4096  # room for any Status message the API server writes


# -- GpuOptions(from_cluster) on serve --kube ------------------------------------------------------


@pytest.fixture(scope="module")
def kube_server(fake, tmp_path_factory, session_cache):
    with kube_serve(fake.kubeconfig(tmp_path_factory.mktemp("kube")), session_cache, TIMEOUT) as server:
        yield server


def warm(stub) -> None:
    """The server connected and its profile loaded: its first answers may
    pass --kube-timeout on a loaded machine (the deadline counts the cold
    start), so ask until one comes."""
    for _ in range(5):
        try:
            assert stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=120).options
            return
        except grpc.RpcError as error:
            assert "did not answer within" in error.details(), error.details()
    pytest.fail("the server never answered within --kube-timeout")


@pytest.mark.parametrize("mode", list(MODES))
def test_gpu_options_from_cluster_error_answers(fake, kube_server, mode):
    with grpc.insecure_channel(kube_server.address) as channel:
        stub = pb_grpc.PciNameStub(channel)
        warm(stub)
        before = peak_rss(kube_server.proc.pid)
        for _ in range(4):  # again when the deadline passed before the erring request was sent
            reached = threading.Event()
            fake.misbehave = misbehave("GET", "/api/v1/nodes", mode, reached)
            started = time.monotonic()
            with pytest.raises(grpc.RpcError) as caught:
                stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=120)
            elapsed = time.monotonic() - started
            if reached.is_set():
                break
        growth = peak_rss(kube_server.proc.pid) - before
        fake.misbehave = None
        details = caught.value.details()
        assert caught.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.FAILED_PRECONDITION), details
        check_line("pciname: error: " + details, "list nodes", mode)
        assert elapsed < TRICKLE_SECONDS / 4  # --kube-timeout, not the trickle
        assert growth < RSS_GROWTH, f"peak RSS grew {growth >> 20} MiB"
        metadata = dict(caught.value.trailing_metadata() or ())
        assert metadata.get("pciname-error") == "cluster-refused"
        assert stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=120).options  # still serving
    json.dumps(details)  # plain text


def test_readme_states_the_bounds():
    text = " ".join((REPO / "docs" / "limits-and-security.md").read_text().split())
    assert f"at most the first {MAX_ERROR_BYTES >> 10} KiB are read" in text
    assert f"escaped, at most {MAX_MESSAGE_CHARS} characters" in text
