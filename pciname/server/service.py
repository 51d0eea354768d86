"""The ``pciname.v1.PciName`` servicer.

Every handler reads the current :class:`~pciname.server.data.DataSet` once,
so a reload never changes the data under a request in flight. Answers are
encoded once per generation and kept as bytes: a ``Resolve`` of a device
seen before costs a dictionary lookup, and a ``ResolveBatch`` response is
the concatenation of its elements' encodings (a repeated field's wire
format), which the handlers return to gRPC as-is.

Errors become status codes with one line of details (see the .proto):
InvalidDeviceError and bad requests INVALID_ARGUMENT, UnknownProfileError
NOT_FOUND, SnapshotMissingError FAILED_PRECONDITION; anything unexpected is
logged with its traceback and answered INTERNAL, never UNKNOWN.

Requests are parsed in the handlers (gRPC gets no deserializer), so a
message that is not protobuf, is truncated or has a string field that is not
UTF-8 is INVALID_ARGUMENT rather than gRPC's INTERNAL. Every device, profile
and name field is checked against the limits below before anything is looked
up or cached (the caches are keyed on the text as sent), and error details
show at most :data:`ECHO_CHARS` characters of any input (:func:`shown`) and
:data:`MAX_DETAILS_BYTES` in all, so they always fit a client's metadata
limit.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Callable, Iterator
from typing import Any

import grpc
from google.protobuf.message import DecodeError

from ..errors import (
    InvalidDeviceError,
    PciIdsError,
    PcinameError,
    SnapshotMissingError,
    SnapshotVerifyError,
    UnknownAlgorithmError,
    UnknownProfileError,
)
from ..naming import checks
from ..pciids.ids import NVIDIA_VENDOR_ID
from ._proto import pciname_pb2 as pb
from .data import DataSet, resolution_message
from .metrics import Metrics

SERVICE_NAME = pb.DESCRIPTOR.services_by_name["PciName"].full_name  # "pciname.v1.PciName"
DEFAULT_MAX_BATCH = 10_000

# -- what a request may carry ------------------------------------------------------
# Longer fields are INVALID_ARGUMENT before anything is looked up or cached.
MAX_DEVICE_CHARS = 64  # a device or vendor id: "0x10de:0x2236", with room for white space
MAX_PROFILE_CHARS = 128  # a profile name: "kubevirt-gpu-device-plugin@v1.6.0"
MAX_NAME_CHARS = 320  # a resource name, mdev type name or [NAMESPACE/]NAME (63 + 1 + 253)
# What error details show of an input, and their size in all: a client
# refuses trailing metadata over 8-16 KB, and percent-encoding can triple it.
ECHO_CHARS = 64
MAX_DETAILS_BYTES = 1024

_VENDOR = re.compile(r"\s*(?:0[xX])?([0-9a-fA-F]{4})\s*\Z")
_DEADLINE_CHECK_EVERY = 256
_CHANGES = {"renamed": pb.DiffEntry.RENAMED, "appears": pb.DiffEntry.APPEARS, "vanishes": pb.DiffEntry.VANISHES}


class RpcFailure(Exception):
    """A request the service refuses: a status code, one line, and trailing
    metadata (e.g. ``pciname-error``)."""

    def __init__(self, code: grpc.StatusCode, details: str, *, metadata: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.metadata = metadata


def shown(text: str, limit: int = ECHO_CHARS, *, quote: bool = True) -> str:
    """``text`` as error details show an input: quoted (``repr``), and past
    ``limit`` characters cut, with its size: ``'10de:22'…(1048576 bytes)``."""
    if len(text) <= limit:
        return repr(text) if quote else text
    size = len(text.encode("utf-8", "surrogatepass"))
    head = repr(text[:limit]) if quote else text[:limit]
    return f"{head}…({size} bytes)"


def details_text(text: str) -> str:
    """Status details: one line of at most :data:`MAX_DETAILS_BYTES` bytes of UTF-8."""
    if "\n" in text or "\r" in text:
        text = " ".join(text.split())
    data = text.encode("utf-8", "surrogatepass")
    if len(data) <= MAX_DETAILS_BYTES:
        return text
    return f"{data[:MAX_DETAILS_BYTES].decode('utf-8', 'ignore')}…({len(data)} bytes)"


def check_length(value: str, field: str, limit: int) -> str:
    """``value`` if it has at most ``limit`` characters, else INVALID_ARGUMENT."""
    if len(value) > limit:
        raise RpcFailure(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{field} is too long ({len(value)} characters, at most {limit}): {shown(value)}",
        )
    return value


def served_profile(data: DataSet, spelling: str, field: str = "profile"):
    """The served profile a request's profile field names (its length checked first)."""
    return data.profile(check_length(spelling, field, MAX_PROFILE_CHARS))


def status_of(error: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status code and details (one bounded line) for an exception a handler raised."""
    if isinstance(error, RpcFailure):
        code, details = error.code, error.details
    elif isinstance(error, (InvalidDeviceError, UnknownAlgorithmError)):
        code, details = grpc.StatusCode.INVALID_ARGUMENT, str(error)
    elif isinstance(error, UnknownProfileError):
        code, details = grpc.StatusCode.NOT_FOUND, str(error)
    elif isinstance(error, (SnapshotMissingError, SnapshotVerifyError, PciIdsError)):
        code, details = grpc.StatusCode.FAILED_PRECONDITION, str(error)
    elif isinstance(error, PcinameError):
        code, details = grpc.StatusCode.INVALID_ARGUMENT, str(error)
    else:
        code, details = grpc.StatusCode.INTERNAL, f"internal error: {type(error).__name__}: {error}"
    return code, details_text(details)


def parse_request(request_type, raw: bytes):
    """A request message from its bytes; INVALID_ARGUMENT if they are not one
    (gRPC would answer a deserializer's exception with INTERNAL)."""
    try:
        return request_type.FromString(raw)
    except (DecodeError, RecursionError):
        raise RpcFailure(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"malformed request: not a valid {request_type.DESCRIPTOR.full_name} message "
            "(truncated, not protobuf, or a string field that is not UTF-8)",
        ) from None


def _serialize(response: Any) -> bytes:
    return response if isinstance(response, bytes) else response.SerializeToString()


class PciNameService:
    """Handlers of the nine RPCs over a swappable DataSet.

    ``cluster`` (a :class:`~pciname.server.feeds.ClusterAccess`, from
    ``--kube``) lets GpuOptions read the cluster; None refuses that."""

    def __init__(
        self,
        data_source: Callable[[], DataSet | None],
        metrics: Metrics,
        logger: logging.Logger,
        *,
        max_batch: int = DEFAULT_MAX_BATCH,
        max_lint_files: int = 100,
        max_lint_bytes: int = 1024 * 1024,
        cluster=None,
    ) -> None:
        self._data = data_source
        self.metrics = metrics
        self.log = logger
        self.max_batch = max_batch
        self.max_lint_files = max_lint_files
        self.max_lint_bytes = max_lint_bytes
        self.cluster = cluster

    # -- plumbing -----------------------------------------------------------------

    def method_handlers(self) -> dict[str, grpc.RpcMethodHandler]:
        unary = {
            "Resolve": (self.resolve, pb.ResolveRequest),
            "ResolveBatch": (self.resolve_batch, pb.ResolveBatchRequest),
            "Reverse": (self.reverse, pb.ReverseRequest),
            "Diff": (self.diff, pb.DiffRequest),
            "ListProfiles": (self.list_profiles, pb.ListProfilesRequest),
            "PermittedHostDevices": (self.permitted_host_devices, pb.PermittedHostDevicesRequest),
            "Lint": (self.lint, pb.LintRequest),
            "GpuOptions": (self.gpu_options, pb.GpuOptionsRequest),
        }
        # No request_deserializer: the handlers get the bytes and parse them
        # (parse_request), so a malformed message is INVALID_ARGUMENT.
        handlers = {
            name: grpc.unary_unary_rpc_method_handler(
                self._unary(name, fn, request), response_serializer=_serialize
            )
            for name, (fn, request) in unary.items()
        }
        handlers["ListDevices"] = grpc.unary_stream_rpc_method_handler(
            self._streaming("ListDevices", self.list_devices, pb.ListDevicesRequest),
            response_serializer=_serialize,
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
        if isinstance(error, SnapshotMissingError):
            context.set_trailing_metadata(
                (("pciname-snapshot", error.snapshot), ("pciname-sha256", error.sha256), ("pciname-url", error.url))
            )
        elif isinstance(error, RpcFailure) and error.metadata:
            context.set_trailing_metadata(error.metadata)
        self.metrics.error(method, code.name)
        context.abort(code, details)

    def _unary(
        self, method: str, fn: Callable[[Any, grpc.ServicerContext, DataSet], tuple[bytes | Any, int]], request_type
    ):
        ok = self.metrics.ok[method]
        timer = self.metrics.timers[method]
        counted = self.metrics.device_counts[method]
        in_flight = self.metrics.in_flight
        perf = time.perf_counter

        def handler(raw, context):
            started = perf()
            in_flight.inc()
            try:
                try:
                    if context.time_remaining() <= 0:
                        raise RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the work began")
                    request = parse_request(request_type, raw)
                    response, devices = fn(request, context, self._current())
                except Exception as error:  # noqa: BLE001 - every error becomes a status
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
        self, method: str, fn: Callable[[Any, grpc.ServicerContext, DataSet], Iterator[bytes]], request_type
    ):
        ok = self.metrics.ok[method]
        timer = self.metrics.timers[method]
        counted = self.metrics.device_counts[method]
        in_flight = self.metrics.in_flight

        def handler(raw, context):
            started = time.perf_counter()
            in_flight.inc()
            sent = 0
            outcome = None
            try:
                try:
                    messages = fn(parse_request(request_type, raw), context, self._current())
                    for message in messages:
                        if not context.is_active():
                            break
                        yield message
                        sent += 1
                except Exception as error:  # noqa: BLE001 - every error becomes a status
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
                    gone = "DEADLINE_EXCEEDED" if context.time_remaining() <= 0 else "CANCELLED"
                    self.metrics.error(method, gone)
                if sent:
                    counted.inc(sent)
                in_flight.dec()
                timer.observe(time.perf_counter() - started)

        return handler

    def _check_deadline(self, context: grpc.ServicerContext) -> None:
        if context.time_remaining() <= 0:
            raise RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the work was done")

    def _check_batch(self, count: int, what: str) -> None:
        if count > self.max_batch:
            raise RpcFailure(
                grpc.StatusCode.INVALID_ARGUMENT,
                f"{count} {what} in one request, more than this server's maximum of {self.max_batch} (--max-batch); "
                "split the request",
            )

    # -- the RPCs ----------------------------------------------------------------

    def resolve(self, request: pb.ResolveRequest, context, data: DataSet):
        device = request.device
        if not device:
            raise RpcFailure(grpc.StatusCode.INVALID_ARGUMENT, "empty request: no device given (e.g. 10de:2236)")
        check_length(device, "device", MAX_DEVICE_CHARS)
        profile = served_profile(data, request.profile)
        entry = data.encoded_table(profile).get(device)
        if entry is None:
            entry = data.encode(profile, device)
        element, header = entry
        return element[header:], 1

    def resolve_batch(self, request: pb.ResolveBatchRequest, context, data: DataSet):
        devices = request.devices
        count = len(devices)
        if not count:
            raise RpcFailure(grpc.StatusCode.INVALID_ARGUMENT, "empty request: no devices given")
        self._check_batch(count, "devices")
        profile = served_profile(data, request.profile)
        table = data.encoded_table(profile)
        get = table.get
        parts = []
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
                    self._check_deadline(context)
                entry = data.encode(profile, device)
            append(entry[0])
        return b"".join(parts), count

    def reverse(self, request: pb.ReverseRequest, context, data: DataSet):
        resource = check_length(request.resource_name, "resource_name", MAX_NAME_CHARS).strip()
        if not resource:
            raise RpcFailure(
                grpc.StatusCode.INVALID_ARGUMENT, "empty request: no resource_name given (e.g. nvidia.com/GA102GL_A10)"
            )
        profile = served_profile(data, request.profile)
        devices = data.resolver.reverse(resource, profile.key)
        wanted = resource if "/" in resource else checks.resource_name(resource)
        return pb.ReverseResponse(resource_name=wanted, profile=profile.name, devices=devices), 0

    def diff(self, request: pb.DiffRequest, context, data: DataSet):
        check_length(request.from_profile, "from_profile", MAX_PROFILE_CHARS)
        check_length(request.to_profile, "to_profile", MAX_PROFILE_CHARS)
        if not request.from_profile.strip() or not request.to_profile.strip():
            raise RpcFailure(
                grpc.StatusCode.INVALID_ARGUMENT, "empty request: both from_profile and to_profile are required"
            )
        old = served_profile(data, request.from_profile, "from_profile")
        new = served_profile(data, request.to_profile, "to_profile")
        entries = data.resolver.diff(old.key, new.key)
        self._check_deadline(context)
        response = pb.DiffResponse(from_profile=old.name, to_profile=new.name)
        response.changes.extend(
            pb.DiffEntry(device=e.device, change=_CHANGES[e.change], old_resource_name=e.old, new_resource_name=e.new)
            for e in entries
        )
        return response, 0

    def list_profiles(self, request: pb.ListProfilesRequest, context, data: DataSet):
        return data.profiles_message(), 0

    def list_devices(self, request: pb.ListDevicesRequest, context, data: DataSet) -> Iterator[bytes]:
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
        profile = served_profile(data, request.profile)
        if vendor == NVIDIA_VENDOR_ID:
            resolutions = data.nvidia_devices(profile)
        else:
            resolutions = data.vendor_devices(profile, vendor)
        return (resolution_message(r).SerializeToString() for r in resolutions)

    def permitted_host_devices(self, request: pb.PermittedHostDevicesRequest, context, data: DataSet):
        from ..kube.generate import permitted_host_devices
        from .feeds import no_auto, permitted_format, render_texts

        devices = list(request.devices)
        mdev_types = list(request.mdev_types)
        if not devices and not mdev_types:
            raise RpcFailure(grpc.StatusCode.INVALID_ARGUMENT, "empty request: no devices and no mdev_types given")
        self._check_batch(len(devices) + len(mdev_types), "devices and mdev types")
        for i, device in enumerate(devices):
            check_length(device, f"devices[{i}]", MAX_DEVICE_CHARS)
        for i, mdev_type in enumerate(mdev_types):
            check_length(mdev_type, f"mdev_types[{i}]", MAX_NAME_CHARS)
        check_length(request.profile, "profile", MAX_PROFILE_CHARS)
        fmt = permitted_format(request)
        no_auto(request.profile)
        profile = served_profile(data, request.profile)
        snippet = permitted_host_devices(
            devices, mdev_types, profile.key, request.include_broken, resolver=data.resolver
        )
        block = snippet.data
        yaml_text, json_text = render_texts(block, fmt, request.replace_defaults)
        response = pb.PermittedHostDevicesResponse(yaml=yaml_text, json=json_text, format=fmt, profile=profile.name)
        response.pci_host_devices.extend(
            pb.PciHostDevice(
                pci_vendor_selector=e["pciVendorSelector"],
                resource_name=e["resourceName"],
                external_resource_provider=e["externalResourceProvider"],
            )
            for e in block.get("pciHostDevices", ())
        )
        response.mediated_devices.extend(
            pb.MediatedDevice(
                mdev_name_selector=e["mdevNameSelector"],
                resource_name=e["resourceName"],
                external_resource_provider=e["externalResourceProvider"],
            )
            for e in block.get("mediatedDevices", ())
        )
        response.left_out.extend(_skipped(s) for s in snippet.left_out)
        response.notes.extend(_skipped(s) for s in snippet.notes)
        return response, len(devices) + len(mdev_types)

    def lint(self, request: pb.LintRequest, context, data: DataSet):
        from . import feeds

        response = feeds.lint(
            request,
            context,
            data,
            max_files=self.max_lint_files,
            max_bytes=self.max_lint_bytes,
            check_deadline=self._check_deadline,
        )
        return response, 0

    def gpu_options(self, request: pb.GpuOptionsRequest, context, data: DataSet):
        from . import feeds

        return feeds.gpu_options(request, context, data, cluster=self.cluster, log=self.log)


def _skipped(entry) -> pb.SkippedEntry:
    return pb.SkippedEntry(
        item=entry.item,
        kind=entry.kind,
        resource_name=entry.resource_name,
        reasons=[pb.Warning(code=w.code, message=w.message) for w in entry.reasons],
    )


__all__ = [
    "DEFAULT_MAX_BATCH",
    "ECHO_CHARS",
    "MAX_DETAILS_BYTES",
    "MAX_DEVICE_CHARS",
    "MAX_NAME_CHARS",
    "MAX_PROFILE_CHARS",
    "PciNameService",
    "RpcFailure",
    "SERVICE_NAME",
    "check_length",
    "details_text",
    "parse_request",
    "served_profile",
    "shown",
    "status_of",
]
