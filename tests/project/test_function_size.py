"""No function of pciname/ is over :data:`MAX_FUNCTION_LINES` lines (its
``end_lineno - lineno + 1``, read with ``ast``: decorators aside, its
docstring and comments counted), so the next monolith cannot land (issue
23, item 5). ruff holds each function's branches, statements and paths
(C901, PLR0912, PLR0915 in pyproject.toml, with no file let off); this
holds its length. There is no allowlist: the last two functions over it
(``pciname/cli/generate.py: register``, ``pciname/kubevirt/generate.py:
node_pool``) were split as their modules became request models (issue 23,
item 1)."""

from __future__ import annotations

import ast
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PACKAGE = REPO / "pciname"
MAX_FUNCTION_LINES = 80
#: protoc's output (python -m tools.protogen), not ours.
GENERATED = PACKAGE / "server" / "_proto"


def function_lengths(path: Path) -> dict[str, int]:
    """Every function of the module at ``path`` (methods and nested ones
    too, by qualified name: ``Linter.run``, ``serve.<locals>.note``) -> its lines."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                name = prefix + child.name
                lengths[name] = (child.end_lineno or child.lineno) - child.lineno + 1
                visit(child, name + ".<locals>.")
            elif isinstance(child, ast.ClassDef):
                visit(child, prefix + child.name + ".")
            else:
                visit(child, prefix)

    visit(ast.parse(path.read_text(encoding="utf-8")), "")
    return lengths


def long_functions(package: Path = PACKAGE, limit: int = MAX_FUNCTION_LINES) -> dict[str, int]:
    """ "path:qualified name" -> lines, of every function of ``package`` over ``limit``."""
    found = {}
    for path in sorted(package.rglob("*.py")):
        if GENERATED in path.parents:
            continue
        where = path.relative_to(package.parent).as_posix()
        for name, lines in function_lengths(path).items():
            if lines > limit:
                found[f"{where}:{name}"] = lines
    return found


def test_no_function_is_over_the_limit():
    over = long_functions()
    assert not over, f"over {MAX_FUNCTION_LINES} lines: {over}; split each into named helpers"


def test_no_module_of_the_package_is_let_off_the_complexity_rules():
    """pyproject.toml ignores no rule for a module of pciname/ (the tests'
    own ignores aside), so C901, PLR0912 and PLR0915 hold everywhere."""
    ruff = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["ruff"]["lint"]
    assert {"C90", "PLR0912", "PLR0915"} <= set(ruff["select"])
    ignored = {pattern for pattern in ruff.get("per-file-ignores", {}) if not pattern.startswith("tests/")}
    assert ignored == set(), f"modules let off ruff's rules: {sorted(ignored)}"


def test_the_count_sees_methods_nested_functions_and_long_ones(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    body = "\n".join(f"    x{i} = {i}" for i in range(80))
    (package / "sub" / "m.py").write_text(
        f"class C:\n    def short(self):\n        pass\n\n    def long(self):\n{body.replace('    ', '        ')}\n"
        f"\n\ndef outer():\n    def inner():\n{body.replace('    ', '        ')}\n    return inner\n"
    )
    assert long_functions(package) == {
        "pkg/sub/m.py:C.long": 81,
        "pkg/sub/m.py:outer": 83,
        "pkg/sub/m.py:outer.<locals>.inner": 81,
    }
    assert long_functions(package, limit=82) == {"pkg/sub/m.py:outer": 83}
    assert function_lengths(package / "sub" / "m.py")["C.short"] == 2
