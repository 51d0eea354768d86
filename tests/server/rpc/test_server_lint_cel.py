"""A Lint whose caller goes while a DRA selector is judged (issue 36, item
1): on a real server over loopback with one lint slot, the judging stops at
its next look at the caller (its deadline passed, or it cancelled) and the
slot is free for the next Lint. Nothing here waits on speed: the judging is
held at its start until the caller has gone (an Event), and the test waits
on Events for the judging's end and the slot's release."""

from __future__ import annotations

import threading

import grpc
import pytest
import yaml

from pciname.dra import selectors
from pciname.server import budget
from pciname.server._proto import pciname_pb2 as pb
from tests.conftest import ServerSpec

D = 'device.attributes["gpu.nvidia.com"]'
#: Judged on every device of the release (size() of the device's
#: attributes): without the caller's check, seconds of work for nobody.
HOSTILE = " || ".join(f"size({D}) == {1000 + i}" for i in range(150))
WAIT = 120  # seconds; only a failure waits this long


@pytest.fixture(scope="module")
def server_spec(session_cache):
    return ServerSpec(config={"max_concurrent_lints": 1}, cache=session_cache)


def claim(expression: str) -> str:
    one = {"deviceClassName": "vfio.gpu.nvidia.com", "selectors": [{"cel": {"expression": expression}}]}
    return yaml.safe_dump(
        {
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceClaimTemplate",
            "metadata": {"name": "c"},
            "spec": {"spec": {"devices": {"requests": [{"name": "gpu1", "exactly": one}]}}},
        },
        width=10**6,
    )


def request(expression: str) -> pb.LintRequest:
    return pb.LintRequest(files=[pb.LintFile(name="claim.yaml", text=claim(expression))])


class Held:
    """Holds the judging of HOSTILE at its start until :attr:`go`; records
    how the judging ended and when the lint slot is given back."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.started, self.go, self.ended, self.freed = (threading.Event() for _ in range(4))
        self.outcome: list[str] = []
        parse, judge, release = selectors.parse, selectors._judge, budget._Slot.__exit__

        def held_parse(text, *args, **kwargs):
            if text == HOSTILE:
                self.started.set()
                self.go.wait(WAIT)
            return parse(text, *args, **kwargs)

        def recorded_judge(expression, *args, **kwargs):
            try:
                verdict = judge(expression, *args, **kwargs)
                self.outcome.append("judged to the end")
                return verdict
            except BaseException as error:
                self.outcome.append(getattr(getattr(error, "code", None), "name", type(error).__name__))
                raise
            finally:
                self.ended.set()

        def freed(slot, *exc):
            release(slot, *exc)
            self.freed.set()

        monkeypatch.setattr(selectors, "parse", held_parse)
        monkeypatch.setattr(selectors, "_judge", recorded_judge)
        monkeypatch.setattr(budget._Slot, "__exit__", freed)
        selectors._VERDICTS.clear()


def small_lint_is_served(stub) -> None:
    response = stub.Lint(request(f'{D}.deviceID == "0x2236"'), timeout=60)
    assert response.documents == 1


def test_a_lint_past_its_deadline_stops_judging_and_frees_its_slot(stub, monkeypatch):
    small_lint_is_served(stub)  # the lint modules and the release's devices are loaded
    held = Held(monkeypatch)
    with pytest.raises(grpc.RpcError) as caught:
        stub.Lint(request(HOSTILE), timeout=1)
    assert caught.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED
    assert held.started.is_set()  # the deadline passed while the selector was being judged
    held.freed.clear()
    held.go.set()
    assert held.ended.wait(WAIT) and held.freed.wait(WAIT)
    assert held.outcome in (["DEADLINE_EXCEEDED"], ["CANCELLED"])  # check_alive: the RPC is no longer active either
    small_lint_is_served(stub)  # not RESOURCE_EXHAUSTED


def test_a_cancelled_lint_stops_judging_and_frees_its_slot(stub, monkeypatch):
    small_lint_is_served(stub)
    held = Held(monkeypatch)
    call = stub.Lint.future(request(HOSTILE), timeout=WAIT)
    assert held.started.wait(WAIT)
    held.freed.clear()
    call.cancel()
    held.go.set()
    assert held.ended.wait(WAIT) and held.freed.wait(WAIT)
    assert held.outcome == ["CANCELLED"]
    small_lint_is_served(stub)


@pytest.mark.parametrize(
    "expression",
    [
        " && ".join(["true"] * 1200),
        "(" * 1200 + "true" + ")" * 1200,
        "!" * 1201 + "false",
        f"{D}.numa == 010",
    ],
)
def test_valid_cel_is_no_yaml_nested_too_deeply(stub, expression):
    """Valid CEL the reader once recursed on: answered, never INVALID_ARGUMENT
    "the YAML is nested too deeply" (the YAML is flat)."""
    response = stub.Lint(request(expression), timeout=60)
    assert response.documents == 1
