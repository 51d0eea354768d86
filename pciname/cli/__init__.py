"""The ``pciname`` command line.

Each group of commands lives in its own module with a ``register(sub)``
function that adds its sub-parsers; a sub-parser's ``func`` default takes the
parsed arguments and returns the exit code. Command modules import only what
they need at call time, so ``pciname lookup`` never pays for grpc or
kubernetes; and a plain ``pciname lookup DEVICE...`` is answered first by
:mod:`pciname.cli.fast` when it can be, before argparse is even imported.

Exit codes: 0 success, 1 a negative answer (not advertised, findings), 2 bad
usage or bad input, with one line on stderr and never a traceback.
"""

import os
import sys

from pciname._version import __version__
from pciname.base.render import PROGRAM

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

# No `from __future__ import annotations` here, in pciname/__init__ or in
# .fast (importing __future__ costs start-up time): type-only names are quoted.

# Command modules, in the order their commands appear in --help.
COMMAND_MODULES = (
    "core",
    "pciids",
    "service",
    "generate",
    "kata",
    "vgpu",
    "lint",
    "scan",
    "cluster",
    "admission",
    "hami",
    "completion",
)


def _parser_class() -> "type[argparse.ArgumentParser]":
    import argparse

    class _Parser(argparse.ArgumentParser):
        """argparse with pciname's one-line usage errors (exit 2), whose
        commands take their positionals (devices) among the options too:
        ``lookup 10de:2236 -p latest 10de:2330`` (argparse's intermixed
        parsing, for every parser it can do it for: one without commands
        of its own or a rest-of-the-line positional)."""

        _intermixing = False

        def error(self, message: str) -> None:  # type: ignore[override]
            self.exit(2, f"{error_name(self.prog)}: error: {message}\n")

        def _intermixable(self) -> bool:
            positionals = self._get_positional_actions()
            return (
                not self._intermixing
                and not any(action.nargs in (argparse.PARSER, argparse.REMAINDER) for action in positionals)
                and not any(
                    action in positionals
                    for group in self._mutually_exclusive_groups
                    for action in group._group_actions
                )
            )

        def parse_known_args(self, args=None, namespace=None):  # type: ignore[no-untyped-def]
            if not self._intermixable():
                return super().parse_known_args(args, namespace)
            self._intermixing = True
            try:
                return self.parse_known_intermixed_args(args, namespace)
            finally:
                self._intermixing = False

    return _Parser


def build_parser(command: "str | None" = None, prog: str = PROGRAM) -> "argparse.ArgumentParser":
    """The parser; with ``command``, only as many command modules as it takes
    to register that command (start-up time: ``lookup`` needs only core)."""
    import importlib

    parser_class = _parser_class()
    parser = parser_class(
        prog=prog,
        description="Exact GPU resource names of NVIDIA's KubeVirt device plugin, from pci.ids.",
        epilog="Also installed as kubectl-pciname, so kubectl runs it as a plugin: `kubectl pciname COMMAND ...`. "
        "Shell completion: `pciname completion bash|zsh|fish`.",
    )
    parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=parser_class)
    sub.required = True
    for name in COMMAND_MODULES:
        importlib.import_module(f"{__name__}.{name}").register(sub)
        if command is not None and command in sub.choices:
            break
    return parser


def kubectl_main(argv: "Sequence[str] | None" = None) -> int:
    """``kubectl-pciname``: what kubectl runs for ``kubectl pciname ...`` (its
    plugin mechanism, and krew's, find executables named ``kubectl-*`` on
    PATH). The same program, with ``kubectl pciname`` in usage and help."""
    return main(argv, prog=KUBECTL_PROG)


#: The name kubectl's plugin mechanism gives ``kubectl-pciname`` (usage and help say it).
KUBECTL_PROG = f"kubectl {PROGRAM}"


def error_name(prog: str) -> str:
    """What an error line of the parser ``prog`` begins with: the program's
    one name (:data:`~pciname.base.render.PROGRAM`) and the command, as
    pciname's own errors begin, also when kubectl ran it (``kubectl pciname
    lookup`` -> ``pciname lookup``)."""
    return PROGRAM + prog.removeprefix(KUBECTL_PROG).removeprefix(PROGRAM)


def main(argv: "Sequence[str] | None" = None, prog: str = PROGRAM) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    _text_out()
    if argv and argv[0] == "__complete":  # the completion scripts' (cobra's) protocol
        from pciname.cli.completion import main as complete

        return complete(argv[1:])
    if argv and argv[0] == "lookup":
        from pciname.cli.fast import lookup

        try:
            code = lookup(argv)
        except BrokenPipeError:
            sys.stderr.close()
            return 0
        except KeyboardInterrupt:
            return 130
        if code is not None:
            return code
    return full(argv, prog)


#: Error modes that write bytes no UTF-8 reader takes (a lone surrogate's
#: own bytes, or the raw undecodable byte it stands for) or raise on them.
_UNSAFE_ERRORS = frozenset({"strict", "surrogateescape", "surrogatepass"})


def _text_out() -> None:
    """Whatever reaches stdout and stderr is valid UTF-8: a lone surrogate
    (from a file name's undecodable bytes, a ``\\ud800`` JSON escape in an
    API answer) is written as its escape, ``\\udc9b``, never an exception
    and never the raw byte (a 0x9B would be an 8-bit CSI to a terminal).
    Python gives the standard streams ``surrogateescape`` under the C,
    POSIX and C.UTF-8 locales (and in UTF-8 mode), ``strict`` otherwise:
    each such mode is switched; one the user chose that writes valid text
    (``PYTHONIOENCODING=utf-8:replace``) is kept."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None and getattr(stream, "errors", None) in _UNSAFE_ERRORS:
            reconfigure(errors="backslashreplace")


def full(argv: list[str], prog: str = PROGRAM) -> int:
    """The command line through argparse: every command and every form
    (the fast path answers a plain lookup only as this would)."""
    from pciname.errors import PcinameError

    command = argv[0] if argv and not argv[0].startswith("-") else None
    args = build_parser(command, prog).parse_args(argv)
    # gRPC's C core logs a failed TLS handshake as an INFO line on stderr, a
    # second line after our one-line error (and not JSON in serve's log):
    # only its errors, unless the environment asks for more. Read when grpc
    # is first imported, which commands do lazily, after this.
    os.environ.setdefault("GRPC_VERBOSITY", "ERROR")
    try:
        return int(args.func(args) or 0)
    except PcinameError as error:
        from pciname.base.render import write_line

        write_line(f"{PROGRAM}: error: {error}", sys.stderr)
        return 2
    except BrokenPipeError:
        # `pciname ... | head`: the reader left; that is not an error of ours.
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        return 130
