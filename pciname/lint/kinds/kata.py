"""Kata pods for lint: the pod specs that run under a Kata runtime class and
the ``nvidia.com/`` names their containers ask for, and what NVIDIA's Kata
sandbox device plugin advertises instead (docs/naming.md, section 8).

* **Which objects.** A Pod (``spec``), a Deployment, StatefulSet,
  DaemonSet, ReplicaSet, ReplicationController or Job (``spec.template.spec``),
  a PodTemplate (``template.spec``) and a CronJob
  (``spec.jobTemplate.spec.template.spec``), at any depth (a ``kind: List``
  too), told by ``kind``.
* **Which pods are Kata pods.** Those whose ``runtimeClassName`` starts with
  ``kata`` (:func:`pciname.kata.runtime.is_kata_runtime_class`: kata-deploy
  names its RuntimeClasses ``kata`` or ``kata-<hypervisor>[-<variant>]``,
  and the plugin's own GPU pod uses ``kata-qemu-nvidia-gpu``). Pods without
  one are left alone: their GPUs come from other plugins.
* **Which names.** The keys of ``resources.limits`` and
  ``resources.requests`` of every container and init container in the
  ``nvidia.com/`` domain.
* **Under which profile.** The linter's profile when it is a Kata one
  (``--profile gpu-operator@vX.Y.Z+kata`` or ``sandbox-device-plugin@vX.Y.Z``,
  with ``--alias``); else the newest ``gpu-operator@vX.Y.Z+kata`` (as the
  GPU Operator deploys the plugin: ``P_GPU_ALIAS`` unset), with a note
  saying so. A name that profile advertises is right. Another is
  ``wrong-kata-resource-name``: the devices it means (the KubeVirt plugin's
  names, of the linter's profile when it is a KubeVirt one, else the
  default; and the Kata plugin's per-model names, ``P_GPU_ALIAS=""``) and
  what the Kata plugin calls them, or, for a name no device has, the names
  it advertises.

Every node is visited once (YAML aliases do not multiply the work) and a pod
spec reached twice through aliases is checked once.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pciname.kata.runtime import is_kata_runtime_class, newest_kata_operator_profile
from pciname.kubevirt.resources import is_nvidia
from pciname.lint.codes import WRONG_KATA_RESOURCE_NAME, RuleName
from pciname.lint.document import RunState, format_path
from pciname.lint.hints import LIST_PERMITTED_MAX, Candidates, HintBudget
from pciname.lint.nodes import YamlPath, get as _get, items as _items, scalar as _scalar, walk
from pciname.lint.rules import Context, rule
from pciname.naming import kata
from pciname.naming.profiles import DEFAULT_PROFILE, with_aliases
from pciname.pciids import NVIDIA_VENDOR_ID

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: kind -> where its pod spec is.
POD_SPEC_PATHS: dict[str, tuple[str, ...]] = {
    "Pod": ("spec",),
    **{
        kind: ("spec", "template", "spec")
        for kind in ("Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job")
    },
    "PodTemplate": ("template", "spec"),
    "CronJob": ("spec", "jobTemplate", "spec", "template", "spec"),
}
#: The containers of a pod spec whose resources ask for devices.
CONTAINER_LISTS = ("initContainers", "containers")


@dataclass(frozen=True)
class KataRequest:
    """One ``nvidia.com/`` name a Kata pod's container asks for: its key node and path."""

    node: ScalarNode
    path: YamlPath
    name: str
    runtime_class: str


def kata_requests(root: Node, check: Callable[[], None]) -> list[KataRequest]:
    """Every ``nvidia.com/`` name the Kata pods of a document ask for, in document order."""
    found: list[KataRequest] = []
    specs: set[int] = set()
    for node, path in walk(root):
        if isinstance(node, MappingNode):
            where = POD_SPEC_PATHS.get(_scalar(_get(node, "kind")) or "")
            spec: Node | None = node
            for key in where or ():
                spec = _get(spec, key)
            if where and isinstance(spec, MappingNode) and id(spec) not in specs:
                specs.add(id(spec))
                check()
                found += _pod_requests(spec, path + where)
    return found


def _pod_requests(spec: MappingNode, path: YamlPath) -> list[KataRequest]:
    runtime_class = _scalar(_get(spec, "runtimeClassName"))
    if runtime_class is None or not is_kata_runtime_class(runtime_class):
        return []
    found = []
    for list_key in CONTAINER_LISTS:
        containers = _get(spec, list_key)
        for i, container in enumerate(containers.value if isinstance(containers, SequenceNode) else ()):
            resources = _get(container, "resources")
            for field in ("limits", "requests"):
                for name, key, _ in _items(_get(resources, field)):
                    if is_nvidia(name):
                        where = path + (list_key, i, "resources", field, name)
                        found.append(KataRequest(key, where, name, runtime_class))
    return found


def alias_state(alias: str | None) -> str:
    """How a message says what ``P_GPU_ALIAS`` is."""
    if alias is None:
        return f"{kata.PGPU_ALIAS_ENV} unset"
    return f'{kata.PGPU_ALIAS_ENV}="{alias}"'


class KataNames:
    """What the Kata profile a lint run checks Kata pods under advertises, and
    the verdict on a name (:meth:`verdict`)."""

    def __init__(self, resolver: ResolverLike, profile: ProfileLike, budget: HintBudget) -> None:
        given = resolver.view(profile).profile
        self.resolver, self.budget = resolver, budget
        self.chosen = given.is_kata
        self.kata: ProfileLike = profile if given.is_kata else newest_kata_operator_profile()
        self.kubevirt: ProfileLike = DEFAULT_PROFILE if given.is_kata else profile
        self.view = resolver.view(self.kata)
        self.profile = self.view.profile
        self.given_name = given.name
        self.advertised = self.view.by_resource()
        nvswitch = "" if self.profile.nvswitch_unset is not None else None
        # Views of aliased profiles are not kept by the resolver: these are made once per run.
        self.own = resolver.view(with_aliases(self.profile, "", nvswitch))  # each model its own name
        self.unset = resolver.view(self.profile._replace(alias=None, nvswitch_alias=None))
        self._candidates: Candidates | None = None
        self._verdicts: dict[str, tuple[Any, dict[str, Any]] | None] = {}

    def note(self) -> str:
        """Why Kata pods are checked under another profile than the linter's (one line)."""
        return (
            f"Kata pods' GPU names are checked under {self.profile.name} (the newest GPU Operator release in Kata "
            f"mode, {alias_state(None)} as it deploys the plugin): {self.given_name} is not a Kata profile; "
            "give --profile gpu-operator@vX.Y.Z+kata (and --alias) for another"
        )

    def verdict(self, name: str) -> tuple[Any, dict[str, Any]] | None:
        """None for a name the Kata profile advertises; else (expected, the
        finding's facts). Each name is judged once per run."""
        if name in self.advertised:
            return None
        if name not in self._verdicts:
            self._verdicts[name] = self._verdict(name)
        return self._verdicts[name]

    def _verdict(self, name: str) -> tuple[Any, dict[str, Any]]:
        facts: dict[str, Any] = {"profile": self.profile.name, "alias": alias_state(self.profile.alias), "name": name}
        kubevirt = {d.partition(":")[2] for d in self.resolver.reverse(name, self.kubevirt)}
        per_model = set(self.own.by_resource().get(name, ()))
        ids = sorted(kubevirt | per_model)
        rights = sorted({r for i in ids if (r := self.view.resource(i)) is not None})
        if not rights:
            return self._unknown(name, facts)
        own = {r for i in ids if (r := self.own.resource(i)) is not None}
        return (rights[0] if len(rights) == 1 else rights), {
            **facts,
            "right": ", ".join(rights),
            "devices": tuple(f"{NVIDIA_VENDOR_ID}:{i}" for i in ids),
            "what": "NVSwitch" if any(self.view.is_nvswitch(i) for i in ids) else "GPU",
            "kubevirt": bool(kubevirt),
            "per_model": bool(per_model),
            "own": ", ".join(sorted(own - set(rights) - {name})),
        }

    def _unknown(self, name: str, facts: dict[str, Any]) -> tuple[Any, dict[str, Any]]:
        """A name no device has: the names advertised (the closest, when more than a few)."""
        names = sorted(self.advertised)
        if len(names) <= LIST_PERMITTED_MAX:
            close = names
        else:
            if self._candidates is None:
                self._candidates = Candidates(names)
            close = self._candidates.closest(name, self.budget) or []
        ids = self.unset.by_resource().get(name, [])
        variable = kata.NVSWITCH_ALIAS_ENV if ids and self.unset.is_nvswitch(ids[0]) else kata.PGPU_ALIAS_ENV
        return close, {**facts, "suggestions": tuple(close), "unset_variable": variable if ids else ""}


@rule(RuleName.KATA_PODS)
def kata_pods(ctx: Context, state: RunState) -> None:
    """The names pods with a Kata runtime class ask for: what the Kata
    plugin advertises (:class:`pciname.lint.kinds.kata.KataNames`)."""
    names: KataNames | None = None
    for doc in ctx.docs:
        for request in kata_requests(doc.root, ctx.check):
            ctx.check()
            if names is None:
                names = KataNames(ctx.resolver, ctx.profile, ctx.budget)
                if not names.chosen:
                    mark = request.node.start_mark
                    ctx.notes.append(f"{doc.file}:{mark.line + 1}: {format_path(request.path)}: {names.note()}")
            verdict = names.verdict(request.name)
            if verdict is not None:
                expected, facts = verdict
                state.findings.append(
                    ctx.finding(
                        doc, request.node, request.path, WRONG_KATA_RESOURCE_NAME, expected, request.name, **facts
                    )
                )


__all__ = ["CONTAINER_LISTS", "POD_SPEC_PATHS", "KataNames", "KataRequest", "alias_state", "kata_requests"]
