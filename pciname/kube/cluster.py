"""A live cluster through the official ``kubernetes`` client: connect,
read the KubeVirt CR and the Nodes, server-side apply permittedHostDevices,
and turn the client's errors into :class:`~pciname.errors.ClusterError` /
:class:`~pciname.errors.ApplyRefused`.

The only module that imports ``kubernetes``; what the objects mean (audit,
GPU options, who manages the CR, the apply object) is pure and lives in
:mod:`pciname.kube.objects` and :mod:`pciname.kube.audit`. Read-only except
:func:`apply_permitted_host_devices`, which sends one server-side apply PATCH
(``Content-Type: application/apply-patch+yaml``, ``fieldManager=pciname``;
``force=true`` only when asked) to the KubeVirt CR, after
:func:`~pciname.kube.objects.refusal` found no other manager of the field.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import ApplyRefused, ClusterError, PcinameError
from .objects import FIELD_MANAGER, GROUP, PLURAL, VERSION, KubeObject, apply_body, object_ref, refusal

if TYPE_CHECKING:
    # What connect() returns and the other functions take (re-exported for callers' annotations).
    from kubernetes.client import ApiClient as ApiClient

APPLY_CONTENT_TYPE = "application/apply-patch+yaml"


@dataclass
class ClusterState:
    """What :func:`read_cluster` read: the KubeVirt CR (None: there is none)
    and the Nodes."""

    kubevirt: KubeObject | None
    nodes: list[KubeObject]


# -- connecting -------------------------------------------------------------------


def connect(kubeconfig: str | None = None, context: str | None = None) -> ApiClient:
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
            kube_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            return ApiClient(configuration=configuration)
        path = kubeconfig or default_file
        # A regular file of a sane size, before the client reads it whole.
        read_bounded(path, MAX_KUBECONFIG_BYTES)
        client: ApiClient = kube_config.new_client_from_config(  # type: ignore[no-untyped-call]
            config_file=kubeconfig, context=context, persist_config=False
        )
        return client
    except ConfigException as error:
        raise PcinameError(f"cannot load the cluster configuration: {_one_line(error)}") from None
    except OSError as error:
        raise PcinameError(f"cannot read kubeconfig {path or ''}: {error.strerror or error}") from None
    except (yaml.YAMLError, ValueError, TypeError, AttributeError, KeyError) as error:
        # Not YAML (a binary file), YAML values its constructors refuse
        # (!!timestamp 2020-13-45, 0x_), or YAML of the wrong shape.
        raise PcinameError(f"cannot load kubeconfig {path}: not a valid kubeconfig: {_one_line(error)[:200]}") from None


# -- the client's errors ------------------------------------------------------------


def _one_line(error: object) -> str:
    return " ".join(str(error).split())


class _Answered(Exception):
    """The API server answered a status the caller handles itself."""

    def __init__(self, error: Any) -> None:
        super().__init__(error.status)
        self.error = error


def _call(what: str, fn: Callable[..., Any], *args: Any, handled: tuple[int, ...] = (), **kwargs: Any) -> Any:
    """Run a client call: API and connection errors become ClusterError,
    except the statuses in ``handled`` (raised as :class:`_Answered`)."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        return fn(*args, **kwargs)
    except ApiException as error:
        if error.status in handled:
            raise _Answered(error) from None
        raise _api_error(what, error) from None
    except HTTPError as error:
        raise ClusterError(f"cannot {what}: cannot reach the API server: {_one_line(error)}", reason="unreachable") from None


def _status_message(error: Any) -> str:
    """The message of the Status object an ``ApiException`` carries."""
    try:
        body = json.loads(error.body or "")
        return str(body.get("message") or error.reason or "")
    except (TypeError, ValueError, AttributeError):
        return str(error.reason or "")


def _api_error(what: str, error: Any) -> PcinameError:
    return ClusterError(
        f"cannot {what}: {error.status} {_one_line(_status_message(error))}".rstrip(), reason="refused", status=error.status
    )


def _json(response: Any) -> dict[str, Any]:
    try:
        data: dict[str, Any] = json.loads(response.data)
        return data
    except (TypeError, ValueError) as error:
        raise ClusterError(f"the API server sent something that is not JSON: {error}", reason="unreachable") from None


def _timeout(timeout: float | None) -> dict[str, Any]:
    """The client's ``_request_timeout`` (connect and read) when one is set."""
    return {} if timeout is None else {"_request_timeout": max(float(timeout), 0.001)}


# -- reading ------------------------------------------------------------------------


def read_kubevirt(api_client: ApiClient, name: str | None = None, *, timeout: float | None = None) -> KubeObject | None:
    """The KubeVirt CR (None when there is none, or KubeVirt is not
    installed); ``name`` (``[NAMESPACE/]NAME``) picks one of several.
    ``timeout``: seconds for the request (default: none)."""
    from kubernetes.client import CustomObjectsApi

    try:
        listing = _call(
            "list KubeVirt CRs",
            CustomObjectsApi(api_client).list_cluster_custom_object,
            GROUP,
            VERSION,
            PLURAL,
            handled=(404,),
            **_timeout(timeout),
        )
    except _Answered:  # 404: KubeVirt is not installed
        listing = None
    items: list[KubeObject] = (listing or {}).get("items") or []
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
        names = ", ".join(object_ref(i) or "?" for i in items)
        raise ClusterError(
            f"the cluster has several KubeVirt CRs ({names}): choose one with --kubevirt NAMESPACE/NAME",
            reason="ambiguous",
        )
    return items[0] if items else None


def read_nodes(api_client: ApiClient, *, timeout: float | None = None) -> list[KubeObject]:
    """Every Node, as the API server returns it."""
    from kubernetes.client import CoreV1Api

    response = _call("list nodes", CoreV1Api(api_client).list_node, _preload_content=False, **_timeout(timeout))
    nodes: list[KubeObject] = _json(response).get("items") or []
    return nodes


def read_cozystack_operator(api_client: ApiClient, *, timeout: float | None = None) -> KubeObject | None:
    """The Deployment of Cozystack's operator (``cozy-system/cozystack-operator``,
    :mod:`pciname.kube.cozystack`), None when there is none or it may not be
    read (the cluster does not run Cozystack, or RBAC forbids it: then the
    release is taken from ``--cozystack``)."""
    from kubernetes.client import AppsV1Api

    from .cozystack import OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE

    try:
        response = _call(
            "read the Cozystack operator Deployment",
            AppsV1Api(api_client).read_namespaced_deployment,
            OPERATOR_DEPLOYMENT,
            OPERATOR_NAMESPACE,
            handled=(403, 404),
            _preload_content=False,
            **_timeout(timeout),
        )
    except _Answered:
        return None
    return _json(response)


def read_cluster(api_client: ApiClient, kubevirt_name: str | None = None, *, timeout: float | None = None) -> ClusterState:
    """The KubeVirt CR and the Nodes; ``timeout`` applies to each request.
    Raises ClusterError when the API server cannot be reached or refuses."""
    return ClusterState(read_kubevirt(api_client, kubevirt_name, timeout=timeout), read_nodes(api_client, timeout=timeout))


# -- applying -----------------------------------------------------------------------


def apply_permitted_host_devices(
    api_client: ApiClient, kubevirt: KubeObject, permitted: dict[str, Any], *, force: bool = False, dry_run: bool = False
) -> dict[str, Any]:
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
    kwargs: dict[str, Any] = {"field_manager": FIELD_MANAGER, "_content_type": APPLY_CONTENT_TYPE}
    if force:
        kwargs["force"] = True
    if dry_run:
        kwargs["dry_run"] = "All"
    api = CustomObjectsApi(api_client)
    try:
        result = _call(
            f"apply to KubeVirt {object_ref(kubevirt)}",
            api.patch_namespaced_custom_object,
            GROUP,
            VERSION,
            meta.get("namespace"),
            PLURAL,
            meta.get("name"),
            apply_body(kubevirt, permitted),
            handled=(409,),
            **kwargs,
        )
    except _Answered as conflict:
        raise ApplyRefused(
            f"the API server refused the apply to {object_ref(kubevirt)}: "
            f"{_one_line(_status_message(conflict.error)) or 'conflict'}; "
            "rerun with --force to take ownership of these fields"
        ) from None
    applied: dict[str, Any] = (((result or {}).get("spec") or {}).get("configuration") or {}).get("permittedHostDevices") or {}
    return applied
