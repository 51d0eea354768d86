"""The ``-o/--output`` option every command shares (rendering itself is
:mod:`pciname.render`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

FORMATS = ("json", "yaml", "table")


def add_output_option(parser: argparse.ArgumentParser, choices: Sequence[str] = FORMATS, default: str = "table") -> None:
    parser.add_argument(
        "-o",
        "--output",
        choices=list(choices),
        default=default,
        help=f"output format (default: {default})",
    )
