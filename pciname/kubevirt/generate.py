"""Configuration snippets that carry resource names (docs/naming.md, section 7).

Every function here is pure: devices and a profile in, plain data out (dicts,
lists, strings), so the CLI, the gRPC service and other generators can call
them alike.

* :func:`permitted_host_devices`: ``permittedHostDevices`` for the KubeVirt CR
  (``pciHostDevices`` and ``mediatedDevices``, ``externalResourceProvider:
  true``); :func:`render` puts it where it goes (KubeVirt CR, Cozystack
  platform values, a JSON merge patch).
* :func:`node_pool`: a Cozystack tenant Kubernetes node group with its
  ``gpus`` (complete, as the values schema requires, or ``gpus`` alone), as
  values or as a merge patch of the ``Kubernetes`` object.
* :func:`vm_gpus`: ``spec.domain.devices.gpus[]`` of a KubeVirt VM.
* :func:`mdev_names`: the resource a vGPU type is advertised as.

Names that will not work are left out (with reasons) unless
``include_broken``: kubelet refuses the name (``invalid-resource-name``), the
plugin socket path is too long (``socket-path-too-long``), the profile
advertises nothing for the device (``not-advertised``), or, for
``permitted_host_devices``, two of the requested devices share one name
(``name-collision``: on a node with both, the two plugins share one socket
and only one is advertised). A collision with a device that was *not*
requested, and a device advertised under its bare id (``unnamed-device``),
are kept and reported as notes.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pciname.errors import PcinameError
from pciname.kubevirt.resources import resource_warnings
from pciname.naming import checks
from pciname.naming.checks import NameWarning
from pciname.naming.mdev import mdev_resource, mdev_warnings
from pciname.naming.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:
    from pciname.cozystack.releases import NodesApp, Release
    from pciname.resolution.resolver import ProfileLike, ResolverLike
    from pciname.resolution.results import Resolution

#: Where :func:`render` puts a permittedHostDevices block; the first is the default.
FORMATS = ("kubevirt", "cozystack", "patch")
DEFAULT_FORMAT = FORMATS[0]

#: GPUs one node may ask for: the most a ``DEVICE=COUNT`` request may count,
#: and the most GPU entries one node-pool group (or one VM) may get, counts
#: added up. Far above any real node (8 to 16 GPUs, a few hundred vGPUs);
#: far below what would exhaust memory.
MAX_GPUS = 1024


@dataclass(frozen=True, slots=True)
class Skipped:
    """A requested device (or vGPU type) with the reasons its name is a problem."""

    item: str  # "10de:24fa", an mdev type "GRID T4-1Q", or a resource name
    kind: str  # "pci", "mdev" or "resource"
    resource_name: str | None
    reasons: tuple[NameWarning, ...]

    @property
    def codes(self) -> tuple[str, ...]:
        return tuple(w.code for w in self.reasons)

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "kind": self.kind,
            "resource_name": self.resource_name,
            "reasons": [w.to_dict() for w in self.reasons],
        }

    def lines(self) -> list[str]:
        """``ITEM: code: message`` lines (what the CLI prints on stderr)."""
        return [f"{self.item}: {w.code}: {w.message}" for w in self.reasons]


@dataclass(frozen=True, slots=True)
class Snippet:
    """Generated configuration (``data``), what was left out and why, and
    notes about entries that were kept but deserve a look."""

    data: dict[str, Any]
    profile: str
    left_out: tuple[Skipped, ...] = field(default=())
    notes: tuple[Skipped, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        return {
            "profile": self.profile,
            "data": self.data,
            "left_out": [s.to_dict() for s in self.left_out],
            "notes": [s.to_dict() for s in self.notes],
        }


# -- inputs -------------------------------------------------------------------


def parse_request(text: object) -> tuple[str, int]:
    """``DEVICE`` or ``DEVICE=COUNT`` -> (DEVICE, COUNT); COUNT defaults to 1.
    Anything else (not a string, no DEVICE, a bad COUNT) is a PcinameError."""
    if not isinstance(text, str):
        raise PcinameError(f"malformed request {text!r}: expected DEVICE or DEVICE=COUNT, e.g. 10de:2236=2")
    item, sep, count = text.strip().rpartition("=")
    if not sep:
        item = count
    item = item.strip()
    if not item:
        raise PcinameError(f"malformed request {text!r}: expected DEVICE or DEVICE=COUNT, e.g. 10de:2236=2")
    if not sep:
        return item, 1
    digits = count.strip()
    if not (digits.isascii() and digits.isdigit()) or not digits.strip("0"):
        raise PcinameError(f"malformed count in {text!r}: expected a whole number of at least 1")
    digits = digits.lstrip("0")
    if len(digits) > len(str(MAX_GPUS)) or int(digits) > MAX_GPUS:
        raise PcinameError(f"count in {text!r} is more than the {MAX_GPUS} GPUs a node may have")
    return item, int(digits)


def pci_selector(device: str) -> str:
    """``10de:2236`` -> ``10DE:2236`` (KubeVirt's usual spelling of a pciVendorSelector)."""
    from pciname.api import parse_device

    parsed = parse_device(device)
    return f"{parsed.vendor}:{parsed.device}".upper()


def _resolver(resolver: ResolverLike | None) -> ResolverLike:
    from pciname.resolution.resolver import resolver_or_default  # the engine loads only when a name is needed

    return resolver_or_default(resolver)


def _is_resource_name(item: str) -> bool:
    """A node-pool or VM request names a resource (``nvidia.com/...``), not a device."""
    return "/" in item


# -- permittedHostDevices -----------------------------------------------------


def permitted_host_devices(
    devices: Iterable[str],
    mdevs: Iterable[str] = (),
    profile: ProfileLike = DEFAULT_PROFILE,
    include_broken: bool = False,
    *,
    resolver: ResolverLike | None = None,
) -> Snippet:
    """The KubeVirt ``permittedHostDevices`` block for these PCI devices and
    vGPU (mdev) types, as the given profile names them.

    Returns a :class:`Snippet` whose ``data`` is ``{"pciHostDevices": [...],
    "mediatedDevices": [...]}`` (a list only when it has entries), in input
    order, duplicates dropped. Raises InvalidDeviceError for a malformed
    device id, UnknownProfileError / SnapshotMissingError for the profile,
    PcinameError for a Kata profile (:func:`refuse_kata`).
    """
    resolver = _resolver(resolver)
    refuse_kata(profile, "permitted-host-devices", resolver)
    device_list = list(dict.fromkeys(pci_selector(d) for d in devices))
    resolutions = resolver.resolve_many(device_list, profile)
    canonical = resolutions[0].profile if resolutions else _canonical(profile, resolver)
    pci_entries, left_out, notes = _pci_entries(device_list, resolutions, include_broken)
    mdev_entries = []
    for info in mdev_names(dict.fromkeys(mdevs), profile, resolver=resolver):
        reasons = tuple(NameWarning(**w) for w in info["warnings"])
        if reasons:
            left_out.append(Skipped(info["mdev_type"], "mdev", info["resource_name"], reasons))
            if not include_broken or info["resource_name"] is None:
                continue
        mdev_entries.append(
            {
                "mdevNameSelector": info["mdev_type"],
                "resourceName": info["resource_name"],
                "externalResourceProvider": True,
            }
        )

    data: dict[str, Any] = {}
    if pci_entries:
        data["pciHostDevices"] = pci_entries
    if mdev_entries:
        data["mediatedDevices"] = mdev_entries
    return Snippet(data, canonical, tuple(left_out), tuple(notes))


def _pci_entries(
    selectors: Sequence[str], resolutions: Sequence[Resolution], include_broken: bool
) -> tuple[list[dict[str, Any]], list[Skipped], list[Skipped]]:
    """The ``pciHostDevices`` entries of the resolved selectors, in order,
    with what was left out (or, ``include_broken``, kept but broken) and the
    notes (a bare-id name, a collision with a device not requested)."""
    by_resource: dict[str | None, list[str]] = {}
    for r in resolutions:
        if r.resource_name is not None:
            by_resource.setdefault(r.resource_name, []).append(r.device)

    pci_entries: list[dict[str, Any]] = []
    left_out: list[Skipped] = []
    notes: list[Skipped] = []
    for selector, r in zip(selectors, resolutions):
        broken = [w for w in r.warnings if w.code in checks.BLOCKING_CODES]
        noted = [w for w in r.warnings if w.code == checks.UNNAMED_DEVICE]
        requested_twins = [d for d in by_resource.get(r.resource_name, ()) if d != r.device]
        if requested_twins:
            broken.append(
                NameWarning(
                    checks.NAME_COLLISION,
                    f"{r.resource_name} is also the name of {', '.join(requested_twins)}, requested too; "
                    "on a node with both, the plugins share one socket and only one of them is advertised",
                )
            )
        else:
            noted.extend(w for w in r.warnings if w.code == checks.NAME_COLLISION)
        if broken:
            left_out.append(Skipped(r.device, "pci", r.resource_name, tuple(broken)))
            if not include_broken or r.resource_name is None:
                continue
        if noted:
            notes.append(Skipped(r.device, "pci", r.resource_name, tuple(noted)))
        pci_entries.append(
            {"pciVendorSelector": selector, "resourceName": r.resource_name, "externalResourceProvider": True}
        )
    return pci_entries, left_out, notes


def render(
    permitted: dict[str, Any], fmt: str = DEFAULT_FORMAT, *, replace_defaults: bool | None = None
) -> dict[str, Any]:
    """Put a ``permittedHostDevices`` block where ``fmt`` wants it:

    * ``kubevirt``: ``{"permittedHostDevices": ...}``, to go under the
      KubeVirt CR's ``spec.configuration``;
    * ``cozystack``: ``{"gpu": {"permittedHostDevices": ...}}`` for
      Cozystack's platform values (with ``gpu.replaceDefaults`` when
      ``replace_defaults`` is not None; what Cozystack does with it, and
      its default table, is :mod:`pciname.cozystack.defaults`);
    * ``patch``: the JSON merge patch ``{"spec": {"configuration":
      {"permittedHostDevices": ...}}}`` for ``kubectl patch kubevirt
      --type merge``.
    """
    if fmt == "kubevirt":
        return {"permittedHostDevices": permitted}
    if fmt == "cozystack":
        gpu: dict[str, Any] = {}
        if replace_defaults is not None:
            gpu["replaceDefaults"] = bool(replace_defaults)
        gpu["permittedHostDevices"] = permitted
        return {"gpu": gpu}
    if fmt == "patch":
        return {"spec": {"configuration": {"permittedHostDevices": permitted}}}
    raise PcinameError(f"unknown format {fmt!r}: use one of {', '.join(FORMATS)}")


def refuse_kata(profile: ProfileLike, what: str, resolver: ResolverLike | None = None) -> None:
    """PcinameError when ``profile`` is the Kata sandbox device plugin's:
    what ``what`` writes is KubeVirt's (or Cozystack's, or vGPU), which that
    plugin does not serve."""
    resolved = _resolver(resolver).view(profile).profile
    if resolved.is_kata:
        raise PcinameError(
            f"{what}: {resolved.name} is the Kata sandbox device plugin's, which advertises GPUs to Kata pods, "
            "not to KubeVirt, and has no vGPU: use a KubeVirt profile here (gpu-operator@vX.Y.Z, "
            "kubevirt-gpu-device-plugin@vX.Y.Z), or `pciname kata-pod` for a Kata pod's limits"
        )


def _canonical(profile: ProfileLike, resolver: ResolverLike) -> str:
    name: str = resolver.view(profile).profile.name
    return name


# -- vGPU types ---------------------------------------------------------------


def mdev_rule(profile: ProfileLike, resolver: ResolverLike | None = None) -> str:
    """The rule the profile's plugin names vGPU types by (``second-field``
    in v1.0.x, ``whitespace-runs`` after: :mod:`pciname.naming.mdev`)."""
    rule: str = _resolver(resolver).view(profile).profile.mdev_name
    return rule


def mdev_names(
    types: Iterable[str], profile: ProfileLike = DEFAULT_PROFILE, *, resolver: ResolverLike | None = None
) -> list[dict[str, Any]]:
    """For each vGPU type name (``mdev_type/name``, e.g. ``GRID T4-1Q``): the
    resource the profile's plugin advertises (``nvidia.com/GRID_T4-1Q``; in
    v1.0.x ``nvidia.com/T4-1Q``), the variable KubeVirt reads, whether
    kubelet accepts it, and warnings. A type the plugin panics on (v1.0.x,
    no space) has no resource, variable or socket, and ``plugin-crash``."""
    refuse_kata(profile, "mdev-name", resolver)
    rule = mdev_rule(profile, resolver)
    results = []
    for type_name in types:
        resource = mdev_resource(type_name, rule)
        warnings = mdev_warnings(type_name, rule)
        results.append(
            {
                "mdev_type": type_name,
                "resource_name": resource,
                "env_var": None if resource is None else checks.env_var(resource, mediated=True),
                "socket_path": None if resource is None else checks.socket_path(resource.partition("/")[2]),
                "advertised": not warnings,
                "warnings": [w.to_dict() for w in warnings],
            }
        )
    return results


# -- node pools and VMs -------------------------------------------------------


def _resolve_requests(
    requests: Sequence[tuple[str, int]],
    mdevs: Sequence[tuple[str, int]],
    profile: ProfileLike,
    include_broken: bool,
    resolver: ResolverLike | None,
) -> tuple[list[tuple[str | None, int]], list[Skipped], list[Skipped], str]:
    """(resource, count) for each request in order, plus left-out and notes."""
    total = sum(count for _, count in requests) + sum(count for _, count in mdevs)
    if total > MAX_GPUS:
        raise PcinameError(f"{total} GPUs asked for, more than the {MAX_GPUS} a node may have")
    resolver = _resolver(resolver)
    device_items = [item for item, _ in requests if not _is_resource_name(item)]
    resolutions = iter(resolver.resolve_many(device_items, profile))
    canonical = _canonical(profile, resolver)
    wanted: list[tuple[str | None, int]] = []
    left_out: list[Skipped] = []
    notes: list[Skipped] = []

    def take(
        item: str, kind: str, resource: str | None, reasons: list[NameWarning], noted: list[NameWarning], count: int
    ) -> None:
        if reasons:
            left_out.append(Skipped(item, kind, resource, tuple(reasons)))
            if not include_broken or resource is None:
                return
        if noted:
            notes.append(Skipped(item, kind, resource, tuple(noted)))
        wanted.append((resource, count))

    for item, count in requests:
        if _is_resource_name(item):
            take(item, "resource", item, resource_warnings(item), [], count)
        else:
            r = next(resolutions)
            broken = [w for w in r.warnings if w.code in checks.BLOCKING_CODES]
            noted = [w for w in r.warnings if w.code == checks.UNNAMED_DEVICE]
            take(r.device, "pci", r.resource_name, broken, noted, count)
    rule = mdev_rule(profile, resolver)
    for type_name, count in mdevs:
        take(type_name, "mdev", mdev_resource(type_name, rule), mdev_warnings(type_name, rule), [], count)
    return wanted, left_out, notes, canonical


#: Where :func:`node_pool` puts a node group; the first is the default.
#: ``kubernetes-nodes``: a ``KubernetesNodes`` object (Cozystack v1.6.0 and later).
POOL_FORMATS = ("values", "patch", "kubernetes-nodes")
DEFAULT_POOL_FORMAT = POOL_FORMATS[0]


def node_pool(
    group: str,
    requests: Sequence[tuple[str, int]],
    profile: ProfileLike = DEFAULT_PROFILE,
    include_broken: bool = False,
    *,
    mdevs: Sequence[tuple[str, int]] = (),
    resolver: ResolverLike | None = None,
    fragment: bool = False,
    format: str = DEFAULT_POOL_FORMAT,
    instance_type: str | None = None,
    min_replicas: int | None = None,
    max_replicas: int | None = None,
    ephemeral_storage: str | None = None,
    disk_size: str | None = None,
    roles: Sequence[str] | None = None,
    cpu: str | None = None,
    memory: str | None = None,
    cozystack: str | Release | None = None,
    cluster: str | None = None,
) -> Snippet:
    """Cozystack tenant Kubernetes values for node group ``group`` with these
    GPUs, one ``{"name": RESOURCE}`` entry per GPU (a request ``(device, 2)``
    gives two entries), for Cozystack release ``cozystack`` (a version or a
    :class:`~pciname.cozystack.releases.Release`; default: the one a
    ``cozystack@`` profile names, else the newest known).

    A request is a device id (resolved in ``profile``) or a resource name
    (``nvidia.com/...``, used as given after a validity check).

    By default the group is complete: every field that release's node-group
    schema requires, from the arguments or the schema's defaults
    (:meth:`~pciname.cozystack.releases.Release.defaults`; the disk is
    ``diskSize`` from v1.4.0, ``ephemeralStorage`` before: ``disk_size`` and
    ``ephemeral_storage`` are the same argument), then ``roles`` when given,
    then ``gpus``. ``fragment=True`` gives ``gpus`` alone, to merge into an
    existing group (and takes none of the group fields).

    ``format`` ``values`` (the default) gives ``{"nodeGroups": {group: ...}}``;
    ``patch`` gives the JSON merge patch ``{"spec": {"nodeGroups": {group:
    ...}}}`` for the tenant's ``Kubernetes`` object (:func:`place_node_pool`),
    or with ``cluster`` the merge patch ``{"spec": ...}`` of the pool's
    ``KubernetesNodes`` object; ``kubernetes-nodes`` gives that object,
    named ``<cluster>-<group>`` (releases with the app only).
    A bad group field, format or release is a PcinameError."""
    refuse_kata(profile, "node-pool", resolver)
    fmt = pool_format(format)
    if not isinstance(group, str) or not group.strip():
        raise PcinameError("the node group name is empty")
    release = _release(cozystack, profile)
    if ephemeral_storage is not None and disk_size is not None:
        raise PcinameError("ephemeral_storage and disk_size are the same field: give one")
    disk = disk_size if disk_size is not None else ephemeral_storage
    app = None
    if fmt == "kubernetes-nodes" or cluster is not None:
        app, cluster, group = _nodes_app(release, fmt, cluster, group, fragment)
    fields: dict[str, Any] = {
        "instance_type": instance_type,
        "min_replicas": min_replicas,
        "max_replicas": max_replicas,
    }
    fields.update(disk_size=disk, roles=roles, cpu=cpu, memory=memory)
    if fragment:
        given = [name for name, value in fields.items() if value is not None]
        if given:
            raise PcinameError(f"a fragment carries gpus only: it takes no {', '.join(given)}")
        node_group: dict[str, Any] = {}
    else:
        schema = app.schema if app is not None else release.node_group_schema
        node_group = complete_node_group(release=release, schema=schema, **fields)
    wanted, left_out, notes, canonical = _resolve_requests(requests, mdevs, profile, include_broken, resolver)
    node_group["gpus"] = [{"name": resource} for resource, count in wanted for _ in range(count)]
    if app is not None:
        assert cluster is not None
        data, note = _nodes_object(app, release, cluster, group, node_group, fmt=fmt, fragment=fragment)
        return Snippet(data, canonical, tuple(left_out), tuple(notes + note))
    data = place_node_pool({"nodeGroups": {group: node_group}}, fmt)
    return Snippet(data, canonical, tuple(left_out), tuple(notes))


def _nodes_app(
    release: Release, fmt: str, cluster: str | None, group: str, fragment: bool
) -> tuple[NodesApp, str, str]:
    """The release's KubernetesNodes application a pool goes to (format
    kubernetes-nodes, or a patch with a cluster), with the cluster's and the
    pool's names checked as its object names."""
    from pciname.cozystack import releases as facts

    if cluster is None:
        raise PcinameError("a KubernetesNodes object needs the name of its cluster (--cluster NAME)")
    if fmt == "values":
        raise PcinameError("a cluster name goes with format kubernetes-nodes or patch")
    app = release.kubernetes_nodes
    if app is None:
        first = next((r.version for r in facts.releases().values() if r.kubernetes_nodes is not None), None)
        raise PcinameError(
            f"{release.label} has no KubernetesNodes application (from {first or 'no release pciname knows'}): "
            "use format values or patch, a node group of the Kubernetes application"
        )
    cluster = facts.check_object_name(cluster, "cluster")
    group = facts.check_object_name(group, "node pool")
    if fmt == "kubernetes-nodes" and fragment:
        raise PcinameError("a KubernetesNodes object is a whole pool: use --fragment with format patch")
    return app, cluster, group


def _nodes_object(
    app: NodesApp,
    release: Release,
    cluster: str,
    group: str,
    node_group: dict[str, Any],
    *,
    fmt: str,
    fragment: bool,
) -> tuple[dict[str, Any], list[Skipped]]:
    """The KubernetesNodes object ``<cluster>-<group>`` of the pool (or, format
    patch, its merge patch), and the note of a release whose iaas bundle does
    not install the application."""
    from pciname.cozystack import releases as facts

    name = f"{cluster}-{group}"
    if len(app.release_prefix + name) > facts.MAX_RELEASE_NAME:
        raise PcinameError(
            f"KubernetesNodes {name!r} is too long: its Helm release {app.release_prefix}{name} has more than "
            f"{facts.MAX_RELEASE_NAME} characters"
        )
    spec = {"cluster": cluster, **node_group} if not fragment else node_group
    if fmt == "patch":
        data: dict[str, Any] = {"spec": spec}
    else:
        data = {"apiVersion": app.api_version, "kind": app.kind, "metadata": {"name": name}, "spec": spec}
    if app.installed_by_iaas_bundle:
        return data, []
    reason = NameWarning(
        NOT_INSTALLED,
        f"{release.label} ships the {app.kind} application but its iaas bundle does not install it "
        "(packages/core/platform/templates/bundles/iaas.yaml): the API serves no "
        f"{app.resource} until the Package cozystack.kubernetes-nodes-application is installed",
    )
    return data, [Skipped(name, "resource", None, (reason,))]


#: The note on a KubernetesNodes object of a release whose bundle does not install the app.
NOT_INSTALLED = "app-not-installed"


def _release(cozystack: object, profile: object) -> Release:
    """The release ``cozystack`` (a version or a Release) names, or the one a
    ``cozystack@`` profile implies (they must agree), else the newest known
    (:func:`pciname.cozystack.choice.release_for`)."""
    from pciname.cozystack import releases as facts
    from pciname.cozystack.choice import release_for

    if isinstance(cozystack, facts.Release):
        cozystack = cozystack.version
    elif cozystack is not None and not isinstance(cozystack, str):
        raise PcinameError(f"Cozystack version {cozystack!r} is not a version")
    return release_for(cozystack, profile)


def pool_format(fmt: object) -> str:
    """``values``, ``patch`` or ``kubernetes-nodes``; anything else is a PcinameError."""
    if fmt not in POOL_FORMATS:
        raise PcinameError(f"unknown format {fmt!r}: use one of {', '.join(POOL_FORMATS)}")
    assert isinstance(fmt, str)
    return fmt


def complete_node_group(
    *,
    release: Release | None = None,
    schema: dict[str, Any] | None = None,
    instance_type: str | None = None,
    min_replicas: int | None = None,
    max_replicas: int | None = None,
    disk_size: str | None = None,
    roles: Sequence[str] | None = None,
    cpu: str | None = None,
    memory: str | None = None,
) -> dict[str, Any]:
    """A node group's (or pool's) fields other than ``gpus``, each checked,
    named as ``release`` (default: the newest) names them; what is not given
    comes from the node-group schema's defaults. ``schema``: the schema whose
    fields are written (the release's node-group schema, or its
    KubernetesNodes schema): ``resources`` only when it requires it or
    ``cpu``/``memory`` are given, ``roles`` only when given."""
    from pciname.cozystack import releases as cozystack

    release = release or cozystack.newest()
    schema = schema if schema is not None else release.node_group_schema
    properties = schema.get("properties", {})
    defaults = release.defaults(schema)
    low, high = cozystack.check_replicas(
        defaults.min_replicas if min_replicas is None else min_replicas,
        defaults.max_replicas if max_replicas is None else max_replicas,
    )
    resources: dict[str, str] = {}
    if cpu is not None:
        resources["cpu"] = cozystack.check_quantity(cpu, "cpu")
    if memory is not None:
        resources["memory"] = cozystack.check_quantity(memory, "memory")
    disk = defaults.disk_field
    group: dict[str, Any] = {
        "minReplicas": low,
        "maxReplicas": high,
        "instanceType": cozystack.check_instance_type(
            defaults.instance_type if instance_type is None else instance_type
        ),
        disk: cozystack.check_quantity(defaults.disk_size if disk_size is None else disk_size, disk),
    }
    if resources or "resources" in schema.get("required", ()):
        group["resources"] = resources
    if roles is not None:
        group["roles"] = cozystack.check_roles(roles)
    missing = [f for f in group if f not in properties]
    if missing:
        raise PcinameError(f"{release.label} has no node-group field {', '.join(missing)}")
    return group


def place_node_pool(values: dict[str, Any], fmt: str = DEFAULT_POOL_FORMAT) -> dict[str, Any]:
    """Put tenant values ``{"nodeGroups": ...}`` where ``fmt`` wants them:
    ``values`` as they are, for the tenant Kubernetes application's values;
    ``patch``: ``{"spec": values}``, the JSON merge patch for
    ``kubectl patch kuberneteses.apps.cozystack.io NAME --type merge``
    (the application object keeps its values under ``spec``). A merge patch
    merges maps and replaces lists: the group's ``gpus`` (and ``roles``)
    replace the ones it has. A KubernetesNodes object (or its patch) is
    already placed and stays as it is."""
    if "nodeGroups" not in values:
        return values
    if pool_format(fmt) == "patch":
        return {"spec": values}
    return values


def vm_gpus(
    requests: Sequence[tuple[str, int]],
    profile: ProfileLike = DEFAULT_PROFILE,
    include_broken: bool = False,
    *,
    mdevs: Sequence[tuple[str, int]] = (),
    prefix: str = "gpu",
    resolver: ResolverLike | None = None,
) -> Snippet:
    """``spec.domain.devices.gpus[]`` entries of a KubeVirt VM:
    ``{"gpus": [{"name": "gpu1", "deviceName": "nvidia.com/..."}, ...]}``, one
    per GPU, named ``<prefix>1``, ``<prefix>2``, ..."""
    refuse_kata(profile, "vm-gpus", resolver)
    wanted, left_out, notes, canonical = _resolve_requests(requests, mdevs, profile, include_broken, resolver)
    resources = [resource for resource, count in wanted for _ in range(count)]
    gpus = [{"name": f"{prefix}{i}", "deviceName": resource} for i, resource in enumerate(resources, 1)]
    return Snippet({"gpus": gpus}, canonical, tuple(left_out), tuple(notes))
