"""What ``pciname serve`` can be told: :class:`ServeConfig`, the default of
every flag, and the checks of their values.

One source for the command line and the Python API: ``pciname serve``
(:mod:`pciname.cli.service`) takes its defaults, and the defaults its help
shows, from here (:func:`flag_default`), and checks its flag values with
:func:`count_problem`, :func:`seconds_problem` and :func:`file_name_problem`;
:meth:`ServeConfig.validate` refuses what the command line refuses, in the
same words.

Nothing here imports gRPC.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import MISSING, dataclass, fields
from typing import Any

from pciname.cluster.kube import DEFAULT_TIMEOUT as DEFAULT_CLUSTER_TIMEOUT
from pciname.errors import ServeError
from pciname.naming.algorithms import ALGORITHMS
from pciname.naming.profiles import CUSTOM_ALGORITHM, DEFAULT_PROFILE

MIB = 1 << 20

# -- defaults (the ones other modules use too; the rest are ServeConfig's) ------------

DEFAULT_PORT = 50051
DEFAULT_LISTEN = f"[::]:{DEFAULT_PORT}"
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


@dataclass
class ServeConfig:
    """Everything ``pciname serve`` takes but the log (one field per flag:
    ``max_batch`` is ``--max-batch``)."""

    listen: str = DEFAULT_LISTEN
    insecure: bool = False
    tls_cert: str | None = None
    tls_key: str | None = None
    tls_client_ca: str | None = None
    max_workers: int = 16
    max_concurrent_rpcs: int = 256
    max_batch: int = DEFAULT_MAX_BATCH
    max_recv_message_bytes: int = 4 * MIB
    max_send_message_bytes: int = 64 * MIB
    max_connection_age: float = 0.0  # seconds; 0: connections live as long as clients keep them
    grace: float = 10.0
    shutdown_delay: float = 0.0
    watch_interval: float = 2.0
    pciids: str | None = None
    algorithm: str = CUSTOM_ALGORITHM
    default_profile: str = DEFAULT_PROFILE
    metrics_listen: str | None = None
    health_listen: str | None = None
    max_lint_files: int = DEFAULT_MAX_LINT_FILES
    max_lint_bytes: int = DEFAULT_MAX_LINT_BYTES
    max_lint_nodes: int = DEFAULT_MAX_LINT_NODES
    max_concurrent_lints: int = DEFAULT_MAX_CONCURRENT_LINTS
    # GpuOptions may read the cluster (read-only) only with kube=True.
    kube: bool = False
    kubeconfig: str | None = None
    kube_context: str | None = None
    kube_timeout: float = DEFAULT_KUBE_TIMEOUT

    def validate(self) -> None:
        """Raise :class:`~pciname.errors.ServeError` (one line) for what
        ``pciname serve`` refuses: first a value out of range (the command
        line refuses those while parsing, in the same words), then flags
        that do not go together, then a malformed address."""
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
        if self.algorithm not in ALGORITHMS:
            choices = ", ".join(map(repr, ALGORITHMS))
            raise ServeError(f"--algorithm: invalid choice: {self.algorithm!r} (choose from {choices})")
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
        if (self.kubeconfig or self.kube_context) and not self.kube:
            raise ServeError("--kubeconfig and --kube-context go with --kube (reading the cluster is off without it)")
        if not self.kube_timeout > 0:
            raise ServeError("--kube-timeout must be more than 0")
        split_address(self.listen)
        if self.metrics_listen:
            split_address(self.metrics_listen)
        if self.health_listen:
            split_address(self.health_listen)


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
SECONDS_FIELDS = ("max_connection_age", "grace", "shutdown_delay", "watch_interval", "kube_timeout")


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
    for field in fields(ServeConfig):
        if field.name == dest and field.default is not MISSING:
            return field.default
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
    "LOG_FORMATS",
    "LOG_LEVELS",
    "MAX_INT",
    "MAX_SECONDS",
    "METRICS_IDLE_SECONDS",
    "METRICS_MAX_CONNECTIONS",
    "MIN_WATCH_INTERVAL",
    "ServeConfig",
    "count_problem",
    "file_name_problem",
    "flag",
    "flag_default",
    "grpc_address",
    "seconds_problem",
    "split_address",
]
