"""HAMi in a tenant cluster, from its Node and Pod objects (as the API server
returns them): the checks ``pciname audit --hami`` runs
(:func:`pciname.capabilities.audit.answer_audit_hami`).

* **Both plugins on one node.** A node running HAMi's device plugin (pods
  labelled ``app.kubernetes.io/component: hami-device-plugin``, HAMi's chart
  ``templates/device-plugin/daemonsetnvidia.yaml``) and NVIDIA's (the GPU
  Operator's ``app: nvidia-device-plugin-daemonset``,
  ``assets/state-device-plugin/0500_daemonset.yaml``; the k8s-device-plugin
  chart's ``app.kubernetes.io/name: nvidia-device-plugin``): both register
  ``nvidia.com/gpu`` with the kubelet.
* **GPU nodes HAMi does not serve.** A node with NVIDIA GPUs (the GPU
  Operator's ``nvidia.com/gpu.present: "true"``, NFD's
  ``feature.node.kubernetes.io/pci-10de.present: "true"``, or ``nvidia.com/gpu``
  in its capacity) without the labels of the release's device-plugin node
  selector (``gpu: "on"``): HAMi's device plugin never runs there.
* **Pods with HAMi names on nodes HAMi does not serve**, and the HAMi
  release its pods' images are tagged with, beside the one asked for.
* **A count no node can hold.** HAMi's scheduler gives a container's
  ``nvidia.com/gpu: N`` vGPUs on N distinct GPUs of one node: its fit walks the
  node's devices once, taking at most one vGPU of each (Project-HAMi/HAMi
  v2.4.0, 03e6a137, ``pkg/scheduler/score.go:73`` ``fitInCertainDevice``;
  v2.9.0, 3a006c6a, ``pkg/device/nvidia/device.go:742`` ``Fit``; a MIG device
  is walked again). A node's GPUs are the devices its device plugin lists in
  the annotation ``hami.io/node-nvidia-register`` (``pkg/device/nvidia/device.go``
  ``RegisterAnnos``): JSON from v2.8.0 (``UnMarshalNodeDevices``), ``ID,count,...``
  entries ended by ``:`` before (``DecodeNodeDevices``). A count above the most
  GPUs any node HAMi serves lists never fits: the pod stays Pending.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pciname.hami.releases import Release

HAMI_PLUGIN = {"app.kubernetes.io/component": "hami-device-plugin"}
NVIDIA_PLUGINS = ({"app": "nvidia-device-plugin-daemonset"}, {"app.kubernetes.io/name": "nvidia-device-plugin"})
GPU_LABELS = {"nvidia.com/gpu.present": "true", "feature.node.kubernetes.io/pci-10de.present": "true"}
#: Where HAMi's device plugin lists a node's GPUs.
REGISTER_ANNOTATION = "hami.io/node-nvidia-register"
#: HAMi's images (its chart's ``image.repository`` default, projecthami/hami).
HAMI_IMAGE = "projecthami/hami:"


@dataclass(frozen=True)
class Problem:
    code: str
    node: str
    message: str


def _labels(obj: Mapping[str, Any]) -> dict[str, str]:
    return dict((obj.get("metadata") or {}).get("labels") or {})


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def _matches(labels: Mapping[str, str], wanted: Mapping[str, str]) -> bool:
    return all(labels.get(k) == v for k, v in wanted.items())


def _has_gpus(node: Mapping[str, Any]) -> bool:
    capacity = (node.get("status") or {}).get("capacity") or {}
    labels = _labels(node)
    return any(labels.get(k) == v for k, v in GPU_LABELS.items()) or "nvidia.com/gpu" in capacity


def _asked(pod: Mapping[str, Any], release: Release) -> list[str]:
    names = set(release.names.all())
    found: list[str] = []
    for container in (pod.get("spec") or {}).get("containers") or []:
        resources = container.get("resources") or {}
        for field in ("limits", "requests"):
            found += [n for n in resources.get(field) or {} if n in names and n not in found]
    return found


def registered_gpus(node: Mapping[str, Any]) -> int | None:
    """How many GPUs HAMi's device plugin registered on ``node`` (None: no
    annotation, or one in neither of HAMi's encodings)."""
    text = ((node.get("metadata") or {}).get("annotations") or {}).get(REGISTER_ANNOTATION)
    if not isinstance(text, str):
        return None
    if text.lstrip().startswith("["):
        try:
            listed = json.loads(text)
        except ValueError:
            return None
        return len(listed) if isinstance(listed, list) else None
    return sum(1 for entry in text.split(":") if "," in entry) or None


def _count(container: Mapping[str, Any], name: str) -> int | None:
    """A container's count of ``name`` (limits over requests; None: none, or not a whole number)."""
    resources = container.get("resources") or {}
    for field in ("limits", "requests"):
        value = (resources.get(field) or {}).get(name)
        if value is not None:
            text = str(value).strip()
            return int(text) if text.isascii() and text.isdigit() else None
    return None


def _unfit(release: Release, pods: Sequence[Mapping[str, Any]], most: int | None) -> list[Problem]:
    """Containers asking for more vGPUs than the most GPUs one served node has."""
    if most is None:
        return []
    found = []
    for pod in pods:
        spec = pod.get("spec") or {}
        where = f"{(pod.get('metadata') or {}).get('namespace', '')}/{_name(pod)}"
        for container in spec.get("containers") or []:
            count = _count(container, release.names.gpu)
            if count is not None and count > most:
                message = (
                    f"pod {where} container {container.get('name', '')} asks for {count} {release.names.gpu}: HAMi "
                    f"puts each on a distinct GPU, and no node it serves lists more than {most}: it never fits"
                )
                found.append(Problem("hami-count-unfit", spec.get("nodeName") or "(not scheduled)", message))
    return found


def workload_images(release: Release, pods: Sequence[Mapping[str, Any]]) -> dict[str, list[str]]:
    """The images of the containers that ask for the release's names, each
    with its pods (``namespace/name``, in input order): whose C library
    decides whether HAMi-core's limits hold (``image-check``)."""
    names = set(release.names.all())
    found: dict[str, list[str]] = {}
    for pod in pods:
        where = f"{(pod.get('metadata') or {}).get('namespace', '')}/{_name(pod)}"
        for container in (pod.get("spec") or {}).get("containers") or []:
            resources = container.get("resources") or {}
            asked = {n for field in ("limits", "requests") for n in resources.get(field) or {}}
            image = str(container.get("image") or "")
            if asked & names and image and where not in found.setdefault(image, []):
                found[image].append(where)
    return found


def _plugins(pods: Sequence[Mapping[str, Any]]) -> dict[str, set[str]]:
    """node -> which plugins run there ("hami", "nvidia")."""
    on: dict[str, set[str]] = {}
    for pod in pods:
        node, labels = (pod.get("spec") or {}).get("nodeName"), _labels(pod)
        if not node:
            continue
        if _matches(labels, HAMI_PLUGIN):
            on.setdefault(node, set()).add("hami")
        if any(_matches(labels, wanted) for wanted in NVIDIA_PLUGINS):
            on.setdefault(node, set()).add("nvidia")
    return on


def _releases_in_use(pods: Sequence[Mapping[str, Any]]) -> list[str]:
    tags = {
        str(c.get("image", "")).rsplit(":", 1)[1]
        for pod in pods
        for c in (pod.get("spec") or {}).get("containers") or []
        if HAMI_IMAGE in str(c.get("image", ""))
    }
    return sorted(tags)


def audit_hami(
    release: Release,
    nodes: Sequence[Mapping[str, Any]],
    pods: Sequence[Mapping[str, Any]],
    *,
    check: Callable[[], None] | None = None,
) -> dict[str, Any]:
    """The problems, by node, and the HAMi releases HAMi's pods run (their
    image tags); ``check`` (a deadline) is called as the pods are read."""
    plugins = _plugins(pods)
    selector = release.node_selector
    served = {_name(n) for n in nodes if _matches(_labels(n), selector)}
    problems = [
        Problem("both-device-plugins", node, "HAMi's and NVIDIA's device plugins both register nvidia.com/gpu here")
        for node, kinds in sorted(plugins.items())
        if kinds == {"hami", "nvidia"}
    ]
    wanted = ", ".join(f"{k}={v}" for k, v in selector.items())
    problems += [
        Problem(
            "gpu-node-not-served", _name(n), f"has NVIDIA GPUs but not {wanted}: HAMi's device plugin never runs here"
        )
        for n in nodes
        if _has_gpus(n) and _name(n) not in served
    ]
    for pod in pods:
        if check is not None:
            check()
        asked, node = _asked(pod, release), (pod.get("spec") or {}).get("nodeName")
        if asked and node and node not in served:
            where = f"{(pod.get('metadata') or {}).get('namespace', '')}/{_name(pod)}"
            message = f"pod {where} asks for {', '.join(asked)} on a node without {wanted}"
            problems.append(Problem("hami-pod-not-served", node, message))
    gpus = {n: registered_gpus(node) for node in nodes if (n := _name(node)) in served}
    problems += _unfit(release, pods, max((g for g in gpus.values() if g is not None), default=None))
    in_use = _releases_in_use(pods)
    images = workload_images(release, pods)
    return {
        "hami": release.release,
        "node_selector": {
            "labels": selector,
            "values_key": release.node_selector_key,
            "source": release.node_selector_where,
        },
        "served": sorted(served),
        "gpus": {n: gpus[n] for n in sorted(gpus)},
        "in_use": in_use,
        "release_differs": bool(in_use) and in_use != [release.release],
        "problems": [p.__dict__ for p in problems],
        "images": [{"image": image, "pods": where, "verdict": None} for image, where in sorted(images.items())],
    }


__all__ = ["Problem", "audit_hami", "registered_gpus", "workload_images"]
