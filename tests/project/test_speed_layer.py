"""The speed layer as pypa ``packaging`` writes one (issue 23, item 4): short
fast functions beside the exact path, returning None to fall through, and
each job done once. Held here, read from the source with ``ast``:

* the files that hold the fast path are at most :data:`BUDGET` lines
  together, and every pciname module a fast lookup or a fresh
  ``pciname.resolve()`` loads is one of them or a shared home named in
  :data:`SHARED` (a new fast-path module cannot escape the budget);
* one id parser (:func:`pciname.pciids.ids.device_id`), one JSON writer
  (:func:`pciname.base.render.json_text`), one lookup printer
  (:func:`pciname.cli.fast.print_names`) and one row encoding in the
  packaged tables: the mirrored copies (answers.device_id/hex4,
  fast.json_text, fast._names, core's own name printing, the tables' bulk
  section) cannot come back."""

from __future__ import annotations

import ast
import marshal
from itertools import pairwise
from pathlib import Path

from tests.conftest import REPO, TESTS

#: The files of the speed layer: the packaged answers, the CLI's fast path,
#: the results they build and the catalogs (the full path's own cache).
SPEED_LAYER = (
    "pciname/resolution/answers.py",
    "pciname/cli/fast.py",
    "pciname/resolution/results.py",
    "pciname/resolution/catalog.py",
)
#: (1118 before issue 24; 1163 with the Kata family, go-nvlib lines in the
#: catalog and the plugin, alias and source fields; 1118 again in issue 37.)
BUDGET = 1118
#: The other pciname modules the fast paths load, each the one home of what
#: every path shares (so not the speed layer's to count).
SHARED = {
    "pciname": "the library's face (pciname.resolve: a short function beside the full path)",
    "pciname._version": "the version",
    "pciname.base": "a docstring",
    "pciname.base.files": "the bounded reads' limits (--stdin, or many ids)",
    "pciname.base.render": "the one JSON writer and the one rule for control characters",
    "pciname.cli": "the command line's entry point",
    "pciname.naming": "DEFAULT_PROFILE",
    "pciname.naming.checks": "the name checks (a Resolution's advertised)",
    "pciname.pciids": "NVIDIA_VENDOR_ID",
    "pciname.pciids.ids": "the one id parser",
    "pciname.resolution": "a docstring",
}


def source(path: str) -> str:
    return (REPO / path).read_text(encoding="utf-8")


def assigned(path: Path, name: str) -> set[str]:
    """The literal a test module assigns to ``name`` (read, not imported:
    test modules do not import each other)."""
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and [t.id for t in node.targets if isinstance(t, ast.Name)] == [name]:
            return set(ast.literal_eval(node.value))
    raise AssertionError(f"{path} assigns no {name}")


def functions(path: str) -> dict[str, ast.FunctionDef]:
    """The module's functions and methods, by (qualified) name."""
    found: dict[str, ast.FunctionDef] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef):
                found[prefix + child.name] = child
                visit(child, prefix + child.name + ".")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")

    visit(ast.parse(source(path)), "")
    return found


def calls(node: ast.AST) -> set[str]:
    """The names (or attribute names) a function calls."""
    return {
        call.func.id if isinstance(call.func, ast.Name) else call.func.attr
        for call in ast.walk(node)
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name | ast.Attribute)
    }


def modules() -> list[str]:
    return sorted(str(p.relative_to(REPO)) for p in (REPO / "pciname").rglob("*.py") if "_proto" not in p.parts)


def test_the_speed_layer_holds_its_line_budget():
    lines = {path: len(source(path).splitlines()) for path in SPEED_LAYER}
    assert sum(lines.values()) <= BUDGET, lines


def test_every_module_the_fast_paths_load_is_counted_or_shared():
    """FAST_MODULES and RESOLVE_MODULES are what a real process loads
    (tests/cli/test_cli_fast.py, tests/resolution/test_answers.py)."""
    loaded = assigned(TESTS / "cli" / "test_cli_fast.py", "FAST_MODULES")
    loaded |= assigned(TESTS / "resolution" / "test_answers.py", "RESOLVE_MODULES")
    layer = {path.removesuffix(".py").replace("/", ".") for path in SPEED_LAYER}
    assert "pciname.cli.fast" in loaded and "pciname.resolution.results" in loaded
    assert sorted(loaded - layer - set(SHARED)) == []


def test_one_id_parser():
    """Only pciname/pciids/ids.py defines a parser of device ids, and no
    module of the speed layer keeps a hex-digit rule of its own."""
    parsers = {"device_id", "hex4", "_hex4", "parse_device_id", "parse_subsystem_id"}
    defined = {path: sorted(parsers & set(functions(path))) for path in modules()}
    assert {path: names for path, names in defined.items() if names} == {
        "pciname/pciids/ids.py": ["_hex4", "device_id", "parse_device_id", "parse_subsystem_id"]
    }
    for path in SPEED_LAYER:
        text = source(path)
        assert "0123456789abcdef" not in text.lower() and "[0-9a-fA-F]" not in text, path


def test_one_json_writer():
    """Only pciname/base/render.py writes JSON with json's C string encoder
    (the import-free writer), and the fast path writes through dump_json."""
    quoting = [path for path in modules() if "encode_basestring" in source(path)]
    assert quoting == ["pciname/base/render.py"]
    assert [path for path in modules() if "json_text" in functions(path)] == ["pciname/base/render.py"]
    for path in SPEED_LAYER:
        assert "import json" not in source(path) and "json.dump" not in source(path), path
    assert "dump_json" in calls(functions("pciname/cli/fast.py")["_answered"])


def test_one_lookup_printer():
    """-o name is printed by fast.print_names for both paths: the full
    path's print_records hands it over, and the one short function beside
    it (_bulk, many ids) writes only what print_names would, or falls
    through (None)."""
    fast, core = functions("pciname/cli/fast.py"), functions("pciname/cli/core.py")
    assert "print_names" in calls(core["print_records"]) and "write_line" not in calls(core["print_records"])
    assert "print_names" in calls(fast["_answered"])
    writers = {name for name, node in fast.items() if {"write_line", "write"} & calls(node)}
    assert writers == {"print_names", "_bulk"}
    summing = {name for name, node in fast.items() if "warnings_summary" in calls(node)}
    assert summing == {"print_names", "_bulk"}
    assert [path for path in modules() if "warnings_summary" in source(path)] == ["pciname/cli/fast.py"]


def test_one_row_encoding_in_the_packaged_tables():
    """A table file is its head and its rows as one marshal tuple, nothing
    more: what a single lookup reads (one row, where ``ends`` says) and what
    a lookup of many ids reads (every row at once) are the same bytes."""
    from pciname.resolution import answers

    index = answers.index()
    assert index is not None
    assert not hasattr(answers.Table, "bulk")
    for name in {entry["table"] for entry in index["profiles"].values()}:
        blob = Path(answers.packaged_dir(), name).read_bytes()
        size = int.from_bytes(blob[:4], "little")
        head = marshal.loads(blob[4 : 4 + size])
        assert set(head) == {"ids", "ends"}, name
        rows = marshal.loads(blob[4 + size :])
        assert blob[4 + size :] == marshal.dumps(rows, 2), name  # the rows, and nothing after them
        ends = [int.from_bytes(head["ends"][i : i + 4], "little") for i in range(0, len(head["ends"]), 4)]
        assert len(ends) == len(rows) + 1 == len(head["ids"]) // 4 + 1, name
        assert [marshal.loads(blob[4 + size + a : 4 + size + b]) for a, b in pairwise(ends)] == list(rows), name
