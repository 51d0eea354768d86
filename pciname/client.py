"""A typed client of the pciname gRPC service.

>>> from pciname.client import Client
>>> with Client("pciname.example:50051") as client:          # doctest: +SKIP
...     client.resolve("10de:2236").resource_name
'nvidia.com/GA102GL_A10'

Answers come back as the library's own types (:class:`~pciname.api.Resolution`,
:class:`~pciname.api.DiffEntry`, :class:`~pciname.api.ProfileInfo`), so code
can switch between ``pciname.resolve`` and a server. gRPC errors become
pciname exceptions with one-line messages: INVALID_ARGUMENT
:class:`RemoteInvalidArgument` (an InvalidDeviceError), NOT_FOUND
:class:`RemoteUnknownProfile` (an UnknownProfileError), FAILED_PRECONDITION
:class:`RemoteSnapshotMissing` (a SnapshotMissingError), anything else
:class:`ServiceError`.

Plaintext unless TLS is asked for (``tls=True`` or any certificate option).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import grpc

from .api import DiffEntry, ProfileInfo, Resolution
from .errors import InvalidDeviceError, PcinameError, SnapshotMissingError, UnknownProfileError
from .naming.checks import Warning

__all__ = [
    "Client",
    "PermittedHostDevices",
    "RemoteInvalidArgument",
    "RemoteSnapshotMissing",
    "RemoteUnknownProfile",
    "ServiceError",
    "SkippedItem",
    "lookup_via_server",
]

DEFAULT_TIMEOUT = 30.0
# What one ResolveBatch call carries; longer lists are split (servers accept
# 10,000 by default).
BATCH_CHUNK = 5_000
_MAX_RESPONSE_BYTES = 256 * 1024 * 1024


class ServiceError(PcinameError):
    """The server answered with an error status (``code``: e.g. "UNAVAILABLE")."""

    def __init__(self, message: str, code: str = "UNKNOWN") -> None:
        Exception.__init__(self, message)  # not the kw-only __init__ of a sibling base
        self.code = code


class RemoteInvalidArgument(ServiceError, InvalidDeviceError):
    """INVALID_ARGUMENT: a malformed device, an empty or too large request."""


class RemoteUnknownProfile(ServiceError, UnknownProfileError):
    """NOT_FOUND: the server knows no such profile."""


class RemoteSnapshotMissing(ServiceError, SnapshotMissingError):
    """FAILED_PRECONDITION: the profile's pci.ids is not installed on the server."""

    def __init__(self, message: str, code: str = "FAILED_PRECONDITION", *, snapshot: str = "", sha256: str = "",
                 url: str = "") -> None:
        ServiceError.__init__(self, message, code)
        self.snapshot, self.sha256, self.url = snapshot, sha256, url


@dataclass(frozen=True)
class SkippedItem:
    """An input whose name is a problem (``kind`` "pci" or "mdev"), and why."""

    item: str
    kind: str
    resource_name: str | None
    reasons: tuple[Warning, ...]


@dataclass(frozen=True)
class PermittedHostDevices:
    """KubeVirt permittedHostDevices entries as the server built them."""

    profile: str
    pci_host_devices: list[dict] = field(default_factory=list)
    mediated_devices: list[dict] = field(default_factory=list)
    yaml: str = ""
    left_out: list[SkippedItem] = field(default_factory=list)
    notes: list[SkippedItem] = field(default_factory=list)

    def to_dict(self) -> dict:
        """``{"permittedHostDevices": {...}}`` (a list only when it has entries)."""
        block: dict = {}
        if self.pci_host_devices:
            block["pciHostDevices"] = [dict(e) for e in self.pci_host_devices]
        if self.mediated_devices:
            block["mediatedDevices"] = [dict(e) for e in self.mediated_devices]
        return {"permittedHostDevices": block}


def _read(value: bytes | str | Path | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    try:
        return Path(value).read_bytes()
    except OSError as error:
        raise PcinameError(f"{value}: cannot read: {error.strerror or error}") from None


def _optional(message, name: str) -> str | None:
    return getattr(message, name) if message.HasField(name) else None


def resolution_from_message(m) -> Resolution:
    return Resolution(
        device=m.device,
        profile=m.profile,
        algorithm=m.algorithm,
        plugin_release=_optional(m, "plugin_release"),
        name=m.name,
        resource_name=_optional(m, "resource_name"),
        vendor_name=_optional(m, "vendor_name"),
        device_name=_optional(m, "device_name"),
        pci_ids_version=_optional(m, "pci_ids_version"),
        pci_ids_sha256=_optional(m, "pci_ids_sha256"),
        env_var=_optional(m, "env_var"),
        socket_path=_optional(m, "socket_path"),
        warnings=tuple(Warning(w.code, w.message) for w in m.warnings),
    )


def _skipped_item(m) -> SkippedItem:
    return SkippedItem(m.item, m.kind, _optional(m, "resource_name"), tuple(Warning(w.code, w.message) for w in m.reasons))


class Client:
    """Calls a pciname server at ``target`` ("host:port").

    ``timeout`` is every call's deadline in seconds. For TLS pass
    ``root_certificates`` (PEM bytes or a file; default: the system's), and for
    mutual TLS also ``certificate_chain`` and ``private_key``.
    """

    def __init__(
        self,
        target: str,
        *,
        timeout: float | None = DEFAULT_TIMEOUT,
        tls: bool = False,
        root_certificates: bytes | str | Path | None = None,
        certificate_chain: bytes | str | Path | None = None,
        private_key: bytes | str | Path | None = None,
        server_name: str | None = None,
        options: Sequence[tuple[str, object]] = (),
        channel: grpc.Channel | None = None,
    ) -> None:
        from .server._proto import pciname_pb2, pciname_pb2_grpc

        self.target = target
        self.timeout = timeout
        self._pb = pciname_pb2
        all_options = [("grpc.max_receive_message_length", _MAX_RESPONSE_BYTES), *options]
        if server_name:
            all_options.append(("grpc.ssl_target_name_override", server_name))
        if channel is None:
            if tls or root_certificates or certificate_chain or private_key:
                credentials = grpc.ssl_channel_credentials(
                    root_certificates=_read(root_certificates),
                    private_key=_read(private_key),
                    certificate_chain=_read(certificate_chain),
                )
                channel = grpc.secure_channel(target, credentials, options=all_options)
            else:
                channel = grpc.insecure_channel(target, options=all_options)
            self._owns_channel = True
        else:
            self._owns_channel = False
        self.channel = channel
        self.stub = pciname_pb2_grpc.PciNameStub(channel)

    # -- plumbing ------------------------------------------------------------------

    def close(self) -> None:
        if self._owns_channel:
            self.channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _error(self, error: grpc.RpcError) -> PcinameError:
        code = error.code() if hasattr(error, "code") else None
        details = (error.details() if hasattr(error, "details") else None) or str(error)
        details = " ".join(str(details).split())
        name = code.name if code is not None else "UNKNOWN"
        if code is grpc.StatusCode.INVALID_ARGUMENT:
            return RemoteInvalidArgument(details, name)
        if code is grpc.StatusCode.NOT_FOUND:
            return RemoteUnknownProfile(details, name)
        if code is grpc.StatusCode.FAILED_PRECONDITION:
            meta = dict(error.trailing_metadata() or ()) if hasattr(error, "trailing_metadata") else {}
            return RemoteSnapshotMissing(
                details, name, snapshot=meta.get("pciname-snapshot", ""), sha256=meta.get("pciname-sha256", ""),
                url=meta.get("pciname-url", ""),
            )
        if code is grpc.StatusCode.UNAVAILABLE:
            return ServiceError(f"pciname server {self.target} is unavailable: {details}", name)
        if code is grpc.StatusCode.DEADLINE_EXCEEDED:
            return ServiceError(f"pciname server {self.target} did not answer in time ({details})", name)
        return ServiceError(f"pciname server {self.target}: {name}: {details}", name)

    def _call(self, method, request):
        try:
            return method(request, timeout=self.timeout)
        except grpc.RpcError as error:
            raise self._error(error) from None

    # -- RPCs ----------------------------------------------------------------------------

    def resolve(self, device: str, profile: str = "") -> Resolution:
        """One device ("10de:2236"); profile "" is the server's default."""
        return resolution_from_message(self._call(self.stub.Resolve, self._pb.ResolveRequest(device=device, profile=profile)))

    def resolve_batch(self, devices: Iterable[str], profile: str = "", *, chunk: int = BATCH_CHUNK) -> list[Resolution]:
        """Each device, in order (sent in chunks of ``chunk`` devices)."""
        devices = list(devices)
        if not devices:
            raise RemoteInvalidArgument("no devices given", "INVALID_ARGUMENT")
        results: list[Resolution] = []
        for start in range(0, len(devices), chunk):
            request = self._pb.ResolveBatchRequest(devices=devices[start : start + chunk], profile=profile)
            response = self._call(self.stub.ResolveBatch, request)
            results.extend(resolution_from_message(m) for m in response.results)
        return results

    def reverse(self, resource_name: str, profile: str = "") -> list[str]:
        response = self._call(self.stub.Reverse, self._pb.ReverseRequest(resource_name=resource_name, profile=profile))
        return list(response.devices)

    def diff(self, from_profile: str, to_profile: str) -> list[DiffEntry]:
        response = self._call(self.stub.Diff, self._pb.DiffRequest(from_profile=from_profile, to_profile=to_profile))
        return [
            DiffEntry(e.device, _optional(e, "old_resource_name"), _optional(e, "new_resource_name"))
            for e in response.changes
        ]

    def list_profiles(self) -> list[ProfileInfo]:
        response = self._call(self.stub.ListProfiles, self._pb.ListProfilesRequest())
        return [
            ProfileInfo(
                name=p.name,
                kind=p.kind,
                released=_optional(p, "released"),
                algorithm=p.algorithm,
                plugin_release=_optional(p, "plugin_release"),
                pci_ids_version=_optional(p, "pci_ids_version"),
                pci_ids_sha256=_optional(p, "pci_ids_sha256"),
                installed=p.installed,
                path=None,
                aliases=tuple(p.aliases),
                note=p.note,
            )
            for p in response.profiles
        ]

    def list_devices(self, profile: str = "", vendor: str = "") -> Iterator[Resolution]:
        """Every device of ``vendor`` (default NVIDIA) the profile knows, streamed."""
        request = self._pb.ListDevicesRequest(profile=profile, vendor=vendor)
        try:
            for message in self.stub.ListDevices(request, timeout=self.timeout):
                yield resolution_from_message(message)
        except grpc.RpcError as error:
            raise self._error(error) from None

    def permitted_host_devices(
        self,
        devices: Iterable[str] = (),
        mdev_types: Iterable[str] = (),
        profile: str = "",
        *,
        include_broken: bool = False,
    ) -> PermittedHostDevices:
        request = self._pb.PermittedHostDevicesRequest(
            devices=list(devices), mdev_types=list(mdev_types), profile=profile, include_broken=include_broken
        )
        response = self._call(self.stub.PermittedHostDevices, request)
        return PermittedHostDevices(
            profile=response.profile,
            pci_host_devices=[
                {
                    "pciVendorSelector": e.pci_vendor_selector,
                    "resourceName": e.resource_name,
                    "externalResourceProvider": e.external_resource_provider,
                }
                for e in response.pci_host_devices
            ],
            mediated_devices=[
                {
                    "mdevNameSelector": e.mdev_name_selector,
                    "resourceName": e.resource_name,
                    "externalResourceProvider": e.external_resource_provider,
                }
                for e in response.mediated_devices
            ],
            yaml=response.yaml,
            left_out=[_skipped_item(s) for s in response.left_out],
            notes=[_skipped_item(s) for s in response.notes],
        )

    def health(self, service: str = "") -> str:
        """The grpc.health.v1 status name ("SERVING", "NOT_SERVING", ...)."""
        from grpc_health.v1 import health_pb2, health_pb2_grpc

        stub = health_pb2_grpc.HealthStub(self.channel)
        try:
            response = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=self.timeout)
        except grpc.RpcError as error:
            if error.code() is grpc.StatusCode.NOT_FOUND:
                return "SERVICE_UNKNOWN"
            raise self._error(error) from None
        return health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)


def lookup_via_server(server: str, devices: list[str], profile: str) -> list[Resolution]:
    """``pciname lookup --server HOST:PORT``: resolve through a server."""
    with Client(server) as client:
        return client.resolve_batch(devices, profile)
