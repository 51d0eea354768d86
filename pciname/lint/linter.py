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

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import yaml
from yaml.nodes import MappingNode

from pciname.base.yaml_out import Dumper
from pciname.errors import LintInputError
from pciname.lint import codes as lint_codes
from pciname.lint.codes import (  # the codes, re-exported: callers import them from here
    CONTAINER_NAME_IN_VM as CONTAINER_NAME_IN_VM,
    CONTAINER_NAME_NOT_ADVERTISED as CONTAINER_NAME_NOT_ADVERTISED,
    DRA_CONSTRAINT_NOT_PUBLISHED as DRA_CONSTRAINT_NOT_PUBLISHED,
    DRA_HOST_DEPENDENT_SELECTOR as DRA_HOST_DEPENDENT_SELECTOR,
    DRA_INVALID_CONFIG as DRA_INVALID_CONFIG,
    DRA_PREPARE_CRASH as DRA_PREPARE_CRASH,
    DRA_REQUEST_LAYOUT as DRA_REQUEST_LAYOUT,
    DRA_SELECTOR_MATCHES_NOTHING as DRA_SELECTOR_MATCHES_NOTHING,
    DRA_UNKNOWN_CLAIM as DRA_UNKNOWN_CLAIM,
    DRA_UNKNOWN_REQUEST as DRA_UNKNOWN_REQUEST,
    DRA_WRONG_DEVICE_CLASS as DRA_WRONG_DEVICE_CLASS,
    DUPLICATE_KEY as DUPLICATE_KEY,
    DUPLICATE_SELECTOR as DUPLICATE_SELECTOR,
    FIELD_NOT_IN_RELEASE as FIELD_NOT_IN_RELEASE,
    GFD_LABEL_VALUE_NEVER_SET as GFD_LABEL_VALUE_NEVER_SET,
    HAMI_CORES_RANGE as HAMI_CORES_RANGE,
    HAMI_IN_VM as HAMI_IN_VM,
    HAMI_MEM_AND_PERCENTAGE as HAMI_MEM_AND_PERCENTAGE,
    HAMI_UNKNOWN_NAME as HAMI_UNKNOWN_NAME,
    HAMI_WHOLE_MEMORY as HAMI_WHOLE_MEMORY,
    HAMI_WITHOUT_GPU as HAMI_WITHOUT_GPU,
    INVALID_EXTERNAL_RESOURCE_PROVIDER as INVALID_EXTERNAL_RESOURCE_PROVIDER,
    INVALID_RESOURCE_NAME as INVALID_RESOURCE_NAME,
    INVALID_SELECTOR as INVALID_SELECTOR,
    MISPLACED_PERMITTED_HOST_DEVICES as MISPLACED_PERMITTED_HOST_DEVICES,
    MISSING_EXTERNAL_RESOURCE_PROVIDER as MISSING_EXTERNAL_RESOURCE_PROVIDER,
    MISSING_FEATURE_GATE as MISSING_FEATURE_GATE,
    NOT_ADVERTISED as NOT_ADVERTISED,
    NOT_PERMITTED as NOT_PERMITTED,
    PLUGIN_CRASH as PLUGIN_CRASH,
    RENAMED_BY_UPGRADE as RENAMED_BY_UPGRADE,
    RESOURCE_NAME_CONFLICT as RESOURCE_NAME_CONFLICT,
    SOCKET_PATH_TOO_LONG as SOCKET_PATH_TOO_LONG,
    UNKNOWN_RESOURCE_NAME as UNKNOWN_RESOURCE_NAME,
    UNKNOWN_VGPU_TYPE as UNKNOWN_VGPU_TYPE,
    WRONG_KATA_RESOURCE_NAME as WRONG_KATA_RESOURCE_NAME,
    WRONG_MDEV_RESOURCE_NAME as WRONG_MDEV_RESOURCE_NAME,
    WRONG_RESOURCE_NAME as WRONG_RESOURCE_NAME,
    WRONG_SELECTOR_FIELD as WRONG_SELECTOR_FIELD,
)
from pciname.lint.compose import (  # re-exported: composing is part of lint's face
    Duplicates as Duplicates,
    compose as compose,
    compose_data,
    compose_documents,
    flatten_merges as flatten_merges,
    paused_collector,
    refuse_surrogates as refuse_surrogates,
)
from pciname.lint.document import Doc, Finding as Finding, RunState, collect_sites, entry_fields, format_path
from pciname.lint.hints import HintBudget
from pciname.lint.kinds import (  # noqa: F401 - imported for the rules they register
    container as _container,
    cozystack as _cozystack,
    dra as _dra,
    gates as _gates,
    gfd as _gfd,
    hami as _hami,
    kata as _kata,
    mapping as _mapping,
    permitted as _permitted,
    unmodelled as _unmodelled,
    vm as _vm,
)
from pciname.lint.kinds.permitted import (
    kubevirt_name_warnings as kubevirt_name_warnings,
    kubevirt_socket_path as kubevirt_socket_path,
)
from pciname.lint.nodes import get as _get, scalar as _scalar
from pciname.lint.plugin import DEFAULT_NVIDIA_PLUGIN, NvidiaPlugin, presence
from pciname.lint.rules import Context, Rule as Rule, ordered
from pciname.naming.profiles import DEFAULT_PROFILE

__doc__ = (__doc__ or "") + "\n" + lint_codes.rst_list()  # the codes, from their registry

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike

# The codes, their severities, meanings and message builders: pciname.lint.codes.
CODES = lint_codes.CODES

#: The rules of :meth:`Linter.run`, in the order they run (:func:`pciname.lint.rules.ordered`):
#: an entry's verdicts (wrong names, KubeVirt's names, mdev names) are what the later
#: rules check against.
RULES = ordered()


class Linter(Context):
    """Collects documents from any number of inputs, then checks them
    together (a VM in one file may ask for a name permitted in another):
    the walker of the rule registry (:mod:`pciname.lint.rules`).

    >>> linter = Linter("latest")
    >>> linter.add_text(text, "kubevirt.yaml")       # doctest: +SKIP
    >>> findings = linter.run()                      # doctest: +SKIP
    """

    # inputs

    def add_text(self, text: str | bytes, filename: str = "<input>") -> int:
        """Add the YAML documents of ``text``; returns how many. Raises
        LintInputError on a syntax error (nothing of that text is added)."""
        roots, duplicates = compose_documents(text, filename)
        self._duplicates.update(duplicates)
        for index, root in roots:
            kind = _scalar(_get(root, "kind")) if isinstance(root, MappingNode) else None
            self._docs.append(Doc(filename, index, root, kind))
        return len(roots)

    def add_data(self, data: Any, filename: str = "<data>") -> int:
        """Add plain data (e.g. an object read from the cluster) as one
        document: its YAML dump, so lines refer to the dump. Dumped and
        composed by libyaml when PyYAML has it, ten times faster than
        :meth:`add_text` (plain data has no key twice and no merge key, all
        that :class:`_ConsumerLoader` is for). Raises LintInputError for
        data nested too deeply to dump."""
        try:
            roots = compose_data(data)
            # Without libyaml, or with text it cannot encode (a lone surrogate):
            text = yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True) if roots is None else ""
        except RecursionError:
            raise LintInputError(f"{filename}: nested too deeply to check", file=filename) from None
        if roots is None:
            return self.add_text(text, filename)
        for index, root in roots:
            kind = _scalar(_get(root, "kind")) if isinstance(root, MappingNode) else None
            self._docs.append(Doc(filename, index, root, kind))
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
        with paused_collector():  # the rules walk every node: no collection walks them again meanwhile
            return self._run()

    def _run(self) -> list[Finding]:
        self.notes = []
        state = RunState()
        for doc in self._docs:
            collect_sites(doc, state.sites)
        self.presence = presence(
            self.nvidia_plugin,
            ((doc.file, doc.root) for doc in self._docs),
            (
                f"{doc.file}: {format_path(path)}"
                for doc, _, path in state.sites.blocks
                if path[-2:] == ("gpu", "permittedHostDevices")
            ),
            self.option,
        )
        self.budget = HintBudget(check=self.check)
        for rule in RULES:  # the module's, read at each run
            rule.check(self, state)
        self.working_entries = [(key, entry_fields(node)) for key, name, node in state.entries if name in state.working]
        self.blocks = len(state.sites.blocks)
        rank: dict[str, int] = {}
        for doc in self._docs:
            rank.setdefault(doc.file, len(rank))
        findings = state.findings
        findings.sort(key=lambda f: (rank.get(f.file, len(rank)), f.document, f.line, f.column, f.code))
        return findings


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
