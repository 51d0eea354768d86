"""Cozystack tenant Kubernetes node groups with their ``gpus``
(docs/naming.md, section 7): :func:`node_pool` builds one (complete, as the
values schema requires, or ``gpus`` alone), as values, as a merge patch of
the ``Kubernetes`` object or as the nodes app's object; the requests resolve
as :func:`pciname.kubevirt.generate.vm_gpus`'s do."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pciname.errors import PcinameError
from pciname.kubevirt.generate import Skipped, Snippet, refuse_kata, resolve_requests
from pciname.naming.checks import NameWarning
from pciname.naming.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:
    from pciname.cozystack.releases import NodesApp, Release
    from pciname.resolution.resolver import ProfileLike, ResolverLike

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
    wanted, left_out, notes, canonical = resolve_requests(requests, mdevs, profile, include_broken, resolver)
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
