"""A Pod (or Deployment) whose container asks for GPUs under the names the
Kata sandbox device plugin advertises for them (docs/naming.md, section 8).

:func:`kata_pod` is pure: device requests and a Kata profile in, the object
as plain data out, with what the caller says beside it: the runtime class
when it was inferred (and from what), notes (two GPU models summed into
one shared-alias limit, a class inferred from a pci.ids name) and the
devices left out (the plugin advertises nothing for them).

* ``resources.limits`` holds ``nvidia.com/<name>: COUNT`` per resource the
  profile gives the devices (``nvidia.com/pgpu`` for every GPU model with
  ``P_GPU_ALIAS`` unset, v0.0.2 and later); devices of one resource are
  summed (Kubernetes sets requests to limits for extended resources).
* ``runtimeClassName`` is the one given, else the default class of the
  release's ``gpu_pod_runtime_classes`` fact (:mod:`pciname.kata.runtime`).
* ``restartPolicy: OnFailure`` for a Pod, as NVIDIA's own GPU test pod
  (gpu-operator ``tests/gpu-pod.yaml``) and the plugin's GPU pod have it;
  a Deployment's pods restart ``Always``, the only policy it takes.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pciname.base.requests import MAX_GPUS  # GPUs one pod may ask for, counts added up, as node-pool and vm-gpus
from pciname.errors import PcinameError
from pciname.kata.runtime import gpu_pod_runtime_classes
from pciname.naming import checks

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: The objects :func:`kata_pod` makes; the first is the default.
KINDS = ("pod", "deployment")
DEFAULT_NAME = "gpu-pod"
#: NVIDIA's CUDA sample image, as the GPU Operator's own GPU test pod runs it.
DEFAULT_IMAGE = "nvcr.io/nvidia/k8s/cuda-sample:vectoradd-cuda12.5.0-ubuntu22.04"
DEFAULT_IMAGE_SOURCE = "NVIDIA/gpu-operator tests/gpu-pod.yaml"
CONTAINER_NAME = "gpu"
#: A DNS-1123 label (a Pod name that is also a label value, as a Deployment's selector needs).
_LABEL = re.compile(r"[a-z0-9](?:[-a-z0-9]{0,61}[a-z0-9])?\Z")
#: A DNS-1123 subdomain (what a RuntimeClass name must be).
_SUBDOMAIN = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*\Z")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot name the Pod (None: it can)."""
    if _LABEL.match(name):
        return None
    return f"{name!r} is not a DNS-1123 label (lower-case letters, digits and '-', at most 63)"


def runtime_class_problem(name: str) -> str | None:
    """Why ``name`` cannot be a RuntimeClass's (None: it can)."""
    if len(name) <= 253 and _SUBDOMAIN.match(name):
        return None
    return f"{name!r} is not a RuntimeClass name (a DNS-1123 subdomain)"


@dataclass(frozen=True)
class KataPod:
    """The object (``data``), the Kata profile it is named under, its runtime
    class with ``inferred`` (the evidence line; None: given), the ``notes``
    and the devices ``left_out`` (``DEVICE: code: message`` lines)."""

    data: dict[str, Any]
    profile: str
    runtime_class: str
    inferred: str | None = None
    notes: tuple[str, ...] = ()
    left_out: tuple[str, ...] = ()


def kata_pod(
    requests: Sequence[tuple[str, int]],
    profile: ProfileLike,
    *,
    runtime_class: str | None = None,
    name: str = DEFAULT_NAME,
    image: str = DEFAULT_IMAGE,
    kind: str = KINDS[0],
    resolver: ResolverLike | None = None,
) -> KataPod:
    """The Pod (``kind`` deployment: a Deployment of one replica) asking for
    ``requests`` ((device, count) pairs) under the Kata ``profile``. A
    PcinameError for a profile that is not Kata's, a release with no
    runtime-class fact and no ``runtime_class`` given, malformed devices,
    or nothing left to ask for."""
    from pciname.resolution.resolver import resolver_or_default

    resolver = resolver_or_default(resolver)
    view = resolver.view(profile)
    if not view.profile.is_kata:
        raise PcinameError(
            f"{view.profile.name} is a KubeVirt GPU device plugin profile; a Kata pod's GPUs are named by the Kata "
            "sandbox device plugin: give -p gpu-operator@vX.Y.Z+kata or sandbox-device-plugin@vX.Y.Z"
        )
    inferred = None
    if runtime_class is None:
        fact = gpu_pod_runtime_classes(view.profile)
        runtime_class, inferred = fact.default, fact.evidence()
    counts: dict[str, int] = {}
    records = resolver.records([device for device, _ in requests], profile)
    by_device: dict[str, dict[str, Any]] = {}
    for record, (_, count) in zip(records, requests, strict=True):
        counts[record["device"]] = counts.get(record["device"], 0) + count
        by_device[record["device"]] = record
    limits, notes, left_out = _limits(by_device, counts)
    if not limits:
        raise PcinameError(f"no GPU left to ask for: {view.profile.name} advertises none of the devices given")
    pod_spec = {
        "runtimeClassName": runtime_class,
        "containers": [{"name": CONTAINER_NAME, "image": image, "resources": {"limits": limits}}],
    }
    return KataPod(_object(kind, name, pod_spec), view.profile.name, runtime_class, inferred, notes, left_out)


def _limits(
    records: dict[str, dict[str, Any]], counts: dict[str, int]
) -> tuple[dict[str, int], tuple[str, ...], tuple[str, ...]]:
    """resource -> count, the notes and the left-out lines of the resolved devices."""
    limits: dict[str, int] = {}
    models: dict[str, list[dict[str, Any]]] = {}
    notes: list[str] = []
    left_out: list[str] = []
    for device, record in records.items():
        resource = record["resource_name"]
        if resource is None or not record["advertised"]:
            left_out += [f"{device}: {w['code']}: {w['message']}" for w in record["warnings"]]
            continue
        limits[resource] = limits.get(resource, 0) + counts[device]
        if limits[resource] > MAX_GPUS:
            raise PcinameError(f"{resource}: {limits[resource]} GPUs is more than the {MAX_GPUS} a node may have")
        models.setdefault(resource, []).append(record)
        notes += [
            f"{device}: {w['code']}: {w['message']}" for w in record["warnings"] if w["code"] != checks.SHARED_ALIAS
        ]
    for resource, same in models.items():
        shared = [w["message"] for w in same[0]["warnings"] if w["code"] == checks.SHARED_ALIAS]
        if len(same) > 1 and shared:
            which = " and ".join(f"{r['device']} ({r['device_name']})" for r in same)
            notes.append(
                f"{which} are summed into one {resource} limit ({limits[resource]}): a node serves one model at a "
                f"time under it, so the pod schedules only where that model has them all; {shared[0]}"
            )
    return limits, tuple(notes), tuple(left_out)


def _object(kind: str, name: str, pod_spec: dict[str, Any]) -> dict[str, Any]:
    if kind == "pod":
        return {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name},
            "spec": {"restartPolicy": "OnFailure", **pod_spec},
        }
    labels = {"app": name}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": labels},
            "template": {"metadata": {"labels": labels}, "spec": pod_spec},
        },
    }


__all__ = [
    "DEFAULT_IMAGE",
    "DEFAULT_IMAGE_SOURCE",
    "DEFAULT_NAME",
    "KINDS",
    "KataPod",
    "kata_pod",
    "name_problem",
    "runtime_class_problem",
]
