"""Every stable code ``lint`` reports, in one registry (:data:`CODES`): its
severity, what it means and the builder of its findings' messages. The
README's table of lint codes, the code list of :mod:`pciname.lint.linter`'s
docstring and the ``Finding.code`` comment of the ``.proto`` are made from it
(:func:`markdown_table`, :func:`rst_list`, :func:`proto_comment`), and
``tests/test_lint_codes.py`` fails when any of them drifts.

Adding a code is one entry: a constant, and a :class:`LintCode` in
:data:`CODES` (in the order the README lists it) whose ``message`` takes the
facts the rule knows as keyword arguments and returns the finding's message,
and whose ``rules`` name the rules that report it (:class:`RuleName`; their
checks are registered in :mod:`pciname.lint.rules`); the rule calls
``ctx.finding(..., CODE, expected=..., **facts)``. Then
``python -m tools.lint_tables --write`` rewrites the README table and the
proto comment from the registry (``--check``: exit 1 if they differ), and
``python -m tools.protogen`` regenerates the stubs.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from enum import StrEnum
from typing import NamedTuple

from pciname.naming import checks

ERROR, WARNING = "error", "warning"

WRONG_RESOURCE_NAME = "wrong-resource-name"
UNKNOWN_RESOURCE_NAME = "unknown-resource-name"
WRONG_MDEV_RESOURCE_NAME = "wrong-mdev-resource-name"
PLUGIN_CRASH = checks.PLUGIN_CRASH  # a v1.0.x plugin on a vGPU type name without a space
INVALID_RESOURCE_NAME = checks.INVALID_RESOURCE_NAME
SOCKET_PATH_TOO_LONG = checks.SOCKET_PATH_TOO_LONG
NOT_ADVERTISED = checks.NOT_ADVERTISED
MISSING_EXTERNAL_RESOURCE_PROVIDER = "missing-external-resource-provider"
INVALID_EXTERNAL_RESOURCE_PROVIDER = "invalid-external-resource-provider"
RESOURCE_NAME_CONFLICT = "resource-name-conflict"
DUPLICATE_SELECTOR = "duplicate-selector"
INVALID_SELECTOR = "invalid-selector"
WRONG_SELECTOR_FIELD = "wrong-selector-field"
MISPLACED_PERMITTED_HOST_DEVICES = "misplaced-permitted-host-devices"
RENAMED_BY_UPGRADE = "renamed-by-upgrade"
DUPLICATE_KEY = "duplicate-key"
UNKNOWN_VGPU_TYPE = "unknown-vgpu-type"
FIELD_NOT_IN_RELEASE = "field-not-in-release"
NOT_PERMITTED = "not-permitted"
MISSING_FEATURE_GATE = "missing-feature-gate"
CONTAINER_NAME_IN_VM = "container-name-in-vm"
CONTAINER_NAME_NOT_ADVERTISED = "container-name-not-advertised"
GFD_LABEL_VALUE_NEVER_SET = "gfd-label-value-never-set"
WRONG_KATA_RESOURCE_NAME = "wrong-kata-resource-name"
DRA_SELECTOR_MATCHES_NOTHING = "dra-selector-matches-nothing"
DRA_HOST_DEPENDENT_SELECTOR = "dra-host-dependent-selector"
DRA_WRONG_DEVICE_CLASS = "dra-wrong-device-class"
DRA_UNKNOWN_CLAIM = "dra-unknown-claim"
DRA_UNKNOWN_REQUEST = "dra-unknown-request"
DRA_REQUEST_LAYOUT = "dra-request-layout"
DRA_INVALID_CONFIG = "dra-invalid-config"
DRA_CONSTRAINT_NOT_PUBLISHED = "dra-constraint-not-published"
DRA_PREPARE_CRASH = "dra-prepare-crash"
# pciname.hami.pods reports these (the hami room sits below lint: the strings are its own)
HAMI_UNKNOWN_NAME = "hami-unknown-name"
HAMI_CORES_RANGE = "hami-cores-range"
HAMI_MEM_AND_PERCENTAGE = "hami-mem-and-percentage"
HAMI_WITHOUT_GPU = "hami-without-gpu"
HAMI_WHOLE_MEMORY = "hami-whole-memory"
HAMI_IN_VM = "hami-in-vm"


class RuleName(StrEnum):
    """The rules of a lint run, in the order they run (their checks are
    registered with :func:`pciname.lint.rules.rule`, in :mod:`pciname.lint.kinds`)."""

    ENTRIES = "permitted-entries"  # each permittedHostDevices entry, by its list
    KUBEVIRT_MDEV = "kubevirt-and-mdev-names"  # a name KubeVirt's own plugin advertises that an mdev entry permits
    NODE_GROUP_FIELDS = "node-group-fields"  # the fields of Cozystack node groups and KubernetesNodes pools
    DUPLICATE_KEYS = "duplicate-keys"  # keys written twice in one mapping
    REFERENCES = "references"  # the names VMs and node pools ask for
    FEATURE_GATES = "feature-gates"  # the KubeVirt feature gates VMs' GPUs need (pciname.lint.kinds.gates)
    VM_CONTAINER_NAMES = "vm-container-names"  # the container plugin's names in VMs (pciname.lint.kinds.container)
    CONTAINER_PODS = "container-pods"  # the container plugin's MIG names pods ask for (pciname.lint.kinds.gfd)
    GFD_SELECTORS = "gfd-selectors"  # node selectors on GFD's resource labels (pciname.lint.kinds.gfd)
    KATA_PODS = "kata-pods"  # the names pods with a Kata runtime class ask for (pciname.lint.kinds.kata)
    DRA_CLAIMS = "dra-claims"  # DRA claims and the VMs that use them (pciname.lint.kinds.dra)
    HAMI_PODS = "hami-pods"  # with --hami: the HAMi names pods and VMs ask for (pciname.lint.kinds.hami)
    UNMODELLED_NAMES = "unmodelled-names"  # notes on GPU names no model judged (pciname.lint.kinds.unmodelled)


#: Rules that report no code, only notes (``Linter.notes``).
NOTES_ONLY = (RuleName.UNMODELLED_NAMES,)


class LintCode(NamedTuple):
    """One code: how severe, what it means (a Markdown line: the README's
    "when"), ``message(**facts)``, the text of a finding, and the rules that
    report it (the first decides it, a later one reports the same verdict
    where a VM or node pool asks for the name)."""

    severity: str
    meaning: str
    message: Callable[..., str]
    rules: tuple[RuleName, ...]
    #: Codes no entry may get beside this one: what this one says of the
    #: entry (which plugin serves it, what its name is) the others deny.
    #: Written on one side only; :func:`contradicting` makes the pairs.
    contradicts: tuple[str, ...] = ()


# -- message builders: one per code, keyword facts in, the finding's message out


def _hami(*, message: str) -> str:
    return message  # pciname.hami.pods says it


def _wrong_resource_name(
    *, profile: str, name: str, right: str, shown: str = "", refused: bool = False, reference: bool = False
) -> str:
    if reference:
        return f"{name} is permitted with a wrong name; {profile} advertises that device as {right}"
    extra = " (and kubelet refuses that name too)" if refused else ""
    return f"{profile} advertises {shown} as {right}{extra}, not {name}: VMs asking for this name never schedule"


def _unknown_resource_name(
    *, name: str, profile: str = "", suggestions: tuple[str, ...] = (), mdev: bool = False
) -> str:
    if mdev:
        return f"no permitted vGPU type is advertised as {name}; did you mean {', '.join(suggestions)}?"
    hint = f"closest: {', '.join(suggestions)}" if suggestions else "no similar name either"
    return f"{profile} advertises no device as {name}; {hint}"


def _wrong_mdev_resource_name(
    *, name: str, right: str, profile: str = "", selector: str = "", how: str = "", reference: bool = False
) -> str:
    if reference:
        return f"{name} is the wrong name of a permitted vGPU type; the plugin advertises it as {right}"
    return f"{profile} advertises vGPU type {selector!r} as {right}, not {name} ({how})"


def _plugin_crash(*, profile: str, warning: str) -> str:
    return f"{profile}: {warning}"


def _name_warning(*, warning: str, note: str = "") -> str:
    """invalid-resource-name, socket-path-too-long: the naming rules' own
    message (:mod:`pciname.naming.checks`), and what NVIDIA's plugin would do."""
    return f"{warning} ({note})" if note else warning


def _not_advertised(*, profile: str, shown: str, reason: str) -> str:
    return f"{profile} advertises nothing for {shown}: {reason}"


def _missing_external_resource_provider(
    *, state: str, name: str, shown: str = "", right: str | None = None, evidence: str = "", mdev: bool = False
) -> str:
    if mdev:
        theirs = f"advertises vGPU type {shown} as {right}" if right else f"panics on vGPU type {shown}"
        return (
            f"externalResourceProvider {state}: NVIDIA's device plugin runs on these nodes ({evidence}) and {theirs}; "
            f"without externalResourceProvider: true KubeVirt starts its own plugin for the same vGPU devices, "
            f"as {name}: two plugins hand out one device"
        )
    return (
        f"externalResourceProvider {state}: {name} is the name NVIDIA's device plugin gives {shown}, and it runs "
        f"on these nodes ({evidence}), so it must be true (otherwise KubeVirt starts its own plugin for the same "
        "resource)"
    )


def _invalid_external_resource_provider(*, written: str) -> str:
    return (
        f"externalResourceProvider is {written}, not a boolean: KubeVirt's API types it boolean (true: NVIDIA's "
        "plugin serves the entry); the entry is checked as meant for NVIDIA's plugin"
    )


def _resource_name_conflict(
    *,
    shown: str,
    name: str,
    profile: str = "",
    others: tuple[str, ...] = (),
    note: str = "",
    evidence: str = "",
    mdev: bool = False,
) -> str:
    if mdev:
        return (
            f"without externalResourceProvider: true KubeVirt advertises {shown} as {name}, and a "
            "mediatedDevices entry permits a vGPU type under that name too: two plugins would register one resource"
        )
    return (
        f"without externalResourceProvider: true KubeVirt advertises {shown} as {name}, the name "
        f"{profile} gives {', '.join(others)}, and NVIDIA's device plugin runs on these nodes ({evidence}): two "
        f"plugins would register one resource on a node with both ({note})"
    )


def _duplicate_selector(*, shown: str, first_line: int, first_name: str | None = None, name: str | None = None) -> str:
    message = f"{shown} is already permitted at line {first_line}; KubeVirt uses one of the two entries"
    if first_name is not None and first_name != name:
        message += (
            f", and it names the device {first_name}, not {name}: "
            "a device gets one name, so VMs asking for the other never schedule"
        )
    return message


def _invalid_selector(*, field: str, selector: str | None = None, kubevirt: str = "", line: str = "") -> str:
    if field == "mdevNameSelector":
        return "mdevNameSelector is missing; expected a vGPU type name such as 'GRID T4-1Q'"
    if kubevirt:
        return (
            f"{selector!r} has lower-case hex: KubeVirt {kubevirt}'s own device plugin compares the selector with "
            f"the device's PCI_ID (upper-case, as the kernel writes it) case-sensitively ({line}), so it selects "
            f"no device; write {(selector or '').strip().upper()!r}"
        )
    state = "is missing" if selector is None else repr(selector) + " is not VENDOR:DEVICE hex"
    return f"{field} {state}; expected e.g. 10DE:2236"


def _wrong_selector_field(*, reader: str, own: str, other: str) -> str:
    return f"{reader} reads {own}, not {other}: this entry selects no device"


def _misplaced_permitted_host_devices(*, reader: str, here: str, there: str, why: str) -> str:
    return f"{reader} reads permittedHostDevices at {there}, not at {here} ({why}): none of these entries is permitted"


def _renamed_by_upgrade(
    *, upgrade: str, name: str, after: str | None, shown: str = "", selector: str | None = None, devices: str = ""
) -> str:
    if devices:  # a VM or node pool asking for the name
        return f"{upgrade} advertises {devices} as {after}: after the upgrade nothing is advertised as {name}"
    if selector is not None:
        return (
            f"{upgrade} advertises vGPU type {selector!r} as {after or 'nothing (the plugin panics)'}: "
            f"after the upgrade, VMs asking for {name} stop scheduling"
        )
    return f"{upgrade} advertises {shown} as {after or 'nothing'}: after the upgrade, VMs asking for {name} stop scheduling"


def _duplicate_key(*, key: str, first_line: int) -> str:
    return (
        f"{key} is also set at line {first_line} of this mapping: PyYAML and Helm use this last value "
        "(checked here), kubectl's strict decoding refuses the object"
    )


def _unknown_vgpu_type(
    *,
    selector: str,
    token: str,
    family: str,
    devices: tuple[str, ...],
    strings: list[str],
    prefix: str,
    kind: str,
    observed: str,
) -> str:
    return (
        f"{selector!r} is not a vGPU type string: the driver names {token} ({family}, {', '.join(devices)}) "
        f"{' or '.join(repr(n) for n in strings)} in mdev_type/name (prefix {prefix!r}: {kind}, {observed!r})"
    )


def _field_not_in_release(*, what: str, key: str, disk: str | None = None) -> str:
    if disk is not None:
        return f"{what} {key}: it calls a node's disk {disk}, and refuses the group"
    return f"{what} {key}, and refuses the group"


def _wrong_kata_resource_name(
    *,
    profile: str,
    alias: str,
    name: str,
    right: str = "",
    devices: tuple[str, ...] = (),
    what: str = "GPU",
    kubevirt: bool = False,
    per_model: bool = False,
    own: str = "",
    suggestions: tuple[str, ...] = (),
    unset_variable: str = "",
) -> str:
    where = f"under the Kata plugin ({profile}, {alias})"
    per_model_only = 'only with P_GPU_ALIAS=""'
    if not devices:
        listed = f"it advertises {', '.join(suggestions)}" if suggestions else "no advertised name is close to it"
        if unset_variable:
            kind = "NVSwitch" if unset_variable == "NVSWITCH_ALIAS" else "GPU model"
            listed = f"{name} is every {kind}'s name only with {unset_variable} unset (the GPU Operator's default)"
        return f"{where} no device is advertised as {name}; {listed}"
    shown = ", ".join(devices[:3]) + (f" and {len(devices) - 3} more" if len(devices) > 3 else "")
    if kubevirt and per_model:
        origin = f"{name} is the KubeVirt plugin's name of {shown}, and the Kata plugin's {per_model_only}"
    elif kubevirt:
        origin = f"{name} is the KubeVirt plugin's name of {shown}"
        if own:
            origin += f"; the Kata plugin's own name for it, {per_model_only}, is {own}"
    else:
        origin = f"{name} is the Kata plugin's per-model name of {shown}, right {per_model_only}"
    return f"{where} this {what} is {right}, not {name}: {origin}; the pod never schedules"


def _not_permitted(*, name: str, hint: str, release: str = "", rejection: str = "", where: str = "") -> str:
    said = f"; KubeVirt {release} fails it with {rejection!r} ({where})" if rejection else ""
    return f"{name} is not permitted by the permittedHostDevices given; {hint}{said}"


def _dra_selector_matches_nothing(*, driver: str, device_class: str, reasons: tuple[str, ...]) -> str:
    return (
        f"no vfio GPU DRA driver {driver} publishes (DeviceClass {device_class}) matches this selector, so the "
        f"claim is never allocated: {'; '.join(reasons)}"
    )


def _dra_host_dependent_selector(*, driver: str, device_class: str, attributes: tuple[str, ...]) -> str:
    return (
        f"the selector reads {', '.join(attributes)}, which DRA driver {driver} computes from the node "
        "(its PCI address, NUMA node, sysfs): it fits one node's GPU only; select by vendorID and deviceID"
    )


def _dra_wrong_device_class(*, name: str, right: str, driver: str, list_key: str, request: str) -> str:
    return (
        f"a VM's {list_key}[] asks for request {request}, and KubeVirt passes a GPU through only as a vfio "
        f"device: DRA driver {driver} publishes vfio GPUs under DeviceClass {right}, not {name}"
    )


def _dra_unknown_claim(*, claim: str | None, known: tuple[str, ...], where: str) -> str:
    listed = f"its entries: {', '.join(known)}" if known else "it has none"
    return f"{where}.resourceClaims has no entry named {claim}, so the VM cannot start ({listed})"


def _dra_unknown_request(*, kind: str, name: str | None, request: str, known: tuple[str, ...]) -> str:
    listed = ", ".join(known) or "none"
    return f"{kind} {name} has no request {request} (its requests: {listed}), so the VM cannot start"


def _dra_request_layout(*, api: str, key: str, wrapped: bool) -> str:
    if wrapped:
        return (
            f"{api} puts a request's deviceClassName and selectors under exactly (or firstAvailable): "
            "the API server refuses them on the request itself"
        )
    return f"{api} has no exactly: deviceClassName and selectors go on the request itself (v1, v1beta2 wrap them)"


def _dra_invalid_config(*, driver: str, what: str) -> str:
    return f"DRA driver {driver} {what}: preparing the claim fails, so the VM never starts"


def _dra_constraint_not_published(
    *, driver: str, key: str, attribute: str, requests: tuple[str, ...], publishing: tuple[str, ...]
) -> str:
    where = f"releases that publish it: {'; '.join(publishing)}" if publishing else "no release publishes it"
    return (
        f"DRA driver {driver} publishes no {attribute} on vfio devices, and Kubernetes' allocator fails every device "
        f"that lacks a {key} attribute, so request {', '.join(requests)} is never allocated ({where})"
    )


def _missing_feature_gate(*, gate: str, release: str, message: str, where: str) -> str:
    return (
        f"{message}: KubeVirt {release} rejects this VM, the KubeVirt CR does not list the {gate} feature gate "
        f"(spec.configuration.developerConfiguration.featureGates; {where})"
    )


def _container_name_in_vm(
    *, name: str, mig: bool, device_list: str, release: str, failure: str | None, where: str
) -> str:
    what = "a MIG device's name" if mig else "a name"
    said = (
        f" and fails the VMI with {failure!r} ({where})"
        if failure
        else " and fails the VMI (its message in this release is not in pciname's facts)"
    )
    instead = "for a whole GPU ask for its passthrough name (`pciname lookup DEVICE`)"
    if mig:
        instead += (
            "; a MIG slice reaches a VM only as a MIG-backed vGPU type (`<family>-<slices>-<GB>C`, listed by "
            "`pciname vgpu-types DEVICE` with its resource name), permitted under mediatedDevices"
        )
    return (
        f"{name} is {what} of NVIDIA's container device plugin (k8s-device-plugin), which gives a container "
        f"/dev/nvidia* devices, no PCI address: KubeVirt {release} admits the VM, then virt-launcher finds no "
        f"PCI_RESOURCE_/MDEV_PCI_RESOURCE_ variable for its {device_list}[] entry{said}; {instead}"
    )


def _container_name_not_advertised(*, name: str, why: str, instead: str | None, releases: str) -> str:
    then = f": ask for {instead}" if instead else ""
    return (
        f"no k8s-device-plugin release ({releases}) advertises {name} by default: {why}; a node never offers it "
        f"unless the plugin's config file names a resource so{then}"
    )


def _gfd_label_value_never_set(*, key: str, selected: str, why: str, releases: str) -> str:
    return (
        f"no GPU Feature Discovery release ({releases}) labels a node {key}={selected}: {why}; the selector matches "
        "no node GFD labels, so the pod never schedules"
    )


def _dra_prepare_crash(*, what: str) -> str:
    return f"{what}: a VM given such a GPU does not start"


#: Every code lint reports, in the order README.md lists them.
CODES: dict[str, LintCode] = {
    WRONG_RESOURCE_NAME: LintCode(
        ERROR,
        "an entry with `externalResourceProvider: true` (or a VM / node pool asking for its name) names the "
        "device otherwise than the profile's plugin",
        _wrong_resource_name,
        (RuleName.ENTRIES, RuleName.REFERENCES),
    ),
    UNKNOWN_RESOURCE_NAME: LintCode(
        ERROR,
        "a VM or node pool asks for a name nothing advertises; `expected` lists the closest real names",
        _unknown_resource_name,
        (RuleName.REFERENCES,),
    ),
    WRONG_MDEV_RESOURCE_NAME: LintCode(
        ERROR,
        "a `mediatedDevices` entry with `externalResourceProvider: true` (or a VM asking for its name) whose "
        "`resourceName` is not what the profile's plugin makes of `mdevNameSelector`",
        _wrong_mdev_resource_name,
        (RuleName.ENTRIES, RuleName.REFERENCES),
    ),
    PLUGIN_CRASH: LintCode(
        ERROR,
        "v1.0.x: a `mdevNameSelector` without a space, on which the plugin panics, so the node advertises nothing",
        _plugin_crash,
        (RuleName.ENTRIES,),
    ),
    INVALID_RESOURCE_NAME: LintCode(
        ERROR,
        "kubelet refuses the name, so its plugin (NVIDIA's or KubeVirt's) never registers",
        _name_warning,
        (RuleName.ENTRIES, RuleName.REFERENCES),
    ),
    SOCKET_PATH_TOO_LONG: LintCode(
        ERROR,
        f"the plugin's socket path for the name is over {checks.SOCKET_PATH_MAX_BYTES} bytes (KubeVirt's own "
        "plugin: `kubevirt-nvidia.com-<name>.sock`)",
        _name_warning,
        (RuleName.ENTRIES, RuleName.REFERENCES),
    ),
    NOT_ADVERTISED: LintCode(
        ERROR,
        "with `externalResourceProvider: true`, the profile's plugin advertises nothing for the selector's device",
        _not_advertised,
        (RuleName.ENTRIES,),
    ),
    MISSING_EXTERNAL_RESOURCE_PROVIDER: LintCode(
        ERROR,
        "an entry without `externalResourceProvider: true` (so KubeVirt's own plugin serves it) where NVIDIA's "
        "plugin runs too (`--nvidia-plugin yes`, or `auto` and the input shows it: a Cozystack platform, a "
        "ClusterPolicy with `sandboxWorkloads` enabled): a PCI entry under the name NVIDIA's plugin gives its "
        "device, or any `nvidia.com/` `mediatedDevices` entry (two plugins would serve one resource). Under "
        "`auto` without such evidence, a note instead",
        _missing_external_resource_provider,
        (RuleName.ENTRIES,),
        contradicts=(
            WRONG_RESOURCE_NAME,
            WRONG_MDEV_RESOURCE_NAME,
            NOT_ADVERTISED,
            PLUGIN_CRASH,
            RENAMED_BY_UPGRADE,
            RESOURCE_NAME_CONFLICT,
            INVALID_EXTERNAL_RESOURCE_PROVIDER,
        ),
    ),
    INVALID_EXTERNAL_RESOURCE_PROVIDER: LintCode(
        ERROR,
        'an `externalResourceProvider` that is not a boolean (`"true"`, `1`); the entry is checked as meant for '
        "NVIDIA's plugin",
        _invalid_external_resource_provider,
        (RuleName.ENTRIES,),
    ),
    RESOURCE_NAME_CONFLICT: LintCode(
        ERROR,
        "a PCI entry KubeVirt advertises (no `externalResourceProvider: true`) under the name NVIDIA's plugin "
        "gives another device where NVIDIA's plugin runs too (as for `missing-external-resource-provider`), or "
        "under a name a `mediatedDevices` entry permits: two plugins would register one resource",
        _resource_name_conflict,
        (RuleName.ENTRIES, RuleName.KUBEVIRT_MDEV),
    ),
    DUPLICATE_SELECTOR: LintCode(
        WARNING,
        "the same selector twice in one list; the message says when the two PCI entries give it two names "
        "(only one gets the devices)",
        _duplicate_selector,
        (RuleName.ENTRIES,),
    ),
    INVALID_SELECTOR: LintCode(
        ERROR,
        "a missing or malformed `pciVendorSelector` (or `mdevNameSelector`); with `--kubevirt` a release whose "
        "own plugin compares PCI selectors as written (v0.36.0 to v0.38.x), one with lowercase hex in an "
        "entry that plugin serves (the message names the code line)",
        _invalid_selector,
        (RuleName.ENTRIES,),
    ),
    WRONG_SELECTOR_FIELD: LintCode(
        ERROR,
        "`pciDeviceSelector` in a KubeVirt CR, or `pciVendorSelector` in a HyperConverged CR",
        _wrong_selector_field,
        (RuleName.ENTRIES,),
    ),
    MISPLACED_PERMITTED_HOST_DEVICES: LintCode(
        ERROR,
        "a KubeVirt CR's `permittedHostDevices` directly under `spec` (KubeVirt reads "
        "`spec.configuration.permittedHostDevices`), or a HyperConverged CR's under `spec.configuration` (it "
        "reads `spec.permittedHostDevices`)",
        _misplaced_permitted_host_devices,
        (RuleName.ENTRIES,),
    ),
    RENAMED_BY_UPGRADE: LintCode(
        WARNING,
        "right today, but the `--upgrade-to` profile advertises another name",
        _renamed_by_upgrade,
        (RuleName.ENTRIES, RuleName.REFERENCES),
    ),
    NOT_PERMITTED: LintCode(
        ERROR,
        "a VM or node pool asks for an `nvidia.com/` name that no `permittedHostDevices` entry of the input "
        "permits (only when the input has such a block, e.g. the KubeVirt CR beside the VMs); `expected` lists the "
        "closest permitted names that work (every one when there are at most 8); KubeVirt's own rejection is quoted for "
        "the `--kubevirt` release (the VMI admitter's in v0.38 to v0.44, virt-controller's pod rendering from v0.45)",
        _not_permitted,
        (RuleName.REFERENCES,),
    ),
    MISSING_FEATURE_GATE: LintCode(
        ERROR,
        "a VM asks for GPUs (`gpus[]`: the `GPU` gate) or host devices (`hostDevices[]`: `HostDevices`) and the "
        "input's KubeVirt CR does not list the gate the `--kubevirt` release (default: the newest) requires: the "
        "VMI admitter rejects the VM with the message quoted; `expected` is the gate. `GPU` is GA from v1.4.0, "
        "`HostDevices` is required in every release pciname knows. Without a KubeVirt CR in the input, a note says "
        "the gates were not checked (a HyperConverged CR's: HCO v1.4.0 and later set both)",
        _missing_feature_gate,
        (RuleName.FEATURE_GATES,),
    ),
    CONTAINER_NAME_IN_VM: LintCode(
        ERROR,
        "a VM's `gpus[]` or `hostDevices[]` (or a Cozystack node pool's `gpus[]`) asks for a name of NVIDIA's "
        "container device plugin (`nvidia.com/gpu`, `nvidia.com/gpu.shared`, `nvidia.com/mig-*`): it hands out "
        "`/dev/nvidia*` devices, no PCI address, so virt-launcher fails the VMI (`gpus[]`: with the message "
        "quoted, per `--kubevirt` release); says what works instead (the passthrough name, a MIG-backed vGPU type)",
        _container_name_in_vm,
        (RuleName.VM_CONTAINER_NAMES,),
    ),
    CONTAINER_NAME_NOT_ADVERTISED: LintCode(
        WARNING,
        "a pod asks for a `nvidia.com/mig-<profile>` NVIDIA's container device plugin (k8s-device-plugin, every "
        "release from v0.15.0) never advertises by default: a `+` (it writes `.`: `expected` is its name) or a "
        "profile with C != G (`1c.2g.10gb`: skipped under MIG strategy `mixed`); only a config file naming it "
        "gives it",
        _container_name_not_advertised,
        (RuleName.CONTAINER_PODS,),
    ),
    GFD_LABEL_VALUE_NEVER_SET: LintCode(
        ERROR,
        "a `nodeSelector` or a node affinity's `In` selects a value of a label GPU Feature Discovery sets per "
        "resource (`nvidia.com/gpu.family`, `.sharing-strategy`, `.count`, ...) that no k8s-device-plugin release "
        "writes (`ada`: it writes `ada-lovelace`), or a label of a renamed `nvidia.com/gpu.shared` (GFD labels "
        "it under `nvidia.com/gpu`); `expected` lists the values or the label it writes where they are few",
        _gfd_label_value_never_set,
        (RuleName.GFD_SELECTORS,),
    ),
    UNKNOWN_VGPU_TYPE: LintCode(
        ERROR,
        "a `mdevNameSelector` naming a catalogue vGPU type otherwise than the driver shows it (`A10-24Q`, "
        "`GRID A10-24Q`: the driver shows `NVIDIA A10-24Q`); `expected` lists the real strings. Only where the "
        "catalogue and certain prefix evidence tell (`pciname vgpu-types`)",
        _unknown_vgpu_type,
        (RuleName.ENTRIES,),
    ),
    FIELD_NOT_IN_RELEASE: LintCode(
        ERROR,
        "a node group or `KubernetesNodes` pool has a field the `--cozystack` release (default: the newest) does "
        "not have, so it refuses the group: `ephemeralStorage` from v1.4.0 (`expected`: `diskSize`, the "
        "release's name for it), `diskSize` before",
        _field_not_in_release,
        (RuleName.NODE_GROUP_FIELDS,),
    ),
    DUPLICATE_KEY: LintCode(
        ERROR,
        "a key written twice in one mapping: PyYAML and Helm use the last value (the one the other rules "
        "check), kubectl's strict decoding refuses the object",
        _duplicate_key,
        (RuleName.DUPLICATE_KEYS,),
    ),
    WRONG_KATA_RESOURCE_NAME: LintCode(
        ERROR,
        "a pod whose `runtimeClassName` starts with `kata` asks (`resources.limits` / `requests`) for an "
        "`nvidia.com/` name the Kata sandbox device plugin does not advertise: under the `--profile` when it is a "
        "Kata one, else the newest `gpu-operator@vX.Y.Z+kata` (`P_GPU_ALIAS` unset: every GPU is "
        '`nvidia.com/pgpu`; per-model names only with `P_GPU_ALIAS=""`); `expected` is the name it advertises',
        _wrong_kata_resource_name,
        (RuleName.KATA_PODS,),
    ),
    DRA_SELECTOR_MATCHES_NOTHING: LintCode(
        ERROR,
        "a ResourceClaim(Template) request for the DRA driver's vfio DeviceClass (`vfio.gpu.nvidia.com`) whose CEL "
        "selector no vfio GPU the `--dra-driver` release publishes can match: an NVML product name (`NVIDIA A10`; "
        "the driver publishes pci.ids names, `GA102GL [A10]`), a `GPU-` uuid, a device id in another case or "
        "without `0x`, an attribute it does not publish for vfio devices; `expected` is pciname's selector for "
        "the GPU it names",
        _dra_selector_matches_nothing,
        (RuleName.DRA_CLAIMS,),
    ),
    DRA_HOST_DEPENDENT_SELECTOR: LintCode(
        WARNING,
        "such a selector reads a host-dependent attribute (`uuid`, `pciBusID`, `pcieRoot`, `numa`, "
        "`iommuFDEnabled`, a capacity): it matches one node's GPU only",
        _dra_host_dependent_selector,
        (RuleName.DRA_CLAIMS,),
    ),
    DRA_WRONG_DEVICE_CLASS: LintCode(
        ERROR,
        "a request a VM's `gpus[]` / `hostDevices[]` asks for (`claimName`/`requestName`) is for another "
        "DeviceClass than the driver's vfio one (`gpu.nvidia.com`, say)",
        _dra_wrong_device_class,
        (RuleName.DRA_CLAIMS,),
    ),
    DRA_UNKNOWN_CLAIM: LintCode(
        ERROR,
        "a VM's `gpus[]` / `hostDevices[]` `claimName` is no entry of its `spec.template.spec.resourceClaims`",
        _dra_unknown_claim,
        (RuleName.DRA_CLAIMS,),
    ),
    DRA_UNKNOWN_REQUEST: LintCode(
        ERROR,
        "its `requestName` is no request of the ResourceClaimTemplate / ResourceClaim it names (when that is in "
        "the input)",
        _dra_unknown_request,
        (RuleName.DRA_CLAIMS,),
    ),
    DRA_REQUEST_LAYOUT: LintCode(
        ERROR,
        "a request in another version's layout: `deviceClassName` on the request in `resource.k8s.io/v1` or "
        "`v1beta2` (which wrap it in `exactly`), `exactly` in `v1beta1`",
        _dra_request_layout,
        (RuleName.DRA_CLAIMS,),
    ),
    DRA_INVALID_CONFIG: LintCode(
        ERROR,
        "an opaque config for the DRA driver that its release refuses when it prepares the claim: a "
        "`VfioDeviceConfig` field it does not have (it decodes strictly), an `iommu.backendPolicy` it does not "
        "take, an `enableAPIDevice` that is no boolean, or another config kind for a vfio request",
        _dra_invalid_config,
        (RuleName.DRA_CLAIMS,),
    ),
    DRA_CONSTRAINT_NOT_PUBLISHED: LintCode(
        ERROR,
        "a claim's `constraints` entry (`matchAttribute`, `distinctAttribute`) names an attribute the `--dra-driver` "
        "release does not publish for vfio devices, over a request only vfio devices can satisfy: Kubernetes' "
        "allocator fails a device lacking the attribute, so the claim is never allocated (`gpu.nvidia.com/partition2` "
        "under v0.4.x); the finding names the releases that publish it",
        _dra_constraint_not_published,
        (RuleName.DRA_CLAIMS,),
    ),
    DRA_PREPARE_CRASH: LintCode(
        WARNING,
        "a request for the vfio DeviceClass under a release whose kubelet plugin panics preparing it for some GPUs "
        "(v0.4.0: a GPU without SR-IOV, no `sriov_totalvfs`, bound to the nvidia driver; fixed in v0.4.1)",
        _dra_prepare_crash,
        (RuleName.DRA_CLAIMS,),
    ),
    **{
        code: LintCode(
            severity,
            f"with `--hami RELEASE`: {meaning} (`pciname.hami.pods`, from HAMi's chart and `pkg/device/nvidia`)",
            _hami,
            (RuleName.HAMI_PODS,),
        )
        for code, severity, meaning in (
            (
                "hami-unknown-name",
                ERROR,
                "a pod asks for an `nvidia.com/gpu...` name the release's chart does not register",
            ),
            (HAMI_CORES_RANGE, ERROR, "`nvidia.com/gpucores` is not a whole per cent from 0 to 100"),
            (HAMI_MEM_AND_PERCENTAGE, WARNING, "`nvidia.com/gpumem` and `nvidia.com/gpumem-percentage` both given"),
            (
                "hami-without-gpu",
                ERROR,
                "`gpumem`, `gpumem-percentage` or `gpucores` without `nvidia.com/gpu`, which HAMi reads them only with",
            ),
            (
                "hami-whole-memory",
                WARNING,
                "`nvidia.com/gpu` without `gpumem` or `gpumem-percentage`: the container "
                "takes every GPU's whole memory (the chart's `defaultMemory` 0)",
            ),
            (HAMI_IN_VM, ERROR, "a KubeVirt VM asks for a HAMi name: HAMi serves pods, not VMs"),
        )
    },
}


def contradicting() -> frozenset[frozenset[str]]:
    """Every pair of codes no entry gets both of (each code's ``contradicts``, both ways)."""
    return frozenset(frozenset((code, other)) for code, c in CODES.items() for other in c.contradicts)


# -- what is made from the registry -----------------------------------------------


def markdown_table(indent: str = "  ", rule: RuleName | None = None) -> str:
    """The README's table of lint codes (indented as its list item is); with
    ``rule``, of the codes that rule reports first (the DRA section's table)."""
    rows = ["| code | severity | when |", "| --- | --- | --- |"]
    rows += [f"| `{code}` | {c.severity} | {c.meaning} |" for code, c in CODES.items() if rule in (None, c.rules[0])]
    return "".join(f"{indent}{row}\n" for row in rows)


def rst_list() -> str:
    """The code list of :mod:`pciname.lint.linter`'s docstring."""
    out = []
    for code, c in CODES.items():
        meaning = c.meaning.replace("`", "``")
        out.append(
            f"``{code}`` ({c.severity})\n"
            + textwrap.indent(textwrap.fill(meaning, 76, break_on_hyphens=False), "    ")
            + "\n"
        )
    return "".join(out)


def proto_comment() -> str:
    """The ``Finding.code`` comment of the ``.proto``."""
    text = "Stable code: " + ", ".join(CODES) + " (pciname.lint.linter.CODES)."
    return "".join(f"  // {line}\n" for line in textwrap.wrap(text, 76, break_on_hyphens=False))
