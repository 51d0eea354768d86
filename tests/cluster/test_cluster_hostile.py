"""Cluster reads against an API server that misbehaves and kubeconfigs that
point at hostile files (issue 16, items 5, 6, 9, 10 and 11): the real
kubernetes client, the fake API server of tests/fake_kube.py on 127.0.0.1,
the CLI in-process or as a subprocess (where a hang is the bug), and the
GpuOptions(from_cluster) RPC of a server started with --kube."""

from __future__ import annotations

import json
import os
import sys
import threading
import time

import grpc
import pytest

from pciname.cli import main
from pciname.cluster.kube import MAX_RESPONSE_BYTES, NODE_PAGE, connect, read_cluster
from pciname.kubevirt.shapes import ShapeError, decode_json, quantity
from pciname.server import NameServer, ServeConfig
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from tests.cli_run import pciname as run, pciname_process
from tests.cluster.conftest import A10
from tests.conftest import ServerSpec
from tests.fake_kube import TOKEN, FakeKube, kubevirt, node

# The misbehaving API server (tests/cluster/conftest.py), its hook cleared after each test.
pytestmark = pytest.mark.usefixtures("well_behaved")


def cli_process(*argv, env=None, timeout=60):
    """The CLI as a subprocess: a hang is a failure (TimeoutExpired), not a stuck test run."""
    unset = dict.fromkeys(("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"))
    return pciname_process(*argv, env={**unset, "NO_PROXY": "127.0.0.1", **(env or {})}, timeout=timeout)


def answer(path_prefix, body: bytes, status=200, headers=None):
    """A misbehave hook: ``body`` for requests under ``path_prefix``."""

    def hook(handler, request):
        if not request.path.startswith(path_prefix):
            return False
        handler.send_response(status)
        handler.send_header("Content-Type", "application/json")
        for key, value in (headers or {"Content-Length": str(len(body))}).items():
            handler.send_header(key, value)
        handler.end_headers()
        handler.wfile.write(body)
        return True

    return hook


def node_list(*items) -> bytes:
    return json.dumps({"kind": "NodeList", "apiVersion": "v1", "metadata": {}, "items": list(items)}).encode()


# -- odd answers: a one-line error, exit 2 / a status, never a traceback or INTERNAL ----------

ODD_NODES = {
    "not-json": b"<html>502 Bad Gateway</html>",
    "top-level-list": b"[]",
    "items-a-string": b'{"kind": "NodeList", "items": "abc"}',
    "item-a-number": b'{"kind": "NodeList", "items": [1]}',
    "allocatable-a-list": node_list({"metadata": {"name": "n"}, "status": {"allocatable": ["x"]}}),
    "quantity-1e400-text": node_list({"metadata": {"name": "n"}, "status": {"allocatable": {"nvidia.com/X": "1e400"}}}),
    "quantity-1e400-number": b'{"kind": "NodeList", "items": [{"metadata": {"name": "n"}, "status": '
    b'{"allocatable": {"nvidia.com/X": 1e400}}}]}',
    "quantity-5000-digits": node_list(
        {"metadata": {"name": "n"}, "status": {"allocatable": {"nvidia.com/X": "9" * 5000}}}
    ),
    "quantity-inf": node_list({"metadata": {"name": "n"}, "status": {"capacity": {"nvidia.com/X": "Infinity"}}}),
    "number-5000-digits": b'{"kind": "NodeList", "items": [{"metadata": {"name": "n"}, "status": '
    b'{"allocatable": {"nvidia.com/X": ' + b"9" * 5000 + b"}}}]}",
    "nan": b'{"kind": "NodeList", "items": NaN}',
    "name-null": node_list({"metadata": {"name": None}, "status": {"allocatable": {"nvidia.com/X": "1"}}}),
    "label-an-integer": node_list({"metadata": {"name": "n", "labels": {"a": 1}}}),
    "deep": b"[" * 100_000 + b"]" * 100_000,
    "continue-a-number": b'{"kind": "NodeList", "metadata": {"continue": 5}, "items": []}',
}
ODD_KUBEVIRTS = {
    "kubevirt-items-numbers": b'{"kind": "KubeVirtList", "items": [1, 2]}',
    "kubevirt-permitted-a-string": json.dumps(
        {
            "kind": "KubeVirtList",
            "items": [
                {
                    "kind": "KubeVirt",
                    "metadata": {"name": "k", "namespace": "kv"},
                    "spec": {"configuration": {"permittedHostDevices": "all"}},
                }
            ],
        }
    ).encode(),
    "kubevirt-label-a-list": json.dumps(
        {
            "kind": "KubeVirtList",
            "items": [{"kind": "KubeVirt", "metadata": {"name": "k", "namespace": "kv", "labels": {"x": ["y"]}}}],
        }
    ).encode(),
}
ODD = [("/api/v1/nodes", k, v) for k, v in ODD_NODES.items()] + [
    ("/apis/kubevirt.io", k, v) for k, v in ODD_KUBEVIRTS.items()
]


@pytest.mark.parametrize(("path", "mode", "body"), ODD, ids=[m for _, m, _ in ODD])
def test_odd_api_answers_are_one_line_errors(fake, tmp_path, capsys, path, mode, body):
    fake.misbehave = answer(path, body)
    config = fake.kubeconfig(tmp_path)
    for command in ("audit", "gpu-options"):
        code, out, err = run(command, "--kubeconfig", config)
        assert (code, out) == (2, ""), (command, err)
        assert err.startswith("pciname: error: cannot list ") and err.count("\n") == 1, err
        assert "Traceback" not in err and len(err) < 600
    code, out, err = run("apply", "permitted-host-devices", "10de:2236", "--kubeconfig", config)
    assert (code, out) == (2, "") and err.startswith("pciname: error: cannot list ") and err.count("\n") == 1


@pytest.fixture(scope="module")
def server_spec(fake, tmp_path_factory, session_cache):
    """conftest's server with ``--kube`` on the misbehaving API server."""
    config = fake.kubeconfig(tmp_path_factory.mktemp("kube"))
    return ServerSpec(
        config={"kube": True, "kubeconfig": str(config), "kube_timeout": 5},
        cache=session_cache,
        env={"NO_PROXY": "127.0.0.1"},
    )


@pytest.mark.parametrize(("path", "mode", "body"), ODD, ids=[m for _, m, _ in ODD])
def test_gpu_options_from_an_odd_cluster_is_unavailable_not_internal(fake, stub, path, mode, body):
    fake.misbehave = answer(path, body)
    with pytest.raises(grpc.RpcError) as caught:
        stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=20)
    assert caught.value.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.FAILED_PRECONDITION), (
        caught.value.details()
    )
    assert "\n" not in caught.value.details() and len(caught.value.details()) < 600
    fake.misbehave = None
    assert stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=20).options  # still serving


def test_quantities_are_read_as_kubernetes_reads_them():
    assert [quantity(v, "q") for v in ("4", 4, " 2 ", "1k", "2Ki", "1500m", "3e2", "0", 1.9)] == [
        4,
        4,
        2,
        1000,
        2048,
        1,
        300,
        0,
        1,
    ]
    for bad in (
        "1e400",
        "9" * 5000,
        "Infinity",
        "-1",
        "abc",
        "",
        float("inf"),
        float("nan"),
        None,
        True,
        ["1"],
        "1e",
        "2**64",
    ):
        with pytest.raises(ShapeError):
            quantity(bad, "q")
    with pytest.raises(ShapeError, match="out of range"):
        quantity(str(2**63), "q")
    assert decode_json(b'{"a": [1, 2.5]}', "x") == {"a": [1, 2.5]}
    for bad in (b"NaN", b"1e400", b"-Infinity", b"9" * 100, b"[" * 100_000, b"\xff"):
        with pytest.raises(ShapeError):
            decode_json(bad, "x")


# -- no answer, trickled and huge answers, pages -----------------------------------------------


def test_an_api_server_that_never_answers_times_out(fake, tmp_path):
    release = threading.Event()

    def hang(handler, request):
        release.wait(60)
        return True

    fake.misbehave = hang
    sent = len(fake.requests)
    try:
        started = time.monotonic()
        proc = cli_process("audit", "--kubeconfig", fake.kubeconfig(tmp_path), "--timeout", "1")
        assert proc.returncode == 2 and proc.stdout == ""
        assert (
            proc.stderr == "pciname: error: cannot list KubeVirt CRs: the API server did not answer within 1 seconds\n"
        )
        assert time.monotonic() - started < 30  # not waiting for the hang's 60 s
        assert len(fake.requests) - sent == 1  # not retried (urllib3 tried 3 times more, each with the whole timeout)
    finally:
        release.set()


def test_a_trickled_answer_runs_out_of_time(fake, tmp_path):
    def trickle(handler, request):
        if not request.path.startswith("/api/v1/nodes"):
            return False
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "100000")
        handler.end_headers()
        try:
            for _ in range(300):  # a byte every 0.1 s: each read succeeds, the whole never ends
                handler.wfile.write(b" ")
                handler.wfile.flush()
                time.sleep(0.1)
        except OSError:
            pass
        return True

    fake.misbehave = trickle
    proc = cli_process("gpu-options", "--kubeconfig", fake.kubeconfig(tmp_path), "--timeout", "2")
    assert proc.returncode == 2
    assert proc.stderr == "pciname: error: cannot list nodes: the API server did not answer within 2 seconds\n"


def test_a_huge_answer_is_refused(fake, tmp_path, capsys):
    fake.misbehave = answer("/api/v1/nodes", b"{}", headers={"Content-Length": str(300 << 20)})
    code, _, err = run("gpu-options", "--kubeconfig", fake.kubeconfig(tmp_path))
    assert code == 2 and err == (
        f"pciname: error: cannot list nodes: the API server's answer is {300 << 20} bytes, "
        f"more than the {MAX_RESPONSE_BYTES} allowed\n"
    )

    def chunked(handler, request):  # no length: refused once past the limit
        if not request.path.startswith("/api/v1/nodes"):
            return False
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Transfer-Encoding", "chunked")
        handler.end_headers()
        chunk = b" " * (1 << 20)
        try:
            for _ in range(MAX_RESPONSE_BYTES // len(chunk) + 2):
                handler.wfile.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            handler.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass
        return True

    fake.misbehave = chunked
    code, _, err = run("gpu-options", "--kubeconfig", fake.kubeconfig(tmp_path))
    assert code == 2 and err == (
        f"pciname: error: cannot list nodes: the API server's answer is more than the "
        f"{MAX_RESPONSE_BYTES} bytes allowed\n"
    )


def test_nodes_are_read_page_by_page(tmp_path, capsys):
    count = 2 * NODE_PAGE + 3
    server = FakeKube(
        nodes=[node(f"gpu-{i:04d}", {"nvidia.com/GA102GL_A10": "1"}) for i in range(count)],
        kubevirts=[kubevirt({"pciHostDevices": [A10]})],
    ).start()
    try:
        state = read_cluster(connect(str(server.kubeconfig(tmp_path))), timeout=30)
        assert [n["metadata"]["name"] for n in state.nodes] == [f"gpu-{i:04d}" for i in range(count)]
        pages = [r.query for r in server.requests if r.path == "/api/v1/nodes"]
        assert [p["limit"] for p in pages] == [[str(NODE_PAGE)]] * 3
        assert [p.get("continue") for p in pages] == [None, [str(NODE_PAGE)], [str(2 * NODE_PAGE)]]
        code, out, _ = run("gpu-options", "--kubeconfig", server.kubeconfig(tmp_path), "-o", "json")
        assert code == 0 and json.loads(out)[0]["allocatable"] == count
    finally:
        server.stop()


def test_timeout_flag(fake, tmp_path, capsys):
    for bad in ("0", "-1", "nan", "inf", "x"):
        with pytest.raises(SystemExit) as caught:
            main(["audit", "--timeout", bad])
        assert caught.value.code == 2
    capsys.readouterr()
    from pciname.cli.cluster import TIMEOUT_DEFAULT_SHOWN
    from pciname.cluster.kube import DEFAULT_TIMEOUT
    from pciname.server.config import DEFAULT_KUBE_TIMEOUT

    assert float(TIMEOUT_DEFAULT_SHOWN) == DEFAULT_TIMEOUT == DEFAULT_KUBE_TIMEOUT == 30
    with pytest.raises(SystemExit):
        main(["gpu-options", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"(default {TIMEOUT_DEFAULT_SHOWN})" in shown and "credential plugin" in shown
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    assert "its credential plugin (users[].user.exec) runs, as with kubectl" in " ".join(
        capsys.readouterr().out.split()
    )


# -- files a kubeconfig names, and every KUBECONFIG path -------------------------------------------


def kubeconfig_with(fake, directory, user: dict, cluster: dict | None = None):
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "current-context": "fake",
        "clusters": [{"name": "fake", "cluster": {"server": fake.url, **(cluster or {})}}],
        "contexts": [{"name": "fake", "context": {"cluster": "fake", "user": "u"}}],
        "users": [{"name": "u", "user": user}],
    }
    path = directory / "kubeconfig"
    path.write_text(json.dumps(config))
    return path


def test_named_files_are_read_bounded(fake, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    (tmp_path / "token").write_text(TOKEN + "\n")
    good = kubeconfig_with(fake, tmp_path, {"tokenFile": "token"})  # relative to the kubeconfig
    proc = cli_process("gpu-options", "--kubeconfig", good, "-o", "json")
    assert proc.returncode == 0, proc.stderr
    for user in (
        {"tokenFile": "/dev/zero"},
        {"tokenFile": str(fifo)},
        {"client-certificate": str(fifo), "client-key": str(fifo)},
    ):
        hostile = tmp_path / "hostile"
        hostile.mkdir(exist_ok=True)
        proc = cli_process("gpu-options", "--kubeconfig", kubeconfig_with(fake, hostile, user), timeout=30)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1, proc.stderr
        assert "not a regular file" in proc.stderr
    proc = cli_process(
        "audit",
        "--kubeconfig",
        kubeconfig_with(fake, hostile, {"token": TOKEN}, {"certificate-authority": str(fifo)}),
        timeout=30,
    )
    assert proc.returncode == 2 and "not a regular file" in proc.stderr


def test_every_kubeconfig_path_is_read_bounded(fake, tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    good = fake.kubeconfig(tmp_path)
    for listed in (f"{good}{os.pathsep}{fifo}", f"{tmp_path / 'missing'}{os.pathsep}/dev/zero{os.pathsep}{good}"):
        proc = cli_process("audit", env={"KUBECONFIG": listed}, timeout=30)
        assert proc.returncode == 2 and proc.stderr.count("\n") == 1
        assert "cannot read kubeconfig" in proc.stderr and "not a regular file" in proc.stderr
    proc = cli_process("gpu-options", "-o", "json", env={"KUBECONFIG": f"{tmp_path / 'missing'}{os.pathsep}{good}"})
    assert proc.returncode == 0, proc.stderr  # a listed file that does not exist is skipped, as kubectl does


# -- credential plugins --------------------------------------------------------------------------


def plugin(directory, body: str):
    script = directory / "plugin.py"
    script.write_text(f"#!{sys.executable}\n{body}\n")
    script.chmod(0o755)
    return script


def exec_user(script, **extra):
    return {
        "exec": {
            "apiVersion": "client.authentication.k8s.io/v1",
            "command": str(script),
            "args": [],
            "interactiveMode": "Never",
            **extra,
        }
    }


COUNTING = (
    """
import json, os, pathlib, datetime
runs = pathlib.Path(os.environ["RUNS"])
runs.write_text(runs.read_text() + "x" if runs.exists() else "x")
info = json.loads(os.environ["KUBERNETES_EXEC_INFO"])
assert info["kind"] == "ExecCredential" and info["spec"]["interactive"] is False
expires = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(seconds=int(os.environ.get("LIFE", "3600")))
print(json.dumps({"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential",
                  "status": {"token": "%s", "expirationTimestamp": expires.strftime("%%Y-%%m-%%dT%%H:%%M:%%SZ")}}))
"""
    % TOKEN
)


def test_the_server_runs_a_credential_plugin_once(fake, tmp_path, session_cache, monkeypatch):
    runs = tmp_path / "runs"
    config = kubeconfig_with(
        fake, tmp_path, exec_user(plugin(tmp_path, COUNTING), env=[{"name": "RUNS", "value": str(runs)}])
    )
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(session_cache))
    monkeypatch.delenv("PCINAME_SNAPSHOTS", raising=False)
    server = NameServer(
        ServeConfig(listen="127.0.0.1:0", insecure=True, watch_interval=0, kube=True, kubeconfig=str(config))
    )
    server.start()
    assert server.reload("startup")
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            stub = pb_grpc.PciNameStub(channel)
            for _ in range(20):
                assert stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=20).options
            assert runs.read_text() == "x"  # once (at start-up), not once per request
            fake.misbehave = answer(
                "/apis/", json.dumps({"kind": "Status", "code": 401, "message": "Unauthorized"}).encode(), 401
            )
            with pytest.raises(grpc.RpcError) as caught:
                stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=20)
            assert caught.value.code() == grpc.StatusCode.FAILED_PRECONDITION
            fake.misbehave = None
            assert stub.GpuOptions(pb.GpuOptionsRequest(from_cluster=True), timeout=20).options
            assert runs.read_text() == "xx"  # refused credentials are renewed
            assert server.cluster.loads == 2
    finally:
        server.stop()


def test_a_credential_plugin_about_to_expire_runs_again(fake, tmp_path, capsys):
    runs = tmp_path / "runs"
    env = [{"name": "RUNS", "value": str(runs)}, {"name": "LIFE", "value": "60"}]  # within the 5-minute skew
    from pciname.server.rpc.cluster import ClusterAccess

    access = ClusterAccess(str(kubeconfig_with(fake, tmp_path, exec_user(plugin(tmp_path, COUNTING), env=env))))
    for _ in range(3):
        assert access.read(None, 10).kubevirt is not None
    assert runs.read_text() == "xxx"
    access.close()


def test_a_credential_plugin_that_never_returns_is_bounded(fake, tmp_path, session_cache):
    pid_file = tmp_path / "pid"
    script = plugin(tmp_path, f"import os, time\nopen({str(pid_file)!r}, 'w').write(str(os.getpid()))\ntime.sleep(600)")
    config = kubeconfig_with(fake, tmp_path, exec_user(script))
    proc = cli_process("gpu-options", "--kubeconfig", config, "--timeout", "2", timeout=40)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"pciname: error: cannot load the cluster configuration: the kubeconfig's credential plugin "
        f"{script} did not finish within 2 seconds\n"
    )
    with pytest.raises(ProcessLookupError):
        os.kill(int(pid_file.read_text()), 0)  # killed, not left behind
    server = NameServer(
        ServeConfig(
            listen="127.0.0.1:0", insecure=True, watch_interval=0, kube=True, kubeconfig=str(config), kube_timeout=1
        )
    )
    with pytest.raises(Exception, match="did not finish within 1 seconds"):
        server.start()
    server.stop()


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        ("import sys; sys.exit(3)", "exited 3"),
        ("print('not json')", "not valid JSON"),
        (
            'print(\'{"kind": "ExecCredential", "apiVersion": "v0", "status": {"token": "t"}}\')',
            "answered apiVersion v0",
        ),
        ("import sys; sys.stdout.write('x' * (3 << 20))", "wrote more than"),
    ],
)
def test_a_credential_plugin_that_fails_is_one_line(fake, tmp_path, capsys, body, needle):
    config = kubeconfig_with(fake, tmp_path, exec_user(plugin(tmp_path, body)))
    code, out, err = run("gpu-options", "--kubeconfig", config, "--timeout", "20")
    assert (code, out) == (2, "") and err.count("\n") == 1 and needle in err, err
