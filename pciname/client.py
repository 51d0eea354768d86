"""A typed client of the pciname gRPC service: requests out, library values
back (answers read back through :mod:`pciname.server.rpc.mapping`).

>>> from pciname.client import Client
>>> with Client("pciname.example:50051") as client:          # doctest: +SKIP
...     client.resolve("10de:2236").resource_name
'nvidia.com/GA102GL_A10'

Answers come back as the library's own types (:class:`~pciname.resolution.results.Resolution`,
:class:`~pciname.resolution.results.DiffEntry`, :class:`~pciname.resolution.results.ProfileInfo`), so code
can switch between ``pciname.resolve`` and a server. gRPC errors become
pciname exceptions with one-line messages: INVALID_ARGUMENT
:class:`RemoteInvalidArgument` (an InvalidDeviceError), NOT_FOUND
:class:`RemoteUnknownProfile` (an UnknownProfileError), FAILED_PRECONDITION
:class:`RemoteSnapshotMissing` (a SnapshotMissingError), anything else
:class:`ServiceError`.

Errors of the KubeVirt RPCs that are not about profiles come with a reason
(the ``pciname-error`` trailing metadata): a file that is not YAML raises
:class:`RemoteLintInputError` (a :class:`~pciname.lint.linter.LintInputError`
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

import inspect
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeGuard, TypeVar
from urllib.parse import unquote

import grpc
from google.protobuf.message import Message

from pciname.errors import (
    PcinameError,
    RemoteClusterError,
    RemoteInvalidArgument,
    RemoteLintInputError,
    RemoteSnapshotMissing,
    RemoteUnknownProfile,
    ServiceError,
)
from pciname.naming.checks import NameWarning
from pciname.resolution.results import DiffEntry, ProfileInfo, Resolution
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from pciname.server.rpc.mapping import plain
from pciname.server.rpc.wire import (
    CLUSTER_CONFIG,
    CLUSTER_DISABLED,
    CLUSTER_REFUSED,
    CLUSTER_UNREACHABLE,
    ERROR_KEY,
    FILE_KEY,
    KUBEVIRT_AMBIGUOUS,
    KUBEVIRT_NOT_FOUND,
    LINE_KEY,
    LINT_INPUT,
    NO_KUBEVIRT,
    SHA256_KEY,
    SNAPSHOT_KEY,
    URL_KEY,
)

if TYPE_CHECKING:
    from pciname.lint.linter import Finding

T = TypeVar("T")

#: The ``pciname-error`` reasons a client raises RemoteClusterError for.
CLUSTER_REASONS = (
    CLUSTER_DISABLED,
    CLUSTER_CONFIG,
    CLUSTER_UNREACHABLE,
    CLUSTER_REFUSED,
    NO_KUBEVIRT,
    KUBEVIRT_NOT_FOUND,
    KUBEVIRT_AMBIGUOUS,
)

# -- errors -----------------------------------------------------------------------


def remote_error(code: grpc.StatusCode | None, details: str, metadata: Mapping[str, str], target: str) -> PcinameError:
    """The pciname exception for a status a server at ``target`` answered
    (the inverse of :func:`status_of` and :func:`trailing_metadata`)."""
    details = " ".join(details.split())
    name = code.name if code is not None else "UNKNOWN"
    reason = metadata.get(ERROR_KEY, "")
    if reason == LINT_INPUT:
        line = metadata.get(LINE_KEY, "")
        return RemoteLintInputError(
            details, name, file=unquote(metadata.get(FILE_KEY, "")), line=int(line) if line.isdigit() else None
        )
    if reason in CLUSTER_REASONS:
        return RemoteClusterError(details, name, reason=reason)
    if code is grpc.StatusCode.INVALID_ARGUMENT:
        return RemoteInvalidArgument(details, name)
    if code is grpc.StatusCode.NOT_FOUND:
        return RemoteUnknownProfile(details, name)
    if code is grpc.StatusCode.FAILED_PRECONDITION:
        return RemoteSnapshotMissing(
            details,
            name,
            snapshot=metadata.get(SNAPSHOT_KEY, ""),
            sha256=metadata.get(SHA256_KEY, ""),
            url=metadata.get(URL_KEY, ""),
        )
    if code is grpc.StatusCode.UNAVAILABLE:
        return ServiceError(f"pciname server {target} is unavailable: {details}", name)
    if code is grpc.StatusCode.DEADLINE_EXCEEDED:
        return ServiceError(f"pciname server {target} did not answer in time ({details})", name)
    return ServiceError(f"pciname server {target}: {name}: {details}", name)


# -- what the client returns besides the library's own types ---------------------------------


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
    pci_host_devices: list[dict[str, Any]] = field(default_factory=list)
    mediated_devices: list[dict[str, Any]] = field(default_factory=list)
    yaml: str = ""
    left_out: list[SkippedItem] = field(default_factory=list)
    notes: list[SkippedItem] = field(default_factory=list)
    json: str = ""  # the same as yaml, as JSON
    format: str = "kubevirt"  # where yaml and json put the entries: kubevirt, cozystack or patch
    clashes: list[SkippedItem] = field(default_factory=list)  # cozystack: entries clashing with its defaults
    variant: str = ""  # cozystack: the GPU variant checked against

    def to_dict(self) -> dict[str, Any]:
        """``{"permittedHostDevices": {...}}`` (a list only when it has entries),
        whatever the format of ``yaml`` and ``json``."""
        block: dict[str, Any] = {}
        if self.pci_host_devices:
            block["pciHostDevices"] = [dict(e) for e in self.pci_host_devices]
        if self.mediated_devices:
            block["mediatedDevices"] = [dict(e) for e in self.mediated_devices]
        return {"permittedHostDevices": block}


@dataclass(frozen=True)
class NodePool:
    """A Cozystack tenant node group as the server built it (NodePool)."""

    profile: str
    format: str = "values"  # values or patch
    yaml: str = ""
    json: str = ""  # the same as yaml, as JSON
    gpus: list[str] = field(default_factory=list)  # one resource name per GPU
    left_out: list[SkippedItem] = field(default_factory=list)
    notes: list[SkippedItem] = field(default_factory=list)


@dataclass(frozen=True)
class VgpuTypes:
    """The vGPU types of a GPU as the server answered (VgpuTypes): ``types``
    are dicts with the fields of ``pciname vgpu-types -o json``'s types."""

    device: str
    profile: str
    covered: bool
    message: str = ""
    families: list[str] = field(default_factory=list)
    catalogue_release: str = ""
    catalogue_commit: str = ""
    read_on_host: str = ""
    types: list[dict[str, Any]] = field(default_factory=list)


@dataclass(frozen=True)
class AdmissionPolicy:
    """The ValidatingAdmissionPolicy and binding as the server built them (AdmissionPolicy)."""

    profile: str
    yaml: str = ""  # a multi-document stream
    json: str = ""  # a List
    allowed: list[str] = field(default_factory=list)
    actions: list[str] = field(default_factory=list)
    left_out: list[SkippedItem] = field(default_factory=list)
    findings: list[str] = field(default_factory=list)  # lint's, on the CR entries left out


@dataclass(frozen=True)
class ImageCheck:
    """The verdict as the server answered (ImageCheck): the dict ``pciname
    image-check -o json`` prints, ``holds`` None when not judged."""

    image: str
    hami: str
    libvgpu_commit: str = ""
    library: dict[str, Any] = field(default_factory=dict)
    holds: bool | None = None
    reasons: list[str] = field(default_factory=list)
    sees: str | None = None


@dataclass(frozen=True)
class LintResult:
    """What Lint found: the library's own :class:`~pciname.lint.linter.Finding` objects."""

    findings: list[Finding]
    profile: str
    upgrade_to: str | None = None
    documents: int = 0
    text: str = ""  # pciname lint's output: FILE:LINE: code: PATH: message lines
    notes: list[str] = field(default_factory=list)  # pciname lint's "note:" lines, escaped


@dataclass(frozen=True)
class GpuOptions:
    """What a tenant node pool may ask for: ``options`` are the dicts
    :func:`pciname.policy.audit.gpu_options` returns."""

    options: list[dict[str, Any]]
    profile: str
    profile_source: str = "given"
    kubevirt: str = ""


@dataclass(frozen=True)
class DoctorCheckup:
    """The host doctor on the server's node (Doctor): ``findings`` are dicts
    with the fields of ``pciname scan --variant -o json``'s findings."""

    variant: str  # "": every variant
    workload: str = ""
    servable: list[str] = field(default_factory=list)
    findings: list[dict[str, Any]] = field(default_factory=list)


# -- answers, read through the mapping -----------------------------------------------------------


def _answer(message: Message, cls: Callable[..., T], renames: Mapping[str, str] | None = None, **values: Any) -> T:
    """``cls`` from ``message``'s fields (:func:`~pciname.server.rpc.mapping.plain`,
    nested messages read as :data:`_READERS` says), by name or as ``renames``
    says; ``values`` win. Fields ``cls`` does not take are left out."""
    plain_values = plain(message, _READERS)
    taken = inspect.signature(cls).parameters
    renames = renames or {}
    given = {renames.get(name, name): value for name, value in plain_values.items()}
    return cls(**{name: value for name, value in (given | values).items() if name in taken})


def _finding(values: dict[str, Any]) -> Finding:
    # The client imports this module: the linter (PyYAML and the lint rules,
    # some 55 ms) loads only when a Lint answer is read back.
    from pciname.lint.linter import Finding

    return Finding(**values)


def _by_json_name(descriptor: Any) -> Callable[[dict[str, Any]], dict[str, Any]]:
    return lambda values: {f.json_name: values[f.name] for f in descriptor.fields}


_READERS: dict[str, Callable[[dict[str, Any]], Any]] = {
    "pciname.v1.Warning": lambda values: NameWarning(**values),
    "pciname.v1.SkippedEntry": lambda values: SkippedItem(**values | {"reasons": tuple(values["reasons"])}),
    "pciname.v1.PciHostDevice": _by_json_name(pb.PciHostDevice.DESCRIPTOR),
    "pciname.v1.MediatedDevice": _by_json_name(pb.MediatedDevice.DESCRIPTOR),
    "pciname.v1.Finding": _finding,
}


_DIFF_RENAMES = {"old_resource_name": "old", "new_resource_name": "new"}


def resolution_from_message(m: pb.Resolution) -> Resolution:
    """(``advertised`` is not read: a Resolution derives it.)"""
    return _answer(
        m, Resolution, {"advertised": ""}, warnings=tuple(NameWarning(w.code, w.message) for w in m.warnings)
    )


def diff_from_response(m: pb.DiffResponse) -> list[DiffEntry]:
    """(``change`` is not read: a DiffEntry derives it.)"""
    return [_answer(e, DiffEntry, _DIFF_RENAMES) for e in m.changes]


def profile_info_from_message(m: pb.ProfileInfo) -> ProfileInfo:
    return _answer(m, ProfileInfo, path=None, aliases=tuple(m.aliases))


def profiles_from_response(m: pb.ListProfilesResponse) -> list[ProfileInfo]:
    return [profile_info_from_message(p) for p in m.profiles]


def permitted_from_response(m: pb.PermittedHostDevicesResponse) -> PermittedHostDevices:
    return _answer(m, PermittedHostDevices)


def node_pool_from_response(m: pb.NodePoolResponse) -> NodePool:
    return _answer(m, NodePool)


def admission_policy_from_response(m: pb.AdmissionPolicyResponse) -> AdmissionPolicy:
    return _answer(m, AdmissionPolicy)


def gpu_options_from_response(m: pb.GpuOptionsResponse) -> GpuOptions:
    return _answer(m, GpuOptions)


def vgpu_types_from_response(m: pb.VgpuTypesResponse) -> VgpuTypes:
    """The types as ``pciname vgpu-types -o json`` prints them (blank texts None)."""
    types = []
    for t in plain(m)["types"]:
        evidence = t.pop("evidence")
        if evidence is not None:
            evidence["driver"] = evidence["driver"] or None
        types.append({"device": m.device, **t, "mdev_name_evidence": evidence, "note": t["note"] or None})
    return _answer(m, VgpuTypes, types=types)


def gfd_labels_from_response(m: pb.GfdLabelsResponse) -> dict[str, Any]:
    """The answer as ``pciname gfd-labels -o json`` prints it."""
    return plain(m)


def image_check_from_response(m: pb.ImageCheckResponse) -> ImageCheck:
    return _answer(m, ImageCheck)


def lint_from_response(m: pb.LintResponse) -> LintResult:
    return _answer(m, LintResult)


__all__ = [
    "AdmissionPolicy",
    "Client",
    "DoctorCheckup",
    "GpuOptions",
    "ImageCheck",
    "LintResult",
    "NodePool",
    "PermittedHostDevices",
    "RemoteClusterError",
    "RemoteInvalidArgument",
    "RemoteLintInputError",
    "RemoteSnapshotMissing",
    "RemoteUnknownProfile",
    "ServiceError",
    "SkippedItem",
    "VgpuTypes",
    "check_tls_files",
    "lookup_via_server",
]

DEFAULT_TIMEOUT = 30.0
# What one ResolveBatch call carries; longer lists are split (servers accept
# 10,000 by default).
BATCH_CHUNK = 5_000
_MAX_RESPONSE_BYTES = 256 * 1024 * 1024


def _objects_text(value: object, *, as_list: bool) -> str:
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
            raise PcinameError(
                f"TLS CA bundle {ca} cannot be used: {_tls_problem(error, 'not PEM certificates')}"
            ) from None


def _read(value: bytes | str | Path | None) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    try:
        return Path(value).read_bytes()
    except OSError as error:
        raise PcinameError(f"{value}: cannot read: {error.strerror or error}") from None


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
        self.target = target
        self.timeout = timeout
        self._pb = pb
        all_options = [("grpc.max_receive_message_length", _MAX_RESPONSE_BYTES), *options]
        if server_name:
            all_options.append(("grpc.ssl_target_name_override", server_name))
        if channel is None:
            if tls or root_certificates or certificate_chain or private_key:
                if bool(certificate_chain) != bool(private_key):
                    # gRPC aborts the process on one without the other.
                    raise PcinameError("certificate_chain and private_key go together (mutual TLS needs both)")
                check_tls_files(
                    certificate_chain if _is_path(certificate_chain) and _is_path(private_key) else None,
                    private_key if _is_path(certificate_chain) and _is_path(private_key) else None,
                    root_certificates if _is_path(root_certificates) else None,
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
        # grpc's protoc plugin writes no type annotations (and no .pyi).
        self.stub = pb_grpc.PciNameStub(channel)  # type: ignore[no-untyped-call]

    # -- plumbing ------------------------------------------------------------------

    def close(self) -> None:
        if self._owns_channel:
            self.channel.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.close()

    def _error(self, error: grpc.RpcError) -> PcinameError:
        """The pciname exception for a failed call (:func:`pciname.server.rpc.remote_error`)."""
        code = error.code() if hasattr(error, "code") else None
        details = (error.details() if hasattr(error, "details") else None) or str(error)
        try:
            meta = dict(error.trailing_metadata() or ()) if hasattr(error, "trailing_metadata") else {}
        except Exception:  # noqa: BLE001 - a channel-level error may carry none
            meta = {}
        return remote_error(code, str(details), meta, self.target)

    def _call(self, method: Any, request: Any) -> Any:
        try:
            return method(request, timeout=self.timeout)
        except grpc.RpcError as error:
            raise self._error(error) from None

    # -- RPCs ----------------------------------------------------------------------------

    def resolve(
        self, device: str, profile: str = "", *, alias: str | None = None, nvswitch_alias: str | None = None
    ) -> Resolution:
        """One device ("10de:2236"); profile "" is the server's default;
        ``alias``/``nvswitch_alias``: a Kata profile's P_GPU_ALIAS and
        NVSWITCH_ALIAS (None: unset)."""
        request = pb.ResolveRequest(device=device, profile=profile, alias=alias, nvswitch_alias=nvswitch_alias)
        return resolution_from_message(self._call(self.stub.Resolve, request))

    def resolve_batch(
        self,
        devices: Iterable[str],
        profile: str = "",
        *,
        chunk: int = BATCH_CHUNK,
        alias: str | None = None,
        nvswitch_alias: str | None = None,
    ) -> list[Resolution]:
        """Each device, in order (sent in chunks of ``chunk`` devices)."""
        devices = list(devices)
        if not devices:
            raise RemoteInvalidArgument("no devices given", "INVALID_ARGUMENT")
        results: list[Resolution] = []
        for start in range(0, len(devices), chunk):
            request = pb.ResolveBatchRequest(
                devices=devices[start : start + chunk], profile=profile, alias=alias, nvswitch_alias=nvswitch_alias
            )
            response = self._call(self.stub.ResolveBatch, request)
            results.extend(resolution_from_message(m) for m in response.results)
        return results

    def reverse(
        self, resource_name: str, profile: str = "", *, alias: str | None = None, nvswitch_alias: str | None = None
    ) -> list[str]:
        request = pb.ReverseRequest(
            resource_name=resource_name, profile=profile, alias=alias, nvswitch_alias=nvswitch_alias
        )
        return list(self._call(self.stub.Reverse, request).devices)

    def diff(
        self, from_profile: str, to_profile: str, *, alias: str | None = None, nvswitch_alias: str | None = None
    ) -> list[DiffEntry]:
        request = pb.DiffRequest(
            from_profile=from_profile, to_profile=to_profile, alias=alias, nvswitch_alias=nvswitch_alias
        )
        return diff_from_response(self._call(self.stub.Diff, request))

    def list_profiles(self) -> list[ProfileInfo]:
        return profiles_from_response(self._call(self.stub.ListProfiles, pb.ListProfilesRequest()))

    def list_devices(
        self, profile: str = "", vendor: str = "", *, alias: str | None = None, nvswitch_alias: str | None = None
    ) -> Iterator[Resolution]:
        """Every device of ``vendor`` (default NVIDIA) the profile knows, streamed."""
        request = pb.ListDevicesRequest(profile=profile, vendor=vendor, alias=alias, nvswitch_alias=nvswitch_alias)
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
        variant: str = "",
        vgpu_device_manager: bool = False,
        cozystack_defaults: str = "",
        cozystack: str = "",
    ) -> PermittedHostDevices:
        """``format``: kubevirt, cozystack or patch (where ``yaml`` and ``json`` put the entries).
        With cozystack: ``variant`` (default or vgpu; empty: default),
        ``vgpu_device_manager`` and ``cozystack_defaults`` (YAML of a defaults
        table to compare with) as ``pciname permitted-host-devices`` takes them;
        clashes with Cozystack's defaults come back in ``clashes``."""
        request = pb.PermittedHostDevicesRequest(
            devices=list(devices),
            mdev_types=list(mdev_types),
            profile=profile,
            include_broken=include_broken,
            format=format,
            replace_defaults=replace_defaults,
            variant=variant,
            vgpu_device_manager=vgpu_device_manager,
            cozystack_defaults=cozystack_defaults,
            cozystack=cozystack,
        )
        return permitted_from_response(self._call(self.stub.PermittedHostDevices, request))

    def dra_claims(
        self,
        devices: Iterable[str],
        *,
        dra_driver: str = "",
        kubevirt: str = "",
        resource_api: str = "",
        name: str = "",
        prefix: str = "",
        product_name: bool = False,
    ) -> pb.DraClaimsResponse:
        """A VM's GPUs through DRA, as ``pciname vm-gpus --dra`` writes them
        (the response's ``yaml``/``json``, ``notes`` and the releases)."""
        request = pb.DraClaimsRequest(
            devices=list(devices),
            dra_driver=dra_driver,
            kubevirt=kubevirt,
            resource_api=resource_api,
            name=name,
            prefix=prefix,
            product_name=product_name,
        )
        response: pb.DraClaimsResponse = self._call(self.stub.DraClaims, request)
        return response

    def node_pool(
        self,
        group: str,
        devices: Iterable[str] = (),
        mdev_types: Iterable[str] = (),
        profile: str = "",
        *,
        include_broken: bool = False,
        fragment: bool = False,
        format: str = "values",
        instance_type: str | None = None,
        min_replicas: int | None = None,
        max_replicas: int | None = None,
        ephemeral_storage: str | None = None,
        roles: Iterable[str] = (),
        cpu: str | None = None,
        memory: str | None = None,
        cozystack: str = "",
        cluster: str = "",
    ) -> NodePool:
        """A Cozystack tenant node group ``group`` with these GPUs
        (``DEVICE[=COUNT]``, ``TYPE[=COUNT]``), as ``pciname node-pool``
        prints it: ``format`` values, patch or kubernetes-nodes (with
        ``cluster``); ``fragment`` for gpus only; group fields left None take
        the defaults of Cozystack release ``cozystack`` (empty: the newest)."""
        request = pb.NodePoolRequest(
            group=group,
            devices=list(devices),
            mdev_types=list(mdev_types),
            profile=profile,
            include_broken=include_broken,
            fragment=fragment,
            format=format,
            roles=list(roles),
            cozystack=cozystack,
            cluster=cluster,
        )
        optional: dict[str, Any] = {
            "instance_type": instance_type,
            "min_replicas": min_replicas,
            "max_replicas": max_replicas,
            "ephemeral_storage": ephemeral_storage,
            "cpu": cpu,
            "memory": memory,
        }
        for name, value in optional.items():
            if value is not None:
                setattr(request, name, value)
        return node_pool_from_response(self._call(self.stub.NodePool, request))

    def vgpu_types(self, device: str, profile: str = "") -> VgpuTypes:
        """Every vGPU type NVIDIA's catalogue lists for ``device``, as
        ``pciname vgpu-types DEVICE -o json`` answers (``covered`` False,
        with ``message``, when the catalogue does not cover it)."""
        request = pb.VgpuTypesRequest(device=device, profile=profile)
        return vgpu_types_from_response(self._call(self.stub.VgpuTypes, request))

    def gfd_labels(self, product: str, count: int = 1, **options: Any) -> dict[str, Any]:
        """The labels GPU Feature Discovery sets for ``count`` whole GPUs NVML
        names ``product``, as ``pciname gfd-labels -o json`` answers; ``options``:
        ``release``, ``memory_mib``, ``compute``, ``replicas``, ``renamed``,
        ``sharing_strategy``."""
        request = pb.GfdLabelsRequest(product=product, count=count, **options)
        return gfd_labels_from_response(self._call(self.stub.GfdLabels, request))

    def doctor(self, variant: str = "") -> DoctorCheckup:
        """The host doctor on the server's own node (a server started with
        ``--host-root``) for ``variant`` (default, vgpu, container; "": every
        variant), as ``pciname scan --variant VARIANT -o json`` answers."""
        return _answer(self._call(self.stub.Doctor, pb.DoctorRequest(variant=variant)), DoctorCheckup)

    def image_check(self, tarball: bytes, hami: str) -> ImageCheck:
        """Whether HAMi-core's limits hold on the image ``tarball`` (docker
        save or OCI layout) under HAMi release ``hami``, as ``pciname
        image-check IMAGE --hami RELEASE -o json`` answers."""
        request = pb.ImageCheckRequest(tarball=tarball, hami=hami)
        return image_check_from_response(self._call(self.stub.ImageCheck, request))

    def admission_policy(
        self,
        devices: Iterable[str] = (),
        mdev_types: Iterable[str] = (),
        profile: str = "",
        *,
        kubevirt_cr: str = "",
        from_cluster: bool = False,
        kubevirt_name: str = "",
        actions: Iterable[str] = (),
        name: str = "",
        dra: bool = False,
        dra_driver: str = "",
    ) -> AdmissionPolicy:
        """The ValidatingAdmissionPolicy and binding ``pciname
        admission-policy`` prints: allowing what the profile gives these
        devices and vGPU types, or what the KubeVirt CR permits
        (``kubevirt_cr`` text, or ``from_cluster`` on a ``--kube`` server);
        ``actions`` default to Warn and Audit; ``dra`` adds the policy that
        holds DRA claims for the vfio DeviceClass of ``dra_driver`` (empty:
        the newest that publishes vfio devices) to the allowed GPUs."""
        request = pb.AdmissionPolicyRequest(
            devices=list(devices),
            mdev_types=list(mdev_types),
            profile=profile,
            kubevirt_cr=kubevirt_cr,
            from_cluster=from_cluster,
            kubevirt_name=kubevirt_name,
            actions=list(actions),
            name=name,
            dra=dra,
            dra_driver=dra_driver,
        )
        return admission_policy_from_response(self._call(self.stub.AdmissionPolicy, request))

    def lint(
        self,
        files: dict[str, str | bytes] | Iterable[tuple[str, str | bytes]],
        profile: str = "",
        upgrade_to: str = "",
        cozystack: str = "",
        dra_driver: str = "",
        *,
        nvidia_plugin: str = "",
        kubevirt: str = "",
    ) -> LintResult:
        """Lint YAML files, given as ``{name: content}`` or (name, content)
        pairs (content: text, or bytes as read from a file), all together,
        as ``pciname lint`` does (``dra_driver``, ``kubevirt``,
        ``nvidia_plugin``: its ``--dra-driver``, ``--kubevirt`` and
        ``--nvidia-plugin``). A file that is not YAML raises
        :class:`RemoteLintInputError`."""
        items = files.items() if isinstance(files, dict) else files
        request = pb.LintRequest(
            profile=profile,
            upgrade_to=upgrade_to,
            cozystack=cozystack,
            dra_driver=dra_driver,
            kubevirt=kubevirt,
            nvidia_plugin=nvidia_plugin,
        )
        for name, content in items:
            if isinstance(content, bytes):
                request.files.add(name=name, data=content)
            else:
                request.files.add(name=name, text=content)
        return lint_from_response(self._call(self.stub.Lint, request))

    def gpu_options(
        self,
        kubevirt: Mapping[str, Any] | str | bytes | None = None,
        nodes: Sequence[Mapping[str, Any]] | Mapping[str, Any] | str | bytes | None = None,
        profile: str = "",
        *,
        from_cluster: bool = False,
        kubevirt_name: str = "",
        cozystack: str = "",
    ) -> GpuOptions:
        """What a tenant node pool may ask for. ``kubevirt`` and ``nodes`` are
        objects (a dict; a list of Node dicts) or their JSON/YAML text; with
        ``from_cluster`` the server reads them from its cluster instead (only
        servers started with ``--kube``). ``profile`` "auto" infers the
        plugin release from the nodes. ``cozystack`` ("v1.6.2", "latest"):
        the Cozystack release the cluster runs; without a profile, GPUs are
        named as its GPU Operator deploys them."""
        request = pb.GpuOptionsRequest(
            profile=profile,
            kubevirt=_objects_text(kubevirt, as_list=False),
            nodes=_objects_text(nodes, as_list=True),
            from_cluster=from_cluster,
            kubevirt_name=kubevirt_name,
            cozystack=cozystack,
        )
        return gpu_options_from_response(self._call(self.stub.GpuOptions, request))

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
        return str(health_pb2.HealthCheckResponse.ServingStatus.Name(response.status))


def _is_path(value: object) -> TypeGuard[str | Path]:
    return isinstance(value, (str, Path))


def lookup_via_server(
    server: str,
    devices: list[str],
    profile: str,
    *,
    alias: str | None = None,
    nvswitch_alias: str | None = None,
    **options: Any,
) -> list[Resolution]:
    """``pciname lookup --server HOST:PORT``: resolve through a server
    (``options``: :class:`Client`'s, e.g. the TLS ones)."""
    with Client(server, **options) as client:
        return client.resolve_batch(devices, profile, alias=alias, nvswitch_alias=nvswitch_alias)
