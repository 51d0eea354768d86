"""Rendering plain data (lists, dicts, strings, numbers) as text: JSON, YAML or
an aligned table. Shared by every surface: the CLI prints it, the gRPC
service returns it, so both give the same bytes for the same data."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO

__all__ = ["dump_json", "dump_yaml", "emit", "table"]


def dump_json(data: Any, out: TextIO | None = None) -> None:
    import json

    out = out or sys.stdout
    json.dump(data, out, indent=2, ensure_ascii=False)
    out.write("\n")


def dump_yaml(data: Any, out: TextIO | None = None) -> None:
    import yaml

    out = out or sys.stdout
    yaml.safe_dump(data, out, sort_keys=False, allow_unicode=True, default_flow_style=False)


def table(rows: Sequence[Sequence[Any]], headers: Sequence[str], out: TextIO | None = None) -> None:
    """Columns padded to their widest cell; None prints as ``-``."""
    out = out or sys.stdout
    cells = [[str(h) for h in headers]] + [["-" if c is None else str(c) for c in row] for row in rows]
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
