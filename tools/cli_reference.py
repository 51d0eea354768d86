"""docs/reference/cli.md made from the argparse parsers: every command's
``--help``, at a fixed width, so the page says what the code does.

    python -m tools.cli_reference [--write | --check]

Without a flag it prints the page.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

#: The page, and the width its help text is wrapped at.
PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "cli.md"
WIDTH = "100"

HEAD = """# Command-line reference

Every command's `--help`, made from the parsers by `python -m tools.cli_reference --write`
(`tests/project/test_cli_reference.py` holds this page equal to them). The guide to the
commands, with examples, is [the command line](../command-line.md).
"""


def _commands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()) -> list[tuple[str, argparse.ArgumentParser]]:
    """(the command's words, its parser) for ``parser`` and every command under it, in order."""
    found = [(" ".join(("pciname", *path)), parser)]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                found.extend(_commands(child, (*path, name)))
    return found


def page() -> str:
    """The page's text."""
    from pciname.cli import build_parser

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = WIDTH
    try:
        parts = [HEAD]
        for words, parser in _commands(build_parser()):
            parts.append(f"\n## `{words}`\n\n```text\n{parser.format_help().rstrip()}\n```\n")
    finally:
        if old is None:
            del os.environ["COLUMNS"]
        else:
            os.environ["COLUMNS"] = old
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    """Print the page, write it (``--write``) or exit 1 when it differs (``--check``)."""
    parser = argparse.ArgumentParser(prog="python -m tools.cli_reference")
    parser.add_argument("--write", action="store_true", help="rewrite docs/reference/cli.md")
    parser.add_argument("--check", action="store_true", help="exit 1 if docs/reference/cli.md differs")
    args = parser.parse_args(argv)
    text = page()
    if args.check:
        current = PAGE.read_text(encoding="utf-8") if PAGE.is_file() else ""
        if current != text:
            print(f"{PAGE}: differs from the parsers (run python -m tools.cli_reference --write)")
            return 1
        return 0
    if args.write:
        PAGE.write_text(text, encoding="utf-8")
        print(f"wrote {PAGE}")
        return 0
    print(text, end="")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
