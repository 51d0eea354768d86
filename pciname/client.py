"""A typed client of the pciname gRPC service.

>>> from pciname.client import Client
>>> with Client("pciname.example:50051") as client:          # doctest: +SKIP
...     client.resolve("10de:2236").resource_name
'nvidia.com/GA102GL_A10'

Answers come back as the library's own types (:class:`~pciname.results.Resolution`,
:class:`~pciname.results.DiffEntry`, :class:`~pciname.results.ProfileInfo`), so code
can switch between ``pciname.resolve`` and a server. gRPC errors become
pciname exceptions with one-line messages: INVALID_ARGUMENT
:class:`RemoteInvalidArgument` (an InvalidDeviceError), NOT_FOUND
:class:`RemoteUnknownProfile` (an UnknownProfileError), FAILED_PRECONDITION
:class:`RemoteSnapshotMissing` (a SnapshotMissingError), anything else
:class:`ServiceError`.

Errors of the feed RPCs that are not about profiles come with a reason
(the ``pciname-error`` trailing metadata): a file that is not YAML raises
:class:`RemoteLintInputError` (a :class:`~pciname.kube.lint.LintInputError`
too), objects that are not JSON/YAML or not the right kind
:class:`RemoteInvalidArgument`, and trouble with the server's cluster
(``from_cluster``) :class:`RemoteClusterError`, whose ``reason`` says which.

Plaintext unless TLS is asked for (``tls=True`` or any certificate option).
A client certificate and its key go together; certificate files given as
paths are checked (:func:`check_tls_files`) before gRPC sees them, so a file
that is not PEM, or a key that does not belong to its certificate, is a
one-line :class:`~pciname.errors.PcinameError`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import grpc

from .results import DiffEntry, ProfileInfo, Resolution
from .errors import (
    PcinameError,
    RemoteClusterError,
    RemoteInvalidArgument,
    RemoteLintInputError,
    RemoteSnapshotMissing,
    RemoteUnknownProfile,
    ServiceError,
)
from .naming.checks import NameWarning

__all__ = [
    "Client",
    "GpuOptions",
    "LintResult",
    "PermittedHostDevices",
    "RemoteClusterError",
    "RemoteInvalidArgument",
    "RemoteLintInputError",
    "RemoteSnapshotMissing",
    "RemoteUnknownProfile",
    "ServiceError",
    "SkippedItem",
    "check_tls_files",
    "lookup_via_server",
]

DEFAULT_TIMEOUT = 30.0
# What one ResolveBatch call carries; longer lists are split (servers accept
# 10,000 by default).
BATCH_CHUNK = 5_000
_MAX_RESPONSE_BYTES = 256 * 1024 * 1024


_CLUSTER_REASONS = (
    "cluster-disabled", "cluster-config", "cluster-unreachable", "cluster-refused", "no-kubevirt",
    "kubevirt-not-found", "kubevirt-ambiguous",
)


@dataclass(frozen=True)
class SkippedItem:
    """An input whose name is a problem (``kind`` "pci" or "mdev"), and why."""

    item: str
    kind: str
    resource_name: str | None
    reasons: tuple[NameWarning, ...]


@dataclass(frozen=True)
class PermittedHostDevices:
    """KubeVirt permittedHostDevices entries as the server built them."""

    profile: str
    pci_host_devices: list[dict] = field(default_factory=list)
    mediated_devices: list[dict] = field(default_factory=list)
    yaml: str = ""
    left_out: list[SkippedItem] = field(default_factory=list)
    notes: list[SkippedItem] = field(default_factory=list)
    json: str = ""  # the same as yaml, as JSON
    format: str = "kubevirt"  # where yaml and json put the entries: kubevirt, cozystack or patch

    def to_dict(self) -> dict:
        """``{"permittedHostDevices": {...}}`` (a list only when it has entries),
        whatever the format of ``yaml`` and ``json``."""
        block: dict = {}
        if self.pci_host_devices:
            block["pciHostDevices"] = [dict(e) for e in self.pci_host_devices]
        if self.mediated_devices:
            block["mediatedDevices"] = [dict(e) for e in self.mediated_devices]
        return {"permittedHostDevices": block}


@dataclass(frozen=True)
class LintResult:
    """What Lint found: the library's own :class:`~pciname.kube.lint.Finding` objects."""

    findings: list
    profile: str
    upgrade_to: str | None = None
    documents: int = 0
    text: str = ""  # pciname lint's output: FILE:LINE: code: PATH: message lines


@dataclass(frozen=True)
class GpuOptions:
    """What a tenant node pool may ask for: ``options`` are the dicts
    :func:`pciname.kube.cluster.gpu_options` returns."""

    options: list[dict]
    profile: str
    profile_source: str = "given"
    kubevirt: str = ""


def _plain(value) -> Any:
    """A google.protobuf.Value as plain data (None when unset); whole numbers as int."""
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() else number
    if kind == "list_value":
        return [_plain(v) for v in value.list_value.values]
    if kind == "struct_value":
        return {k: _plain(v) for k, v in value.struct_value.fields.items()}
    return getattr(value, kind)


def _finding(m):
    from .kube.lint import Finding

    return Finding(
        file=m.file,
        line=m.line,
        column=m.column,
        document=m.document,
        path=m.path,
        value=_plain(m.value) if m.HasField("value") else None,
        code=m.code,
        message=m.message,
        expected=_plain(m.expected) if m.HasField("expected") else None,
    )


def _option(m) -> dict:
    return {
        "resource_name": m.resource_name,
        "kind": m.kind,
        "selectors": list(m.selectors),
        "devices": list(m.devices),
        "models": list(m.models),
        "allocatable": m.allocatable,
        "nodes": [{"name": n.name, "allocatable": n.allocatable} for n in m.nodes],
    }


def _objects_text(value, *, as_list: bool) -> str:
    """JSON/YAML text as is; objects (a dict, or a list of them) as JSON."""
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8")
    if isinstance(value, str):
        return value
    if as_list and isinstance(value, (list, tuple)):
        return json.dumps({"apiVersion": "v1", "kind": "List", "items": list(value)})
    return json.dumps(value)


def _tls_problem(error: OSError, otherwise: str) -> str:
    import ssl

    if not isinstance(error, ssl.SSLError):
        return f"cannot read it: {error.strerror or error}"
    return {
        "KEY_VALUES_MISMATCH": "the key does not belong to the certificate",
        "NO_CERTIFICATE_OR_CRL_FOUND": "no PEM certificate in it",
    }.get(error.reason or "", otherwise)


def check_tls_files(
    certificate: str | Path | None = None, key: str | Path | None = None, ca: str | Path | None = None
) -> None:
    """Check TLS files before gRPC gets them (it fails late, or aborts the
    process, on files it cannot use): ``certificate`` and ``key`` (PEM, not
    encrypted, the key of that certificate) go together; ``ca`` is a PEM
    bundle of CA certificates. A problem is a one-line PcinameError naming
    the file."""
    import ssl

    if bool(certificate) != bool(key):
        raise PcinameError("a TLS certificate and its private key go together: give both or neither")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    if certificate and key:
        try:
            context.load_verify_locations(cafile=str(certificate))  # it holds certificates at all
        except OSError as error:  # ssl.SSLError too
            problem = _tls_problem(error, "not a PEM certificate")
            raise PcinameError(f"TLS certificate {certificate} cannot be used: {problem}") from None

        def encrypted() -> bytes:
            raise PcinameError(f"TLS key {key} cannot be used: it is encrypted (gRPC takes only unencrypted keys)")

        try:
            context.load_cert_chain(str(certificate), str(key), password=encrypted)
        except OSError as error:  # ssl.SSLError too
            problem = _tls_problem(error, "not a PEM private key")
            raise PcinameError(f"TLS key {key} cannot be used with certificate {certificate}: {problem}") from None
    if ca:
        try:
            context.load_verify_locations(cafile=str(ca))
        except OSError as error:  # ssl.SSLError too
            raise PcinameError(f"TLS CA bundle {ca} cannot be used: {_tls_problem(error, 'not PEM certificates')}") from None


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
        warnings=tuple(NameWarning(w.code, w.message) for w in m.warnings),
    )


def _skipped_item(m) -> SkippedItem:
    return SkippedItem(m.item, m.kind, _optional(m, "resource_name"), tuple(NameWarning(w.code, w.message) for w in m.reasons))


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
                if bool(certificate_chain) != bool(private_key):
                    # gRPC aborts the process on one without the other.
                    raise PcinameError("certificate_chain and private_key go together (mutual TLS needs both)")
                paths = all(isinstance(v, (str, Path)) for v in (certificate_chain, private_key))
                check_tls_files(
                    certificate_chain if paths else None,
                    private_key if paths else None,
                    root_certificates if isinstance(root_certificates, (str, Path)) else None,
                )
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
        try:
            meta = dict(error.trailing_metadata() or ()) if hasattr(error, "trailing_metadata") else {}
        except Exception:  # noqa: BLE001 - a channel-level error may carry none
            meta = {}
        reason = meta.get("pciname-error", "")
        if reason == "lint-input":
            line = meta.get("pciname-line", "")
            return RemoteLintInputError(
                details, name, file=unquote(meta.get("pciname-file", "")), line=int(line) if line.isdigit() else None
            )
        if reason in _CLUSTER_REASONS:
            return RemoteClusterError(details, name, reason=reason)
        if code is grpc.StatusCode.INVALID_ARGUMENT:
            return RemoteInvalidArgument(details, name)
        if code is grpc.StatusCode.NOT_FOUND:
            return RemoteUnknownProfile(details, name)
        if code is grpc.StatusCode.FAILED_PRECONDITION:
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
        format: str = "kubevirt",
        replace_defaults: bool = False,
    ) -> PermittedHostDevices:
        """``format``: kubevirt, cozystack or patch (where ``yaml`` and ``json`` put the entries)."""
        request = self._pb.PermittedHostDevicesRequest(
            devices=list(devices),
            mdev_types=list(mdev_types),
            profile=profile,
            include_broken=include_broken,
            format=format,
            replace_defaults=replace_defaults,
        )
        response = self._call(self.stub.PermittedHostDevices, request)
        return PermittedHostDevices(
            profile=response.profile,
            json=response.json,
            format=response.format,
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

    def lint(
        self,
        files: dict[str, str | bytes] | Iterable[tuple[str, str | bytes]],
        profile: str = "",
        upgrade_to: str = "",
    ) -> LintResult:
        """Lint YAML files, given as ``{name: content}`` or (name, content)
        pairs (content: text, or bytes as read from a file), all together,
        as ``pciname lint`` does. A file that is not YAML raises
        :class:`RemoteLintInputError`."""
        items = files.items() if isinstance(files, dict) else files
        request = self._pb.LintRequest(profile=profile, upgrade_to=upgrade_to)
        for name, content in items:
            if isinstance(content, bytes):
                request.files.add(name=name, data=content)
            else:
                request.files.add(name=name, text=content)
        response = self._call(self.stub.Lint, request)
        return LintResult(
            findings=[_finding(m) for m in response.findings],
            profile=response.profile,
            upgrade_to=_optional(response, "upgrade_to"),
            documents=response.documents,
            text=response.text,
        )

    def gpu_options(
        self,
        kubevirt: dict | str | bytes | None = None,
        nodes: Sequence[dict] | dict | str | bytes | None = None,
        profile: str = "",
        *,
        from_cluster: bool = False,
        kubevirt_name: str = "",
    ) -> GpuOptions:
        """What a tenant node pool may ask for. ``kubevirt`` and ``nodes`` are
        objects (a dict; a list of Node dicts) or their JSON/YAML text; with
        ``from_cluster`` the server reads them from its cluster instead (only
        servers started with ``--kube``). ``profile`` "auto" infers the
        plugin release from the nodes."""
        request = self._pb.GpuOptionsRequest(
            profile=profile,
            kubevirt=_objects_text(kubevirt, as_list=False),
            nodes=_objects_text(nodes, as_list=True),
            from_cluster=from_cluster,
            kubevirt_name=kubevirt_name,
        )
        response = self._call(self.stub.GpuOptions, request)
        return GpuOptions(
            options=[_option(m) for m in response.options],
            profile=response.profile,
            profile_source=response.profile_source,
            kubevirt=response.kubevirt,
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


def lookup_via_server(server: str, devices: list[str], profile: str, **options: Any) -> list[Resolution]:
    """``pciname lookup --server HOST:PORT``: resolve through a server
    (``options``: :class:`Client`'s, e.g. the TLS ones)."""
    with Client(server, **options) as client:
        return client.resolve_batch(devices, profile)
