"""SIGTERM ends ``pciname serve`` past ``--grace`` whatever its handlers do
(issue 22, defect 7): a handler in the middle of a long computation does
not notice that gRPC cancelled its call, and its worker thread kept the
process alive ("stopped" logged, then nothing until SIGKILL). A real
``serve`` process with a handler that computes for minutes (a prelude
makes one: no legal request is that slow), SIGTERM, and the process gone
soon after the grace, with the exit status the README gives a drain (0); and a drain that does not end itself
(only a test can make one) ends the process :data:`DRAIN_MARGIN` seconds
after the delay and the grace."""

from __future__ import annotations

import signal
import subprocess
import time

import grpc
import pytest

from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from pciname.server.app import DRAIN_MARGIN
from tests.conftest import wait_until
from tests.server_util import ServerProcess, metric, scrape, server_env, snapshot_dir

#: The grace SIGTERM gives the handler below.
GRACE = 5
#: What the process may take past the grace to be gone (generous: a busy
#: machine is slow to schedule it; a process kept alive takes minutes).
MARGIN = DRAIN_MARGIN + 20

# A handler that computes without looking at its call. No legal request
# keeps one that long any more (Lint, AdmissionPolicy and GpuOptions check
# the caller's deadline and cancellation inside their work, and their hints
# are bounded), but the next capability may: a prelude makes one, a Resolve
# that spins in Python for ten minutes.
BUSY_HANDLER = """
import time
import pciname.server.service

def _busy(self, request, context, data):
    end = time.monotonic() + 600
    while time.monotonic() < end:
        sum(range(1000))
    raise AssertionError("not reached")

pciname.server.service.PciNameService.resolve = _busy
"""


@pytest.fixture
def busy_server(tmp_path, session_cache):
    """A ``serve`` process whose Resolve handler computes for ten minutes."""
    env = server_env(session_cache, snapshot_dir(tmp_path / "snapshots", []))
    process = ServerProcess(
        ["--listen", "127.0.0.1:0", "--insecure", "--watch-interval", "0", "--grace", str(GRACE)]
        + ["--metrics-listen", "127.0.0.1:0"],
        env,
        prelude=BUSY_HANDLER,
    )
    try:
        yield process.ready(60)
    finally:
        process.close()


def test_sigterm_ends_the_process_past_the_grace_while_a_handler_computes(busy_server):
    with grpc.insecure_channel(busy_server.address) as channel:
        call = pb_grpc.PciNameStub(channel).Resolve.future(pb.ResolveRequest(device="10de:2236"), timeout=600)
        wait_until(
            lambda: metric(scrape(busy_server.metrics_port), "pciname_rpc_in_flight") == 1, 60, "the RPC in flight"
        )
        started = time.monotonic()
        busy_server.signal(signal.SIGTERM)
        try:
            code = busy_server.wait(GRACE + MARGIN)
        except subprocess.TimeoutExpired:
            raise AssertionError(
                f"still running {GRACE + MARGIN} s after SIGTERM:\n{''.join(busy_server.lines)}"
            ) from None
        elapsed = time.monotonic() - started
        assert code == 0, "".join(busy_server.lines)
        assert elapsed >= GRACE  # the grace was given
        busy_server.wait_log("stopped")
        busy_server.wait_log("RPCs still running past --grace; exiting without them", rpcs=1, grace=GRACE)
        with pytest.raises(grpc.RpcError):
            call.result(timeout=60)  # the call was cut off, not answered


# A drain that never ends (a stop that hangs): only a test can make one.
HANGING_DRAIN = """
import threading
import pciname.server.app

_drain = pciname.server.app.NameServer.drain


def _hanging_drain(self, *args, **kwargs):
    _drain(self, *args, **kwargs)
    threading.Event().wait()


pciname.server.app.NameServer.drain = _hanging_drain
"""


def test_a_drain_that_does_not_end_ends_the_process(tmp_path, session_cache):
    env = server_env(session_cache, snapshot_dir(tmp_path / "snapshots", []))
    delay, grace = 0.5, 0.5
    server = ServerProcess(
        ["--listen", "127.0.0.1:0", "--insecure", "--watch-interval", "0"]
        + ["--shutdown-delay", str(delay), "--grace", str(grace)],
        env,
        prelude=HANGING_DRAIN,
    )
    try:
        server.ready(60)
        server.signal(signal.SIGTERM)
        assert server.wait(delay + grace + MARGIN) == 0, "".join(server.lines)
        server.wait_log("stopped")
        server.wait_log("drain not over in time; exiting", seconds=delay + grace + DRAIN_MARGIN)
    finally:
        server.close()
