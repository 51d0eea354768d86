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

import inspect
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote, unquote

import grpc
from google.protobuf.message import DecodeError, Message

from pciname.base.echo import ECHO_CHARS, shown
from pciname.base.render import printable
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
from pciname.server.rpc.mapping import plain, to_message

if TYPE_CHECKING:
    from pciname.lint.linter import Finding

M = TypeVar("M", bound=Message)
T = TypeVar("T")
Metadata = tuple[tuple[str, str], ...]

# -- the service ------------------------------------------------------------------------
SERVICE = pb.DESCRIPTOR.services_by_name["PciName"]
SERVICE_NAME = SERVICE.full_name  # "pciname.v1.PciName"
METHODS = tuple(method.name for method in SERVICE.methods)  # in the .proto's order

# -- what a request may carry ------------------------------------------------------
# Longer fields are INVALID_ARGUMENT before anything is looked up or cached.
MAX_DEVICE_CHARS = 64  # a device or vendor id: "0x10de:0x2236", with room for white space
MAX_PROFILE_CHARS = 128  # a profile name: "kubevirt-gpu-device-plugin@v1.6.0"
MAX_NAME_CHARS = 320  # a resource name, mdev type name or [NAMESPACE/]NAME (63 + 1 + 253)
# The size of error details in all (what they show of an input: ECHO_CHARS): a
# client refuses trailing metadata over 8-16 KB, and percent-encoding can triple it.
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


# -- messages: through the mapping (pciname.server.rpc.mapping) ------------------------------


def _read(message: Message, cls: Callable[..., T], renames: Mapping[str, str] | None = None, **values: Any) -> T:
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


def resolution_message(r: Resolution) -> pb.Resolution:
    return to_message(pb.Resolution, r)


def resolution_from_message(m: pb.Resolution) -> Resolution:
    """(``advertised`` is not read: a Resolution derives it.)"""
    return _read(m, Resolution, {"advertised": ""}, warnings=tuple(NameWarning(w.code, w.message) for w in m.warnings))


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
_DIFF_RENAMES = {"old_resource_name": "old", "new_resource_name": "new"}


def diff_response(from_profile: str, to_profile: str, entries: Iterable[DiffEntry]) -> pb.DiffResponse:
    changes = [
        to_message(pb.DiffEntry, e, change=_CHANGES[e.change], old_resource_name=e.old, new_resource_name=e.new)
        for e in entries
    ]
    return to_message(pb.DiffResponse, from_profile=from_profile, to_profile=to_profile, changes=changes)


def diff_from_response(m: pb.DiffResponse) -> list[DiffEntry]:
    """(``change`` is not read: a DiffEntry derives it.)"""
    return [_read(e, DiffEntry, _DIFF_RENAMES) for e in m.changes]


def profile_info_message(info: ProfileInfo, *, is_default: bool = False) -> pb.ProfileInfo:
    """(``path`` stays on the server; texts read from files are sent valid.)"""
    texts = {name: valid_text(getattr(info, name)) for name in ("released", "pci_ids_version", "note")}
    return to_message(pb.ProfileInfo, info, is_default=is_default, **texts)


def profile_info_from_message(m: pb.ProfileInfo) -> ProfileInfo:
    return _read(m, ProfileInfo, path=None, aliases=tuple(m.aliases))


def profiles_response(infos: Iterable[ProfileInfo], default: str, generation: int) -> pb.ListProfilesResponse:
    """ListProfiles' answer: ``default`` is the name of the default profile."""
    profiles = [profile_info_message(i, is_default=i.name == default) for i in infos]
    return to_message(pb.ListProfilesResponse, data_generation=generation, profiles=profiles)


def profiles_from_response(m: pb.ListProfilesResponse) -> list[ProfileInfo]:
    return [profile_info_from_message(p) for p in m.profiles]


def permitted_from_response(m: pb.PermittedHostDevicesResponse) -> PermittedHostDevices:
    return _read(m, PermittedHostDevices)


def node_pool_from_response(m: pb.NodePoolResponse) -> NodePool:
    return _read(m, NodePool)


def admission_policy_from_response(m: pb.AdmissionPolicyResponse) -> AdmissionPolicy:
    return _read(m, AdmissionPolicy)


def gpu_options_from_response(m: pb.GpuOptionsResponse) -> GpuOptions:
    return _read(m, GpuOptions)


def vgpu_types_response(answer: dict[str, Any]) -> pb.VgpuTypesResponse:
    """VgpuTypes's answer from the dict ``pciname vgpu-types -o json`` prints."""
    source = answer["catalogue"]
    types = [t | {"evidence": t["mdev_name_evidence"]} for t in answer["types"]]
    return to_message(
        pb.VgpuTypesResponse,
        answer,
        covered=True,
        catalogue_release=source["release"],
        catalogue_commit=source["commit"],
        types=types,
    )


def vgpu_types_from_response(m: pb.VgpuTypesResponse) -> VgpuTypes:
    """The types as ``pciname vgpu-types -o json`` prints them (blank texts None)."""
    types = []
    for t in plain(m)["types"]:
        evidence = t.pop("evidence")
        if evidence is not None:
            evidence["driver"] = evidence["driver"] or None
        types.append({"device": m.device, **t, "mdev_name_evidence": evidence, "note": t["note"] or None})
    return _read(m, VgpuTypes, types=types)


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
    return to_message(
        pb.LintResponse,
        findings=findings,
        profile=profile,
        upgrade_to=upgrade_to,
        documents=documents,
        text="".join(f.format() + "\n" for f in findings),
        notes=[printable(note, tab=True) for note in notes],
    )


def lint_from_response(m: pb.LintResponse) -> LintResult:
    return _read(m, LintResult)


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
