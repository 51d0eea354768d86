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
the strings written."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = ["dump_json", "dump_yaml", "emit", "printable", "table", "write_line"]

_CONTROLS = {c: f"\\x{c:02x}" for c in (*range(0x20), *range(0x7F, 0xA0))}
_CONTROLS_BUT_TAB = {c: e for c, e in _CONTROLS.items() if c != 0x09}


def printable(text: object, *, tab: bool = False) -> str:
    """``text`` with every control character (C0, DEL, C1; a tab too unless
    ``tab``) written as ``\\xNN``: safe to print on a terminal."""
    return str(text).translate(_CONTROLS_BUT_TAB if tab else _CONTROLS)


def write_line(text: str, out: TextIO | None = None) -> None:
    """One line of text output: :func:`printable` (tabs kept), then a newline."""
    (out or sys.stdout).write(printable(text, tab=True) + "\n")


def dump_json(data: Any, out: TextIO | None = None) -> None:
    import json

    out = out or sys.stdout
    json.dump(data, out, indent=2, ensure_ascii=False)
    out.write("\n")


def dump_yaml(data: Any, out: TextIO | None = None) -> None:
    import yaml

    from pciname.base.yaml_out import Dumper

    out = out or sys.stdout
    yaml.dump(data, out, Dumper=Dumper, sort_keys=False, allow_unicode=True, default_flow_style=False)


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], out: TextIO | None = None) -> None:
    """Columns padded to their widest cell; None prints as ``-``; every cell
    :func:`printable`."""
    out = out or sys.stdout
    cells = [[printable(h) for h in headers]] + [["-" if c is None else printable(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        out.write("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() + "\n")


def emit(data: Any, fmt: str, out: TextIO | None = None) -> None:
    """JSON or YAML of plain data (lists, dicts, strings, numbers)."""
    if fmt == "json":
        dump_json(data, out)
    elif fmt == "yaml":
        dump_yaml(data, out)
    else:
        raise ValueError(f"emit() handles json and yaml, not {fmt!r}")
