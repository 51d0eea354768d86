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

Without ``--hami``, a Cozystack tenant Kubernetes config (its values, or an
``apps.cozystack.io`` ``Kubernetes`` object's ``spec``) whose
``addons.hami.enabled`` is true implies the HAMi the chosen Cozystack release
ships (:func:`pciname.hami.releases.cozystack`), with a note saying so; a
release that ships none gets a note that the switch turns nothing on.
"""

from __future__ import annotations

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pciname.hami.pods import check_container
from pciname.hami.releases import Release, cozystack as shipped_by, release as hami_release
from pciname.lint.codes import HAMI_IN_VM, RuleName
from pciname.lint.document import Doc, RunState, format_path, is_true
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


#: Where a Cozystack tenant's values switch HAMi on (every release that ships it reads this key).
SWITCH = ("addons", "hami", "enabled")


def _switched_on(ctx: Context) -> tuple[Doc, Node, YamlPath] | None:
    """The first ``addons.hami.enabled: true`` of a tenant's values or ``Kubernetes`` object."""
    for doc in ctx.docs:
        kubernetes = _scalar(_get(doc.root, "kind")) == "Kubernetes" and (
            _scalar(_get(doc.root, "apiVersion")) or ""
        ).startswith("apps.cozystack.io/")
        base, prefix = (_get(doc.root, "spec"), ("spec",)) if kubernetes else (doc.root, ())
        node = _spec(base, SWITCH)
        if is_true(node) and node is not None:
            return doc, node, prefix + SWITCH
    return None


def _implied(ctx: Context) -> Release | None:
    """The HAMi a tenant switched on implies (the chosen Cozystack release's), noted."""
    found = _switched_on(ctx)
    shipped = shipped_by(ctx.cozystack.version) if found is not None else None
    if found is None or shipped is None:
        return None
    doc, node, path = found
    if shipped.hami is None:
        text = f"{ctx.cozystack.label} ships no HAMi ({shipped.where}): this switch turns nothing on"
    else:
        text = (
            f"{ctx.cozystack.label} ships HAMi {shipped.hami} ({shipped.where}): pods are checked as it reads "
            f"them (--hami {shipped.hami})"
        )
    if ctx.want_notes:
        ctx.notes.append(f"{doc.file}:{node.start_mark.line + 1}: {format_path(path)}: {text}")
    return hami_release(shipped.hami) if shipped.hami is not None else None


@rule(RuleName.HAMI_PODS)
def hami_pods(ctx: Context, state: RunState) -> None:
    """With ``--hami`` (or a tenant's ``addons.hami.enabled``): each pod's
    containers and each VM's devices, as HAMi's release reads them."""
    ctx.hami = release = ctx.hami_asked or _implied(ctx)
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
