"""The ``pciname.v1.PciName`` servicer: one handler per RPC of the .proto
(:meth:`PciNameService.rpcs`), the plumbing every handler shares (metrics,
deadlines, errors as status codes), and the RPCs over the names: Resolve,
ResolveBatch, Reverse and Diff (each builds its request of
:mod:`pciname.capabilities.names` from the message, after the wire's
length limits), ListProfiles and ListDevices. The RPCs over the domain
rooms are one module per capability group in :mod:`pciname.server.rpc`
(kubevirt, lint, cluster, admission); every message and status is built by
:mod:`pciname.server.rpc.wire`.

Every handler reads the current :class:`~pciname.server.data.DataSet` once,
so a reload never changes the data under a request in flight. Answers are
encoded once per generation and kept as bytes: a ``Resolve`` of a device
seen before costs a dictionary lookup, and a ``ResolveBatch`` response is
the concatenation of its elements' encodings (a repeated field's wire
format), which the handlers return to gRPC as-is.

Errors become status codes with one line of details
(:func:`~pciname.server.rpc.wire.status_of`); anything unexpected is logged with
its traceback and answered INTERNAL, never UNKNOWN.

Requests are parsed in the handlers (gRPC gets no deserializer), so a
message that is not protobuf, is truncated or has a string field that is not
UTF-8 is INVALID_ARGUMENT rather than gRPC's INTERNAL
(:func:`~pciname.server.rpc.wire.parse_request`). Every device, profile and name
field is checked against the wire's limits before anything is looked up or
cached (the caches are keyed on the text as sent).
"""

from __future__ import annotations

import importlib
import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf.message import Message

from pciname.capabilities.cluster_access import ClusterAccess
from pciname.capabilities.names import (
    LookupRequest,
)
from pciname.pciids.ids import NVIDIA_VENDOR_ID
from pciname.requests.limits import DEVICE_CHARS as MAX_DEVICE_CHARS
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.budget import DEADLINE_SKEW, Slots
from pciname.server.config import (
    DEFAULT_MAX_BATCH,
    DEFAULT_MAX_CONCURRENT_LINTS,
    DEFAULT_MAX_LINT_BYTES,
    DEFAULT_MAX_LINT_FILES,
    DEFAULT_MAX_LINT_NODES,
)
from pciname.server.data import DataSet, request_aliases, served_profile, with_request_aliases
from pciname.server.metrics import Metrics
from pciname.server.rpc.wire import (
    SERVICE_NAME,
    RpcFailure,
    check_deadline,
    check_length,
    parse_request,
    resolution_message,
    shown,
    status_of,
    trailing_metadata,
)
from pciname.server.tables import deadline

# A handler: (request, context, data) -> (the response, or its encoding, and
# how many devices it answered); a streaming one yields encoded messages.
Unary = Callable[[Any, grpc.ServicerContext, DataSet], tuple[Message | bytes, int]]
Streaming = Callable[[Any, grpc.ServicerContext, DataSet], Iterator[bytes]]

STREAMING = frozenset({"ListDevices"})  # the RPCs that return a stream

_VENDOR = re.compile(r"\s*(?:0[xX])?([0-9a-fA-F]{4})\s*\Z")
_DEADLINE_CHECK_EVERY = 256


#: The RPCs answered in :mod:`pciname.server.rpc`: (module, handler) by
#: method, each handler ``(request, context, data, service) -> (response,
#: devices)``. A module is imported on its first use: those of the cluster,
#: KubeVirt, lint and admission RPCs import YAML, lint, the cluster client
#: and the KubeVirt and DRA capabilities, about 120 ms of a start
#: (``bench/serve_start.py``), which a new pod waiting for readiness should
#: not pay. Imports are thread-safe and once.
RPC_MODULES = {
    "Reverse": ("names", "reverse"),
    "Diff": ("names", "diff"),
    "PermittedHostDevices": ("kubevirt", "permitted_host_devices"),
    "Lint": ("lint", "lint"),
    "GpuOptions": ("cluster", "gpu_options"),
    "NodePool": ("kubevirt", "node_pool"),
    "DraClaims": ("kubevirt", "dra_claims"),
    "VgpuTypes": ("kubevirt", "vgpu_types"),
    "AdmissionPolicy": ("admission", "admission_policy"),
    "Doctor": ("host", "doctor"),
    "ImageCheck": ("hami", "image_check"),
    "GfdLabels": ("names", "gfd_labels"),
}


def _given(field: str) -> str | None:
    """A profile field as a request takes it: None when blank (a proto3
    string is never absent; a blank one was not given)."""
    return field if field.strip() else None


def _serialize(response: Message | bytes) -> bytes:
    return response if isinstance(response, bytes) else response.SerializeToString()


class PciNameService:
    """Handlers of the RPCs over a swappable DataSet.

    ``cluster`` (a :class:`~pciname.capabilities.cluster_access.ClusterAccess`, from
    ``--kube``) lets GpuOptions read the cluster; None refuses that. ``host_root``
    (``--host-root``) is the node Doctor reads; None refuses that."""

    def __init__(
        self,
        data_source: Callable[[], DataSet | None],
        metrics: Metrics,
        logger: logging.Logger,
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_lint_files: int = DEFAULT_MAX_LINT_FILES,
        max_lint_bytes: int = DEFAULT_MAX_LINT_BYTES,
        max_lint_nodes: int = DEFAULT_MAX_LINT_NODES,
        max_concurrent_lints: int = DEFAULT_MAX_CONCURRENT_LINTS,
        cluster: ClusterAccess | None = None,
        host_root: str | None = None,
    ) -> None:
        self._data = data_source
        self.metrics = metrics
        self.log = logger
        self.max_batch = max_batch
        self.max_lint_files = max_lint_files
        self.max_lint_bytes = max_lint_bytes
        self.max_lint_nodes = max_lint_nodes
        self.lint_slots = Slots(
            max_concurrent_lints,
            "Lint and AdmissionPolicy (kubevirt_cr, from_cluster) requests",
            "--max-concurrent-lints",
        )
        self.cluster = cluster
        self.host_root = host_root  # serve --host-root: the node Doctor reads (None: none)

    # -- plumbing -----------------------------------------------------------------

    def rpcs(self) -> dict[str, tuple[Callable[..., Any], type[Message]]]:
        """Every RPC of the service: its handler and request type, by method name."""
        return {
            "Resolve": (self.resolve, pb.ResolveRequest),
            "ResolveBatch": (self.resolve_batch, pb.ResolveBatchRequest),
            "ListProfiles": (self.list_profiles, pb.ListProfilesRequest),
            "ListDevices": (self.list_devices, pb.ListDevicesRequest),
            **{
                name: (self._on_first_use(*where), getattr(pb, f"{name}Request")) for name, where in RPC_MODULES.items()
            },
        }

    def _on_first_use(self, module: str, name: str) -> Unary:
        """The handler ``name`` of ``pciname.server.rpc.<module>``, imported when first called."""

        def handler(request: Any, context: grpc.ServicerContext, data: DataSet) -> tuple[Message | bytes, int]:
            answer: Any = getattr(importlib.import_module(f"pciname.server.rpc.{module}"), name)
            return answer(request, context, data, self)  # type: ignore[no-any-return]

        return handler

    def method_handlers(self) -> dict[str, grpc.RpcMethodHandler]:
        """gRPC's handlers of :meth:`rpcs`. No request_deserializer: the
        handlers get the bytes and parse them (parse_request), so a
        malformed message is INVALID_ARGUMENT."""
        handlers = {}
        for name, (fn, request_type) in self.rpcs().items():
            if name in STREAMING:
                handlers[name] = grpc.unary_stream_rpc_method_handler(
                    self._streaming(name, fn, request_type), response_serializer=_serialize
                )
            else:
                handlers[name] = grpc.unary_unary_rpc_method_handler(
                    self._unary(name, fn, request_type), response_serializer=_serialize
                )
        return handlers

    def _current(self) -> DataSet:
        data = self._data()
        if data is None:
            raise RpcFailure(grpc.StatusCode.UNAVAILABLE, "pciname is still loading its data; retry shortly")
        return data

    def _fail(self, method: str, context: grpc.ServicerContext, error: BaseException) -> None:
        code, details = status_of(error)
        if code is grpc.StatusCode.INTERNAL:
            self.log.error("internal error in %s", method, exc_info=error, extra={"fields": {"method": method}})
        metadata = trailing_metadata(error)
        if metadata:
            context.set_trailing_metadata(metadata)
        self.metrics.error(method, code.name)
        context.abort(code, details)

    def _unary(self, method: str, fn: Unary, request_type: type[Message]) -> Callable[[bytes, Any], Message | bytes]:
        ok = self.metrics.ok[method]
        timer = self.metrics.timers[method]
        counted = self.metrics.device_counts[method]
        in_flight = self.metrics.in_flight
        perf = time.perf_counter

        def handler(raw: bytes, context: grpc.ServicerContext) -> Message | bytes:
            started = perf()
            in_flight.inc()
            try:
                try:
                    if context.time_remaining() <= 0:
                        raise RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the work began")
                    request = parse_request(request_type, raw)
                    with deadline(context.time_remaining()):
                        response, devices = fn(request, context, self._current())
                except Exception as error:
                    self._fail(method, context, error)
                    raise  # not reached: abort raises
                ok.inc()
                if devices:
                    counted.inc(devices)
                return response
            finally:
                in_flight.dec()
                timer.observe(perf() - started)

        return handler

    def _streaming(
        self, method: str, fn: Streaming, request_type: type[Message]
    ) -> Callable[[bytes, Any], Iterator[bytes]]:
        ok = self.metrics.ok[method]
        timer = self.metrics.timers[method]
        counted = self.metrics.device_counts[method]
        in_flight = self.metrics.in_flight

        def handler(raw: bytes, context: grpc.ServicerContext) -> Iterator[bytes]:
            started = time.perf_counter()
            in_flight.inc()
            sent = 0
            outcome = None
            try:
                try:
                    with deadline(context.time_remaining()):
                        messages = fn(parse_request(request_type, raw), context, self._current())
                        for message in messages:
                            if not context.is_active():
                                break
                            yield message
                            sent += 1
                except Exception as error:
                    outcome = "error"
                    self._fail(method, context, error)
                    raise
                if context.is_active():
                    outcome = "ok"
                    ok.inc()
            finally:
                # The client went away (or its deadline passed): gRPC stopped
                # pulling messages, and this generator is closed.
                if outcome is None:
                    late = context.time_remaining() <= DEADLINE_SKEW
                    gone = "DEADLINE_EXCEEDED" if late else "CANCELLED"
                    self.metrics.error(method, gone)
                if sent:
                    counted.inc(sent)
                in_flight.dec()
                timer.observe(time.perf_counter() - started)

        return handler

    # -- the RPCs over the names ----------------------------------------------------

    def resolve(self, request: pb.ResolveRequest, context: grpc.ServicerContext, data: DataSet) -> tuple[bytes, int]:
        device = request.device
        check_length(device, "device", MAX_DEVICE_CHARS)  # an empty device is not too long: the order as before
        LookupRequest((device,) if device else (), profile=request.profile, single=True).validated()
        profile = with_request_aliases(data, served_profile(data, request.profile), *request_aliases(request))
        entry = data.encoded_table(profile).get(device)
        if entry is None:
            entry = data.encode(profile, device)
        element, header = entry
        return element[header:], 1

    def resolve_batch(
        self, request: pb.ResolveBatchRequest, context: grpc.ServicerContext, data: DataSet
    ) -> tuple[bytes, int]:
        asked = LookupRequest(request.devices, profile=request.profile, max_devices=self.max_batch).validated()
        devices = asked.devices
        count = len(devices)
        profile = with_request_aliases(data, served_profile(data, request.profile), *request_aliases(request))
        table = data.encoded_table(profile)
        get = table.get
        parts: list[bytes] = []
        append = parts.append
        misses = 0
        for device in devices:
            entry = get(device)
            if entry is None:
                # Only devices that passed this check are ever cached: a hit needs none.
                if len(device) > MAX_DEVICE_CHARS:
                    check_length(device, f"devices[{list(devices).index(device)}]", MAX_DEVICE_CHARS)
                misses += 1
                if misses % _DEADLINE_CHECK_EVERY == 0:
                    check_deadline(context)
                entry = data.encode(profile, device)
            append(entry[0])
        return b"".join(parts), count

    def list_profiles(
        self, request: pb.ListProfilesRequest, context: grpc.ServicerContext, data: DataSet
    ) -> tuple[bytes, int]:
        return data.profiles_message(), 0

    def list_devices(
        self, request: pb.ListDevicesRequest, context: grpc.ServicerContext, data: DataSet
    ) -> Iterator[bytes]:
        vendor = NVIDIA_VENDOR_ID
        check_length(request.vendor, "vendor", MAX_DEVICE_CHARS)
        if request.vendor.strip():
            match = _VENDOR.match(request.vendor)
            if not match:
                raise RpcFailure(
                    grpc.StatusCode.INVALID_ARGUMENT,
                    f"malformed vendor {shown(request.vendor)}: expected four hex digits, e.g. 10de",
                )
            vendor = match.group(1).lower()
        profile = with_request_aliases(data, served_profile(data, request.profile), *request_aliases(request))
        if vendor == NVIDIA_VENDOR_ID:
            resolutions = data.nvidia_devices(profile)
        else:
            resolutions = data.vendor_devices(profile, vendor)
        return (resolution_message(r).SerializeToString() for r in resolutions)


__all__ = ["SERVICE_NAME", "STREAMING", "PciNameService"]
