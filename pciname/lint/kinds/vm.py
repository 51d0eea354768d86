"""The GPU names VMs and Cozystack node pools ask for, for lint (rule
``references``): ``domain.devices.{gpus,hostDevices}[].deviceName`` of
VirtualMachines, VirtualMachineInstances, pools and replica sets, and
``gpus[].name`` of node groups and KubernetesNodes pools. Each must be
permitted by the input's ``permittedHostDevices`` entries (when it has
some), and right under the profile; run after :mod:`.permitted`, whose
verdicts it reads from the run's state, over the whole input (a VM in one
file may ask for a name another file permits)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pciname.kubevirt.gates import not_permitted
from pciname.kubevirt.resources import MDEV, PCI, is_mdev_name, is_nvidia, resource_kind, resource_warnings
from pciname.lint.codes import (
    NOT_PERMITTED,
    RENAMED_BY_UPGRADE,
    UNKNOWN_RESOURCE_NAME,
    WRONG_MDEV_RESOURCE_NAME,
    WRONG_RESOURCE_NAME,
    RuleName,
)
from pciname.lint.document import Finding, Reference, RunState, permitted_names
from pciname.lint.hints import Candidates, not_permitted_hint
from pciname.lint.nodes import scalar as _scalar
from pciname.lint.rules import Context, rule

if TYPE_CHECKING:
    from pciname.resolution.results import Resolution


@rule(RuleName.REFERENCES)
def references(ctx: Context, state: RunState) -> None:
    """The names VMs and node pools ask for: permitted by the input's
    entries (when it has some), and right."""
    permitted = permitted_names(state.sites)
    suggested = Candidates(state.working)
    for ref in state.sites.references:
        ctx.check()
        if permitted is not None:
            state.findings.extend(_check_permitted(ctx, ref, permitted, suggested))
        if _scalar(ref.node) in state.kubevirt_pci:
            continue  # permitted without externalResourceProvider: KubeVirt advertises it as written
        state.findings.extend(_check_reference(ctx, ref, state.wrong_pci, state.wrong_mdev, state.permitted_mdev))


def _check_permitted(ctx: Context, ref: Reference, permitted: set[str], working: Candidates) -> list[Finding]:
    """A VM or node pool name that no permittedHostDevices entry of the
    input permits (``not-permitted``); the names suggested are those of
    ``working``, the permitted entries without a finding."""
    name = _scalar(ref.node)
    if name is None or not is_nvidia(name) or name in permitted:
        return []
    expected, hint = not_permitted_hint(name, working, ctx.budget)
    kind = "HostDevice" if len(ref.path) >= 3 and ref.path[-3] == "hostDevices" else "GPU"
    failure = not_permitted(kind, ctx.kubevirt)  # the release's own message, where it has one
    said = {"release": failure.release, "rejection": failure.message % name, "where": failure.where} if failure else {}
    return [ctx.finding(ref.doc, ref.node, ref.path, NOT_PERMITTED, expected=expected, name=name, hint=hint, **said)]


def _check_reference(
    ctx: Context, ref: Reference, wrong_pci: dict[str, str], wrong_mdev: dict[str, str], permitted_mdev: set[str]
) -> list[Finding]:
    name = _scalar(ref.node)
    if name is None or resource_kind(name) not in (PCI, MDEV):
        return []  # another vendor's, or the container plugin's (rule vm-container-names)
    if is_mdev_name(name):
        return _check_mdev_reference(ctx, ref, name, wrong_mdev, permitted_mdev)
    doc, node, path = ref.doc, ref.node, ref.path
    if name in wrong_pci:
        return [
            ctx.finding(
                doc,
                node,
                path,
                WRONG_RESOURCE_NAME,
                expected=wrong_pci[name],
                profile=ctx.profile_name,
                name=name,
                right=wrong_pci[name],
                reference=True,
            )
        ]
    resolutions = ctx.names().get(name)
    if resolutions is None:
        devices = ctx.resolver.reverse(name, ctx.profile)  # the bare-id fallback, e.g. nvidia.com/2335
        resolutions = [ctx.resolver.resolve(d, ctx.profile) for d in devices]
    if not resolutions:
        return _unknown_reference(ctx, ref, name)
    if not any(r.advertised for r in resolutions):
        warnings = [w for r in resolutions[:1] for w in r.warnings]
        return ctx.name_problems(doc, node, path, warnings)
    return _reference_renamed_by_upgrade(ctx, ref, name, resolutions)


def _check_mdev_reference(
    ctx: Context, ref: Reference, name: str, wrong_mdev: dict[str, str], permitted_mdev: set[str]
) -> list[Finding]:
    """A VM's or node pool's vGPU name: the wrong name of a permitted
    type, a name kubelet refuses, or one close to a permitted type's."""
    doc, node, path = ref.doc, ref.node, ref.path
    if name in wrong_mdev:
        return [
            ctx.finding(
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
    problems = ctx.name_problems(doc, node, path, resource_warnings(name))
    if problems:
        return problems
    if not permitted_mdev or name in permitted_mdev:
        return []
    close = Candidates(permitted_mdev, key=str).closest(name, ctx.budget, cutoff=0.8)
    if not close:
        return []
    return [
        ctx.finding(
            doc, node, path, UNKNOWN_RESOURCE_NAME, expected=close, name=name, suggestions=tuple(close), mdev=True
        )
    ]


def _unknown_reference(ctx: Context, ref: Reference, name: str) -> list[Finding]:
    """A name no device of the profile has: kubelet's refusal, else
    ``unknown-resource-name`` with the advertised names close to it."""
    problems = ctx.name_problems(ref.doc, ref.node, ref.path, resource_warnings(name))
    if problems:
        return problems
    suggestions = ctx.suggest(name)
    return [
        ctx.finding(
            ref.doc,
            ref.node,
            ref.path,
            UNKNOWN_RESOURCE_NAME,
            expected=suggestions,
            profile=ctx.profile_name,
            name=name,
            suggestions=tuple(suggestions),
        )
    ]


def _reference_renamed_by_upgrade(
    ctx: Context, ref: Reference, name: str, resolutions: list[Resolution]
) -> list[Finding]:
    if ctx.upgrade_to is None:
        return []
    after = sorted({ctx.resolver.resolve(r.device, ctx.upgrade_to).resource_name or "nothing" for r in resolutions})
    if name in after:
        return []
    return [
        ctx.finding(
            ref.doc,
            ref.node,
            ref.path,
            RENAMED_BY_UPGRADE,
            expected=after[0] if len(after) == 1 else after,
            upgrade=ctx.upgrade_name,
            devices=", ".join(r.device for r in resolutions),
            after=", ".join(after),
            name=name,
        )
    ]
