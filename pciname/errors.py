"""Every error pciname raises: one clear line each, for a person.

The CLI prints ``str(error)`` and exits 2; the gRPC service maps the classes
to status codes (:mod:`pciname.server.rpc.wire`), and the client maps status
codes back to the ``Remote*`` classes. Anything else escaping is a bug.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs lookup start-up time

if TYPE_CHECKING:
    from pciname.pciids.model import SyntaxIssue


class PcinameBaseError(Exception):
    """The root of every exception class in pciname: :class:`PcinameError`
    (told to a person) and the signals a module raises to its own caller,
    which catches them (docs/architecture.md, "Errors", says where each
    family lives)."""


class PcinameError(PcinameBaseError):
    """Base class: the message is one line meant for a person."""


class InvalidDeviceError(PcinameError, ValueError):
    """A device id that is not ``VVVV:DDDD`` hex (or ``DDDD`` alone)."""


class UnknownProfileError(PcinameError, LookupError):
    """A profile name pciname does not know."""


class UnknownCozystackRelease(UnknownProfileError):
    """A Cozystack release pciname has no facts for (gRPC: NOT_FOUND)."""


class CozystackNotWired(PcinameError):
    """A Cozystack release whose platform does not wire gpu.permittedHostDevices
    (gRPC: FAILED_PRECONDITION)."""


class UnknownAlgorithmError(PcinameError, LookupError):
    """An algorithm name that is not one of the four."""


class SnapshotMissingError(PcinameError):
    """A profile's pci.ids file is not installed; says how to get it."""

    def __init__(self, message: str, *, snapshot: str, sha256: str, url: str) -> None:
        super().__init__(message)
        self.snapshot = snapshot
        self.sha256 = sha256
        self.url = url


class SnapshotVerifyError(PcinameError):
    """A file offered as a snapshot does not have the sha256 it must have."""


class SnapshotCacheError(PcinameError):
    """The snapshot cache cannot be written (read-only, not a directory, full)."""


class PciIdsError(PcinameError):
    """A pci.ids file that cannot be read or used."""


class PciIdsSyntaxError(PciIdsError):
    """A malformed pci.ids line (raised by strict loads)."""

    def __init__(self, issue: SyntaxIssue, filename: str = "<pci.ids>") -> None:
        super().__init__(issue.format(filename))
        self.issue = issue
        self.filename = filename


# -- files ----------------------------------------------------------------


class FileLimitError(PcinameBaseError, OSError):
    """A file that is not a regular file, or larger than allowed
    (``strerror`` says which, without the path)."""


# -- Kubernetes: lint input, the cluster --------------------------------------


class LintInputError(PcinameError):
    """Input that cannot be linted: unreadable, or not YAML (``FILE:LINE:COL: ...``)."""

    def __init__(self, message: str, *, file: str, line: int | None = None) -> None:
        super().__init__(message)
        self.file = file
        self.line = line


class ApplyRefused(PcinameError):
    """pciname will not (or the server did not) apply: the reason is the message."""


class ClusterError(PcinameError):
    """Reading the cluster failed. ``reason``: ``unreachable`` (no answer,
    a timeout, or an answer that is not JSON), ``refused`` (the API server
    answered ``status``, e.g. 403), ``not-found`` (no KubeVirt CR of the
    name asked for) or ``ambiguous`` (several KubeVirt CRs and no name)."""

    def __init__(self, message: str, *, reason: str, status: int | None = None) -> None:
        super().__init__(message)
        self.reason = reason
        self.status = status


# -- the gRPC server and its client -------------------------------------------


class ServeError(PcinameError):
    """The server cannot start as configured (bad flags, port in use, unreadable certificates)."""


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

    def __init__(
        self, message: str, code: str = "FAILED_PRECONDITION", *, snapshot: str = "", sha256: str = "", url: str = ""
    ) -> None:
        ServiceError.__init__(self, message, code)
        self.snapshot, self.sha256, self.url = snapshot, sha256, url


class RemoteClusterError(ServiceError):
    """GpuOptions could not use the cluster: ``reason`` is the server's
    ``pciname-error`` (cluster-disabled, cluster-config, cluster-unreachable,
    cluster-refused, no-kubevirt, kubevirt-not-found, kubevirt-ambiguous)."""

    def __init__(self, message: str, code: str = "UNKNOWN", *, reason: str = "") -> None:
        ServiceError.__init__(self, message, code)
        self.reason = reason


class RemoteLintInputError(RemoteInvalidArgument, LintInputError):
    """INVALID_ARGUMENT: a file sent to Lint is not YAML (``file``, ``line``
    of the first such file)."""

    def __init__(
        self, message: str, code: str = "INVALID_ARGUMENT", *, file: str = "", line: int | None = None
    ) -> None:
        ServiceError.__init__(self, message, code)
        self.file = file
        self.line = line


class NotInCatalogueError(PcinameError):
    """A device NVIDIA's vGPU type catalogue does not cover (a negative
    answer: ``pciname vgpu-types`` exits 1, the ``VgpuTypes`` RPC answers
    NOT_FOUND); the message says where the catalogue stops."""
