"""Never silently clean (rule ``unmodelled-names``, notes only): every GPU
resource name of the input that no other rule judged by a model is named in
a note that says so, so a clean run never reads as "these names are right".

* **Where.** The keys of every ``resources.limits`` and ``resources.requests``
  mapping, in any document (pods, workloads, VMs, CRs, Helm values), and the
  names VMs and Cozystack node pools ask for (the ``references`` rule's).
* **Which names.** ``nvidia.com/`` ones and those of the other GPU vendors'
  device plugins (:data:`OTHER_GPU_DOMAINS`), which pciname has no model of.
* **Judged elsewhere, so left alone here.** A Kata pod's names (rule
  ``kata-pods``), a VM's PCI names, and its vGPU names when the input has
  ``permittedHostDevices`` (``references``, ``not-permitted``) or a finding is about them,
  and the container plugin's names in VMs (``vm-container-names``).
* **Noted.** The container plugin's names in pods: what the model of
  NVIDIA's k8s-device-plugin says of them (:mod:`.gfd`; its MIG names no
  release advertises by default are rule ``container-pods``'s findings), and
  that whether a node offers them was not checked; any other ``nvidia.com/`` name (no plugin pciname models
  advertises it; a passthrough name of the profile says so), a VM's vGPU name
  when the input has no ``permittedHostDevices``, and other vendors' names.
"""

from __future__ import annotations

from yaml.nodes import MappingNode, Node

from pciname.hami.pods import NAME_PREFIX
from pciname.kubevirt.resources import CONTAINER, MDEV, resource_kind
from pciname.lint.codes import RuleName
from pciname.lint.document import Doc, RunState, format_path, permitted_names
from pciname.lint.kinds.gfd import advertised
from pciname.lint.kinds.kata import kata_requests
from pciname.lint.nodes import YamlPath, items as _items, scalar as _scalar, walk
from pciname.lint.rules import Context, rule

#: The resource domains of other vendors' GPU device plugins (AMD's
#: ROCm/k8s-device-plugin ``amd.com/gpu``, Intel's intel-device-plugins-for-kubernetes
#: ``gpu.intel.com/i915``, ``gpu.intel.com/xe``): no model covers them.
OTHER_GPU_DOMAINS = ("amd.com/", "gpu.intel.com/")
#: The fields of a container's (or a VM domain's) resources whose keys are resource names.
RESOURCE_FIELDS = ("limits", "requests")
MODELLED = (
    "KubeVirt's own and NVIDIA's kubevirt-gpu-device-plugin (PCI and vGPU names, under the profile), the Kata "
    "sandbox-device-plugin, the container plugin's nvidia.com/gpu, nvidia.com/gpu.shared and nvidia.com/mig-*"
)


#: NVIDIA/k8s-device-plugin@1b826acc (v0.20.0) api/config/v1/resources.go:48
#: (NewResourceName: any name, prefixed nvidia.com/) and internal/rm/rm.go:110-147
#: (the default resources: gpu; under MIG strategy mixed, mig-<profile> with + as .).
CUSTOM = "the container plugin's config file (its resources section) can name a GPU anything under nvidia.com/"


def _note(ctx: Context, doc: Doc, node: Node, path: YamlPath, text: str) -> None:
    ctx.notes.append(f"{doc.file}:{node.start_mark.line + 1}: {format_path(path)}: {text}")


def _hami_names() -> set[str]:
    """Every name a HAMi release's chart registers (``nvidia.com/gpumem``, ...)."""
    from pciname.hami.releases import release, releases

    return {name for tag in releases() for name in release(tag).names.all()}


def _pod_text(ctx: Context, name: str) -> str | None:
    """The note for ``name`` in a resources mapping outside a Kata pod (None: not a GPU name, or one
    another rule judges: with ``--hami``, the ``nvidia.com/gpu...`` names are rule ``hami-pods``'s)."""
    if ctx.hami is not None and name.lower().startswith(NAME_PREFIX):
        return None
    kind = resource_kind(name)
    if name in _hami_names() and kind != CONTAINER:
        return f"{name} is a name HAMi's chart registers: give --hami RELEASE to check it; not checked"
    if name.startswith(OTHER_GPU_DOMAINS):
        return f"pciname has no model of {name.partition('/')[0]}'s device plugins: {name} was not checked"
    if kind == CONTAINER:
        hami = (
            " (HAMi's chart registers it too: --hami RELEASE checks it as HAMi reads it)"
            if name in _hami_names()
            else ""
        )
        said = advertised(name)
        if said is None:
            return f"{name} is not a name NVIDIA's container device plugin advertises by default; {CUSTOM}: no model covers it{hami}"
        return f"{said}: whether a node offers it was not checked{hami}"
    if kind not in ("pci", MDEV):
        return None
    if name in ctx.names():
        return (
            f"{name} is what {ctx.profile_name} advertises for a passthrough GPU (for VMs and Kata pods); this pod "
            "has no Kata runtime class, so no model says what it gets: not checked"
        )
    return (
        f"{name} is not a name any device plugin pciname models advertises ({MODELLED}) by default; {CUSTOM}: "
        "no model covers it"
    )


def _resources(ctx: Context, doc: Doc, judged: set[tuple[str, int, str]]) -> None:
    """The notes on one document's resources mappings no finding judged."""
    found: list[tuple[Node, YamlPath, str]] = []
    for node, path in walk(doc.root):
        if isinstance(node, MappingNode) and len(path) >= 2 and path[-2] == "resources" and path[-1] in RESOURCE_FIELDS:
            for name, key, _ in _items(node):
                text = _pod_text(ctx, name)
                if text is not None and (doc.file, doc.index, format_path(path + (name,))) not in judged:
                    found.append((key, path + (name,), text))
    if not found:
        return
    kata = {id(request.node) for request in kata_requests(doc.root, ctx.check)}
    for at, where, text in found:
        if id(at) not in kata:
            ctx.check()
            _note(ctx, doc, at, where, text)


def _references(ctx: Context, state: RunState) -> None:
    """The notes on the names VMs and node pools ask for that no rule judged."""
    judged = {(f.file, f.document, f.path) for f in state.findings}
    permitted = permitted_names(state.sites)
    for ref in state.sites.references:
        name = _scalar(ref.node)
        if name is None or (ref.doc.file, ref.doc.index, format_path(ref.path)) in judged:
            continue
        if name.startswith(OTHER_GPU_DOMAINS):
            text = f"pciname has no model of {name.partition('/')[0]}'s device plugins: {name} was not checked"
        elif resource_kind(name) == MDEV and permitted is None:
            text = (
                f"no permittedHostDevices in the input: whether a vGPU type (or an entry) is advertised as {name} was "
                "not checked (give the KubeVirt CR with the VMs; `pciname vgpu-types DEVICE` lists vGPU types' names)"
            )
        else:
            continue
        ctx.check()
        _note(ctx, ref.doc, ref.node, ref.path, text)


@rule(RuleName.UNMODELLED_NAMES)
def unmodelled_names(ctx: Context, state: RunState) -> None:
    """A note on each GPU name of the input no model judged."""
    if not ctx.want_notes:
        return
    _references(ctx, state)
    judged = {(f.file, f.document, f.path) for f in state.findings}
    for doc in ctx.docs:
        _resources(ctx, doc, judged)
