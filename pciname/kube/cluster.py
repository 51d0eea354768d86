"""A live cluster: audit the names, list GPU options, apply permittedHostDevices.

Two layers:

* pure functions over plain objects as the API server returns them (dicts):
  :func:`audit`, :func:`gpu_options`, :func:`infer_profiles`,
  :func:`management`, :func:`apply_body`. A gRPC servicer (or a test) can call
  them with objects it got anywhere;
* thin I/O through the official ``kubernetes`` client: :func:`connect`,
  :func:`read_cluster`, :func:`apply_permitted_host_devices`. Read-only except
  the last, which sends one server-side apply PATCH (``Content-Type:
  application/apply-patch+yaml``, ``fieldManager=pciname``; ``force=true``
  only when asked) to the KubeVirt CR.

Who else manages ``spec.configuration.permittedHostDevices`` (see
:func:`management`): Cozystack deploys the KubeVirt CR from its ``kubevirt``
Helm chart through a Flux HelmRelease in namespace ``cozy-kubevirt`` and
reverts hand edits; its objects carry ``helm.toolkit.fluxcd.io/*`` labels and
``meta.helm.sh/release-*`` annotations pointing at a ``cozy-*`` namespace,
live in a ``cozy-*`` namespace, or carry ``cozystack.io`` labels; the Flux
field manager is ``helm-controller``. Any one of these is evidence and
:func:`apply_permitted_host_devices` refuses (``--force`` does not override
it: the change would be reverted; the values go in Cozystack's platform
values instead). OpenShift's HyperConverged operator owns the KubeVirt CR it
creates (an ownerReference of kind HyperConverged) and is refused likewise.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass

from ..errors import ApplyRefused, ClusterError, PcinameError
from ..naming import checks
from ..naming.profiles import DEFAULT_PROFILE

GROUP = "kubevirt.io"
VERSION = "v1"
PLURAL = "kubevirts"
FIELD_MANAGER = "pciname"
APPLY_CONTENT_TYPE = "application/apply-patch+yaml"
AUTO = "auto"

_PREFIX = checks.RESOURCE_DOMAIN + "/"
#: nvidia.com resources of NVIDIA's *container* device plugin, not KubeVirt's.
CONTAINER_RESOURCES = ("nvidia.com/gpu", "nvidia.com/gpu.shared")
CONTAINER_PREFIXES = ("nvidia.com/mig-",)

# Audit finding codes (besides the lint codes of the CR's entries).
PERMITTED_NOT_ADVERTISED = "permitted-not-advertised"
ADVERTISED_NOT_PERMITTED = "advertised-not-permitted"


# -- plain data ---------------------------------------------------------------


def resource_kind(name: str) -> str:
    """``container`` (nvidia.com/gpu, nvidia.com/mig-*), ``mdev`` (has a '-',
    which pci names never have), ``pci`` or ``other`` (not nvidia.com)."""
    if not name.startswith(_PREFIX):
        return "other"
    if name in CONTAINER_RESOURCES or name.startswith(CONTAINER_PREFIXES):
        return "container"
    return "mdev" if "-" in name[len(_PREFIX):] else "pci"


def _quantity(value) -> int:
    try:
        return int(str(value).strip())
    except (TypeError, ValueError):
        try:
            return int(float(str(value)))
        except ValueError:
            return 0


def node_resources(nodes: Iterable[dict]) -> dict[str, dict[str, dict[str, int]]]:
    """``nvidia.com/*`` resource -> node name -> {"allocatable", "capacity"}."""
    found: dict[str, dict[str, dict[str, int]]] = {}
    for node in nodes:
        name = (node.get("metadata") or {}).get("name", "?")
        status = node.get("status") or {}
        for field in ("capacity", "allocatable"):
            for resource, value in (status.get(field) or {}).items():
                if resource.startswith(_PREFIX):
                    entry = found.setdefault(resource, {}).setdefault(name, {"allocatable": 0, "capacity": 0})
                    entry[field] = _quantity(value)
    return found


def advertised(nodes: Iterable[dict]) -> dict[str, dict[str, int]]:
    """Resources some node advertises (capacity or allocatable > 0) -> node -> allocatable."""
    out: dict[str, dict[str, int]] = {}
    for resource, per_node in node_resources(nodes).items():
        for node, counts in per_node.items():
            if counts["capacity"] > 0 or counts["allocatable"] > 0:
                out.setdefault(resource, {})[node] = counts["allocatable"]
    return out


def permitted_entries(kubevirt: dict | None) -> list[dict]:
    """The KubeVirt CR's permittedHostDevices, flattened: kind (pci/mdev),
    selector, resource_name, external_resource_provider."""
    block = (((kubevirt or {}).get("spec") or {}).get("configuration") or {}).get("permittedHostDevices") or {}
    entries = []
    for item in block.get("pciHostDevices") or []:
        entries.append(
            {
                "kind": "pci",
                "selector": item.get("pciVendorSelector"),
                "resource_name": item.get("resourceName"),
                "external_resource_provider": item.get("externalResourceProvider") is True,
            }
        )
    for item in block.get("mediatedDevices") or []:
        entries.append(
            {
                "kind": "mdev",
                "selector": item.get("mdevNameSelector"),
                "resource_name": item.get("resourceName"),
                "external_resource_provider": item.get("externalResourceProvider") is True,
            }
        )
    return entries


def _ref(obj: dict | None) -> str | None:
    if not obj:
        return None
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace', '')}/{meta.get('name', '')}"


def _fields_touch(fields: dict, path: Iterable[str]) -> bool:
    node = fields
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return False
        node = node[key]
    return True


def management(kubevirt: dict | None) -> dict:
    """Who besides pciname controls the CR's permittedHostDevices.

    Returns ``{"manager": "cozystack" | "hyperconverged" | None,
    "evidence": [...], "field_managers": [...]}``; ``field_managers`` are the
    managedFields managers that own ``spec.configuration.permittedHostDevices``
    (or something in it)."""
    meta = (kubevirt or {}).get("metadata") or {}
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
    field_managers = []
    for entry in meta.get("managedFields") or []:
        fields = entry.get("fieldsV1") or {}
        if _fields_touch(fields, ("f:spec", "f:configuration", "f:permittedHostDevices")):
            manager = entry.get("manager") or "?"
            if manager != FIELD_MANAGER and manager not in field_managers:
                field_managers.append(manager)
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


# -- which plugin release is running ------------------------------------------


def infer_profiles(names: Iterable[str], *, resolver=None) -> dict:
    """Which plugin releases are consistent with the resource names nodes
    advertise: a release is consistent when it would give every advertised
    pci name to some device (vGPU and container resources say nothing about
    the release and are ignored).

    Returns ``{"names": [...], "consistent": [plugin releases], "gpu_operator":
    [GPU Operator releases deploying one of them], "unexplained": {release:
    [names it cannot produce]}, "unavailable": [releases whose pci.ids is not
    installed], "chosen": newest consistent profile or None}``."""
    from ..naming.profiles import load_registry

    resolver = _resolver(resolver)
    pci = sorted({n for n in names if resource_kind(n) == "pci"})
    registry = load_registry()
    consistent, unavailable, unexplained = [], [], {}
    for profile in registry.plugin_releases():
        try:
            missing = [n for n in pci if not resolver.reverse(n, profile.name)]
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


def _resolver(resolver):
    if resolver is not None:
        return resolver
    from ..api import default_resolver

    return default_resolver()


def choose_profile(profile, nodes: Iterable[dict], *, resolver=None) -> tuple[object, str, dict | None]:
    """(profile, how it was chosen, inference): ``auto`` infers it from the
    names the nodes advertise (the newest consistent plugin release), falling
    back to the default profile when nothing can be inferred."""
    if profile is None:
        profile = DEFAULT_PROFILE
    if not (isinstance(profile, str) and profile.strip().lower() == AUTO):
        return profile, "given", None
    inference = infer_profiles(advertised(nodes), resolver=resolver)
    if inference["chosen"]:
        return inference["chosen"], "inferred", inference
    return DEFAULT_PROFILE, "default (nothing to infer from)", inference


# -- audit ----------------------------------------------------------------------


def audit(kubevirt: dict | None, nodes: list[dict], profile=DEFAULT_PROFILE, *, resolver=None) -> dict:
    """Compare the KubeVirt CR's permitted names with what the nodes advertise
    and with the profile (``auto``: inferred from the nodes).

    Findings (``code``, ``resource_name``, ``message``, ``expected`` and, for
    the CR's entries, ``path``): ``permitted-not-advertised``,
    ``advertised-not-permitted`` and the lint codes of the CR's entries
    (``wrong-resource-name``, ``wrong-mdev-resource-name``,
    ``missing-external-resource-provider``, ``invalid-resource-name``, ...)."""
    from .lint import lint_data

    resolver = _resolver(resolver)
    chosen, how, inference = choose_profile(profile, nodes, resolver=resolver)
    if inference is None:
        inference = infer_profiles(advertised(nodes), resolver=resolver)
    canonical = resolver.view(chosen).profile.name
    on_nodes = advertised(nodes)
    entries = permitted_entries(kubevirt)
    findings: list[dict] = []

    ref = _ref(kubevirt) or "(no KubeVirt CR)"
    if kubevirt is not None:
        for f in lint_data(kubevirt, ref, chosen, resolver=resolver):
            findings.append(
                {
                    "code": f.code,
                    "resource_name": f.value if isinstance(f.value, str) and f.value.startswith(_PREFIX) else None,
                    "path": f.path,
                    "value": f.value,
                    "expected": f.expected,
                    "message": f.message,
                }
            )
    permitted_names = {e["resource_name"] for e in entries if e["resource_name"]}
    permitted = []
    for entry in entries:
        name = entry["resource_name"]
        row = dict(entry)
        row["expected"] = _expected(entry, chosen, resolver)
        row["nodes"] = dict(sorted(on_nodes.get(name, {}).items())) if name else {}
        permitted.append(row)
    for name in sorted(permitted_names):
        if name.startswith(_PREFIX) and name not in on_nodes:
            findings.append(
                {
                    "code": PERMITTED_NOT_ADVERTISED,
                    "resource_name": name,
                    "path": None,
                    "value": name,
                    "expected": None,
                    "message": f"{name} is permitted but no node advertises it: VMs asking for it stay Pending",
                }
            )
    adv_rows = []
    for name in sorted(on_nodes):
        kind = resource_kind(name)
        is_permitted = name in permitted_names
        adv_rows.append(
            {"resource_name": name, "kind": kind, "permitted": is_permitted, "nodes": dict(sorted(on_nodes[name].items()))}
        )
        if kind in ("pci", "mdev") and not is_permitted:
            nodes_list = ", ".join(sorted(on_nodes[name]))
            findings.append(
                {
                    "code": ADVERTISED_NOT_PERMITTED,
                    "resource_name": name,
                    "path": None,
                    "value": name,
                    "expected": None,
                    "message": f"{name} is advertised on {nodes_list} but not permitted in {ref}: "
                    "KubeVirt rejects VMs asking for it",
                }
            )
    return {
        "kubevirt": _ref(kubevirt),
        "profile": canonical,
        "profile_source": how,
        "inference": inference,
        "management": management(kubevirt),
        "permitted": permitted,
        "advertised": adv_rows,
        "findings": findings,
    }


def _expected(entry: dict, profile, resolver) -> str | None:
    selector = entry.get("selector")
    if not isinstance(selector, str):
        return None
    if entry["kind"] == "mdev":
        return checks.mdev_resource_name(selector)
    try:
        return resolver.resolve(selector, profile).resource_name
    except PcinameError:
        return None


# -- gpu options ----------------------------------------------------------------


def gpu_options(kubevirt: dict | None, nodes: list[dict], profile=DEFAULT_PROFILE, *, resolver=None) -> list[dict]:
    """What a Cozystack tenant node pool may ask for, as its dashboard offers
    it: every permitted resource name (in CR order, once) with the GPU model
    (``NVIDIA GA102GL [A10]``), the device ids or vGPU types behind it, and how
    many are allocatable on which nodes."""
    resolver = _resolver(resolver)
    chosen, _, _ = choose_profile(profile, nodes, resolver=resolver)
    per_node = node_resources(nodes)
    options: dict[str, dict] = {}
    for entry in permitted_entries(kubevirt):
        name = entry["resource_name"]
        if not name:
            continue
        option = options.setdefault(
            name,
            {"resource_name": name, "kind": entry["kind"], "selectors": [], "devices": [], "models": [], "allocatable": 0, "nodes": []},
        )
        selector = entry["selector"]
        if selector and selector not in option["selectors"]:
            option["selectors"].append(selector)
            if entry["kind"] == "pci":
                device, model = _model(selector, chosen, resolver)
                if device and device not in option["devices"]:
                    option["devices"].append(device)
                if model and model not in option["models"]:
                    option["models"].append(model)
            elif selector not in option["models"]:
                option["models"].append(selector)  # a vGPU type's name is its model
    for name, option in options.items():
        rows = [
            {"name": node, "allocatable": counts["allocatable"]}
            for node, counts in sorted(per_node.get(name, {}).items())
            if counts["allocatable"] > 0
        ]
        option["nodes"] = rows
        option["allocatable"] = sum(r["allocatable"] for r in rows)
    return list(options.values())


def _model(selector: str, profile, resolver) -> tuple[str | None, str | None]:
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
    if r.device.startswith("10de:"):
        vendor_label = "NVIDIA"
    else:
        vendor_label = r.vendor_name or vendor
    return r.device, f"{vendor_label} {device_name or 'device ' + device}"


# -- apply ------------------------------------------------------------------------


def apply_body(kubevirt: dict, permitted: dict) -> dict:
    """The server-side apply object: only what pciname owns."""
    meta = kubevirt.get("metadata") or {}
    return {
        "apiVersion": f"{GROUP}/{VERSION}",
        "kind": "KubeVirt",
        "metadata": {"name": meta.get("name"), "namespace": meta.get("namespace")},
        "spec": {"configuration": {"permittedHostDevices": permitted}},
    }


def refusal(kubevirt: dict) -> str | None:
    """Why pciname must not apply to this CR, or None."""
    info = management(kubevirt)
    ref = _ref(kubevirt)
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


# -- I/O through the kubernetes client ------------------------------------------


@dataclass
class ClusterState:
    kubevirt: dict | None
    nodes: list[dict]


def connect(kubeconfig: str | None = None, context: str | None = None):
    """An ``ApiClient`` for the kubeconfig (``$KUBECONFIG``, ``~/.kube/config``,
    else in-cluster), never writing the kubeconfig back."""
    import os

    from kubernetes import config as kube_config
    from kubernetes.client import ApiClient, Configuration
    from kubernetes.config.config_exception import ConfigException

    import yaml

    from ..files import MAX_KUBECONFIG_BYTES, read_bounded

    path = kubeconfig
    try:
        default_file = os.path.expanduser(os.environ.get("KUBECONFIG", "~/.kube/config").split(os.pathsep)[0])
        if kubeconfig is None and context is None and not os.path.exists(default_file):
            configuration = Configuration()
            kube_config.load_incluster_config(client_configuration=configuration)
            return ApiClient(configuration=configuration)
        path = kubeconfig or default_file
        # A regular file of a sane size, before the client reads it whole.
        read_bounded(path, MAX_KUBECONFIG_BYTES)
        return kube_config.new_client_from_config(config_file=kubeconfig, context=context, persist_config=False)
    except ConfigException as error:
        raise PcinameError(f"cannot load the cluster configuration: {_one_line(error)}") from None
    except OSError as error:
        raise PcinameError(f"cannot read kubeconfig {path or ''}: {error.strerror or error}") from None
    except (yaml.YAMLError, ValueError, TypeError, AttributeError, KeyError) as error:
        # Not YAML (a binary file), YAML values its constructors refuse
        # (!!timestamp 2020-13-45, 0x_), or YAML of the wrong shape.
        raise PcinameError(f"cannot load kubeconfig {path}: not a valid kubeconfig: {_one_line(error)[:200]}") from None


def _one_line(error) -> str:
    return " ".join(str(error).split())


def _call(what: str, fn, *args, **kwargs):
    """Run a client call; API and connection errors become PcinameError."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        return fn(*args, **kwargs)
    except ApiException as error:
        raise _api_error(what, error) from None
    except HTTPError as error:
        raise ClusterError(f"cannot {what}: cannot reach the API server: {_one_line(error)}", reason="unreachable") from None


def _status_message(error) -> str:
    try:
        body = json.loads(error.body or "")
        return body.get("message") or error.reason or ""
    except (TypeError, ValueError, AttributeError):
        return error.reason or ""


def _api_error(what: str, error) -> PcinameError:
    return ClusterError(
        f"cannot {what}: {error.status} {_one_line(_status_message(error))}".rstrip(), reason="refused", status=error.status
    )


def _json(response) -> dict:
    try:
        return json.loads(response.data)
    except (TypeError, ValueError) as error:
        raise ClusterError(f"the API server sent something that is not JSON: {error}", reason="unreachable") from None


def _timeout(timeout: float | None) -> dict:
    """The client's ``_request_timeout`` (connect and read) when one is set."""
    return {} if timeout is None else {"_request_timeout": max(float(timeout), 0.001)}


def read_kubevirt(api_client, name: str | None = None, *, timeout: float | None = None) -> dict | None:
    """The KubeVirt CR (None when there is none, or KubeVirt is not
    installed); ``name`` (``[NAMESPACE/]NAME``) picks one of several.
    ``timeout``: seconds for the request (default: none)."""
    from kubernetes.client import CustomObjectsApi

    try:
        listing = _call(
            "list KubeVirt CRs",
            _not_found_is_none,
            CustomObjectsApi(api_client).list_cluster_custom_object,
            GROUP,
            VERSION,
            PLURAL,
            **_timeout(timeout),
        )
    except _NotFound:
        listing = None
    items = (listing or {}).get("items") or []
    if name:
        namespace, _, short = name.rpartition("/")
        items = [
            i
            for i in items
            if (i.get("metadata") or {}).get("name") == short
            and (not namespace or (i.get("metadata") or {}).get("namespace") == namespace)
        ]
        if not items:
            raise ClusterError(f"no KubeVirt CR {name} in the cluster", reason="not-found")
    if len(items) > 1:
        names = ", ".join(_ref(i) or "?" for i in items)
        raise ClusterError(
            f"the cluster has several KubeVirt CRs ({names}): choose one with --kubevirt NAMESPACE/NAME",
            reason="ambiguous",
        )
    return items[0] if items else None


class _NotFound(Exception):
    pass


def _not_found_is_none(fn, *args, **kwargs):
    from kubernetes.client.exceptions import ApiException

    try:
        return fn(*args, **kwargs)
    except ApiException as error:
        if error.status == 404:
            raise _NotFound() from None
        raise


def read_nodes(api_client, *, timeout: float | None = None) -> list[dict]:
    from kubernetes.client import CoreV1Api

    response = _call("list nodes", CoreV1Api(api_client).list_node, _preload_content=False, **_timeout(timeout))
    return _json(response).get("items") or []


def read_cluster(api_client, kubevirt_name: str | None = None, *, timeout: float | None = None) -> ClusterState:
    """The KubeVirt CR and the Nodes; ``timeout`` applies to each request.
    Raises ClusterError when the API server cannot be reached or refuses."""
    return ClusterState(read_kubevirt(api_client, kubevirt_name, timeout=timeout), read_nodes(api_client, timeout=timeout))


def apply_permitted_host_devices(
    api_client, kubevirt: dict, permitted: dict, *, force: bool = False, dry_run: bool = False
) -> dict:
    """Server-side apply ``permitted`` as the CR's permittedHostDevices, field
    manager ``pciname``. Raises ApplyRefused when another controller manages
    the field (Cozystack, HyperConverged) or the server reports a conflict
    (another field manager owns it; ``force`` takes it over). Returns the
    permittedHostDevices of the object the server sent back."""
    from kubernetes.client import CustomObjectsApi

    reason = refusal(kubevirt)
    if reason:
        raise ApplyRefused(f"refusing to apply: {reason}")
    meta = kubevirt.get("metadata") or {}
    kwargs = {"field_manager": FIELD_MANAGER, "_content_type": APPLY_CONTENT_TYPE}
    if force:
        kwargs["force"] = True
    if dry_run:
        kwargs["dry_run"] = "All"
    api = CustomObjectsApi(api_client)
    try:
        result = _call(
            f"apply to KubeVirt {_ref(kubevirt)}",
            _raise_api,
            api.patch_namespaced_custom_object,
            GROUP,
            VERSION,
            meta.get("namespace"),
            PLURAL,
            meta.get("name"),
            apply_body(kubevirt, permitted),
            **kwargs,
        )
    except _Conflict as conflict:
        raise ApplyRefused(
            f"the API server refused the apply to {_ref(kubevirt)}: {conflict}; "
            "rerun with --force to take ownership of these fields"
        ) from None
    return (((result or {}).get("spec") or {}).get("configuration") or {}).get("permittedHostDevices") or {}


class _Conflict(Exception):
    pass


def _raise_api(fn, *args, **kwargs):
    from kubernetes.client.exceptions import ApiException

    try:
        return fn(*args, **kwargs)
    except ApiException as error:
        if error.status == 409:
            raise _Conflict(_one_line(_status_message(error)) or "conflict") from None
        raise
