"""The host doctor's Events on its Node (pciname.cluster.node_events), posted
by the real kubernetes client to the fake API server: one Event per finding,
deduplicated (a finding that persists bumps its Event's count; after a
restart the count goes on from the API server's), created again once it
expired, none for a healthy node; a round the API server refuses is one
line, not a traceback; and ``serve --host-events`` posts them."""

from __future__ import annotations

import shutil
import threading
from datetime import datetime

import pytest

from pciname.cluster.kube import connect
from pciname.cluster.node_events import EventLoop, NodeEvents
from pciname.host.doctor.facts import read_host
from pciname.host.doctor.publish import event_name
from pciname.host.doctor.rules import DEFAULT, examine
from pciname.server import NameServer, ServeConfig
from tests.fake_kube import FakeKube, _status
from tests.host.doctor_nodes import passthrough_node, preinstalled_node

GPU = "0000:3b:00.0"
NAME = event_name("gpu-1", "host-driver-preinstalled", GPU)
#: The doctor on a node labelled vm-passthrough that could serve container, not passthrough.
MISMATCH = event_name("gpu-1", "variant-label-mismatch", "gpu-1")


@pytest.fixture
def fake():
    server = FakeKube().start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def preinstalled(tmp_path_factory):
    root = tmp_path_factory.mktemp("node")
    preinstalled_node(root)
    return examine(read_host(root), DEFAULT).findings


def poster(fake, tmp_path) -> NodeEvents:
    kubeconfig = str(fake.kubeconfig(tmp_path))
    return NodeEvents(lambda: connect(kubeconfig, timeout=30), "gpu-1", 30)


def at(stamp: str) -> datetime:
    """An RFC 3339 time as the client sends it (the client's model writes ``+00:00`` for ``Z``)."""
    return datetime.fromisoformat(stamp)


def writes(fake) -> list[tuple[str, str]]:
    return [(r.method, r.path) for r in fake.requests if r.method != "GET"]


def test_a_finding_is_one_event_on_the_node_its_count_growing(fake, tmp_path, preinstalled):
    events = poster(fake, tmp_path)
    assert events.post(preinstalled, "2026-12-08T00:00:00Z").created == [NAME]
    event = fake.events[("default", NAME)]
    assert event["involvedObject"] == {"apiVersion": "v1", "kind": "Node", "name": "gpu-1", "uid": "gpu-1"}
    assert (event["reason"], event["type"], event["count"]) == ("HostDriverPreinstalled", "Warning", 1)
    assert event["message"].startswith(f"{GPU}: ") and " Way back: " in event["message"]
    # the next rounds patch the one Event: no second object
    assert events.post(preinstalled, "2026-12-08T00:05:00Z").counted == {NAME: 2}
    assert events.post(preinstalled, "2026-12-08T00:10:00Z").counted == {NAME: 3}
    assert list(fake.events) == [("default", NAME)]
    held = fake.events[("default", NAME)]
    assert (held["count"], at(held["firstTimestamp"]), at(held["lastTimestamp"])) == (
        3,
        at("2026-12-08T00:00:00Z"),
        at("2026-12-08T00:10:00Z"),
    )
    path = f"/api/v1/namespaces/default/events/{NAME}"
    assert writes(fake) == [("POST", "/api/v1/namespaces/default/events"), ("PATCH", path), ("PATCH", path)]


def test_after_a_restart_the_count_goes_on_and_an_expired_event_comes_back(fake, tmp_path, preinstalled):
    poster(fake, tmp_path).post(preinstalled)
    poster(fake, tmp_path).post(preinstalled)  # a new pod: its create meets the Event (409), reads it
    assert fake.events[("default", NAME)]["count"] == 2
    assert [r.method for r in fake.requests] == ["POST", "POST", "GET", "PATCH"]
    events = poster(fake, tmp_path)
    events.post(preinstalled)
    del fake.events[("default", NAME)]  # the API server's event TTL ran out
    assert events.post(preinstalled).created == [NAME]
    assert fake.events[("default", NAME)]["count"] == 1


def test_a_healthy_node_posts_nothing(fake, tmp_path):
    passthrough_node(tmp_path / "node")
    assert poster(fake, tmp_path).post(examine(read_host(tmp_path / "node"), DEFAULT).findings).created == []
    assert fake.requests == []


def forbidden(handler, request) -> bool:
    """A misbehave hook: the API server refuses every request (no RBAC for Events)."""
    handler._send(403, _status(403, "Forbidden", "events is forbidden"))
    return True


def test_a_refused_round_is_one_line_and_the_next_round_posts(fake, tmp_path):
    preinstalled_node(tmp_path / "node")
    fake.misbehave = forbidden
    reported: list[str] = []
    loop = EventLoop(poster(fake, tmp_path), str(tmp_path / "node"), DEFAULT, 3600, reported.append)
    assert loop.round() is None
    (line,) = reported
    assert line == f"cannot create Event default/{MISMATCH}: 403 events is forbidden"
    fake.misbehave = None
    assert loop.round().created == [MISMATCH, NAME]
    assert fake.events[("default", MISMATCH)]["message"].startswith(
        "gpu-1: labelled vm-passthrough (default), but as it is the node could serve container"
    )
    shutil.rmtree(tmp_path / "node" / "sys")  # a root the doctor cannot read: one line too
    assert loop.round() is None and len(reported) == 2 and "\n" not in reported[1]


def test_serve_with_host_events_posts_at_start(fake, tmp_path, session_cache, monkeypatch):
    preinstalled_node(tmp_path / "node")
    posted = threading.Event()
    fake.misbehave = lambda handler, request: request.method == "POST" and posted.set()  # None: answered as usual
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(session_cache))
    config = ServeConfig(
        listen="127.0.0.1:0",
        insecure=True,
        host_root=str(tmp_path / "node"),
        host_node="gpu-1",
        host_events=3600,
        kubeconfig=str(fake.kubeconfig(tmp_path)),
    )
    config.validate()
    server = NameServer(config)
    server.start()
    try:
        assert posted.wait(60)
    finally:
        server.stop()
    assert list(fake.events) == [("default", MISMATCH), ("default", NAME)]


@pytest.mark.parametrize(
    ("changes", "line"),
    [
        ({"host_node": None}, "--host-events goes with --host-root and --host-node (the Node its Events are on)"),
        ({"host_events": -1}, "--host-events: cannot be negative: -1"),
    ],
)
def test_host_events_wants_a_node_and_a_duration(changes, line):
    from pciname.errors import ServeError

    settings = {"insecure": True, "host_root": "/", "host_node": "gpu-1", "host_events": 60, **changes}
    with pytest.raises(ServeError) as refused:
        ServeConfig(**settings).validate()
    assert str(refused.value) == line
