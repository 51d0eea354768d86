"""Rendering plain data (lists, dicts, strings, numbers) as text: JSON, YAML or
an aligned table. Shared by every surface: the CLI prints it, the gRPC
service returns it, so both give the same bytes for the same data.

Text meant for a terminal (tables, ``lint``'s lines, messages) goes through
:func:`printable`, the one rule for control characters: C0 controls (ESC,
CR, newline, ...), DEL and C1 controls (CSI ``\\x9b``, OSC ``\\x9d``) print as
``\\xNN``, so YAML, node names, API errors or pci.ids names cannot move the
cursor, retitle the terminal or hide lines. A tab is kept in free text and
escaped in a table cell. JSON and YAML output are left as they are (their
encoders escape what their formats require); YAML is written with
:class:`pciname.base.yaml_out.Dumper`, so that Go's readers (kubectl) read back
the strings written.

JSON is written by :func:`json_text` (the one JSON writer: the CLI's fast
path of ``pciname lookup`` prints its records with it too), so this module
is on the measured start-up path: it imports only ``sys`` at the top (the
rest when writing), and no ``from __future__ import annotations``."""

import sys

TYPE_CHECKING = False  # not typing.TYPE_CHECKING: importing typing costs start-up time
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any, TextIO

__all__ = ["PROGRAM", "dump_json", "dump_yaml", "emit", "json_text", "printable", "table", "write_line"]

#: The program's name, at the start of every line it writes on stderr
#: (``pciname: error: ...``, ``pciname lookup: error: ...``, warnings and
#: notes), however it was run: as ``kubectl pciname`` too (only usage and
#: help say ``kubectl pciname``, the way to run it).
PROGRAM = "pciname"

_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}
_CONTROLS_BUT_TAB = {c: e for c, e in _CONTROLS.items() if c != 0x09}


def printable(text: object, *, tab: bool = False) -> str:
    """``text`` with every control character (C0, DEL, C1; a tab too unless
    ``tab``) written as ``\\xNN``: safe to print on a terminal."""
    return str(text).translate(_CONTROLS_BUT_TAB if tab else _CONTROLS)


def write_line(text: str, out: "TextIO | None" = None) -> None:
    """One line of text output: :func:`printable` (tabs kept), then a newline."""
    (out or sys.stdout).write(printable(text, tab=True) + "\n")


def json_text(data: "Any") -> str:
    """``json.dumps(data, indent=2, ensure_ascii=False)``: written here, without
    importing :mod:`json` (its decoder imports re), for the values records
    and plain data hold (strings, booleans, None, ints, lists, tuples and
    dicts with string keys); by json itself for anything else."""
    try:
        from _json import encode_basestring  # json's own C encoder; importing json costs over 1 ms (re)

        text = _plain_json(data, "\n", encode_basestring)
    except (ImportError, RecursionError):  # no _json; or a cycle, say: json says what is wrong
        text = None
    if text is None:
        import json  # start-up: only for what _plain_json does not write

        text = json.dumps(data, indent=2, ensure_ascii=False)
    return text


_CONSTANTS = {True: "true", False: "false", None: "null"}


def _plain_json(value: "Any", newline: str, quote: "Callable[[str], str]") -> "str | None":
    """``value`` as json writes it after ``newline`` (and its indent), or None."""
    kind = type(value)
    if kind is str:
        return quote(value)
    if kind is bool or value is None:
        return _CONSTANTS[value]
    if kind is int:
        return int.__repr__(value)
    inner = newline + "  "
    if kind is list or kind is tuple:
        texts, brackets = [_plain_json(item, inner, quote) for item in value], "[]"
    elif kind is dict and all(type(key) is str for key in value):
        texts, brackets = [_member(key, item, inner, quote) for key, item in value.items()], "{}"
    else:
        return None
    if None in texts:
        return None
    if not texts:
        return brackets
    return brackets[0] + inner + ("," + inner).join(texts) + newline + brackets[1]  # type: ignore[arg-type]


def _member(key: str, value: "Any", newline: str, quote: "Callable[[str], str]") -> "str | None":
    text = _plain_json(value, newline, quote)
    return None if text is None else quote(key) + ": " + text


def dump_json(data: "Any", out: "TextIO | None" = None) -> None:
    """:func:`json_text`, then a newline."""
    (out or sys.stdout).write(json_text(data) + "\n")


def dump_yaml(data: "Any", out: "TextIO | None" = None) -> None:
    import yaml

    from pciname.base.yaml_out import Dumper

    out = out or sys.stdout
    yaml.dump(data, out, Dumper=Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False)


def emit_documents(documents: "Sequence[Any]", fmt: str, out: "TextIO | None" = None) -> None:
    """Kubernetes objects as one YAML stream (``---`` between them), or as
    one JSON ``v1`` List (what ``kubectl apply -f`` takes either way)."""
    if fmt == "json":
        dump_json({"apiVersion": "v1", "kind": "List", "items": list(documents)}, out)
    elif fmt == "yaml":
        import yaml

        from pciname.base.yaml_out import Dumper

        yaml.dump_all(
            list(documents),
            out or sys.stdout,
            Dumper=Dumper,
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
        )
    else:
        raise ValueError(f"emit_documents() handles json and yaml, not {fmt!r}")


def table(rows: "Sequence[Sequence[Any]]", headers: "Sequence[str]", out: "TextIO | None" = None) -> None:
    """Columns padded to their widest cell; None prints as ``-``; every cell
    :func:`printable`."""
    out = out or sys.stdout
    cells = [[printable(h) for h in headers]] + [["-" if c is None else printable(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")


def emit(data: "Any", fmt: str, out: "TextIO | None" = None) -> None:
    """JSON or YAML of plain data (lists, dicts, strings, numbers)."""
    if fmt == "json":
        dump_json(data, out)
    elif fmt == "yaml":
        dump_yaml(data, out)
    else:
        raise ValueError(f"emit() handles json and yaml, not {fmt!r}")
