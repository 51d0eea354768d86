"""What the doctor's DaemonSet publishes for one node, as plain data (the
surface that serves it, a Prometheus registry and the Kubernetes API, is
the caller's): a gauge per code and node (:func:`gauges`: every doctor code,
0 where the node shows none, so an alert clears when the node heals) and an
Event on the Node per finding (:func:`events`).

An Event on a Node names it as kubelet's own do: ``involvedObject`` of kind
``Node``, its name, in namespace ``default``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from pciname.host.diagnoses import ERROR, WARNING
from pciname.host.doctor.codes import DOCTOR_CODES
from pciname.host.doctor.rules import Finding

METRIC = "pciname_doctor_findings"
COMPONENT = "pciname-doctor"


def gauges(node: str, findings: Iterable[Finding]) -> list[tuple[dict[str, str], int]]:
    """(labels, value) for ``METRIC``: how many findings of each doctor code the node shows."""
    counted = Counter(f.diagnosis.code for f in findings)
    return [
        ({"node": node, "code": code, "severity": severity}, counted.get(code, 0))
        for code, (severity, _) in DOCTOR_CODES.items()
    ]


def reason(code: str) -> str:
    """An Event's reason for ``code``: UpperCamelCase (``host-driver-preinstalled`` -> ``HostDriverPreinstalled``)."""
    return "".join(part.capitalize() for part in code.split("-"))


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
                "metadata": {"generateName": f"{node}.{COMPONENT}-", "namespace": "default"},
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
