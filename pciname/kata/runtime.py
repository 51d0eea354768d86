"""Kata runtime classes: the one a GPU pod needs, and which pods are Kata pods.

The GPU Operator installs no RuntimeClass for Kata GPUs in any Kata-mode
release (``operator_releases[*].runtime_classes`` of
``data/kata/releases.json``: ``created`` is empty, labelled ones are deleted):
the class comes from the Kata installation (kata-deploy). What pciname knows
of its name is what the plugin itself gives the GPU pod it launches
(``createGFDPod`` of ``pkg/device_plugin/gfd.go``, v0.0.2 and later):
``kata-qemu-nvidia-gpu``, ``-snp`` or ``-tdx`` on confidential-computing
nodes. That is the release fact ``gpu_pod_runtime_classes``
(:func:`gpu_pod_runtime_classes`); v0.0.1 has none.

A pod is a *Kata pod* when its ``runtimeClassName`` starts with ``kata``
(:func:`is_kata_runtime_class`): kata-deploy names every RuntimeClass it
installs ``kata`` or ``kata-<hypervisor>[-<variant>]`` (``kata-qemu``,
``kata-clh``, ``kata-qemu-nvidia-gpu``, ...), and the plugin's own GPU pod
uses such names. A RuntimeClass an administrator names otherwise (its
handler may still be Kata's) is not recognised: the name is all a manifest
shows.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pciname.base.paths import kata_releases_path
from pciname.errors import PcinameError
from pciname.naming.profiles import Profile, load_registry

#: What a Kata pod's runtimeClassName starts with (kata-deploy's names: see the module's docstring).
KATA_RUNTIME_PREFIX = "kata"


def is_kata_runtime_class(name: object) -> bool:
    """Whether a pod's ``runtimeClassName`` is a Kata one (starts with ``kata``)."""
    return isinstance(name, str) and name.startswith(KATA_RUNTIME_PREFIX)


@dataclass(frozen=True)
class GpuPodRuntimeClasses:
    """The runtime classes a plugin release gives its own GPU pod: ``default``,
    and per node labels another (``by_node_labels``: (labels, class)), with
    the fact's ``source`` (path and function at ``commit`` of ``repository``)."""

    release: str
    default: str
    by_node_labels: tuple[tuple[dict[str, str], str], ...]
    source: str
    repository: str
    commit: str

    def evidence(self) -> str:
        """One line: where the default comes from."""
        return (
            f"the GPU Operator installs no Kata RuntimeClass (kata-deploy does); {self.default} is the class "
            f"sandbox-device-plugin {self.release}'s own GPU pod uses ({self.repository} {self.release}: "
            f"{self.source.partition(',')[0]})"
        )


@lru_cache(maxsize=1)
def _facts() -> dict[str, Any]:
    with open(kata_releases_path(), encoding="utf-8") as handle:
        facts: dict[str, Any] = json.load(handle)
    return facts


def gpu_pod_runtime_classes(profile: Profile) -> GpuPodRuntimeClasses:
    """The release fact of a Kata ``profile``'s plugin release; a
    PcinameError (one line, the release's reason) when it has none."""
    facts = _facts()
    release = profile.plugin_release
    entry = facts["plugin_releases"].get(release) if profile.is_kata and release else None
    if entry is None:
        raise PcinameError(f"{profile.name} is not a Kata sandbox device plugin release pciname has facts of")
    fact = entry.get("gpu_pod_runtime_classes")
    source = entry["sources"]["gpu_pod_runtime_classes"]
    if fact is None:
        raise PcinameError(
            f"{profile.name}: sandbox-device-plugin {release} names no runtime class ({source}); "
            "give --runtime-class NAME (the Kata installation's RuntimeClass for GPUs)"
        )
    return GpuPodRuntimeClasses(
        release=release,
        default=fact["default"],
        by_node_labels=tuple((dict(b["labels"]), b["runtime_class"]) for b in fact["by_node_labels"]),
        source=source,
        repository=facts["plugin_repository"],
        commit=entry["commit"],
    )


def newest_kata_operator_profile() -> str:
    """The name of the newest GPU Operator release in Kata mode (``gpu-operator@vX.Y.Z+kata``)."""
    releases = load_registry().kata_operator_releases()
    if not releases:
        raise PcinameError("pciname knows no GPU Operator release in Kata mode")
    newest = max(releases, key=lambda p: tuple(int(x) for x in re.findall(r"\d+", p.name.partition("@")[2])))
    return str(newest.name)


__all__ = [
    "KATA_RUNTIME_PREFIX",
    "GpuPodRuntimeClasses",
    "gpu_pod_runtime_classes",
    "is_kata_runtime_class",
    "newest_kata_operator_profile",
]
