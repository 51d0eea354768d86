"""The Kubernetes objects pciname reads and writes, as plain dicts: what the
KubeVirt CR permits, what the Nodes advertise, who else manages the CR, and
the object pciname applies to it.

Pure: objects in as the API server returns them (decoded JSON), plain data
out; reading and writing them is :mod:`pciname.cluster.kube`.

Who else manages ``spec.configuration.permittedHostDevices`` (see
:func:`management`): Cozystack deploys the KubeVirt CR from its ``kubevirt``
Helm chart through a Flux HelmRelease in namespace ``cozy-kubevirt`` and
reverts hand edits; its objects carry ``helm.toolkit.fluxcd.io/*`` labels and
``meta.helm.sh/release-*`` annotations pointing at a ``cozy-*`` namespace,
live in a ``cozy-*`` namespace, or carry ``cozystack.io`` labels; the Flux
field manager is ``helm-controller``. Any one of these is evidence and
:func:`refusal` says why pciname must not apply (``--force`` does not
override it: the change would be reverted; the values go in Cozystack's
platform values instead). OpenShift's HyperConverged operator owns the
KubeVirt CR it creates (an ownerReference of kind HyperConverged) and is
refused likewise.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from pciname.kubevirt.resources import is_nvidia
from pciname.kubevirt.shapes import quantity

#: The KubeVirt CR's API group, version and resource.
GROUP = "kubevirt.io"
VERSION = "v1"
PLURAL = "kubevirts"
#: The field manager pciname's server-side apply uses.
FIELD_MANAGER = "pciname"

#: An object as the API server returns it (decoded JSON).
KubeObject = dict[str, Any]


def object_ref(obj: KubeObject | None) -> str | None:
    """``NAMESPACE/NAME`` of an object (None for no object)."""
    if not obj:
        return None
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


# -- Nodes ----------------------------------------------------------------------


def _quantity(value: object, where: str = "a resource count") -> int:
    """A Node's count of a resource (:func:`pciname.kubevirt.shapes.quantity`:
    a ShapeError, never a guess, for what is not a count)."""
    return quantity(value, where)


def node_resources(nodes: Iterable[KubeObject]) -> dict[str, dict[str, dict[str, int]]]:
    """``nvidia.com/*`` resource -> node name -> {"allocatable", "capacity"}."""
    found: dict[str, dict[str, dict[str, int]]] = {}
    for node in nodes:
        name = (node.get("metadata") or {}).get("name", "?")
        status = node.get("status") or {}
        for field in ("capacity", "allocatable"):
            for resource, value in (status.get(field) or {}).items():
                if is_nvidia(resource):
                    entry = found.setdefault(resource, {}).setdefault(name, {"allocatable": 0, "capacity": 0})
                    entry[field] = _quantity(value, f"node {name} status.{field}[{resource}]")
    return found


def advertised(nodes: Iterable[KubeObject]) -> dict[str, dict[str, int]]:
    """Resources some node advertises (capacity or allocatable > 0) -> node -> allocatable."""
    out: dict[str, dict[str, int]] = {}
    for resource, per_node in node_resources(nodes).items():
        for node, counts in per_node.items():
            if counts["capacity"] > 0 or counts["allocatable"] > 0:
                out.setdefault(resource, {})[node] = counts["allocatable"]
    return out


# -- the KubeVirt CR ------------------------------------------------------------


def permitted_entries(kubevirt: KubeObject | None) -> list[dict[str, Any]]:
    """The KubeVirt CR's permittedHostDevices, flattened: kind (pci/mdev),
    selector, resource_name, external_resource_provider."""
    block = (((kubevirt or {}).get("spec") or {}).get("configuration") or {}).get("permittedHostDevices") or {}
    entries = []
    for list_key, kind, selector_key in (
        ("pciHostDevices", "pci", "pciVendorSelector"),
        ("mediatedDevices", "mdev", "mdevNameSelector"),
    ):
        for item in block.get(list_key) or []:
            entries.append(
                {
                    "kind": kind,
                    "selector": item.get(selector_key),
                    "resource_name": item.get("resourceName"),
                    "external_resource_provider": item.get("externalResourceProvider") is True,
                }
            )
    return entries


def _fields_touch(fields: dict[str, Any], path: Iterable[str]) -> bool:
    node: Any = fields
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def management(kubevirt: KubeObject | None) -> dict[str, Any]:
    """Who besides pciname controls the CR's permittedHostDevices.

    Returns ``{"manager": "cozystack" | "hyperconverged" | None,
    "evidence": [...], "field_managers": [...]}``; ``field_managers`` are the
    managedFields managers that own ``spec.configuration.permittedHostDevices``
    (or something in it)."""
    meta = (kubevirt or {}).get("metadata") or {}
    labels = meta.get("labels") or {}
    evidence = _cozystack_evidence(meta)
    field_managers = _field_managers(meta)
    if evidence and "helm-controller" in field_managers:
        evidence.append("field manager helm-controller (Flux) owns spec.configuration.permittedHostDevices")
    manager = "cozystack" if evidence else None
    if manager is None:
        for owner in meta.get("ownerReferences") or []:
            if owner.get("kind") == "HyperConverged":
                evidence.append(f"owned by HyperConverged {owner.get('name', '?')}")
                manager = "hyperconverged"
        if labels.get("app.kubernetes.io/managed-by") == "hco-operator":
            evidence.append("label app.kubernetes.io/managed-by=hco-operator")
            manager = "hyperconverged"
    return {"manager": manager, "evidence": evidence, "field_managers": field_managers}


def _cozystack_evidence(meta: dict[str, Any]) -> list[str]:
    """What in the CR's metadata says Cozystack deploys it: its labels and
    annotations, a Flux or Helm release in a cozy- namespace, its namespace."""
    labels = meta.get("labels") or {}
    annotations = meta.get("annotations") or {}
    evidence: list[str] = []
    for source, mapping in (("label", labels), ("annotation", annotations)):
        for key, value in mapping.items():
            if "cozystack.io" in key:
                evidence.append(f"{source} {key}={value}")
    flux_ns = labels.get("helm.toolkit.fluxcd.io/namespace", "")
    if flux_ns.startswith("cozy-"):
        evidence.append(
            f"Flux HelmRelease {flux_ns}/{labels.get('helm.toolkit.fluxcd.io/name', '?')} "
            "(label helm.toolkit.fluxcd.io/namespace)"
        )
    release_ns = annotations.get("meta.helm.sh/release-namespace", "")
    if release_ns.startswith("cozy-"):
        evidence.append(
            f"Helm release {release_ns}/{annotations.get('meta.helm.sh/release-name', '?')} "
            "(annotation meta.helm.sh/release-namespace)"
        )
    namespace = meta.get("namespace") or ""
    if namespace.startswith("cozy-"):
        evidence.append(f"namespace {namespace}")
    return evidence


def _field_managers(meta: dict[str, Any]) -> list[str]:
    """The managedFields managers, but pciname, that own spec.configuration.permittedHostDevices (or in it)."""
    field_managers: list[str] = []
    for entry in meta.get("managedFields") or []:
        fields = entry.get("fieldsV1") or {}
        if _fields_touch(fields, ("f:spec", "f:configuration", "f:permittedHostDevices")):
            manager = entry.get("manager") or "?"
            if manager != FIELD_MANAGER and manager not in field_managers:
                field_managers.append(manager)
    return field_managers


# -- what pciname applies -------------------------------------------------------


def apply_body(kubevirt: KubeObject, permitted: dict[str, Any]) -> KubeObject:
    """The server-side apply object: only what pciname owns."""
    meta = kubevirt.get("metadata") or {}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "KubeVirt",
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
        "spec": {"configuration": {"permittedHostDevices": permitted}},
    }


def refusal(kubevirt: KubeObject) -> str | None:
    """Why pciname must not apply to this CR, or None."""
    info = management(kubevirt)
    ref = object_ref(kubevirt)
    if info["manager"] == "cozystack":
        return (
            f"{ref} is managed by Cozystack ({'; '.join(info['evidence'])}), which reverts changes to "
            "spec.configuration.permittedHostDevices: put the devices in Cozystack's platform values instead "
            "(pciname permitted-host-devices ... --format cozystack, under gpu.permittedHostDevices)"
        )
    if info["manager"] == "hyperconverged":
        return (
            f"{ref} is managed by OpenShift's HyperConverged operator ({'; '.join(info['evidence'])}), which "
            "reverts changes to it: edit the HyperConverged CR's spec.permittedHostDevices instead"
        )
    return None
