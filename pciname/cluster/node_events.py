"""The host doctor's Events on its Node: each finding of the node's
checkup is one core/v1 Event (:func:`pciname.host.doctor.publish.events`:
reason the diagnosis code, message the finding and its way back), posted
deduplicated as client-go's event correlator folds a repeat: the first
round creates it, each later round that still finds it patches its
``count`` and ``lastTimestamp`` (and the message, which may say more), and
after a restart a create that meets the Event (409) reads its count and
goes on from there. A finding that is gone is posted no more; its Event
expires with the API server's event TTL (an hour by default).

:class:`NodeEvents` posts one round; :class:`EventLoop` judges the node and
posts a round at start and every ``interval`` seconds, on its own thread,
until stopped (``serve --host-root DIR --host-events SECONDS``: the doctor's
DaemonSet). A round that cannot reach the API server is logged in one line
and tried again at the next. Every request goes through
:mod:`pciname.cluster.kube`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Protocol

from pciname.cluster.kube import connect, create_event, patch_event, read_event
from pciname.errors import PcinameError
from pciname.host.doctor.facts import read_host
from pciname.host.doctor.fleet import WORKLOAD_LABEL, node_line
from pciname.host.doctor.publish import events
from pciname.host.doctor.rules import WORKLOADS, Finding, examine


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


@dataclass
class Round:
    """What one round posted: Events created, and Events whose count grew (name -> count)."""

    created: list[str] = field(default_factory=list)
    counted: dict[str, int] = field(default_factory=dict)


class NodeEvents:
    """Posts the findings of ``node`` as Events through the API client
    ``connect()`` gives (one per round), each request within ``timeout`` seconds."""

    def __init__(self, connect: Callable[[], Any], node: str, timeout: float) -> None:
        self.connect, self.node, self.timeout = connect, node, timeout
        #: name -> the count the API server holds, for the Events of the last round.
        self.counts: dict[str, int] = {}

    def post(self, findings: Iterable[Finding], now: str | None = None) -> Round:
        """One round: each finding's Event created or its count bumped."""
        now = now or _now()
        api = self.connect()
        done = Round()
        counts: dict[str, int] = {}
        try:
            for event in events(self.node, findings, now):
                name, namespace = event["metadata"]["name"], event["metadata"]["namespace"]
                count = self._bump(api, event, self.counts.get(name), now)
                if count is None:
                    if create_event(api, event, timeout=self.timeout):
                        done.created.append(name)
                        counts[name] = 1
                        continue
                    existing = read_event(api, namespace, name, timeout=self.timeout) or {}
                    held = existing.get("count")
                    count = self._bump(api, event, held if isinstance(held, int) and held > 0 else 1, now)
                if count is not None:
                    done.counted[name] = counts[name] = count
        finally:
            self.counts = counts
            close = getattr(api, "close", None)
            if close is not None:
                close()
        return done

    def _bump(self, api: Any, event: dict[str, Any], held: int | None, now: str) -> int | None:
        """Patch the Event held at ``held`` to one more (None: not held, or gone)."""
        if held is None:
            return None
        meta = event["metadata"]
        patch = {"count": held + 1, "lastTimestamp": now, "message": event["message"]}
        if not patch_event(api, meta["namespace"], meta["name"], patch, timeout=self.timeout):
            return None
        return held + 1


class EventLoop:
    """Judge the node under ``root`` for ``variant`` and post its findings
    (``poster``) at start and every ``interval`` seconds until :meth:`stop`:
    the variant's, and ``variant-label-mismatch`` where the node could serve
    another variant but not its own (it runs where the label names it);
    a round that fails is ``report``ed (one line)."""

    def __init__(
        self, poster: NodeEvents, root: str, variant: str, interval: float, report: Callable[[str], None]
    ) -> None:
        self.poster, self.root, self.variant, self.interval, self.report = poster, root, variant, interval, report
        self.rounds = 0  # rounds tried
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="pciname-node-events", daemon=True)

    def start(self) -> EventLoop:
        self._thread.start()
        return self

    def stop(self, wait: float = 5.0) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(wait)

    def round(self) -> Round | None:
        """One round (None: it failed, and was logged)."""
        self.rounds += 1
        try:
            line = node_line(self.poster.node, {WORKLOAD_LABEL: WORKLOADS[self.variant]}, examine(read_host(self.root)))
            return self.poster.post(line.findings)
        except PcinameError as error:
            self.report(str(error))
            return None

    def _run(self) -> None:
        while True:
            self.round()
            if self._stop.wait(self.interval):
                return


class Settings(Protocol):
    """What :func:`started` reads (``pciname serve``'s ServeConfig has them all)."""

    host_root: str | None
    host_variant: str
    host_node: str | None
    host_events: float
    kubeconfig: str | None
    kube_context: str | None
    kube_timeout: float


def started(settings: Settings, report: Callable[[str], None]) -> EventLoop:
    """A running :class:`EventLoop` for ``settings.host_node`` (``serve
    --host-events``): its API client connected afresh each round, as
    :func:`connect` takes ``--kubeconfig`` and ``--kube-context`` (so a
    rotated service account token is read again), each request within
    ``--kube-timeout`` seconds."""
    s = settings
    assert s.host_root is not None and s.host_node is not None
    poster = NodeEvents(
        lambda: connect(s.kubeconfig, s.kube_context, timeout=s.kube_timeout), s.host_node, s.kube_timeout
    )
    return EventLoop(poster, s.host_root, s.host_variant, s.host_events, report).start()
