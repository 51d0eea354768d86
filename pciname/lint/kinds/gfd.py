"""The container variant in pods and node selectors, judged by the model of
NVIDIA's k8s-device-plugin (:mod:`pciname.naming.container`, every release
from v0.15.0 in ``data/k8s-device-plugin/releases.json``):

* rule ``container-pods`` (code ``container-name-not-advertised``): a
  pod's ``nvidia.com/mig-<profile>`` the plugin never advertises by default:
  a ``+`` (it writes ``.``, ``internal/rm/rm.go``), or a profile with more GPU
  than compute instances (C != G: go-nvlib writes ``<C>c.<G>g.<GB>gb``, and
  the plugin skips it under MIG strategy ``mixed``);
* rule ``gfd-selectors`` (code ``gfd-label-value-never-set``): a
  ``nodeSelector`` or a node affinity's ``In`` expression that selects a
  value of a label GPU Feature Discovery sets per resource
  (``<resource>.family``, ``.sharing-strategy``, ``.count``, ...) that no
  release writes, or a label of a renamed ``.shared`` resource, which GFD
  labels under the name it shares (``internal/lm/resource.go``): no node
  carries it, so the pod never schedules.

A ``nodeSelector`` names labels; only the resource labels GFD sets are
judged (``nvidia.com/gpu.<suffix>``, ``nvidia.com/gpu.shared.<suffix>``,
``nvidia.com/mig-<profile>.<suffix>``), and a value is a finding only when
no release can write it.
"""

from __future__ import annotations

import functools

from yaml.nodes import MappingNode, Node

from pciname.kubevirt.resources import CONTAINER, resource_kind
from pciname.lint.codes import CONTAINER_NAME_NOT_ADVERTISED, GFD_LABEL_VALUE_NEVER_SET, RuleName
from pciname.lint.document import Doc, RunState
from pciname.lint.nodes import YamlPath, get, items, scalar, sequence, walk
from pciname.lint.rules import Context, rule
from pciname.naming.container import PROFILE, Release, releases

MIG = "nvidia.com/mig-"
#: The fields of a container's resources whose keys are resource names.
RESOURCE_FIELDS = ("limits", "requests")
#: The GFD suffixes written from a Go int with %v: decimal integers.
INTEGERS = ("count", "replicas", "memory", "compute.major", "compute.minor")


def _span(found: list[Release]) -> str:
    return found[0].tag if len(found) == 1 else f"{found[0].tag}..{found[-1].tag}"


@functools.cache
def _suffixes() -> tuple[str, ...]:
    """Every suffix of a resource label any release sets, longest first."""
    found: set[str] = set()
    for release in releases().values():
        gfd = release.gfd
        found.update(gfd["base_labels"]["suffixes"], gfd["architecture_labels"]["suffixes"])
        found.add(gfd["memory_label"]["suffix"])
    return tuple(sorted(found, key=lambda s: (-len(s), s)))


def gfd_label(key: str) -> tuple[str, str] | None:
    """(resource, suffix) of a label GFD sets per resource, or None."""
    for suffix in _suffixes():
        if key.endswith("." + suffix):
            resource = key[: -len(suffix) - 1]
            if resource in ("nvidia.com/gpu", "nvidia.com/gpu.shared") or resource.startswith(MIG):
                return resource, suffix
    return None


def never_set(resource: str, suffix: str, value: str) -> tuple[str, list[str] | None] | None:
    """Why no release writes ``value`` for the label, and the values it
    writes (None: not one list); None when some release can write it."""
    known = list(releases().values())
    newest = known[-1]
    if suffix == "family":
        values = sorted({f for r in known for f in r.families()})
        if value in values:
            return None
        where = newest.where(newest.gfd["families"])
        return f"getArchFamily ({where}) writes only {', '.join(values)}", values
    if suffix == "sharing-strategy":
        values = sorted({v for r in known for v in r.gfd["sharing_strategies"]["values"].values()})
        if value in values:
            return None
        return (
            f"the sharing strategies are {', '.join(values)} ({newest.where(newest.gfd['sharing_strategies'])})",
            values,
        )
    if suffix in INTEGERS and not value.isdigit():
        return "GFD writes it as a decimal number (an int formatted with %v)", None
    if resource.endswith(".shared"):
        original = resource.removesuffix(".shared")
        labelled = newest.where(newest.gfd["full_gpu_resource"]["labelled_as"])
        why = f"GFD labels a shared resource under the name it shares, renamed or not ({labelled})"
        return why, [f"{original}.{suffix}"]
    return None


def _selected(node: Node, path: YamlPath) -> list[tuple[str, Node, YamlPath]]:
    """(label key, value node, path) of what one nodeSelector or matchExpressions selects."""
    if path and path[-1] == "nodeSelector" and isinstance(node, MappingNode):
        return [(key, value, path + (key,)) for key, _, value in items(node)]
    if not (path and path[-1] == "matchExpressions"):
        return []
    found: list[tuple[str, Node, YamlPath]] = []
    for i, expression in enumerate(sequence(node)):
        key, operator = scalar(get(expression, "key")), scalar(get(expression, "operator"))
        if key is not None and operator == "In":
            values = get(expression, "values")
            found.extend((key, v, path + (i, "values", j)) for j, v in enumerate(sequence(values)))
    return found


def _selectors(ctx: Context, doc: Doc, state: RunState) -> None:
    span = _span(list(releases().values()))
    for node, path in walk(doc.root):
        for key, value_node, where in _selected(node, path):
            label, value = gfd_label(key), scalar(value_node)
            if label is None or value is None:
                continue
            ctx.check()
            verdict = never_set(*label, value)
            if verdict is not None:
                why, expected = verdict
                facts = {"key": key, "selected": value, "why": why, "releases": span}
                state.findings.append(ctx.finding(doc, value_node, where, GFD_LABEL_VALUE_NEVER_SET, expected, **facts))


@rule(RuleName.GFD_SELECTORS)
def gfd_selectors(ctx: Context, state: RunState) -> None:
    """Each selected GFD label value no k8s-device-plugin release writes."""
    for doc in ctx.docs:
        _selectors(ctx, doc, state)


def mig_verdict(name: str) -> tuple[str, str | None] | None:
    """Why the plugin never advertises ``nvidia.com/mig-<profile>`` by default, and the name it
    gives instead (None: none); None when it may (or the name is not a MIG profile's: a config
    file can name a resource anything, and rule ``unmodelled-names`` says so)."""
    profile = name.removeprefix(MIG)
    m = PROFILE.fullmatch(profile)
    if not name.startswith(MIG) or m is None:
        return None
    newest = list(releases().values())[-1]
    mixed = newest.names["mig_mixed"]
    old, new = mixed["replace"]
    fixed = newest.mixed_name(profile)
    if old in profile and fixed is not None:
        return f"it writes {old!r} as {new!r} ({newest.where(mixed)})", fixed
    if fixed is None:
        forms = mixed["profile_forms"]
        single = newest.resource(newest.names["mig_single"]["name"])
        return (
            f"under MIG strategy mixed it skips profiles with C != G ({newest.where(mixed['only_c_equals_g'])}; "
            f"go-nvlib writes those {forms['otherwise']!r}), and under single every MIG device is {single}",
            None,
        )
    return None


def advertised(name: str) -> str | None:
    """What the model says of a container-plugin name a release advertises by default (None: no default)."""
    known = list(releases().values())
    span, newest = _span(known), known[-1]
    names = newest.names
    gpu = newest.resource(names["gpu"]["name"])
    if name == gpu:
        return f"k8s-device-plugin {span} advertises {name} for whole GPUs (and for MIG devices under strategy single)"
    if name == newest.shared(gpu):
        return f"k8s-device-plugin {span} advertises {name} for shared GPUs (time-slicing or MPS) renamed by default"
    profile = newest.mig_profile(name)
    if profile is not None:
        return f"k8s-device-plugin {span} advertises {name} for MIG profile {profile} under strategy mixed"
    return None


def _pods(ctx: Context, doc: Doc, state: RunState) -> None:
    span = _span(list(releases().values()))
    for node, path in walk(doc.root):
        if isinstance(node, MappingNode) and len(path) >= 2 and path[-2] == "resources" and path[-1] in RESOURCE_FIELDS:
            for name, key, _ in items(node):
                if resource_kind(name) != CONTAINER:
                    continue
                verdict = mig_verdict(name)
                if verdict is not None:
                    ctx.check()
                    why, instead = verdict
                    facts = {"name": name, "why": why, "instead": instead, "releases": span}
                    finding = ctx.finding(doc, key, path + (name,), CONTAINER_NAME_NOT_ADVERTISED, instead, **facts)
                    state.findings.append(finding)


@rule(RuleName.CONTAINER_PODS)
def container_pods(ctx: Context, state: RunState) -> None:
    """Each container-plugin MIG name a pod asks for that no release advertises by default."""
    for doc in ctx.docs:
        _pods(ctx, doc, state)
