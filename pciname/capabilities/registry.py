"""The one registry of capabilities: for each question pciname answers, the
command that asks it, the RPCs that ask it (none: the CLI only), its
request type, its one answer function and its renderers (the output
formats a surface prints it in, the default first when there is one).

A surface only translates: it builds the entry's request from its
arguments or its message, asks the registry (:func:`ask`: the request
validates itself, the entry's answer answers it) and renders the answer
in one of the entry's formats. The entries name their request and answer
by module and attribute, so reading the registry imports no capability
(``pciname --help`` and the lookup fast path stay light); :meth:`Capability.request_type`
and :meth:`Capability.answer_function` import them.

``docs/architecture.md``'s table of capabilities is this registry
(``tests/project/test_layers.py`` holds the one to the other).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Capability:
    """One question: ``command`` (the CLI's words, a subcommand or a flag
    after it: ``vm-gpus --dra``), ``rpcs`` (the gRPC methods that ask it),
    the module of :mod:`pciname.capabilities` holding ``request`` (the
    request type) and ``answer`` (its one answer function), and
    ``formats`` (its renderers: the ``-o`` choices; ``default``, the one
    printed when none is asked for; none: it prints one fixed form)."""

    command: str
    module: str
    request: str
    answer: str
    rpcs: tuple[str, ...] = ()
    formats: tuple[str, ...] = ()
    default: str | None = None

    @property
    def module_name(self) -> str:
        return f"pciname.capabilities.{self.module}"

    def request_type(self) -> type[Any]:
        """The request type (its module imported now)."""
        found: type[Any] = getattr(importlib.import_module(self.module_name), self.request)
        return found

    def answer_function(self) -> Callable[..., Any]:
        """The one answer function (its module imported now)."""
        found: Callable[..., Any] = getattr(importlib.import_module(self.module_name), self.answer)
        return found


#: Output formats most answers render to (``-o``), and the lookups'.
TABLES = ("json", "yaml", "table")
SNIPPETS = ("yaml", "json", "table")

CAPABILITIES: tuple[Capability, ...] = (
    Capability("lookup", "names", "LookupRequest", "answer_lookup", ("Resolve", "ResolveBatch"),
               ("name", "json", "yaml", "table"), "name"),
    Capability("reverse", "names", "ReverseRequest", "answer_reverse", ("Reverse",), ("name", "json", "yaml"), "name"),
    Capability("diff", "names", "DiffRequest", "answer_diff", ("Diff",), TABLES, "table"),
    Capability("profiles", "catalog", "ProfilesRequest", "answer_profiles", ("ListProfiles",), TABLES, "table"),
    Capability("snapshots list", "catalog", "SnapshotsRequest", "answer_snapshots", (), TABLES, "table"),
    Capability("snapshots import", "catalog", "SnapshotImportRequest", "answer_import"),
    Capability("snapshots fetch", "catalog", "SnapshotFetchRequest", "answer_fetch"),
    Capability("snapshots pack", "catalog", "SnapshotPackRequest", "answer_pack"),
    Capability("check", "pciids", "CheckRequest", "answer_check"),
    Capability("describe", "pciids", "DescribeRequest", "answer_describe", (), ("text", "json", "yaml"), "text"),
    Capability("permitted-host-devices", "permitted", "PermittedHostDevicesRequest", "answer",
               ("PermittedHostDevices",), SNIPPETS),
    Capability("node-pool", "node_pool", "NodePoolRequest", "answer", ("NodePool",), SNIPPETS),
    Capability("vm-gpus", "vm_gpus", "VmGpusRequest", "answer", (), SNIPPETS, "yaml"),
    Capability("vm-gpus --dra", "dra_claims", "DraClaimsRequest", "answer", ("DraClaims",), ("yaml", "json"), "yaml"),
    Capability("mdev-name", "mdev_name", "MdevNameRequest", "answer", (), ("name", *SNIPPETS), "name"),
    Capability("gfd-labels", "gfd_labels", "GfdLabelsRequest", "answer", ("GfdLabels",), ("yaml", "json"), "yaml"),
    Capability("kata-pod", "kata_pod", "KataPodRequest", "answer", (), ("yaml", "json"), "yaml"),
    Capability("vgpu-types", "vgpu_types", "VgpuTypesRequest", "answer", ("VgpuTypes",), TABLES, "table"),
    Capability("lint", "lint", "LintRequest", "answer", ("Lint",), ("text", "yaml", "json", "table"), "text"),
    Capability("scan", "scan", "ScanRequest", "answer", (), TABLES, "table"),
    Capability("scan --variant", "doctor", "DoctorRequest", "answer", ("Doctor",), TABLES, "table"),
    Capability("audit", "audit", "AuditRequest", "answer_audit", (), TABLES, "table"),
    Capability("audit --dra", "audit", "AuditRequest", "answer_audit_dra", (), TABLES, "table"),
    Capability("audit --hami", "audit", "HamiAuditRequest", "answer_audit_hami", (), TABLES, "table"),
    Capability("gpu-options", "audit", "GpuOptionsRequest", "answer_gpu_options", ("GpuOptions",), TABLES, "table"),
    Capability("apply permitted-host-devices", "apply", "ApplyRequest", "answer", (), TABLES, "table"),
    Capability("admission-policy", "admission", "AdmissionPolicyRequest", "answer", ("AdmissionPolicy",),
               ("yaml", "json"), "yaml"),
    Capability("image-check", "image_check", "ImageCheckRequest", "answer", ("ImageCheck",), ("text", "json", "yaml"),
               "text"),
)  # fmt: skip

BY_COMMAND = {c.command: c for c in CAPABILITIES}
#: The commands that answer no question: the service, its probe, the shells' completion.
NOT_QUESTIONS = ("completion", "health", "serve")


def capability(command: str) -> Capability:
    """The entry of ``command`` (``vm-gpus``, ``vm-gpus --dra``); KeyError for another."""
    return BY_COMMAND[command]


def ask(command: str, request: Any, *args: Any, **kwargs: Any) -> Any:
    """The answer of ``command``'s capability to ``request``, a request its
    own ``validated()`` made (a surface validates first: what it resolves
    beside the request, such as the profile, reads the validated request);
    ``args`` and ``kwargs`` are what the answer takes beside it (the profile
    as the surface resolved it, a cluster client, ...). A TypeError for a
    request of another capability."""
    entry = capability(command)
    if not isinstance(request, entry.request_type()):
        raise TypeError(f"{command} answers a {entry.request}, not a {type(request).__name__}")
    return entry.answer_function()(request, *args, **kwargs)


def formats(command: str) -> tuple[str, ...]:
    """``command``'s renderers: its ``-o`` choices."""
    return capability(command).formats


__all__ = ["BY_COMMAND", "CAPABILITIES", "NOT_QUESTIONS", "Capability", "ask", "capability", "formats"]
