"""Facts about Cozystack releases that pciname writes for, per release: the
API objects that carry tenant node pools (the ``Kubernetes`` application's
``nodeGroups``, and from v1.6.0 the ``KubernetesNodes`` application), each
release's node-group schema with its required fields and defaults, the GPU
Operator it ships and the plugin release that deploys, and its GPU wiring.

Pure data and checks; :func:`pciname.cozystack.node_pool.node_pool` builds node
groups from them.

The facts are ``data/cozystack/releases.json`` and ``schemas.json``, written
by the maintainer script :mod:`tools.cozystack_extract` from the
``cozystack/cozystack`` git history (Apache-2.0), every final release tag
from v1.0.0; each fact names its source path at the release's commit, and a
test re-runs the script on the vendored upstream files. Cozystack fills
schema defaults in only when it reads an application back, and Helm
validates ``values.schema.json`` without defaulting, so a group created
without a required field (``ephemeralStorage`` up to v1.3.x, ``diskSize``
from v1.4.0, ...) is refused.

The ``Kubernetes`` object: Cozystack's e2e test ``hack/e2e-apps/kubernetes.bats``
creates a tenant cluster as ``apiVersion: apps.cozystack.io/v1alpha1``,
``kind: Kubernetes`` with the chart's values directly under ``spec``, and
reads it as ``kuberneteses.apps.cozystack.io``. The ``KubernetesNodes``
object's group, version, kind and plural are facts of each release.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pciname.base.paths import cozystack_releases_path, cozystack_schemas_path
from pciname.errors import PcinameError, UnknownCozystackRelease

#: The tenant Kubernetes application object; its values sit under ``spec``.
API_GROUP = "apps.cozystack.io"
API_VERSION = f"{API_GROUP}/v1alpha1"
KIND = "Kubernetes"
RESOURCE = f"kuberneteses.{API_GROUP}"  # what kubectl get / patch take

#: Cozystack's aggregated API server serves applications by writing a Flux
#: HelmRelease for each (``pkg/registry/apps/application/rest.go``: the
#: application's spec is the release's ``spec.values``), labelled with the
#: application's kind (``pkg/apis/apps/v1alpha1/types.go`` ApplicationKindLabel,
#: the same in every release from v1.0.0).
APPLICATION_KIND_LABEL = "apps.cozystack.io/application.kind"
HELM_RELEASE_GROUP = "helm.toolkit.fluxcd.io"
HELM_RELEASE_KIND = "HelmRelease"

#: The two names a node's disk has had in a node group (v1.4.0 renamed it).
DISK_FIELDS = ("diskSize", "ephemeralStorage")
#: Node-group fields pciname fills in (every other field is left to the user).
POOL_FIELDS = ("minReplicas", "maxReplicas", "instanceType", *DISK_FIELDS, "resources", "roles")
#: Helm's longest release name; a KubernetesNodes object's release is its
#: ApplicationDefinition's prefix + its name.
MAX_RELEASE_NAME = 53

#: A Kubernetes quantity, the schema's ``pattern`` for the disk field and
#: resources.cpu / resources.memory.
QUANTITY_PATTERN = (
    r"^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))))?$"
)
_QUANTITY = re.compile(QUANTITY_PATTERN)

#: Replicas are int32 in Cluster API's MachineDeployment, which a group becomes.
MAX_REPLICAS = 2**31 - 1

#: A role becomes the node label ``node-role.kubernetes.io/<role>``: a label name.
_ROLE = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")
#: An instance type is a VirtualMachineClusterInstancetype's name: a DNS-1123 subdomain.
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
#: A Cozystack application (a Helm release) name: a DNS-1123 label.
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_VERSION = re.compile(r"^v?(\d+)\.(\d+)\.(\d+)$")


@dataclass(frozen=True, slots=True)
class NodeGroupDefaults:
    """A release's schema defaults for the node-group fields pciname fills
    (``default`` of each property; ``disk_field`` is what it calls the disk)."""

    disk_field: str
    disk_size: str
    instance_type: str
    max_replicas: int
    min_replicas: int


@dataclass(frozen=True, slots=True)
class NodesApp:
    """A release's ``KubernetesNodes`` application (one node pool of a tenant cluster)."""

    api_version: str
    kind: str
    plural: str
    release_prefix: str
    schema: dict[str, Any]
    source: str
    installed_by_iaas_bundle: bool

    @property
    def resource(self) -> str:
        return f"{self.plural}.{self.api_version.partition('/')[0]}"


@dataclass(frozen=True, slots=True)
class Release:
    """One Cozystack release's facts (``facts``: its entry in releases.json)."""

    version: str
    date: str
    commit: str
    gpu_operator: str
    plugin_release: str
    node_group_schema: dict[str, Any]
    kubernetes_nodes: NodesApp | None
    facts: dict[str, Any]

    @property
    def profile(self) -> str:
        """The profile that names GPUs as this release's GPU Operator deploys them."""
        return f"cozystack@{self.version}"

    @property
    def label(self) -> str:
        return f"Cozystack {self.version}"

    @property
    def fields(self) -> tuple[str, ...]:
        """Every field a node group may have in this release."""
        return tuple(self.node_group_schema.get("properties", {}))

    @property
    def required(self) -> tuple[str, ...]:
        return tuple(self.node_group_schema.get("required", ()))

    @property
    def disk_field(self) -> str:
        found = [f for f in DISK_FIELDS if f in self.fields]
        if len(found) != 1:
            raise PcinameError(f"{self.label}: its node-group schema has no one disk field ({', '.join(DISK_FIELDS)})")
        return found[0]

    @property
    def source(self) -> str:
        return f"cozystack/cozystack {self.facts['node_group']['source']} at {self.version} ({self.commit[:12]})"

    def defaults(self, schema: dict[str, Any] | None = None) -> NodeGroupDefaults:
        """The defaults of the fields pciname fills in ``schema`` (default: the
        node-group schema; or the KubernetesNodes one); a PcinameError when
        it requires a field pciname cannot fill (never a guess)."""
        schema = self.node_group_schema if schema is None else schema
        required = tuple(schema.get("required", ()))
        unknown = [f for f in required if f not in POOL_FIELDS and f != "cluster"]
        if unknown:
            raise PcinameError(
                f"{self.label} requires node-group field(s) {', '.join(unknown)}, which this pciname does not fill: "
                "use a newer pciname, or --fragment and add them by hand"
            )
        properties = schema["properties"]
        found = [f for f in DISK_FIELDS if f in properties]
        if len(found) != 1:
            raise PcinameError(f"{self.label}: its schema has no one disk field ({', '.join(DISK_FIELDS)})")
        disk = found[0]

        def default(name: str) -> Any:
            value = properties.get(name, {}).get("default")
            if value is None:
                raise PcinameError(f"{self.label}: its node-group schema gives no default for {name}: set it")
            return value

        return NodeGroupDefaults(
            disk,
            str(default(disk)),
            str(default("instanceType")),
            int(default("maxReplicas")),
            int(default("minReplicas")),
        )

    @property
    def gpu_wiring(self) -> dict[str, Any] | None:
        """What its iaas bundle does with gpu.permittedHostDevices (None: nothing)."""
        wiring: dict[str, Any] | None = self.facts.get("gpu_wiring")
        return wiring


@lru_cache(maxsize=1)
def _documents() -> tuple[dict[str, Any], dict[str, Any]]:
    with open(cozystack_releases_path(), encoding="utf-8") as handle:
        releases = json.load(handle)
    with open(cozystack_schemas_path(), encoding="utf-8") as handle:
        schemas = json.load(handle)["schemas"]
    return releases, schemas


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.lstrip("v").split("."))


@lru_cache(maxsize=1)
def releases() -> dict[str, Release]:
    """Every known release, oldest first."""
    document, schemas = _documents()
    out: dict[str, Release] = {}
    for version in sorted(document["releases"], key=_key):
        entry = document["releases"][version]
        nodes = entry.get("kubernetes_nodes")
        app = None
        if nodes:
            app = NodesApp(
                nodes["api_version"],
                nodes["kind"],
                nodes["plural"],
                nodes.get("release_prefix", ""),
                schemas[nodes["schema"]],
                nodes["source"],
                bool(nodes["installed_by_iaas_bundle"]),
            )
        out[version] = Release(
            version,
            entry["date"],
            entry["commit"],
            entry["gpu_operator"]["version"],
            entry["sandbox_device_plugin"]["version"],
            schemas[entry["node_group"]["schema"]],
            app,
            entry,
        )
    return out


def tables() -> dict[str, Any]:
    """The default tables the releases' iaas bundles read, by id."""
    tables: dict[str, Any] = _documents()[0]["tables"]
    return tables


def newest() -> Release:
    return list(releases().values())[-1]


def known_range() -> str:
    versions = list(releases())
    return f"{versions[0]} to {versions[-1]}"


def get_release(spelling: str | None = None) -> Release:
    """A release by ``vX.Y.Z`` (``X.Y.Z``, ``cozystack@vX.Y.Z``); empty, None
    or ``latest``: the newest known. PcinameError for a malformed version,
    :class:`UnknownCozystackRelease` for one pciname does not know."""
    text = (spelling or "").strip()
    if text.lower().startswith("cozystack@"):
        text = text.partition("@")[2]
    if text.lower() in ("", "latest"):
        return newest()
    m = _VERSION.match(text)
    if m is None:
        raise PcinameError(f"malformed Cozystack version {spelling!r}: use vX.Y.Z, {known_range()}, or latest")
    version = f"v{int(m.group(1))}.{int(m.group(2))}.{int(m.group(3))}"
    found = releases().get(version)
    if found is None:
        raise UnknownCozystackRelease(
            f"unknown Cozystack release {spelling!r}: pciname knows {known_range()} "
            "(a newer release needs a newer pciname: its facts come from the release's own files)"
        )
    return found


def release_of_profile(profile: object) -> Release | None:
    """The release a ``cozystack@...`` profile name implies (None: not one)."""
    if isinstance(profile, str) and profile.strip().lower().startswith("cozystack@"):
        return get_release(profile)
    return None


#: Where a cluster says which Cozystack release it runs: the operator's
#: Deployment (``packages/core/installer/templates/cozystack-operator.yaml``).
#: Its container's ``COZYSTACK_VERSION`` env (set from the installer's
#: ``cozystackOperator.platformVersion``, from v1.6) wins; else the release is
#: the image tag (``ghcr.io/cozystack/cozystack/cozystack-operator:v1.6.2@sha256:...``).
#: The ``cozystack-version`` ConfigMap holds a migration number, not a release.
OPERATOR_NAMESPACE = "cozy-system"
OPERATOR_DEPLOYMENT = "cozystack-operator"
OPERATOR_CONTAINER = "cozystack-operator"
VERSION_ENV = "COZYSTACK_VERSION"
_IMAGE_TAG = re.compile(r":(v?\d+\.\d+\.\d+)(?:@sha256:[0-9a-f]+)?$")


@dataclass(frozen=True, slots=True)
class ClusterRelease:
    """The Cozystack release a cluster says it runs, and where it says so;
    ``release`` is None when pciname has no facts for that version."""

    version: str
    evidence: str
    release: Release | None

    def to_dict(self) -> dict[str, Any]:
        return {"version": self.version, "source": self.evidence, "known": self.release is not None}


def release_in_cluster(deployment: dict[str, Any] | None) -> ClusterRelease | None:
    """What the operator Deployment says (None: nothing, or no release in it)."""
    if not isinstance(deployment, dict):
        return None
    where = f"Deployment {OPERATOR_NAMESPACE}/{OPERATOR_DEPLOYMENT}"
    node: Any = deployment
    for key in ("spec", "template", "spec", "containers"):  # whatever the API server sent: never trusted
        node = node.get(key) if isinstance(node, dict) else None
    containers = node if isinstance(node, list) else []
    for container in containers:
        if not isinstance(container, dict) or container.get("name") != OPERATOR_CONTAINER:
            continue
        found = None
        envs = container.get("env")
        for env in envs if isinstance(envs, list) else []:
            if (
                isinstance(env, dict)
                and env.get("name") == VERSION_ENV
                and isinstance(env.get("value"), str)
                and env["value"].strip()
            ):
                found = (env["value"].strip(), f"{where}, env {VERSION_ENV}")
        image = container.get("image")
        if found is None and isinstance(image, str):
            m = _IMAGE_TAG.search(image.strip())
            if m:
                found = (m.group(1), f"{where}, image tag of {image.strip().split('@')[0]}")
        if found is None:
            return None
        version, evidence = found
        try:
            release: Release | None = get_release(version)
        except PcinameError:
            release = None
        return ClusterRelease(version, evidence, release)
    return None


def release_table() -> str:
    """The README's table of Cozystack releases (a test holds it equal)."""
    rows = [
        "| Cozystack | released | GPU Operator | plugin release | node-group disk | KubernetesNodes | GPU auto-wiring |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for r in releases().values():
        app = r.kubernetes_nodes
        nodes = "-" if app is None else "yes" if app.installed_by_iaas_bundle else "shipped, not installed"
        wiring = r.gpu_wiring
        wired = "-" if wiring is None else ", ".join(wiring["variants"])
        rows.append(
            f"| {r.version} | {r.date} | {r.gpu_operator} | {r.plugin_release} | `{r.disk_field}` | {nodes} | {wired} |"
        )
    return "\n".join(rows) + "\n"


def check_object_name(name: object, what: str) -> str:
    """A Cozystack application name (a DNS-1123 label, as Helm release names are)."""
    text = name.strip() if isinstance(name, str) else name
    if not isinstance(text, str) or not text or len(text) > 63 or not _DNS_LABEL.match(text):
        raise PcinameError(f"{what} {name!r} is not a name: lower-case letters, digits and '-', e.g. demo")
    return text


def check_quantity(value: object, what: str) -> str:
    """A positive Kubernetes quantity ("20Gi", "500m", "4"), as a string;
    anything else is a PcinameError naming ``what``."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not _QUANTITY.match(text):
        raise PcinameError(f"{what} {value!r} is not a Kubernetes quantity, e.g. 20Gi, 500m or 4")
    mantissa = re.match(r"[+-]?([0-9]*\.?[0-9]*)", text)
    if text.startswith("-") or mantissa is None or float(mantissa.group(1)) <= 0:
        raise PcinameError(f"{what} {value!r} must be more than zero")
    return text


def check_replicas(min_replicas: object, max_replicas: object) -> tuple[int, int]:
    """(min, max) when both are whole numbers, 0 <= min <= max, 1 <= max <=
    MAX_REPLICAS; a PcinameError otherwise."""
    for name, value in (("minReplicas", min_replicas), ("maxReplicas", max_replicas)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise PcinameError(f"{name} {value!r} is not a whole number")
        if not 0 <= value <= MAX_REPLICAS:
            raise PcinameError(f"{name} {value} is out of range: 0 to {MAX_REPLICAS}")
    assert isinstance(min_replicas, int) and isinstance(max_replicas, int)
    if max_replicas < 1:
        raise PcinameError("maxReplicas 0 gives a group that never has a node to put GPUs in: use 1 or more")
    if min_replicas > max_replicas:
        raise PcinameError(f"minReplicas {min_replicas} is more than maxReplicas {max_replicas}")
    return min_replicas, max_replicas


def check_instance_type(value: object) -> str:
    """A KubeVirt instance type name ("u1.medium", "u1.2xlarge")."""
    text = value.strip() if isinstance(value, str) else value
    if not isinstance(text, str) or not text or len(text) > 253 or not _DNS_SUBDOMAIN.match(text):
        raise PcinameError(
            f"instanceType {value!r} is not an instance type name: lower-case letters, digits, '-' and '.', "
            "e.g. u1.medium"
        )
    return text


def check_roles(roles: object) -> list[str]:
    """Node roles (each a label name, e.g. ingress-nginx), duplicates dropped."""
    if isinstance(roles, str) or not isinstance(roles, (list, tuple)):
        raise PcinameError(f"roles {roles!r} is not a list of role names")
    out: list[str] = []
    for role in roles:
        text = role.strip() if isinstance(role, str) else role
        if not isinstance(text, str) or not _ROLE.match(text):
            raise PcinameError(
                f"role {role!r} is not a node role name: up to 63 letters, digits, '-', '_' and '.', e.g. ingress-nginx"
            )
        if text not in out:
            out.append(text)
    return out


__all__ = [
    "API_GROUP",
    "API_VERSION",
    "APPLICATION_KIND_LABEL",
    "DISK_FIELDS",
    "HELM_RELEASE_GROUP",
    "HELM_RELEASE_KIND",
    "KIND",
    "MAX_REPLICAS",
    "POOL_FIELDS",
    "QUANTITY_PATTERN",
    "RESOURCE",
    "NodeGroupDefaults",
    "NodesApp",
    "Release",
    "UnknownCozystackRelease",
    "check_instance_type",
    "check_quantity",
    "check_replicas",
    "check_roles",
    "get_release",
    "newest",
    "releases",
]
