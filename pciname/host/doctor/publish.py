"""What the doctor's DaemonSet publishes for one node, as plain data (the
surface that serves it, a Prometheus registry and the Kubernetes API, is
the caller's): a gauge per code and node (:func:`gauges`: every doctor code,
0 where the node shows none, so an alert clears when the node heals) and an
Event on the Node per finding (:func:`events`).

An Event on a Node names it as kubelet's own do: ``involvedObject`` of kind
``Node``, its name (also as its uid), in namespace ``default``: ``kubectl
describe node`` searches Events by the Node's uid and again by its name as
uid (kubernetes/kubectl dee3483a, pkg/describe/describe.go:3466-3476). Its own name is one per node,
code and subject (:func:`event_name`), so a finding that persists is one
Event whose ``count`` grows, as client-go's correlator folds repeats
(the poster is :mod:`pciname.cluster.node_events`).

:class:`DoctorCollector` is the gauge as a Prometheus collector, for a
server that reads a node (``serve --host-root DIR --metrics-listen``: the
DaemonSet's read-only host mount): the node judged for its variant
(``--host-variant``) at each scrape; a root the doctor cannot read gives no
samples (the ``Doctor`` RPC says why).
"""

from __future__ import annotations

import hashlib
import socket
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from pciname.errors import PcinameError
from pciname.host.diagnoses import ERROR, WARNING
from pciname.host.doctor.codes import DOCTOR_CODES, reason
from pciname.host.doctor.facts import read_host
from pciname.host.doctor.rules import Finding, examine

METRIC = "pciname_doctor_findings"
COMPONENT = "pciname-doctor"


def gauges(node: str, findings: Iterable[Finding]) -> list[tuple[dict[str, str], int]]:
    """(labels, value) for ``METRIC``: how many findings of each doctor code the node shows."""
    counted = Counter(f.diagnosis.code for f in findings)
    return [
        ({"node": node, "code": code, "severity": severity}, counted.get(code, 0))
        for code, (severity, _) in DOCTOR_CODES.items()
    ]


def event_name(node: str, code: str, subject: str) -> str:
    """The Event's name for ``code`` on ``subject`` of ``node``: the same at
    every round and after a restart (a DNS subdomain of at most 253 characters)."""
    digest = hashlib.sha256(f"{code}\0{subject}".encode()).hexdigest()[:10]
    tail = f".{COMPONENT}.{code}.{digest}"
    return node[: 253 - len(tail)] + tail


def events(node: str, findings: Iterable[Finding], now: str) -> list[dict[str, Any]]:
    """One core/v1 Event on the Node per finding (``now``: RFC 3339), its
    message the finding's and its first step of the way back."""
    out = []
    for f in findings:
        d = f.diagnosis
        message = f"{d.subject}: {d.message}" + (f" Way back: {f.steps[0]}" if f.steps else "")
        out.append(
            {
                "apiVersion": "v1",
                "kind": "Event",
                "metadata": {"name": event_name(node, d.code, d.subject), "namespace": "default"},
                "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node},
                "reason": reason(d.code),
                "message": message[:1024],
                "type": "Warning" if d.severity in (ERROR, WARNING) else "Normal",
                "source": {"component": COMPONENT, "host": node},
                "reportingComponent": COMPONENT,
                "reportingInstance": node,
                "firstTimestamp": now,
                "lastTimestamp": now,
                "count": 1,
            }
        )
    return out


class DoctorCollector(Collector):
    """:data:`METRIC` of the node under ``root`` for ``variant``, named ``node`` (None: this host's name)."""

    def __init__(self, root: str, variant: str, node: str | None = None) -> None:
        self.root, self.variant, self.node = root, variant, node or socket.gethostname()

    def collect(self) -> Iterator[GaugeMetricFamily]:
        family = GaugeMetricFamily(
            METRIC, "Findings of the host doctor on the node, by code (0: none)", labels=("node", "code", "severity")
        )
        try:
            found = examine(read_host(self.root), self.variant).findings
        except PcinameError:
            found = None
        for labels, value in gauges(self.node, found) if found is not None else ():
            family.add_metric([labels["node"], labels["code"], labels["severity"]], value)
        yield family
