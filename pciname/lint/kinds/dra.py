"""DRA claims for lint: the ResourceClaims and ResourceClaimTemplates of every
``resource.k8s.io`` version (v1, v1beta2: a request's device class and
selectors under ``exactly`` or ``firstAvailable``; v1beta1: on the request
itself) and the KubeVirt VMs that use them, checked against what NVIDIA's
DRA driver publishes for vfio GPUs (docs: README, "GPUs through DRA").

* **Which objects.** Mappings of ``kind`` ResourceClaim (requests at
  ``spec.devices.requests``) or ResourceClaimTemplate
  (``spec.spec.devices.requests``) and an ``apiVersion`` of
  ``resource.k8s.io``, at any depth; and every VMI spec (a mapping with
  ``domain.devices``: VirtualMachine, VirtualMachineInstance, pools, replica
  sets) whose ``gpus[]`` / ``hostDevices[]`` name a ``claimName``.
* **Under which releases.** The driver and KubeVirt release given
  (``--dra-driver``, ``--kubevirt``), else the newest combination that works
  (:func:`pciname.dra.facts.choose`), with a note saying so.
* **What is checked.** A request for the driver release's vfio DeviceClass:
  each CEL selector, judged on every vfio device the release can publish
  (:func:`pciname.dra.selectors.judge`): one that matches none is
  ``dra-selector-matches-nothing``, one that reads host-dependent values
  ``dra-host-dependent-selector``; one lint cannot judge is a note. A VM's
  entry: its ``claimName`` among the VMI spec's ``resourceClaims``
  (``dra-unknown-claim``); its ``requestName`` among the requests of the
  ResourceClaim or ResourceClaimTemplate it names, when that is in the input
  (``dra-unknown-request``); that request's DeviceClass the vfio one
  (``dra-wrong-device-class``). A request in the other version's layout is
  ``dra-request-layout``. An opaque config for the driver
  (``devices.config[].opaque``) as the release's ``PrepareResourceClaims``
  reads it (strict decoding, then ``Normalize`` and ``Validate``; only a
  ``VfioDeviceConfig`` applies to a vfio request a config names): one it
  refuses is ``dra-invalid-config``.

Every node is visited once (YAML aliases do not multiply the work).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pciname.dra import constraints
from pciname.dra.facts import EXACTLY_APIS, Combination, DraCombinationError, choose
from pciname.dra.selectors import Budget, judge
from pciname.lint.codes import (
    DRA_CONSTRAINT_NOT_PUBLISHED,
    DRA_HOST_DEPENDENT_SELECTOR,
    DRA_INVALID_CONFIG,
    DRA_PREPARE_CRASH,
    DRA_REQUEST_LAYOUT,
    DRA_SELECTOR_MATCHES_NOTHING,
    DRA_UNKNOWN_CLAIM,
    DRA_UNKNOWN_REQUEST,
    DRA_WRONG_DEVICE_CLASS,
    RuleName,
)
from pciname.lint.document import RunState, format_path
from pciname.lint.nodes import (
    YamlPath,
    get as _get,
    items as _items,
    key_node as _key_node,
    scalar as _scalar,
    sequence as _sequence,
)
from pciname.lint.rules import Context, rule

#: kind -> where its ``devices`` block is.
CLAIM_KINDS: dict[str, tuple[str, ...]] = {"ResourceClaim": ("spec",), "ResourceClaimTemplate": ("spec", "spec")}
RESOURCE_GROUP = "resource.k8s.io"
#: The VMI's device lists that take ``claimName``/``requestName``, and KubeVirt's gate for each.
CLAIM_LISTS = {"gpus": "GPUsWithDRA", "hostDevices": "HostDevicesWithDRA"}


@dataclass(frozen=True)
class DraProblem:
    """One finding: its document, node and path, code, expected value and the
    facts its message is made of (:data:`pciname.lint.codes.CODES`)."""

    doc: Any
    node: Node
    path: YamlPath
    code: str
    expected: Any = None
    facts: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class DraNote:
    doc: Any
    node: Node
    path: YamlPath
    text: str


@dataclass
class _DeviceRequest:
    """One request for devices of one class: a request (``exactly``, or a
    v1beta1 request) or one of its ``firstAvailable`` subrequests."""

    name: str
    node: MappingNode
    path: YamlPath
    device_class: ScalarNode | None


@dataclass
class _Claim:
    doc: Any
    kind: str
    name: str | None
    namespace: str | None
    requests: list[_DeviceRequest] = field(default_factory=list)
    names: list[str] = field(default_factory=list)  # the requests' (and subrequests' request/sub) names
    configs: list[tuple[MappingNode, YamlPath]] = field(default_factory=list)  # devices.config[]
    constraints: list[tuple[MappingNode, YamlPath]] = field(default_factory=list)  # devices.constraints[]


@dataclass
class _Reference:
    """A ``gpus[]`` / ``hostDevices[]`` entry with a ``claimName``, and its VMI spec."""

    doc: Any
    entry: MappingNode
    path: YamlPath
    list_key: str
    spec: MappingNode
    spec_path: YamlPath
    namespace: str | None


#: The keys without which :meth:`DraClaims._collect` finds nothing in a mapping.
_COLLECTED = frozenset(("kind", "domain"))


def _namespace(node: MappingNode) -> str | None:
    return _scalar(_get(_get(node, "metadata"), "namespace"))


class DraClaims:
    """One lint run's DRA check: :meth:`run` over the documents' roots gives
    the problems and notes."""

    def __init__(
        self,
        combination: Combination | None = None,
        check: Callable[[], None] | None = None,
        *,
        refusal: str | None = None,
    ) -> None:
        self.given = combination
        #: Why the KubeVirt release asked for runs no DRA claims (None: it does).
        self.refusal = refusal
        self._combination = combination
        self._check = check or (lambda: None)
        #: The CEL evaluation the run's selectors may spend together.
        self._budget = Budget()
        self.problems: list[DraProblem] = []
        self.notes: list[DraNote] = []
        self._claims: list[_Claim] = []
        self._references: list[_Reference] = []
        self._selectors: list[tuple[Any, ScalarNode, YamlPath]] = []
        self._reported: set[int] = set()

    @property
    def combination(self) -> Combination:
        if self._combination is None:
            self._combination = choose()
        return self._combination

    def run(self, roots: Iterable[tuple[Any, Node]]) -> tuple[list[DraProblem], list[DraNote]]:
        for doc, root in roots:
            self._walk(doc, root)
        if not (self._claims or self._references):
            return [], []
        if self.refusal is not None:  # claims for a KubeVirt that cannot run them
            raise DraCombinationError(self.refusal)
        self._releases_note()
        for claim in self._claims:
            for request in claim.requests:
                self._check()
                self._check_request(claim, request)
            for node, path in claim.configs:
                self._check()
                self._check_config(claim, node, path)
            self._check_release(claim)
        for reference in self._references:
            self._check()
            self._check_reference(reference)
        self._gate_notes()
        return self.problems, self.notes

    # -- collecting ---------------------------------------------------------------------

    def _walk(self, doc: Any, root: Node) -> None:
        seen: set[int] = set()
        stack: list[tuple[Node, YamlPath, str | None]] = [(root, (), None)]
        while stack:
            node, path, namespace = stack.pop()
            if id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, MappingNode):
                pairs = [(key.value, value) for key, value in node.value if isinstance(key, ScalarNode)]
                names = {name for name, _ in pairs}
                if "metadata" in names:
                    namespace = _namespace(node) or namespace
                if not names.isdisjoint(_COLLECTED):  # else _collect finds nothing: most mappings
                    self._collect(doc, node, path, namespace)
                stack.extend([(value, path + (name,), namespace) for name, value in reversed(pairs)])
            elif isinstance(node, SequenceNode):
                stack.extend([(item, path + (i,), namespace) for i, item in reversed(list(enumerate(node.value)))])

    def _collect(self, doc: Any, node: MappingNode, path: YamlPath, namespace: str | None) -> None:
        kind = _scalar(_get(node, "kind")) or ""
        group, _, version = (_scalar(_get(node, "apiVersion")) or "").partition("/")
        if kind in CLAIM_KINDS and group == RESOURCE_GROUP:
            self._claims.append(self._claim(doc, node, path, kind, version, namespace))
        devices = _get(_get(node, "domain"), "devices")
        for list_key in CLAIM_LISTS:
            for i, entry in enumerate(_sequence(_get(devices, list_key))):
                if isinstance(entry, MappingNode) and _get(entry, "claimName") is not None:
                    where = path + ("domain", "devices", list_key, i)
                    self._references.append(_Reference(doc, entry, where, list_key, node, path, namespace))

    def _claim(
        self, doc: Any, node: MappingNode, path: YamlPath, kind: str, version: str, namespace: str | None
    ) -> _Claim:
        claim = _Claim(doc, kind, _scalar(_get(_get(node, "metadata"), "name")), namespace)
        where = CLAIM_KINDS[kind]
        block: Node | None = node
        for key in where:
            block = _get(block, key)
        requests_path = path + where + ("devices", "requests")
        for i, request in enumerate(_sequence(_get(_get(block, "devices"), "requests"))):
            if isinstance(request, MappingNode):
                self._requests(doc, claim, request, requests_path + (i,), version)
        for i, config in enumerate(_sequence(_get(_get(block, "devices"), "config"))):
            if isinstance(config, MappingNode):
                claim.configs.append((config, path + where + ("devices", "config", i)))
        for i, item in enumerate(_sequence(_get(_get(block, "devices"), "constraints"))):
            if isinstance(item, MappingNode):
                claim.constraints.append((item, path + where + ("devices", "constraints", i)))
        return claim

    def _requests(self, doc: Any, claim: _Claim, request: MappingNode, path: YamlPath, version: str) -> None:
        name = _scalar(_get(request, "name")) or ""
        claim.names.append(name)
        self._layout(doc, request, path, version)
        exactly = _get(request, "exactly") if version in EXACTLY_APIS else request
        if isinstance(exactly, MappingNode) and _get(exactly, "deviceClassName") is not None:
            where = path + ("exactly",) if exactly is not request else path
            claim.requests.append(_DeviceRequest(name, exactly, where, _scalar_node(exactly, "deviceClassName")))
        for i, sub in enumerate(_sequence(_get(request, "firstAvailable"))):
            if isinstance(sub, MappingNode):
                sub_name = f"{name}/{_scalar(_get(sub, 'name')) or ''}"
                claim.names.append(sub_name)
                where = path + ("firstAvailable", i)
                claim.requests.append(_DeviceRequest(sub_name, sub, where, _scalar_node(sub, "deviceClassName")))

    def _layout(self, doc: Any, request: MappingNode, path: YamlPath, version: str) -> None:
        """A request in the other versions' layout (the API server refuses it)."""
        wrapped = version in EXACTLY_APIS
        key = "deviceClassName" if wrapped else "exactly"
        node = _key_node(request, key)
        if node is not None and version in (*EXACTLY_APIS, "v1beta1"):
            facts = {"api": f"{RESOURCE_GROUP}/{version}", "key": key, "wrapped": wrapped}
            self.problems.append(DraProblem(doc, node, path + (key,), DRA_REQUEST_LAYOUT, None, facts))

    # -- checking -------------------------------------------------------------------------

    def _check_request(self, claim: _Claim, request: _DeviceRequest) -> None:
        vfio_class = self.combination.vfio["device_class"]["name"]
        if _scalar(request.device_class) != vfio_class:
            return
        for i, item in enumerate(_sequence(_get(request.node, "selectors"))):
            expression = _get(_get(item, "cel"), "expression")
            if isinstance(expression, ScalarNode):
                self._check_selector(claim.doc, expression, request.path + ("selectors", i, "cel", "expression"))

    def _check_selector(self, doc: Any, node: ScalarNode, path: YamlPath) -> None:
        combination = self.combination
        verdict = judge(node.value, combination, check=self._check, budget=self._budget)
        facts = {"driver": combination.driver, "device_class": combination.vfio["device_class"]["name"]}
        if verdict.matches is False:
            facts["reasons"] = verdict.reasons
            self.problems.append(DraProblem(doc, node, path, DRA_SELECTOR_MATCHES_NOTHING, verdict.expected, facts))
            return
        if verdict.host_dependent:
            facts["attributes"] = verdict.host_dependent
            self.problems.append(DraProblem(doc, node, path, DRA_HOST_DEPENDENT_SELECTOR, None, facts))
        if verdict.matches is None:
            self.notes.append(
                DraNote(
                    doc,
                    node,
                    path,
                    f"lint cannot judge this selector ({verdict.unjudgeable}); "
                    f"check it against what DRA driver {combination.driver} publishes for vfio devices "
                    "(README, GPUs through DRA)",
                )
            )

    def _check_config(self, claim: _Claim, node: MappingNode, path: YamlPath) -> None:
        """One ``devices.config[]`` entry, as the driver release prepares it."""
        combination = self.combination
        opaque = _get(node, "opaque")
        parameters = _get(opaque, "parameters")
        if _scalar(_get(opaque, "driver")) != combination.driver_facts["driver_name"]:
            return
        if not isinstance(parameters, MappingNode):
            return  # the API server's to refuse
        known = combination.vfio.get("config") or {}
        where = path + ("opaque", "parameters")
        api, kind = _scalar(_get(parameters, "apiVersion")), _scalar(_get(parameters, "kind"))
        problems: list[tuple[Node, YamlPath, str, Any]] = []
        if known and (api, kind) == (known["api_version"], known["kind"]):
            problems = _vfio_config_problems(parameters, where, known)
        else:
            vfio_class = combination.vfio["device_class"]["name"]
            vfio = {r.name for r in claim.requests if _scalar(r.device_class) == vfio_class}
            named = [n for n in (_scalar(r) for r in _sequence(_get(node, "requests"))) if n in vfio]
            if named:  # the driver's "cannot apply <kind> to device ... of type vfio"
                own = f"{known['kind']} ({known['api_version']})" if known else "no config"
                what = (
                    f"applies only {own} to a vfio device, not {kind or 'a config without a kind'}"
                    f" ({api or 'no apiVersion'}), which this config gives request {', '.join(named)}"
                )
                problems = [(parameters, where, what, known.get("kind"))]
        for at, at_path, what, expected in problems:
            facts = {"driver": combination.driver, "what": what}
            self.problems.append(DraProblem(claim.doc, at, at_path, DRA_INVALID_CONFIG, expected, facts))

    def _check_release(self, claim: _Claim) -> None:
        """What the release does with the claim beyond its selectors: its
        constraints' attributes (:mod:`pciname.dra.constraints`), and a
        crash of the release's plugin preparing a vfio request."""
        combination = self.combination
        vfio_class = combination.vfio["device_class"]["name"]
        alternatives: dict[str, list[tuple[str, bool]]] = {}
        for r in claim.requests:
            alternatives.setdefault(r.name.partition("/")[0], []).append(
                (r.name, _scalar(r.device_class) == vfio_class)
            )
        for node, path in claim.constraints:
            targets = [n for n in (_scalar(r) for r in _sequence(_get(node, "requests"))) if n]
            for key in constraints.KEYS:
                value = _get(node, key)
                found = constraints.check(key, _scalar(value) or "", targets, alternatives, combination)
                if found is not None and isinstance(value, ScalarNode):
                    facts: dict[str, Any] = {"driver": combination.driver, "key": key, "attribute": found.attribute}
                    facts |= {"requests": found.requests, "publishing": found.publishing}
                    problem = DraProblem(claim.doc, value, path + (key,), DRA_CONSTRAINT_NOT_PUBLISHED, None, facts)
                    self.problems.append(problem)
        crash = combination.prepare_crash()
        first = next((r for r in claim.requests if _scalar(r.device_class) == vfio_class), None)
        unreleased = f"DRA driver {combination.driver} is {combination.certainty}"
        if "unreleased" in combination.driver_facts and first is not None and not self._said(unreleased):
            self.notes.append(DraNote(claim.doc, first.node, first.path, unreleased))
        if crash is not None and first is not None and first.device_class is not None:
            where = first.path + ("deviceClassName",)
            self.problems.append(
                DraProblem(claim.doc, first.device_class, where, DRA_PREPARE_CRASH, None, {"what": crash})
            )

    def _said(self, text: str) -> bool:
        return any(note.text == text for note in self.notes)

    def _check_reference(self, ref: _Reference) -> None:
        claim_node = _get(ref.entry, "claimName")
        claim_name = _scalar(claim_node)
        entries = {
            _scalar(_get(e, "name")): e
            for e in _sequence(_get(ref.spec, "resourceClaims"))
            if isinstance(e, MappingNode)
        }
        if claim_name not in entries:
            known = sorted(n for n in entries if n)
            facts = {"claim": claim_name, "known": tuple(known), "where": _spec_where(ref.spec_path)}
            assert claim_node is not None
            self.problems.append(
                DraProblem(ref.doc, claim_node, ref.path + ("claimName",), DRA_UNKNOWN_CLAIM, known or None, facts)
            )
            return
        claim = self._claim_of(entries[claim_name], ref.namespace)
        if claim is not None:
            self._check_request_name(ref, claim)

    def _claim_of(self, entry: MappingNode, namespace: str | None) -> _Claim | None:
        """The ResourceClaim or ResourceClaimTemplate of the input a
        ``resourceClaims`` entry names (same name, and namespace when both say one)."""
        for key, kind in (
            ("resourceClaimTemplateName", "ResourceClaimTemplate"),
            ("resourceClaimName", "ResourceClaim"),
        ):
            name = _scalar(_get(entry, key))
            if name is None:
                continue
            for claim in self._claims:
                same_namespace = claim.namespace is None or namespace is None or claim.namespace == namespace
                if claim.kind == kind and claim.name == name and same_namespace:
                    return claim
        return None

    def _check_request_name(self, ref: _Reference, claim: _Claim) -> None:
        node = _get(ref.entry, "requestName")
        request = _scalar(node)
        if request is None:
            return
        facts = {"kind": claim.kind, "name": claim.name, "request": request, "known": tuple(claim.names)}
        if request not in claim.names:
            assert node is not None
            path = ref.path + ("requestName",)
            self.problems.append(DraProblem(ref.doc, node, path, DRA_UNKNOWN_REQUEST, list(claim.names) or None, facts))
            return
        vfio_class = self.combination.vfio["device_class"]["name"]
        chosen = [r for r in claim.requests if r.name == request or r.name.startswith(request + "/")]
        for device_request in chosen:
            class_node = device_request.device_class
            if class_node is None or class_node.value == vfio_class or id(class_node) in self._reported:
                continue
            self._reported.add(id(class_node))
            facts = {
                "name": class_node.value,
                "right": vfio_class,
                "driver": self.combination.driver,
                "list_key": ref.list_key,
                "request": request,
            }
            where = device_request.path + ("deviceClassName",)
            self.problems.append(DraProblem(claim.doc, class_node, where, DRA_WRONG_DEVICE_CLASS, vfio_class, facts))

    # -- notes ------------------------------------------------------------------------------

    def _first(self) -> tuple[Any, Node, YamlPath] | None:
        """Where the first checked request or VM entry is (the releases note goes there)."""
        for claim in self._claims:
            if claim.requests:
                return claim.doc, claim.requests[0].node, claim.requests[0].path
        if self._references:
            return self._references[0].doc, self._references[0].entry, self._references[0].path
        return None

    def _releases_note(self) -> None:
        first = self._first()
        if self.given is not None or first is None:
            return
        combination = self.combination
        text = (
            f"DRA claims are checked against DRA driver {combination.driver} and KubeVirt {combination.kubevirt} "
            "(the newest that work together); give --dra-driver and --kubevirt for others"
        )
        self.notes.append(DraNote(*first, text))

    def _gate_notes(self) -> None:
        gates = self.combination.kubevirt_facts["feature_gates"]
        for list_key, gate in CLAIM_LISTS.items():
            ref = next((r for r in self._references if r.list_key == list_key), None)
            if ref is not None and gate in gates and not gates[gate]["default"]:
                text = (
                    f"KubeVirt {self.combination.kubevirt} leaves {gate} off by default: {list_key}[] with claimName "
                    "needs it in the KubeVirt CR's spec.configuration.developerConfiguration.featureGates"
                )
                self.notes.append(DraNote(ref.doc, ref.entry, ref.path, text))


def _vfio_config_problems(
    parameters: MappingNode, where: YamlPath, known: dict[str, Any]
) -> list[tuple[Node, YamlPath, str, Any]]:
    """What the release's strict decoding, Normalize and Validate refuse in a
    VfioDeviceConfig: (node, path, what, expected) each."""
    fields: dict[str, dict[str, Any]] = known["fields"]
    problems: list[tuple[Node, YamlPath, str, Any]] = []

    def unknown(key_node: ScalarNode, path: YamlPath, have: list[str]) -> None:
        shown = ", ".join(have) or "none but apiVersion and kind"
        what = (
            f"decodes {known['kind']} strictly and has no field {_spec_where(path[len(where) :])} (its fields: {shown})"
        )
        problems.append((key_node, path, what, None))

    own = [f"{group}.{name}" for group, names in fields.items() for name in names]
    for key, key_node, value in _items(parameters):
        if key in ("apiVersion", "kind"):
            continue
        if key not in fields:
            unknown(key_node, where + (key,), own)
            continue
        if not isinstance(value, MappingNode):
            if _scalar(value) is not None or isinstance(value, SequenceNode):
                what = f"reads {known['kind']} {key} as an object, not {_shown(value)}"
                problems.append((value, where + (key,), what, None))
            continue
        for name, name_node, field_value in _items(value):
            path = where + (key, name)
            spec = fields[key].get(name)
            if spec is None:
                unknown(name_node, path, own)
            elif "values" in spec and _scalar(field_value) not in (*spec["values"], "", None):
                what = f"takes {key}.{name} {' or '.join(spec['values'])}, not {_shown(field_value)}"
                problems.append((field_value, path, what, list(spec["values"])))
            elif spec["type"].endswith("bool") and not (
                isinstance(field_value, ScalarNode) and field_value.tag.endswith((":bool", ":null"))
            ):
                what = f"reads {key}.{name} as a boolean, not {_shown(field_value)}"
                problems.append((field_value, path, what, True))
    return problems


def _shown(node: Node) -> str:
    if isinstance(node, ScalarNode):
        return repr(node.value)
    return "a mapping" if isinstance(node, MappingNode) else "a sequence"


def _scalar_node(node: MappingNode, key: str) -> ScalarNode | None:
    value = _get(node, key)
    return value if isinstance(value, ScalarNode) else None


def _spec_where(path: YamlPath) -> str:
    return ".".join(str(p) for p in path) or "the VMI spec"


@rule(RuleName.DRA_CLAIMS)
def dra_claims(ctx: Context, state: RunState) -> None:
    """DRA claims and the VMs that use them (:class:`pciname.lint.kinds.dra.DraClaims`)."""
    problems, notes = DraClaims(ctx.dra, ctx.check, refusal=ctx.dra_refusal).run((doc, doc.root) for doc in ctx.docs)
    for p in problems:
        state.findings.append(ctx.finding(p.doc, p.node, p.path, p.code, p.expected, **p.facts))
    for note in notes:
        mark = note.node.start_mark
        ctx.notes.append(f"{note.doc.file}:{mark.line + 1}: {format_path(note.path)}: {note.text}")


__all__ = ["CLAIM_KINDS", "CLAIM_LISTS", "DraClaims", "DraNote", "DraProblem"]
