"""Facts about Cozystack's tenant Kubernetes application that pciname writes
for: the API object that carries its values, and the node-group fields its
values schema requires, with their defaults.

Pure data and checks; :func:`pciname.kube.generate.node_pool` builds node
groups from them.

Source: ``cozystack/cozystack``, ``packages/apps/kubernetes/values.schema.json``
at commit :data:`SCHEMA_COMMIT` (Apache-2.0); the same file is vendored as
``tests/data/cozystack-kubernetes-values.schema.json`` and a test checks the
facts here against it. Each node group (``nodeGroups.<name>``, the schema's
``additionalProperties``) *requires* ``ephemeralStorage``, ``instanceType``,
``maxReplicas``, ``minReplicas`` and ``resources``: Cozystack fills schema
defaults in only when it reads an application back, and Helm validates
``values.schema.json`` without defaulting, so a group created without them
is refused.

The object: Cozystack's e2e test ``hack/e2e-apps/kubernetes.bats`` creates a
tenant cluster as ``apiVersion: apps.cozystack.io/v1alpha1``, ``kind:
Kubernetes`` with the chart's values directly under ``spec`` (``spec.nodeGroups``,
``spec.controlPlane``, ...), and reads it as ``kuberneteses.apps.cozystack.io``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..errors import PcinameError

#: Where the facts below come from.
SCHEMA_REPO = "cozystack/cozystack"
SCHEMA_PATH = "packages/apps/kubernetes/values.schema.json"
SCHEMA_COMMIT = "04218411784894dc88627a8630586d277d6805bd"
SCHEMA_SOURCE = f"{SCHEMA_REPO} {SCHEMA_PATH} at {SCHEMA_COMMIT[:12]}"

#: The tenant Kubernetes application object; its values sit under ``spec``.
API_GROUP = "apps.cozystack.io"
API_VERSION = f"{API_GROUP}/v1alpha1"
KIND = "Kubernetes"
RESOURCE = f"kuberneteses.{API_GROUP}"  # what kubectl get / patch take

#: The node-group fields the schema requires (``additionalProperties.required``).
REQUIRED_FIELDS = ("ephemeralStorage", "instanceType", "maxReplicas", "minReplicas", "resources")

#: A Kubernetes quantity, the schema's ``pattern`` for ephemeralStorage and
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


@dataclass(frozen=True, slots=True)
class NodeGroupDefaults:
    """The schema's defaults for one node group's fields (``default`` of each
    property of ``nodeGroups.additionalProperties``; ``resources`` has none,
    and ``{}`` is what its default ``md0`` group carries)."""

    ephemeral_storage: str
    instance_type: str
    max_replicas: int
    min_replicas: int


#: Defaults of the schema at :data:`SCHEMA_COMMIT`.
NODE_GROUP_DEFAULTS = NodeGroupDefaults(
    ephemeral_storage="20Gi",
    instance_type="u1.medium",
    max_replicas=10,
    min_replicas=0,
)


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
    "KIND",
    "MAX_REPLICAS",
    "NODE_GROUP_DEFAULTS",
    "QUANTITY_PATTERN",
    "REQUIRED_FIELDS",
    "RESOURCE",
    "SCHEMA_COMMIT",
    "SCHEMA_SOURCE",
    "NodeGroupDefaults",
    "check_instance_type",
    "check_quantity",
    "check_replicas",
    "check_roles",
]
