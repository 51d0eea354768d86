"""A ValidatingAdmissionPolicy that holds GPU names to what the plugin advertises.

Pure: an allowed set of resource names in (from devices and vGPU types under a
profile, or from a KubeVirt CR's ``permittedHostDevices``), the
``admissionregistration.k8s.io/v1`` ValidatingAdmissionPolicy and its
ValidatingAdmissionPolicyBinding out, as plain data. kube-apiserver runs the
policy's CEL itself: no webhook, TLS, image or service.

What it checks (:data:`TARGETS` and :data:`HELM_TARGETS` are the one list,
the README's table is tested against it):

* every ``nvidia.com/`` ``deviceName`` in ``domain.devices.gpus[]`` and
  ``domain.devices.hostDevices[]`` of the objects that carry a VMI spec
  (VirtualMachineInstance, VirtualMachine, VirtualMachineInstanceReplicaSet,
  VirtualMachinePool, and the cluster-api KubeVirt provider's
  KubevirtMachineTemplate and KubevirtMachine, which Cozystack's tenant
  clusters render their workers from) must be allowed;
* the GPU names of Cozystack's tenant ``Kubernetes`` and ``KubernetesNodes``
  applications where kube-apiserver first sees them: the HelmRelease that
  Cozystack's aggregated API server writes for each (``spec.values``;
  ``nodeGroups.*.gpus[].name`` and ``gpus[].name``);
* the KubeVirt CR: a ``pciHostDevices`` entry with
  ``externalResourceProvider: true`` must carry the name the profile gives its
  selector's device, and a ``mediatedDevices`` one the name the plugin makes of
  its ``mdevNameSelector`` (for the vGPU types the policy knows), as
  ``pciname lint`` requires.

The CEL uses only the core language (``has()``, ``all``/``exists``/``filter``/
``map`` macros, ``in`` on maps, ``startsWith``, ``+`` on strings and lists):
what every Kubernetes release from 1.30 evaluates, and what the Python CEL
implementations the tests run it with understand (they lack the Kubernetes
extension libraries, so ``join``, ``lowerAscii`` and the like are not used).

Cost and size. Sets are map literals, so ``in`` is one lookup whatever their
size, and a constant map costs the same to build at any size (kube-apiserver
folds constants). What bounds them is cel-go's parser limit of 100,000 code
points per expression (:data:`MAX_EXPRESSION_CODE_POINTS`; kube-apiserver
keeps cel-go's default): a map is split into variables of at most
:data:`CHUNK_CODE_POINTS` each, and the whole policy must stay well below
etcd's 1.5 MiB object limit (:data:`MAX_POLICY_BYTES`).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pciname.base.cel import cel_string
from pciname.cozystack.releases import APPLICATION_KIND_LABEL, HELM_RELEASE_GROUP, HELM_RELEASE_KIND
from pciname.errors import PcinameError
from pciname.kubevirt.resources import PREFIX, is_nvidia
from pciname.lint.hints import LIST_PERMITTED_MAX, Candidates, HintBudget, not_permitted_hint
from pciname.naming.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:
    from pciname.kubevirt.generate import Skipped
    from pciname.lint.linter import Linter
    from pciname.resolution.resolver import ProfileLike, ResolverLike

API_VERSION = "admissionregistration.k8s.io/v1"
DEFAULT_NAME = "pciname-gpu-names"
#: validationActions a binding may take; Deny and Warn do not go together.
ACTIONS = ("Deny", "Warn", "Audit")
#: Day one: warn the client and write an audit annotation, refuse nothing.
DEFAULT_ACTIONS = ("Warn", "Audit")
#: cel-go's ExpressionSizeCodePointLimit, which kube-apiserver does not raise.
MAX_EXPRESSION_CODE_POINTS = 100_000
#: The most code points one generated map variable takes (room for the rest).
CHUNK_CODE_POINTS = 90_000
#: etcd refuses objects over 1.5 MiB; the policy keeps a margin below it.
MAX_POLICY_BYTES = 1_000_000
#: A validation's message when its messageExpression cannot be evaluated.
STATIC_MESSAGE = "a GPU name is not one the device plugin advertises (pciname admission policy)"
#: The policy's matchCondition: objects being deleted are not checked.
NOT_BEING_DELETED = "!has(object.metadata.deletionTimestamp)"
#: Cozystack's label on the HelmRelease of an application (``apps.cozystack.io/v1alpha1``).
COZYSTACK_KIND_LABEL = APPLICATION_KIND_LABEL


@dataclass(frozen=True, slots=True)
class Target:
    """An object kind that embeds a VMI spec: where its ``domain.devices`` is."""

    group: str
    resource: str
    kind: str
    devices: tuple[str, ...]  # the path from the object to domain.devices


_VMI_DEVICES = ("spec", "domain", "devices")
_TEMPLATE = ("spec", "template")

TARGETS = (
    Target("kubevirt.io", "virtualmachineinstances", "VirtualMachineInstance", _VMI_DEVICES),
    Target("kubevirt.io", "virtualmachines", "VirtualMachine", _TEMPLATE + _VMI_DEVICES),
    Target(
        "kubevirt.io", "virtualmachineinstancereplicasets", "VirtualMachineInstanceReplicaSet", _TEMPLATE + _VMI_DEVICES
    ),
    Target(
        "pool.kubevirt.io",
        "virtualmachinepools",
        "VirtualMachinePool",
        ("spec", "virtualMachineTemplate") + _TEMPLATE + _VMI_DEVICES,
    ),
    Target(
        "infrastructure.cluster.x-k8s.io",
        "kubevirtmachinetemplates",
        "KubevirtMachineTemplate",
        ("spec", "template", "spec", "virtualMachineTemplate") + _TEMPLATE + _VMI_DEVICES,
    ),
    Target(
        "infrastructure.cluster.x-k8s.io",
        "kubevirtmachines",
        "KubevirtMachine",
        ("spec", "virtualMachineTemplate") + _TEMPLATE + _VMI_DEVICES,
    ),
)

#: Cozystack applications (their HelmRelease's label) -> where their GPU names are in ``spec.values``.
HELM_TARGETS = {"Kubernetes": "nodeGroups.*.gpus[].name", "KubernetesNodes": "gpus[].name"}
HELM_RELEASE = (HELM_RELEASE_GROUP, "helmreleases", HELM_RELEASE_KIND)
KUBEVIRT_CR = ("kubevirt.io", "kubevirts", "KubeVirt")


@dataclass(frozen=True, slots=True)
class AdmissionPolicy:
    """The policy and binding (``objects``), the names it allows, the
    profile, and what was left out of the allowed set (with reasons)."""

    objects: tuple[dict[str, Any], ...]
    allowed: tuple[str, ...]
    profile: str
    left_out: tuple[Skipped, ...] = ()
    notes: tuple[str, ...] = field(default=())

    def as_list(self) -> dict[str, Any]:
        """A ``kind: List`` of the objects (``-o json``)."""
        return {"apiVersion": "v1", "kind": "List", "items": list(self.objects)}

    def to_yaml(self) -> str:
        """A multi-document YAML stream of the objects (``-o yaml``)."""
        import yaml

        from pciname.base.yaml_out import Dumper

        return yaml.dump_all(list(self.objects), Dumper=Dumper, sort_keys=False, allow_unicode=True, width=1 << 20)

    def to_json(self) -> str:
        return json.dumps(self.as_list(), indent=2, ensure_ascii=False) + "\n"


# -- CEL text ------------------------------------------------------------------


def _cel_map(pairs: Iterable[tuple[str, str | bool]]) -> str:
    items = [f"{cel_string(k)}: {'true' if v is True else cel_string(str(v))}" for k, v in pairs]
    return "{" + ", ".join(items) + "}"


def _chunks(pairs: Sequence[tuple[str, str | bool]]) -> list[str]:
    """Map literals of at most :data:`CHUNK_CODE_POINTS` each (at least one)."""
    out: list[str] = []
    current: list[tuple[str, str | bool]] = []
    size = 2
    for pair in pairs:
        item = len(_cel_map([pair])) + 2
        if current and size + item > CHUNK_CODE_POINTS:
            out.append(_cel_map(current))
            current, size = [], 2
        current.append(pair)
        size += item
    out.append(_cel_map(current))
    return out


def _has_chain(root: str, path: Sequence[str]) -> str:
    parts, expr = [], root
    for key in path:
        expr = f"{expr}.{key}"
        parts.append(f"has({expr})")
    return " && ".join(parts)


def _in_any(value: str, variables: Sequence[str]) -> str:
    return "(" + " || ".join(f"{value} in variables.{v}" for v in variables) + ")"


def _lookup(value: str, variables: Sequence[str], default: str) -> str:
    """``value``'s entry in the first of the map variables holding it, else ``default``."""
    expr = default
    for v in reversed(variables):
        expr = f"({value} in variables.{v} ? variables.{v}[{value}] : {expr})"
    return expr


# -- building ----------------------------------------------------------------


def _resolver(resolver: ResolverLike | None) -> ResolverLike:
    from pciname.resolution.resolver import resolver_or_default

    return resolver_or_default(resolver)


def _universe(resolver: ResolverLike, profile: ProfileLike = DEFAULT_PROFILE) -> set[str]:
    """The wrong names a hint is written for ahead of time: every name that a
    release of the profile's algorithm, the newest release or the preview
    advertises for an NVIDIA device, and the names of Cozystack's default
    tables. (Names of the older algorithms are some 2,600 more for the
    newest releases, and difflib over a large allowed set costs about 20 ms a
    name, so they are left to the fallback hint.)"""
    from pciname.cozystack.defaults import VARIANTS, built_in_defaults
    from pciname.naming.profiles import LATEST, PREVIEW, load_registry

    algorithm = resolver.view(profile).profile.algorithm
    wanted = [p.name for p in load_registry().plugin_releases() if p.algorithm == algorithm]
    names: set[str] = set()
    for spelling in [profile, *wanted, LATEST, PREVIEW]:
        try:
            names.update(r.resource_name for r in resolver.devices(spelling) if r.resource_name)
        except PcinameError:  # a release whose pci.ids is not installed
            continue
    for variant in VARIANTS:
        for manager in (False, True):
            table = built_in_defaults(variant, manager)
            if table is not None:
                names.update(e.resource_name for e in table.entries)
    return {n for n in names if is_nvidia(n)}


def allowed_from_devices(
    devices: Iterable[str],
    mdevs: Iterable[str] = (),
    profile: ProfileLike = DEFAULT_PROFILE,
    *,
    resolver: ResolverLike | None = None,
) -> tuple[dict[str, Any], tuple[Skipped, ...]]:
    """The permittedHostDevices block the profile's plugin gives these devices
    and vGPU types (names that would not work left out, with reasons)."""
    from pciname.kubevirt.generate import permitted_host_devices

    snippet = permitted_host_devices(devices, mdevs, profile, resolver=resolver)
    return snippet.data, snippet.left_out


def allowed_from_cr(
    text: str | bytes,
    filename: str,
    profile: ProfileLike = DEFAULT_PROFILE,
    *,
    resolver: ResolverLike | None = None,
    check: Callable[[], None] | None = None,
    stream: Callable[[str | bytes], Any] | None = None,
) -> tuple[dict[str, Any], list[str]]:
    """The permittedHostDevices entries of a KubeVirt CR (any YAML lint reads:
    a CR, Cozystack values, a bare table) that work under the profile, as one
    block; and ``pciname lint``'s findings on the rest, one line each (those
    entries are left out: their names never schedule). ``check`` is asked
    while the CR is linted and once it is read (it raises to stop: a
    caller's deadline); ``stream``: what the YAML is read through (a stream
    that asks ``check`` as it is read)."""
    from pciname.lint.compose import collector_paused  # one pause: the nodes are gone before it ends

    return collector_paused(_allowed_from_text)(text, filename, profile, resolver, check, stream)


def _allowed_from_text(
    text: str | bytes,
    filename: str,
    profile: ProfileLike,
    resolver: ResolverLike | None,
    check: Callable[[], None] | None,
    stream: Callable[[str | bytes], Any] | None,
) -> tuple[dict[str, Any], list[str]]:
    from pciname.lint.linter import Linter

    linter = Linter(profile, resolver=resolver, check=check)
    if not linter.add_text(stream(text) if stream is not None else text, filename):
        raise PcinameError(f"{filename}: no YAML document in it")
    if check is not None:
        check()
    return allowed_from_linter(linter, filename)


def allowed_from_linter(linter: Linter, filename: str) -> tuple[dict[str, Any], list[str]]:
    """:func:`allowed_from_cr` of the documents ``linter`` holds: it runs the
    linter and keeps the entries it found nothing wrong with, read from the
    nodes it composed (each alias once), in input order, each once."""
    findings = linter.run()
    if not linter.blocks:
        raise PcinameError(f"{filename}: no permittedHostDevices in it (a KubeVirt CR, Cozystack values or a table)")
    lists: dict[str, list[dict[str, Any]]] = {"pciHostDevices": [], "mediatedDevices": []}
    seen: set[tuple[str, tuple[tuple[str, Any], ...]]] = set()
    for key, entry in linter.working_entries:
        identity = (key, tuple(sorted(entry.items(), key=lambda item: item[0])))
        if identity not in seen:
            seen.add(identity)
            lists[key].append(entry)
    data: dict[str, Any] = {key: entries for key, entries in lists.items() if entries}
    about_entries = [f for f in findings if "pciHostDevices[" in f.path or "mediatedDevices[" in f.path]
    return data, [f.format() for f in about_entries]


def admission_policy(
    permitted: dict[str, Any],
    profile: ProfileLike = DEFAULT_PROFILE,
    actions: Sequence[str] = DEFAULT_ACTIONS,
    *,
    name: str = DEFAULT_NAME,
    left_out: Sequence[Skipped] = (),
    resolver: ResolverLike | None = None,
    check: Callable[[], None] | None = None,
) -> AdmissionPolicy:
    """The policy and binding that allow exactly the names of ``permitted``
    (a permittedHostDevices block) under ``profile``. ``check`` is asked
    while the hints are written (it raises to stop: a caller's deadline)."""

    resolver = _resolver(resolver)
    actions = check_actions(actions)
    check_name(name)
    view = resolver.view(profile)
    canonical: str = view.profile.name
    entries = [e for e in permitted.get("pciHostDevices") or [] if isinstance(e, dict)]
    mdev_entries = [e for e in permitted.get("mediatedDevices") or [] if isinstance(e, dict)]
    allowed = sorted(
        {str(e["resourceName"]) for e in entries + mdev_entries if is_nvidia(str(e.get("resourceName", "")))}
    )
    cel = _name_maps(resolver, profile, allowed, _mdev_types(mdev_entries, view.profile.mdev_name), check)

    # An UPDATE is checked for what it adds: a wrong name (or CR entry) that
    # the old object already held is let through, so objects written before
    # the allowed set changed can still be updated (finalizers removed, status
    # written). "held*" are the old object's wrong names, empty on CREATE.
    cel.add("updating", "request.operation == 'UPDATE'")
    _add_vmi_devices(cel)
    _add_helm_releases(cel)
    _add_kubevirt_cr(cel)
    # A VM created with generateName has no name yet.
    cel.add(
        "objectName",
        "has(object.metadata.name) ? object.metadata.name : "
        "(has(object.metadata.generateName) ? object.metadata.generateName + '*' : '')",
    )
    validations = _validations(cel, canonical)
    for v in cel.variables:
        if len(v["expression"]) > MAX_EXPRESSION_CODE_POINTS:
            raise PcinameError(f"the policy's variable {v['name']} is over the CEL size limit")  # pragma: no cover

    policy = _policy_object(name, canonical, len(allowed), cel.variables, validations)
    binding = {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": name, "labels": dict(_LABELS)},
        "spec": {"policyName": name, "validationActions": list(actions)},
    }
    size = len(json.dumps(policy).encode())
    if size > MAX_POLICY_BYTES:
        raise PcinameError(f"the policy would be {size} bytes, over the {MAX_POLICY_BYTES} pciname allows")
    return AdmissionPolicy((policy, binding), tuple(allowed), canonical, tuple(left_out))


@dataclass
class _Cel:
    """The policy's CEL variables as they are written, in order, and the
    map variables (chunks of one map each) the checks look names up in."""

    variables: list[dict[str, str]] = field(default_factory=list)
    allowed: list[str] = field(default_factory=list)  # the allowed names (a set)
    hints: list[str] = field(default_factory=list)  # wrong name -> its hint (none: the fallback)
    pci_names: list[str] = field(default_factory=list)  # CR selector -> the name the profile gives it
    mdev_names: list[str] = field(default_factory=list)  # mdevNameSelector -> its resource
    fallback: str = ""  # the hint of a wrong name that has none of its own

    def add(self, name: str, expression: str) -> None:
        self.variables.append({"name": name, "expression": expression})

    def add_maps(self, prefix: str, pairs: Sequence[tuple[str, str | bool]]) -> list[str]:
        """``pairs`` as map variables ``prefix0``, ``prefix1``...: their names."""
        names = []
        for i, literal in enumerate(_chunks(pairs)):
            names.append(f"{prefix}{i}")
            self.add(f"{prefix}{i}", literal)
        return names

    def held(self, name: str, expression: str) -> None:
        """A variable of the old object's wrong names: ``expression`` on UPDATE, else empty."""
        self.add(name, f"(variables.updating ? {expression} : [])")

    def bad(self, value: str) -> str:
        """Whether the name ``value`` is an NVIDIA one not allowed."""
        return f"({value}.startsWith({cel_string(PREFIX)}) && !{_in_any(value, self.allowed)})"

    def hint(self, value: str) -> str:
        """The hint for the wrong name ``value``."""
        return _lookup(value, self.hints, cel_string(self.fallback)) if self.hints else cel_string(self.fallback)


def _selectors(resolver: ResolverLike, profile: ProfileLike) -> list[tuple[str, str | bool]]:
    """The KubeVirt CR rule: every NVIDIA device the profile advertises, by
    selector (upper- and lower-case hex, as KubeVirt's docs and lint write it)."""
    selectors: list[tuple[str, str | bool]] = []
    for r in resolver.devices(profile):
        if r.resource_name is not None and r.advertised:
            upper = r.device.upper()
            selectors.append((upper, r.resource_name))
            if r.device != upper:
                selectors.append((r.device, r.resource_name))
    return selectors


def _mdev_types(mdev_entries: Sequence[dict[str, Any]], rule: str) -> dict[str, str]:
    """The mediatedDevices entries' selectors -> the resource the plugin
    makes of each (by the profile's mdev naming ``rule``)."""
    from pciname.naming.mdev import mdev_resource

    mdev_types: dict[str, str] = {}
    for e in mdev_entries:
        selector = e.get("mdevNameSelector")
        if isinstance(selector, str):
            expected = mdev_resource(selector, rule)
            if expected is not None:
                mdev_types.setdefault(selector, expected)
    return mdev_types


def _hints(
    resolver: ResolverLike, profile: ProfileLike, allowed: Sequence[str], check: Callable[[], None] | None
) -> tuple[list[tuple[str, str | bool]], bool]:
    """Hints for the wrong names known ahead of time, when the hint budget
    covers them all (decided before any is written; else none is), and
    whether they were written."""
    if len(allowed) <= LIST_PERMITTED_MAX:
        return [], True
    wrong_names = sorted(_universe(resolver, profile) - set(allowed))
    budget = HintBudget(check=check)
    if budget.pairs < len(wrong_names) * len(allowed):
        return [], False
    candidates = Candidates(allowed)
    return [(wrong, not_permitted_hint(wrong, candidates, budget)[1]) for wrong in wrong_names], True


def _name_maps(
    resolver: ResolverLike,
    profile: ProfileLike,
    allowed: Sequence[str],
    mdev_types: dict[str, str],
    check: Callable[[], None] | None,
) -> _Cel:
    """The policy's first variables: the maps of allowed names, of hints,
    of the CR's selectors and of the mdev types' resources."""
    selectors = _selectors(resolver, profile)
    hints, written = _hints(resolver, profile, allowed, check)
    cel = _Cel(fallback=_fallback_hint(allowed, written))
    cel.allowed = cel.add_maps("allowed", [(n, True) for n in allowed])
    cel.hints = cel.add_maps("hints", hints) if hints else []
    cel.pci_names = cel.add_maps("pciNames", selectors)
    cel.mdev_names = cel.add_maps("mdevNames", sorted(mdev_types.items()))
    return cel


# VMI specs, wherever they are embedded.


def _bad_devices(cel: _Cel, root: str, fresh: str = "") -> str:
    """The wrong deviceNames of ``root``'s VMI spec (of whichever target kind it is)."""
    branches = "[]"
    for target in reversed(TARGETS):
        devices = f"{root}." + ".".join(target.devices)
        collect = " + ".join(
            f"(has({devices}.{key}) ? {devices}.{key}.filter(d, has(d.deviceName) && {cel.bad('d.deviceName')}{fresh})"
            f".map(d, d.deviceName) : [])"
            for key in ("gpus", "hostDevices")
        )
        guard = _has_chain(root, target.devices)
        branches = f"({root}.kind == {cel_string(target.kind)} ? ({guard} ? {collect} : []) : {branches})"
    return branches


def _add_vmi_devices(cel: _Cel) -> None:
    cel.held("heldDevices", _bad_devices(cel, "oldObject"))
    cel.add("badDevices", _bad_devices(cel, "object", " && !(d.deviceName in variables.heldDevices)"))


# Cozystack: the HelmRelease of a tenant Kubernetes / KubernetesNodes.


def _application(root: str) -> str:
    """The Cozystack application ``root`` is the HelmRelease of, else ''."""
    label = cel_string(COZYSTACK_KIND_LABEL)
    return (
        f"({root}.kind == {cel_string(HELM_RELEASE_KIND)} && has({root}.metadata.labels) && {label} in "
        f"{root}.metadata.labels && has({root}.spec) && has({root}.spec.values) ? {root}.metadata.labels[{label}] : '')"
    )


def _wrong_gpus(cel: _Cel, gpus: str, fresh: str = "") -> str:
    return f"{gpus}.filter(x, has(x.name) && {cel.bad('x.name')}{fresh}).map(x, x.name)"


def _add_helm_releases(cel: _Cel) -> None:
    old_groups = "oldObject.spec.values.nodeGroups"
    cel.held(
        "heldGpus",  # a list of lists: each node group's wrong names, or the KubernetesNodes pool's
        f"({_application('oldObject')} == 'Kubernetes' && has({old_groups}) ? {old_groups}.map(g, "
        f"has({old_groups}[g].gpus) ? {_wrong_gpus(cel, f'{old_groups}[g].gpus')} : []) : "
        f"({_application('oldObject')} == 'KubernetesNodes' && has(oldObject.spec.values.gpus) ? "
        f"[{_wrong_gpus(cel, 'oldObject.spec.values.gpus')}] : []))",
    )
    fresh_gpu = " && !variables.heldGpus.exists(l, x.name in l)"
    cel.add("application", _application("object"))
    groups = "object.spec.values.nodeGroups"
    cel.add(
        "badGroups",
        f"(variables.application == 'Kubernetes' && has({groups}) ? {groups}.filter(g, "
        f"has({groups}[g].gpus) && {groups}[g].gpus.exists(x, has(x.name) && {cel.bad('x.name')}{fresh_gpu})) : [])",
    )
    cel.add(
        "badNodeGpus",
        "(variables.application == 'KubernetesNodes' && has(object.spec.values.gpus) ? "
        f"{_wrong_gpus(cel, 'object.spec.values.gpus', fresh_gpu)} : [])",
    )
    cel.add(
        "badPoolGpus",
        f"(size(variables.badGroups) > 0 ? {_wrong_gpus(cel, f'{groups}[variables.badGroups[0]].gpus', fresh_gpu)} : [])",
    )


# The KubeVirt CR: entries as [selector, resourceName] pairs.

_ENABLED = "!(has(e.disabled) && e.disabled == true)"  # lint skips disabled entries too


def _wrong_entries(cel: _Cel, root: str, key: str, fresh: str = "") -> str:
    """``root``'s (a KubeVirt CR's) ``key`` entries whose name is not the profile's."""
    phd = f"{root}.spec.configuration.permittedHostDevices"
    guard = f"{root}.kind == 'KubeVirt' && {_has_chain(root, ('spec', 'configuration', 'permittedHostDevices'))}"
    if key == "pciHostDevices":
        expected = _lookup("e.pciVendorSelector", cel.pci_names, "''")
        wrong = (
            "has(e.externalResourceProvider) && e.externalResourceProvider == true && has(e.pciVendorSelector) "
            f"&& has(e.resourceName) && {_in_any('e.pciVendorSelector', cel.pci_names)} "
            f"&& e.resourceName != {expected}"
        )
    else:
        expected = _lookup("e.mdevNameSelector", cel.mdev_names, "''")
        wrong = (
            "has(e.mdevNameSelector) && has(e.resourceName) && e.resourceName.startsWith('nvidia.com/') "
            f"&& {_in_any('e.mdevNameSelector', cel.mdev_names)} && e.resourceName != {expected}"
        )
    return f"({guard} && has({phd}.{key}) ? {phd}.{key}.filter(e, {_ENABLED} && {wrong}{fresh}) : [])"


def _add_kubevirt_cr(cel: _Cel) -> None:
    for key, selector, suffix in (
        ("pciHostDevices", "pciVendorSelector", "Pci"),
        ("mediatedDevices", "mdevNameSelector", "Mdev"),
    ):
        cel.held(f"held{suffix}", f"{_wrong_entries(cel, 'oldObject', key)}.map(e, [e.{selector}, e.resourceName])")
        fresh = f" && !([e.{selector}, e.resourceName] in variables.held{suffix})"
        cel.add(f"bad{suffix}", _wrong_entries(cel, "object", key, fresh))


# The validations, and the objects.


def _validation(expression: str, message: str) -> dict[str, str]:
    return {"expression": expression, "messageExpression": message, "message": STATIC_MESSAGE, "reason": "Invalid"}


def _validations(cel: _Cel, canonical: str) -> list[dict[str, str]]:
    """One validation per family of wrong names, with the message lint writes."""
    first_device = "variables.badDevices[0]"
    first_node = "variables.badNodeGpus[0]"
    first_pool = "variables.badPoolGpus[0]"
    first_pci = "variables.badPci[0]"
    first_mdev = "variables.badMdev[0]"
    not_permitted = cel_string(
        " is not permitted by the KubeVirt configuration (pciname admission policy, " + canonical + "); "
    )
    advertises = f"': ' + {cel_string(canonical)} + ' advertises it as ' + "
    return [
        _validation(
            "size(variables.badDevices) == 0",
            f"object.kind + ' ' + variables.objectName + ': GPU deviceName ' + {first_device} + "
            f"{not_permitted} + {cel.hint(first_device)}",
        ),
        _validation(
            "size(variables.badPoolGpus) == 0",
            "'HelmRelease ' + variables.objectName + ' (Cozystack Kubernetes): nodeGroups.' + "
            f"variables.badGroups[0] + '.gpus: ' + {first_pool} + {not_permitted} + {cel.hint(first_pool)}",
        ),
        _validation(
            "size(variables.badNodeGpus) == 0",
            "'HelmRelease ' + variables.objectName + ' (Cozystack KubernetesNodes): gpus: ' + "
            f"{first_node} + {not_permitted} + {cel.hint(first_node)}",
        ),
        _validation(
            "size(variables.badPci) == 0",
            f"'KubeVirt ' + variables.objectName + ': pciHostDevices ' + {first_pci}.pciVendorSelector + {advertises}"
            f"{_lookup(first_pci + '.pciVendorSelector', cel.pci_names, repr(''))} + ', not ' + {first_pci}.resourceName",
        ),
        _validation(
            "size(variables.badMdev) == 0",
            f"'KubeVirt ' + variables.objectName + ': mediatedDevices ' + {first_mdev}.mdevNameSelector + {advertises}"
            f"{_lookup(first_mdev + '.mdevNameSelector', cel.mdev_names, repr(''))} + ', not ' + {first_mdev}.resourceName",
        ),
    ]


_LABELS = {"app.kubernetes.io/managed-by": "pciname"}


def _policy_object(
    name: str, canonical: str, allowed: int, variables: list[dict[str, str]], validations: list[dict[str, str]]
) -> dict[str, Any]:
    """The ValidatingAdmissionPolicy of ``variables`` and ``validations``
    (``allowed``: how many names it allows)."""
    rules: dict[str, list[str]] = {}
    for group, resource in [(t.group, t.resource) for t in TARGETS] + [HELM_RELEASE[:2], KUBEVIRT_CR[:2]]:
        rules.setdefault(group, []).append(resource)
    annotations = {"pciname.io/profile": canonical, "pciname.io/allowed-names": str(allowed)}
    return {
        "apiVersion": API_VERSION,
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": name, "labels": dict(_LABELS), "annotations": annotations},
        "spec": {
            "failurePolicy": "Fail",
            # An object being deleted is let go: its finalizers' removal is an
            # UPDATE that must pass whatever names it holds.
            "matchConditions": [{"name": "not-being-deleted", "expression": NOT_BEING_DELETED}],
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": [group],
                        "apiVersions": ["*"],
                        "operations": ["CREATE", "UPDATE"],
                        "resources": resources,
                    }
                    for group, resources in rules.items()
                ]
            },
            "variables": variables,
            "validations": validations,
        },
    }


def _fallback_hint(allowed: Sequence[str], written: bool = True) -> str:
    """The hint of a name no hint was written for: what lint says of a name
    with no close permitted one; or, where the hint budget left every hint
    out (``written`` false), that and how to find one."""
    if len(allowed) <= LIST_PERMITTED_MAX:
        return not_permitted_hint("", allowed)[1]
    if not written:
        return f"{len(allowed)} permitted, too many for pciname to write hints for: `pciname lint` names the closest"
    return f"no permitted name pciname knows of is close ({len(allowed)} permitted)"


def check_actions(actions: Sequence[str]) -> tuple[str, ...]:
    """The binding's validationActions: known, each once, not Deny with Warn."""
    out = tuple(dict.fromkeys(actions))
    if not out:
        raise PcinameError(f"no validation action: use {', '.join(ACTIONS)}")
    for action in out:
        if action not in ACTIONS:
            raise PcinameError(f"unknown validation action {action!r}: use {', '.join(ACTIONS)}")
    if "Deny" in out and "Warn" in out:
        raise PcinameError(
            "Deny and Warn cannot go together (Kubernetes refuses the binding): Deny already tells the client"
        )
    return out


def check_name(name: str) -> str:
    """A policy name: a DNS subdomain (lower case, digits, '-', '.'; at most 253)."""
    import re

    if not re.fullmatch(r"[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*", name) or len(name) > 253:
        raise PcinameError(f"policy name {name!r} is not a DNS subdomain name (lower case letters, digits, '-', '.')")
    return name
