"""The KubeVirt and HyperConverged CRs' ``permittedHostDevices`` for lint
(and the blocks of Cozystack values and bare tables of the same shape):
each ``pciHostDevices`` and ``mediatedDevices`` entry against the profile
and the plugin that serves it (rule ``permitted-entries``), then the names
KubeVirt's own plugin advertises that a ``mediatedDevices`` entry permits
too (``kubevirt-and-mdev-names``). What the entries permit (right and
wrong names) is what the later rules check the VMs' names against
(:mod:`.vm`). Who advertises an entry decides its name:
:mod:`pciname.lint.linter`'s docstring says how."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from yaml.nodes import Node, ScalarNode

from pciname.kubevirt.resources import PREFIX, is_nvidia, resource_warnings
from pciname.lint.codes import (
    DUPLICATE_SELECTOR,
    INVALID_EXTERNAL_RESOURCE_PROVIDER,
    INVALID_RESOURCE_NAME,
    INVALID_SELECTOR,
    MISPLACED_PERMITTED_HOST_DEVICES,
    MISSING_EXTERNAL_RESOURCE_PROVIDER,
    NOT_ADVERTISED,
    PLUGIN_CRASH,
    RENAMED_BY_UPGRADE,
    RESOURCE_NAME_CONFLICT,
    SOCKET_PATH_TOO_LONG,
    UNKNOWN_VGPU_TYPE,
    WRONG_MDEV_RESOURCE_NAME,
    WRONG_RESOURCE_NAME,
    WRONG_SELECTOR_FIELD,
    RuleName,
)
from pciname.lint.document import (
    LIST_KEYS,
    Entry,
    Finding,
    RunState,
    entries,
    format_path,
    is_true,
    misplaced_block,
    node_value,
)
from pciname.lint.nodes import YamlPath, get as _get, key_node as _key_node, scalar as _scalar
from pciname.lint.rules import Context, rule
from pciname.naming import checks, mdev
from pciname.naming.checks import NameWarning

if TYPE_CHECKING:
    from pciname.resolution.results import Resolution

__all__ = ["kubevirt_name_warnings", "kubevirt_socket_path"]

_SELECTOR = re.compile(r"\s*([0-9a-fA-F]{4})\s*:\s*([0-9a-fA-F]{4})\s*\Z")


@rule(RuleName.ENTRIES)
def permitted_entries(ctx: Context, state: RunState) -> None:
    """Each permittedHostDevices entry (duplicates within its list);
    what the entries permit, for the rules after."""
    for doc, block, path in state.sites.blocks:
        misplaced = misplaced_block(doc, path)
        if misplaced is not None:
            reader, there, why = misplaced
            parent: Node | None = doc.root
            for part in path[:-1]:
                parent = _get(parent, str(part))
            key = _key_node(parent, str(path[-1])) or block
            state.findings.append(
                ctx.finding(
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
        for entry in entries(doc, block, path):
            ctx.check()
            if entry.list_kind == "pci":
                found = _check_pci(ctx, entry, seen, state.wrong_pci, pci_names, state.kubevirt_pci)
            else:
                found = _check_mdev(ctx, entry, seen, state.wrong_mdev, state.permitted_mdev)
            state.findings.extend(found)
            name = _scalar(_get(entry.node, "resourceName"))
            clean = not [f for f in found if f.code != RENAMED_BY_UPGRADE]
            if clean and name is not None and is_nvidia(name) and not is_true(_get(entry.node, "disabled")):
                state.working.add(name)
                state.entries.append((LIST_KEYS[entry.list_kind], name, entry.node))


@rule(RuleName.KUBEVIRT_MDEV)
def kubevirt_and_mdev_names(ctx: Context, state: RunState) -> None:
    conflicts = _kubevirt_pci_and_mdev(ctx, state.kubevirt_pci, state.permitted_mdev)
    state.findings.extend(conflicts)
    state.working.difference_update(str(f.value) for f in conflicts)


def _invalid_erp(ctx: Context, entry: Entry) -> list[Finding]:
    """invalid-external-resource-provider: a value meant for NVIDIA's plugin that is no boolean."""
    erp = _get(entry.node, "externalResourceProvider")
    assert erp is not None
    return [
        ctx.finding(
            entry.doc,
            erp,
            entry.path + ("externalResourceProvider",),
            INVALID_EXTERNAL_RESOURCE_PROVIDER,
            expected=True,
            value=node_value(erp),
            written=repr(node_value(erp)),
        )
    ]


def _missing_erp(ctx: Context, entry: Entry, name: str, **facts: Any) -> Finding:
    """missing-external-resource-provider: KubeVirt's own plugin serves
    the entry, and NVIDIA's runs on those nodes too (:attr:`_presence`)."""
    erp = _get(entry.node, "externalResourceProvider")
    return ctx.finding(
        entry.doc,
        erp if erp is not None else entry.node,
        entry.path + ("externalResourceProvider",),
        MISSING_EXTERNAL_RESOURCE_PROVIDER,
        expected=True,
        value=node_value(erp) if erp is not None else None,
        state="is missing" if erp is None else f"is {node_value(erp)!r}",
        name=name,
        evidence=ctx.presence.evidence,
        **facts,
    )


def _kubevirt_note(ctx: Context, entry: Entry, node: Node, name: str, why: str) -> None:
    """The note of an entry KubeVirt's own plugin serves that would be a
    mistake where NVIDIA's plugin runs too (``--nvidia-plugin auto``, and
    the input does not say)."""
    if not ctx.want_notes:
        return
    mark = node.start_mark
    ctx.notes.append(
        f"{entry.doc.file}:{mark.line + 1}: {format_path(entry.path + ('resourceName',))}: "
        f"KubeVirt's own device plugin serves this entry (no externalResourceProvider: true) as {name}, "
        f"and {why}: where NVIDIA's device plugin also runs on these nodes that is a mistake (two plugins "
        f"would serve one resource); lint with {ctx.option} yes (or no) to say which"
    )


def _duplicate(
    ctx: Context,
    entry: Entry,
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
    return [ctx.finding(entry.doc, node, path, DUPLICATE_SELECTOR, shown=shown, first_line=first, **names)]


def _check_pci(
    ctx: Context,
    entry: Entry,
    seen: dict[tuple[str, str], int],
    wrong_pci: dict[str, str],
    pci_names: dict[str, str],
    kubevirt_pci: dict[str, list[tuple[Entry, Node, str]]],
) -> list[Finding]:
    """One pciHostDevices entry. With ``externalResourceProvider: true``
    NVIDIA's plugin advertises it (the name must be the derived one);
    without, KubeVirt's own plugin does (:meth:`_check_kubevirt_pci`).
    ``pci_names``: selector -> first name in this list; ``kubevirt_pci``
    collects the valid names KubeVirt advertises (VMs may ask for them)."""
    pci = _PciEntry.read(entry)
    if pci is None:
        return []
    found = _invalid_erp(ctx, entry) if pci.erp_invalid else []
    found += _pci_selector_field(ctx, pci)
    if pci.vendor_device is None:
        return found + _pci_invalid_selector(ctx, pci)
    found += _pci_duplicate(ctx, pci, seen, pci_names)
    resolution = ctx.resolver.resolve(pci.vendor_device, ctx.profile)
    if not pci.by_nvidia:
        found += _selector_case(ctx, pci)
        return found + _check_kubevirt_pci(ctx, entry, pci.name_node, pci.name, pci.shown, resolution, kubevirt_pci)
    problem = _pci_not_advertised(ctx, pci, resolution) or _pci_wrong_name(ctx, pci, resolution, wrong_pci)
    if problem:
        return found + problem
    found += ctx.name_problems(entry.doc, pci.name_node, pci.name_path, resolution.warnings)
    return found + _pci_renamed_by_upgrade(ctx, pci)


def _pci_selector_field(ctx: Context, pci: _PciEntry) -> list[Finding]:
    """wrong-selector-field: the other CR's selector field, not this one's."""
    if pci.misplaced is None:
        return []
    reader = "a HyperConverged CR" if pci.entry.hyperconverged else "KubeVirt"
    return [
        ctx.finding(
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


def _pci_invalid_selector(ctx: Context, pci: _PciEntry) -> list[Finding]:
    """invalid-selector: a missing selector, or one that is not VENDOR:DEVICE."""
    where = pci.selector_node if pci.selector_node is not None else pci.entry.node
    return [
        ctx.finding(
            pci.entry.doc, where, pci.selector_path, INVALID_SELECTOR, field=pci.own_field, selector=pci.selector
        )
    ]


def _pci_duplicate(
    ctx: Context, pci: _PciEntry, seen: dict[tuple[str, str], int], pci_names: dict[str, str]
) -> list[Finding]:
    """duplicate-selector: the selector already permitted in this list."""
    assert pci.selector_node is not None
    found = _duplicate(
        ctx,
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


def _pci_not_advertised(ctx: Context, pci: _PciEntry, resolution: Resolution) -> list[Finding]:
    """not-advertised: the profile's plugin advertises nothing for the device."""
    if resolution.resource_name is not None:
        return []
    reason = next((w.message for w in resolution.warnings if w.code == NOT_ADVERTISED), "")
    return [
        ctx.finding(
            pci.entry.doc,
            pci.name_node,
            pci.name_path,
            NOT_ADVERTISED,
            profile=ctx.profile_name,
            shown=pci.shown,
            reason=reason,
        )
    ]


def _pci_wrong_name(ctx: Context, pci: _PciEntry, resolution: Resolution, wrong_pci: dict[str, str]) -> list[Finding]:
    """wrong-resource-name: the plugin advertises the device under another name."""
    expected = resolution.resource_name
    if expected is None or pci.name == expected:
        return []
    wrong_pci.setdefault(pci.name, expected)
    return [
        ctx.finding(
            pci.entry.doc,
            pci.name_node,
            pci.name_path,
            WRONG_RESOURCE_NAME,
            expected=expected,
            profile=ctx.profile_name,
            shown=pci.shown,
            right=expected,
            name=pci.name,
            refused=not resolution.advertised,
        )
    ]


def _pci_renamed_by_upgrade(ctx: Context, pci: _PciEntry) -> list[Finding]:
    """renamed-by-upgrade: right today, another name in ``upgrade_to``."""
    if ctx.upgrade_to is None:
        return []
    assert pci.vendor_device is not None
    after = ctx.resolver.resolve(pci.vendor_device, ctx.upgrade_to).resource_name
    if after == pci.name:
        return []
    return [
        ctx.finding(
            pci.entry.doc,
            pci.name_node,
            pci.name_path,
            RENAMED_BY_UPGRADE,
            expected=after,
            upgrade=ctx.upgrade_name,
            shown=pci.shown,
            after=after,
            name=pci.name,
        )
    ]


def _check_kubevirt_pci(
    ctx: Context,
    entry: Entry,
    name_node: Node,
    name: str,
    shown: str,
    resolution: Resolution,
    permitted: dict[str, list[tuple[Entry, Node, str]]],
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
    runs = ctx.presence.runs
    if same and runs:
        return [_missing_erp(ctx, entry, name, shown=shown)]
    note = (
        f"NVIDIA's plugin would call {shown} {theirs}" if theirs else f"NVIDIA's plugin advertises nothing for {shown}"
    )
    path = entry.path + ("resourceName",)
    problems = [
        ctx.finding(entry.doc, name_node, path, w.code, warning=w.message, note=note)
        for w in kubevirt_name_warnings(name)
    ]
    others = [] if same else sorted({r.device.upper() for r in ctx.names().get(name, []) if r.advertised})
    if others and runs:
        problems.append(
            ctx.finding(
                entry.doc,
                name_node,
                path,
                RESOURCE_NAME_CONFLICT,
                shown=shown,
                name=name,
                profile=ctx.profile_name,
                others=tuple(others),
                note=note,
                evidence=ctx.presence.evidence,
            )
        )
    elif (same or others) and runs is None:
        whose = shown if same else ", ".join(others)
        _kubevirt_note(ctx, entry, name_node, name, f"NVIDIA's plugin ({ctx.profile_name}) gives {whose} that name")
    if not problems:
        permitted.setdefault(name, []).append((entry, name_node, shown))
    return problems


def _kubevirt_pci_and_mdev(
    ctx: Context, kubevirt_pci: dict[str, list[tuple[Entry, Node, str]]], permitted_mdev: set[str]
) -> list[Finding]:
    """A name KubeVirt advertises for PCI devices that a mediatedDevices
    entry permits too: two plugins would register one resource."""
    found: list[Finding] = []
    for name in sorted(kubevirt_pci.keys() & permitted_mdev):
        for entry, name_node, shown in kubevirt_pci.pop(name):
            found.append(
                ctx.finding(
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


def _check_mdev(
    ctx: Context, entry: Entry, seen: dict[tuple[str, str], int], wrong_mdev: dict[str, str], permitted: set[str]
) -> list[Finding]:
    """One mediatedDevices entry: with ``externalResourceProvider: true``
    NVIDIA's plugin advertises the vGPU type (the name must be the one it
    makes of the selector); without, KubeVirt's own (:meth:`_check_kubevirt_mdev`)."""
    node = entry.node
    if is_true(_get(node, "disabled")):
        return []
    name_node = _get(node, "resourceName")
    name = _scalar(name_node)
    if name_node is None or name is None or not is_nvidia(name):
        return []
    by_nvidia, erp_invalid = _served_by_nvidia(node)
    found = _invalid_erp(ctx, entry) if erp_invalid else []
    selector_node = _get(node, "mdevNameSelector")
    selector = _scalar(selector_node)
    selector_path = entry.path + ("mdevNameSelector",)
    if selector_node is None or selector is None:
        found.append(ctx.finding(entry.doc, node, selector_path, INVALID_SELECTOR, field="mdevNameSelector"))
        return found
    found.extend(_duplicate(ctx, entry, selector_node, selector_path, ("mdev", selector), seen, repr(selector)))
    found.extend(_mdev_vgpu_type(ctx, entry, selector_node, selector_path, selector))
    rule = ctx.resolver.view(ctx.profile).profile.mdev_name
    expected = mdev.mdev_resource(selector, rule)
    if not by_nvidia:
        return found + _check_kubevirt_mdev(ctx, entry, name_node, name, selector, expected, permitted)
    if expected is None:
        warning = mdev.crash_warning(selector).message
        found.append(
            ctx.finding(
                entry.doc, selector_node, selector_path, PLUGIN_CRASH, profile=ctx.profile_name, warning=warning
            )
        )
        return found
    if name != expected:
        wrong_mdev.setdefault(name, expected)
        found.append(_mdev_wrong_name(ctx, entry, name_node, name, selector, expected, rule))
        return found
    problems = ctx.name_problems(entry.doc, name_node, entry.path + ("resourceName",), resource_warnings(name))
    if not problems:
        permitted.add(name)
    found.extend(problems)
    found.extend(_mdev_renamed_by_upgrade(ctx, entry, name_node, name, selector))
    return found


def _check_kubevirt_mdev(
    ctx: Context, entry: Entry, name_node: Node, name: str, selector: str, expected: str | None, permitted: set[str]
) -> list[Finding]:
    """A mediatedDevices entry without ``externalResourceProvider: true``:
    KubeVirt's own plugin advertises the vGPU type as ``name`` (any valid
    name works). Where NVIDIA's plugin runs too it serves the same vGPU
    devices: ``missing-external-resource-provider`` (a note when that is
    not known)."""
    runs = ctx.presence.runs
    if runs:
        return [_missing_erp(ctx, entry, name, shown=repr(selector), right=expected, mdev=True)]
    path = entry.path + ("resourceName",)
    problems = [
        ctx.finding(entry.doc, name_node, path, w.code, warning=w.message) for w in kubevirt_name_warnings(name)
    ]
    if runs is None:
        theirs = f"as {expected}" if expected else "not at all (it panics on the type)"
        _kubevirt_note(
            ctx, entry, name_node, name, f"NVIDIA's plugin ({ctx.profile_name}) would advertise {selector!r} {theirs}"
        )
    if not problems:
        permitted.add(name)
    return problems


def _selector_case(ctx: Context, pci: _PciEntry) -> list[Finding]:
    """invalid-selector: lower-case hex where the ``kubevirt`` release's
    own plugin compares selectors case-sensitively."""
    from pciname.kubevirt.selectors import case_sensitive

    fact = case_sensitive(ctx.kubevirt)
    selector = pci.selector or ""
    if fact is None or selector == selector.upper() or pci.selector_node is None:
        return []
    return [
        ctx.finding(
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
    ctx: Context, entry: Entry, selector_node: Node, selector_path: YamlPath, selector: str
) -> list[Finding]:
    """The selector as a vGPU type: a note on how it reads (when notes
    are wanted), or ``unknown-vgpu-type``."""
    from pciname.kubevirt.vgpu import selector_note, selector_problem

    problem = selector_problem(selector)
    note = selector_note(selector) if problem is None and ctx.want_notes else None
    if note is not None:
        mark = selector_node.start_mark
        ctx.notes.append(f"{entry.doc.file}:{mark.line + 1}: {format_path(selector_path)}: {note}")
    if problem is None:
        return []
    return [
        ctx.finding(entry.doc, selector_node, selector_path, UNKNOWN_VGPU_TYPE, expected=problem["strings"], **problem)
    ]


def _mdev_wrong_name(
    ctx: Context, entry: Entry, name_node: Node, name: str, selector: str, expected: str, rule: str
) -> Finding:
    how = "white space to '_', nothing else changed"
    if rule == mdev.SECOND_FIELD:
        how = "the second space-separated field"
    return ctx.finding(
        entry.doc,
        name_node,
        entry.path + ("resourceName",),
        WRONG_MDEV_RESOURCE_NAME,
        expected=expected,
        profile=ctx.profile_name,
        selector=selector,
        right=expected,
        name=name,
        how=how,
    )


def _mdev_renamed_by_upgrade(ctx: Context, entry: Entry, name_node: Node, name: str, selector: str) -> list[Finding]:
    if ctx.upgrade_to is None:
        return []
    after = mdev.mdev_resource(selector, ctx.resolver.view(ctx.upgrade_to).profile.mdev_name)
    if after == name:
        return []
    return [
        ctx.finding(
            entry.doc,
            name_node,
            entry.path + ("resourceName",),
            RENAMED_BY_UPGRADE,
            expected=after,
            upgrade=ctx.upgrade_name,
            selector=selector,
            after=after,
            name=name,
        )
    ]


@dataclass
class _PciEntry:
    """What the rules read of one pciHostDevices entry with an ``nvidia.com/``
    name (:meth:`read`: None for any other entry, or a disabled one)."""

    entry: Entry
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
    def read(cls, entry: Entry) -> _PciEntry | None:
        node = entry.node
        if is_true(_get(node, "disabled")):
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
    if erp is None or is_true(erp):
        return erp is not None, False
    if isinstance(erp, ScalarNode) and (erp.tag.endswith(":null") or erp.tag.endswith(":bool")):
        return False, False
    return True, True


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
