"""What crosses the wire between the ``pciname.v1.PciName`` service and its
client: the one place where the library's values become ``pciname.v1``
messages and back.

* **Messages**, both directions: ``*_message`` / ``*_response`` build what the
  servicer sends from library values; ``*_from_message`` /
  ``*_from_response`` read them back into library values (what
  :mod:`pciname.client` returns). A value that goes out and comes back is
  the value it was (``tests/test_server_wire.py``).
* **Errors**, both directions: :func:`status_of` and
  :func:`trailing_metadata` turn an exception a handler raised into a
  status code, one bounded line of details and trailing metadata (see the
  .proto); :func:`remote_error` turns them back into the ``Remote*``
  classes of :mod:`pciname.errors`. The ``pciname-error`` reasons
  (:data:`LINT_INPUT`, :data:`CLUSTER_DISABLED`, ...) are defined here only.
* **Request rules**: the length of every device, profile and name field
  (:data:`MAX_DEVICE_CHARS`, ...; :func:`check_length`), what error details
  echo of an input (:func:`shown`, :func:`details_text`), and parsing a
  request from its bytes (:func:`parse_request`: INVALID_ARGUMENT, not
  gRPC's INTERNAL, for bytes that are no such message).

It imports nothing of the server (the client imports it).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, TypeVar
from urllib.parse import quote, unquote

import grpc
from google.protobuf.message import DecodeError, Message
from google.protobuf.struct_pb2 import Value

from pciname.base.render import printable
from pciname.capabilities.limits import DEVICE_CHARS, NAME_CHARS, PROFILE_CHARS
from pciname.capabilities.spelling import RequestError, Spelling
from pciname.errors import (
    CozystackNotWired,
    InvalidDeviceError,
    LintInputError,
    PciIdsError,
    PcinameBaseError,
    PcinameError,
    RemoteClusterError,
    RemoteInvalidArgument,
    RemoteLintInputError,
    RemoteSnapshotMissing,
    RemoteUnknownProfile,
    ServiceError,
    SnapshotMissingError,
    SnapshotVerifyError,
    UnknownAlgorithmError,
    UnknownProfileError,
)
from pciname.naming.checks import NameWarning
from pciname.naming.gotext import valid_text
from pciname.resolution.results import DiffEntry, ProfileInfo, Resolution
from pciname.server._proto import pciname_pb2 as pb

if TYPE_CHECKING:
    from pciname.lint.linter import Finding

M = TypeVar("M", bound=Message)
Metadata = tuple[tuple[str, str], ...]

# -- the service ------------------------------------------------------------------------
SERVICE = pb.DESCRIPTOR.services_by_name["PciName"]
SERVICE_NAME = SERVICE.full_name  # "pciname.v1.PciName"
METHODS = tuple(method.name for method in SERVICE.methods)  # in the .proto's order

# -- what a request may carry ------------------------------------------------------
# Longer fields are INVALID_ARGUMENT before anything is looked up or cached
# (the bounds are the requests' own, declared on their fields: pciname.capabilities.limits).
MAX_DEVICE_CHARS = DEVICE_CHARS
MAX_PROFILE_CHARS = PROFILE_CHARS
MAX_NAME_CHARS = NAME_CHARS
# What error details show of an input, and their size in all: a client
# refuses trailing metadata over 8-16 KB, and percent-encoding can triple it.
ECHO_CHARS = 64
MAX_DETAILS_BYTES = 1024
# At most this much of an input goes into a metadata value (pciname-file).
METADATA_CHARS = 256

# -- trailing metadata ---------------------------------------------------------------
ERROR_KEY = "pciname-error"  # the reason of an error not about profiles (below)
FILE_KEY = "pciname-file"  # lint-input: the first file that is not YAML (percent-encoded)
LINE_KEY = "pciname-line"  # lint-input: its line
SNAPSHOT_KEY = "pciname-snapshot"  # FAILED_PRECONDITION: the missing snapshot,
SHA256_KEY = "pciname-sha256"  # its sha256
URL_KEY = "pciname-url"  # and where it comes from

# Values of pciname-error (the .proto lists them, with their status codes).
LINT_INPUT = "lint-input"
OBJECTS_INPUT = "objects-input"
CLUSTER_DISABLED = "cluster-disabled"
CLUSTER_CONFIG = "cluster-config"
CLUSTER_UNREACHABLE = "cluster-unreachable"
CLUSTER_REFUSED = "cluster-refused"
NO_KUBEVIRT = "no-kubevirt"
KUBEVIRT_NOT_FOUND = "kubevirt-not-found"
KUBEVIRT_AMBIGUOUS = "kubevirt-ambiguous"
# The reasons a client raises RemoteClusterError for.
CLUSTER_REASONS = (
    CLUSTER_DISABLED,
    CLUSTER_CONFIG,
    CLUSTER_UNREACHABLE,
    CLUSTER_REFUSED,
    NO_KUBEVIRT,
    KUBEVIRT_NOT_FOUND,
    KUBEVIRT_AMBIGUOUS,
)

# Printable ASCII but '%': what a metadata value carries as is.
_METADATA_SAFE = "".join(chr(c) for c in range(0x20, 0x7F) if chr(c) != "%")
_INT64 = (-(2**63), 2**63 - 1)


# -- errors, server side ---------------------------------------------------------------------


class RpcFailure(PcinameBaseError):
    """A request the service refuses: a status code, one line, and trailing
    metadata (e.g. ``pciname-error``)."""

    def __init__(self, code: grpc.StatusCode, details: str, *, metadata: Metadata = ()) -> None:
        super().__init__(details)
        self.code = code
        self.details = details
        self.metadata = metadata


def failure(code: grpc.StatusCode, details: str, reason: str, *extra: tuple[str, str]) -> RpcFailure:
    """An RpcFailure with ``reason`` in ``pciname-error`` (and more metadata)."""
    return RpcFailure(code, details, metadata=((ERROR_KEY, reason), *extra))


def lint_input_failure(errors: Sequence[LintInputError]) -> RpcFailure:
    """INVALID_ARGUMENT ``lint-input`` for YAML that cannot be read: every
    error's line, the first one's file and line in the metadata."""
    first = errors[0]
    extra = [(FILE_KEY, metadata_text(first.file))]
    if first.line is not None:
        extra.append((LINE_KEY, str(first.line)))
    return failure(grpc.StatusCode.INVALID_ARGUMENT, "; ".join(str(e) for e in errors), LINT_INPUT, *extra)


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


def metadata_text(text: str) -> str:
    """``text`` for a metadata value: percent-encoded (UTF-8) where it is not
    printable ASCII, and cut (:func:`shown`) when it is long."""
    return quote(shown(text, METADATA_CHARS, quote=False), safe=_METADATA_SAFE)


def check_length(value: str, field: str, limit: int) -> str:
    """``value`` if it has at most ``limit`` characters, else INVALID_ARGUMENT."""
    if len(value) > limit:
        raise RpcFailure(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{field} is too long ({len(value)} characters, at most {limit}): {shown(value)}",
        )
    return value


def check_batch(count: int, what: str, maximum: int) -> None:
    """INVALID_ARGUMENT when one request carries more than ``--max-batch`` items."""
    if count > maximum:
        raise RpcFailure(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{count} {what} in one request, more than this server's maximum of {maximum} (--max-batch); "
            "split the request",
        )


def check_deadline(context: grpc.ServicerContext) -> None:
    """DEADLINE_EXCEEDED once the caller's deadline has passed (between steps of long work)."""
    if context.time_remaining() <= 0:
        raise RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the work was done")


def parse_request(request_type: type[M], raw: bytes) -> M:
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


def status_of(error: BaseException) -> tuple[grpc.StatusCode, str]:
    """The status code and details (one bounded line) for an exception a handler raised."""
    if isinstance(error, RpcFailure):
        code, details = error.code, error.details
    elif isinstance(error, (InvalidDeviceError, UnknownAlgorithmError)):
        code, details = grpc.StatusCode.INVALID_ARGUMENT, str(error)
    elif isinstance(error, UnknownProfileError):
        code, details = grpc.StatusCode.NOT_FOUND, str(error)
    elif isinstance(error, (SnapshotMissingError, SnapshotVerifyError, PciIdsError, CozystackNotWired)):
        code, details = grpc.StatusCode.FAILED_PRECONDITION, str(error)
    elif isinstance(error, RequestError):
        code, details = grpc.StatusCode.INVALID_ARGUMENT, error.spelled(Spelling.RPC)
    elif isinstance(error, PcinameError):
        code, details = grpc.StatusCode.INVALID_ARGUMENT, str(error)
    else:
        code, details = grpc.StatusCode.INTERNAL, f"internal error: {type(error).__name__}: {error}"
    return code, details_text(details)


def trailing_metadata(error: BaseException) -> Metadata:
    """The trailing metadata that goes with :func:`status_of`'s status."""
    if isinstance(error, SnapshotMissingError):
        return ((SNAPSHOT_KEY, error.snapshot), (SHA256_KEY, error.sha256), (URL_KEY, error.url))
    if isinstance(error, RpcFailure):
        return error.metadata
    return ()


# -- errors, client side -----------------------------------------------------------------------


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


class SkippedLike(Protocol):
    """:class:`pciname.kubevirt.generate.Skipped`, or a :class:`SkippedItem`."""

    @property
    def item(self) -> str: ...

    @property
    def kind(self) -> str: ...

    @property
    def resource_name(self) -> str | None: ...

    @property
    def reasons(self) -> tuple[NameWarning, ...]: ...


# -- messages: names ---------------------------------------------------------------------------


def _optional(message: Message, name: str) -> Any:
    """An optional field's value, None when it is unset."""
    return getattr(message, name) if message.HasField(name) else None


def warning_message(w: NameWarning) -> pb.Warning:
    return pb.Warning(code=w.code, message=w.message)


def warning_from_message(m: pb.Warning) -> NameWarning:
    return NameWarning(m.code, m.message)


def resolution_message(r: Resolution) -> pb.Resolution:
    return pb.Resolution(
        device=r.device,
        profile=r.profile,
        resource_name=r.resource_name,
        name=r.name,
        device_name=r.device_name,
        pci_ids_version=r.pci_ids_version,
        env_var=r.env_var,
        socket_path=r.socket_path,
        warnings=[warning_message(w) for w in r.warnings],
        advertised=r.advertised,
        vendor_name=r.vendor_name,
        algorithm=r.algorithm,
        plugin_release=r.plugin_release,
        pci_ids_sha256=r.pci_ids_sha256,
        plugin=r.plugin,
        alias=r.alias,
    )


def resolution_from_message(m: pb.Resolution) -> Resolution:
    """(``advertised`` is not read: a Resolution derives it.)"""
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
        plugin=m.plugin,
        alias=_optional(m, "alias"),
        warnings=tuple(warning_from_message(w) for w in m.warnings),
    )


def framed(message: bytes, field_number: int = 1) -> bytes:
    """``message`` as one element of a repeated message field (tag, length,
    bytes): concatenating these is the encoding of the repeated field, e.g.
    ``ResolveBatchResponse.results`` (field 1)."""
    return _varint(field_number << 3 | 2) + _varint(len(message)) + message


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


_CHANGES = {"renamed": pb.DiffEntry.RENAMED, "appears": pb.DiffEntry.APPEARS, "vanishes": pb.DiffEntry.VANISHES}


def diff_entry_message(e: DiffEntry) -> pb.DiffEntry:
    return pb.DiffEntry(device=e.device, change=_CHANGES[e.change], old_resource_name=e.old, new_resource_name=e.new)


def diff_entry_from_message(m: pb.DiffEntry) -> DiffEntry:
    """(``change`` is not read: a DiffEntry derives it.)"""
    return DiffEntry(m.device, _optional(m, "old_resource_name"), _optional(m, "new_resource_name"))


def diff_response(from_profile: str, to_profile: str, entries: Iterable[DiffEntry]) -> pb.DiffResponse:
    response = pb.DiffResponse(from_profile=from_profile, to_profile=to_profile)
    response.changes.extend(diff_entry_message(e) for e in entries)
    return response


def diff_from_response(m: pb.DiffResponse) -> list[DiffEntry]:
    return [diff_entry_from_message(e) for e in m.changes]


def profile_info_message(info: ProfileInfo, *, is_default: bool = False) -> pb.ProfileInfo:
    """(``path`` stays on the server.)"""
    return pb.ProfileInfo(
        name=info.name,
        kind=info.kind,
        released=valid_text(info.released),
        algorithm=info.algorithm,
        plugin_release=info.plugin_release,
        pci_ids_version=valid_text(info.pci_ids_version),
        pci_ids_sha256=info.pci_ids_sha256,
        installed=info.installed,
        aliases=list(info.aliases),
        note=valid_text(info.note),
        is_default=is_default,
        plugin=info.plugin,
        source=info.source,
    )


def profile_info_from_message(m: pb.ProfileInfo) -> ProfileInfo:
    return ProfileInfo(
        name=m.name,
        kind=m.kind,
        released=_optional(m, "released"),
        algorithm=m.algorithm,
        plugin_release=_optional(m, "plugin_release"),
        pci_ids_version=_optional(m, "pci_ids_version"),
        pci_ids_sha256=_optional(m, "pci_ids_sha256"),
        installed=m.installed,
        path=None,
        aliases=tuple(m.aliases),
        note=m.note,
        plugin=m.plugin,
        source=_optional(m, "source"),
    )


def profiles_response(infos: Iterable[ProfileInfo], default: str, generation: int) -> pb.ListProfilesResponse:
    """ListProfiles' answer: ``default`` is the name of the default profile."""
    response = pb.ListProfilesResponse(data_generation=generation)
    response.profiles.extend(profile_info_message(i, is_default=i.name == default) for i in infos)
    return response


def profiles_from_response(m: pb.ListProfilesResponse) -> list[ProfileInfo]:
    return [profile_info_from_message(p) for p in m.profiles]


# -- messages: PermittedHostDevices ------------------------------------------------------------


def pci_host_device_message(entry: Mapping[str, Any]) -> pb.PciHostDevice:
    """From a permittedHostDevices ``pciHostDevices`` entry."""
    return pb.PciHostDevice(
        pci_vendor_selector=entry["pciVendorSelector"],
        resource_name=entry["resourceName"],
        external_resource_provider=entry["externalResourceProvider"],
    )


def pci_host_device_from_message(m: pb.PciHostDevice) -> dict[str, Any]:
    return {
        "pciVendorSelector": m.pci_vendor_selector,
        "resourceName": m.resource_name,
        "externalResourceProvider": m.external_resource_provider,
    }


def mediated_device_message(entry: Mapping[str, Any]) -> pb.MediatedDevice:
    """From a permittedHostDevices ``mediatedDevices`` entry."""
    return pb.MediatedDevice(
        mdev_name_selector=entry["mdevNameSelector"],
        resource_name=entry["resourceName"],
        external_resource_provider=entry["externalResourceProvider"],
    )


def mediated_device_from_message(m: pb.MediatedDevice) -> dict[str, Any]:
    return {
        "mdevNameSelector": m.mdev_name_selector,
        "resourceName": m.resource_name,
        "externalResourceProvider": m.external_resource_provider,
    }


def skipped_message(s: SkippedLike) -> pb.SkippedEntry:
    return pb.SkippedEntry(
        item=s.item,
        kind=s.kind,
        resource_name=s.resource_name,
        reasons=[warning_message(w) for w in s.reasons],
    )


def skipped_from_message(m: pb.SkippedEntry) -> SkippedItem:
    return SkippedItem(m.item, m.kind, _optional(m, "resource_name"), tuple(warning_from_message(w) for w in m.reasons))


def permitted_response(
    block: Mapping[str, Any],
    *,
    profile: str,
    yaml: str,
    json: str,
    format: str,
    left_out: Iterable[SkippedLike] = (),
    notes: Iterable[SkippedLike] = (),
    clashes: Iterable[SkippedLike] = (),
    variant: str = "",
) -> pb.PermittedHostDevicesResponse:
    """PermittedHostDevices' answer: the permittedHostDevices ``block``
    (``pciHostDevices``, ``mediatedDevices``) and its texts."""
    response = pb.PermittedHostDevicesResponse(yaml=yaml, json=json, format=format, profile=profile, variant=variant)
    response.pci_host_devices.extend(pci_host_device_message(e) for e in block.get("pciHostDevices", ()))
    response.mediated_devices.extend(mediated_device_message(e) for e in block.get("mediatedDevices", ()))
    response.left_out.extend(skipped_message(s) for s in left_out)
    response.notes.extend(skipped_message(s) for s in notes)
    response.clashes.extend(skipped_message(s) for s in clashes)
    return response


def permitted_from_response(m: pb.PermittedHostDevicesResponse) -> PermittedHostDevices:
    return PermittedHostDevices(
        profile=m.profile,
        json=m.json,
        format=m.format,
        pci_host_devices=[pci_host_device_from_message(e) for e in m.pci_host_devices],
        mediated_devices=[mediated_device_from_message(e) for e in m.mediated_devices],
        yaml=m.yaml,
        left_out=[skipped_from_message(s) for s in m.left_out],
        notes=[skipped_from_message(s) for s in m.notes],
        clashes=[skipped_from_message(s) for s in m.clashes],
        variant=m.variant,
    )


# -- messages: NodePool ------------------------------------------------------------------------


def node_pool_response(
    *,
    profile: str,
    format: str,
    yaml: str,
    json: str,
    gpus: Iterable[str],
    left_out: Iterable[SkippedLike] = (),
    notes: Iterable[SkippedLike] = (),
) -> pb.NodePoolResponse:
    """NodePool's answer: the document's texts and the group's GPUs."""
    response = pb.NodePoolResponse(yaml=yaml, json=json, format=format, profile=profile, gpus=list(gpus))
    response.left_out.extend(skipped_message(s) for s in left_out)
    response.notes.extend(skipped_message(s) for s in notes)
    return response


# -- messages: VgpuTypes -----------------------------------------------------------------------


def vgpu_types_response(answer: dict[str, Any]) -> pb.VgpuTypesResponse:
    """VgpuTypes's answer from :func:`pciname.kubevirt.vgpu.vgpu_types`'s dict."""
    source = answer["catalogue"]
    response = pb.VgpuTypesResponse(
        device=answer["device"],
        profile=answer["profile"],
        covered=True,
        families=list(answer["families"]),
        catalogue_release=source["release"],
        catalogue_commit=source["commit"],
        read_on_host=answer["read_on_host"],
    )
    for t in answer["types"]:
        m = response.types.add(
            type=t["type"],
            vgpu_config=t["vgpu_config"],
            max_instances=t["max_instances"],
            family=t["family"],
            mdev_name_certainty=t["mdev_name_certainty"],
            since=t["since"],
            note=t["note"] or "",
        )
        if t["mdev_name"] is not None:
            m.mdev_name = t["mdev_name"]
        if t["resource_name"] is not None:
            m.resource_name = t["resource_name"]
        if t["inferred_max_instances"] is not None:
            m.inferred_max_instances = t["inferred_max_instances"]
        e = t["mdev_name_evidence"]
        if e is not None:
            m.evidence.CopyFrom(
                pb.VgpuPrefixEvidence(
                    observed=e["observed"],
                    kind=e["kind"],
                    source=e["source"],
                    driver=e["driver"] or "",
                    located=e["located"],
                )
            )
    return response


def vgpu_types_from_response(m: pb.VgpuTypesResponse) -> VgpuTypes:
    def evidence(t: pb.VgpuType) -> dict[str, Any] | None:
        if not t.HasField("evidence"):
            return None
        e = t.evidence
        return {
            "observed": e.observed,
            "kind": e.kind,
            "source": e.source,
            "driver": e.driver or None,
            "located": e.located,
        }

    return VgpuTypes(
        device=m.device,
        profile=m.profile,
        covered=m.covered,
        message=m.message,
        families=list(m.families),
        catalogue_release=m.catalogue_release,
        catalogue_commit=m.catalogue_commit,
        read_on_host=m.read_on_host,
        types=[
            {
                "device": m.device,
                "family": t.family,
                "type": t.type,
                "vgpu_config": t.vgpu_config,
                "max_instances": t.max_instances,
                "since": t.since,
                "mdev_name": t.mdev_name if t.HasField("mdev_name") else None,
                "mdev_name_certainty": t.mdev_name_certainty,
                "mdev_name_evidence": evidence(t),
                "resource_name": t.resource_name if t.HasField("resource_name") else None,
                "inferred_max_instances": t.inferred_max_instances if t.HasField("inferred_max_instances") else None,
                "note": t.note or None,
            }
            for t in m.types
        ],
    )


def admission_policy_response(
    *,
    profile: str,
    yaml: str,
    json: str,
    allowed: Iterable[str],
    actions: Iterable[str],
    left_out: Iterable[SkippedLike] = (),
    findings: Iterable[str] = (),
) -> pb.AdmissionPolicyResponse:
    """AdmissionPolicy's answer: the objects' texts and the allowed names."""
    response = pb.AdmissionPolicyResponse(
        yaml=yaml, json=json, profile=profile, allowed=list(allowed), actions=list(actions), findings=list(findings)
    )
    response.left_out.extend(skipped_message(s) for s in left_out)
    return response


def admission_policy_from_response(m: pb.AdmissionPolicyResponse) -> AdmissionPolicy:
    return AdmissionPolicy(
        profile=m.profile,
        yaml=m.yaml,
        json=m.json,
        allowed=list(m.allowed),
        actions=list(m.actions),
        left_out=[skipped_from_message(s) for s in m.left_out],
        findings=list(m.findings),
    )


def node_pool_from_response(m: pb.NodePoolResponse) -> NodePool:
    return NodePool(
        profile=m.profile,
        format=m.format,
        yaml=m.yaml,
        json=m.json,
        gpus=list(m.gpus),
        left_out=[skipped_from_message(s) for s in m.left_out],
        notes=[skipped_from_message(s) for s in m.notes],
    )


# -- messages: Lint ----------------------------------------------------------------------------


def set_value(target: Value, value: Any) -> None:
    """Set a google.protobuf.Value field from plain data (None leaves it
    unset; list items that are not plain become their ``str``)."""
    if value is None:
        return
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, (int, float)):
        target.number_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, (list, tuple)):
        target.list_value.extend([v if isinstance(v, (str, bool, int, float)) or v is None else str(v) for v in value])
        if not value:
            target.list_value.SetInParent()
    else:
        target.string_value = str(value)


def plain_value(value: Value) -> Any:
    """A google.protobuf.Value as plain data (None when unset); whole numbers as int."""
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() else number
    if kind == "list_value":
        return [plain_value(v) for v in value.list_value.values]
    if kind == "struct_value":
        return {k: plain_value(v) for k, v in value.struct_value.fields.items()}
    return getattr(value, kind)


def finding_message(finding: Finding) -> pb.Finding:
    message = pb.Finding(
        file=finding.file,
        line=finding.line,
        column=finding.column,
        document=finding.document,
        path=finding.path,
        code=finding.code,
        message=finding.message,
    )
    set_value(message.value, finding.value)
    set_value(message.expected, finding.expected)
    return message


def finding_from_message(m: pb.Finding) -> Finding:
    # The client imports this module: the linter (PyYAML and the lint rules,
    # some 55 ms) loads only when a Lint answer is read back.
    from pciname.lint.linter import Finding

    return Finding(
        file=m.file,
        line=m.line,
        column=m.column,
        document=m.document,
        path=m.path,
        value=plain_value(m.value) if m.HasField("value") else None,
        code=m.code,
        message=m.message,
        expected=plain_value(m.expected) if m.HasField("expected") else None,
    )


def lint_response(
    findings: Sequence[Finding],
    *,
    profile: str,
    upgrade_to: str | None,
    documents: int,
    notes: Sequence[str] = (),
) -> pb.LintResponse:
    """Lint's answer; its ``text`` is ``pciname lint``'s output for the
    findings, its ``notes`` the notes it prints on stderr, escaped alike."""
    response = pb.LintResponse(
        profile=profile,
        upgrade_to=upgrade_to,
        documents=documents,
        text="".join(f.format() + "\n" for f in findings),
        notes=[printable(note, tab=True) for note in notes],
    )
    response.findings.extend(finding_message(f) for f in findings)
    return response


def lint_from_response(m: pb.LintResponse) -> LintResult:
    return LintResult(
        findings=[finding_from_message(f) for f in m.findings],
        profile=m.profile,
        upgrade_to=_optional(m, "upgrade_to"),
        documents=m.documents,
        text=m.text,
        notes=list(m.notes),
    )


# -- messages: GpuOptions ------------------------------------------------------------------------


def _int64(value: int) -> int:
    return min(max(value, _INT64[0]), _INT64[1])


def option_message(option: Mapping[str, Any]) -> pb.GpuOption:
    """From one of :func:`pciname.policy.audit.gpu_options`' dicts (counts
    beyond int64 are clamped)."""
    return pb.GpuOption(
        resource_name=option["resource_name"],
        kind=option["kind"],
        selectors=option["selectors"],
        devices=option["devices"],
        models=option["models"],
        allocatable=_int64(option["allocatable"]),
        nodes=[pb.NodeAllocatable(name=str(n["name"]), allocatable=_int64(n["allocatable"])) for n in option["nodes"]],
    )


def option_from_message(m: pb.GpuOption) -> dict[str, Any]:
    return {
        "resource_name": m.resource_name,
        "kind": m.kind,
        "selectors": list(m.selectors),
        "devices": list(m.devices),
        "models": list(m.models),
        "allocatable": m.allocatable,
        "nodes": [{"name": n.name, "allocatable": n.allocatable} for n in m.nodes],
    }


def gpu_options_response(
    options: Iterable[Mapping[str, Any]], *, profile: str, profile_source: str, kubevirt: str
) -> pb.GpuOptionsResponse:
    response = pb.GpuOptionsResponse(profile=profile, profile_source=profile_source, kubevirt=kubevirt)
    response.options.extend(option_message(o) for o in options)
    return response


def gpu_options_from_response(m: pb.GpuOptionsResponse) -> GpuOptions:
    return GpuOptions(
        options=[option_from_message(o) for o in m.options],
        profile=m.profile,
        profile_source=m.profile_source,
        kubevirt=m.kubevirt,
    )


__all__ = [
    "CLUSTER_REASONS",
    "ECHO_CHARS",
    "MAX_DETAILS_BYTES",
    "MAX_DEVICE_CHARS",
    "MAX_NAME_CHARS",
    "MAX_PROFILE_CHARS",
    "METHODS",
    "SERVICE_NAME",
    "AdmissionPolicy",
    "GpuOptions",
    "LintResult",
    "NodePool",
    "PermittedHostDevices",
    "RpcFailure",
    "SkippedItem",
    "VgpuTypes",
    "check_batch",
    "check_deadline",
    "check_length",
    "details_text",
    "parse_request",
    "remote_error",
    "shown",
    "status_of",
    "trailing_metadata",
]
