"""What one request may cost the server (issue 16, item 3): Lint's YAML
nodes are counted before anything is composed (aliases as what they stand
for), at most --max-concurrent-lints run at once, and a cancelled request or
a passed deadline stops the work, while the linter composes too."""

from __future__ import annotations

import threading
import time

import grpc
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from pciname.server import NameServer, ServeConfig
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from pciname.server.budget import (
    CHECK_EVERY,
    DEADLINE_SKEW,
    MAX_YAML_DEPTH,
    CheckedText,
    Slots,
    check_alive,
    count_nodes,
)
from pciname.server.config import DEFAULT_MAX_CONCURRENT_LINTS, DEFAULT_MAX_LINT_NODES, flag_default
from pciname.server.rpc.wire import RpcFailure
from tests.cli_run import pciname
from tests.conftest import ServerSpec
from tests.server_util import metric, scrape

MAX_NODES = 1000


class Context:
    """A grpc.ServicerContext as far as the budget asks it: active until
    ``alive`` calls, then cancelled (or out of time, ``expire=True``)."""

    def __init__(self, alive: int = 10**9, *, expire: bool = False) -> None:
        self.calls = 0
        self.alive = alive
        self.expire = expire

    def is_active(self) -> bool:
        self.calls += 1
        return self.expire or self.calls <= self.alive

    def time_remaining(self) -> float:
        return 0.0 if self.expire and self.calls > self.alive else 100.0


def expanded(node: yaml.Node) -> int:
    """Nodes of a composed tree, a node reached twice (an alias) counted twice."""
    if isinstance(node, yaml.ScalarNode):
        return 1
    if isinstance(node, yaml.SequenceNode):
        return 1 + sum(expanded(n) for n in node.value)
    return 1 + sum(expanded(k) + expanded(v) for k, v in node.value)


scalars = st.sampled_from(["a", "1", "'x y'", "nvidia.com/GA102GL_A10", '""', "null"])
values = st.recursive(
    scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4).map(lambda items: "[" + ", ".join(items) + "]"),
        st.lists(st.tuples(st.sampled_from(["k", "resourceName", "b"]), inner), max_size=4).map(
            lambda pairs: "{" + ", ".join(f"{k}{i}: {v}" for i, (k, v) in enumerate(pairs)) + "}"
        ),
    ),
    max_leaves=20,
)


@settings(max_examples=60, deadline=None)
@given(st.lists(values, min_size=1, max_size=4), st.booleans())
def test_count_is_the_composed_tree_with_aliases_expanded(docs, alias):
    text = "".join(f"---\nd: &d{i} {v}\nagain: *d{i}\n" if alias else f"---\nd: {v}\n" for i, v in enumerate(docs))
    want = sum(expanded(root) for root in yaml.compose_all(text, Loader=yaml.SafeLoader))
    assert count_nodes(text, "t.yaml", 10**6, Context(), flag="--f") == want
    assert count_nodes(text.encode("utf-16"), "t.yaml", 10**6, Context(), flag="--f") == want


def test_count_refuses_past_the_limit_and_deep_nesting():
    text = "- a\n" * 50
    assert count_nodes(text, "a.yaml", 51, Context(), flag="--max-lint-nodes") == 51
    with pytest.raises(RpcFailure) as caught:
        count_nodes(text, "a.yaml", 50, Context(), flag="--max-lint-nodes")
    assert caught.value.code is grpc.StatusCode.INVALID_ARGUMENT
    assert "maximum of 50 YAML nodes in one request (--max-lint-nodes)" in caught.value.details
    assert (
        count_nodes("x: " + "[" * (MAX_YAML_DEPTH - 1) + "]" * (MAX_YAML_DEPTH - 1), "d", 10**6, Context(), flag="-")
        > 0
    )
    with pytest.raises(RpcFailure) as caught:
        count_nodes("x: " + "[" * MAX_YAML_DEPTH, "d", 10**6, Context(), flag="-")
    assert caught.value.details == "d:1:203: YAML nested too deeply to read (more than 200 levels)"


def test_count_stops_when_the_caller_goes():
    text = "- a\n" * (5 * CHECK_EVERY)
    with pytest.raises(RpcFailure) as caught:
        count_nodes(text, "a.yaml", 10**6, Context(alive=2), flag="-")
    assert caught.value.code is grpc.StatusCode.CANCELLED
    with pytest.raises(RpcFailure) as caught:
        count_nodes(text, "a.yaml", 10**6, Context(alive=2, expire=True), flag="-")
    assert caught.value.code is grpc.StatusCode.DEADLINE_EXCEEDED


@pytest.mark.parametrize(
    "text",
    [
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nspec:\n  configuration:\n    permittedHostDevices:\n"
        "      pciHostDevices:\n      - {pciVendorSelector: '10DE:2236', resourceName: nvidia.com/GA102GL_A1, externalResourceProvider: true}\n",
        "a: 1\n\tb: 2\n",
        "é: [ü\n",
        "a: \x07\n",
    ],
)
def test_the_linter_reads_the_checked_stream_as_it_reads_the_text(text):
    """Same findings and the same errors as from the text itself; each read asks the context."""
    from pciname.errors import LintInputError
    from pciname.lint.linter import Linter

    def outcome(source):
        linter = Linter("latest")
        try:
            linter.add_text(source, "f.yaml")
        except LintInputError as error:
            return str(error), error.line
        return [f.format() for f in linter.run()]

    for content in (text, text.encode("utf-8"), text.encode("utf-16"), b"\xff" + text.encode()):
        context = Context()
        assert outcome(CheckedText(content, context)) == outcome(content)
        assert context.calls >= 1
    assert outcome(text)  # a finding or an error: the comparison compared something
    with pytest.raises(RpcFailure):  # the composer stops at the next read once the caller is gone
        list(yaml.compose_all(CheckedText("- a\n" * 20_000, Context(alive=3)), Loader=yaml.SafeLoader))


def test_the_checked_stream_is_composed_by_libyaml_and_still_stops_when_the_caller_goes(monkeypatch):
    """Issue 42: the Lint RPC's stream goes to libyaml's composer (rewound
    for each pass), giving the nodes the text gives; a caller gone midway
    still stops it, with the caller's status (libyaml reads through it too)."""
    from pciname.lint import compose as compose_module

    used: list[bool] = []
    fast = compose_module._compose_fast

    def spy(text, loader_class):
        composed = fast(text, loader_class)
        used.append(composed is not None)
        return composed

    monkeypatch.setattr(compose_module, "_compose_fast", spy)
    text = "a: &x {b: 1}\nc: *x\nd: [1, 2]\n---\nkind: VirtualMachine\n" + "e: f\n" * 3000
    context = Context()
    streamed, _ = compose_module.compose_documents(CheckedText(text, context), "f.yaml")
    assert used == [True] and context.calls >= 2  # read by libyaml, asking the context
    plain, _ = compose_module.compose_documents(text, "f.yaml")
    assert yaml.serialize_all([node for _, node in streamed]) == yaml.serialize_all([node for _, node in plain])
    with pytest.raises(RpcFailure) as caught:
        compose_module.compose_documents(CheckedText("- a\n" * 20_000, Context(alive=3)), "f.yaml")
    assert caught.value.code is grpc.StatusCode.CANCELLED


def test_slots():
    slots = Slots(2, "Lint requests", "--max-concurrent-lints")
    with slots.take(), slots.take():
        with pytest.raises(RpcFailure) as caught:
            slots.take()
        assert caught.value.code is grpc.StatusCode.RESOURCE_EXHAUSTED
        assert (
            caught.value.details
            == "2 Lint requests already running, this server's maximum (--max-concurrent-lints); retry shortly"
        )
    with slots.take(), slots.take():  # released
        pass


def test_defaults_are_the_configs():
    assert flag_default("max_lint_nodes") == DEFAULT_MAX_LINT_NODES == ServeConfig().max_lint_nodes
    assert flag_default("max_concurrent_lints") == DEFAULT_MAX_CONCURRENT_LINTS


# -- on a server ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_spec(session_cache):
    """At most MAX_NODES YAML nodes a Lint, one Lint at a time, metrics."""
    return ServerSpec(
        config={"metrics_listen": "127.0.0.1:0", "max_lint_nodes": MAX_NODES, "max_concurrent_lints": 1},
        cache=session_cache,
    )


def lint(stub, timeout=20, **files):
    try:
        stub.Lint(pb.LintRequest(files=[pb.LintFile(name=n, text=t) for n, t in files.items()]), timeout=timeout)
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as error:
        return error.code(), error.details()


def test_lint_nodes_are_bounded_across_files(stub):
    assert lint(stub, a="- a\n" * 499, b="- a\n" * 499)[0] == grpc.StatusCode.OK  # 500 + 500 nodes
    code, details = lint(stub, a="- a\n" * 499, b="- a\n" * 500)
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert details == (
        f"more than this server's maximum of {MAX_NODES} YAML nodes in one request (--max-lint-nodes), "
        "counting aliases as what they stand for, by b; split the request"
    )


def nested(levels: int) -> str:
    """Block mappings ``levels`` deep, one a line."""
    return "".join(f"{'  ' * i}k:\n" for i in range(levels - 1)) + f"{'  ' * (levels - 1)}k: v\n"


def test_the_depth_budget_holds_on_the_rpc_as_on_the_cli(stub, tmp_path):
    """Lint's declared depth (pciname.requests.limits.MAX_YAML_DEPTH): read
    at the limit, one level past it the same line on both surfaces."""
    at, past = tmp_path / "deep.yaml", tmp_path / "deeper.yaml"
    at.write_text(nested(MAX_YAML_DEPTH))
    past.write_text(nested(MAX_YAML_DEPTH + 1))
    assert lint(stub, **{"deep.yaml": at.read_text()}) == (grpc.StatusCode.OK, "")
    assert pciname("lint", at).code == 0
    line = "201:401: YAML nested too deeply to read (more than 200 levels)"
    assert lint(stub, **{"deeper.yaml": past.read_text()}) == (grpc.StatusCode.INVALID_ARGUMENT, f"deeper.yaml:{line}")
    assert tuple(pciname("lint", past)) == (2, "", f"pciname: {past}:{line}\n")


def test_a_billion_laughs_is_refused_at_once(stub):
    laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)
    )
    code, details = lint(stub, **{"laughs.yaml": laughs})
    assert code == grpc.StatusCode.INVALID_ARGUMENT and "YAML nodes in one request" in details


def test_lint_beyond_the_concurrency_limit_is_resource_exhausted(server, stub):
    with server.service.lint_slots.take():  # a Lint in flight
        code, details = lint(stub, a="a: 1\n")
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "(--max-concurrent-lints)" in details
        assert stub.Resolve(pb.ResolveRequest(device="10de:2236"), timeout=20).resource_name == "nvidia.com/GA102GL_A10"
    assert lint(stub, a="a: 1\n")[0] == grpc.StatusCode.OK


#: The passed-deadline Lint's deadline: ample for what the server does before
#: it composes (a request of 20,000 nodes counted), and how long the test takes.
DEADLINE = 4.0


def test_a_passed_deadline_stops_the_lint(session_cache):
    """A Lint whose deadline passes while the server composes gives up at
    its next look, before the composer has read the whole text, and records
    DEADLINE_EXCEEDED, not the OK of work done for nobody.

    Held on events, not on the machine's speed: the composer's first read
    waits until the deadline has passed by the server's own clock. (Waiting
    only until the caller had its DEADLINE_EXCEEDED was not enough: the
    server counts the deadline from when it read the request's headers, a
    few milliseconds after the client, so the look could find the call gone
    with its deadline still ahead, and it said CANCELLED; it now says
    DEADLINE_EXCEEDED for a caller gone that close to it, as the streaming
    handlers do: test_a_caller_gone_at_its_deadline_is_a_deadline.)"""
    from pciname.server import budget

    text = "- a\n" * 20_000  # 80 KB, read by the composer 4 KiB at a time
    reads: list[int] = []
    armed, held = threading.Event(), threading.Event()
    read = budget.CheckedText.read

    def counted(self, size=-1):
        if armed.is_set() and not held.is_set():
            held.set()
            while (remaining := self._context.time_remaining()) > 0:
                time.sleep(remaining)  # until the server's deadline has passed
        reads.append(size)
        return read(self, size)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(budget.CheckedText, "read", counted)
        mp.setenv("PCINAME_CACHE_DIR", str(session_cache))
        mp.delenv("PCINAME_SNAPSHOTS", raising=False)
        s = NameServer(ServeConfig(listen="127.0.0.1:0", insecure=True, watch_interval=0, metrics_listen="127.0.0.1:0"))
        s.start()
        assert s.reload("startup")
        try:
            with grpc.insecure_channel(f"127.0.0.1:{s.port}") as channel:
                stub = pb_grpc.PciNameStub(channel)
                # the lint RPC's modules load on first use: load them first
                assert lint(stub, a="a: 1\n")[0] == grpc.StatusCode.OK
                reads.clear()
                armed.set()
                code, _ = lint(stub, timeout=DEADLINE, a=text)
            assert code == grpc.StatusCode.DEADLINE_EXCEEDED
            assert held.is_set(), f"the server did not begin composing within the {DEADLINE} s deadline"
            samples: dict = {}
            for _ in range(1200):  # the handler ends on its own
                try:
                    samples = scrape(s.metrics_port)
                except OSError:  # a busy metrics server dropped one scrape: ask again
                    time.sleep(0.1)
                    continue
                if metric(samples, "pciname_rpc_requests_total", method="Lint", code="DEADLINE_EXCEEDED"):
                    break
                time.sleep(0.1)
            assert metric(samples, "pciname_rpc_requests_total", method="Lint", code="DEADLINE_EXCEEDED") == 1
            assert metric(samples, "pciname_rpc_requests_total", method="Lint", code="OK") == 1  # the warm-up only
            assert 0 < sum(reads) < len(text)  # the composer stopped part-way
        finally:
            s.stop()


class _Gone:
    """A servicer context whose caller has gone, ``remaining`` seconds before its deadline."""

    def __init__(self, remaining: float | None) -> None:
        self.remaining = remaining

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> float | None:
        return self.remaining


@pytest.mark.parametrize(
    ("remaining", "code"),
    [
        (0.004, grpc.StatusCode.DEADLINE_EXCEEDED),  # the client's deadline, a moment before the server's
        (DEADLINE_SKEW, grpc.StatusCode.DEADLINE_EXCEEDED),
        (0.0, grpc.StatusCode.DEADLINE_EXCEEDED),
        (DEADLINE_SKEW + 0.5, grpc.StatusCode.CANCELLED),
        (None, grpc.StatusCode.CANCELLED),  # no deadline
    ],
)
def test_a_caller_gone_at_its_deadline_is_a_deadline(remaining, code):
    """The client cancels at its deadline, a few milliseconds before the
    server's (counted from when it read the headers): a caller gone that
    close to the deadline went at the deadline, as the streaming handlers
    count it, not CANCELLED."""
    with pytest.raises(RpcFailure) as caught:
        check_alive(_Gone(remaining))
    assert caught.value.code == code


def test_gpu_options_yaml_is_bounded_too(stub):
    laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)
    )
    for request in (
        pb.GpuOptionsRequest(kubevirt=laughs),
        pb.GpuOptionsRequest(kubevirt="kind: KubeVirt\n", nodes="- a\n" * 2000),
    ):
        with pytest.raises(grpc.RpcError) as caught:
            stub.GpuOptions(request, timeout=20)
        assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
        assert f"maximum of {MAX_NODES} YAML nodes in one request (--max-lint-nodes)" in caught.value.details()


def test_a_large_lint_gives_its_memory_back(session_cache):
    """Issue 16: "The memory is not returned": after one Lint of 100,000
    nodes a server stayed at its peak (+57 MB). It frees it after the
    request (glibc kept what the worker thread's arena held)."""

    def rss_mb() -> float:
        with open("/proc/self/status") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) / 1024
        raise AssertionError("no VmRSS")

    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PCINAME_CACHE_DIR", str(session_cache))
        mp.delenv("PCINAME_SNAPSHOTS", raising=False)
        s = NameServer(ServeConfig(listen="127.0.0.1:0", insecure=True, watch_interval=0))
        s.start()
        assert s.reload("startup")
        try:
            with grpc.insecure_channel(f"127.0.0.1:{s.port}") as channel:
                stub = pb_grpc.PciNameStub(channel)
                text = "- a\n" * (DEFAULT_MAX_LINT_NODES - 10)
                assert lint(stub, timeout=120, small="a: 1\n")[0] == grpc.StatusCode.OK
                before = rss_mb()
                assert lint(stub, timeout=120, big=text)[0] == grpc.StatusCode.OK
                grown = rss_mb() - before
            assert grown < 25, f"{grown:.0f} MB kept after the request"
        finally:
            s.stop()
