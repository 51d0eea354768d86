"""Answers shell completion: ``pciname __complete WORDS...`` (what the
scripts of ``pciname completion`` run) and ``kubectl_complete-pciname
WORDS...`` (what kubectl 1.26+ runs for ``kubectl pciname ...<TAB>``).

Both speak cobra's protocol, as kubectl reads it: WORDS are the words after
the command, the last one the word being completed (``""``: a new one); the
answer is one candidate a line (``VALUE`` or ``VALUE<TAB>DESCRIPTION``),
then ``:DIRECTIVE``, cobra's ShellCompDirective bits (:data:`NO_FILE_COMP`:
offer no file names; :data:`FILTER_DIRS`: directory names; 0 with no
candidates: file names). Candidates start with the word being completed,
``--option=`` included.

What to offer comes from :data:`pciname.cli.completion.spec.SPEC` (the
parser's commands and options, the profiles, Cozystack releases and vGPU
types) and, for device ids, the packaged answers of the profile on the line
(:mod:`pciname.resolution.answers`): nothing else is imported, so an answer
takes about as long as Python's start. No ``from __future__ import
annotations`` (importing ``__future__`` costs start-up time).
"""

import sys

from pciname.cli.completion.spec import SPEC
from pciname.pciids.ids import device_id
from pciname.resolution import answers

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence
    from typing import Any

#: cobra's ShellCompDirective bits.
DEFAULT = 0
NO_SPACE = 2
NO_FILE_COMP = 4
FILTER_DIRS = 16


def register(sub: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """The ``completion`` command (:mod:`pciname.cli.completion.command`)."""
    from pciname.cli.completion.command import register as register_command

    register_command(sub)


def kubectl_main() -> int:
    """``kubectl_complete-pciname``: kubectl runs it with the words after
    ``kubectl pciname``, the last the one completed."""
    return main(sys.argv[1:])


def main(words: "Sequence[str]") -> int:
    """Print the answer for ``words`` (cobra's format); always exit 0."""
    words = list(words) or [""]
    candidates, directive = complete(words[:-1], words[-1])
    lines = [f"{value}\t{note}" if note else value for value, note in candidates]
    sys.stdout.write("".join(line + "\n" for line in lines) + f":{directive}\n")
    return 0


def complete(before: "list[str]", word: str) -> "tuple[list[tuple[str, str]], int]":
    """The candidates (value, description) that start with ``word``, and the directive."""
    node, positionals, values, pending = _walk(before)
    if pending is not None:
        return _values(pending, word, "", positionals, values)
    if word.startswith("--") and "=" in word:
        name, _, value = word.partition("=")
        option = _option(node, name)
        if option is None or not option["value"]:
            return [], NO_FILE_COMP
        return _values(option, value, name + "=", positionals, values)
    if word.startswith("-"):
        found = [(flag, o["help"]) for o in node["options"] for flag in o["flags"] if flag.startswith(word)]
        return found, NO_FILE_COMP
    if node["commands"] and not positionals:
        return [(name, entry[0]) for name, entry in node["commands"].items() if name.startswith(word)], NO_FILE_COMP
    positional = _positional(node, len(positionals))
    if positional is None:
        return [], NO_FILE_COMP
    return _values(positional, word, "", positionals, values)


def _option(node: "dict[str, Any]", flag: str) -> "dict[str, Any] | None":
    for option in node["options"]:
        if flag in option["flags"]:
            return option  # type: ignore[no-any-return]
    return None


def _walk(before: "list[str]") -> "tuple[dict[str, Any], list[str], dict[str, list[str]], dict[str, Any] | None]":
    """Read the words before the completed one as argparse would: the
    (sub)command reached, its positionals, each option's values by dest, and
    the option still waiting for its value (or None)."""
    node: dict[str, Any] = SPEC["root"]
    positionals: list[str] = []
    values: dict[str, list[str]] = {}
    pending, options_end = None, False
    for word in before:
        if pending is not None:
            values.setdefault(pending["dest"], []).append(word)
            pending = None
        elif word == "--" and not options_end:
            options_end = True
        elif word.startswith("-") and len(word) > 1 and not options_end:
            pending = _option_word(node, word, values)
        elif node["commands"] and not positionals and word in node["commands"]:
            node = node["commands"][word][1]
        else:
            positionals.append(word)
    return node, positionals, values, pending


def _option_word(node: "dict[str, Any]", word: str, values: "dict[str, list[str]]") -> "dict[str, Any] | None":
    """Record an option word (``--name=VALUE``, ``-pVALUE``, ``--name``);
    the option when its value is the next word."""
    name, equals, value = word.partition("=") if word.startswith("--") else (word, "", "")
    option = _option(node, name)
    if option is None and not word.startswith("--"):
        option, equals, value = _option(node, word[:2]), "=", word[2:]
    if option is None or not option["value"]:
        return None
    if equals:
        values.setdefault(option["dest"], []).append(value)
        return None
    return option


def _positional(node: "dict[str, Any]", given: int) -> "dict[str, Any] | None":
    """The positional argument the next positional word is for, or None."""
    for positional in node["positionals"]:
        if positional["nargs"] in ("*", "+") or given == 0:
            return positional  # type: ignore[no-any-return]
        given -= 1
    return None


def _values(
    argument: "dict[str, Any]", word: str, prefix: str, positionals: "list[str]", values: "dict[str, list[str]]"
) -> "tuple[list[tuple[str, str]], int]":
    """The candidates for the value of ``argument`` that start with
    ``word``, each written after ``prefix`` (``--option=``)."""
    kind = argument["kind"]
    if kind == "file":
        return [], DEFAULT
    if kind == "dir":
        return [], FILTER_DIRS
    if kind == "choices":
        found = [(c, "") for c in argument["choices"]]
    elif kind == "profile":
        found = [(v, d) for v, d in SPEC["profiles"] + (SPEC["short_profiles"] if word.startswith("v") else [])]
    elif kind == "cozystack":
        found = [(v, d) for v, d in SPEC["cozystack"]]
    elif kind == "device" and "pciids" not in values:  # a file's own ids are not known here
        found = _devices((values.get("profile") or [answers.DEFAULT_PROFILE])[-1], word)
    elif kind == "vgpu":
        found = _vgpu_types(positionals)
    else:
        found = []
    return [(prefix + v, d) for v, d in found if v.startswith(word)], NO_FILE_COMP


def _devices(profile: str, word: str) -> "list[tuple[str, str]]":
    """The NVIDIA device ids of ``profile`` (packaged), ``10de:dddd`` (or
    bare ``dddd`` when ``word`` is not the start of ``10de:``), each with its
    pci.ids name; none for a profile the package does not answer."""
    table = answers.table(profile)
    found = answers.index()
    if table is None or found is None:
        return []
    vendor = answers.NVIDIA_VENDOR_ID + ":"
    full = word.startswith(vendor) or vendor.startswith(word)
    bare = word.removeprefix(vendor) if full else word
    at = found["fields"].index("device_name")
    devices = table.devices()
    matching = [i for i, device in enumerate(devices) if device.startswith(bare)]
    # Many rows are read at once (a row's own read costs more each), their names too.
    rows = table.every_row() if len(matching) > 32 else None
    cells = [(table.row(4 * i) if rows is None else rows[i])[at] for i in matching]
    if all(type(cell) is int for cell in cells):
        names = [bytes(name).decode("utf-8", "surrogatepass") for name in answers.utf8_strings(cells)]
    else:
        names = [answers.value(cell) for cell in cells]
    return [((vendor if full else "") + devices[i], name) for i, name in zip(matching, names)]


def _vgpu_types(positionals: "list[str]") -> "list[tuple[str, str]]":
    """The vGPU types of the NVIDIA devices given on the line (``=COUNT`` aside)."""
    out: dict[str, str] = {}
    for word in positionals:
        parsed = device_id(word.partition("=")[0])
        if parsed is not None and parsed[0] == answers.NVIDIA_VENDOR_ID:
            for vgpu_type, note in SPEC["vgpu"].get(parsed[1], ()):
                out.setdefault(vgpu_type, note)
    return list(out.items())
