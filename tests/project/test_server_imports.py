"""At most :data:`BUDGET` imports inside functions in the server
(``pciname/server/`` and its ``rpc/`` together; issue 23): an import belongs
at the top of its module, where the reader and ``tests/project/test_layers.py``
see it, unless it keeps a measured start-up cheap or breaks a real cycle.
Counted with ``ast``: every ``import``/``from ... import`` statement inside a
function or method (nested ones counted once); imports for type checkers,
at module level, do not count. On failure the message names every file and
line."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import REPO

SERVER = REPO / "pciname" / "server"
BUDGET = 10


def imports_inside_functions(source: str) -> list[int]:
    """The lines of the import statements inside a function of ``source``."""
    found: dict[int, int] = {}  # id(node) -> line: a nested function's imports are its outer one's too
    for function in ast.walk(ast.parse(source)):
        if isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            for node in ast.walk(function):
                if isinstance(node, ast.Import | ast.ImportFrom):
                    found[id(node)] = node.lineno
    return sorted(found.values())


def counts(root: Path) -> dict[str, list[int]]:
    """Module path (relative to ``root``) -> the lines of its imports inside functions."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        lines = imports_inside_functions(path.read_text(encoding="utf-8"))
        if lines:
            found[path.relative_to(root).as_posix()] = lines
    return found


def report(found: dict[str, list[int]]) -> str:
    return "\n".join(f"  {name}: {len(lines)} (lines {', '.join(map(str, lines))})" for name, lines in found.items())


def test_the_server_imports_little_inside_functions():
    found = counts(SERVER)
    total = sum(len(lines) for lines in found.values())
    assert total <= BUDGET, (
        f"{total} imports inside functions in pciname/server/, at most {BUDGET}; move them to the top "
        f"of their modules (or say why one stays, in a comment):\n{report(found)}"
    )


def test_the_count_sees_every_function_and_nothing_else(tmp_path):
    """The count can fail: functions, methods, nested and async functions
    are seen, once each; module-level and TYPE_CHECKING imports are not."""
    source = (
        "import os\n"
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    import grpc\n"
        "def f():\n"
        "    import json\n"
        "    def g():\n"
        "        from pathlib import Path\n"
        "class C:\n"
        "    import re\n"
        "    def m(self):\n"
        "        import sys, io\n"
        "async def h():\n"
        "    if True:\n"
        "        from . import x\n"
    )
    assert imports_inside_functions(source) == [6, 8, 12, 15]
    (tmp_path / "rpc").mkdir()
    (tmp_path / "a.py").write_text(source)
    (tmp_path / "rpc" / "b.py").write_text("def f():\n    import json\n")
    (tmp_path / "c.py").write_text("import json\n")
    found = counts(tmp_path)
    assert found == {"a.py": [6, 8, 12, 15], "rpc/b.py": [2]}
    assert report(found) == "  a.py: 4 (lines 6, 8, 12, 15)\n  rpc/b.py: 1 (lines 2)"
