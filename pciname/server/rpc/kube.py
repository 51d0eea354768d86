"""The RPCs over the domain rooms (kubevirt, lint, cozystack, cluster): ``PermittedHostDevices``, ``Lint``,
``GpuOptions`` and ``NodePool`` (the servicer,
:mod:`pciname.server.service`, calls them), and the server's read-only
access to its cluster.

Each answers what the matching command answers for the same input:
``PermittedHostDevices`` runs
:func:`pciname.kubevirt.generate.permitted_host_devices` and renders it as
``pciname permitted-host-devices --format F`` prints it; ``Lint`` runs
:class:`pciname.lint.linter.Linter` over the files sent, all together;
``GpuOptions`` runs :func:`pciname.kubevirt.audit.gpu_options` over the
KubeVirt CR and Nodes the caller sends, or, on a server started with
``--kube``, over the ones :func:`pciname.cluster.kube.read_cluster` reads
(read-only, with the server's kubeconfig or in-cluster service account);
``NodePool`` runs :func:`pciname.kubevirt.generate.node_pool` as ``pciname
node-pool`` does.

Errors that are not about profiles are :class:`~pciname.server.rpc.wire.RpcFailure`
with a stable reason in the trailing metadata ``pciname-error``
(:mod:`pciname.server.rpc.wire` defines them). Inputs they echo go through
:func:`~pciname.server.rpc.wire.shown`, so details stay short whatever was sent.
"""

from __future__ import annotations

import contextlib
import json
import logging
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, cast

import grpc

from pciname.capabilities.spelling import Spelling
from pciname.cluster.shapes import go_strings
from pciname.errors import PcinameError
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.config import DEFAULT_KUBE_TIMEOUT, DEFAULT_MAX_LINT_BYTES, DEFAULT_MAX_LINT_NODES
from pciname.server.data import DataSet, served_profile
from pciname.server.logs import fields
from pciname.server.rpc.budget import RELEASE_AFTER_NODES, CheckedText, Slots, check_alive, count_nodes, release_memory
from pciname.server.rpc.wire import (
    CLUSTER_CONFIG,
    CLUSTER_DISABLED,
    CLUSTER_REFUSED,
    CLUSTER_UNREACHABLE,
    KUBEVIRT_AMBIGUOUS,
    KUBEVIRT_NOT_FOUND,
    LINT_INPUT,
    MAX_DEVICE_CHARS,
    MAX_NAME_CHARS,
    MAX_PROFILE_CHARS,
    NO_KUBEVIRT,
    OBJECTS_INPUT,
    RpcFailure,
    check_batch,
    check_length,
    failure,
    gpu_options_response,
    lint_input_failure,
    lint_response,
    node_pool_response,
    permitted_response,
    shown,
    vgpu_types_response,
)

if TYPE_CHECKING:
    pass

AUTO = "auto"

INVALID = grpc.StatusCode.INVALID_ARGUMENT
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION


def no_auto(profile: str, what: str = "profile") -> None:
    """INVALID_ARGUMENT for profile ``auto`` where there is no cluster to infer from."""
    if profile.strip().lower() == AUTO:
        raise RpcFailure(
            INVALID, f"{what} auto needs a cluster to infer from: it works with GpuOptions; name a profile"
        )


# -- PermittedHostDevices -------------------------------------------------------------------


def permitted_host_devices(
    request: pb.PermittedHostDevicesRequest, data: DataSet, *, max_batch: int
) -> tuple[pb.PermittedHostDevicesResponse, int]:
    """The answer, and how many devices and mdev types it names: the
    request's limits checked here, its rules by
    :class:`~pciname.capabilities.permitted.PermittedHostDevicesRequest`."""
    from pciname.capabilities.permitted import PermittedHostDevicesRequest, answer

    devices = list(request.devices)
    mdev_types = list(request.mdev_types)
    if not devices and not mdev_types:
        raise RpcFailure(INVALID, "empty request: no devices and no mdev_types given")
    check_batch(len(devices) + len(mdev_types), "devices and mdev types", max_batch)
    for i, device in enumerate(devices):
        check_length(device, f"devices[{i}]", MAX_DEVICE_CHARS)
    for i, mdev_type in enumerate(mdev_types):
        check_length(mdev_type, f"mdev_types[{i}]", MAX_NAME_CHARS)
    for name in ("profile", "cozystack", "variant"):
        check_length(getattr(request, name), name, MAX_PROFILE_CHARS if name == "profile" else MAX_NAME_CHARS)
    fmt = permitted_format(request)
    no_auto(request.profile)
    size = len(request.cozystack_defaults.encode("utf-8", "surrogatepass"))
    if size > DEFAULT_MAX_LINT_BYTES:
        raise RpcFailure(INVALID, f"cozystack_defaults is too large ({size} bytes, at most {DEFAULT_MAX_LINT_BYTES})")
    asked = PermittedHostDevicesRequest(
        tuple(devices),
        tuple(mdev_types),
        profile=request.profile or None,
        include_broken=request.include_broken,
        format=fmt,
        cozystack=request.cozystack or None,
        variant=request.variant or None,
        replace_defaults=request.replace_defaults,
        vgpu_device_manager=request.vgpu_device_manager,
        cozystack_defaults=(request.cozystack_defaults, "cozystack_defaults") if request.cozystack_defaults else None,
        spelling=Spelling.RPC,
    ).validated()
    profile = served_profile(data, str(asked.chosen_profile or ""))
    result = answer(asked, profile.key, resolver=data.resolver)
    yaml_text, json_text = render_texts(result.snippet.data, fmt, request.replace_defaults)
    response = permitted_response(
        result.snippet.data,
        profile=profile.name,
        yaml=yaml_text,
        json=json_text,
        format=fmt,
        left_out=result.snippet.left_out,
        notes=result.snippet.notes,
        clashes=result.clashes,
        variant=result.variant,
    )
    return response, len(devices) + len(mdev_types)


def render_texts(block: dict[str, Any], fmt: str, replace_defaults: bool) -> tuple[str, str]:
    """(YAML, JSON) of the permittedHostDevices ``block`` placed as ``fmt``
    says, exactly as ``pciname permitted-host-devices -o yaml|json`` prints it."""
    import io

    from pciname.base.render import dump_json, dump_yaml
    from pciname.kubevirt.generate import render

    data = render(block, fmt, replace_defaults=True if replace_defaults else None)
    yaml_text, json_text = io.StringIO(), io.StringIO()
    dump_yaml(data, yaml_text)
    dump_json(data, json_text)
    return yaml_text.getvalue(), json_text.getvalue()


def permitted_format(request: pb.PermittedHostDevicesRequest) -> str:
    """The request's format (kubevirt when empty); INVALID_ARGUMENT for
    another, its text echoed bounded."""
    from pciname.kubevirt.generate import FORMATS

    fmt = request.format.strip().lower() or "kubevirt"
    if fmt not in FORMATS:
        raise RpcFailure(INVALID, f"unknown format {shown(request.format)}: use one of {', '.join(FORMATS)}")
    return fmt


# -- Lint --------------------------------------------------------------------------------


def _file_name(file: pb.LintFile, index: int, count: int) -> str:
    if file.name:
        return file.name
    return "<input>" if count == 1 else f"<input {index}>"


def lint(
    request: pb.LintRequest,
    context: grpc.ServicerContext,
    data: DataSet,
    *,
    max_files: int,
    max_bytes: int,
    max_nodes: int = DEFAULT_MAX_LINT_NODES,
    slots: Slots | None = None,
) -> pb.LintResponse:
    """The Lint answer. Its cost is bounded before the linter composes
    anything: files, bytes, YAML nodes (:func:`~pciname.server.rpc.budget.count_nodes`),
    and ``slots`` (how many run at once); the caller's cancellation and
    deadline are checked while counting and between steps."""
    with slots.take() if slots is not None else contextlib.nullcontext():
        nodes: list[int] = []
        try:
            return _lint(
                request, context, data, max_files=max_files, max_bytes=max_bytes, max_nodes=max_nodes, counted=nodes
            )
        finally:
            if nodes and nodes[0] > RELEASE_AFTER_NODES:
                release_memory()


def _lint_inputs(files: Sequence[pb.LintFile], *, max_files: int, max_bytes: int) -> list[tuple[str, str | bytes, int]]:
    """(name, content, bytes) of each file of a Lint request, within --max-lint-files and --max-lint-bytes."""
    if not files:
        raise RpcFailure(INVALID, "empty request: no files given")
    if len(files) > max_files:
        raise RpcFailure(
            INVALID,
            f"{len(files)} files in one request, more than this server's maximum of {max_files} "
            "(--max-lint-files); split the request",
        )
    inputs: list[tuple[str, str | bytes, int]] = []
    for index, file in enumerate(files, 1):
        content: str | bytes = file.data if file.WhichOneof("content") == "data" else file.text
        size = len(content) if isinstance(content, bytes) else len(content.encode("utf-8", "surrogatepass"))
        inputs.append((_file_name(file, index, len(files)), content, size))
    total = sum(size for _, _, size in inputs)
    if total > max_bytes:
        name, _, size = max(inputs, key=lambda i: i[2])
        raise RpcFailure(
            INVALID,
            f"{total} bytes of YAML in one request, more than this server's maximum of {max_bytes} "
            f"(--max-lint-bytes); the largest file is {shown(name, quote=False)} ({size} bytes)",
        )
    return inputs


def _lint(
    request: pb.LintRequest,
    context: grpc.ServicerContext,
    data: DataSet,
    *,
    max_files: int,
    max_bytes: int,
    max_nodes: int,
    counted: list[int],
) -> pb.LintResponse:
    from pciname.errors import LintInputError
    from pciname.lint.linter import Linter

    inputs = _lint_inputs(request.files, max_files=max_files, max_bytes=max_bytes)
    check_length(request.profile, "profile", MAX_PROFILE_CHARS)
    check_length(request.upgrade_to, "upgrade_to", MAX_PROFILE_CHARS)
    no_auto(request.profile)
    no_auto(request.upgrade_to, "upgrade_to")
    check_length(request.cozystack, "cozystack", MAX_NAME_CHARS)
    profile = served_profile(data, cozystack_profile(request.cozystack, request.profile))
    upgrade = served_profile(data, request.upgrade_to, "upgrade_to") if request.upgrade_to.strip() else None

    nodes = 0
    for name, content, _ in inputs:
        nodes = count_nodes(content, name, max_nodes, context, already=nodes, flag="--max-lint-nodes")
    counted.append(nodes)
    linter = Linter(
        profile.key,
        upgrade.key if upgrade is not None else None,
        resolver=data.resolver,
        cozystack=request.cozystack or None,
        check=lambda: check_alive(context),
    )
    documents = 0
    errors: list[LintInputError] = []
    for name, content, _ in inputs:
        check_alive(context)
        try:
            # A stream the composer reads in steps, each checking the caller is still there.
            documents += linter.add_text(cast(Any, CheckedText(content, context)), name)
        except LintInputError as error:
            errors.append(error)
        except RecursionError:
            errors.append(LintInputError(f"{shown(name, quote=False)}: nested too deeply to read as YAML", file=name))
    if errors:
        raise lint_input_failure(errors)
    check_alive(context)
    try:
        findings = linter.run()
    except RecursionError:
        raise failure(INVALID, "the YAML is nested too deeply to check", LINT_INPUT) from None
    check_alive(context)
    return lint_response(
        findings,
        profile=profile.name,
        upgrade_to=upgrade.name if upgrade is not None else None,
        documents=documents,
        notes=linter.notes,
    )


# -- GpuOptions: objects the caller sends ---------------------------------------------------


def _objects_error(message: str) -> RpcFailure:
    return failure(INVALID, message, OBJECTS_INPUT)


_LOADER: type[Any] | None = None


def _loader() -> type[Any]:
    """yaml.SafeLoader whose scalar constructors' own errors (``0x_``,
    ``!!float x``, ``!!timestamp 2020-13-45``: ValueError and the like)
    become ConstructorErrors marked with the value's place."""
    global _LOADER
    if _LOADER is None:
        import yaml

        from pciname.lint.linter import refuse_surrogates

        class Loader(yaml.SafeLoader):
            def compose_scalar_node(self, anchor: Any) -> yaml.ScalarNode:
                node: yaml.ScalarNode = super().compose_scalar_node(anchor)
                refuse_surrogates(node)
                return node

            def construct_object(self, node: yaml.Node, deep: bool = False) -> Any:
                try:
                    return super().construct_object(node, deep)
                except (ValueError, TypeError, ArithmeticError, LookupError) as error:
                    tag = node.tag.rpartition(":")[2] or node.tag
                    value = node.value if isinstance(node.value, str) else ""
                    raise yaml.constructor.ConstructorError(
                        None,
                        None,
                        f"{shown(value)} is not a valid {shown(tag, quote=False)} ({error})",
                        node.start_mark,
                    ) from None

        _LOADER = Loader
    return _LOADER


def _yaml_documents(text: str, field: str) -> list[Any]:
    import yaml

    # The pure-Python loader: libyaml's (CSafeLoader) recurses in C and
    # crashes the process on deeply nested input; this one raises
    # RecursionError. kubectl's JSON takes the fast path above anyway.
    try:
        return list(yaml.load_all(text, Loader=_loader()))
    except yaml.MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        problem = ": ".join(p for p in (error.context, error.problem) if p) or "invalid YAML"
        where = f"{field}:{mark.line + 1}:{mark.column + 1}" if mark is not None else field
        raise _objects_error(f"{where}: neither JSON nor YAML: {problem}") from None
    except yaml.YAMLError as error:
        raise _objects_error(f"{field}: neither JSON nor YAML: {' '.join(str(error).split())}") from None
    except (ValueError, TypeError, ArithmeticError, LookupError) as error:
        # Raised outside a node's construction: still the input's fault.
        raise _objects_error(f"{field}: not valid YAML: {type(error).__name__}: {error}") from None


def parse_objects(
    text: str, field: str, before_yaml: Callable[[str, str], object] | None = None
) -> list[dict[str, Any]]:
    """Kubernetes objects from JSON or YAML text: one object, a ``*List``
    (``items``), a JSON/YAML list, or several YAML documents.
    ``before_yaml(text, field)`` runs before text that is not JSON is
    loaded as YAML (the server bounds its nodes there)."""
    if not text.strip():
        return []
    try:
        try:
            documents = [go_strings(json.loads(text), text)]
        except ValueError:
            if before_yaml is not None:
                before_yaml(text, field)
            documents = _yaml_documents(text, field)
    except RecursionError:
        raise _objects_error(f"{field}: nested too deeply to read") from None
    objects: list[dict[str, Any]] = []
    for document in documents:
        if document is None:
            continue
        if isinstance(document, list):
            items = document
        elif (
            isinstance(document, dict)
            and isinstance(document.get("items"), list)
            and str(document.get("kind") or "List").endswith("List")
        ):
            items = document["items"]
        else:
            items = [document]
        for item in items:
            if not isinstance(item, dict):
                from pciname.cluster.shapes import type_name

                raise _objects_error(f"{field}: expected Kubernetes objects (mappings), got {type_name(item)}")
            objects.append(item)
    return objects


def check_kubevirt(obj: dict[str, Any], where: str = "kubevirt") -> None:
    """The fields gpu_options reads have the types it expects
    (:func:`pciname.cluster.shapes.check_kubevirt`; objects-input if not)."""
    from pciname.cluster.shapes import ShapeError, check_kubevirt as check

    try:
        check(obj, where)
    except ShapeError as error:
        raise _objects_error(str(error)) from None


def check_node(obj: dict[str, Any], where: str) -> None:
    """:func:`pciname.cluster.shapes.check_node`; objects-input if not."""
    from pciname.cluster.shapes import ShapeError, check_node as check

    try:
        check(obj, where)
    except ShapeError as error:
        raise _objects_error(str(error)) from None


def _ref(obj: dict[str, Any]) -> str:
    meta = obj.get("metadata") or {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}"


def pick_kubevirt(objects: Sequence[dict[str, Any]], name: str | None) -> dict[str, Any]:
    """The one KubeVirt CR among the objects sent (``name``: [NAMESPACE/]NAME)."""
    if not objects:
        raise _objects_error("kubevirt: no object in it; send the KubeVirt CR (kubectl get kubevirt -A -o json)")
    for i, obj in enumerate(objects):
        check_kubevirt(obj, "kubevirt" if len(objects) == 1 else f"kubevirt.items[{i}]")
    candidates = list(objects)
    if name:
        namespace, _, short = name.rpartition("/")
        candidates = [
            o
            for o in candidates
            if (o.get("metadata") or {}).get("name") == short
            and (not namespace or (o.get("metadata") or {}).get("namespace") == namespace)
        ]
        if not candidates:
            raise _objects_error(f"kubevirt: no KubeVirt CR {shown(name, quote=False)} among the {len(objects)} sent")
    if len(candidates) > 1:
        names = ", ".join(shown(_ref(o), quote=False) for o in candidates)
        raise failure(
            INVALID,
            f"kubevirt holds several KubeVirt CRs ({names}): choose one with kubevirt_name NAMESPACE/NAME",
            KUBEVIRT_AMBIGUOUS,
        )
    return candidates[0]


def pick_nodes(objects: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    for i, obj in enumerate(objects):
        check_node(obj, f"nodes[{i}]")
    return list(objects)


# -- GpuOptions: the cluster ------------------------------------------------------------------


class ClusterAccess:
    """Read-only access to the cluster the server runs in (``--kube``):
    ``kubeconfig``/``context`` as ``pciname gpu-options`` takes them (none:
    $KUBECONFIG, ~/.kube/config, else the in-cluster service account).

    The configuration is loaded once (a kubeconfig credential plugin runs
    then, within the time the request has) and again only when it must, as
    the kubernetes client renews credentials: when they expire (the
    plugin's expirationTimestamp, less five minutes), when a file it was
    loaded from changes, or after the API server refused them (401, 403).
    Each request's API calls get ``timeout`` seconds in all (less when the
    RPC's deadline is nearer)."""

    def __init__(
        self, kubeconfig: str | None = None, context: str | None = None, timeout: float = DEFAULT_KUBE_TIMEOUT
    ) -> None:
        import threading

        self.kubeconfig = kubeconfig
        self.context = context
        self.timeout = timeout
        self.loads = 0  # how many times the configuration was loaded
        self._lock = threading.Lock()
        self._client: Any = None
        self._loaded: Any = None

    def _connect(self, timeout: float) -> Any:
        from pciname.cluster.kube import connect_loaded

        with self._lock:
            if self._client is None or self._loaded.stale():
                client, loaded = connect_loaded(self.kubeconfig, self.context, timeout=timeout)
                self.loads += 1
                old, self._client, self._loaded = self._client, client, loaded
                if old is not None:
                    old.close()
            return self._client

    def _forget(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
            self._client = self._loaded = None

    def check(self) -> None:
        """Load the configuration (at start-up): PcinameError if it cannot be."""
        self._connect(self.timeout)

    def close(self) -> None:
        self._forget()

    def read(self, kubevirt_name: str | None, timeout: float) -> Any:
        """The cluster's :class:`~pciname.cluster.kube.ClusterState`."""
        from pciname.cluster.kube import read_cluster
        from pciname.errors import ClusterError

        budget = min(self.timeout, timeout)
        try:
            api = self._connect(budget)
        except PcinameError as error:
            raise failure(PRECONDITION, f"this server cannot read the cluster: {error}", CLUSTER_CONFIG) from None
        try:
            return read_cluster(api, kubevirt_name, timeout=budget)
        except ClusterError as error:
            if error.reason == "refused" and error.status in (401, 403):
                self._forget()  # the next request loads the credentials afresh
            raise


def cluster_failure(error: Any, context: grpc.ServicerContext) -> RpcFailure:
    """The status for a :class:`pciname.errors.ClusterError`."""
    message = str(error)
    if error.reason == "not-found":
        return failure(grpc.StatusCode.NOT_FOUND, message, KUBEVIRT_NOT_FOUND)
    if error.reason == "ambiguous":
        message = message.replace("--kubevirt NAMESPACE/NAME", "kubevirt_name NAMESPACE/NAME")
        return failure(INVALID, message, KUBEVIRT_AMBIGUOUS)
    if error.reason == "refused":
        status = error.status or 0
        if status in (401, 403):
            return failure(
                PRECONDITION,
                f"{message}; the server's credentials need get and list on nodes and kubevirts.kubevirt.io",
                CLUSTER_REFUSED,
            )
        if status == 429 or status >= 500:
            return failure(grpc.StatusCode.UNAVAILABLE, message, CLUSTER_REFUSED)
        return failure(PRECONDITION, message, CLUSTER_REFUSED)
    if context.time_remaining() <= 0:
        return failure(grpc.StatusCode.DEADLINE_EXCEEDED, message, CLUSTER_UNREACHABLE)
    return failure(grpc.StatusCode.UNAVAILABLE, message, CLUSTER_UNREACHABLE)


def read_from_cluster(
    cluster: ClusterAccess | None, name: str | None, context: grpc.ServicerContext, log: logging.Logger
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The cluster's KubeVirt CR and Nodes (FAILED_PRECONDITION without ``--kube``)."""
    from pciname.errors import ClusterError

    if cluster is None:
        raise failure(
            PRECONDITION,
            "this server does not read the cluster (it was started without --kube): send the KubeVirt CR "
            "and the Nodes in kubevirt and nodes",
            CLUSTER_DISABLED,
        )
    try:
        state = cluster.read(name, context.time_remaining())
    except ClusterError as error:
        reason = cluster_failure(error, context)
        if error.reason in ("unreachable", "refused"):
            log.warning(
                "cannot read the cluster", extra=fields(method="GpuOptions", error=str(error), code=reason.code.name)
            )
        raise reason from None
    except RpcFailure as refused:
        log.warning(
            "cannot read the cluster", extra=fields(method="GpuOptions", error=refused.details, code=refused.code.name)
        )
        raise
    if state.kubevirt is None:
        raise failure(PRECONDITION, "the cluster has no KubeVirt CR (kubevirt.io/v1 kubevirts)", NO_KUBEVIRT)
    return state.kubevirt, state.nodes


def gpu_options(
    request: pb.GpuOptionsRequest,
    context: grpc.ServicerContext,
    data: DataSet,
    *,
    cluster: ClusterAccess | None,
    log: logging.Logger,
    max_nodes: int = DEFAULT_MAX_LINT_NODES,
) -> pb.GpuOptionsResponse:
    from pciname.kubevirt.audit import choose_profile, gpu_options as options_of

    check_length(request.profile, "profile", MAX_PROFILE_CHARS)
    check_length(request.cozystack, "cozystack", MAX_NAME_CHARS)
    name = check_length(request.kubevirt_name, "kubevirt_name", MAX_NAME_CHARS).strip() or None
    # A bad profile or release fails before any cluster I/O.
    profile_text, release_how = gpu_options_profile(request.cozystack, request.profile)
    auto = profile_text.strip().lower() == AUTO
    given = None if auto else served_profile(data, profile_text)
    if request.from_cluster:
        if request.kubevirt.strip() or request.nodes.strip():
            raise RpcFailure(
                INVALID,
                "from_cluster reads the KubeVirt CR and the Nodes from the cluster: leave kubevirt and nodes empty",
            )
        kubevirt, nodes = read_from_cluster(cluster, name, context, log)
    else:
        if not request.kubevirt.strip():
            raise RpcFailure(
                INVALID, "empty request: send the KubeVirt CR in kubevirt (JSON or YAML), or set from_cluster"
            )

        def bounded(text: str, field: str) -> None:  # YAML: at most max_nodes nodes (JSON is compact)
            count_nodes(text, field, max_nodes, context, flag="--max-lint-nodes", reason=OBJECTS_INPUT)

        kubevirt = pick_kubevirt(parse_objects(request.kubevirt, "kubevirt", bounded), name)
        nodes = pick_nodes(parse_objects(request.nodes, "nodes", bounded))

    def check() -> None:  # the work stops once the caller is gone or its deadline passed
        check_alive(context)

    if given is not None:
        profile, how = given, release_how
    else:
        chosen, how, _ = choose_profile(AUTO, nodes, resolver=data.resolver, check=check)
        profile = data.profile(str(chosen)) if how == "inferred" else data.default
    options = options_of(kubevirt, nodes, profile.key, resolver=data.resolver, check=check)
    return gpu_options_response(options, profile=profile.name, profile_source=how, kubevirt=_ref(kubevirt))


def gpu_options_profile(cozystack: str, profile: str) -> tuple[str, str]:
    """The profile of a GpuOptions request and how it was chosen: ``profile``
    ("given"; "auto" too), or with none given and a Cozystack release asked
    for, that release's ("cozystack"), as ``pciname gpu-options --cozystack``
    chooses. A ``cozystack@`` profile of another release is INVALID_ARGUMENT;
    a malformed release INVALID_ARGUMENT, an unknown one NOT_FOUND (status_of)."""
    from pciname.cozystack.choice import profile_for, release_for

    if not cozystack.strip():
        return profile, "given"
    release_for(cozystack, profile)  # the two must agree
    return str(profile_for(cozystack, profile)), "given" if profile.strip() else "cozystack"


# -- NodePool ---------------------------------------------------------------------------------


def node_pool(request: pb.NodePoolRequest, data: DataSet, *, max_batch: int) -> tuple[pb.NodePoolResponse, int]:
    """The answer (what ``pciname node-pool`` prints for the same input), and
    how many device and mdev type requests it names."""
    from pciname.capabilities.node_pool import NodePoolRequest, answer, gpu_names

    devices = list(request.devices)
    mdev_types = list(request.mdev_types)
    roles = list(request.roles)
    if not devices and not mdev_types:
        raise RpcFailure(INVALID, "empty request: no devices and no mdev_types given")
    check_batch(len(devices) + len(mdev_types), "devices and mdev types", max_batch)
    check_batch(len(roles), "roles", max_batch)
    check_length(request.group, "group", MAX_NAME_CHARS)
    for name, values in (("devices", devices), ("mdev_types", mdev_types), ("roles", roles)):
        for i, value in enumerate(values):
            check_length(value, f"{name}[{i}]", MAX_NAME_CHARS)
    for name in ("format", "instance_type", "ephemeral_storage", "cpu", "memory", "cozystack", "cluster"):
        check_length(getattr(request, name), name, MAX_NAME_CHARS)
    check_length(request.profile, "profile", MAX_PROFILE_CHARS)
    no_auto(request.profile)

    def given(name: str) -> Any:
        return getattr(request, name) if request.HasField(name) else None

    asked = NodePoolRequest(
        request.group,
        tuple(devices),
        tuple(mdev_types),
        profile=request.profile or None,
        include_broken=request.include_broken,
        fragment=request.fragment,
        format=request.format,
        cozystack=request.cozystack or None,
        cluster=request.cluster or None,
        fields={
            **{name: given(name) for name in ("instance_type", "min_replicas", "max_replicas", "cpu", "memory")},
            "ephemeral_storage": given("ephemeral_storage"),
            "roles": roles or None,
        },
        spelling=Spelling.RPC,
    ).validated()
    fmt = asked.format
    profile = served_profile(data, str(asked.chosen_profile or ""))
    snippet = answer(asked, profile.key, resolver=data.resolver)
    yaml_text, json_text = _texts(snippet.data)
    response = node_pool_response(
        profile=profile.name,
        format=fmt,
        yaml=yaml_text,
        json=json_text,
        gpus=gpu_names(snippet, request.group),
        left_out=snippet.left_out,
        notes=snippet.notes,
    )
    return response, len(devices) + len(mdev_types)


# -- VgpuTypes --------------------------------------------------------------------------------


def vgpu_types(request: pb.VgpuTypesRequest, data: DataSet) -> pb.VgpuTypesResponse:
    """What ``pciname vgpu-types DEVICE -o json`` answers; a device the
    catalogue does not cover is ``covered: false`` with the one line."""
    from pciname.errors import NotInCatalogueError
    from pciname.kubevirt.vgpu import vgpu_types as answer_of

    check_length(request.device, "device", MAX_DEVICE_CHARS)
    check_length(request.profile, "profile", MAX_PROFILE_CHARS)
    if not request.device.strip():
        raise RpcFailure(INVALID, "empty request: no device given")
    no_auto(request.profile)
    profile = served_profile(data, request.profile)
    try:
        return vgpu_types_response(answer_of(request.device, profile.key, resolver=data.resolver))
    except NotInCatalogueError as error:
        from pciname.resolution.resolver import parse_device

        return pb.VgpuTypesResponse(
            device=str(parse_device(request.device)), profile=profile.name, covered=False, message=str(error)
        )


def cozystack_profile(cozystack: str, profile: str) -> str:
    """The profile to serve (:func:`pciname.cozystack.choice.profile_for`):
    ``profile``, or with none given and a Cozystack release asked for, that
    release's. A malformed release is INVALID_ARGUMENT, an unknown one
    NOT_FOUND (status_of)."""
    from pciname.cozystack.choice import profile_for

    return str(profile_for(cozystack, profile) or "")


def _texts(data: Any) -> tuple[str, str]:
    """(YAML, JSON) of ``data`` exactly as the CLI's ``-o yaml|json`` prints it."""
    import io

    from pciname.base.render import dump_json, dump_yaml

    yaml_text, json_text = io.StringIO(), io.StringIO()
    dump_yaml(data, yaml_text)
    dump_json(data, json_text)
    return yaml_text.getvalue(), json_text.getvalue()


__all__ = [
    "AUTO",
    "ClusterAccess",
    "gpu_options",
    "lint",
    "no_auto",
    "node_pool",
    "parse_objects",
    "permitted_format",
    "permitted_host_devices",
    "render_texts",
    "vgpu_types",
]
