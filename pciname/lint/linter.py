"""Lint the GPU resource names in KubeVirt / Cozystack YAML, with line numbers.

Pure: YAML text in, :class:`Finding` objects out; reading files and standard
input is :mod:`pciname.lint.inputs`.

The YAML is composed (``yaml.compose_all``), not loaded, so every value keeps
the line and column it came from. Documents are recognised by shape, at any
depth, so the same rules cover a KubeVirt CR, an OpenShift HyperConverged CR,
Cozystack platform values, a HelmRelease's ``spec.values``, a ``kind: List``
and a bare defaults table:

* a ``permittedHostDevices`` mapping anywhere (KubeVirt CR
  ``spec.configuration.permittedHostDevices``, HyperConverged
  ``spec.permittedHostDevices``, Cozystack ``gpu.permittedHostDevices``), and a
  document whose top level has ``pciHostDevices`` / ``mediatedDevices``; a
  document without a ``kind`` (a docs snippet) that has
  ``spec.permittedHostDevices`` and no ``spec.configuration`` is taken for a
  HyperConverged CR's;
* ``domain.devices.gpus[].deviceName`` and ``domain.devices.hostDevices[].deviceName``
  (VirtualMachine, VirtualMachineInstance, pools, replica sets);
* ``nodeGroups.<group>.gpus[].name`` (Cozystack tenant Kubernetes values, the
  ``spec`` of its ``Kubernetes`` application, or the ``spec.values`` of the
  HelmRelease Cozystack writes for it), and ``spec.gpus[].name`` of a
  ``KubernetesNodes`` object (a Cozystack node pool, v1.6.0 and later), or
  ``spec.values.gpus[].name`` of the ``helm.toolkit.fluxcd.io`` HelmRelease
  Cozystack's aggregated API server writes for it (labelled
  ``apps.cozystack.io/application.kind: KubernetesNodes``: what kube-apiserver
  admits, and the admission policy checks).

Node groups and ``KubernetesNodes`` pools (the object's ``spec`` or its
HelmRelease's ``spec.values``) are also checked against the chosen Cozystack release (``cozystack``; default: the newest known): a field
its schema does not have is ``field-not-in-release``.

Pods and pod templates (Pod, Deployment, StatefulSet, DaemonSet, ReplicaSet,
ReplicationController, Job, CronJob, PodTemplate) whose ``runtimeClassName``
starts with ``kata`` are checked against NVIDIA's Kata sandbox device
plugin: the ``nvidia.com/`` names in their containers' ``resources`` must be
the ones it advertises (:mod:`pciname.lint.kinds.kata` says which profile and why).
Other pods are left alone.

ResourceClaims and ResourceClaimTemplates (every ``resource.k8s.io``
version) and the VMs whose ``gpus[]`` / ``hostDevices[]`` use them
(``claimName``/``requestName``) are checked against what NVIDIA's DRA driver
publishes for vfio GPUs (:mod:`pciname.lint.kinds.dra`).

Only names in the ``nvidia.com/`` domain are checked: other names belong to
other device plugins.

Who advertises a ``pciHostDevices`` entry decides what its name must be.
With ``externalResourceProvider: true`` NVIDIA's device plugin does, so the
name must be the one the profile derives for the selector's device. Without
it (missing, null or false) KubeVirt's own device plugin (in ``virt-handler``) advertises the entry
under whatever name it gives: that is how the SR-IOV vGPU virtual functions
of Ada Lovelace and Blackwell GPUs are permitted (kubevirt#16890, Cozystack's
``docs/gpu-vgpu.md``), e.g. ``10DE:26B9`` as ``nvidia.com/L40S-24Q``. Any
valid name works there; only an invalid name (or socket path) and a
selector listed twice are reported, and VMs may ask for such a name. Where
NVIDIA's plugin runs on those nodes too (``nvidia_plugin``,
:mod:`pciname.lint.plugin`), the name it gives that device or another one,
and any ``mediatedDevices`` entry without ``externalResourceProvider:
true``, are reported too (two plugins would serve one resource); a note
where that is not known. The codes that contradict each other (each code's
``contradicts``) never meet on one entry.

Merge keys (``<<: *base``) are merged as the merge-key spec and kubectl's
and Helm's go-yaml merge them (:func:`flatten_merges`: of a merge sequence
the earlier mapping wins, the mapping's own keys win over merged ones),
whatever PyYAML version is installed, so the rules check what consumers read.

Finding codes (stable; :data:`pciname.lint.codes.CODES` is where they
are defined, with their severity, meaning and message) follow this docstring,
made from that registry.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pciname.base.render import printable
from pciname.base.yaml_out import Dumper
from pciname.errors import LintInputError
from pciname.kubevirt.resources import PREFIX, is_mdev_name, is_nvidia, resource_warnings
from pciname.lint import codes as lint_codes
from pciname.lint.codes import (  # DRA_*: reported by pciname.lint.kinds.dra, re-exported as the others
    DRA_HOST_DEPENDENT_SELECTOR as DRA_HOST_DEPENDENT_SELECTOR,
    DRA_INVALID_CONFIG as DRA_INVALID_CONFIG,
    DRA_REQUEST_LAYOUT as DRA_REQUEST_LAYOUT,
    DRA_SELECTOR_MATCHES_NOTHING as DRA_SELECTOR_MATCHES_NOTHING,
    DRA_UNKNOWN_CLAIM as DRA_UNKNOWN_CLAIM,
    DRA_UNKNOWN_REQUEST as DRA_UNKNOWN_REQUEST,
    DRA_WRONG_DEVICE_CLASS as DRA_WRONG_DEVICE_CLASS,
    DUPLICATE_KEY,
    DUPLICATE_SELECTOR,
    FIELD_NOT_IN_RELEASE,
    INVALID_EXTERNAL_RESOURCE_PROVIDER,
    INVALID_RESOURCE_NAME,
    INVALID_SELECTOR,
    MISPLACED_PERMITTED_HOST_DEVICES,
    MISSING_EXTERNAL_RESOURCE_PROVIDER,
    NOT_ADVERTISED,
    NOT_PERMITTED,
    PLUGIN_CRASH,
    RENAMED_BY_UPGRADE,
    RESOURCE_NAME_CONFLICT,
    SOCKET_PATH_TOO_LONG,
    UNKNOWN_RESOURCE_NAME,
    UNKNOWN_VGPU_TYPE,
    WRONG_KATA_RESOURCE_NAME,
    WRONG_MDEV_RESOURCE_NAME,
    WRONG_RESOURCE_NAME,
    WRONG_SELECTOR_FIELD,
)
from pciname.lint.hints import Candidates, HintBudget, not_permitted_hint
from pciname.lint.kinds.dra import DraClaims
from pciname.lint.kinds.kata import KataNames, kata_requests
from pciname.lint.nodes import YamlPath, get as _get, items as _items, key_node as _key_node, scalar as _scalar, walk
from pciname.lint.plugin import DEFAULT_NVIDIA_PLUGIN, NvidiaPlugin, Presence, parse as parse_nvidia_plugin, presence
from pciname.naming import checks, mdev
from pciname.naming.checks import NameWarning
from pciname.naming.profiles import DEFAULT_PROFILE

__doc__ = (__doc__ or "") + "\n" + lint_codes.rst_list()  # the codes, from their registry

if TYPE_CHECKING:
    from pciname.dra.facts import Combination
    from pciname.resolution.resolver import ProfileLike, ResolverLike
    from pciname.resolution.results import Resolution

# The codes, their severities, meanings and message builders: pciname.lint.codes.
CODES = lint_codes.CODES


_SELECTOR = re.compile(r"\s*([0-9a-fA-F]{4})\s*:\s*([0-9a-fA-F]{4})\s*\Z")
_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")

_TRUE = ("true", "yes", "on")  # YAML 1.1's spellings of true, in any case


@dataclass(frozen=True, slots=True)
class Finding:
    """One problem: where (file, line, column, document, YAML path), the value
    found, a stable ``code``, a message for people and the ``expected`` value
    (a string, a list of suggestions, True, or None)."""

    file: str
    line: int
    column: int
    document: int  # 1-based index of the YAML document in its file
    path: str
    value: Any
    code: str
    message: str
    expected: Any = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "document": self.document,
            "path": self.path,
            "value": self.value,
            "code": self.code,
            "message": self.message,
            "expected": self.expected,
        }

    def format(self) -> str:
        """``FILE:LINE: code: PATH: message``, control characters escaped
        (:func:`pciname.base.render.printable`): a line for a terminal."""
        return printable(f"{self.file}:{self.line}: {self.code}: {self.path}: {self.message}", tab=True)


# -- composing ----------------------------------------------------------------


class _ConsumerLoader(yaml.SafeLoader):
    """Composes node trees as consumers read them (PyYAML's ``safe_load``,
    Helm, kubectl): merge keys (``<<``) are merged in, explicit keys
    overriding merged ones (:func:`flatten_merges`), and of a key
    written twice in one mapping the last value is kept. The earlier key of
    each such pair is recorded in ``duplicates`` (mapping node -> pairs of
    (kept key, earlier key)): kubectl's strict decoding refuses those."""

    def __init__(self, stream: str | bytes) -> None:
        super().__init__(stream)
        self.duplicates: dict[int, list[tuple[Node, Node]]] = {}

    def _key(self, node: Node) -> Any:
        """The Python value PyYAML makes of a key (``yes`` and ``true`` are one
        key); a key it cannot make, or cannot hash, is its tag and text."""
        if isinstance(node, ScalarNode):
            build = self.yaml_constructors.get(node.tag)
            if build is not None:
                try:
                    key = build(self, node)
                    hash(key)
                    return (True, key)
                except Exception:  # noqa: BLE001 - a key PyYAML cannot build: compare its text
                    pass
            return (False, node.tag, node.value)
        return (None, id(node))  # a collection as a key: never equal to another

    def compose_scalar_node(self, anchor: Any) -> ScalarNode:
        node: ScalarNode = super().compose_scalar_node(anchor)
        refuse_surrogates(node)
        return node

    def compose_mapping_node(self, anchor: Any) -> MappingNode:  # anchor: its name (typeshed says otherwise)
        node: MappingNode = super().compose_mapping_node(anchor)
        first: dict[Any, Node] = {}
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self._key(key_node)
            if key in first:
                self.duplicates.setdefault(id(node), []).append((key_node, first[key]))
            first[key] = key_node
        flatten_merges(node)  # merged pairs first, then the mapping's own: the last wins
        last: dict[Any, int] = {}
        for i, (key_node, _) in enumerate(node.value):
            last[self._key(key_node)] = i
        if len(last) != len(node.value):
            node.value = [pair for i, pair in enumerate(node.value) if last[self._key(pair[0])] == i]
        return node


_MERGE = "tag:yaml.org,2002:merge"
_VALUE = "tag:yaml.org,2002:value"
_STR = "tag:yaml.org,2002:str"


def flatten_merges(node: MappingNode) -> None:
    """Merge keys (``<<``) resolved in place as the YAML merge-key spec and
    its consumers (kubectl's and Helm's go-yaml, PyYAML up to 6.0.3) read
    them: the merged mappings' pairs first, of a merge sequence the earlier
    mapping's winning over the later's, then the mapping's own pairs, which
    win over all merged ones (the caller keeps the last of each key).
    Written here on the composed nodes, not with a parser's helper, so that
    what lint reads does not change with the PyYAML version (6.0.4 changed
    ``flatten_mapping``). A merge of anything but a mapping or a sequence of
    mappings is the error PyYAML gives."""
    merged: list[tuple[Node, Node]] = []
    own: list[tuple[Node, Node]] = []
    for key_node, value_node in node.value:
        if key_node.tag == _VALUE:
            key_node.tag = _STR  # the key "=": a string to every consumer (PyYAML turns it so too)
        if key_node.tag != _MERGE:
            own.append((key_node, value_node))
            continue
        if isinstance(value_node, MappingNode):
            sources = [value_node]
        elif isinstance(value_node, SequenceNode):
            sources = list(value_node.value)
            for sub in sources:
                if not isinstance(sub, MappingNode):
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping",
                        node.start_mark,
                        f"expected a mapping for merging, but found {sub.id}",
                        sub.start_mark,
                    )
        else:
            raise yaml.constructor.ConstructorError(
                "while constructing a mapping",
                node.start_mark,
                f"expected a mapping or list of mappings for merging, but found {value_node.id}",
                value_node.start_mark,
            )
        for sub in reversed(sources):  # the earlier mapping last: it wins
            flatten_merges(sub)
            merged.extend(sub.value)
    if merged:
        node.value = merged + own


def refuse_surrogates(node: ScalarNode) -> None:
    """A scalar written with an escape of a lone UTF-16 surrogate
    (``"\\uD800"``): PyYAML reads it as a string that is no text (no
    encoder takes it); kubectl's and Helm's YAML parser (go-yaml) refuse it.
    So is it refused here, as a syntax error at the scalar."""
    value = node.value
    if not value.isascii():
        for char in value:
            if "\ud800" <= char <= "\udfff":
                raise yaml.MarkedYAMLError(
                    None,
                    None,
                    f"found the escape of a lone UTF-16 surrogate (\\u{ord(char):04x}), which is no character: "
                    "kubectl's and Helm's YAML parser refuse it",
                    node.start_mark,
                )


#: Mapping node id -> (kept key, earlier key) of each key written twice in it.
Duplicates = dict[int, list[tuple[Node, Node]]]


def compose_documents(text: str | bytes, filename: str) -> tuple[list[tuple[int, Node]], Duplicates]:
    """:func:`compose`, and the keys written twice in any mapping of ``text``."""
    try:
        loader = _ConsumerLoader(text)
        try:
            docs: list[Node | None] = []
            while loader.check_node():
                docs.append(loader.get_node())
            return [(n, doc) for n, doc in enumerate(docs, 1) if doc is not None], loader.duplicates
        finally:
            loader.dispose()
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = ": ".join(p for p in (error.context, error.problem) if p) or "invalid YAML"
        if mark is None:
            raise LintInputError(f"{filename}: YAML syntax error: {problem}", file=filename) from None
        raise LintInputError(
            f"{filename}:{mark.line + 1}:{mark.column + 1}: YAML syntax error: {problem}",
            file=filename,
            line=mark.line + 1,
        ) from None
    except yaml.YAMLError as error:  # ReaderError: bytes that are not UTF-8/16
        detail = " ".join(str(error).split())
        raise LintInputError(f"{filename}: not readable as YAML: {detail}", file=filename) from None
    except RecursionError:  # the composer recurses once per nesting level
        raise LintInputError(f"{filename}: YAML nested too deeply to read", file=filename) from None


def compose(text: str | bytes, filename: str) -> list[tuple[int, Node]]:
    """Every non-empty YAML document of ``text`` as (1-based index, node
    tree), as consumers read it: merge keys merged, and of a key written
    twice the last value (:class:`_ConsumerLoader`).

    Raises LintInputError (``FILE:LINE:COL: message``) on a syntax error."""
    return compose_documents(text, filename)[0]


# -- node helpers -------------------------------------------------------------


def _is_true(node: Node | None) -> bool:
    return isinstance(node, ScalarNode) and node.tag.endswith(":bool") and str(node.value).lower() in _TRUE


def _value(node: Node | None) -> Any:
    """A scalar's Python value (for reporting): bools and ints as such."""
    if not isinstance(node, ScalarNode):
        return None
    if node.tag.endswith(":bool"):
        return str(node.value).lower() in _TRUE
    if node.tag.endswith(":null"):
        return None
    if node.tag.endswith(":int"):
        try:
            return int(node.value, 0)
        except ValueError:
            return node.value
    return node.value


def format_path(parts: Iterable[str | int]) -> str:
    out = ""
    for part in parts:
        if isinstance(part, int):
            out += f"[{part}]"
        elif _SIMPLE_KEY.match(part):
            out += ("." if out else "") + part
        else:
            out += '["' + part.replace("\\", "\\\\").replace('"', '\\"') + '"]'
    return out


# -- sites: where names are -----------------------------------------------------


@dataclass
class _Doc:
    file: str
    index: int
    root: Node
    kind: str | None


@dataclass
class _Entry:
    """One pciHostDevices / mediatedDevices item."""

    doc: _Doc
    node: Node
    path: YamlPath
    list_kind: str  # "pci" or "mdev"
    hyperconverged: bool


@dataclass
class _Reference:
    """A name asked for by a VM or a node pool."""

    doc: _Doc
    node: Node
    path: YamlPath


@dataclass
class _Sites:
    blocks: list[tuple[_Doc, Node, YamlPath]] = field(default_factory=list)
    references: list[_Reference] = field(default_factory=list)
    #: Cozystack node groups (``nodeGroups.<group>``) and KubernetesNodes
    #: specs: (doc, mapping, path, is a KubernetesNodes spec).
    pools: list[tuple[_Doc, MappingNode, YamlPath, bool]] = field(default_factory=list)


#: The kind of Cozystack's node-pool application (a fact of every release that has it).
KUBERNETES_NODES = "KubernetesNodes"


def _walk(doc: _Doc, sites: _Sites) -> None:
    seen: set[int] = set()

    def visit(node: Node, path: YamlPath) -> None:
        if id(node) in seen:  # aliases: visit each node once
            return
        seen.add(id(node))
        if isinstance(node, MappingNode):
            pool = _nodes_pool(node)
            if pool is not None:
                _add_nodes_pool(doc, sites, pool[0], path + pool[1])
            for key, _, value in _items(node):
                child = path + (key,)
                if key == "permittedHostDevices" and isinstance(value, MappingNode):
                    sites.blocks.append((doc, value, child))
                    continue
                if key in ("deviceName", "name") and isinstance(value, ScalarNode) and _is_reference(path, key):
                    sites.references.append(_Reference(doc, value, child))
                if path and path[-1] == "nodeGroups" and isinstance(value, MappingNode):
                    sites.pools.append((doc, value, child, False))
                visit(value, child)
        elif isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                visit(item, path + (i,))

    root = doc.root
    if isinstance(root, MappingNode) and (_get(root, "pciHostDevices") or _get(root, "mediatedDevices")):
        sites.blocks.append((doc, root, ()))
    visit(root, ())


def _add_nodes_pool(doc: _Doc, sites: _Sites, spec: MappingNode, path: YamlPath) -> None:
    """A KubernetesNodes pool at ``path``: its fields, and its GPUs' names as references."""
    sites.pools.append((doc, spec, path, True))
    gpus = _get(spec, "gpus")
    for i, item in enumerate(gpus.value if isinstance(gpus, SequenceNode) else ()):
        name = _get(item, "name")
        if isinstance(name, ScalarNode):
            sites.references.append(_Reference(doc, name, path + ("gpus", i, "name")))


def _nodes_pool(node: MappingNode) -> tuple[MappingNode, YamlPath] | None:
    """The pool of a ``KubernetesNodes`` object (its ``spec``) or of the
    HelmRelease Cozystack's aggregated API server writes for one (its
    ``spec.values``, the object's spec as it was sent), and where it is in
    ``node``; None for anything else. The HelmRelease is told by its API group
    and its application-kind label, as the admission policy tells it
    (:data:`pciname.policy.admission.HELM_TARGETS`), never by its values' shape."""
    from pciname.cozystack.releases import APPLICATION_KIND_LABEL, HELM_RELEASE_GROUP, HELM_RELEASE_KIND

    kind = _scalar(_get(node, "kind"))
    if kind == KUBERNETES_NODES:
        spec = _get(node, "spec")
        return (spec, ("spec",)) if isinstance(spec, MappingNode) else None
    if kind != HELM_RELEASE_KIND:
        return None
    group = (_scalar(_get(node, "apiVersion")) or "").partition("/")[0]
    metadata = _get(node, "metadata")
    labels = _get(metadata, "labels") if metadata is not None else None
    if (
        group != HELM_RELEASE_GROUP
        or labels is None
        or _scalar(_get(labels, APPLICATION_KIND_LABEL)) != KUBERNETES_NODES
    ):
        return None
    spec = _get(node, "spec")
    values = _get(spec, "values") if spec is not None else None
    return (values, ("spec", "values")) if isinstance(values, MappingNode) else None


def _is_reference(path: YamlPath, key: str) -> bool:
    """``...domain.devices.{gpus,hostDevices}[i].deviceName`` or
    ``...nodeGroups.<group>.gpus[i].name``."""
    if len(path) < 4 or not isinstance(path[-1], int):
        return False
    if key == "deviceName":
        return path[-2] in ("gpus", "hostDevices") and path[-3] == "devices" and path[-4] == "domain"
    return path[-2] == "gpus" and path[-4] == "nodeGroups"


#: An entry's list kind -> its list's key in permittedHostDevices.
_LIST_KEYS = {"pci": "pciHostDevices", "mdev": "mediatedDevices"}


def _fields(node: Node) -> dict[str, Any]:
    """The scalar fields of an entry, as a consumer loads them (what an
    entry's collections hold does not decide who advertises it)."""
    return {key: _value(value) for key, _, value in _items(node) if isinstance(value, ScalarNode)}


def _is_hyperconverged(doc: _Doc, path: YamlPath) -> bool:
    """Whether the block at ``path`` is a HyperConverged CR's: its kind
    says so, or a kind-less document (a docs snippet of the CR's ``spec``)
    has it at ``spec.permittedHostDevices`` and no ``spec.configuration``
    (where a KubeVirt CR's block belongs, which a HyperConverged CR has not)."""
    if doc.kind is not None or path != ("spec", "permittedHostDevices"):
        return doc.kind == "HyperConverged"
    spec = _get(doc.root, "spec")
    return spec is not None and _get(spec, "configuration") is None


#: Where each CR reads its permittedHostDevices, and where it does not:
#: KubeVirt's CRD (v1.9.0 pkg/virt-operator/resource/generate/components/
#: validations_generated.go) has no spec.permittedHostDevices and keeps no
#: unknown fields there; HyperConverged reads spec.permittedHostDevices.
_KUBEVIRT_BLOCK, _HYPERCONVERGED_BLOCK = (
    ("spec", "configuration", "permittedHostDevices"),
    ("spec", "permittedHostDevices"),
)


def _misplaced(doc: _Doc, path: YamlPath) -> tuple[str, YamlPath, str] | None:
    """For a block at the other CR's place: who reads it, where, and why it is not read here."""
    if path == _HYPERCONVERGED_BLOCK and not _is_hyperconverged(doc, path) and doc.kind in (None, "KubeVirt"):
        why = "its CRD has no spec.permittedHostDevices: kubectl refuses it, the API server prunes it"
        return "KubeVirt", _KUBEVIRT_BLOCK, why
    if path == _KUBEVIRT_BLOCK and doc.kind == "HyperConverged":
        return "a HyperConverged CR", _HYPERCONVERGED_BLOCK, "that is a KubeVirt CR's place"
    return None


def _entries(doc: _Doc, block: Node, path: YamlPath) -> Iterator[_Entry]:
    hyperconverged = _is_hyperconverged(doc, path)
    for list_key, list_kind in (("pciHostDevices", "pci"), ("mediatedDevices", "mdev")):
        seq = _get(block, list_key)
        if isinstance(seq, SequenceNode):
            for i, item in enumerate(seq.value):
                if isinstance(item, MappingNode):
                    yield _Entry(doc, item, path + (list_key, i), list_kind, hyperconverged)


# -- the linter ---------------------------------------------------------------


@dataclass
class _RunState:
    """What one :meth:`Linter.run` finds and what its rules learn for the
    rules after them."""

    sites: _Sites = field(default_factory=_Sites)
    findings: list[Finding] = field(default_factory=list)
    #: A wrong PCI (mdev) name of an entry -> the one the profile gives its device (vGPU type).
    wrong_pci: dict[str, str] = field(default_factory=dict)
    wrong_mdev: dict[str, str] = field(default_factory=dict)
    #: The names mediatedDevices entries permit (right and valid).
    permitted_mdev: set[str] = field(default_factory=set)
    #: Valid names KubeVirt's own plugin advertises -> their entries (entry, name node, selector).
    kubevirt_pci: dict[str, list[tuple[_Entry, Node, str]]] = field(default_factory=dict)
    #: Permitted names whose entries have no finding, and (list key, name, entry) of those entries.
    working: set[str] = field(default_factory=set)
    entries: list[tuple[str, str, Node]] = field(default_factory=list)


class Linter:
    """Collects documents from any number of inputs, then checks them
    together (a VM in one file may ask for a name permitted in another).

    >>> linter = Linter("latest")
    >>> linter.add_text(text, "kubevirt.yaml")       # doctest: +SKIP
    >>> findings = linter.run()                      # doctest: +SKIP
    """

    def __init__(
        self,
        profile: ProfileLike = DEFAULT_PROFILE,
        upgrade_to: ProfileLike | None = None,
        *,
        resolver: ResolverLike | None = None,
        cozystack: str | None = None,
        notes: bool = True,
        check: Callable[[], None] | None = None,
        dra: Combination | None = None,
        nvidia_plugin: NvidiaPlugin | str | None = DEFAULT_NVIDIA_PLUGIN,
        kubevirt: str | None = None,
        option: str = "--nvidia-plugin",
        dra_refusal: str | None = None,
    ) -> None:
        from pciname.cozystack.choice import release_for
        from pciname.resolution.resolver import resolver_or_default

        self.resolver: ResolverLike = resolver_or_default(resolver)
        #: The Cozystack release node groups are checked against: ``cozystack``,
        #: else the one a cozystack@ profile names, else the newest.
        self.cozystack = release_for(cozystack, profile)
        self.profile = profile
        self.upgrade_to = upgrade_to
        self.profile_name = self.resolver.view(profile).profile.name
        self.upgrade_name = self.resolver.view(upgrade_to).profile.name if upgrade_to is not None else None
        self._docs: list[_Doc] = []
        self._duplicates: Duplicates = {}
        self._name_index: dict[str, list[Resolution]] | None = None
        #: ``FILE:LINE: PATH: message`` lines that deserve a word but are no
        #: finding (a vGPU type string the evidence cannot check), set by
        #: :meth:`run` (unless ``notes`` is False: a caller that shows none
        #: saves their cost, a comparison with every vGPU type per selector).
        self.notes: list[str] = []
        self._want_notes = notes
        #: Called before each entry, each reference and each hint :meth:`run`
        #: checks: a deadline or a cancellation raises there, so no input outlasts it.
        self._check = check or _nothing
        #: After :meth:`run`: the input's permittedHostDevices entries that
        #: permit an nvidia.com name with no finding (they work), in input
        #: order, as ("pciHostDevices" or "mediatedDevices", the entry's scalar fields).
        self.working_entries: list[tuple[str, dict[str, Any]]] = []
        #: After :meth:`run`: how many permittedHostDevices blocks the input has.
        self.blocks = 0
        self._budget = HintBudget()
        self._advertised: Candidates | None = None
        #: The DRA driver and KubeVirt releases claims are checked for (None: the newest that work).
        self.dra = dra
        #: Why the KubeVirt release asked for cannot run DRA claims (None: it can).
        self.dra_refusal = dra_refusal
        #: ``--nvidia-plugin`` (:mod:`pciname.lint.plugin`), as its surface
        #: spells it (``option``), and what :meth:`run` takes of it.
        self.nvidia_plugin = parse_nvidia_plugin(nvidia_plugin)
        self._option = option
        self._presence = Presence(None)
        #: The KubeVirt release whose own plugin serves the entries without
        #: externalResourceProvider (None: the newest known).
        self.kubevirt = kubevirt

    # inputs

    def add_text(self, text: str | bytes, filename: str = "<input>") -> int:
        """Add the YAML documents of ``text``; returns how many. Raises
        LintInputError on a syntax error (nothing of that text is added)."""
        roots, duplicates = compose_documents(text, filename)
        self._duplicates.update(duplicates)
        for index, root in roots:
            kind = _scalar(_get(root, "kind")) if isinstance(root, MappingNode) else None
            self._docs.append(_Doc(filename, index, root, kind))
        return len(roots)

    def add_data(self, data: Any, filename: str = "<data>") -> int:
        """Add plain data (e.g. an object read from the cluster) as one
        document: its YAML dump, so lines refer to the dump. Dumped and
        composed by libyaml when PyYAML has it, ten times faster than
        :meth:`add_text` (plain data has no key twice and no merge key, all
        that :class:`_ConsumerLoader` is for). Raises LintInputError for
        data nested too deeply to dump."""
        try:
            roots = _compose_data(data)
            # Without libyaml, or with text it cannot encode (a lone surrogate):
            text = yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True) if roots is None else ""
        except RecursionError:
            raise LintInputError(f"{filename}: nested too deeply to check", file=filename) from None
        if roots is None:
            return self.add_text(text, filename)
        for index, root in roots:
            kind = _scalar(_get(root, "kind")) if isinstance(root, MappingNode) else None
            self._docs.append(_Doc(filename, index, root, kind))
        return len(roots)

    def add_file(self, path: str) -> int:
        """:meth:`add_text` of a file (``-``: standard input), read by
        :func:`pciname.lint.inputs.read_input`."""
        from pciname.lint.inputs import read_input

        data, name = read_input(path)
        return self.add_text(data, name)

    # checks

    def run(self) -> list[Finding]:
        """Every finding of the inputs: each rule of :data:`RULES` in turn,
        over one :class:`_RunState`; sorted by input, document and place."""
        self.notes = []
        state = _RunState()
        for doc in self._docs:
            _walk(doc, state.sites)
        self._presence = presence(
            self.nvidia_plugin,
            ((doc.file, doc.root) for doc in self._docs),
            (
                f"{doc.file}: {format_path(path)}"
                for doc, _, path in state.sites.blocks
                if path[-2:] == ("gpu", "permittedHostDevices")
            ),
            self._option,
        )
        self._budget = HintBudget(check=self._check)
        for rule in RULES:
            rule.check(self, state)
        self.working_entries = [(key, _fields(node)) for key, name, node in state.entries if name in state.working]
        self.blocks = len(state.sites.blocks)
        rank: dict[str, int] = {}
        for doc in self._docs:
            rank.setdefault(doc.file, len(rank))
        findings = state.findings
        findings.sort(key=lambda f: (rank.get(f.file, len(rank)), f.document, f.line, f.column, f.code))
        return findings

    # the rules (RULES), in the order they run

    def _entries_rule(self, state: _RunState) -> None:
        """Each permittedHostDevices entry (duplicates within its list);
        what the entries permit, for the rules after."""
        for doc, block, path in state.sites.blocks:
            misplaced = _misplaced(doc, path)
            if misplaced is not None:
                reader, there, why = misplaced
                parent: Node | None = doc.root
                for part in path[:-1]:
                    parent = _get(parent, str(part))
                key = _key_node(parent, str(path[-1])) or block
                state.findings.append(
                    self._finding(
                        doc,
                        key,
                        path,
                        MISPLACED_PERMITTED_HOST_DEVICES,
                        expected=format_path(there),
                        value=format_path(path),
                        reader=reader,
                        here=format_path(path),
                        there=format_path(there),
                        why=why,
                    )
                )
            seen: dict[tuple[str, str], int] = {}
            pci_names: dict[str, str] = {}  # selector -> the resourceName of its first entry
            for entry in _entries(doc, block, path):
                self._check()
                if entry.list_kind == "pci":
                    found = self._check_pci(entry, seen, state.wrong_pci, pci_names, state.kubevirt_pci)
                else:
                    found = self._check_mdev(entry, seen, state.wrong_mdev, state.permitted_mdev)
                state.findings.extend(found)
                name = _scalar(_get(entry.node, "resourceName"))
                clean = not [f for f in found if f.code != RENAMED_BY_UPGRADE]
                if clean and name is not None and is_nvidia(name) and not _is_true(_get(entry.node, "disabled")):
                    state.working.add(name)
                    state.entries.append((_LIST_KEYS[entry.list_kind], name, entry.node))

    def _kubevirt_mdev_rule(self, state: _RunState) -> None:
        conflicts = self._kubevirt_pci_and_mdev(state.kubevirt_pci, state.permitted_mdev)
        state.findings.extend(conflicts)
        state.working.difference_update(str(f.value) for f in conflicts)

    def _node_group_fields_rule(self, state: _RunState) -> None:
        for doc, pool, path, is_nodes in state.sites.pools:
            state.findings.extend(self._check_pool_fields(doc, pool, path, is_nodes))

    def _duplicate_keys_rule(self, state: _RunState) -> None:
        if self._duplicates:
            state.findings.extend(self._duplicate_keys())

    def _references_rule(self, state: _RunState) -> None:
        """The names VMs and node pools ask for: permitted by the input's
        entries (when it has some), and right."""
        permitted = _permitted_names(state.sites)
        suggested = Candidates(state.working)
        for ref in state.sites.references:
            self._check()
            if permitted is not None:
                state.findings.extend(self._check_permitted(ref, permitted, suggested))
            if _scalar(ref.node) in state.kubevirt_pci:
                continue  # permitted without externalResourceProvider: KubeVirt advertises it as written
            state.findings.extend(self._check_reference(ref, state.wrong_pci, state.wrong_mdev, state.permitted_mdev))

    def _kata_pods_rule(self, state: _RunState) -> None:
        """The names pods with a Kata runtime class ask for: what the Kata
        plugin advertises (:class:`pciname.lint.kinds.kata.KataNames`)."""
        names: KataNames | None = None
        for doc in self._docs:
            for request in kata_requests(doc.root, self._check):
                self._check()
                if names is None:
                    names = KataNames(self.resolver, self.profile, self._budget)
                    if not names.chosen:
                        mark = request.node.start_mark
                        self.notes.append(f"{doc.file}:{mark.line + 1}: {format_path(request.path)}: {names.note()}")
                verdict = names.verdict(request.name)
                if verdict is not None:
                    expected, facts = verdict
                    state.findings.append(
                        self._finding(
                            doc, request.node, request.path, WRONG_KATA_RESOURCE_NAME, expected, request.name, **facts
                        )
                    )

    def _dra_claims_rule(self, state: _RunState) -> None:
        """DRA claims and the VMs that use them (:class:`pciname.lint.kinds.dra.DraClaims`)."""
        problems, notes = DraClaims(self.dra, self._check, refusal=self.dra_refusal).run(
            (doc, doc.root) for doc in self._docs
        )
        for p in problems:
            state.findings.append(self._finding(p.doc, p.node, p.path, p.code, p.expected, **p.facts))
        for note in notes:
            mark = note.node.start_mark
            self.notes.append(f"{note.doc.file}:{mark.line + 1}: {format_path(note.path)}: {note.text}")

    def _duplicate_keys(self) -> list[Finding]:
        """A key written twice in one mapping: PyYAML and Helm use the last
        value (the one checked), kubectl's strict decoding refuses it."""
        found: list[Finding] = []
        for doc in self._docs:
            for node, path in walk(doc.root):
                if isinstance(node, MappingNode):
                    for kept, earlier in self._duplicates.get(id(node), ()):
                        key = str(kept.value) if isinstance(kept, ScalarNode) else "?"
                        found.append(
                            self._finding(
                                doc,
                                kept,
                                path + (key,),
                                DUPLICATE_KEY,
                                value=key,
                                key=key,
                                first_line=earlier.start_mark.line + 1,
                            )
                        )
        return found

    def _finding(
        self, doc: _Doc, node: Node, path: YamlPath, code: str, expected: Any = None, value: Any = None, **facts: Any
    ) -> Finding:
        """A finding of ``code`` at ``node``; its message is the registry's
        (:data:`~pciname.lint.codes.CODES`) made of ``facts``."""
        mark = node.start_mark
        return Finding(
            file=doc.file,
            line=mark.line + 1,
            column=mark.column + 1,
            document=doc.index,
            path=format_path(path),
            value=_value(node) if value is None else value,
            code=code,
            message=CODES[code].message(**facts),
            expected=expected,
        )

    def _invalid_erp(self, entry: _Entry) -> list[Finding]:
        """invalid-external-resource-provider: a value meant for NVIDIA's plugin that is no boolean."""
        erp = _get(entry.node, "externalResourceProvider")
        assert erp is not None
        return [
            self._finding(
                entry.doc,
                erp,
                entry.path + ("externalResourceProvider",),
                INVALID_EXTERNAL_RESOURCE_PROVIDER,
                expected=True,
                value=_value(erp),
                written=repr(_value(erp)),
            )
        ]

    def _missing_erp(self, entry: _Entry, name: str, **facts: Any) -> Finding:
        """missing-external-resource-provider: KubeVirt's own plugin serves
        the entry, and NVIDIA's runs on those nodes too (:attr:`_presence`)."""
        erp = _get(entry.node, "externalResourceProvider")
        return self._finding(
            entry.doc,
            erp if erp is not None else entry.node,
            entry.path + ("externalResourceProvider",),
            MISSING_EXTERNAL_RESOURCE_PROVIDER,
            expected=True,
            value=_value(erp) if erp is not None else None,
            state="is missing" if erp is None else f"is {_value(erp)!r}",
            name=name,
            evidence=self._presence.evidence,
            **facts,
        )

    def _kubevirt_note(self, entry: _Entry, node: Node, name: str, why: str) -> None:
        """The note of an entry KubeVirt's own plugin serves that would be a
        mistake where NVIDIA's plugin runs too (``--nvidia-plugin auto``, and
        the input does not say)."""
        if not self._want_notes:
            return
        mark = node.start_mark
        self.notes.append(
            f"{entry.doc.file}:{mark.line + 1}: {format_path(entry.path + ('resourceName',))}: "
            f"KubeVirt's own device plugin serves this entry (no externalResourceProvider: true) as {name}, "
            f"and {why}: where NVIDIA's device plugin also runs on these nodes that is a mistake (two plugins "
            f"would serve one resource); lint with {self._option} yes (or no) to say which"
        )

    def _duplicate(
        self,
        entry: _Entry,
        node: Node,
        path: YamlPath,
        key: tuple[str, str],
        seen: dict[tuple[str, str], int],
        shown: str,
        **names: str | None,
    ) -> list[Finding]:
        first = seen.get(key)
        if first is None:
            seen[key] = node.start_mark.line + 1
            return []
        return [self._finding(entry.doc, node, path, DUPLICATE_SELECTOR, shown=shown, first_line=first, **names)]

    # pciHostDevices entries: one method per rule, in the order they apply

    def _check_pci(
        self,
        entry: _Entry,
        seen: dict[tuple[str, str], int],
        wrong_pci: dict[str, str],
        pci_names: dict[str, str],
        kubevirt_pci: dict[str, list[tuple[_Entry, Node, str]]],
    ) -> list[Finding]:
        """One pciHostDevices entry. With ``externalResourceProvider: true``
        NVIDIA's plugin advertises it (the name must be the derived one);
        without, KubeVirt's own plugin does (:meth:`_check_kubevirt_pci`).
        ``pci_names``: selector -> first name in this list; ``kubevirt_pci``
        collects the valid names KubeVirt advertises (VMs may ask for them)."""
        pci = _PciEntry.read(entry)
        if pci is None:
            return []
        found = self._invalid_erp(entry) if pci.erp_invalid else []
        found += self._pci_selector_field(pci)
        if pci.vendor_device is None:
            return found + self._pci_invalid_selector(pci)
        found += self._pci_duplicate(pci, seen, pci_names)
        resolution = self.resolver.resolve(pci.vendor_device, self.profile)
        if not pci.by_nvidia:
            found += self._selector_case(pci)
            return found + self._check_kubevirt_pci(entry, pci.name_node, pci.name, pci.shown, resolution, kubevirt_pci)
        problem = self._pci_not_advertised(pci, resolution) or self._pci_wrong_name(pci, resolution, wrong_pci)
        if problem:
            return found + problem
        found += self._name_problems(entry.doc, pci.name_node, pci.name_path, resolution.warnings)
        return found + self._pci_renamed_by_upgrade(pci)

    def _pci_selector_field(self, pci: _PciEntry) -> list[Finding]:
        """wrong-selector-field: the other CR's selector field, not this one's."""
        if pci.misplaced is None:
            return []
        reader = "a HyperConverged CR" if pci.entry.hyperconverged else "KubeVirt"
        return [
            self._finding(
                pci.entry.doc,
                pci.misplaced,
                pci.selector_path,
                WRONG_SELECTOR_FIELD,
                expected=pci.own_field,
                reader=reader,
                own=pci.own_field,
                other=pci.other_field,
            )
        ]

    def _pci_invalid_selector(self, pci: _PciEntry) -> list[Finding]:
        """invalid-selector: a missing selector, or one that is not VENDOR:DEVICE."""
        where = pci.selector_node if pci.selector_node is not None else pci.entry.node
        return [
            self._finding(
                pci.entry.doc, where, pci.selector_path, INVALID_SELECTOR, field=pci.own_field, selector=pci.selector
            )
        ]

    def _pci_duplicate(
        self, pci: _PciEntry, seen: dict[tuple[str, str], int], pci_names: dict[str, str]
    ) -> list[Finding]:
        """duplicate-selector: the selector already permitted in this list."""
        assert pci.selector_node is not None
        found = self._duplicate(
            pci.entry,
            pci.selector_node,
            pci.selector_path,
            ("pci", pci.shown),
            seen,
            pci.shown,
            first_name=pci_names.get(pci.shown),
            name=pci.name,
        )
        pci_names.setdefault(pci.shown, pci.name)
        return found

    def _pci_not_advertised(self, pci: _PciEntry, resolution: Resolution) -> list[Finding]:
        """not-advertised: the profile's plugin advertises nothing for the device."""
        if resolution.resource_name is not None:
            return []
        reason = next((w.message for w in resolution.warnings if w.code == NOT_ADVERTISED), "")
        return [
            self._finding(
                pci.entry.doc,
                pci.name_node,
                pci.name_path,
                NOT_ADVERTISED,
                profile=self.profile_name,
                shown=pci.shown,
                reason=reason,
            )
        ]

    def _pci_wrong_name(self, pci: _PciEntry, resolution: Resolution, wrong_pci: dict[str, str]) -> list[Finding]:
        """wrong-resource-name: the plugin advertises the device under another name."""
        expected = resolution.resource_name
        if expected is None or pci.name == expected:
            return []
        wrong_pci.setdefault(pci.name, expected)
        return [
            self._finding(
                pci.entry.doc,
                pci.name_node,
                pci.name_path,
                WRONG_RESOURCE_NAME,
                expected=expected,
                profile=self.profile_name,
                shown=pci.shown,
                right=expected,
                name=pci.name,
                refused=not resolution.advertised,
            )
        ]

    def _pci_renamed_by_upgrade(self, pci: _PciEntry) -> list[Finding]:
        """renamed-by-upgrade: right today, another name in ``upgrade_to``."""
        if self.upgrade_to is None:
            return []
        assert pci.vendor_device is not None
        after = self.resolver.resolve(pci.vendor_device, self.upgrade_to).resource_name
        if after == pci.name:
            return []
        return [
            self._finding(
                pci.entry.doc,
                pci.name_node,
                pci.name_path,
                RENAMED_BY_UPGRADE,
                expected=after,
                upgrade=self.upgrade_name,
                shown=pci.shown,
                after=after,
                name=pci.name,
            )
        ]

    def _check_kubevirt_pci(
        self,
        entry: _Entry,
        name_node: Node,
        name: str,
        shown: str,
        resolution: Resolution,
        permitted: dict[str, list[tuple[_Entry, Node, str]]],
    ) -> list[Finding]:
        """A pciHostDevices entry without ``externalResourceProvider: true``:
        KubeVirt's own plugin advertises the selected devices (SR-IOV vGPU
        VFs, kubevirt#16890) as ``name``, and any valid name works. Reported:
        a name kubelet refuses or whose socket path is too long; and where
        NVIDIA's plugin runs too (:attr:`_presence`), the name it gives this
        device (``missing-external-resource-provider``) or another one
        (``resource-name-conflict``): a note when that is not known."""
        theirs = resolution.resource_name
        same = theirs is not None and name == theirs
        runs = self._presence.runs
        if same and runs:
            return [self._missing_erp(entry, name, shown=shown)]
        note = (
            f"NVIDIA's plugin would call {shown} {theirs}"
            if theirs
            else f"NVIDIA's plugin advertises nothing for {shown}"
        )
        path = entry.path + ("resourceName",)
        problems = [
            self._finding(entry.doc, name_node, path, w.code, warning=w.message, note=note)
            for w in kubevirt_name_warnings(name)
        ]
        others = [] if same else sorted({r.device.upper() for r in self._names().get(name, []) if r.advertised})
        if others and runs:
            problems.append(
                self._finding(
                    entry.doc,
                    name_node,
                    path,
                    RESOURCE_NAME_CONFLICT,
                    shown=shown,
                    name=name,
                    profile=self.profile_name,
                    others=tuple(others),
                    note=note,
                    evidence=self._presence.evidence,
                )
            )
        elif (same or others) and runs is None:
            whose = shown if same else ", ".join(others)
            self._kubevirt_note(
                entry, name_node, name, f"NVIDIA's plugin ({self.profile_name}) gives {whose} that name"
            )
        if not problems:
            permitted.setdefault(name, []).append((entry, name_node, shown))
        return problems

    def _kubevirt_pci_and_mdev(
        self, kubevirt_pci: dict[str, list[tuple[_Entry, Node, str]]], permitted_mdev: set[str]
    ) -> list[Finding]:
        """A name KubeVirt advertises for PCI devices that a mediatedDevices
        entry permits too: two plugins would register one resource."""
        found: list[Finding] = []
        for name in sorted(kubevirt_pci.keys() & permitted_mdev):
            for entry, name_node, shown in kubevirt_pci.pop(name):
                found.append(
                    self._finding(
                        entry.doc,
                        name_node,
                        entry.path + ("resourceName",),
                        RESOURCE_NAME_CONFLICT,
                        shown=shown,
                        name=name,
                        mdev=True,
                    )
                )
        return found

    def _name_problems(self, doc: _Doc, node: Node, path: YamlPath, warnings: Iterable[NameWarning]) -> list[Finding]:
        return [
            self._finding(doc, node, path, w.code, warning=w.message)
            for w in warnings
            if w.code in (INVALID_RESOURCE_NAME, SOCKET_PATH_TOO_LONG)
        ]

    def _check_mdev(
        self, entry: _Entry, seen: dict[tuple[str, str], int], wrong_mdev: dict[str, str], permitted: set[str]
    ) -> list[Finding]:
        """One mediatedDevices entry: with ``externalResourceProvider: true``
        NVIDIA's plugin advertises the vGPU type (the name must be the one it
        makes of the selector); without, KubeVirt's own (:meth:`_check_kubevirt_mdev`)."""
        node = entry.node
        if _is_true(_get(node, "disabled")):
            return []
        name_node = _get(node, "resourceName")
        name = _scalar(name_node)
        if name_node is None or name is None or not is_nvidia(name):
            return []
        by_nvidia, erp_invalid = _served_by_nvidia(node)
        found = self._invalid_erp(entry) if erp_invalid else []
        selector_node = _get(node, "mdevNameSelector")
        selector = _scalar(selector_node)
        selector_path = entry.path + ("mdevNameSelector",)
        if selector_node is None or selector is None:
            found.append(self._finding(entry.doc, node, selector_path, INVALID_SELECTOR, field="mdevNameSelector"))
            return found
        found.extend(self._duplicate(entry, selector_node, selector_path, ("mdev", selector), seen, repr(selector)))
        found.extend(self._mdev_vgpu_type(entry, selector_node, selector_path, selector))
        rule = self.resolver.view(self.profile).profile.mdev_name
        expected = mdev.mdev_resource(selector, rule)
        if not by_nvidia:
            return found + self._check_kubevirt_mdev(entry, name_node, name, selector, expected, permitted)
        if expected is None:
            warning = mdev.crash_warning(selector).message
            found.append(
                self._finding(
                    entry.doc, selector_node, selector_path, PLUGIN_CRASH, profile=self.profile_name, warning=warning
                )
            )
            return found
        if name != expected:
            wrong_mdev.setdefault(name, expected)
            found.append(self._mdev_wrong_name(entry, name_node, name, selector, expected, rule))
            return found
        problems = self._name_problems(entry.doc, name_node, entry.path + ("resourceName",), resource_warnings(name))
        if not problems:
            permitted.add(name)
        found.extend(problems)
        found.extend(self._mdev_renamed_by_upgrade(entry, name_node, name, selector))
        return found

    def _check_kubevirt_mdev(
        self, entry: _Entry, name_node: Node, name: str, selector: str, expected: str | None, permitted: set[str]
    ) -> list[Finding]:
        """A mediatedDevices entry without ``externalResourceProvider: true``:
        KubeVirt's own plugin advertises the vGPU type as ``name`` (any valid
        name works). Where NVIDIA's plugin runs too it serves the same vGPU
        devices: ``missing-external-resource-provider`` (a note when that is
        not known)."""
        runs = self._presence.runs
        if runs:
            return [self._missing_erp(entry, name, shown=repr(selector), right=expected, mdev=True)]
        path = entry.path + ("resourceName",)
        problems = [
            self._finding(entry.doc, name_node, path, w.code, warning=w.message) for w in kubevirt_name_warnings(name)
        ]
        if runs is None:
            theirs = f"as {expected}" if expected else "not at all (it panics on the type)"
            self._kubevirt_note(
                entry, name_node, name, f"NVIDIA's plugin ({self.profile_name}) would advertise {selector!r} {theirs}"
            )
        if not problems:
            permitted.add(name)
        return problems

    def _selector_case(self, pci: _PciEntry) -> list[Finding]:
        """invalid-selector: lower-case hex where the ``kubevirt`` release's
        own plugin compares selectors case-sensitively."""
        from pciname.kubevirt.selectors import case_sensitive

        fact = case_sensitive(self.kubevirt)
        selector = pci.selector or ""
        if fact is None or selector == selector.upper() or pci.selector_node is None:
            return []
        return [
            self._finding(
                pci.entry.doc,
                pci.selector_node,
                pci.selector_path,
                INVALID_SELECTOR,
                expected=selector.strip().upper(),
                field=pci.own_field,
                selector=selector,
                kubevirt=fact.release,
                line=fact.where,
            )
        ]

    def _mdev_vgpu_type(
        self, entry: _Entry, selector_node: Node, selector_path: YamlPath, selector: str
    ) -> list[Finding]:
        """The selector as a vGPU type: a note on how it reads (when notes
        are wanted), or ``unknown-vgpu-type``."""
        from pciname.kubevirt.vgpu import selector_note, selector_problem

        problem = selector_problem(selector)
        note = selector_note(selector) if problem is None and self._want_notes else None
        if note is not None:
            mark = selector_node.start_mark
            self.notes.append(f"{entry.doc.file}:{mark.line + 1}: {format_path(selector_path)}: {note}")
        if problem is None:
            return []
        return [
            self._finding(
                entry.doc, selector_node, selector_path, UNKNOWN_VGPU_TYPE, expected=problem["strings"], **problem
            )
        ]

    def _mdev_wrong_name(
        self, entry: _Entry, name_node: Node, name: str, selector: str, expected: str, rule: str
    ) -> Finding:
        how = "white space to '_', nothing else changed"
        if rule == mdev.SECOND_FIELD:
            how = "the second space-separated field"
        return self._finding(
            entry.doc,
            name_node,
            entry.path + ("resourceName",),
            WRONG_MDEV_RESOURCE_NAME,
            expected=expected,
            profile=self.profile_name,
            selector=selector,
            right=expected,
            name=name,
            how=how,
        )

    def _mdev_renamed_by_upgrade(self, entry: _Entry, name_node: Node, name: str, selector: str) -> list[Finding]:
        if self.upgrade_to is None:
            return []
        after = mdev.mdev_resource(selector, self.resolver.view(self.upgrade_to).profile.mdev_name)
        if after == name:
            return []
        return [
            self._finding(
                entry.doc,
                name_node,
                entry.path + ("resourceName",),
                RENAMED_BY_UPGRADE,
                expected=after,
                upgrade=self.upgrade_name,
                selector=selector,
                after=after,
                name=name,
            )
        ]

    # references from VMs and node pools

    def _check_permitted(self, ref: _Reference, permitted: set[str], working: Candidates) -> list[Finding]:
        """A VM or node pool name that no permittedHostDevices entry of the
        input permits (``not-permitted``); the names suggested are those of
        ``working``, the permitted entries without a finding."""
        name = _scalar(ref.node)
        if name is None or not is_nvidia(name) or name in permitted:
            return []
        expected, hint = not_permitted_hint(name, working, self._budget)
        return [self._finding(ref.doc, ref.node, ref.path, NOT_PERMITTED, expected=expected, name=name, hint=hint)]

    def _names(self) -> dict[str, list[Resolution]]:
        """resource name -> resolutions of the devices with that name."""
        if self._name_index is None:
            names: dict[str, list[Resolution]] = {}
            for r in self.resolver.devices(self.profile):
                if r.resource_name is not None:
                    names.setdefault(r.resource_name, []).append(r)
            self._name_index = names
        return self._name_index

    def _suggest(self, name: str) -> list[str]:
        """Up to three advertised names close to ``name`` (none when the run's hint budget is spent)."""
        if self._advertised is None:
            self._advertised = Candidates(
                n for n, rs in self._names().items() if is_nvidia(n) and any(r.advertised for r in rs)
            )
        return self._advertised.closest(name, self._budget) or []

    def _check_pool_fields(self, doc: _Doc, pool: MappingNode, path: YamlPath, is_nodes: bool) -> list[Finding]:
        """``field-not-in-release`` for each field of a node group (or a
        KubernetesNodes spec) that the chosen Cozystack release lacks."""
        from pciname.cozystack.releases import DISK_FIELDS

        release = self.cozystack
        if is_nodes:
            app = release.kubernetes_nodes
            if app is None:
                return []  # no such app in this release: nothing to compare with (the API refuses the kind)
            fields = tuple(app.schema.get("properties", {}))
            what = f"{release.label}'s {KUBERNETES_NODES} has no field"
        else:
            fields = release.fields
            what = f"{release.label}'s node groups have no field"
        disk = next((f for f in DISK_FIELDS if f in fields), None)
        found: list[Finding] = []
        for key, key_node, _ in _items(pool):
            if key in fields:
                continue
            expected = disk if key in DISK_FIELDS else None
            found.append(
                self._finding(
                    doc, key_node, path + (key,), FIELD_NOT_IN_RELEASE, expected, key, what=what, key=key, disk=expected
                )
            )
        return found

    def _check_reference(
        self, ref: _Reference, wrong_pci: dict[str, str], wrong_mdev: dict[str, str], permitted_mdev: set[str]
    ) -> list[Finding]:
        name = _scalar(ref.node)
        if name is None or not is_nvidia(name):
            return []
        if is_mdev_name(name):
            return self._check_mdev_reference(ref, name, wrong_mdev, permitted_mdev)
        doc, node, path = ref.doc, ref.node, ref.path
        if name in wrong_pci:
            return [
                self._finding(
                    doc,
                    node,
                    path,
                    WRONG_RESOURCE_NAME,
                    expected=wrong_pci[name],
                    profile=self.profile_name,
                    name=name,
                    right=wrong_pci[name],
                    reference=True,
                )
            ]
        resolutions = self._names().get(name)
        if resolutions is None:
            devices = self.resolver.reverse(name, self.profile)  # the bare-id fallback, e.g. nvidia.com/2335
            resolutions = [self.resolver.resolve(d, self.profile) for d in devices]
        if not resolutions:
            return self._unknown_reference(ref, name)
        if not any(r.advertised for r in resolutions):
            warnings = [w for r in resolutions[:1] for w in r.warnings]
            return self._name_problems(doc, node, path, warnings)
        return self._reference_renamed_by_upgrade(ref, name, resolutions)

    def _check_mdev_reference(
        self, ref: _Reference, name: str, wrong_mdev: dict[str, str], permitted_mdev: set[str]
    ) -> list[Finding]:
        """A VM's or node pool's vGPU name: the wrong name of a permitted
        type, a name kubelet refuses, or one close to a permitted type's."""
        doc, node, path = ref.doc, ref.node, ref.path
        if name in wrong_mdev:
            return [
                self._finding(
                    doc,
                    node,
                    path,
                    WRONG_MDEV_RESOURCE_NAME,
                    expected=wrong_mdev[name],
                    name=name,
                    right=wrong_mdev[name],
                    reference=True,
                )
            ]
        problems = self._name_problems(doc, node, path, resource_warnings(name))
        if problems:
            return problems
        if not permitted_mdev or name in permitted_mdev:
            return []
        close = Candidates(permitted_mdev, key=str).closest(name, self._budget, cutoff=0.8)
        if not close:
            return []
        return [
            self._finding(
                doc, node, path, UNKNOWN_RESOURCE_NAME, expected=close, name=name, suggestions=tuple(close), mdev=True
            )
        ]

    def _unknown_reference(self, ref: _Reference, name: str) -> list[Finding]:
        """A name no device of the profile has: kubelet's refusal, else
        ``unknown-resource-name`` with the advertised names close to it."""
        problems = self._name_problems(ref.doc, ref.node, ref.path, resource_warnings(name))
        if problems:
            return problems
        suggestions = self._suggest(name)
        return [
            self._finding(
                ref.doc,
                ref.node,
                ref.path,
                UNKNOWN_RESOURCE_NAME,
                expected=suggestions,
                profile=self.profile_name,
                name=name,
                suggestions=tuple(suggestions),
            )
        ]

    def _reference_renamed_by_upgrade(self, ref: _Reference, name: str, resolutions: list[Resolution]) -> list[Finding]:
        if self.upgrade_to is None:
            return []
        after = sorted(
            {self.resolver.resolve(r.device, self.upgrade_to).resource_name or "nothing" for r in resolutions}
        )
        if name in after:
            return []
        return [
            self._finding(
                ref.doc,
                ref.node,
                ref.path,
                RENAMED_BY_UPGRADE,
                expected=after[0] if len(after) == 1 else after,
                upgrade=self.upgrade_name,
                devices=", ".join(r.device for r in resolutions),
                after=", ".join(after),
                name=name,
            )
        ]


class Rule(NamedTuple):
    """A rule of a lint run: its name (the ``rules`` of the codes it
    reports, :data:`pciname.lint.codes.CODES`) and its check, which reads
    and adds to the run's state."""

    name: lint_codes.RuleName
    check: Callable[[Linter, _RunState], None]


#: The rules of :meth:`Linter.run`, in the order they run: an entry's
#: verdicts (wrong names, KubeVirt's names, mdev names) are what the later
#: rules check against.
RULES = (
    Rule(lint_codes.RuleName.ENTRIES, Linter._entries_rule),
    Rule(lint_codes.RuleName.KUBEVIRT_MDEV, Linter._kubevirt_mdev_rule),
    Rule(lint_codes.RuleName.NODE_GROUP_FIELDS, Linter._node_group_fields_rule),
    Rule(lint_codes.RuleName.DUPLICATE_KEYS, Linter._duplicate_keys_rule),
    Rule(lint_codes.RuleName.REFERENCES, Linter._references_rule),
    Rule(lint_codes.RuleName.KATA_PODS, Linter._kata_pods_rule),
    Rule(lint_codes.RuleName.DRA_CLAIMS, Linter._dra_claims_rule),
)


@dataclass
class _PciEntry:
    """What the rules read of one pciHostDevices entry with an ``nvidia.com/``
    name (:meth:`read`: None for any other entry, or a disabled one)."""

    entry: _Entry
    name_node: Node
    name: str
    own_field: str  # the selector field this CR reads
    other_field: str  # the other CR's
    selector_node: Node | None  # own_field's value, else a misplaced other_field's
    misplaced: Node | None  # other_field's value when own_field is missing
    selector: str | None
    by_nvidia: bool  # externalResourceProvider says NVIDIA's plugin advertises it
    erp_invalid: bool  # ... but is not a boolean
    vendor_device: str | None  # "10de:2236" when the selector is valid
    shown: str  # "10DE:2236"

    @property
    def selector_path(self) -> YamlPath:
        return self.entry.path + (self.other_field if self.misplaced is not None else self.own_field,)

    @property
    def name_path(self) -> YamlPath:
        return self.entry.path + ("resourceName",)

    @classmethod
    def read(cls, entry: _Entry) -> _PciEntry | None:
        node = entry.node
        if _is_true(_get(node, "disabled")):
            return None
        name_node = _get(node, "resourceName")
        name = _scalar(name_node)
        if name_node is None or name is None or not is_nvidia(name):
            return None
        own_field, other_field = (
            ("pciDeviceSelector", "pciVendorSelector")
            if entry.hyperconverged
            else ("pciVendorSelector", "pciDeviceSelector")
        )
        selector_node = _get(node, own_field)
        misplaced = _get(node, other_field) if selector_node is None else None
        if misplaced is not None:
            selector_node = misplaced
        selector = _scalar(selector_node)
        by_nvidia, erp_invalid = _served_by_nvidia(node)
        match = _SELECTOR.match(selector) if selector is not None and selector_node is not None else None
        vendor_device = shown = None
        if match:
            vendor, device = (g.lower() for g in match.groups())
            vendor_device = f"{vendor}:{device}"
            shown = vendor_device.upper()
        return cls(
            entry,
            name_node,
            name,
            own_field,
            other_field,
            selector_node,
            misplaced,
            selector,
            by_nvidia,
            erp_invalid,
            vendor_device,
            shown or "",
        )


def _served_by_nvidia(node: Node) -> tuple[bool, bool]:
    """Whether NVIDIA's plugin serves an entry, and whether its
    ``externalResourceProvider`` is no boolean. true: NVIDIA's plugin.
    Missing, null or false: KubeVirt's own. Any other value (the string
    "true", 1) is meant for NVIDIA's plugin but is not a boolean: reported,
    and the entry checked as NVIDIA's."""
    erp = _get(node, "externalResourceProvider")
    if erp is None or _is_true(erp):
        return erp is not None, False
    if isinstance(erp, ScalarNode) and (erp.tag.endswith(":null") or erp.tag.endswith(":bool")):
        return False, False
    return True, True


def _permitted_names(sites: _Sites) -> set[str] | None:
    """Every ``nvidia.com/`` resourceName the input's permittedHostDevices
    entries permit (disabled ones left out), right or wrong; None when the
    input has no such block (then nothing is ``not-permitted``)."""
    if not sites.blocks:
        return None
    names: set[str] = set()
    for doc, block, path in sites.blocks:
        for entry in _entries(doc, block, path):
            if _is_true(_get(entry.node, "disabled")):
                continue
            name = _scalar(_get(entry.node, "resourceName"))
            if name is not None and is_nvidia(name):
                names.add(name)
    return names


def kubevirt_socket_path(resource: str) -> str:
    """The socket KubeVirt's own device plugin (virt-handler) serves a
    permitted resource on: ``/`` becomes ``-`` and the domain stays."""
    return f"{checks.DEVICE_PLUGIN_DIR}kubevirt-{resource.replace('/', '-')}.sock"


def kubevirt_name_warnings(resource: str) -> list[NameWarning]:
    """kubelet validity and socket length of a name KubeVirt's own plugin
    registers (``nvidia.com/`` names only)."""
    found: list[NameWarning] = []
    if not is_nvidia(resource):
        return found
    problem = checks.name_part_problem(resource[len(PREFIX) :])
    if problem:
        found.append(
            NameWarning(
                INVALID_RESOURCE_NAME,
                f"kubelet refuses {resource}: {problem}; KubeVirt's device plugin cannot register it",
            )
        )
    socket = kubevirt_socket_path(resource)
    size = len(socket.encode("utf-8", "surrogateescape"))
    if size > checks.SOCKET_PATH_MAX_BYTES:
        found.append(
            NameWarning(
                SOCKET_PATH_TOO_LONG,
                f"KubeVirt's plugin socket {socket} is {size} bytes, more than the {checks.SOCKET_PATH_MAX_BYTES} "
                "a unix socket path may have; the plugin cannot create it",
            )
        )
    return found


def lint_text(
    text: str | bytes,
    filename: str = "<input>",
    profile: ProfileLike = DEFAULT_PROFILE,
    upgrade_to: ProfileLike | None = None,
    *,
    resolver: ResolverLike | None = None,
    cozystack: str | None = None,
    nvidia_plugin: NvidiaPlugin | str | None = DEFAULT_NVIDIA_PLUGIN,
    kubevirt: str | None = None,
) -> list[Finding]:
    """Findings for one YAML text (multi-document). Raises LintInputError."""
    linter = Linter(
        profile, upgrade_to, resolver=resolver, cozystack=cozystack, nvidia_plugin=nvidia_plugin, kubevirt=kubevirt
    )
    linter.add_text(text, filename)
    return linter.run()


def lint_data(
    data: Any,
    filename: str,
    profile: ProfileLike = DEFAULT_PROFILE,
    upgrade_to: ProfileLike | None = None,
    *,
    resolver: ResolverLike | None = None,
    cozystack: str | None = None,
    check: Callable[[], None] | None = None,
    nvidia_plugin: NvidiaPlugin | str | None = DEFAULT_NVIDIA_PLUGIN,
) -> list[Finding]:
    """Findings for plain data (e.g. an object read from the cluster); lines
    refer to its YAML dump (:meth:`Linter.add_data`). No notes are made
    (none is returned). ``check``: see :class:`Linter`; ``nvidia_plugin``:
    :mod:`pciname.lint.plugin`. Raises LintInputError for data nested too
    deeply to check."""
    linter = Linter(
        profile,
        upgrade_to,
        resolver=resolver,
        cozystack=cozystack,
        notes=False,
        check=check,
        nvidia_plugin=nvidia_plugin,
    )
    linter.add_data(data, filename)
    try:
        return linter.run()
    except RecursionError:
        raise LintInputError(f"{filename}: nested too deeply to check", file=filename) from None


def _nothing() -> None:
    pass


def _compose_data(data: Any) -> list[tuple[int, Node]] | None:
    """The one document of ``data``'s YAML dump as libyaml dumps and
    composes it; None without libyaml, or for text it cannot encode. The
    dump (PyYAML's representer, in Python) raises RecursionError past a few
    hundred levels, far below the nesting libyaml's composer recurses too
    deep on (tens of thousands): it never sees text nested deeper."""
    dumper = getattr(yaml, "CSafeDumper", None)
    loader = getattr(yaml, "CSafeLoader", None)
    if dumper is None or loader is None:
        return None
    try:
        text = yaml.dump(data, Dumper=dumper, sort_keys=False, allow_unicode=True)
    except UnicodeEncodeError:
        return None
    root = yaml.compose(text, Loader=loader)
    return [] if root is None else [(1, root)]
