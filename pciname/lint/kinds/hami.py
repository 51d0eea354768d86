"""HAMi pods for lint (``--hami RELEASE``): the ``nvidia.com/gpu...`` names
the containers of pods and pod templates ask for, as HAMi's release reads
them (:func:`pciname.hami.pods.check_container`: names beyond its chart's,
``gpucores`` outside 0-100, ``gpumem`` with ``gpumem-percentage``, a split
name without ``nvidia.com/gpu``, ``gpumem`` left out), and HAMi's names in
KubeVirt VMs (``spec.template.spec.domain.devices.gpus`` and ``hostDevices``
of a VirtualMachine, ``spec.domain.devices`` of a VirtualMachineInstance).

HAMi reads a container's ``resources.limits``, and ``requests`` for a name
its limits lack; every pod is checked (HAMi's scheduler and device plugin
serve any pod), each pod spec once however often YAML aliases reach it.
"""

from __future__ import annotations

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pciname.hami.pods import check_container
from pciname.hami.releases import Release
from pciname.lint.codes import HAMI_IN_VM, RuleName
from pciname.lint.document import Doc, RunState
from pciname.lint.kinds.kata import CONTAINER_LISTS, POD_SPEC_PATHS
from pciname.lint.nodes import YamlPath, get as _get, items as _items, scalar as _scalar, walk
from pciname.lint.rules import Context, rule

#: kind -> where a VM's devices are.
VM_DEVICES: dict[str, tuple[str, ...]] = {
    "VirtualMachine": ("spec", "template", "spec", "domain", "devices"),
    "VirtualMachineInstance": ("spec", "domain", "devices"),
}

Keys = dict[str, tuple[ScalarNode, YamlPath]]


def _resources(container: Node, path: YamlPath) -> tuple[dict[str, str], Keys]:
    """A container's names and values (limits over requests) and each name's key node and path."""
    values: dict[str, str] = {}
    keys: Keys = {}
    resources = _get(container, "resources")
    for field in ("limits", "requests"):
        for name, key, value in _items(_get(resources, field)):
            if name not in values:
                values[name] = _scalar(value) or ""
                keys[name] = (key, path + ("resources", field, name))
    return values, keys


def _report(ctx: Context, state: RunState, doc: Doc, release: Release, values: dict[str, str], keys: Keys) -> None:
    for found in check_container(release, values, in_vm=False):
        key, where = keys[found.name] if found.name in keys else next(iter(keys.values()))
        state.findings.append(ctx.finding(doc, key, where, found.code, message=found.message))


def _pod(ctx: Context, state: RunState, doc: Doc, spec: MappingNode, path: YamlPath, release: Release) -> None:
    for list_key in CONTAINER_LISTS:
        containers = _get(spec, list_key)
        for i, container in enumerate(containers.value if isinstance(containers, SequenceNode) else ()):
            values, keys = _resources(container, path + (list_key, i))
            if any(name.startswith("nvidia.com/") for name in values):
                _report(ctx, state, doc, release, values, keys)


def _vm(ctx: Context, state: RunState, doc: Doc, devices: Node, path: YamlPath, release: Release) -> None:
    names = release.names.all()
    for list_key in ("gpus", "hostDevices"):
        entries = _get(devices, list_key)
        for i, entry in enumerate(entries.value if isinstance(entries, SequenceNode) else ()):
            node = _get(entry, "deviceName")
            name = _scalar(node)
            if node is not None and name in names:
                message = f"{name}: HAMi serves pods, not KubeVirt VMs; no device plugin gives a VM this name"
                state.findings.append(
                    ctx.finding(doc, node, path + (list_key, i, "deviceName"), HAMI_IN_VM, message=message)
                )


def _spec(node: Node | None, keys: tuple[str, ...]) -> Node | None:
    for key in keys:
        node = _get(node, key)
    return node


@rule(RuleName.HAMI_PODS)
def hami_pods(ctx: Context, state: RunState) -> None:
    """With ``--hami``: each pod's containers and each VM's devices, as HAMi's release reads them."""
    release = ctx.hami
    if release is None:
        return  # not asked: HAMi's names are not checked
    for doc in ctx.docs:
        seen: set[int] = set()
        for node, path in walk(doc.root):
            if not isinstance(node, MappingNode):
                continue
            kind = _scalar(_get(node, "kind")) or ""
            pod, devices = POD_SPEC_PATHS.get(kind), VM_DEVICES.get(kind)
            target = _spec(node, pod or devices or ())
            if target is None or id(target) in seen or not (pod or devices):
                continue
            seen.add(id(target))
            ctx.check()
            if pod and isinstance(target, MappingNode):
                _pod(ctx, state, doc, target, path + pod, release)
            elif devices:
                _vm(ctx, state, doc, target, path + devices, release)
