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

The operator reads ``nvidia.com/gpu.workload.config`` in ``getWorkloadConfig``
(same file and commit: a valid value is the node's workload, a missing or
invalid one the default) and ``labelGPUNodes`` turns it into the deploy
labels; nothing there looks at what the node serves. So a node is flagged
``variant-label-mismatch`` where its label says one variant and either what
it advertises (its ``nvidia.com/`` resources, each the device plugin of one
variant: the caller sorts them, :data:`ADVERTISED_BY`) or the doctor on the
node (its Events, :func:`reported`) says another.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pciname.host.diagnoses import CODES, Diagnosis
from pciname.host.doctor.codes import PREINSTALLED_LABEL, VARIANT_LABEL_MISMATCH, reason
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
#: The kind of an advertised ``nvidia.com/`` resource (pciname.kubevirt.resources.resource_kind)
#: -> the variant whose device plugin advertises it: KubeVirt's GPU plugin a PCI name
#: (passthrough) or a vGPU type's name (vgpu), NVIDIA's k8s-device-plugin nvidia.com/gpu
#: and nvidia.com/mig-* (container).
ADVERTISED_BY = {"pci": "default", "mdev": "vgpu", "container": "container"}
#: An Event's reason -> its code (pciname.host.doctor.publish.reason), for the codes the doctor posts.
_CODE_OF_REASON = {reason(code): code for code in CODES}


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
    #: The variants what the node advertises belongs to (empty: it advertises no nvidia.com/ resource).
    advertised: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        return {
            "node": self.node,
            "workload": self.workload,
            "variant": _VARIANT_OF.get(self.workload or ""),
            "preinstalled": self.preinstalled,
            "advertised": list(self.advertised),
            "findings": [f.to_dict() for f in self.findings],
        }


def reported(events: Iterable[Mapping[str, Any]]) -> dict[str, list[Finding]]:
    """Node -> the findings its doctor posted as Events (``pciname.host.doctor.publish.events``:
    reason the code in UpperCamelCase, message ``SUBJECT: MESSAGE Way back: STEP``); unknown reasons are skipped."""
    found: dict[str, list[Finding]] = {}
    for event in events:
        code = _CODE_OF_REASON.get(str(event.get("reason") or ""))
        node = (event.get("involvedObject") or {}).get("name")
        if code is None or not isinstance(node, str):
            continue
        text, _, step = str(event.get("message") or "").partition(" Way back: ")
        subject, _, message = text.partition(": ")
        finding = Finding(Diagnosis.of(code, subject or node, message or text), (step,) if step else (), {})
        found.setdefault(node, []).append(finding)
    return found


def _contradicts(variant: str, advertised: set[str]) -> bool:
    """Whether what a node advertises contradicts its label's ``variant``: another
    variant's resources and none of its own, or the container variant's beside a
    VM variant's (the host driver it needs is what passthrough and vGPU nodes must
    not hand the GPU to). KubeVirt's one plugin advertising a PCI name beside vGPU
    types is one owner: not a contradiction."""
    others = advertised - {variant}
    return bool(others) and (variant not in advertised or "container" in others or variant == "container")


def _mismatch(node: str, workload: str, variant: str, says: str, why: str) -> Finding:
    """``variant-label-mismatch``: labelled ``workload`` (``variant``), while ``why`` says ``says``."""
    return Finding(
        Diagnosis.of(VARIANT_LABEL_MISMATCH, node, f"labelled {workload} ({variant}), but {why}"),
        (
            f"kubectl label node {node} {WORKLOAD_LABEL}={WORKLOADS[says]} --overwrite, "
            f"or fix the node for its variant (pciname scan --variant {variant})",
        ),
        COZYSTACK_VALUES[says],
    )


def node_line(
    node: str,
    labels: Mapping[str, str],
    checkup: Checkup | None,
    *,
    advertised: Mapping[str, Sequence[str]] | None = None,
    posted: Sequence[Finding] = (),
) -> NodeLine:
    """``node``'s line: the labels' findings, then (when the doctor ran
    there: ``checkup``, every variant's) its variant's own findings;
    ``advertised``: variant -> the node's resources of its device plugin;
    ``posted``: what the doctor on the node posted (its Events)."""
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
    advertised = advertised or {}
    if workload is not None and variant is not None and _contradicts(variant, set(advertised)):
        for other in sorted(set(advertised) - {variant}):
            names = ", ".join(advertised[other])
            found.append(_mismatch(node, workload, variant, other, f"it advertises {names} ({other}'s device plugin)"))
    if checkup is not None and workload is not None and variant is not None:
        if variant not in checkup.servable and checkup.servable:
            why = f"as it is the node could serve {', '.join(checkup.servable)}"
            found.append(_mismatch(node, workload, variant, checkup.servable[0], why))
        found.extend(findings(checkup.facts, variant))
    known = {(f.diagnosis.code, f.diagnosis.subject) for f in found}
    found.extend(f for f in posted if (f.diagnosis.code, f.diagnosis.subject) not in known)
    return NodeLine(node, workload, preinstalled, tuple(found), tuple(sorted(advertised)))


def is_gpu_node(labels: Mapping[str, str]) -> bool:
    """Whether the GPU Operator labels the node: its workload label, or one of its ``nvidia.com/gpu.deploy.*``."""
    return WORKLOAD_LABEL in labels or any(label.startswith("nvidia.com/gpu.deploy.") for label in labels)


def fleet(
    nodes: Iterable[Mapping[str, Any]],
    *,
    advertised: Mapping[str, Mapping[str, Sequence[str]]] | None = None,
    events: Iterable[Mapping[str, Any]] = (),
) -> list[NodeLine]:
    """``pciname audit``'s fleet report: a line per Node object the GPU
    Operator labels (sorted by name), from its labels, what it advertises
    (``advertised``: node -> variant -> resource names) and the Events its
    doctor posted (``events``, :func:`reported`)."""
    posted = reported(events)
    lines = []
    for node in nodes:
        meta = node.get("metadata") or {}
        labels = {str(k): str(v) for k, v in (meta.get("labels") or {}).items()}
        name = str(meta.get("name") or "?")
        if is_gpu_node(labels):
            lines.append(
                node_line(name, labels, None, advertised=(advertised or {}).get(name), posted=posted.get(name, ()))
            )
    return sorted(lines, key=lambda line: line.node)
