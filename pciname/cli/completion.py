"""The completion command: shell completion scripts for bash, zsh and fish.

Generated from pciname's own argparse parser by shtab, so every subcommand
and option completes as the parser defines it, and each option that takes a
profile (``--profile``, ``--from``, ``--to``, ``--upgrade-to``) completes the
profile names this pciname knows. ``kubectl pciname`` (the
``kubectl-pciname`` entry point) is the same program.

``--prog NAME`` must be a plain command name (:data:`COMMAND_NAME`): shtab
writes it into each script unquoted (``complete ... NAME``, ``#compdef NAME``,
``complete -c NAME``), so a name with shell syntax in it would run as code
when the script is sourced; such a name is refused (exit 2).
"""

from __future__ import annotations

import argparse
import re
import sys

from pciname.errors import PcinameError

SHELLS = ("bash", "zsh", "fish")
#: Options whose value is a profile, by metavar.
PROFILE_METAVAR = "PROFILE"
#: A command name every shell reads as one plain word, wherever shtab puts it
#: (bash words, zsh case patterns and _arguments states, fish words): ASCII
#: letters, digits and ``_``, then also ``.``, ``+`` and ``-``.
COMMAND_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    comp = sub.add_parser(
        "completion",
        help="shell completion script (bash, zsh, fish)",
        description="Print a completion script for the shell, generated from pciname's parser (shtab). "
        'bash: `source <(pciname completion bash)`; zsh: `pciname completion zsh > "${fpath[1]}/_pciname"`; '
        "fish: `pciname completion fish > ~/.config/fish/completions/pciname.fish`.",
    )
    comp.add_argument("shell", choices=SHELLS)
    comp.add_argument(
        "--prog",
        default="pciname",
        help="the command name to complete (default: pciname): ASCII letters, digits and _ . + - only",
    )
    comp.set_defaults(func=run_completion)


def profile_names() -> list[str]:
    """Every profile spelling worth offering: latest, preview, each plugin
    and GPU Operator release."""
    from pciname.naming.profiles import LATEST, PREVIEW, load_registry

    registry = load_registry()
    return (
        [LATEST, PREVIEW]
        + [p.name for p in registry.plugin_releases()]
        + [p.name for p in registry.operator_releases()]
    )


def _mark_profiles(parser: argparse.ArgumentParser, names: list[str], bash_function: str) -> None:
    words = " ".join(names)
    complete = {"bash": bash_function, "zsh": f"({words})", "fish": words}
    for action in parser._actions:
        if action.dest in ("profile", "old", "new", "upgrade_to") and action.option_strings:
            action.complete = complete  # type: ignore[attr-defined]  # shtab reads this attribute
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                _mark_profiles(child, names, bash_function)


def script(shell: str, prog: str = "pciname") -> str:
    """The completion script of ``shell`` for ``prog``. Raises PcinameError
    when ``prog`` is not a plain command name (:data:`COMMAND_NAME`)."""
    if not COMMAND_NAME.fullmatch(prog):
        raise PcinameError(
            f"--prog {prog!r} is not a plain command name: the completion script names the command unquoted, "
            "so use ASCII letters, digits and _ . + - only (not starting with . + -)"
        )
    import shtab

    from pciname.cli import build_parser

    parser = build_parser()
    parser.prog = prog
    names = profile_names()
    function = f"_{shtab.wordify(prog)}_profiles"
    _mark_profiles(parser, names, function)
    preamble = {"bash": f'{function}() {{\n  compgen -W "{" ".join(names)}" -- "$1"\n}}\n'}
    # shtab takes a preamble per shell as a dict too (its annotation says str).
    text: str = shtab.complete(parser, shell=shell, preamble=preamble)  # type: ignore[arg-type]
    return text


def run_completion(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell, args.prog))
    return 0
