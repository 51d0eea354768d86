"""What ``pciname serve`` can be told: :class:`ServeConfig`, the default of
every flag, and the checks of their values.

One source for the command line and the Python API: ``pciname serve``
(:mod:`pciname.cli.service`) builds a flag from each :class:`ServeConfig`
field (its default the field's, its help, metavar and choices the field's
:class:`Flag`, its group and place :data:`FLAG_GROUPS`), and checks its
flag values with :func:`count_problem`, :func:`seconds_problem` and :func:`file_name_problem`;
:meth:`ServeConfig.validate` refuses what the command line refuses, in the
same words.

Nothing here imports gRPC.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING, dataclass, field, fields
from typing import Any

from pciname.cluster.kube import DEFAULT_TIMEOUT as DEFAULT_CLUSTER_TIMEOUT
from pciname.errors import ServeError
from pciname.naming.algorithms import ALL_ALGORITHMS
from pciname.naming.profiles import CUSTOM_ALGORITHM, DEFAULT_PROFILE, default_profile_help

MIB = 1 << 20

# -- defaults (the ones other modules use too; the rest are ServeConfig's) ------------

DEFAULT_PORT = 50051
DEFAULT_LISTEN = f"[::]:{DEFAULT_PORT}"
#: Health service names (grpc.health.v1) besides ``""`` (the whole server)
#: and ``pciname.v1.PciName``: ``liveness`` is SERVING from start until
#: shutdown begins (a liveness or startup probe); ``readiness``, like the
#: other two, once every RPC can be answered, and NOT_SERVING again while
#: draining (a readiness probe).
LIVENESS_SERVICE = "liveness"
READINESS_SERVICE = "readiness"
#: Threads that build a generation's tables on first use (a profile's view:
#: parse, index), beside the RPC workers; more requests for tables wait.
BUILD_THREADS = 2
DEFAULT_MAX_BATCH = 10_000  # devices per ResolveBatch / PermittedHostDevices request
DEFAULT_MAX_LINT_FILES = 100
DEFAULT_MAX_LINT_BYTES = 1 * MIB
# What one Lint request may cost, beyond its bytes: YAML nodes (aliases
# counted as what they stand for; about 700 bytes of server memory each while
# it is linted), and how many Lint RPCs run at once (more: RESOURCE_EXHAUSTED).
# The README's limits section states the memory this allows (measured by
# bench/lint_memory.py).
DEFAULT_MAX_LINT_NODES = 100_000
DEFAULT_MAX_CONCURRENT_LINTS = 2
# Seconds the Kubernetes API requests of one GpuOptions may take together
# (less when the RPC's deadline is nearer): the cluster commands' --timeout.
DEFAULT_KUBE_TIMEOUT = DEFAULT_CLUSTER_TIMEOUT
# The watcher's shortest interval (0 turns it off): each poll stats every
# watched file, so 1e-9 would spin a core.
MIN_WATCH_INTERVAL = 0.1

# The metrics endpoint (--metrics-listen): connections served at once (one
# thread each; more are closed at once) and how long one may stay idle.
METRICS_MAX_CONNECTIONS = 8
METRICS_IDLE_SECONDS = 5.0

# The log: not ServeConfig's (a server logs to the logger it is given), but
# ``pciname serve`` configures it with these (pciname.server.logs.configure).
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")
DEFAULT_LOG_FORMAT = "text"
DEFAULT_LOG_LEVEL = "info"

# -- what gRPC can take ------------------------------------------------------------------
# Sizes and counts are C ints, durations 32-bit milliseconds.
MAX_INT = 2**31 - 1
MAX_SECONDS = MAX_INT // 1000  # 2147483 s, about 24 days


HOST_VARIANTS = ("default", "vgpu", "container")  #: the doctor's VARIANTS (a test holds them equal)


@dataclass(frozen=True, slots=True)
class Flag:
    """How ``pciname serve`` shows a :class:`ServeConfig` field (a field's
    ``metadata["flag"]``): its help, where ``%(default)s`` is the field's
    default as the help writes it, its metavar, its choices, and whether it
    is a file name (an empty one is refused). The flag's name is the field's
    (:func:`flag`); how its value is read follows the field's type: a bool
    is a switch, an int a count, a float seconds, a str as written."""

    help: str | Callable[[], str]  # a callable: a help that reads data, written as the parser is built
    metavar: str | None = None
    choices: tuple[str, ...] | None = None
    file_name: bool = False

    def help_text(self) -> str:
        return self.help if isinstance(self.help, str) else self.help()


def _flag(
    help: str | Callable[[], str],
    metavar: str | None = None,
    *,
    choices: tuple[str, ...] | None = None,
    file_name: bool = False,
) -> dict[str, Flag]:
    return {"flag": Flag(help, metavar, choices, file_name)}


def _default_profile_help() -> str:
    """``--default-profile``'s help, made when it is shown (it reads the profile registry)."""
    return f"profile of requests that name none ({default_profile_help()}; 'custom' for --pciids)"


@dataclass
class ServeConfig:
    """Everything ``pciname serve`` takes but the log (one field per flag:
    ``max_batch`` is ``--max-batch``; its help is the field's metadata,
    :class:`Flag`, and its group :data:`FLAG_GROUPS`)."""

    listen: str = field(
        default=DEFAULT_LISTEN,
        metadata=_flag("gRPC address (default %(default)s; port 0 picks a free one)", "HOST:PORT"),
    )
    insecure: bool = field(default=False, metadata=_flag("serve plaintext (required when no TLS files are given)"))
    tls_cert: str | None = field(default=None, metadata=_flag("server certificate chain (PEM)", "FILE"))
    tls_key: str | None = field(default=None, metadata=_flag("server private key (PEM)", "FILE"))
    tls_client_ca: str | None = field(
        default=None,
        metadata=_flag(
            "CA bundle (PEM) client certificates must chain to: mutual TLS, clients without one are refused", "FILE"
        ),
    )
    max_workers: int = field(default=16, metadata=_flag("threads handling RPCs (default %(default)s)", "N"))
    max_concurrent_rpcs: int = field(
        default=256, metadata=_flag("RPCs accepted at once, beyond which RESOURCE_EXHAUSTED (default %(default)s)", "N")
    )
    max_batch: int = field(
        default=DEFAULT_MAX_BATCH,
        metadata=_flag("devices per ResolveBatch/PermittedHostDevices request (default %(default)s)", "N"),
    )
    max_recv_message_bytes: int = field(
        default=4 * MIB, metadata=_flag("largest request message (default %(default)s)", "N")
    )
    max_send_message_bytes: int = field(
        default=64 * MIB, metadata=_flag("largest response message (default %(default)s)", "N")
    )
    # seconds; 0: connections live as long as clients keep them
    max_connection_age: float = field(
        default=0.0,
        metadata=_flag(
            "close client connections after this long (gracefully) so clients re-balance "
            "across replicas; 0: never (default %(default)s)",
            "SECONDS",
        ),
    )
    grace: float = field(
        default=10.0,
        metadata=_flag("on SIGTERM, how long RPCs in flight may take to finish (default %(default)s)", "SECONDS"),
    )
    shutdown_delay: float = field(
        default=0.0,
        metadata=_flag(
            "on SIGTERM, keep serving this long with health NOT_SERVING before refusing new RPCs, "
            "so load balancers notice first (default %(default)s)",
            "SECONDS",
        ),
    )
    watch_interval: float = field(
        default=2.0,
        metadata=_flag(
            "poll data/pci.ids, --pciids and the snapshot dirs this often and reload on change; "
            "0 disables (SIGHUP still reloads), else at least 0.1 (default %(default)s)",
            "SECONDS",
        ),
    )
    pciids: str | None = field(
        default=None,
        metadata=_flag(
            "also serve this pci.ids file as profile 'custom'; it is loaded only once it has stopped "
            "changing and ends with a complete line, so replace it by writing a new file beside it and "
            "renaming that into place (mv)",
            "FILE",
            file_name=True,
        ),
    )
    algorithm: str = field(
        default=CUSTOM_ALGORITHM,
        metadata=_flag("name algorithm of the custom profile (default %(default)s)", choices=ALL_ALGORITHMS),
    )
    default_profile: str = field(default=DEFAULT_PROFILE, metadata=_flag(_default_profile_help, "PROFILE"))
    metrics_listen: str | None = field(
        default=None,
        metadata=_flag("serve Prometheus metrics at http://HOST:PORT/metrics (default: off)", "HOST:PORT"),
    )
    health_listen: str | None = field(
        default=None,
        metadata=_flag(
            "also serve grpc.health.v1 alone, plaintext, here, on threads of its own: it answers whatever "
            "the load on --listen (point kubelet probes here)",
            "HOST:PORT",
        ),
    )
    max_lint_files: int = field(
        default=DEFAULT_MAX_LINT_FILES, metadata=_flag("files per Lint request (default %(default)s)", "N")
    )
    max_lint_bytes: int = field(
        default=DEFAULT_MAX_LINT_BYTES,
        metadata=_flag("bytes of YAML per Lint request, all files together (default %(default)s)", "N"),
    )
    max_lint_nodes: int = field(
        default=DEFAULT_MAX_LINT_NODES,
        metadata=_flag(
            "YAML nodes per Lint request, all files together, and per GpuOptions YAML field, "
            "aliases counted as what they stand for (default %(default)s)",
            "N",
        ),
    )
    max_concurrent_lints: int = field(
        default=DEFAULT_MAX_CONCURRENT_LINTS,
        metadata=_flag("Lint RPCs running at once, beyond which RESOURCE_EXHAUSTED (default %(default)s)", "N"),
    )
    # GpuOptions may read the cluster (read-only) only with kube=True.
    kube: bool = field(
        default=False,
        metadata=_flag(
            "let GpuOptions read the KubeVirt CR and the Nodes from the cluster (read-only: get/list "
            "on nodes and kubevirts.kubevirt.io); off by default: callers send the objects"
        ),
    )
    kubeconfig: str | None = field(
        default=None,
        metadata=_flag(
            "with --kube: kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the in-cluster "
            "service account); its credential plugin (users[].user.exec) runs, as with kubectl, within "
            "--kube-timeout, and again only when its credentials expire or are refused",
            "FILE",
        ),
    )
    kube_context: str | None = field(
        default=None, metadata=_flag("with --kube: kubeconfig context (default: the current one)", "NAME")
    )
    kube_timeout: float = field(
        default=DEFAULT_KUBE_TIMEOUT,
        metadata=_flag(
            "with --kube: seconds the API requests of one GpuOptions may take together, "
            "less when the RPC's deadline is nearer (default %(default)s)",
            "SECONDS",
        ),
    )
    host_root: str | None = field(
        default=None,
        metadata=_flag(
            "let Doctor read this node: the directory holding its sys/ and proc/ (the DaemonSet's read-only "
            "host mount, /host); off by default",
            "DIR",
        ),
    )
    host_variant: str = field(
        default="default",
        metadata=_flag(
            "with --host-root and --metrics-listen: the node's GPU variant (default, vgpu, container) whose "
            "findings /metrics counts in pciname_doctor_findings (default %(default)s)",
            "VARIANT",
            choices=HOST_VARIANTS,
        ),
    )
    host_node: str | None = field(
        default=None,
        metadata=_flag("with --host-root: the node's name in the metrics (default: the host name)", "NAME"),
    )
    host_events: float = field(
        default=0.0,
        metadata=_flag(
            "with --host-root and --host-node: post each finding as an Event on the Node at start and every SECONDS, "
            "the cluster as --kubeconfig gives it (RBAC: events create, get, patch in default); 0: never (default)",
            "SECONDS",
        ),
    )

    def validate(self) -> None:
        """Raise :class:`~pciname.errors.ServeError` (one line) for what
        ``pciname serve`` refuses: first a value out of range (the command
        line refuses those while parsing, in the same words), then flags
        that do not go together, then a malformed address."""
        self._check_values()
        self._check_tls()
        given = [
            flag for flag, value in (("--kubeconfig", self.kubeconfig), ("--kube-context", self.kube_context)) if value
        ]
        if given and not (self.kube or self.host_events):
            verb = "goes" if len(given) == 1 else "go"
            raise ServeError(f"{', '.join(given)} {verb} with --kube (reading the cluster is off without it)")
        if not self.kube_timeout > 0:
            raise ServeError("--kube-timeout must be more than 0")
        if self.host_variant not in HOST_VARIANTS:
            choices = ", ".join(map(repr, HOST_VARIANTS))
            raise ServeError(f"--host-variant: invalid choice: {self.host_variant!r} (choose from {choices})")
        if self.host_events and not (self.host_root and self.host_node):
            raise ServeError("--host-events goes with --host-root and --host-node (the Node its Events are on)")
        split_address(self.listen)
        if self.metrics_listen:
            split_address(self.metrics_listen)
        if self.health_listen:
            split_address(self.health_listen)

    def _check_values(self) -> None:
        """Each value in its range, as the command line checks it."""
        for name in COUNT_FIELDS:
            _refuse(name, getattr(self, name), count_problem)
        for name in SECONDS_FIELDS:
            _refuse(name, getattr(self, name), seconds_problem)
        if 0 < self.watch_interval < MIN_WATCH_INTERVAL:
            raise ServeError(
                f"--watch-interval: must be 0 (off) or at least {MIN_WATCH_INTERVAL:g} seconds: {self.watch_interval!r}"
            )
        if self.pciids is not None:
            _refuse("pciids", self.pciids, file_name_problem, show_value=False)
        if self.algorithm not in ALL_ALGORITHMS:
            choices = ", ".join(map(repr, ALL_ALGORITHMS))
            raise ServeError(f"--algorithm: invalid choice: {self.algorithm!r} (choose from {choices})")

    def _check_tls(self) -> None:
        """TLS files that go together, or --insecure."""
        if self.tls_cert or self.tls_key or self.tls_client_ca:
            if not (self.tls_cert and self.tls_key):
                raise ServeError("--tls-cert and --tls-key go together (and --tls-client-ca needs both)")
            if self.insecure:
                raise ServeError("--insecure cannot be combined with --tls-cert/--tls-key")
        elif not self.insecure:
            raise ServeError(
                "no TLS certificate: give --tls-cert FILE --tls-key FILE (and --tls-client-ca FILE for mutual TLS), "
                "or --insecure to serve plaintext"
            )


# Fields whose values gRPC takes as C ints, and durations in seconds.
COUNT_FIELDS = (
    "max_workers",
    "max_concurrent_rpcs",
    "max_batch",
    "max_recv_message_bytes",
    "max_send_message_bytes",
    "max_lint_files",
    "max_lint_bytes",
    "max_lint_nodes",
    "max_concurrent_lints",
)
SECONDS_FIELDS = ("max_connection_age", "grace", "shutdown_delay", "watch_interval", "kube_timeout", "host_events")

#: ``pciname serve --help``'s groups of ServeConfig's flags, each in the
#: order the help lists them (every field once: tests/test_serve_flags.py).
FLAG_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("network", ("listen", "insecure", "tls_cert", "tls_key", "tls_client_ca", "health_listen", "metrics_listen")),
    (
        "limits",
        (
            "max_workers",
            "max_concurrent_rpcs",
            "max_batch",
            "max_recv_message_bytes",
            "max_connection_age",
            "max_send_message_bytes",
            "max_lint_files",
            "max_lint_bytes",
            "max_lint_nodes",
            "max_concurrent_lints",
        ),
    ),
    ("lifecycle", ("grace", "shutdown_delay", "watch_interval")),
    ("data", ("pciids", "algorithm", "default_profile")),
    ("cluster (GpuOptions from_cluster)", ("kube", "kubeconfig", "kube_context", "kube_timeout")),
    ("node (Doctor)", ("host_root", "host_variant", "host_node", "host_events")),
)


def flag(name: str) -> str:
    """A ServeConfig field's flag: ``max_batch`` -> ``--max-batch``."""
    return "--" + name.replace("_", "-")


def flag_default(dest: str) -> object:
    """What ``pciname serve`` uses when the flag stored as ``dest``
    (argparse's name: a ServeConfig field, ``log_format`` or ``log_level``)
    is not given."""
    if dest == "log_format":
        return DEFAULT_LOG_FORMAT
    if dest == "log_level":
        return DEFAULT_LOG_LEVEL
    for each in fields(ServeConfig):
        if each.name == dest and each.default is not MISSING:
            return each.default
    raise KeyError(f"no serve flag stores {dest!r}")


# -- the checks: what is wrong with a value, in the words both surfaces show ----------


def count_problem(value: object) -> str | None:
    """What is wrong with ``value`` as a count or a size (a whole number
    from 1 to :data:`MAX_INT`), or None."""
    if isinstance(value, bool) or not isinstance(value, int):
        return "not an integer"
    if value < 1:
        return "must be at least 1"
    if value > MAX_INT:
        return f"must be at most {MAX_INT}"
    return None


def seconds_problem(value: object) -> str | None:
    """What is wrong with ``value`` as a duration (finite seconds from 0 to
    :data:`MAX_SECONDS`), or None."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "not a number of seconds"
    if not math.isfinite(value):
        return "not a finite number of seconds"
    if value < 0:
        return "cannot be negative"
    if value > MAX_SECONDS:
        return f"must be at most {MAX_SECONDS} seconds (about 24 days)"
    return None


def file_name_problem(value: str) -> str | None:
    """What is wrong with ``value`` as a file name, or None."""
    return None if value else "empty file name"


def _refuse(name: str, value: Any, problem_of: Callable[[Any], str | None], *, show_value: bool = True) -> None:
    problem = problem_of(value)
    if problem is not None:
        raise ServeError(f"{flag(name)}: {problem}: {value!r}" if show_value else f"{flag(name)}: {problem}")


def split_address(address: str) -> tuple[str, int]:
    """``HOST:PORT`` (``[::]:50051``, ``0.0.0.0:9090``, ``:9090``) -> (host, port)."""
    host, sep, port = address.rpartition(":")
    if not sep or not port.isdigit() or int(port) > 65535:
        raise ServeError(f"bad address {address!r}: expected HOST:PORT, e.g. [::]:50051 or 127.0.0.1:0")
    host = host[1:-1] if host.startswith("[") and host.endswith("]") else host
    return host or "::", int(port)


def grpc_address(address: str) -> str:
    """``HOST:PORT`` as gRPC binds it (an IPv6 host in brackets)."""
    host, port = split_address(address)
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


__all__ = [
    "DEFAULT_KUBE_TIMEOUT",
    "DEFAULT_LISTEN",
    "DEFAULT_LOG_FORMAT",
    "DEFAULT_LOG_LEVEL",
    "DEFAULT_MAX_BATCH",
    "DEFAULT_MAX_CONCURRENT_LINTS",
    "DEFAULT_MAX_LINT_BYTES",
    "DEFAULT_MAX_LINT_FILES",
    "DEFAULT_MAX_LINT_NODES",
    "DEFAULT_PORT",
    "FLAG_GROUPS",
    "LOG_FORMATS",
    "LOG_LEVELS",
    "MAX_INT",
    "MAX_SECONDS",
    "METRICS_IDLE_SECONDS",
    "METRICS_MAX_CONNECTIONS",
    "MIN_WATCH_INTERVAL",
    "Flag",
    "ServeConfig",
    "count_problem",
    "file_name_problem",
    "flag",
    "flag_default",
    "grpc_address",
    "seconds_problem",
    "split_address",
]
