"""What crosses the wire between the ``pciname.v1.PciName`` service and its
client, the server's side (the client's: :mod:`pciname.client`).

* **Messages**: ``*_message`` / ``*_response`` build what the servicer sends
  from library values, through :mod:`pciname.server.rpc.mapping` (the
  handlers call its :func:`~pciname.server.rpc.mapping.to_message` for the
  rest); :func:`framed` frames an encoded element of a repeated field.
* **Errors**: :func:`status_of` and :func:`trailing_metadata` turn an
  exception a handler raised into a status code, one bounded line of
  details and trailing metadata (see the .proto). The ``pciname-error``
  reasons (:data:`LINT_INPUT`, :data:`CLUSTER_DISABLED`, ...) are defined
  here only.
* **Request rules**: the length of every device, profile and name field
  (:func:`check_length`, by the bounds :mod:`pciname.capabilities.limits` declares), what error details
  echo of an input (:func:`shown`, :func:`details_text`), and parsing a
  request from its bytes (:func:`parse_request`: INVALID_ARGUMENT, not
  gRPC's INTERNAL, for bytes that are no such message).

It imports nothing of the server (the client imports it).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, TypeVar
from urllib.parse import quote

import grpc
from google.protobuf.message import DecodeError, Message

from pciname.base.echo import ECHO_CHARS, shown
from pciname.base.render import printable
from pciname.capabilities.spelling import RequestError, Spelling
from pciname.errors import (
    CozystackNotWired,
    InvalidDeviceError,
    LintInputError,
    PciIdsError,
    PcinameBaseError,
    PcinameError,
    SnapshotMissingError,
    SnapshotVerifyError,
    UnknownAlgorithmError,
    UnknownProfileError,
)
from pciname.naming.gotext import valid_text
from pciname.resolution.results import DiffEntry, ProfileInfo, Resolution
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.rpc.mapping import to_message

M = TypeVar("M", bound=Message)
T = TypeVar("T")
Metadata = tuple[tuple[str, str], ...]

# -- the service ------------------------------------------------------------------------
SERVICE = pb.DESCRIPTOR.services_by_name["PciName"]
SERVICE_NAME = SERVICE.full_name  # "pciname.v1.PciName"
METHODS = tuple(method.name for method in SERVICE.methods)  # in the .proto's order

# -- what error details carry -----------------------------------------------------
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


# -- messages: through the mapping (pciname.server.rpc.mapping) ------------------------------


def resolution_message(r: Resolution) -> pb.Resolution:
    return to_message(pb.Resolution, r)


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


def diff_response(from_profile: str, to_profile: str, entries: Iterable[DiffEntry]) -> pb.DiffResponse:
    changes = [
        to_message(pb.DiffEntry, e, change=_CHANGES[e.change], old_resource_name=e.old, new_resource_name=e.new)
        for e in entries
    ]
    return to_message(pb.DiffResponse, from_profile=from_profile, to_profile=to_profile, changes=changes)


def profile_info_message(info: ProfileInfo, *, is_default: bool = False) -> pb.ProfileInfo:
    """(``path`` stays on the server; texts read from files are sent valid.)"""
    texts = {name: valid_text(getattr(info, name)) for name in ("released", "pci_ids_version", "note")}
    return to_message(pb.ProfileInfo, info, is_default=is_default, **texts)


def profiles_response(infos: Iterable[ProfileInfo], default: str, generation: int) -> pb.ListProfilesResponse:
    """ListProfiles' answer: ``default`` is the name of the default profile."""
    profiles = [profile_info_message(i, is_default=i.name == default) for i in infos]
    return to_message(pb.ListProfilesResponse, data_generation=generation, profiles=profiles)


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


def lint_response(
    findings: Sequence[Any],  # the linter's Finding objects (pciname.capabilities.lint)
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


__all__ = [
    "ECHO_CHARS",
    "MAX_DETAILS_BYTES",
    "METHODS",
    "SERVICE_NAME",
    "RpcFailure",
    "check_batch",
    "check_deadline",
    "check_length",
    "details_text",
    "parse_request",
    "shown",
    "status_of",
    "trailing_metadata",
]
