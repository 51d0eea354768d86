"""Audit a cluster's GPU resource names and list what tenant node pools may
ask for, from the KubeVirt CR and the Nodes as plain dicts.

* :func:`infer_profiles`, :func:`choose_profile`: which plugin releases are
  consistent with the names the nodes advertise (``--profile auto``);
* :func:`audit`: the CR's permitted names against what the nodes advertise
  and what the profile names;
* :func:`gpu_options`: every permitted name with its GPU model and where it
  is allocatable, as Cozystack's dashboard offers it.

Pure: objects in as the API server returns them, plain data out, so a gRPC
servicer (or a test) can call them with objects it got anywhere; reading
them from a live cluster is :mod:`pciname.cluster.kube`.

The work is linear in the objects (each entry, name and node is looked at a
bounded number of times; :data:`pciname.kubevirt.shapes.MAX_PERMITTED_ENTRIES`
bounds the entries) and each function takes a ``check``, called as it goes
(before each entry, each name): a deadline or a cancellation raises there.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any

from pciname.errors import PcinameError
from pciname.host.doctor.fleet import ADVERTISED_BY, fleet
from pciname.kubevirt.objects import KubeObject, advertised, management, node_resources, object_ref, permitted_entries
from pciname.kubevirt.resources import MDEV, PCI, is_nvidia, resource_kind
from pciname.naming.profiles import DEFAULT_PROFILE
from pciname.pciids.ids import NVIDIA_VENDOR_ID

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: The profile that means "infer it from the names the nodes advertise".
AUTO = "auto"

# Audit finding codes (besides the lint codes of the CR's entries).
PERMITTED_NOT_ADVERTISED = "permitted-not-advertised"
ADVERTISED_NOT_PERMITTED = "advertised-not-permitted"

#: What the functions call as they go: it raises to stop the work (a
#: deadline passed, the caller went away).
Check = Callable[[], None]


def _nothing() -> None:
    pass


def is_auto(profile: object) -> bool:
    """Whether ``profile`` is :data:`AUTO` (any case, surrounding blanks)."""
    return isinstance(profile, str) and profile.strip().lower() == AUTO


def _resolver(resolver: ResolverLike | None) -> ResolverLike:
    from pciname.resolution.resolver import resolver_or_default  # the engine loads only when a name is needed

    return resolver_or_default(resolver)


# -- which plugin release is running ------------------------------------------


def infer_profiles(
    names: Iterable[str], *, resolver: ResolverLike | None = None, check: Check | None = None
) -> dict[str, Any]:
    """Which plugin releases are consistent with the resource names nodes
    advertise: a release is consistent when it would give every advertised
    pci name to some device (vGPU and container resources say nothing about
    the release and are ignored).

    Returns ``{"names": [...], "consistent": [plugin releases], "gpu_operator":
    [GPU Operator releases deploying one of them], "unexplained": {release:
    [names it cannot produce]}, "unavailable": [releases whose pci.ids is not
    installed], "chosen": newest consistent profile or None}``."""
    from pciname.naming.profiles import load_registry

    resolver = _resolver(resolver)
    check = check or _nothing
    pci = sorted({n for n in names if resource_kind(n) == PCI})
    registry = load_registry()
    consistent: list[str] = []
    unavailable: list[str] = []
    unexplained: dict[str, list[str]] = {}

    def explained(name: str, profile: str) -> bool:
        check()
        return bool(resolver.reverse(name, profile))

    for profile in registry.plugin_releases():
        try:
            missing = [n for n in pci if not explained(n, profile.name)]
        except PcinameError:
            unavailable.append(profile.name)
            continue
        if missing:
            unexplained[profile.name] = missing
        else:
            consistent.append(profile.name)
    releases = {name.partition("@")[2] for name in consistent}
    operators = [p.name for p in registry.operator_releases() if p.plugin_release in releases]
    chosen = consistent[-1] if pci and consistent else None
    return {
        "names": pci,
        "consistent": consistent if pci else [],
        "gpu_operator": operators if pci else [],
        "unexplained": unexplained,
        "unavailable": unavailable,
        "chosen": chosen,
    }


def choose_profile(
    profile: ProfileLike | None,
    nodes: Iterable[KubeObject],
    *,
    resolver: ResolverLike | None = None,
    check: Check | None = None,
) -> tuple[ProfileLike, str, dict[str, Any] | None]:
    """(profile, how it was chosen, inference): ``auto`` infers it from the
    names the nodes advertise (the newest consistent plugin release), falling
    back to the default profile when nothing can be inferred."""
    if profile is None:
        profile = DEFAULT_PROFILE
    if not is_auto(profile):
        return profile, "given", None
    inference = infer_profiles(advertised(nodes), resolver=resolver, check=check)
    if inference["chosen"]:
        return inference["chosen"], "inferred", inference
    return DEFAULT_PROFILE, "default (nothing to infer from)", inference


# -- audit ----------------------------------------------------------------------


def audit(
    kubevirt: KubeObject | None,
    nodes: list[KubeObject],
    profile: ProfileLike = DEFAULT_PROFILE,
    *,
    resolver: ResolverLike | None = None,
    check: Check | None = None,
    doctor_events: list[KubeObject] | None = None,
) -> dict[str, Any]:
    """Compare the KubeVirt CR's permitted names with what the nodes advertise
    and with the profile (``auto``: inferred from the nodes).

    Findings (``code``, ``resource_name``, ``message``, ``expected`` and, for
    the CR's entries, ``path``): ``permitted-not-advertised``,
    ``advertised-not-permitted`` and the lint codes of the CR's entries
    (``wrong-resource-name``, ``wrong-mdev-resource-name``,
    ``missing-external-resource-provider``, ``invalid-resource-name``, ...),
    and the fleet's (``fleet``: a line per node the GPU Operator labels,
    :func:`pciname.host.doctor.fleet.fleet`, with the Events the doctor
    posted on them, ``doctor_events``): ``preinstalled-label``,
    ``variant-label-mismatch`` and the doctor's codes."""
    resolver = _resolver(resolver)
    check = check or _nothing
    on_nodes = advertised(nodes)
    chosen, how, inference = choose_profile(profile, nodes, resolver=resolver, check=check)
    if inference is None:
        inference = infer_profiles(on_nodes, resolver=resolver, check=check)
    canonical = resolver.view(chosen).profile.name
    entries = permitted_entries(kubevirt)
    ref = object_ref(kubevirt) or "(no KubeVirt CR)"
    findings = _lint_findings(kubevirt, ref, chosen, resolver, check, nodes) if kubevirt is not None else []
    permitted_names = {e["resource_name"] for e in entries if e["resource_name"]}
    permitted = _permitted_rows(entries, on_nodes, chosen, resolver, check)
    findings += _permitted_not_advertised(permitted_names, on_nodes)
    adv_rows, not_permitted = _advertised_rows(on_nodes, permitted_names, ref, check)
    lines = fleet(nodes, advertised=_by_variant(on_nodes), events=doctor_events or ())
    labelled = [
        {**_finding(f.diagnosis.code, line.node, f"node {line.node}: {f.diagnosis.message}"), "resource_name": None}
        for line in lines
        for f in line.findings
    ]
    return {
        "kubevirt": object_ref(kubevirt),
        "profile": canonical,
        "profile_source": how,
        "inference": inference,
        "management": management(kubevirt),
        "permitted": permitted,
        "advertised": adv_rows,
        "fleet": [line.to_dict() for line in lines],
        "findings": findings + not_permitted + labelled,
    }


def _by_variant(on_nodes: dict[str, dict[str, int]]) -> dict[str, dict[str, list[str]]]:
    """Node -> variant -> the ``nvidia.com/`` names it advertises that the variant's device plugin does."""
    out: dict[str, dict[str, list[str]]] = {}
    for name in sorted(on_nodes):
        variant = ADVERTISED_BY.get(resource_kind(name))
        if variant is not None:
            for node in on_nodes[name]:
                out.setdefault(node, {}).setdefault(variant, []).append(name)
    return out


def _finding(code: str, name: str, message: str) -> dict[str, Any]:
    """A finding of the nodes against the CR (no path in it)."""
    return {"code": code, "resource_name": name, "path": None, "value": name, "expected": None, "message": message}


def _lint_findings(
    kubevirt: KubeObject, ref: str, profile: ProfileLike, resolver: ResolverLike, check: Check, nodes: list[KubeObject]
) -> list[dict[str, Any]]:
    """``pciname lint``'s findings on the CR's entries, as audit findings;
    NVIDIA's plugin runs beside KubeVirt's where the GPU Operator labels a
    node for its sandbox device plugin (:func:`pciname.lint.plugin.on_nodes`)."""
    from pciname.lint.linter import lint_data
    from pciname.lint.plugin import on_nodes

    return [
        {
            "code": f.code,
            "resource_name": f.value if isinstance(f.value, str) and is_nvidia(f.value) else None,
            "path": f.path,
            "value": f.value,
            "expected": f.expected,
            "message": f.message,
        }
        for f in lint_data(kubevirt, ref, profile, resolver=resolver, check=check, nvidia_plugin=on_nodes(nodes))
    ]


def _permitted_rows(
    entries: list[dict[str, Any]],
    on_nodes: dict[str, dict[str, int]],
    profile: ProfileLike,
    resolver: ResolverLike,
    check: Check,
) -> list[dict[str, Any]]:
    """The CR's entries, each with the name the profile expects and the nodes advertising its name."""
    permitted = []
    where: dict[str, dict[str, int]] = {}  # name -> its nodes, sorted once (each row its own copy: no YAML aliases)
    for entry in entries:
        check()
        name = entry["resource_name"]
        row = dict(entry)
        row["expected"] = _expected(entry, profile, resolver)
        if name and name not in where:
            where[name] = dict(sorted(on_nodes.get(name, {}).items()))
        row["nodes"] = dict(where[name]) if name else {}
        permitted.append(row)
    return permitted


def _permitted_not_advertised(permitted_names: set[str], on_nodes: dict[str, dict[str, int]]) -> list[dict[str, Any]]:
    return [
        _finding(
            PERMITTED_NOT_ADVERTISED,
            name,
            f"{name} is permitted but no node advertises it: VMs asking for it stay Pending",
        )
        for name in sorted(permitted_names)
        if is_nvidia(name) and name not in on_nodes
    ]


def _advertised_rows(
    on_nodes: dict[str, dict[str, int]], permitted_names: set[str], ref: str, check: Check
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The names the nodes advertise (with their nodes and whether the CR
    permits them), and the findings of the devices among them it does not permit."""
    rows = []
    findings = []
    for name in sorted(on_nodes):
        check()
        kind = resource_kind(name)
        is_permitted = name in permitted_names
        rows.append(
            {
                "resource_name": name,
                "kind": kind,
                "permitted": is_permitted,
                "nodes": dict(sorted(on_nodes[name].items())),
            }
        )
        if kind in (PCI, MDEV) and not is_permitted:
            nodes_list = ", ".join(sorted(on_nodes[name]))
            findings.append(
                _finding(
                    ADVERTISED_NOT_PERMITTED,
                    name,
                    f"{name} is advertised on {nodes_list} but not permitted in {ref}: "
                    "KubeVirt rejects VMs asking for it",
                )
            )
    return rows, findings


def _expected(entry: dict[str, Any], profile: ProfileLike, resolver: ResolverLike) -> str | None:
    selector = entry.get("selector")
    if not isinstance(selector, str):
        return None
    if entry["kind"] == MDEV:  # the release's own vGPU rule (None: the plugin panics on it)
        from pciname.naming.mdev import mdev_resource

        return mdev_resource(selector, resolver.view(profile).profile.mdev_name)
    try:
        return resolver.resolve(selector, profile).resource_name
    except PcinameError:
        return None


# -- gpu options ----------------------------------------------------------------


def gpu_options(
    kubevirt: KubeObject | None,
    nodes: list[KubeObject],
    profile: ProfileLike = DEFAULT_PROFILE,
    *,
    resolver: ResolverLike | None = None,
    check: Check | None = None,
) -> list[dict[str, Any]]:
    """What a Cozystack tenant node pool may ask for, as its dashboard offers
    it: every permitted resource name (in CR order, once) with the GPU model
    (``NVIDIA GA102GL [A10]``), the device ids or vGPU types behind it, and how
    many are allocatable on which nodes."""
    resolver = _resolver(resolver)
    check = check or _nothing
    chosen, _, _ = choose_profile(profile, nodes, resolver=resolver, check=check)
    per_node = node_resources(nodes)
    options: dict[str, dict[str, Any]] = {}
    # What each option's lists hold already, as sets: a name with thousands
    # of selectors must not cost a scan of its list per entry.
    listed: dict[str, tuple[set[str], set[str], set[str]]] = {}
    for entry in permitted_entries(kubevirt):
        check()
        name = entry["resource_name"]
        if not name:
            continue
        option = options.setdefault(
            name,
            {
                "resource_name": name,
                "kind": entry["kind"],
                "selectors": [],
                "devices": [],
                "models": [],
                "allocatable": 0,
                "nodes": [],
            },
        )
        selectors, devices, models = listed.setdefault(name, (set(), set(), set()))
        selector = entry["selector"]
        if selector and selector not in selectors:
            selectors.add(selector)
            option["selectors"].append(selector)
            if entry["kind"] == PCI:
                device, model = _model(selector, chosen, resolver)
            else:
                device, model = None, selector  # a vGPU type's name is its model
            if device and device not in devices:
                devices.add(device)
                option["devices"].append(device)
            if model and model not in models:
                models.add(model)
                option["models"].append(model)
    for name, option in options.items():
        check()
        rows = [
            {"name": node, "allocatable": counts["allocatable"]}
            for node, counts in sorted(per_node.get(name, {}).items())
            if counts["allocatable"] > 0
        ]
        option["nodes"] = rows
        option["allocatable"] = sum(r["allocatable"] for r in rows)
    return list(options.values())


def _model(selector: str, profile: ProfileLike, resolver: ResolverLike) -> tuple[str | None, str | None]:
    try:
        r = resolver.resolve(selector, profile)
    except PcinameError:
        return None, None
    device_name = r.device_name
    if device_name is None:
        try:
            device_name = resolver.resolve(selector, DEFAULT_PROFILE).device_name
        except PcinameError:
            device_name = None
    vendor, _, device = r.device.partition(":")
    if vendor == NVIDIA_VENDOR_ID:
        vendor_label = "NVIDIA"
    else:
        vendor_label = r.vendor_name or vendor
    return r.device, f"{vendor_label} {device_name or 'device ' + device}"
