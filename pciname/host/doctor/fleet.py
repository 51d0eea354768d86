"""One node of the fleet: the variant the GPU Operator's labels put it in,
its ``pre-installed`` label, and where those labels and the node's own
checkup disagree (:func:`node_line`). ``pciname audit``'s fleet report is
one such line per node (what reads the labels is the caller's).

The labels, from NVIDIA/gpu-operator v25.10.1
(846018752b8a34d4039feb6f18629b4c64210e32) ``controllers/state_manager.go``:
``nvidia.com/gpu.workload.config`` chooses the node's workload (``container``,
``vm-passthrough``, ``vm-vgpu``; without the label, the ClusterPolicy's
``sandboxWorkloads.defaultWorkload``, itself ``container`` unless set), and
``gpuStateLabels`` gives each workload its ``nvidia.com/gpu.deploy.*=true``
labels: ``vfio-manager`` only for vm-passthrough, ``vgpu-manager`` only for
vm-vgpu, ``device-plugin`` only for container, which is how the workload in
effect is read without the ClusterPolicy. k8s-driver-manager v0.9.1
(be979ef08699fac8a83f2ffb85fa1ff3d606ba20, ``cmd/driver-manager/main.go``
``disableContainerizedDriver``) sets ``nvidia.com/gpu.deploy.driver=pre-installed``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from pciname.host.diagnoses import Diagnosis
from pciname.host.doctor.codes import PREINSTALLED_LABEL, VARIANT_LABEL_MISMATCH
from pciname.host.doctor.rules import COZYSTACK_VALUES, WORKLOADS, Checkup, Finding, findings

WORKLOAD_LABEL = "nvidia.com/gpu.workload.config"
DRIVER_LABEL = "nvidia.com/gpu.deploy.driver"
PREINSTALLED = "pre-installed"
#: A deploy label only one workload sets -> that workload.
_ONLY_IN = {
    "nvidia.com/gpu.deploy.vfio-manager": "vm-passthrough",
    "nvidia.com/gpu.deploy.vgpu-manager": "vm-vgpu",
    "nvidia.com/gpu.deploy.device-plugin": "container",
}
_VARIANT_OF = {workload: variant for variant, workload in WORKLOADS.items()}


def workload_in_effect(labels: Mapping[str, str]) -> str | None:
    """The workload the operator runs on a node with ``labels``: its
    deploy labels' (what the operator did), else the workload label (None: neither)."""
    deployed = {w for label, w in _ONLY_IN.items() if labels.get(label) == "true"}
    if len(deployed) == 1:
        return deployed.pop()
    chosen = labels.get(WORKLOAD_LABEL)
    return chosen if chosen in _VARIANT_OF else None


@dataclass(frozen=True)
class NodeLine:
    """The fleet report's line for one node."""

    node: str
    workload: str | None
    preinstalled: bool
    findings: tuple[Finding, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "workload": self.workload,
            "variant": _VARIANT_OF.get(self.workload or ""),
            "preinstalled": self.preinstalled,
            "findings": [f.to_dict() for f in self.findings],
        }


def node_line(node: str, labels: Mapping[str, str], checkup: Checkup | None) -> NodeLine:
    """``node``'s line: the labels' findings, then (when the doctor ran
    there: ``checkup``, every variant's) its variant's own findings."""
    workload = workload_in_effect(labels)
    preinstalled = labels.get(DRIVER_LABEL) == PREINSTALLED
    found: list[Finding] = []
    if preinstalled and workload in ("vm-passthrough", "vm-vgpu"):
        found.append(
            Finding(
                Diagnosis.of(PREINSTALLED_LABEL, node, f"{DRIVER_LABEL}={PREINSTALLED} on a {workload} node"),
                (
                    "scan the node: pciname scan --variant default (host-driver-preinstalled gives the steps)",
                    f"kubectl label node {node} {DRIVER_LABEL}- once the host driver is gone",
                ),
                {},
            )
        )
    variant = _VARIANT_OF.get(workload or "")
    if checkup is not None and variant is not None:
        if variant not in checkup.servable and checkup.servable:
            found.append(
                Finding(
                    Diagnosis.of(
                        VARIANT_LABEL_MISMATCH,
                        node,
                        f"labelled {workload} ({variant}), but as it is the node could serve "
                        f"{', '.join(checkup.servable)}",
                    ),
                    (
                        f"kubectl label node {node} {WORKLOAD_LABEL}={WORKLOADS[checkup.servable[0]]} --overwrite, "
                        "or fix the node for its variant (pciname scan --variant " + variant + ")",
                    ),
                    COZYSTACK_VALUES[checkup.servable[0]],
                )
            )
        found.extend(findings(checkup.facts, variant))
    return NodeLine(node, workload, preinstalled, tuple(found))


def is_gpu_node(labels: Mapping[str, str]) -> bool:
    """Whether the GPU Operator labels the node: its workload label, or one of its ``nvidia.com/gpu.deploy.*``."""
    return WORKLOAD_LABEL in labels or any(label.startswith("nvidia.com/gpu.deploy.") for label in labels)


def fleet(nodes: Iterable[Mapping[str, Any]]) -> list[NodeLine]:
    """``pciname audit``'s fleet report: a line per Node object the GPU
    Operator labels (sorted by name), from its labels alone (the doctor's
    own findings are the node's: its DaemonSet publishes them)."""
    lines = []
    for node in nodes:
        meta = node.get("metadata") or {}
        labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        if is_gpu_node(labels):
            lines.append(node_line(str(meta.get("name") or "?"), labels, None))
    return sorted(lines, key=lambda line: line.node)
