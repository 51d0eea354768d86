"""Which device plugin lint takes to run on the nodes beside KubeVirt's own:
``--nvidia-plugin yes|no|auto`` (:class:`NvidiaPlugin`) and, for ``auto``,
what in the input itself shows NVIDIA's plugin runs (:func:`evidence`).

An entry with ``externalResourceProvider: true`` is served by NVIDIA's
plugin; any other by KubeVirt's own (virt-handler), under the name the entry
gives. Whether that is a mistake depends on whether NVIDIA's plugin serves
the same devices on those nodes too: ``yes`` says it does, ``no`` that it
does not, ``auto`` (the default) that it does only where the input shows it:

* a GPU Operator configuration that deploys its sandbox device plugin (a
  ``ClusterPolicy``'s ``spec``, the operator's Helm values, or a HelmRelease's
  ``spec.values``): ``sandboxWorkloads.enabled: true`` without
  ``sandboxDevicePlugin.enabled: false``;
* a container running NVIDIA's KubeVirt GPU device plugin
  (image ``.../kubevirt-gpu-device-plugin``);
* Cozystack platform values (``gpu.permittedHostDevices``): Cozystack
  deploys the GPU Operator with its sandbox device plugin.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from enum import StrEnum
from typing import NamedTuple

from yaml.nodes import MappingNode, Node, ScalarNode

from pciname.lint.nodes import get as _get, walk


class NvidiaPlugin(StrEnum):
    """``--nvidia-plugin``: whether NVIDIA's plugin runs on the nodes."""

    YES = "yes"
    NO = "no"
    AUTO = "auto"


#: The default: only what the input shows.
DEFAULT_NVIDIA_PLUGIN = NvidiaPlugin.AUTO
#: The label the GPU Operator sets to "true" on the nodes it deploys its
#: sandbox device plugin to (vm-passthrough and vm-vgpu workloads: its
#: ``gpuStateLabels``): what ``audit`` sees of NVIDIA's plugin on a cluster.
SANDBOX_PLUGIN_LABEL = "nvidia.com/gpu.deploy.sandbox-device-plugin"
#: The image NVIDIA's KubeVirt GPU device plugin (the sandbox device plugin) runs.
PLUGIN_IMAGE = "kubevirt-gpu-device-plugin"


class Presence(NamedTuple):
    """What lint takes of NVIDIA's plugin for a run: ``runs`` True (and why:
    ``evidence``), False (``--nvidia-plugin no``) or None (``auto``, and the
    input does not say)."""

    runs: bool | None
    evidence: str = ""


def parse(value: str | None) -> NvidiaPlugin:
    """``--nvidia-plugin``'s value (None or blank: the default); ValueError
    names the choices."""
    if value is None or not value.strip():
        return DEFAULT_NVIDIA_PLUGIN
    try:
        return NvidiaPlugin(value.strip().lower())
    except ValueError:
        raise ValueError(f"{value!r} is not one of {', '.join(p.value for p in NvidiaPlugin)}") from None


def presence(
    choice: NvidiaPlugin, documents: Iterable[tuple[str, Node]], cozystack_blocks: Iterable[str], option: str
) -> Presence:
    """The run's :class:`Presence`: ``documents`` are (file, root) pairs;
    ``cozystack_blocks``, where Cozystack platform values permit devices."""
    if choice is NvidiaPlugin.YES:
        return Presence(True, f"{option} yes")
    if choice is NvidiaPlugin.NO:
        return Presence(False, f"{option} no")
    for where in cozystack_blocks:
        return Presence(True, f"{where} is a Cozystack platform's, and Cozystack deploys the GPU Operator")
    for file, root in documents:
        found = evidence(root)
        if found is not None:
            node, what = found
            return Presence(True, f"{file}:{node.start_mark.line + 1}: {what}")
    return Presence(None)


def evidence(root: Node) -> tuple[Node, str] | None:
    """The first place in ``root`` that shows NVIDIA's plugin runs, and what it is."""
    for node in _mappings(root):
        sandbox = _get(node, "sandboxWorkloads")
        if _enabled(sandbox) is True and _enabled(_get(node, "sandboxDevicePlugin")) is not False:
            assert sandbox is not None
            return sandbox, "the GPU Operator deploys its sandbox device plugin (sandboxWorkloads.enabled: true)"
        image = _get(node, "image")
        if isinstance(image, ScalarNode) and PLUGIN_IMAGE in str(image.value):
            return image, f"a container runs NVIDIA's plugin ({image.value})"
    return None


def _mappings(root: Node) -> Iterator[MappingNode]:
    return (node for node, _ in walk(root) if isinstance(node, MappingNode))


def _enabled(node: Node | None) -> bool | None:
    """``enabled`` of a mapping as a boolean (None: not said)."""
    value = _get(node, "enabled")
    if isinstance(value, ScalarNode) and value.tag.endswith(":bool"):
        return str(value.value).lower() in ("true", "yes", "on")
    return None


def on_nodes(nodes: Iterable[dict[str, object]]) -> NvidiaPlugin:
    """``yes`` when a node carries :data:`SANDBOX_PLUGIN_LABEL` ``"true"``
    (the GPU Operator runs NVIDIA's plugin there), else ``auto``."""
    for node in nodes:
        metadata = node.get("metadata")
        labels = metadata.get("labels") if isinstance(metadata, dict) else None
        if isinstance(labels, dict) and str(labels.get(SANDBOX_PLUGIN_LABEL, "")).lower() == "true":
            return NvidiaPlugin.YES
    return NvidiaPlugin.AUTO


__all__ = [
    "DEFAULT_NVIDIA_PLUGIN",
    "SANDBOX_PLUGIN_LABEL",
    "NvidiaPlugin",
    "Presence",
    "evidence",
    "on_nodes",
    "parse",
    "presence",
]
