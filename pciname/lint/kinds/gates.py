"""The KubeVirt feature gates the input's VMs need (rule ``feature-gates``):
a VM with ``domain.devices.gpus[]`` needs the ``GPU`` gate, one with
``hostDevices[]`` the ``HostDevices`` gate (a DRA claim's entries too), in the ``--kubevirt`` release
(default: the newest known; the facts are :mod:`pciname.kubevirt.gates`').

* With a KubeVirt CR in the input, a gate the release requires that the CR's
  ``spec.configuration.developerConfiguration.featureGates`` does not list is
  ``missing-feature-gate`` at each VM that needs it (the admitter rejects the
  VM with the message the finding quotes); a listed gate that is GA is a note
  (KubeVirt warns that listing it is redundant).
* A HyperConverged CR (and no KubeVirt CR) turns both gates on: HCO writes
  the KubeVirt CR, with ``GPU`` and ``HostDevices`` among the gates it always
  sets and users cannot remove (``hardCodeKvFgs``; kubevirt/hyperconverged-cluster-operator
  v1.4.0 351e9c52 ``pkg/controller/operands/kubevirt.go`` lines 82, 85 and
  89-99; ``GPU`` dropped from the list in v1.15.0, GA in KubeVirt by then;
  v1.18.1 a7834653 ``controllers/handlers/kubevirt.go`` 100, 128-136 and
  ``getKvFeatureGateList``). HCO releases before v1.4.0 did not set
  ``HostDevices``: a note says the operator's release was assumed.
* Without either, each required gate a VM needs is a note at its first VM saying
  it was not checked: a clean run must not read as "the gates are on".
"""

from __future__ import annotations

from yaml.nodes import MappingNode, Node

from pciname.kubevirt.gates import NEEDED_BY, Gate, gate
from pciname.lint.codes import MISSING_FEATURE_GATE, RuleName
from pciname.lint.document import Doc, Reference, RunState, format_path
from pciname.lint.nodes import YamlPath, get as _get, scalar as _scalar, sequence as _sequence, walk
from pciname.lint.rules import Context, rule

#: What a HyperConverged CR says of the gates (see the module's docstring).
HCO_GATES = (
    "the HyperConverged CR's operator sets the GPU and HostDevices feature gates in the KubeVirt CR it writes "
    "(HCO v1.4.0 and later: hardCodeKvFgs, kubevirt/hyperconverged-cluster-operator@351e9c523f3c "
    "pkg/controller/operands/kubevirt.go:89); an older HCO does not set HostDevices"
)
#: Where a KubeVirt CR lists its gates.
GATES_PATH = ("spec", "configuration", "developerConfiguration", "featureGates")


def _claimed(docs: list[Doc]) -> list[Reference]:
    """The ``claimName`` of each VM device list entry without a ``deviceName`` (a DRA claim's device):
    the admitter checks the list, whatever its entries (kubevirt/kubevirt v1.9.0
    ``vmi-create-admitter.go`` 555: ``HostDevices != nil``)."""
    found = []
    for doc in docs:
        if not (doc.kind or "").startswith("VirtualMachine"):
            continue
        for node, path in walk(doc.root):
            if len(path) >= 3 and path[-2] in NEEDED_BY and path[-3] == "devices" and isinstance(node, MappingNode):
                claim = _get(node, "claimName")
                if claim is not None and _get(node, "deviceName") is None:
                    found.append(Reference(doc, claim, path + ("claimName",)))
    return found


def _needs(references: list[Reference]) -> dict[str, list[Reference]]:
    """gate -> the VM references (``domain.devices.<list>[i].deviceName``, or ``.claimName``) that need it,
    in input order."""
    needs: dict[str, list[Reference]] = {}
    for ref in references:
        path = ref.path
        entry = len(path) >= 4 and path[-1] in ("deviceName", "claimName")
        if entry and path[-3] in NEEDED_BY and path[-4] == "devices":
            needs.setdefault(NEEDED_BY[str(path[-3])], []).append(ref)
    return needs


def _listed(ctx: Context, crs: list[Doc]) -> set[str]:
    """The gates the input's KubeVirt CRs list; a GA one is a note."""
    listed: set[str] = set()
    for doc in crs:
        node: Node | None = doc.root
        for key in GATES_PATH:
            node = _get(node, key)
        for i, item in enumerate(_sequence(node)):
            name = _scalar(item)
            if name is None:
                continue
            listed.add(name)
            if name in NEEDED_BY.values() and ctx.want_notes:
                fact = gate(name, ctx.kubevirt)
                if fact.warning is not None:
                    _note(
                        ctx,
                        doc,
                        item.start_mark.line,
                        GATES_PATH + (i,),
                        f"KubeVirt {fact.release}: {fact.warning} ({fact.where})",
                    )
    return listed


def _note(ctx: Context, doc: Doc, line: int, path: YamlPath, text: str) -> None:
    ctx.notes.append(f"{doc.file}:{line + 1}: {format_path(path)}: {text}")


def _unchecked(ctx: Context, fact: Gate, first: Reference) -> None:
    """The note for a required gate no KubeVirt CR of the input lets lint check."""
    said = f"KubeVirt {fact.release} rejects the VM without it ({fact.message!r}, {fact.where})"
    text = f"no KubeVirt CR in the input: whether the {fact.name} feature gate is on was not checked; {said}"
    _note(ctx, first.doc, first.node.start_mark.line, first.path, text)


@rule(RuleName.FEATURE_GATES)
def feature_gates(ctx: Context, state: RunState) -> None:
    """The gates the input's VMs need: listed by its KubeVirt CR when it has one, else a note each."""
    needs = _needs(state.sites.references + _claimed(ctx.docs))
    if not needs:
        return
    crs = [doc for doc in ctx.docs if doc.kind == "KubeVirt"]
    if not crs and any(doc.kind == "HyperConverged" for doc in ctx.docs):
        if ctx.want_notes:
            for refs in needs.values():
                _note(ctx, refs[0].doc, refs[0].node.start_mark.line, refs[0].path, HCO_GATES)
        return
    if not crs:
        if ctx.want_notes:
            for name, refs in needs.items():
                fact = gate(name, ctx.kubevirt)
                if fact.required:  # a GA gate is on: nothing left unchecked
                    _unchecked(ctx, fact, refs[0])
        return
    listed = _listed(ctx, crs)
    for name, refs in needs.items():
        fact = gate(name, ctx.kubevirt)
        if not fact.required or name in listed:
            continue
        for ref in refs:
            ctx.check()
            finding = ctx.finding(
                ref.doc,
                ref.node,
                ref.path,
                MISSING_FEATURE_GATE,
                expected=name,
                gate=name,
                release=fact.release,
                message=fact.message,
                where=fact.where,
            )
            state.findings.append(finding)
