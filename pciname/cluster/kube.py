"""A live cluster through the official ``kubernetes`` client: connect,
read the KubeVirt CR, the Nodes and (for HAMi) the Pods, server-side apply permittedHostDevices,
and turn the client's errors into :class:`~pciname.errors.ClusterError` /
:class:`~pciname.errors.ApplyRefused`.

The only module that imports ``kubernetes``; what the objects mean (audit,
GPU options, who manages the CR, the apply object) is pure and lives in
:mod:`pciname.kubevirt.objects` and :mod:`pciname.policy.audit`. Read-only except
:func:`apply_permitted_host_devices`, which sends one server-side apply PATCH
(``Content-Type: application/apply-patch+yaml``, ``fieldManager=pciname``;
``force=true`` only when asked) to the KubeVirt CR, after
:func:`~pciname.kubevirt.objects.refusal` found no other manager of the field.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from pciname.errors import ApplyRefused, ClusterError, PcinameBaseError, PcinameError
from pciname.kubevirt.objects import FIELD_MANAGER, GROUP, PLURAL, VERSION, KubeObject, apply_body, object_ref, refusal

if TYPE_CHECKING:
    # What connect() returns and the other functions take (re-exported for callers' annotations).
    from kubernetes.client import ApiClient as ApiClient

    from pciname.cluster.kubeconfig import Loaded

APPLY_CONTENT_TYPE = "application/apply-patch+yaml"

# What a cluster command (and GpuOptions from_cluster) waits for and reads;
# the README's limits section states them.
#: Seconds all the API requests of one command may take together (``--timeout``,
#: and ``serve --kube-timeout``'s default).
DEFAULT_TIMEOUT = 30.0
#: Bytes of one API answer (a page of Nodes, the KubeVirt CR list, the apply's answer).
MAX_RESPONSE_BYTES = 32 << 20
#: Bytes read of an error answer (4xx, 5xx): its Status message is in them;
#: the rest is never read (the connection is closed).
MAX_ERROR_BYTES = 64 << 10
#: Characters of an error answer's message in our one-line error.
MAX_MESSAGE_CHARS = 300
#: Nodes asked for per request (``limit``; the rest with ``continue``), as kubectl pages.
NODE_PAGE = 500
#: Nodes read in all (Kubernetes supports clusters of 5,000).
MAX_NODES = 20_000
#: Pages of Nodes read in all: what :data:`MAX_NODES` takes at :data:`NODE_PAGE`
#: a page. Past it, or when a ``continue`` token comes back a second time, the
#: API server's paging does not end (one line, not ``--timeout`` of requests).
MAX_NODE_PAGES = -(-MAX_NODES // NODE_PAGE)


@dataclass
class ClusterState:
    """What :func:`read_cluster` read: the KubeVirt CR (None: there is none)
    and the Nodes."""

    kubevirt: KubeObject | None
    nodes: list[KubeObject]
    #: The Events the host doctor posted on Nodes (:func:`read_doctor_events`; None: not read).
    doctor_events: list[KubeObject] | None = None


# -- connecting -------------------------------------------------------------------


def connect(kubeconfig: str | None = None, context: str | None = None, *, timeout: float | None = None) -> ApiClient:
    """An ``ApiClient`` for the kubeconfig (``$KUBECONFIG``, ``~/.kube/config``,
    else in-cluster), never writing the kubeconfig back. Its files are read
    bounded and a credential plugin runs within ``timeout`` seconds
    (:mod:`pciname.cluster.kubeconfig`)."""
    return connect_loaded(kubeconfig, context, timeout=timeout)[0]


def connect_loaded(
    kubeconfig: str | None = None, context: str | None = None, *, timeout: float | None = None
) -> tuple[ApiClient, Loaded]:
    """:func:`connect`, and the :class:`~pciname.cluster.kubeconfig.Loaded`
    configuration (to tell when to connect again)."""
    from kubernetes import config as kube_config
    from kubernetes.client import ApiClient, Configuration
    from kubernetes.config.config_exception import ConfigException

    from pciname.cluster.kubeconfig import load

    loaded = load(kubeconfig, context, timeout)
    configuration = Configuration()
    # No retries of its own: urllib3 would try a request that timed out three
    # times more, each with the whole timeout (--timeout 2 took 8 s).
    configuration.retries = 0
    try:
        if loaded.config is None:
            _load_in_cluster(configuration)
            return bounded(ApiClient(configuration=configuration)), loaded
        client: ApiClient = kube_config.new_client_from_config_dict(  # type: ignore[no-untyped-call]
            config_dict=loaded.config,
            context=loaded.config["current-context"],
            persist_config=False,
            client_configuration=configuration,
        )
        return bounded(client), loaded
    except ConfigException as error:
        raise PcinameError(f"cannot load the cluster configuration: {_one_line(error)}") from None
    except OSError as error:
        raise PcinameError(f"cannot load the cluster configuration: {error.strerror or error}") from None
    except (ValueError, TypeError, AttributeError, KeyError) as error:
        # Values of the wrong shape the client trips over.
        raise PcinameError(
            f"cannot load the cluster configuration: not a valid kubeconfig: {_one_line(error)[:200]}"
        ) from None


#: What a command says when it finds no cluster to talk to: neither a
#: kubeconfig nor a pod's service account.
NO_CLUSTER = (
    "no cluster configuration found: give a kubeconfig (--kubeconfig FILE, $KUBECONFIG or ~/.kube/config), "
    "or run in a pod, where its service account is used (in-cluster)"
)


def _load_in_cluster(configuration: Any) -> None:
    """The in-cluster configuration (the pod's service account) into
    ``configuration``; when there is none (not in a pod: no
    KUBERNETES_SERVICE_HOST/PORT; or no service account token mounted), a
    :class:`PcinameError` saying :data:`NO_CLUSTER` in pciname's words."""
    from kubernetes import config as kube_config
    from kubernetes.config.config_exception import ConfigException

    try:
        kube_config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
    except ConfigException:
        raise PcinameError(NO_CLUSTER) from None


# -- error answers, read bounded before the client sees them ----------------------------


class _Refusal(PcinameBaseError):
    """A non-2xx answer (``status``, ``reason``), its body read by
    :class:`_BoundedPool`: at most :data:`MAX_ERROR_BYTES`, within the
    request's time (``body``: what arrived, decoded with replacement)."""

    def __init__(self, status: int, reason: str | None, body: str) -> None:
        super().__init__(status)
        self.status = status
        self.reason = reason
        self.body = body


def _read_some(response: Any, limit: int, deadline: float | None) -> tuple[bytes, bool]:
    """Up to ``limit`` bytes of ``response``'s body, one socket read at a
    time, each within what is left before ``deadline``: what arrived when
    the body ends, the time runs out or the connection fails, and whether
    that was the whole body."""
    from urllib3.exceptions import HTTPError

    chunks: list[bytes] = []
    size = 0
    read = getattr(response, "read1", response.read)
    try:
        while size < limit:
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                break
            sock = getattr(getattr(response, "connection", None), "sock", None)
            if left is not None and sock is not None:
                sock.settimeout(left)
            chunk = read(min(65536, limit - size))
            if not chunk:
                return b"".join(chunks), True
            chunks.append(chunk)
            size += len(chunk)
    except (HTTPError, OSError):
        pass
    return b"".join(chunks), False


class _BoundedPool:
    """The kubernetes client's urllib3 pool manager, except that an answer
    that is not 2xx is read here, bounded in size (:data:`MAX_ERROR_BYTES`)
    and time (the request's own timeout), and raised as :class:`_Refusal`
    before the client reads the whole body itself (it does, unbounded,
    for every error answer). 2xx answers go to the caller unread
    (``_preload_content=False``; :func:`_body` bounds them)."""

    def __init__(self, pool: Any) -> None:
        self._pool = pool

    def __getattr__(self, name: str) -> Any:
        return getattr(self._pool, name)

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        started = time.monotonic()
        total = getattr(kwargs.get("timeout"), "total", None)
        response = self._pool.request(method, url, *args, **kwargs)
        status = getattr(response, "status", 0)
        if 200 <= status <= 299 or kwargs.get("preload_content", True):
            return response
        deadline = None if total is None else started + float(total)
        try:
            data, whole = _read_some(response, MAX_ERROR_BYTES, deadline)
        finally:
            response.close()  # what was not read is never read: this connection is done
            response.release_conn()
        # A body cut short (too long, too slow) ends in "…" where it was cut.
        raise _Refusal(status, response.reason, data.decode("utf-8", "replace") + ("" if whole else "…"))


def bounded(api_client: ApiClient) -> ApiClient:
    """``api_client`` with its error answers read bounded (:class:`_BoundedPool`);
    :func:`connect` returns such clients, and every read here makes sure of it."""
    rest = getattr(api_client, "rest_client", None)
    pool = getattr(rest, "pool_manager", None)
    if rest is not None and pool is not None and not isinstance(pool, _BoundedPool):
        rest.pool_manager = _BoundedPool(pool)
    return api_client


# -- the client's errors ------------------------------------------------------------


def _one_line(error: object) -> str:
    return " ".join(str(error).split())


class _Answered(PcinameBaseError):
    """The API server answered a status the caller handles itself."""

    def __init__(self, error: Any) -> None:
        super().__init__(error.status)
        self.error = error


def _call(
    what: str,
    fn: Callable[..., Any],
    *args: Any,
    handled: tuple[int, ...] = (),
    nominal: float | None = None,
    **kwargs: Any,
) -> Any:
    """Run a client call: API and connection errors become ClusterError,
    except the statuses in ``handled`` (raised as :class:`_Answered`)."""
    from kubernetes.client.exceptions import ApiException
    from urllib3.exceptions import HTTPError

    try:
        return fn(*args, **kwargs)
    except (_Refusal, ApiException) as error:
        if error.status in handled:
            raise _Answered(error) from None
        raise _api_error(what, error) from None
    except HTTPError as error:
        raise _unreachable(what, error, nominal if nominal is not None else kwargs.get("_request_timeout")) from None


def _unreachable(what: str, error: Exception, timeout: float | None) -> ClusterError:
    """ClusterError for a connection that failed; a timeout says how long was waited."""
    from urllib3.exceptions import MaxRetryError, NewConnectionError, TimeoutError as Urllib3Timeout

    cause = error.reason if isinstance(error, MaxRetryError) else error
    # (NewConnectionError, a refused connection, is a ConnectTimeoutError to urllib3)
    if isinstance(cause, Urllib3Timeout) and not isinstance(cause, NewConnectionError) and timeout is not None:
        shown = math.ceil(timeout * 10) / 10  # what was left of --timeout: 0.9998 -> 1
        return ClusterError(
            f"cannot {what}: the API server did not answer within {shown:g} seconds", reason="unreachable"
        )
    return ClusterError(f"cannot {what}: cannot reach the API server: {_one_line(error)}", reason="unreachable")


def _excerpt(text: str) -> str:
    """``text`` on one line, control characters escaped, at most
    :data:`MAX_MESSAGE_CHARS` characters (``…`` where it was cut)."""
    from pciname.base.render import printable

    line = printable(_one_line(text))
    return line if len(line) <= MAX_MESSAGE_CHARS else line[: MAX_MESSAGE_CHARS - 1] + "…"


def _status_message(error: Any) -> str:
    """The message of the Status object an error answer carries; for a body
    that is not one, the HTTP reason and an excerpt of the body."""
    body = error.body if isinstance(error.body, str) else ""
    reason = error.reason if isinstance(error.reason, str) else ""
    try:
        status = json.loads(body) if body.strip() else None
    except (ValueError, RecursionError):
        status = None
    if isinstance(status, dict) and isinstance(status.get("message"), str) and status["message"].strip():
        return _excerpt(status["message"])
    if status is None and body.strip():
        return _excerpt(f"{reason}: {body}" if reason.strip() else body)
    return _excerpt(reason)


def _api_error(what: str, error: Any) -> PcinameError:
    return ClusterError(
        f"cannot {what}: {error.status} {_status_message(error)}".rstrip(),
        reason="refused",
        status=error.status,
    )


def _timeout(timeout: float | None) -> dict[str, Any]:
    """The client's ``_request_timeout`` (connect and each read) when one is set."""
    return {} if timeout is None else {"_request_timeout": max(float(timeout), 0.001)}


class _Clock:
    """The time one command (or RPC) may spend on the API server, all its
    requests and every read of their bodies together."""

    def __init__(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.deadline = None if timeout is None else time.monotonic() + timeout

    def remaining(self, what: str) -> float | None:
        if self.deadline is None:
            return None
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise ClusterError(
                f"cannot {what}: the API server did not answer within {self.timeout:g} seconds", reason="unreachable"
            )
        return left

    def options(self, what: str) -> dict[str, Any]:
        """``_call``'s keywords: the time left for the request, and the whole timeout (for its message)."""
        return {**_timeout(self.remaining(what)), "nominal": self.timeout}


def _body(what: str, response: Any, clock: _Clock) -> bytes:
    """The body of a ``_preload_content=False`` response, at most
    :data:`MAX_RESPONSE_BYTES`, read in steps within the clock's time (a
    body trickled byte by byte runs out of it)."""
    from urllib3.exceptions import HTTPError

    chunks: list[bytes] = []
    size = 0
    try:
        length = int(response.headers.get("Content-Length") or 0)
        if length > MAX_RESPONSE_BYTES:
            raise ClusterError(
                f"cannot {what}: the API server's answer is {length} bytes, more than the {MAX_RESPONSE_BYTES} allowed",
                reason="unreachable",
            )
        read = getattr(response, "read1", response.read)  # urllib3 2: at most one read of the socket
        while True:
            left = clock.remaining(what)
            sock = getattr(getattr(response, "connection", None), "sock", None)
            if left is not None and sock is not None:
                sock.settimeout(left)  # no single read outlasts the clock
            chunk = read(65536)
            if not chunk:
                break
            size += len(chunk)
            if size > MAX_RESPONSE_BYTES:
                raise ClusterError(
                    f"cannot {what}: the API server's answer is more than the {MAX_RESPONSE_BYTES} bytes allowed",
                    reason="unreachable",
                )
            chunks.append(chunk)
    except (HTTPError, OSError) as error:
        raise _unreachable(what, error, clock.timeout) from None
    finally:
        response.release_conn()
    return b"".join(chunks)


def _json(what: str, response: Any, clock: _Clock) -> Any:
    from pciname.kubevirt.shapes import ShapeError, decode_json

    try:
        return decode_json(_body(what, response, clock), "the API server's answer")
    except ShapeError as error:
        raise ClusterError(f"cannot {what}: {error}", reason="unreachable") from None


def _items(what: str, answer: Any, kind: str) -> tuple[list[KubeObject], str | None]:
    """A List answer's items and its ``metadata.continue`` (None: the last page)."""
    from pciname.kubevirt.shapes import ShapeError, list_items, mapping

    try:
        items = list_items(answer, kind, "the API server's answer")
        token = mapping(answer.get("metadata"), f"the API server's answer: {kind} metadata").get("continue")
    except ShapeError as error:
        raise ClusterError(f"cannot {what}: {error}", reason="unreachable") from None
    if token is not None and not isinstance(token, str):
        raise ClusterError(
            f"cannot {what}: the API server's answer: {kind} metadata.continue is not a string", reason="unreachable"
        )
    return items, token or None


def _checked(what: str, check: Callable[[KubeObject, str], None], items: list[KubeObject], kind: str) -> None:
    from pciname.kubevirt.shapes import ShapeError

    for i, item in enumerate(items):
        try:
            check(item, f"{kind}[{i}]")
        except ShapeError as error:
            raise ClusterError(f"cannot {what}: the API server sent {error}", reason="unreachable") from None


# -- reading ------------------------------------------------------------------------


def read_kubevirt(
    api_client: ApiClient, name: str | None = None, *, timeout: float | None = None, clock: _Clock | None = None
) -> KubeObject | None:
    """The KubeVirt CR (None when there is none, or KubeVirt is not
    installed); ``name`` (``[NAMESPACE/]NAME``) picks one of several.
    ``timeout``: seconds for the request (default: none)."""
    from kubernetes.client import CustomObjectsApi

    from pciname.kubevirt.shapes import check_kubevirt

    bounded(api_client)
    clock = clock or _Clock(timeout)
    what = "list KubeVirt CRs"
    try:
        response = _call(
            what,
            CustomObjectsApi(api_client).list_cluster_custom_object,
            GROUP,
            VERSION,
            PLURAL,
            handled=(404,),
            _preload_content=False,
            **clock.options(what),
        )
        items, _ = _items(what, _json(what, response, clock), "KubeVirtList")
    except _Answered:  # 404: KubeVirt is not installed
        items = []
    _checked(what, check_kubevirt, items, "KubeVirtList items")
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


def read_nodes(api_client: ApiClient, *, timeout: float | None = None, clock: _Clock | None = None) -> list[KubeObject]:
    """Every Node, as the API server returns it, :data:`NODE_PAGE` at a
    time (``limit`` and ``continue``, as kubectl pages), at most
    :data:`MAX_NODES` in all, in at most :data:`MAX_NODE_PAGES` pages. A
    ``continue`` token the API server sent before, or paging past that many
    pages, is a ClusterError (``unreachable``: the answers are wrong)."""
    import hashlib

    from kubernetes.client import CoreV1Api

    from pciname.kubevirt.shapes import check_node

    bounded(api_client)
    clock = clock or _Clock(timeout)
    what = "list nodes"
    api = CoreV1Api(api_client)
    nodes: list[KubeObject] = []
    token: str | None = None
    seen: set[bytes] = set()  # the tokens' digests: a token may be as long as an answer
    for page in range(1, MAX_NODE_PAGES + 1):
        paging: dict[str, Any] = {"limit": NODE_PAGE}
        if token:
            paging["_continue"] = token
        response = _call(what, api.list_node, _preload_content=False, **paging, **clock.options(what))
        items, token = _items(what, _json(what, response, clock), "NodeList")
        _checked(what, check_node, items, f"NodeList items (from {len(nodes)})")
        nodes.extend(items)
        if len(nodes) > MAX_NODES:
            raise ClusterError(f"cannot {what}: the cluster has more than {MAX_NODES} Nodes", reason="unreachable")
        if token is None:
            return nodes
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        if digest in seen:
            raise ClusterError(
                f"cannot {what}: the API server's NodeList paging does not end: "
                f"continue token repeated after {page} pages",
                reason="unreachable",
            )
        seen.add(digest)
    raise ClusterError(
        f"cannot {what}: the API server's NodeList paging does not end: still a continue token after "
        f"{MAX_NODE_PAGES} pages ({len(nodes)} Nodes; at most {MAX_NODES} are read, {NODE_PAGE} a page)",
        reason="unreachable",
    )


def read_cozystack_operator(
    api_client: ApiClient, *, timeout: float | None = None, clock: _Clock | None = None
) -> KubeObject | None:
    """The Deployment of Cozystack's operator (``cozy-system/cozystack-operator``,
    :mod:`pciname.cozystack.releases`), None when there is none or it may not be
    read (the cluster does not run Cozystack, or RBAC forbids it: then the
    release is taken from ``--cozystack``). Bounded like every read here
    (time, size, shape)."""
    from kubernetes.client import AppsV1Api

    from pciname.cozystack.releases import OPERATOR_DEPLOYMENT, OPERATOR_NAMESPACE
    from pciname.kubevirt.shapes import ShapeError, mapping

    bounded(api_client)
    clock = clock or _Clock(timeout)
    what = "read the Cozystack operator Deployment"
    try:
        response = _call(
            what,
            AppsV1Api(api_client).read_namespaced_deployment,
            OPERATOR_DEPLOYMENT,
            OPERATOR_NAMESPACE,
            handled=(403, 404),
            _preload_content=False,
            **clock.options(what),
        )
    except _Answered:
        return None
    try:
        return mapping(_json(what, response, clock), "the API server's answer: Deployment")
    except ShapeError as error:
        raise ClusterError(f"cannot {what}: {error}", reason="unreachable") from None


def read_cluster(
    api_client: ApiClient, kubevirt_name: str | None = None, *, timeout: float | None = None
) -> ClusterState:
    """The KubeVirt CR and the Nodes; ``timeout`` bounds all the requests
    together. Raises ClusterError when the API server cannot be reached,
    refuses, takes too long or answers what is not a KubeVirt CR list or
    a Node list."""
    clock = _Clock(timeout)
    return ClusterState(read_kubevirt(api_client, kubevirt_name, clock=clock), read_nodes(api_client, clock=clock))


# -- DRA ---------------------------------------------------------------------------

#: What a DRA audit reads a page at a time (as Nodes), and at most of each kind.
DRA_PAGE = 500
MAX_DRA_OBJECTS = 20_000
#: ``resource.k8s.io``: the versions tried, newest first (the first one served is read).
RESOURCE_GROUP = "resource.k8s.io"
RESOURCE_VERSIONS = ("v1", "v1beta2", "v1beta1")
#: The kinds a DRA audit lists (plural, list kind), all namespaces.
DRA_KINDS = (
    ("resourceslices", "ResourceSliceList"),
    ("deviceclasses", "DeviceClassList"),
    ("resourceclaimtemplates", "ResourceClaimTemplateList"),
    ("resourceclaims", "ResourceClaimList"),
)


@dataclass
class DraState:
    """What :func:`read_dra` read: the ``resource.k8s.io`` version served
    (None: none, and no DRA object was read), its objects by plural, and
    the KubeVirt VirtualMachines (none: KubeVirt is not installed)."""

    resource_api: str | None
    objects: dict[str, list[KubeObject]]
    vms: list[KubeObject]


def _check_object(obj: KubeObject, where: str) -> None:
    from pciname.kubevirt.shapes import check_metadata, mapping

    check_metadata(obj, where)
    mapping(obj.get("spec"), f"{where}.spec")


def _paged(
    what: str,
    fetch: Callable[[dict[str, Any]], Any],
    kind: str,
    check: Callable[[KubeObject, str], None],
    most: int,
    page: int,
    clock: _Clock,
) -> list[KubeObject]:
    """Every object a List ``fetch`` (given the ``limit``/``continue`` keywords)
    pages through, as :func:`read_nodes` pages: each checked; more than ``most``,
    or a repeated ``continue`` token, is a ClusterError (``unreachable``)."""
    import hashlib

    found: list[KubeObject] = []
    token: str | None = None
    seen: set[bytes] = set()
    while True:
        paging: dict[str, Any] = {"limit": page, **({"_continue": token} if token else {})}
        items, token = _items(what, _json(what, fetch(paging), clock), kind)
        _checked(what, check, items, f"{kind} items (from {len(found)})")
        found.extend(items)
        if len(found) > most:
            raise ClusterError(f"cannot {what}: the cluster has more than {most} of them", reason="unreachable")
        if token is None:
            return found
        digest = hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()
        if digest in seen:
            raise ClusterError(
                f"cannot {what}: the API server's {kind} paging does not end: continue token repeated",
                reason="unreachable",
            )
        seen.add(digest)


def _list_all(
    api_client: ApiClient, group: str, version: str, plural: str, kind: str, clock: _Clock
) -> list[KubeObject]:
    """Every object of ``group/version/plural`` in all namespaces, paged
    (:func:`_paged`); raises :class:`_Answered` for a 404."""
    from kubernetes.client import CustomObjectsApi

    what = f"list {plural}.{group}/{version}"
    api = CustomObjectsApi(api_client)

    def fetch(paging: dict[str, Any]) -> Any:
        return _call(
            what,
            api.list_cluster_custom_object,
            group,
            version,
            plural,
            handled=(404,),
            _preload_content=False,
            **paging,
            **clock.options(what),
        )

    return _paged(what, fetch, kind, _check_object, MAX_DRA_OBJECTS, DRA_PAGE, clock)


def read_dra(api_client: ApiClient, *, timeout: float | None = None) -> DraState:
    """The cluster's ResourceSlices, DeviceClasses, ResourceClaimTemplates and
    ResourceClaims of the newest ``resource.k8s.io`` version it serves, and
    its KubeVirt VirtualMachines; ``timeout`` bounds all the requests together,
    each answer is bounded in size and shape."""
    bounded(api_client)
    clock = _Clock(timeout)
    api, objects = None, {}
    for version in RESOURCE_VERSIONS:
        try:
            first = _list_all(api_client, RESOURCE_GROUP, version, *DRA_KINDS[0], clock)
        except _Answered:
            continue
        api, objects = version, {DRA_KINDS[0][0]: first}
        for plural, kind in DRA_KINDS[1:]:
            try:
                objects[plural] = _list_all(api_client, RESOURCE_GROUP, version, plural, kind, clock)
            except _Answered:
                objects[plural] = []
        break
    try:
        vms = _list_all(api_client, GROUP, VERSION, "virtualmachines", "VirtualMachineList", clock)
    except _Answered:
        vms = []
    return DraState(api, objects, vms)


# -- HAMi ---------------------------------------------------------------------------

#: Pods asked for per request, and read in all (Kubernetes supports 150,000 in a cluster).
POD_PAGE = 500
MAX_PODS = 150_000
#: The Pods ``audit --hami`` reads: those not done (a finished pod holds no GPU).
RUNNING_PODS = "status.phase!=Succeeded,status.phase!=Failed"


@dataclass
class HamiState:
    """What :func:`read_hami` read: the Nodes and the Pods not done, all namespaces."""

    nodes: list[KubeObject]
    pods: list[KubeObject]


def read_pods(api_client: ApiClient, *, timeout: float | None = None, clock: _Clock | None = None) -> list[KubeObject]:
    """Every Pod not done (:data:`RUNNING_PODS`) in all namespaces, paged as
    Nodes are, at most :data:`MAX_PODS`; each checked for the fields read."""
    from kubernetes.client import CoreV1Api

    from pciname.kubevirt.shapes import check_pod

    bounded(api_client)
    clock = clock or _Clock(timeout)
    what = "list pods"
    api = CoreV1Api(api_client)

    def fetch(paging: dict[str, Any]) -> Any:
        return _call(
            what,
            api.list_pod_for_all_namespaces,
            field_selector=RUNNING_PODS,
            _preload_content=False,
            **paging,
            **clock.options(what),
        )

    return _paged(what, fetch, "PodList", check_pod, MAX_PODS, POD_PAGE, clock)


def read_hami(api_client: ApiClient, *, timeout: float | None = None) -> HamiState:
    """The Nodes and the Pods; ``timeout`` bounds all the requests together."""
    clock = _Clock(timeout)
    return HamiState(read_nodes(api_client, clock=clock), read_pods(api_client, clock=clock))


# -- applying -----------------------------------------------------------------------


def apply_permitted_host_devices(
    api_client: ApiClient,
    kubevirt: KubeObject,
    permitted: dict[str, Any],
    *,
    force: bool = False,
    dry_run: bool = False,
    timeout: float | None = None,
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
    bounded(api_client)
    api = CustomObjectsApi(api_client)
    what = f"apply to KubeVirt {object_ref(kubevirt)}"
    clock = _Clock(timeout)
    try:
        response = _call(
            what,
            api.patch_namespaced_custom_object,
            GROUP,
            VERSION,
            meta.get("namespace"),
            PLURAL,
            meta.get("name"),
            apply_body(kubevirt, permitted),
            handled=(409,),
            _preload_content=False,
            **kwargs,
            **clock.options(what),
        )
        result = _json(what, response, clock)
    except _Answered as conflict:
        raise ApplyRefused(
            f"the API server refused the apply to {object_ref(kubevirt)}: "
            f"{_status_message(conflict.error) or 'conflict'}; "
            "rerun with --force to take ownership of these fields"
        ) from None
    from pciname.kubevirt.shapes import ShapeError, mapping

    try:
        spec = mapping(mapping(result, "the API server's answer").get("spec"), "the API server's answer: spec")
        configuration = mapping(spec.get("configuration"), "the API server's answer: spec.configuration")
        applied = mapping(
            configuration.get("permittedHostDevices"),
            "the API server's answer: spec.configuration.permittedHostDevices",
        )
    except ShapeError as error:
        raise ClusterError(f"cannot {what}: {error}", reason="unreachable") from None
    return applied


# -- events ---------------------------------------------------------------------------
# The host doctor's Events on its Node (pciname.cluster.node_events decides what to send):
# each request is one create, read or merge patch of one core/v1 Event (RBAC: events
# create, get, patch in the Event's namespace).

MERGE_PATCH = "application/merge-patch+json"


def create_event(api_client: ApiClient, event: KubeObject, *, timeout: float | None = None) -> bool:
    """Create ``event`` (its ``metadata.name`` set); False when an Event of that name exists (409)."""
    from kubernetes.client import CoreV1Api

    meta = event["metadata"]
    what = f"create Event {meta['namespace']}/{meta['name']}"
    clock = _Clock(timeout)
    api = CoreV1Api(bounded(api_client))
    try:
        response = _call(
            what,
            api.create_namespaced_event,
            meta["namespace"],
            event,
            handled=(409,),
            _preload_content=False,
            **clock.options(what),
        )
    except _Answered:
        return False
    _body(what, response, clock)
    return True


def read_event(api_client: ApiClient, namespace: str, name: str, *, timeout: float | None = None) -> KubeObject | None:
    """The Event ``namespace/name`` (None: there is none, 404)."""
    from kubernetes.client import CoreV1Api

    what = f"read Event {namespace}/{name}"
    clock = _Clock(timeout)
    api = CoreV1Api(bounded(api_client))
    try:
        response = _call(
            what,
            api.read_namespaced_event,
            name,
            namespace,
            handled=(404,),
            _preload_content=False,
            **clock.options(what),
        )
    except _Answered:
        return None
    found = _json(what, response, clock)
    if not isinstance(found, dict):
        raise ClusterError(f"cannot {what}: the API server's answer is not an object", reason="unreachable")
    return found


def patch_event(
    api_client: ApiClient, namespace: str, name: str, patch: KubeObject, *, timeout: float | None = None
) -> bool:
    """Merge-patch the Event ``namespace/name``; False when there is none (404: it expired)."""
    from kubernetes.client import CoreV1Api

    what = f"patch Event {namespace}/{name}"
    clock = _Clock(timeout)
    api = CoreV1Api(bounded(api_client))
    try:
        response = _call(
            what,
            api.patch_namespaced_event,
            name,
            namespace,
            patch,
            handled=(404,),
            _content_type=MERGE_PATCH,
            _preload_content=False,
            **clock.options(what),
        )
    except _Answered:
        return False
    _body(what, response, clock)
    return True


#: Where the doctor's Events on Nodes are (kubelet's namespace for them) and what posts them.
EVENTS_NAMESPACE = "default"
DOCTOR_COMPONENT = "pciname-doctor"


def read_doctor_events(api_client: ApiClient, *, timeout: float | None = None) -> list[KubeObject] | None:
    """The Events the host doctor posted on Nodes (``source.component``
    :data:`DOCTOR_COMPONENT` in :data:`EVENTS_NAMESPACE`), paged as Nodes
    are; None when the API server refuses to list them (403: no RBAC)."""
    from kubernetes.client import CoreV1Api

    what = f"list Events in {EVENTS_NAMESPACE}"
    api = CoreV1Api(bounded(api_client))
    clock = _Clock(timeout)
    found: list[KubeObject] = []
    token: str | None = None
    for _ in range(MAX_NODE_PAGES):
        paging: dict[str, Any] = {"limit": NODE_PAGE, **({"_continue": token} if token else {})}
        try:
            response = _call(
                what,
                api.list_namespaced_event,
                EVENTS_NAMESPACE,
                field_selector="involvedObject.kind=Node",
                handled=(403,),
                _preload_content=False,
                **paging,
                **clock.options(what),
            )
        except _Answered:
            return None
        items, token = _items(what, _json(what, response, clock), "EventList")
        found.extend(e for e in items if (e.get("source") or {}).get("component") == DOCTOR_COMPONENT)
        if token is None:
            return found
    raise ClusterError(f"cannot {what}: the API server's EventList paging does not end", reason="unreachable")
