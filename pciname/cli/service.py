"""The ``serve`` and ``health`` commands: their flags and what they run.

``serve``'s flags are :class:`pciname.server.config.ServeConfig`'s fields
(their help, metavar and choices the fields' metadata, their defaults the
fields', their groups and order ``FLAG_GROUPS``) and the log's two; the
checks of their values are :mod:`pciname.server.config`'s too (the Python
API's :class:`ServeConfig` has the same ones). That module imports no gRPC,
which only these commands need.
"""

from __future__ import annotations

import argparse
import re
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from dataclasses import Field

# Where health (a probe next to the server) asks: pciname.server.config's
# DEFAULT_PORT (tests/test_server_wire.py checks), spelled out for the help.
DEFAULT_SERVER = "localhost:50051"

# Targets gRPC resolves itself ("unix:/run/pciname.sock", "dns:///host:port"), passed as they are.
_TARGET_SCHEMES = ("unix:", "unix-abstract:", "dns:", "ipv4:", "ipv6:", "vsock:")
_PORT = re.compile(r"[0-9]{1,5}")
_MIB = 1 << 20


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


#: How a count's and a duration's flag reads its value (by the ServeConfig field's type).
_READERS = {"int": _positive_int, "float": _seconds}


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
    _add_config_flags(serve)
    _add_log_flags(serve)
    serve.set_defaults(func=run_serve)
    _register_health(sub)


def _add_config_flags(serve: argparse.ArgumentParser) -> None:
    """A flag per ServeConfig field, in FLAG_GROUPS' groups and order."""
    from dataclasses import fields

    from pciname.server.config import FLAG_GROUPS, ServeConfig, flag

    by_name = {each.name: each for each in fields(ServeConfig)}
    for title, names in FLAG_GROUPS:
        group = serve.add_argument_group(title)
        for name in names:
            group.add_argument(flag(name), **_flag_options(by_name[name]))


def _flag_options(field: Field[Any]) -> dict[str, Any]:
    """add_argument's options for a ServeConfig field: from its metadata
    (:class:`pciname.server.config.Flag`), its type and its default."""
    spec = field.metadata["flag"]
    help_text = spec.help_text().replace("%(default)s", _shown(field.name, field.default))
    if field.type == "bool":
        return {"action": "store_true", "help": help_text}
    if spec.file_name:
        parse: Any = _file_name
    elif field.type in _READERS:
        parse = _READERS[field.type]
    elif field.type in ("str", "str | None"):
        parse = None  # as written
    else:  # pragma: no cover (tests/test_serve_flags.py builds every field's flag)
        raise TypeError(f"ServeConfig.{field.name}: no flag reads a {field.type}")
    return {
        "type": parse,
        "default": field.default,
        "metavar": spec.metavar,
        "choices": spec.choices,
        "help": help_text,
    }


def _shown(name: str, value: object) -> str:
    """A default as serve's help writes it: 10.0 seconds as 10, 4194304 bytes as 4 MiB."""
    if isinstance(value, float):
        return f"{value:g}"
    if name.endswith("_bytes") and isinstance(value, int) and value >= _MIB and not value % _MIB:
        return f"{value // _MIB} MiB"
    return str(value)


def _add_log_flags(serve: argparse.ArgumentParser) -> None:
    """The log's flags: not ServeConfig's (a server logs to the logger it is
    given), but pciname.server.config's choices and defaults."""
    from pciname.server.config import DEFAULT_LOG_FORMAT, DEFAULT_LOG_LEVEL, LOG_FORMATS, LOG_LEVELS

    logs = serve.add_argument_group("logging")
    logs.add_argument(
        "--log-format",
        choices=LOG_FORMATS,
        default=DEFAULT_LOG_FORMAT,
        help=f"text, or json: one JSON object per line (default {DEFAULT_LOG_FORMAT})",
    )
    logs.add_argument("--log-level", choices=LOG_LEVELS, default=DEFAULT_LOG_LEVEL)


def _register_health(sub: Any) -> None:
    check = sub.add_parser(
        "health",
        help="ask a pciname server's grpc.health.v1 service (a probe)",
        description="Print the server's health status; exit 0 when SERVING, 1 otherwise, 2 when it cannot be asked.",
    )
    add_server_option(check, default=DEFAULT_SERVER, help=f"server address (default {DEFAULT_SERVER})")
    check.add_argument(
        "--service",
        default="",
        help="health service name: '' (the default: the whole server) and 'readiness' are SERVING once every RPC "
        "can be answered and until draining; 'liveness' from start until draining",
    )
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
