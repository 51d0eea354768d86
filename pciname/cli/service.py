"""Service commands: ``serve`` (the gRPC name service) and ``health`` (its probe).

grpc is imported only when one of these runs, so other commands never pay
for it.
"""

from __future__ import annotations

import argparse
import math
import re

from ..naming.algorithms import ALGORITHMS
from ..naming.profiles import CUSTOM_ALGORITHM, DEFAULT_PROFILE, default_profile_help

DEFAULT_LISTEN = "[::]:50051"  # keep in step with pciname.server.app.DEFAULT_LISTEN
DEFAULT_SERVER = "localhost:50051"

# gRPC takes sizes and counts as C ints and durations as 32-bit milliseconds.
MAX_INT = 2**31 - 1
MAX_SECONDS = MAX_INT // 1000  # 2147483 s, about 24 days
# Targets gRPC resolves itself ("unix:/run/pciname.sock", "dns:///host:port"), passed as they are.
_TARGET_SCHEMES = ("unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:", "vsock:")
_PORT = re.compile(r"[0-9]{1,5}")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not an integer: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1: {text!r}")
    if value > MAX_INT:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_INT}: {text!r}")
    return value


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError(f"not a finite number of seconds: {text!r}")
    if value < 0:
        raise argparse.ArgumentTypeError(f"cannot be negative: {text!r}")
    if value > MAX_SECONDS:
        raise argparse.ArgumentTypeError(f"must be at most {MAX_SECONDS} seconds (about 24 days): {text!r}")
    return value


def _file_name(text: str) -> str:
    if not text:
        raise argparse.ArgumentTypeError("empty file name")
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


def register(sub) -> None:
    serve = sub.add_parser(
        "serve",
        help="run the gRPC name service",
        description="Serve pciname.v1.PciName over gRPC, with grpc.health.v1 health, server reflection, "
        "hot reload of the pci.ids data (file changes, SIGHUP) and a graceful drain on SIGTERM. "
        "TLS with --tls-cert/--tls-key (mutual TLS with --tls-client-ca); plaintext only with --insecure.",
    )
    net = serve.add_argument_group("network")
    net.add_argument("--listen", default=DEFAULT_LISTEN, metavar="HOST:PORT",
                     help=f"gRPC address (default {DEFAULT_LISTEN}; port 0 picks a free one)")
    net.add_argument("--insecure", action="store_true", help="serve plaintext (required when no TLS files are given)")
    net.add_argument("--tls-cert", metavar="FILE", help="server certificate chain (PEM)")
    net.add_argument("--tls-key", metavar="FILE", help="server private key (PEM)")
    net.add_argument("--tls-client-ca", metavar="FILE",
                     help="CA bundle (PEM) client certificates must chain to: mutual TLS, clients without one are refused")
    net.add_argument("--health-listen", metavar="HOST:PORT",
                     help="also serve grpc.health.v1 alone, plaintext, here (for kubelet probes when --listen uses TLS)")
    net.add_argument("--metrics-listen", metavar="HOST:PORT",
                     help="serve Prometheus metrics at http://HOST:PORT/metrics (default: off)")

    limits = serve.add_argument_group("limits")
    limits.add_argument("--max-workers", type=_positive_int, default=16, metavar="N",
                        help="threads handling RPCs (default 16)")
    limits.add_argument("--max-concurrent-rpcs", type=_positive_int, default=256, metavar="N",
                        help="RPCs accepted at once, beyond which RESOURCE_EXHAUSTED (default 256)")
    limits.add_argument("--max-batch", type=_positive_int, default=10_000, metavar="N",
                        help="devices per ResolveBatch/PermittedHostDevices request (default 10000)")
    limits.add_argument("--max-recv-message-bytes", type=_positive_int, default=4 * 1024 * 1024, metavar="N",
                        help="largest request message (default 4 MiB)")
    limits.add_argument("--max-connection-age", type=_seconds, default=0.0, metavar="SECONDS",
                        help="close client connections after this long (gracefully) so clients re-balance "
                        "across replicas; 0: never (default 0)")
    limits.add_argument("--max-send-message-bytes", type=_positive_int, default=64 * 1024 * 1024, metavar="N",
                        help="largest response message (default 64 MiB)")
    limits.add_argument("--max-lint-files", type=_positive_int, default=100, metavar="N",
                        help="files per Lint request (default 100)")
    limits.add_argument("--max-lint-bytes", type=_positive_int, default=1024 * 1024, metavar="N",
                        help="bytes of YAML per Lint request, all files together (default 1 MiB)")

    life = serve.add_argument_group("lifecycle")
    life.add_argument("--grace", type=_seconds, default=10.0, metavar="SECONDS",
                      help="on SIGTERM, how long RPCs in flight may take to finish (default 10)")
    life.add_argument("--shutdown-delay", type=_seconds, default=0.0, metavar="SECONDS",
                      help="on SIGTERM, keep serving this long with health NOT_SERVING before refusing new RPCs, "
                      "so load balancers notice first (default 0)")
    life.add_argument("--watch-interval", type=_seconds, default=2.0, metavar="SECONDS",
                      help="poll data/pci.ids, --pciids and the snapshot dirs this often and reload on change; "
                      "0 disables (SIGHUP still reloads) (default 2)")

    data = serve.add_argument_group("data")
    data.add_argument("--pciids", type=_file_name, metavar="FILE", help="also serve this pci.ids file as profile 'custom'")
    data.add_argument("--algorithm", choices=ALGORITHMS, default=CUSTOM_ALGORITHM,
                      help="name algorithm of the custom profile (default vendor-section)")
    data.add_argument("--default-profile", default=DEFAULT_PROFILE, metavar="PROFILE",
                      help=f"profile of requests that name none ({default_profile_help()}; 'custom' for --pciids)")

    cluster = serve.add_argument_group("cluster (GpuOptions from_cluster)")
    cluster.add_argument("--kube", action="store_true",
                         help="let GpuOptions read the KubeVirt CR and the Nodes from the cluster (read-only: get/list "
                         "on nodes and kubevirts.kubevirt.io); off by default: callers send the objects")
    cluster.add_argument("--kubeconfig", metavar="FILE",
                         help="with --kube: kubeconfig file (default: $KUBECONFIG, ~/.kube/config, else the in-cluster "
                         "service account)")
    cluster.add_argument("--kube-context", metavar="NAME", help="with --kube: kubeconfig context (default: the current one)")
    cluster.add_argument("--kube-timeout", type=_seconds, default=10.0, metavar="SECONDS",
                         help="with --kube: timeout of each API request (default 10)")

    logs = serve.add_argument_group("logging")
    logs.add_argument("--log-format", choices=("text", "json"), default="text",
                      help="text, or json: one JSON object per line (default text)")
    logs.add_argument("--log-level", choices=("debug", "info", "warning", "error"), default="info")
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
    group.add_argument("--tls-cert", type=_file_name, metavar="FILE",
                       help="client certificate (mutual TLS; goes with --tls-key)")
    group.add_argument("--tls-key", type=_file_name, metavar="FILE", help="client private key (mutual TLS; goes with --tls-cert)")
    group.add_argument("--tls-server-name", metavar="NAME", help="expected server name, if not the host")


def client_tls_asked(args: argparse.Namespace) -> bool:
    """Whether any of add_client_tls_options' options was given."""
    return bool(args.tls) or any(getattr(args, name) is not None for name in _CLIENT_TLS_OPTIONS)


def client_options(args: argparse.Namespace) -> dict:
    """pciname.client.Client's keyword arguments from add_client_tls_options'
    options, checked first: --tls-cert and --tls-key go together, and every
    file must be PEM gRPC can use (PcinameError: one line, exit 2)."""
    from ..client import check_tls_files
    from ..errors import PcinameError

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
    from ..server.app import ServeConfig, serve
    from ..server.logs import configure

    config = ServeConfig(
        listen=args.listen,
        insecure=args.insecure,
        tls_cert=args.tls_cert,
        tls_key=args.tls_key,
        tls_client_ca=args.tls_client_ca,
        max_workers=args.max_workers,
        max_concurrent_rpcs=args.max_concurrent_rpcs,
        max_batch=args.max_batch,
        max_recv_message_bytes=args.max_recv_message_bytes,
        max_send_message_bytes=args.max_send_message_bytes,
        max_connection_age=args.max_connection_age,
        grace=args.grace,
        shutdown_delay=args.shutdown_delay,
        watch_interval=args.watch_interval,
        pciids=args.pciids,
        algorithm=args.algorithm,
        default_profile=args.default_profile,
        metrics_listen=args.metrics_listen,
        health_listen=args.health_listen,
        max_lint_files=args.max_lint_files,
        max_lint_bytes=args.max_lint_bytes,
        kube=args.kube,
        kubeconfig=args.kubeconfig,
        kube_context=args.kube_context,
        kube_timeout=args.kube_timeout,
    )
    config.validate()  # a usage error: one line, exit 2
    if config.tls_cert and config.tls_key:
        from ..client import check_tls_files

        # gRPC would only say "Failed to bind" about files it cannot use.
        check_tls_files(config.tls_cert, config.tls_key, config.tls_client_ca)
    logger = configure(args.log_format, args.log_level)
    return serve(config, logger)


def run_health(args: argparse.Namespace) -> int:
    from ..client import Client

    with Client(args.server, timeout=args.timeout, **client_options(args)) as client:
        status = client.health(args.service)
    print(status)
    return 0 if status == "SERVING" else 1
