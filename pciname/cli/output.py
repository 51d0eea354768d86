"""The ``-o/--output`` option every command shares (rendering itself is
:mod:`pciname.base.render`)."""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    #: What each command module's ``register(sub)`` receives.
    Subcommands = argparse._SubParsersAction[argparse.ArgumentParser]

FORMATS = ("json", "yaml", "table")


def add_output_option(
    parser: argparse.ArgumentParser, choices: Sequence[str] = FORMATS, default: str = "table"
) -> None:
    parser.add_argument(
        "-o",
        "--output",
        choices=list(choices),
        default=default,
        help=f"output format (default: {default})",
    )
