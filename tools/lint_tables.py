"""The lint code tables of the documentation (docs/passthrough.md: every
code; docs/dra.md: the ``dra-claims`` rule's) and the ``.proto`` made anew
from the registry, :data:`pciname.lint.codes.CODES`.

    python -m tools.lint_tables [--write | --check]

Without a flag it prints the table and the proto comment.
"""

from __future__ import annotations

from pciname.lint.codes import CODES, RuleName, markdown_table, proto_comment

#: The docs/dra.md section whose table lists the DRA codes, and a table's first row.
DRA_SECTION = "### GPUs through DRA"
TABLE_HEAD = "| code | severity | when |"


def _rewrite(text: str, start: str, end: str, made: str) -> str:
    """``text`` with the lines from the one holding ``start`` to the one
    holding ``end`` (both kept or replaced whole) replaced by ``made``."""
    lines = text.splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if start in line)
    last = next(i for i in range(first, len(lines)) if end in lines[i])
    return "".join(lines[:first]) + made + "".join(lines[last + 1 :])


def rewritten(readme: str, proto: str) -> tuple[str, str]:
    """docs/passthrough.md's and the ``.proto``'s text with their copies made
    anew from :data:`CODES` (the table; the ``Finding.code`` comment)."""
    start = readme.index("* `pciname lint FILE...")
    end = readme.index("* `pciname scan", start)
    head, section, tail = readme[:start], readme[start:end], readme[end:]
    rows = [line for line in section.splitlines() if line.strip().startswith("| ")]
    section = _rewrite(section, rows[0], rows[-1], markdown_table())
    proto = _rewrite(proto, "// Stable code: " + next(iter(CODES)), "(pciname.lint.linter.CODES).", proto_comment())
    return head + section + tail, proto


def rewritten_dra(readme: str) -> str:
    """docs/dra.md with the DRA section's table of the ``dra-claims`` rule's codes made anew."""
    start = readme.index(DRA_SECTION)
    end = readme.find("\n### ", start + 1)
    end = len(readme) if end < 0 else end
    lines = readme[start:end].splitlines(keepends=True)
    first = next((i for i, line in enumerate(lines) if line.rstrip("\n") == TABLE_HEAD), None)
    if first is None:
        return readme
    last = first
    while last + 1 < len(lines) and lines[last + 1].startswith("|"):
        last += 1
    section = "".join(lines[:first]) + markdown_table("", RuleName.DRA_CLAIMS) + "".join(lines[last + 1 :])
    return readme[:start] + section + readme[end:]


def main(argv: list[str] | None = None) -> int:
    """``python -m tools.lint_tables [--write | --check]``: print the
    table and the proto comment, write them into docs/passthrough.md, docs/dra.md and
    ``proto/pciname/v1/pciname.proto`` of this checkout, or exit 1 when
    those differ from the registry."""
    import argparse
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="python -m tools.lint_tables")
    parser.add_argument("--write", action="store_true", help="rewrite the docs pages and the .proto from the registry")
    parser.add_argument("--check", action="store_true", help="exit 1 if the docs pages or the .proto differ from it")
    args = parser.parse_args(argv)
    if not (args.write or args.check):
        print(markdown_table(), end="")
        print()
        print(proto_comment(), end="")
        return 0
    root = Path(__file__).resolve().parents[1]
    readme_path, proto_path = root / "docs" / "passthrough.md", root / "proto/pciname/v1/pciname.proto"
    dra_path = root / "docs" / "dra.md"
    readme, proto = readme_path.read_text(encoding="utf-8"), proto_path.read_text(encoding="utf-8")
    dra = dra_path.read_text(encoding="utf-8")
    new_readme, new_proto = rewritten(readme, proto)
    new_dra = rewritten_dra(dra)
    changes = ((readme_path, readme, new_readme), (dra_path, dra, new_dra), (proto_path, proto, new_proto))
    stale = [str(p) for p, old, new in changes if old != new]
    if args.check:
        for path in stale:
            print(f"{path}: lint codes differ from pciname.lint.codes.CODES (run python -m tools.lint_tables --write)")
        return 1 if stale else 0
    readme_path.write_text(new_readme, encoding="utf-8")
    dra_path.write_text(new_dra, encoding="utf-8")
    proto_path.write_text(new_proto, encoding="utf-8")
    for path in stale:
        print(f"rewrote {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
