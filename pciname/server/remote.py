"""What a client of the ``pciname.v1.PciName`` service reads back
(:mod:`pciname.client`): the answers as library values, read from the
messages through :mod:`pciname.server.rpc.mapping` (a value that goes out
and comes back is the value it was: ``tests/server/rpc/test_server_wire.py``),
and a failed call's status as the ``Remote*`` classes of
:mod:`pciname.errors` (:func:`remote_error`, the inverse of
:func:`pciname.server.rpc.wire.status_of`). Light to import: it loads no
part of the server beyond the wire.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar
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
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.rpc.mapping import plain
from pciname.server.rpc.wire import (
    CLUSTER_REASONS,
    ERROR_KEY,
    FILE_KEY,
    LINE_KEY,
    LINT_INPUT,
    SHA256_KEY,
    SNAPSHOT_KEY,
    URL_KEY,
)

if TYPE_CHECKING:
    from pciname.lint.linter import Finding

T = TypeVar("T")

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


# -- answers, read through the mapping -----------------------------------------------------------


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


_DIFF_RENAMES = {"old_resource_name": "old", "new_resource_name": "new"}


def resolution_from_message(m: pb.Resolution) -> Resolution:
    """(``advertised`` is not read: a Resolution derives it.)"""
    return _read(m, Resolution, {"advertised": ""}, warnings=tuple(NameWarning(w.code, w.message) for w in m.warnings))


def diff_from_response(m: pb.DiffResponse) -> list[DiffEntry]:
    """(``change`` is not read: a DiffEntry derives it.)"""
    return [_read(e, DiffEntry, _DIFF_RENAMES) for e in m.changes]


def profile_info_from_message(m: pb.ProfileInfo) -> ProfileInfo:
    return _read(m, ProfileInfo, path=None, aliases=tuple(m.aliases))


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


def vgpu_types_from_response(m: pb.VgpuTypesResponse) -> VgpuTypes:
    """The types as ``pciname vgpu-types -o json`` prints them (blank texts None)."""
    types = []
    for t in plain(m)["types"]:
        evidence = t.pop("evidence")
        if evidence is not None:
            evidence["driver"] = evidence["driver"] or None
        types.append({"device": m.device, **t, "mdev_name_evidence": evidence, "note": t["note"] or None})
    return _read(m, VgpuTypes, types=types)


def lint_from_response(m: pb.LintResponse) -> LintResult:
    return _read(m, LintResult)


__all__ = [
    "AdmissionPolicy",
    "GpuOptions",
    "LintResult",
    "NodePool",
    "PermittedHostDevices",
    "SkippedItem",
    "VgpuTypes",
    "remote_error",
]
