"""The completion command: shell completion scripts for bash, zsh and fish,
and the completion spec their answers come from.

Each script is a thin client of ``PROG __complete WORDS...``
(:mod:`pciname.cli.completion`, cobra's protocol, which kubectl speaks with
``kubectl_complete-pciname`` too): it hands over the words typed so far and
offers what comes back (candidates, then a ``:DIRECTIVE`` line saying
whether the shell should complete file or directory names instead). What to
offer is read from :data:`pciname.cli.completion.spec.SPEC`, which
:func:`spec` derives from pciname's own argparse parser, profile registry
and vGPU catalogue, and :func:`write_spec` writes (a test compares the two).

``--prog NAME`` must be a plain command name (:data:`COMMAND_NAME`): each
script holds it unquoted (``complete ... NAME``, ``#compdef NAME``,
``complete -c NAME``) and runs it, so a name with shell syntax in it would
run as code when the script is sourced; such a name is refused (exit 2).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

from pciname.errors import PcinameError

SHELLS = ("bash", "zsh", "fish")
#: Options whose value is a profile, by metavar (and every ``--profile``).
PROFILE_METAVAR = "PROFILE"
#: A command name every shell reads as one plain word, wherever a script
#: puts it (bash words and function names, zsh's compdef line, fish words):
#: ASCII letters, digits and ``_``, then also ``.``, ``+`` and ``-``.
COMMAND_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.+-]*")
#: The module :func:`write_spec` writes.
SPEC_MODULE = Path(__file__).with_name("spec.py")
#: A description is cut to this many characters (fish and zsh show one per candidate).
SHORT = 60


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    comp = sub.add_parser(
        "completion",
        help="shell completion script (bash, zsh, fish)",
        description="Print a completion script for the shell; it asks `pciname __complete` for each answer "
        "(kubectl does too, through kubectl_complete-pciname). "
        "bash: `source <(pciname completion bash)` in ~/.bashrc; zsh: `mkdir -p ~/.zfunc && pciname completion zsh > ~/.zfunc/_pciname`, "
        "with `fpath=(~/.zfunc $fpath)` before compinit in ~/.zshrc; "
        "fish: `mkdir -p ~/.config/fish/completions && pciname completion fish > ~/.config/fish/completions/pciname.fish`.",
    )
    comp.add_argument("shell", choices=SHELLS)
    comp.add_argument(
        "--prog",
        default="pciname",
        help="the command name to complete (default: pciname): ASCII letters, digits and _ . + - only",
    )
    comp.set_defaults(func=run_completion)


# -- the spec ---------------------------------------------------------------------


def profiles() -> list[tuple[str, str]]:
    """Every profile spelling worth offering, each with one short
    description: latest, preview, then each plugin, GPU Operator, Cozystack
    (and ``cozystack@latest``) and Kata release."""
    from pciname.naming.profiles import COZYSTACK, LATEST, PREVIEW, load_registry

    registry = load_registry()
    latest = registry.get(LATEST)
    out = [(LATEST, f"newest plugin release ({latest.name})"), (PREVIEW, "Debian's newest pci.ids, no release yet")]
    out += [(p.name, "KubeVirt GPU device plugin") for p in registry.plugin_releases()]
    out += [(p.name, f"GPU Operator, plugin {p.plugin_release}") for p in registry.operator_releases()]
    out += [(p.name, f"Cozystack, plugin {p.plugin_release}") for p in registry.cozystack_releases()]
    if registry.cozystack_latest:
        out.append((f"{COZYSTACK}@{LATEST}", f"newest Cozystack release ({registry.cozystack_latest})"))
    out += [(p.name, "Kata sandbox device plugin") for p in registry.kata_releases()]
    out += [(p.name, f"GPU Operator for Kata, plugin {p.plugin_release}") for p in registry.kata_operator_releases()]
    return out


def profile_names() -> list[str]:
    """The profile spellings completion offers, in order."""
    return [name for name, _ in profiles()]


def short_profiles() -> list[tuple[str, str]]:
    """The plugin releases' short spellings (``v1.2.0``), offered once a
    ``v`` is typed (``diff --from v1.2<TAB>``)."""
    from pciname.naming.profiles import canonical_name, load_registry

    registry = load_registry()
    out = []
    for profile in registry.plugin_releases():
        version = profile.name.partition("@")[2]
        if canonical_name(version, registry) == profile.name:
            out.append((version, f"short for {profile.name}"))
    return out


def cozystack_versions() -> list[tuple[str, str]]:
    """``--cozystack``'s values: each known release, then ``latest``."""
    from pciname.naming.profiles import COZYSTACK, LATEST

    prefix = f"{COZYSTACK}@"
    return [
        (name.removeprefix(prefix), "newest release" if name == prefix + LATEST else description)
        for name, description in profiles()
        if name.startswith(prefix)
    ]


def vgpu_types() -> dict[str, list[tuple[str, str]]]:
    """NVIDIA device id (4 digits) -> the vGPU types NVIDIA's catalogue lists for it."""
    from pciname.naming.vgpu import catalogue

    cat = catalogue()
    out: dict[str, list[tuple[str, str]]] = {}
    for device, families in sorted(cat.devices.items()):
        out[device] = [
            (vgpu_type, f"{family}, up to {count} per GPU")
            for family in families
            for _, vgpu_type, count, _ in cat.families[family]
        ]
    return out


def short(text: str | None) -> str:
    """One short line of a help text: up to its first ``;`` or `` (``, cut to :data:`SHORT`."""
    line = " ".join((text or "").split())
    line = re.split(r"; | \(|: ", line, maxsplit=1)[0]
    return line if len(line) <= SHORT else line[: SHORT - 1].rstrip() + "…"


def _kind(action: argparse.Action) -> str:
    """What completes the value of ``action``."""
    metavar = action.metavar if isinstance(action.metavar, str) else ""
    if action.choices is not None:
        return "choices"
    if action.dest == "profile" or metavar == PROFILE_METAVAR:
        return "profile"
    if "--cozystack" in action.option_strings:
        return "cozystack"
    if "--vgpu" in action.option_strings:
        return "vgpu"
    if metavar in ("FILE", "DIR"):
        return metavar.lower()
    return "device" if metavar.startswith("DEVICE") else "none"


def _help(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if not action.help or action.help == argparse.SUPPRESS:
        return ""
    return short(parser._get_formatter()._expand_help(action))


def _node(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """The spec of one parser: its options, positionals and subcommands."""
    node: dict[str, Any] = {"options": [], "positionals": [], "commands": {}}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {a.dest: a.help for a in action._choices_actions}
            for name, child in action.choices.items():
                node["commands"][name] = [short(helps.get(name)), _node(child)]
            continue
        entry: dict[str, Any] = {"kind": _kind(action), "choices": [str(c) for c in action.choices or ()]}
        if action.option_strings:
            entry.update(flags=list(action.option_strings), value=action.nargs != 0, help=_help(parser, action))
            entry["dest"] = action.dest
            node["options"].append(entry)
        else:
            entry["nargs"] = str(action.nargs if action.nargs is not None else 1)
            node["positionals"].append(entry)
    return node


def spec(parser: argparse.ArgumentParser) -> dict[str, Any]:
    """What completion offers, derived from ``parser`` (pciname's:
    :func:`pciname.cli.build_parser`), the profiles and the vGPU catalogue:
    what :data:`pciname.cli.completion.spec.SPEC` must hold."""
    from pciname._version import __version__

    return {
        "version": __version__,
        "root": _node(parser),
        "profiles": profiles(),
        "short_profiles": short_profiles(),
        "cozystack": cozystack_versions(),
        "vgpu": vgpu_types(),
    }


def write_spec(parser: argparse.ArgumentParser, path: Path = SPEC_MODULE) -> None:
    """Write :func:`spec` as the module :mod:`pciname.cli.completion.spec`: ``python -c 'from pciname.cli
    import build_parser; from pciname.cli.completion.command import write_spec; write_spec(build_parser())'``.
    It holds the spec as JSON text, which loads in well under a millisecond
    (a Python literal of it takes 20 ms to build where no .pyc is kept)."""
    import json

    text = json.dumps(spec(parser), separators=(",", ":"))
    path.write_text(
        '"""What shell completion offers (:mod:`pciname.cli.completion`): written by\n'
        ":func:`pciname.cli.completion.command.write_spec` from the parser, the profiles and\n"
        'the vGPU catalogue; a test compares it with them. Do not edit."""\n\n'
        "import json\n\n"
        "TYPE_CHECKING = False\n"
        "if TYPE_CHECKING:  # typing is not imported at run time: it costs a TAB 4 ms\n"
        "    from typing import Any\n\n"
        f'SPEC: "dict[str, Any]" = json.loads(\n    {text!r}\n)\n',
        encoding="utf-8",
    )


# -- the scripts ------------------------------------------------------------------

#: Each shell's script; ``PROG`` is the command name, ``FUNC`` a function name made of it.
_BASH = r"""# bash completion for PROG (`PROG completion bash`): each answer is
# `PROG __complete WORDS...`. Plain bash is enough (bash-completion is not
# needed): the words are read from COMP_LINE, so the characters of
# COMP_WORDBREAKS (@ = : among them) split none, and each candidate is
# trimmed to the part readline replaces: after the last of them, or from
# the last @ or $ (bash's rl_special_prefixes).
_FUNC() {
    local line=${COMP_LINE:0:COMP_POINT} out directive cur i keep c
    local -a words
    read -r -a words <<< "$line"
    if [[ ${#words[@]} -eq 0 || $line == *[[:space:]] ]]; then words+=(""); fi
    cur=${words[${#words[@]}-1]}
    out=$(PROG __complete "${words[@]:1}" 2>/dev/null) || return 0
    directive=${out##*$'\n'}
    directive=${directive#:}
    [[ $out == *$'\n'* ]] && out=${out%$'\n'*} || out=
    for (( i=${#cur}-1; i>=0; i-- )); do
        [[ $COMP_WORDBREAKS == *"${cur:i:1}"* ]] && break
    done
    # readline keeps bash's special prefixes ($ @) in the word it replaces.
    keep=$(( i + 1 ))
    [[ $i -ge 0 && ${cur:i:1} == [@\$] ]] && keep=$i
    COMPREPLY=()
    while IFS= read -r c; do
        [[ -n $c ]] && COMPREPLY+=("${c%%$'\t'*}")
    done <<< "$out"
    for (( i=0; i<${#COMPREPLY[@]}; i++ )); do COMPREPLY[i]=${COMPREPLY[i]:keep}; done
    (( directive & 2 )) && compopt -o nospace
    if [[ ${#COMPREPLY[@]} -eq 0 ]]; then
        if (( directive & 16 )); then
            compopt +o default -o dirnames
        elif (( directive & 4 )); then
            compopt +o default
        fi
    fi
    return 0
}
complete -o default -F _FUNC PROG
"""

_ZSH = r"""#compdef PROG
# zsh completion for PROG (`PROG completion zsh`): each answer is
# `PROG __complete WORDS...`, each candidate with its description.
_FUNC() {
    local out directive line value description
    local -a lines candidates
    out=$(PROG __complete "${(@)words[2,CURRENT]}" 2>/dev/null) || return 1
    lines=("${(@f)out}")
    directive=${lines[-1]#:}
    lines=("${(@)lines[1,-2]}")
    for line in "${lines[@]}"; do
        [[ -z $line ]] && continue
        value=${line%%$'\t'*}
        description=
        [[ $line == *$'\t'* ]] && description=${line#*$'\t'}
        candidates+=("${value//:/\\:}${description:+:$description}")
    done
    if (( ${#candidates} )); then
        if (( directive & 2 )); then
            _describe -t values value candidates -S ''
        else
            _describe -t values value candidates
        fi
        return
    fi
    [[ ${words[CURRENT]} == -*=* ]] && compset -P '*='
    if (( directive & 16 )); then
        _files -/
    elif (( ! (directive & 4) )); then
        _files
    fi
}
if [[ ${funcstack[1]} == _FUNC ]]; then
    _FUNC "$@"
else
    compdef _FUNC PROG
fi
"""

_FISH = r"""# fish completion for PROG (`PROG completion fish`): each answer is
# `PROG __complete WORDS...`, each candidate with its description.
function __FUNC_complete
    set -l args (commandline -opc)[2..-1]
    set -l cur (commandline -ct)
    set -l out (PROG __complete $args "$cur" 2>/dev/null)
    or return
    set -l directive (string replace -r '^:' '' -- $out[-1])
    set -e out[-1]
    if test (count $out) -gt 0
        printf '%s\n' $out
        return
    end
    set -l prefix (string match -r -- '^-[^=]*=' "$cur")
    set -l value (string replace -r -- '^-[^=]*=' '' "$cur")
    if test (math "bitand($directive, 16)") -ne 0
        for path in (__fish_complete_directories "$value" | string replace -r '\t.*' '')
            echo "$prefix$path"
        end
    else if test (math "bitand($directive, 4)") -eq 0
        for path in (__fish_complete_path "$value" | string replace -r '\t.*' '')
            echo "$prefix$path"
        end
    end
end
complete -c PROG -f -a '(__FUNC_complete)'
"""


def script(shell: str, prog: str = "pciname") -> str:
    """The completion script of ``shell`` for ``prog``. Raises PcinameError
    when ``prog`` is not a plain command name (:data:`COMMAND_NAME`)."""
    if not COMMAND_NAME.fullmatch(prog):
        raise PcinameError(
            f"--prog {prog!r} is not a plain command name: the completion script names the command unquoted, "
            "so use ASCII letters, digits and _ . + - only (not starting with . + -)"
        )
    function = "_" + re.sub(r"[^A-Za-z0-9_]", "_", prog)
    template = {"bash": _BASH, "zsh": _ZSH, "fish": _FISH}[shell]
    return re.sub("PROG|FUNC", lambda m: prog if m.group() == "PROG" else function, template)


def run_completion(args: argparse.Namespace) -> int:
    sys.stdout.write(script(args.shell, args.prog))
    return 0
