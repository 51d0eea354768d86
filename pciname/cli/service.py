"""The ``serve`` and ``health`` commands: their flags and what they run.

``serve``'s defaults, and the checks of its flag values, are
:mod:`pciname.server.config`'s (the Python API's :class:`ServeConfig` has the
same ones). Building the parser must not import :mod:`pciname.server` (nor
grpc, which only these commands need), so a default stands in as a
:class:`_Deferred` and is looked up when a command line is parsed or the
help is shown.
"""

from __future__ import annotations

import argparse
import functools
import re
from collections.abc import Callable
from typing import Any, TypeVar

from pciname.naming.algorithms import ALGORITHMS
from pciname.naming.profiles import default_profile_help

# Where health (a probe next to the server) asks: pciname.server.config's
# DEFAULT_PORT (tests/test_server_wire.py checks), spelled out for the help.
DEFAULT_SERVER = "localhost:50051"

# Targets gRPC resolves itself ("unix:/run/pciname.sock", "dns:///host:port"), passed as they are.
_TARGET_SCHEMES = ("unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:", "vsock:")
_PORT = re.compile(r"[0-9]{1,5}")
_MIB = 1 << 20
# pciname.server.config's LOG_FORMATS and LOG_LEVELS (see register()).
LOG_FORMATS = ("text", "json")
LOG_LEVELS = ("debug", "info", "warning", "error")

T = TypeVar("T")


class _Deferred(str):
    """A ``serve`` flag's default, named by the flag's dest, standing in for
    :func:`pciname.server.config.flag_default`'s value. argparse runs a
    string default through the flag's ``type`` when the flag is not given
    (:func:`_or_default` returns the value then), and shows it in the help
    with ``str()`` (``%(default)s``): both happen only when a command line
    is parsed (an argparse that formatted help texts while the parser is
    built would load pciname.server then, which
    tests/test_server_proto.py's start-up test would catch)."""

    @property
    def value(self) -> Any:
        from pciname.server.config import flag_default

        return flag_default(str.__str__(self))

    def __str__(self) -> str:
        value = self.value
        if isinstance(value, float):
            return f"{value:g}"
        if str.__str__(self).endswith("_bytes") and isinstance(value, int) and value >= _MIB and not value % _MIB:
            return f"{value // _MIB} MiB"
        return str(value)


def _or_default(convert: Callable[[str], T]) -> Callable[[str], T]:
    """The flag's ``type``: ``convert``, but a :class:`_Deferred` default's value as it is."""

    @functools.wraps(convert)
    def parse(text: str) -> T:
        if isinstance(text, _Deferred):
            value: T = text.value
            return value
        return convert(text)

    return parse


def _as_is(text: str) -> str:
    """The ``type`` of flags taken as written."""
    return text


def _positive_int(text: str) -> int:
    from pciname.server.config import count_problem

    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    problem = count_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{problem}: {text!r}")
    return value


def _seconds(text: str) -> float:
    from pciname.server.config import seconds_problem

    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    problem = seconds_problem(value)
    if problem is not None:
        raise argparse.ArgumentTypeError(f"{problem}: {text!r}")
    return value


def _file_name(text: str) -> str:
    from pciname.server.config import file_name_problem

    problem = file_name_problem(text)
    if problem is not None:
        raise argparse.ArgumentTypeError(problem)
    return text


def server_address(text: str) -> str:
    """A ``--server`` value: HOST:PORT with a port from 1 to 65535 (an IPv6
    host in brackets), or a gRPC target with a scheme (unix:PATH, dns:...)."""
    if not text.strip():
        raise argparse.ArgumentTypeError("empty address: expected HOST:PORT, e.g. 127.0.0.1:50051")
    if text.startswith(_TARGET_SCHEMES):
        return text
    host, sep, port = text.rpartition(":")
    if not sep or not host or not _PORT.fullmatch(port) or not 1 <= int(port) <= 65535:
        raise argparse.ArgumentTypeError(
            f"bad address {text!r}: expected HOST:PORT with a port from 1 to 65535, e.g. 127.0.0.1:50051"
        )
    if ":" in host and not (host.startswith("[") and host.endswith("]")):
        raise argparse.ArgumentTypeError(f"bad address {text!r}: put an IPv6 host in brackets, e.g. [::1]:50051")
    return text


def register(sub: Any) -> None:
    """Add ``serve`` and ``health`` to the subparsers ``sub``."""
    serve = sub.add_parser(
        "serve",
        help="run the gRPC name service",
        description="Serve pciname.v1.PciName over gRPC, with grpc.health.v1 health, server reflection, "
        "hot reload of the pci.ids data (file changes, SIGHUP) and a graceful drain on SIGTERM. "
        "TLS with --tls-cert/--tls-key (mutual TLS with --tls-client-ca); plaintext only with --insecure.",
    )
    # Each flag with a default of pciname.server.config's: a _Deferred, and a type that passes it on.
    count, seconds, text = _or_default(_positive_int), _or_default(_seconds), _or_default(_as_is)

    net = serve.add_argument_group("network")
    net.add_argument(
        "--listen",
        type=text,
        default=_Deferred("listen"),
        metavar="HOST:PORT",
        help="gRPC address (default %(default)s; port 0 picks a free one)",
    )
    net.add_argument("--insecure", action="store_true", help="serve plaintext (required when no TLS files are given)")
    net.add_argument("--tls-cert", metavar="FILE", help="server certificate chain (PEM)")
    net.add_argument("--tls-key", metavar="FILE", help="server private key (PEM)")
    net.add_argument(
        "--tls-client-ca",
        metavar="FILE",
        help="CA bundle (PEM) client certificates must chain to: mutual TLS, clients without one are refused",
    )
    net.add_argument(
        "--health-listen",
        metavar="HOST:PORT",
        help="also serve grpc.health.v1 alone, plaintext, here, on threads of its own: it answers whatever "
        "the load on --listen (point kubelet probes here)",
    )
    net.add_argument(
        "--metrics-listen",
        metavar="HOST:PORT",
        help="serve Prometheus metrics at http://HOST:PORT/metrics (default: off)",
    )

    limits = serve.add_argument_group("limits")
    limits.add_argument(
        "--max-workers",
        type=count,
        default=_Deferred("max_workers"),
        metavar="N",
        help="threads handling RPCs (default %(default)s)",
    )
    limits.add_argument(
        "--max-concurrent-rpcs",
        type=count,
        default=_Deferred("max_concurrent_rpcs"),
        metavar="N",
        help="RPCs accepted at once, beyond which RESOURCE_EXHAUSTED (default %(default)s)",
    )
    limits.add_argument(
        "--max-batch",
        type=count,
        default=_Deferred("max_batch"),
        metavar="N",
        help="devices per ResolveBatch/PermittedHostDevices request (default %(default)s)",
    )
    limits.add_argument(
        "--max-recv-message-bytes",
        type=count,
        default=_Deferred("max_recv_message_bytes"),
        metavar="N",
        help="largest request message (default %(default)s)",
    )
    limits.add_argument(
        "--max-connection-age",
        type=seconds,
        default=_Deferred("max_connection_age"),
        metavar="SECONDS",
        help="close client connections after this long (gracefully) so clients re-balance "
        "across replicas; 0: never (default %(default)s)",
    )
    limits.add_argument(
        "--max-send-message-bytes",
        type=count,
        default=_Deferred("max_send_message_bytes"),
        metavar="N",
        help="largest response message (default %(default)s)",
    )
    limits.add_argument(
        "--max-lint-files",
        type=count,
        default=_Deferred("max_lint_files"),
        metavar="N",
        help="files per Lint request (default %(default)s)",
    )
    limits.add_argument(
        "--max-lint-bytes",
        type=count,
        default=_Deferred("max_lint_bytes"),
        metavar="N",
        help="bytes of YAML per Lint request, all files together (default %(default)s)",
    )
    limits.add_argument(
        "--max-lint-nodes",
        type=count,
        default=_Deferred("max_lint_nodes"),
        metavar="N",
        help="YAML nodes per Lint request, all files together, and per GpuOptions YAML field, "
        "aliases counted as what they stand for (default %(default)s)",
    )
    limits.add_argument(
        "--max-concurrent-lints",
        type=count,
        default=_Deferred("max_concurrent_lints"),
        metavar="N",
        help="Lint RPCs running at once, beyond which RESOURCE_EXHAUSTED (default %(default)s)",
    )

    life = serve.add_argument_group("lifecycle")
    life.add_argument(
        "--grace",
        type=seconds,
        default=_Deferred("grace"),
        metavar="SECONDS",
        help="on SIGTERM, how long RPCs in flight may take to finish (default %(default)s)",
    )
    life.add_argument(
        "--shutdown-delay",
        type=seconds,
        default=_Deferred("shutdown_delay"),
        metavar="SECONDS",
        help="on SIGTERM, keep serving this long with health NOT_SERVING before refusing new RPCs, "
        "so load balancers notice first (default %(default)s)",
    )
    life.add_argument(
        "--watch-interval",
        type=seconds,
        default=_Deferred("watch_interval"),
        metavar="SECONDS",
        help="poll data/pci.ids, --pciids and the snapshot dirs this often and reload on change; "
        "0 disables (SIGHUP still reloads), else at least 0.1 (default %(default)s)",
    )

    data = serve.add_argument_group("data")
    data.add_argument(
        "--pciids",
        type=_file_name,
        metavar="FILE",
        help="also serve this pci.ids file as profile 'custom'; it is loaded only once it has stopped "
        "changing and ends with a complete line, so replace it by writing a new file beside it and "
        "renaming that into place (mv)",
    )
    data.add_argument(
        "--algorithm",
        type=text,
        choices=ALGORITHMS,
        default=_Deferred("algorithm"),
        help="name algorithm of the custom profile (default %(default)s)",
    )
    data.add_argument(
        "--default-profile",
        type=text,
        default=_Deferred("default_profile"),
        metavar="PROFILE",
        help=f"profile of requests that name none ({default_profile_help()}; 'custom' for --pciids)",
    )

    cluster = serve.add_argument_group("cluster (GpuOptions from_cluster)")
    cluster.add_argument(
        "--kube",
        action="store_true",
        help="let GpuOptions read the KubeVirt CR and the Nodes from the cluster (read-only: get/list "
        "on nodes and kubevirts.kubevirt.io); off by default: callers send the objects",
    )
    cluster.add_argument(
        "--kubeconfig",
        metavar="FILE",
        help="with --kube: kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the in-cluster "
        "service account); its credential plugin (users[].user.exec) runs, as with kubectl, within "
        "--kube-timeout, and again only when its credentials expire or are refused",
    )
    cluster.add_argument(
        "--kube-context", metavar="NAME", help="with --kube: kubeconfig context (default: the current one)"
    )
    cluster.add_argument(
        "--kube-timeout",
        type=seconds,
        default=_Deferred("kube_timeout"),
        metavar="SECONDS",
        help="with --kube: seconds the API requests of one GpuOptions may take together, "
        "less when the RPC's deadline is nearer (default %(default)s)",
    )

    # The choices are shown in the usage line, which argparse builds as the
    # flag is added: they cannot wait, so tests/test_server_wire.py checks
    # that they are pciname.server.config's LOG_FORMATS and LOG_LEVELS.
    logs = serve.add_argument_group("logging")
    logs.add_argument(
        "--log-format",
        type=text,
        choices=LOG_FORMATS,
        default=_Deferred("log_format"),
        help="text, or json: one JSON object per line (default %(default)s)",
    )
    logs.add_argument("--log-level", type=text, choices=LOG_LEVELS, default=_Deferred("log_level"))
    serve.set_defaults(func=run_serve)

    check = sub.add_parser(
        "health",
        help="ask a pciname server's grpc.health.v1 service (a probe)",
        description="Print the server's health status; exit 0 when SERVING, 1 otherwise, 2 when it cannot be asked.",
    )
    add_server_option(check, default=DEFAULT_SERVER, help=f"server address (default {DEFAULT_SERVER})")
    check.add_argument("--service", default="", help="health service name (default '': the whole server)")
    check.add_argument("--timeout", type=_seconds, default=5.0, metavar="SECONDS", help="deadline (default 5)")
    add_client_tls_options(check)
    check.set_defaults(func=run_health)


# -- the client options (health, lookup --server) --------------------------------------------

_CLIENT_TLS_OPTIONS = ("tls_ca", "tls_cert", "tls_key", "tls_server_name")


def add_server_option(parser: argparse.ArgumentParser, *, default: str | None = None, help: str) -> None:
    parser.add_argument("--server", type=server_address, default=default, metavar="HOST:PORT", help=help)


def add_client_tls_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("TLS (to the server)")
    group.add_argument("--tls", action="store_true", help="connect with TLS (implied by the other --tls-* options)")
    group.add_argument("--tls-ca", type=_file_name, metavar="FILE", help="CA bundle to verify the server with")
    group.add_argument(
        "--tls-cert", type=_file_name, metavar="FILE", help="client certificate (mutual TLS; goes with --tls-key)"
    )
    group.add_argument(
        "--tls-key", type=_file_name, metavar="FILE", help="client private key (mutual TLS; goes with --tls-cert)"
    )
    group.add_argument("--tls-server-name", metavar="NAME", help="expected server name, if not the host")


def client_tls_asked(args: argparse.Namespace) -> bool:
    """Whether any of add_client_tls_options' options was given."""
    return bool(args.tls) or any(getattr(args, name) is not None for name in _CLIENT_TLS_OPTIONS)


def client_options(args: argparse.Namespace) -> dict[str, Any]:
    """pciname.client.Client's keyword arguments from add_client_tls_options'
    options, checked first: --tls-cert and --tls-key go together, and every
    file must be PEM gRPC can use (PcinameError: one line, exit 2)."""
    from pciname.client import check_tls_files
    from pciname.errors import PcinameError

    if (args.tls_cert is None) != (args.tls_key is None):
        raise PcinameError("--tls-cert and --tls-key go together (mutual TLS needs both)")
    check_tls_files(args.tls_cert, args.tls_key, args.tls_ca)
    return {
        "tls": args.tls or bool(args.tls_server_name),
        "root_certificates": args.tls_ca,
        "certificate_chain": args.tls_cert,
        "private_key": args.tls_key,
        "server_name": args.tls_server_name,
    }


def run_serve(args: argparse.Namespace) -> int:
    from dataclasses import fields

    from pciname.server.app import ServeConfig, serve
    from pciname.server.logs import configure

    config = ServeConfig(**{field.name: getattr(args, field.name) for field in fields(ServeConfig)})
    config.validate()  # a usage error: one line, exit 2
    if config.tls_cert and config.tls_key:
        from pciname.client import check_tls_files

        # gRPC would only say "Failed to bind" about files it cannot use.
        check_tls_files(config.tls_cert, config.tls_key, config.tls_client_ca)
    logger = configure(args.log_format, args.log_level)
    return serve(config, logger)


def run_health(args: argparse.Namespace) -> int:
    from pciname.client import Client

    with Client(args.server, timeout=args.timeout, **client_options(args)) as client:
        status = client.health(args.service)
    print(status)
    return 0 if status == "SERVING" else 1
