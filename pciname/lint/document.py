"""What lint reads of a document and what it reports: a :class:`Finding`
(file, line, column, document, YAML path, code, message), the documents of
a run (:class:`Doc`) and the places in them the rules check
(:class:`Sites`, collected by :func:`collect_sites` in one walk of each
document), and the state a run's rules share (:class:`RunState`)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from pciname.base.render import printable
from pciname.kubevirt.resources import is_nvidia
from pciname.lint.nodes import YamlPath, get as _get, items as _items, scalar as _scalar

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


def is_true(node: Node | None) -> bool:
    return isinstance(node, ScalarNode) and node.tag.endswith(":bool") and str(node.value).lower() in _TRUE


def node_value(node: Node | None) -> Any:
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
class Doc:
    file: str
    index: int
    root: Node
    kind: str | None


@dataclass
class Entry:
    """One pciHostDevices / mediatedDevices item."""

    doc: Doc
    node: Node
    path: YamlPath
    list_kind: str  # "pci" or "mdev"
    hyperconverged: bool


@dataclass
class Reference:
    """A name asked for by a VM or a node pool."""

    doc: Doc
    node: Node
    path: YamlPath


@dataclass
class Sites:
    blocks: list[tuple[Doc, Node, YamlPath]] = field(default_factory=list)
    references: list[Reference] = field(default_factory=list)
    #: Cozystack node groups (``nodeGroups.<group>``) and KubernetesNodes
    #: specs: (doc, mapping, path, is a KubernetesNodes spec).
    pools: list[tuple[Doc, MappingNode, YamlPath, bool]] = field(default_factory=list)


#: The kind of Cozystack's node-pool application (a fact of every release that has it).
KUBERNETES_NODES = "KubernetesNodes"


def collect_sites(doc: Doc, sites: Sites) -> None:
    root = doc.root
    if isinstance(root, MappingNode) and (_get(root, "pciHostDevices") or _get(root, "mediatedDevices")):
        sites.blocks.append((doc, root, ()))
    _visit(root, (), doc, sites, set())


def _visit(node: Node, path: YamlPath, doc: Doc, sites: Sites, seen: set[int]) -> None:
    """:func:`collect_sites` under ``node``. A function of the module, not a
    closure: a closure calling itself is a reference cycle, which kept the
    doc, the sites and so every node alive after lint until the cyclic
    collector walked them all (0.6 s for bench/lint_speed.py's input)."""
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
                sites.references.append(Reference(doc, value, child))
            if path and path[-1] == "nodeGroups" and isinstance(value, MappingNode):
                sites.pools.append((doc, value, child, False))
            _visit(value, child, doc, sites, seen)
    elif isinstance(node, SequenceNode):
        for i, item in enumerate(node.value):
            _visit(item, path + (i,), doc, sites, seen)


def _add_nodes_pool(doc: Doc, sites: Sites, spec: MappingNode, path: YamlPath) -> None:
    """A KubernetesNodes pool at ``path``: its fields, and its GPUs' names as references."""
    sites.pools.append((doc, spec, path, True))
    gpus = _get(spec, "gpus")
    for i, item in enumerate(gpus.value if isinstance(gpus, SequenceNode) else ()):
        name = _get(item, "name")
        if isinstance(name, ScalarNode):
            sites.references.append(Reference(doc, name, path + ("gpus", i, "name")))


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
LIST_KEYS = {"pci": "pciHostDevices", "mdev": "mediatedDevices"}


def entry_fields(node: Node) -> dict[str, Any]:
    """The scalar fields of an entry, as a consumer loads them (what an
    entry's collections hold does not decide who advertises it)."""
    return {key: node_value(value) for key, _, value in _items(node) if isinstance(value, ScalarNode)}


def is_hyperconverged(doc: Doc, path: YamlPath) -> bool:
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


def misplaced_block(doc: Doc, path: YamlPath) -> tuple[str, YamlPath, str] | None:
    """For a block at the other CR's place: who reads it, where, and why it is not read here."""
    if path == _HYPERCONVERGED_BLOCK and not is_hyperconverged(doc, path) and doc.kind in (None, "KubeVirt"):
        why = "its CRD has no spec.permittedHostDevices: kubectl refuses it, the API server prunes it"
        return "KubeVirt", _KUBEVIRT_BLOCK, why
    if path == _KUBEVIRT_BLOCK and doc.kind == "HyperConverged":
        return "a HyperConverged CR", _HYPERCONVERGED_BLOCK, "that is a KubeVirt CR's place"
    return None


def entries(doc: Doc, block: Node, path: YamlPath) -> Iterator[Entry]:
    hyperconverged = is_hyperconverged(doc, path)
    for list_key, list_kind in (("pciHostDevices", "pci"), ("mediatedDevices", "mdev")):
        seq = _get(block, list_key)
        if isinstance(seq, SequenceNode):
            for i, item in enumerate(seq.value):
                if isinstance(item, MappingNode):
                    yield Entry(doc, item, path + (list_key, i), list_kind, hyperconverged)


@dataclass
class RunState:
    """What one :meth:`Linter.run` finds and what its rules learn for the
    rules after them."""

    sites: Sites = field(default_factory=Sites)
    findings: list[Finding] = field(default_factory=list)
    #: A wrong PCI (mdev) name of an entry -> the one the profile gives its device (vGPU type).
    wrong_pci: dict[str, str] = field(default_factory=dict)
    wrong_mdev: dict[str, str] = field(default_factory=dict)
    #: The names mediatedDevices entries permit (right and valid).
    permitted_mdev: set[str] = field(default_factory=set)
    #: Valid names KubeVirt's own plugin advertises -> their entries (entry, name node, selector).
    kubevirt_pci: dict[str, list[tuple[Entry, Node, str]]] = field(default_factory=dict)
    #: Permitted names whose entries have no finding, and (list key, name, entry) of those entries.
    working: set[str] = field(default_factory=set)
    entries: list[tuple[str, str, Node]] = field(default_factory=list)


def permitted_names(sites: Sites) -> set[str] | None:
    """Every ``nvidia.com/`` resourceName the input's permittedHostDevices
    entries permit (disabled ones left out), right or wrong; None when the
    input has no such block (then nothing is ``not-permitted``)."""
    if not sites.blocks:
        return None
    names: set[str] = set()
    for doc, block, path in sites.blocks:
        for entry in entries(doc, block, path):
            if is_true(_get(entry.node, "disabled")):
                continue
            name = _scalar(_get(entry.node, "resourceName"))
            if name is not None and is_nvidia(name):
                names.add(name)
    return names
