"""Lint the GPU resource names in KubeVirt / Cozystack YAML, with line numbers.

Pure: YAML text in, :class:`Finding` objects out; reading files and standard
input is :mod:`pciname.kube.inputs`.

The YAML is composed (``yaml.compose_all``), not loaded, so every value keeps
the line and column it came from. Documents are recognised by shape, at any
depth, so the same rules cover a KubeVirt CR, an OpenShift HyperConverged CR,
Cozystack platform values, a HelmRelease's ``spec.values``, a ``kind: List``
and a bare defaults table:

* a ``permittedHostDevices`` mapping anywhere (KubeVirt CR
  ``spec.configuration.permittedHostDevices``, HyperConverged
  ``spec.permittedHostDevices``, Cozystack ``gpu.permittedHostDevices``), and a
  document whose top level has ``pciHostDevices`` / ``mediatedDevices``;
* ``domain.devices.gpus[].deviceName`` and ``domain.devices.hostDevices[].deviceName``
  (VirtualMachine, VirtualMachineInstance, pools, replica sets);
* ``nodeGroups.<group>.gpus[].name`` (Cozystack tenant Kubernetes values, or
  the ``spec`` of its ``Kubernetes`` application).

Only names in the ``nvidia.com/`` domain are checked: other names belong to
other device plugins.

Who advertises a ``pciHostDevices`` entry decides what its name must be.
With ``externalResourceProvider: true`` NVIDIA's device plugin does, so the
name must be the one the profile derives for the selector's device. Without
it (missing, null or false) KubeVirt's own device plugin (in ``virt-handler``) advertises the entry
under whatever name it gives: that is how the SR-IOV vGPU virtual functions
of Ada Lovelace and Blackwell GPUs are permitted (kubevirt#16890, Cozystack's
``docs/gpu-vgpu.md``), e.g. ``10DE:26B9`` as ``nvidia.com/L40S-24Q``. Any
valid name works there; only an invalid name (or socket path), the name
NVIDIA's plugin gives that device or another one, and a selector listed
twice are reported, and VMs may ask for such a name.

Finding codes (stable):

``wrong-resource-name``
    the selector's device is advertised under another name in this profile
    (also a VM / node pool asking for such a wrong name);
``unknown-resource-name``
    no device is advertised under this name; ``expected`` lists the closest
    real names (difflib);
``wrong-mdev-resource-name``
    ``resourceName`` is not what the plugin makes of ``mdevNameSelector``;
``invalid-resource-name``
    kubelet refuses the name (so the plugin is never registered);
``socket-path-too-long``
    the plugin's socket path for the name exceeds 107 bytes;
``not-advertised``
    the profile advertises nothing for the selector's device (not NVIDIA, or
    v1.0.0 and an unnamed device);
``missing-external-resource-provider``
    a ``pciHostDevices`` entry without ``externalResourceProvider: true``
    whose name is the one NVIDIA's device plugin gives its device (KubeVirt
    would start its own plugin for that resource too), or whose
    ``externalResourceProvider`` is not a boolean (``"true"``, ``1``: meant
    for NVIDIA's plugin, and checked as such); a ``mediatedDevices``
    ``nvidia.com/`` entry without it;
``resource-name-conflict``
    a ``pciHostDevices`` entry KubeVirt advertises (no
    ``externalResourceProvider: true``) under the name NVIDIA's device
    plugin gives *another* device, or that a ``mediatedDevices`` entry
    permits: two plugins would register one resource;
``duplicate-selector``
    the same selector twice in one list (for PCI entries under two names,
    the message says so: only one of them gets the devices);
``invalid-selector``
    a missing or malformed ``pciVendorSelector``;
``wrong-selector-field``
    ``pciDeviceSelector`` in a KubeVirt CR or ``pciVendorSelector`` in a
    HyperConverged CR (each ignores the other's field);
``renamed-by-upgrade``
    right today, but the ``upgrade_to`` profile advertises another name;
``not-permitted``
    a VM or node pool asks for an ``nvidia.com/`` name that no
    ``permittedHostDevices`` entry in the same input permits (only when the
    input has such a block: KubeVirt refuses to render the VM's launcher, or,
    for a name another entry's plugin advertises, it never schedules);
    ``expected`` lists the closest permitted names (:func:`not_permitted_hint`).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

import yaml
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from ..errors import LintInputError
from ..naming import checks, mdev
from ..naming.checks import NameWarning
from ..naming.profiles import DEFAULT_PROFILE
from .resources import PREFIX, is_mdev_name, is_nvidia, resource_warnings

if TYPE_CHECKING:
    from ..resolver import ProfileLike, ResolverLike
    from ..results import Resolution

WRONG_RESOURCE_NAME = "wrong-resource-name"
UNKNOWN_RESOURCE_NAME = "unknown-resource-name"
WRONG_MDEV_RESOURCE_NAME = "wrong-mdev-resource-name"
PLUGIN_CRASH = checks.PLUGIN_CRASH  # a v1.0.x plugin on a vGPU type name without a space
INVALID_RESOURCE_NAME = checks.INVALID_RESOURCE_NAME
SOCKET_PATH_TOO_LONG = checks.SOCKET_PATH_TOO_LONG
NOT_ADVERTISED = checks.NOT_ADVERTISED
MISSING_EXTERNAL_RESOURCE_PROVIDER = "missing-external-resource-provider"
RESOURCE_NAME_CONFLICT = "resource-name-conflict"
DUPLICATE_SELECTOR = "duplicate-selector"
INVALID_SELECTOR = "invalid-selector"
WRONG_SELECTOR_FIELD = "wrong-selector-field"
RENAMED_BY_UPGRADE = "renamed-by-upgrade"
NOT_PERMITTED = "not-permitted"

CODES = (
    WRONG_RESOURCE_NAME,
    UNKNOWN_RESOURCE_NAME,
    WRONG_MDEV_RESOURCE_NAME,
    PLUGIN_CRASH,
    INVALID_RESOURCE_NAME,
    SOCKET_PATH_TOO_LONG,
    NOT_ADVERTISED,
    MISSING_EXTERNAL_RESOURCE_PROVIDER,
    RESOURCE_NAME_CONFLICT,
    DUPLICATE_SELECTOR,
    INVALID_SELECTOR,
    WRONG_SELECTOR_FIELD,
    RENAMED_BY_UPGRADE,
    NOT_PERMITTED,
)

#: A not-permitted message lists every permitted name when there are at most
#: this many and none is close (the admission policy's message does the same).
LIST_PERMITTED_MAX = 8

_SELECTOR = re.compile(r"\s*([0-9a-fA-F]{4})\s*:\s*([0-9a-fA-F]{4})\s*\Z")
_SIMPLE_KEY = re.compile(r"[A-Za-z0-9_-]+\Z")

_TRUE = ("true", "yes", "on")  # YAML 1.1's spellings of true, in any case

#: Where a value is in a document: mapping keys and sequence indexes.
YamlPath = tuple[str | int, ...]


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
        """``FILE:LINE: code: PATH: message``."""
        return f"{self.file}:{self.line}: {self.code}: {self.path}: {self.message}"


# -- composing ----------------------------------------------------------------


def compose(text: str | bytes, filename: str) -> list[tuple[int, Node]]:
    """Every non-empty YAML document of ``text`` as (1-based index, node tree).

    Raises LintInputError (``FILE:LINE:COL: message``) on a syntax error."""
    try:
        docs = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        return [(n, doc) for n, doc in enumerate(docs, 1) if doc is not None]
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


# -- node helpers -------------------------------------------------------------


def _items(node: Node) -> Iterator[tuple[str, Node, Node]]:
    if isinstance(node, MappingNode):
        for key, value in node.value:
            if isinstance(key, ScalarNode):
                yield key.value, key, value


def _get(node: Node, key: str) -> Node | None:
    for name, _, value in _items(node):
        if name == key:
            return value
    return None


def _scalar(node: Node | None) -> str | None:
    if isinstance(node, ScalarNode) and not node.tag.endswith(":null"):
        value: str = node.value
        return value
    return None


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


def _walk(doc: _Doc, sites: _Sites) -> None:
    seen: set[int] = set()

    def visit(node: Node, path: YamlPath) -> None:
        if id(node) in seen:  # aliases: visit each node once
            return
        seen.add(id(node))
        if isinstance(node, MappingNode):
            for key, _, value in _items(node):
                child = path + (key,)
                if key == "permittedHostDevices" and isinstance(value, MappingNode):
                    sites.blocks.append((doc, value, child))
                    continue
                if key in ("deviceName", "name") and isinstance(value, ScalarNode) and _is_reference(path, key):
                    sites.references.append(_Reference(doc, value, child))
                visit(value, child)
        elif isinstance(node, SequenceNode):
            for i, item in enumerate(node.value):
                visit(item, path + (i,))

    root = doc.root
    if isinstance(root, MappingNode) and (_get(root, "pciHostDevices") or _get(root, "mediatedDevices")):
        sites.blocks.append((doc, root, ()))
    visit(root, ())


def _is_reference(path: YamlPath, key: str) -> bool:
    """``...domain.devices.{gpus,hostDevices}[i].deviceName`` or
    ``...nodeGroups.<group>.gpus[i].name``."""
    if len(path) < 4 or not isinstance(path[-1], int):
        return False
    if key == "deviceName":
        return path[-2] in ("gpus", "hostDevices") and path[-3] == "devices" and path[-4] == "domain"
    return path[-2] == "gpus" and path[-4] == "nodeGroups"


def _entries(doc: _Doc, block: Node, path: YamlPath) -> Iterator[_Entry]:
    hyperconverged = doc.kind == "HyperConverged"
    for list_key, list_kind in (("pciHostDevices", "pci"), ("mediatedDevices", "mdev")):
        seq = _get(block, list_key)
        if isinstance(seq, SequenceNode):
            for i, item in enumerate(seq.value):
                if isinstance(item, MappingNode):
                    yield _Entry(doc, item, path + (list_key, i), list_kind, hyperconverged)


# -- the linter ---------------------------------------------------------------


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
    ) -> None:
        from ..resolver import resolver_or_default

        self.resolver: ResolverLike = resolver_or_default(resolver)
        self.profile = profile
        self.upgrade_to = upgrade_to
        self.profile_name = self.resolver.view(profile).profile.name
        self.upgrade_name = self.resolver.view(upgrade_to).profile.name if upgrade_to is not None else None
        self._docs: list[_Doc] = []
        self._name_index: dict[str, list[Resolution]] | None = None
        #: After :meth:`run`: the nvidia.com names the input's
        #: permittedHostDevices entries permit with no finding (they work).
        self.working: frozenset[str] = frozenset()

    # inputs

    def add_text(self, text: str | bytes, filename: str = "<input>") -> int:
        """Add the YAML documents of ``text``; returns how many. Raises
        LintInputError on a syntax error (nothing of that text is added)."""
        roots = compose(text, filename)
        for index, root in roots:
            kind = _scalar(_get(root, "kind")) if isinstance(root, MappingNode) else None
            self._docs.append(_Doc(filename, index, root, kind))
        return len(roots)

    def add_file(self, path: str) -> int:
        """:meth:`add_text` of a file (``-``: standard input), read by
        :func:`pciname.kube.inputs.read_input`."""
        from .inputs import read_input

        data, name = read_input(path)
        return self.add_text(data, name)

    # checks

    def run(self) -> list[Finding]:
        sites = _Sites()
        for doc in self._docs:
            _walk(doc, sites)
        findings: list[Finding] = []
        wrong_pci: dict[str, str] = {}
        wrong_mdev: dict[str, str] = {}
        permitted_mdev: set[str] = set()
        kubevirt_pci: dict[str, list[tuple[_Entry, Node, str]]] = {}  # valid names KubeVirt's own plugin advertises
        working: set[str] = set()  # permitted names whose entries have no finding
        for doc, block, path in sites.blocks:
            seen: dict[tuple[str, str], int] = {}
            pci_names: dict[str, str] = {}  # selector -> the resourceName of its first entry
            for entry in _entries(doc, block, path):
                if entry.list_kind == "pci":
                    found = self._check_pci(entry, seen, wrong_pci, pci_names, kubevirt_pci)
                else:
                    found = self._check_mdev(entry, seen, wrong_mdev, permitted_mdev)
                findings.extend(found)
                name = _scalar(_get(entry.node, "resourceName"))
                if not [f for f in found if f.code != RENAMED_BY_UPGRADE] and name is not None and is_nvidia(name) and not _is_true(_get(entry.node, "disabled")):
                    working.add(name)
        conflicts = self._kubevirt_pci_and_mdev(kubevirt_pci, permitted_mdev)
        findings.extend(conflicts)
        working.difference_update(str(f.value) for f in conflicts)
        self.working = frozenset(working)
        permitted = _permitted_names(sites)
        for ref in sites.references:
            if permitted is not None:
                findings.extend(self._check_permitted(ref, permitted, working))
            if _scalar(ref.node) in kubevirt_pci:
                continue  # permitted without externalResourceProvider: KubeVirt advertises it as written
            findings.extend(self._check_reference(ref, wrong_pci, wrong_mdev, permitted_mdev))
        rank: dict[str, int] = {}
        for doc in self._docs:
            rank.setdefault(doc.file, len(rank))
        findings.sort(key=lambda f: (rank.get(f.file, len(rank)), f.document, f.line, f.column, f.code))
        return findings

    def _finding(
        self, doc: _Doc, node: Node, path: YamlPath, code: str, message: str, expected: Any = None, value: Any = None
    ) -> Finding:
        mark = node.start_mark
        return Finding(
            file=doc.file,
            line=mark.line + 1,
            column=mark.column + 1,
            document=doc.index,
            path=format_path(path),
            value=_value(node) if value is None else value,
            code=code,
            message=message,
            expected=expected,
        )

    def _common(self, entry: _Entry, name: str) -> list[Finding]:
        """externalResourceProvider of an nvidia.com entry."""
        erp = _get(entry.node, "externalResourceProvider")
        if _is_true(erp):
            return []
        where = erp if erp is not None else entry.node
        path = entry.path + ("externalResourceProvider",)
        state = "is missing" if erp is None else f"is {_value(erp)!r}"
        return [
            self._finding(
                entry.doc,
                where,
                path,
                MISSING_EXTERNAL_RESOURCE_PROVIDER,
                f"externalResourceProvider {state}: {name} comes from NVIDIA's device plugin, so it must be true "
                "(otherwise KubeVirt starts its own plugin for the same resource)",
                expected=True,
                value=_value(erp) if erp is not None else None,
            )
        ]

    def _duplicate(
        self, entry: _Entry, node: Node, path: YamlPath, key: tuple[str, str], seen: dict[tuple[str, str], int], shown: str
    ) -> list[Finding]:
        first = seen.get(key)
        if first is None:
            seen[key] = node.start_mark.line + 1
            return []
        return [
            self._finding(
                entry.doc,
                node,
                path,
                DUPLICATE_SELECTOR,
                f"{shown} is already permitted at line {first}; KubeVirt uses one of the two entries",
            )
        ]

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
        node = entry.node
        if _is_true(_get(node, "disabled")):
            return []
        name_node = _get(node, "resourceName")
        name = _scalar(name_node)
        own_field, other_field = (
            ("pciDeviceSelector", "pciVendorSelector") if entry.hyperconverged else ("pciVendorSelector", "pciDeviceSelector")
        )
        selector_node = _get(node, own_field)
        misplaced = _get(node, other_field) if selector_node is None else None
        if misplaced is not None:
            selector_node = misplaced
        selector = _scalar(selector_node)
        if name_node is None or name is None or not is_nvidia(name):
            return []
        # true: NVIDIA's plugin. Missing, null or false: KubeVirt's own. Any
        # other value (the string "true", 1) is meant for NVIDIA's plugin but
        # is not a boolean: reported, and the entry checked as NVIDIA's.
        erp = _get(node, "externalResourceProvider")
        by_nvidia = erp is not None and not (
            isinstance(erp, ScalarNode) and (erp.tag.endswith(":null") or (erp.tag.endswith(":bool") and not _is_true(erp)))
        )
        found: list[Finding] = self._common(entry, name) if by_nvidia else []
        if misplaced is not None:
            what = "a HyperConverged CR" if entry.hyperconverged else "KubeVirt"
            found.append(
                self._finding(
                    entry.doc,
                    misplaced,
                    entry.path + (other_field,),
                    WRONG_SELECTOR_FIELD,
                    f"{what} reads {own_field}, not {other_field}: this entry selects no device",
                    expected=own_field,
                )
            )
        selector_path = entry.path + (other_field if misplaced is not None else own_field,)
        match = _SELECTOR.match(selector) if selector is not None else None
        if not match or selector_node is None:
            where = selector_node if selector_node is not None else node
            found.append(
                self._finding(
                    entry.doc,
                    where,
                    selector_path,
                    INVALID_SELECTOR,
                    f"{own_field} {'is missing' if selector is None else repr(selector) + ' is not VENDOR:DEVICE hex'}; "
                    f"expected e.g. 10DE:2236",
                )
            )
            return found
        vendor, device = (g.lower() for g in match.groups())
        shown = f"{vendor}:{device}".upper()
        for duplicate in self._duplicate(entry, selector_node, selector_path, ("pci", shown), seen, shown):
            first_name = pci_names.get(shown)
            if first_name is not None and first_name != name:
                duplicate = replace(
                    duplicate,
                    message=f"{duplicate.message}, and it names the device {first_name}, not {name}: "
                    "a device gets one name, so VMs asking for the other never schedule",
                )
            found.append(duplicate)
        pci_names.setdefault(shown, name)
        path = entry.path + ("resourceName",)
        resolution = self.resolver.resolve(f"{vendor}:{device}", self.profile)
        if not by_nvidia:
            found.extend(self._check_kubevirt_pci(entry, name_node, name, shown, resolution, kubevirt_pci))
            return found
        expected = resolution.resource_name
        if expected is None:
            reason = next((w.message for w in resolution.warnings if w.code == NOT_ADVERTISED), "")
            found.append(
                self._finding(
                    entry.doc,
                    name_node,
                    path,
                    NOT_ADVERTISED,
                    f"{self.profile_name} advertises nothing for {shown}: {reason}",
                )
            )
            return found
        if name != expected:
            wrong_pci.setdefault(name, expected)
            extra = ""
            if not resolution.advertised:
                extra = " (and kubelet refuses that name too)"
            found.append(
                self._finding(
                    entry.doc,
                    name_node,
                    path,
                    WRONG_RESOURCE_NAME,
                    f"{self.profile_name} advertises {shown} as {expected}{extra}, not {name}: "
                    "VMs asking for this name never schedule",
                    expected=expected,
                )
            )
            return found
        found.extend(self._name_problems(entry.doc, name_node, path, resolution.warnings))
        if self.upgrade_to is not None:
            after = self.resolver.resolve(f"{vendor}:{device}", self.upgrade_to).resource_name
            if after != name:
                found.append(
                    self._finding(
                        entry.doc,
                        name_node,
                        path,
                        RENAMED_BY_UPGRADE,
                        f"{self.upgrade_name} advertises {shown} as {after or 'nothing'}: "
                        f"after the upgrade, VMs asking for {name} stop scheduling",
                        expected=after,
                    )
                )
        return found

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
        the name NVIDIA's plugin gives this device (``missing-external-
        resource-provider``) or another one (``resource-name-conflict``), and
        a name kubelet refuses or whose socket path is too long."""
        path = entry.path + ("resourceName",)
        theirs = resolution.resource_name
        if theirs is not None and name == theirs:
            return self._common(entry, name)
        note = f"NVIDIA's plugin would call {shown} {theirs}" if theirs else f"NVIDIA's plugin advertises nothing for {shown}"
        problems = [
            self._finding(entry.doc, name_node, path, w.code, f"{w.message} ({note})")
            for w in kubevirt_name_warnings(name)
        ]
        others = sorted({r.device.upper() for r in self._names().get(name, []) if r.advertised})
        if others:
            problems.append(
                self._finding(
                    entry.doc,
                    name_node,
                    path,
                    RESOURCE_NAME_CONFLICT,
                    f"without externalResourceProvider: true KubeVirt advertises {shown} as {name}, the name "
                    f"{self.profile_name} gives {', '.join(others)}: two plugins would register one resource "
                    f"on a node with both ({note})",
                )
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
                        f"without externalResourceProvider: true KubeVirt advertises {shown} as {name}, and a "
                        "mediatedDevices entry permits a vGPU type under that name too: two plugins would "
                        "register one resource",
                    )
                )
        return found

    def _name_problems(self, doc: _Doc, node: Node, path: YamlPath, warnings: Iterable[NameWarning]) -> list[Finding]:
        return [
            self._finding(doc, node, path, w.code, w.message)
            for w in warnings
            if w.code in (INVALID_RESOURCE_NAME, SOCKET_PATH_TOO_LONG)
        ]

    def _check_mdev(
        self, entry: _Entry, seen: dict[tuple[str, str], int], wrong_mdev: dict[str, str], permitted: set[str]
    ) -> list[Finding]:
        node = entry.node
        if _is_true(_get(node, "disabled")):
            return []
        name_node = _get(node, "resourceName")
        name = _scalar(name_node)
        if name_node is None or name is None or not is_nvidia(name):
            return []
        found = self._common(entry, name)
        selector_node = _get(node, "mdevNameSelector")
        selector = _scalar(selector_node)
        if selector_node is None or selector is None:
            found.append(
                self._finding(
                    entry.doc,
                    node,
                    entry.path + ("mdevNameSelector",),
                    INVALID_SELECTOR,
                    "mdevNameSelector is missing; expected a vGPU type name such as 'GRID T4-1Q'",
                )
            )
            return found
        found.extend(
            self._duplicate(
                entry, selector_node, entry.path + ("mdevNameSelector",), ("mdev", selector), seen, repr(selector)
            )
        )
        rule = self.resolver.view(self.profile).profile.mdev_name
        expected = mdev.mdev_resource(selector, rule)
        if expected is None:
            found.append(
                self._finding(
                    entry.doc,
                    selector_node,
                    entry.path + ("mdevNameSelector",),
                    PLUGIN_CRASH,
                    f"{self.profile_name}: {mdev.crash_warning(selector).message}",
                )
            )
            return found
        path = entry.path + ("resourceName",)
        if name != expected:
            wrong_mdev.setdefault(name, expected)
            how = "white space to '_', nothing else changed"
            if rule == mdev.SECOND_FIELD:
                how = "the second space-separated field"
            found.append(
                self._finding(
                    entry.doc,
                    name_node,
                    path,
                    WRONG_MDEV_RESOURCE_NAME,
                    f"{self.profile_name} advertises vGPU type {selector!r} as {expected}, not {name} ({how})",
                    expected=expected,
                )
            )
            return found
        problems = self._name_problems(entry.doc, name_node, path, resource_warnings(name))
        if not problems:
            permitted.add(name)
        found.extend(problems)
        if self.upgrade_to is not None:
            after = mdev.mdev_resource(selector, self.resolver.view(self.upgrade_to).profile.mdev_name)
            if after != name:
                found.append(
                    self._finding(
                        entry.doc,
                        name_node,
                        path,
                        RENAMED_BY_UPGRADE,
                        f"{self.upgrade_name} advertises vGPU type {selector!r} as "
                        f"{after or 'nothing (the plugin panics)'}: "
                        f"after the upgrade, VMs asking for {name} stop scheduling",
                        expected=after,
                    )
                )
        return found

    # references from VMs and node pools

    def _check_permitted(self, ref: _Reference, permitted: set[str], working: set[str]) -> list[Finding]:
        """A VM or node pool name that no permittedHostDevices entry of the
        input permits (``not-permitted``); the names suggested are those of
        ``working``, the permitted entries without a finding."""
        name = _scalar(ref.node)
        if name is None or not is_nvidia(name) or name in permitted:
            return []
        expected, hint = not_permitted_hint(name, working)
        return [
            self._finding(
                ref.doc, ref.node, ref.path, NOT_PERMITTED,
                f"{name} is not permitted by the permittedHostDevices given; {hint}",
                expected=expected,
            )
        ]

    def _names(self) -> dict[str, list[Resolution]]:
        """resource name -> resolutions of the devices with that name."""
        if self._name_index is None:
            names: dict[str, list[Resolution]] = {}
            for r in self.resolver.devices(self.profile):
                if r.resource_name is not None:
                    names.setdefault(r.resource_name, []).append(r)
            self._name_index = names
        return self._name_index

    def _suggest(self, name: str, extra: Iterable[str] = ()) -> list[str]:
        candidates = {n for n, rs in self._names().items() if any(r.advertised for r in rs)}
        candidates.update(extra)
        upper = {c[len(PREFIX):].upper(): c for c in candidates if is_nvidia(c)}
        close = difflib.get_close_matches(name[len(PREFIX):].upper(), list(upper), n=3, cutoff=0.6)
        return [upper[c] for c in close]

    def _check_reference(
        self, ref: _Reference, wrong_pci: dict[str, str], wrong_mdev: dict[str, str], permitted_mdev: set[str]
    ) -> list[Finding]:
        name = _scalar(ref.node)
        if name is None or not is_nvidia(name):
            return []
        doc, node, path = ref.doc, ref.node, ref.path
        if is_mdev_name(name):
            if name in wrong_mdev:
                return [
                    self._finding(
                        doc, node, path, WRONG_MDEV_RESOURCE_NAME,
                        f"{name} is the wrong name of a permitted vGPU type; the plugin advertises it as "
                        f"{wrong_mdev[name]}",
                        expected=wrong_mdev[name],
                    )
                ]
            problems = self._name_problems(doc, node, path, resource_warnings(name))
            if problems:
                return problems
            if permitted_mdev and name not in permitted_mdev:
                close = difflib.get_close_matches(name, sorted(permitted_mdev), n=3, cutoff=0.8)
                if close:
                    return [
                        self._finding(
                            doc, node, path, UNKNOWN_RESOURCE_NAME,
                            f"no permitted vGPU type is advertised as {name}; did you mean {', '.join(close)}?",
                            expected=close,
                        )
                    ]
            return []
        if name in wrong_pci:
            return [
                self._finding(
                    doc, node, path, WRONG_RESOURCE_NAME,
                    f"{name} is permitted with a wrong name; {self.profile_name} advertises that device as "
                    f"{wrong_pci[name]}",
                    expected=wrong_pci[name],
                )
            ]
        resolutions = self._names().get(name)
        if resolutions is None:
            devices = self.resolver.reverse(name, self.profile)  # the bare-id fallback, e.g. nvidia.com/2335
            resolutions = [self.resolver.resolve(d, self.profile) for d in devices]
        if not resolutions:
            problems = self._name_problems(doc, node, path, resource_warnings(name))
            if problems:
                return problems
            suggestions = self._suggest(name)
            hint = f"closest: {', '.join(suggestions)}" if suggestions else "no similar name either"
            return [
                self._finding(
                    doc, node, path, UNKNOWN_RESOURCE_NAME,
                    f"{self.profile_name} advertises no device as {name}; {hint}",
                    expected=suggestions,
                )
            ]
        if not any(r.advertised for r in resolutions):
            warnings = [w for r in resolutions[:1] for w in r.warnings]
            return self._name_problems(doc, node, path, warnings)
        if self.upgrade_to is not None:
            after = sorted(
                {
                    self.resolver.resolve(r.device, self.upgrade_to).resource_name or "nothing"
                    for r in resolutions
                }
            )
            if name not in after:
                listed = ", ".join(r.device for r in resolutions)
                return [
                    self._finding(
                        doc, node, path, RENAMED_BY_UPGRADE,
                        f"{self.upgrade_name} advertises {listed} as {', '.join(after)}: after the upgrade "
                        f"nothing is advertised as {name}",
                        expected=after[0] if len(after) == 1 else after,
                    )
                ]
        return []


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


def not_permitted_hint(name: str, permitted: Iterable[str]) -> tuple[list[str], str]:
    """What to ask for instead of a name that is not permitted: the closest
    permitted names (difflib on the part after ``nvidia.com/``, case
    ignored, at most 3), else every permitted name when there are at most
    :data:`LIST_PERMITTED_MAX`; and the text saying so. The one rule of lint's
    ``not-permitted`` and the admission policy's message."""
    allowed = sorted(set(permitted))
    upper: dict[str, str] = {}
    for candidate in allowed:
        upper.setdefault(candidate.partition("/")[2].upper(), candidate)
    close = difflib.get_close_matches(name.partition("/")[2].upper(), list(upper), n=3, cutoff=0.6)
    if close:
        names = [upper[c] for c in close]
        return names, f"closest permitted: {', '.join(names)}"
    if not allowed:
        return [], "no permitted entry works"
    if len(allowed) <= LIST_PERMITTED_MAX:
        return allowed, f"permitted: {', '.join(allowed)}"
    return [], f"no permitted name is close ({len(allowed)} permitted)"


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
    problem = checks.name_part_problem(resource[len(PREFIX):])
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
) -> list[Finding]:
    """Findings for one YAML text (multi-document). Raises LintInputError."""
    linter = Linter(profile, upgrade_to, resolver=resolver)
    linter.add_text(text, filename)
    return linter.run()


def lint_data(
    data: Any,
    filename: str,
    profile: ProfileLike = DEFAULT_PROFILE,
    upgrade_to: ProfileLike | None = None,
    *,
    resolver: ResolverLike | None = None,
) -> list[Finding]:
    """Findings for plain data (e.g. an object read from the cluster); lines
    refer to its YAML dump."""
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True)
    return lint_text(text, filename, profile, upgrade_to, resolver=resolver)
