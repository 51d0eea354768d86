"""tests/ in the package's shape, read with ``ast``: a folder per room of
pciname (tests/server/ for pciname/server/, tests/server/rpc/ for its rpc/,
...), tests of the whole repository in tests/project/, and at the top only
conftest, the shared helpers and tests named for a top-level module of
pciname (test_api.py for pciname/api.py). The gRPC fixtures every folder
uses (``server``, ``channel``, ``stub``, ``client``) are defined once, in
tests/conftest.py; a module that needs another server overrides
``server_spec`` instead of starting its own."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from tests.conftest import REPO, TESTS

PACKAGE = REPO / "pciname"
#: The fixtures defined in tests/conftest.py alone.
SHARED = ("server", "channel", "stub", "client")
#: The folder of the tests of the whole repository (the import graph, the
#: rooms, README transcripts and tables, deploy/, release data): no room of
#: pciname is theirs.
PROJECT = "project"


def _is_fixture(decorator: ast.expr) -> bool:
    target = decorator.func if isinstance(decorator, ast.Call) else decorator
    return (isinstance(target, ast.Attribute) and target.attr == "fixture") or (
        isinstance(target, ast.Name) and target.id == "fixture"
    )


def _fixture_name(function: ast.FunctionDef, decorator: ast.expr) -> str:
    if isinstance(decorator, ast.Call):
        for keyword in decorator.keywords:
            if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                return str(keyword.value.value)
    return function.name


def fixture_places(root: Path, names: tuple[str, ...] = SHARED) -> dict[str, list[str]]:
    """Where each of ``names`` is made a fixture under ``root``: a function
    decorated with ``pytest.fixture`` (or ``fixture(name=...)``), and any
    module-level binding of the name, by assignment or import (how a module
    takes another module's fixture as its own)."""
    places: dict[str, list[str]] = {name: [] for name in names}
    for path in sorted(root.rglob("*.py")):
        where = path.relative_to(root)
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                for decorator in node.decorator_list:
                    if _is_fixture(decorator) and _fixture_name(node, decorator) in places:
                        places[_fixture_name(node, decorator)].append(f"{where}:{node.lineno}")
        for node in tree.body:
            bound: list[str] = []
            if isinstance(node, ast.Assign):
                for target in node.targets:
                    elements = target.elts if isinstance(target, ast.Tuple) else [target]
                    bound += [e.id for e in elements if isinstance(e, ast.Name)]
            elif isinstance(node, ast.ImportFrom | ast.Import):
                bound += [(alias.asname or alias.name).split(".")[0] for alias in node.names]
            for name in bound:
                if name in places:
                    places[name].append(f"{where}:{node.lineno}")
    return places


def loose_tests(root: Path, package: Path) -> list[str]:
    """Test modules at the top of ``root`` not named for a top-level module
    of ``package`` (test_api.py is pciname/api.py's)."""
    allowed = {f"test_{module.stem}.py" for module in package.glob("*.py")}
    return sorted(p.name for p in root.glob("test_*.py") if p.name not in allowed)


def stray_folders(root: Path, package: Path) -> list[str]:
    """Folders of ``root`` holding Python files that are not a package
    (an ``__init__.py``: module names stay unique) or whose test modules
    are in a folder that is neither a room of ``package`` nor project/."""
    found = []
    for folder in sorted({p.parent for p in root.rglob("*.py")} - {root}):
        where = folder.relative_to(root)
        if "__pycache__" in where.parts:
            continue
        if not (folder / "__init__.py").is_file():
            found.append(f"{where}: no __init__.py")
        room = package.joinpath(*where.parts)
        is_room = (room / "__init__.py").is_file()
        if any(folder.glob("test_*.py")) and not is_room and where.parts[0] != PROJECT:
            found.append(f"{where}: tests of no room of {package.name}/")
    return found


def test_the_grpc_fixtures_are_defined_once_in_the_top_conftest():
    assert fixture_places(TESTS) == {name: [f"conftest.py:{_line(name)}"] for name in SHARED}


def _line(name: str) -> int:
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    return next(n.lineno for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == name)


def test_the_grpc_fixtures_are_module_scoped():
    """Each test module gets one server, shared by its tests."""
    tree = ast.parse((TESTS / "conftest.py").read_text(encoding="utf-8"))
    scopes = {}
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name in (*SHARED, "server_spec"):
            (decorator,) = node.decorator_list
            assert isinstance(decorator, ast.Call), node.name
            scopes[node.name] = {k.arg: ast.literal_eval(k.value) for k in decorator.keywords}.get("scope")
    assert scopes == dict.fromkeys((*SHARED, "server_spec"), "module")


def test_no_test_module_sits_loose_at_the_top():
    assert loose_tests(TESTS, PACKAGE) == []
    assert (TESTS / "test_api.py").is_file()  # the rule's one user today: pciname/api.py


def test_every_folder_is_a_room_or_the_project():
    # (A room may have no folder: its tests can be its callers'.)
    assert stray_folders(TESTS, PACKAGE) == []


def test_the_readme_names_test_files_that_exist():
    pages = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]
    text = "\n".join(page.read_text(encoding="utf-8") for page in pages)
    named = set(re.findall(r"\btests/[\w/]+\.py\b", text))
    assert named and sorted(p for p in named if not (REPO / p).is_file()) == []


def test_the_checks_see_a_copy_a_loose_module_and_a_stray_folder(tmp_path):
    """The checks above can fail: planted copies and files are caught."""
    tests, package = tmp_path / "tests", tmp_path / "pciname"
    (package / "naming").mkdir(parents=True)
    for path in (package / "__init__.py", package / "api.py", package / "naming" / "__init__.py"):
        path.write_text("")
    (tests / "naming").mkdir(parents=True)
    (tests / "elsewhere").mkdir()
    (tests / "conftest.py").write_text("import pytest\n\n@pytest.fixture(scope='module')\ndef stub():\n    pass\n")
    (tests / "naming" / "test_a.py").write_text(
        "from pytest import fixture\n\n@fixture(name='stub')\ndef other():\n    pass\n"
    )
    (tests / "elsewhere" / "test_b.py").write_text(
        "from tests import helpers\n\nserver, client = helpers.server, helpers.client\n"
    )
    (tests / "test_api.py").write_text("")
    (tests / "test_naming.py").write_text("from tests.conftest import stub\n")
    assert fixture_places(tests) == {
        "server": ["elsewhere/test_b.py:3"],
        "channel": [],
        "stub": ["conftest.py:4", "naming/test_a.py:4", "test_naming.py:1"],
        "client": ["elsewhere/test_b.py:3"],
    }
    assert loose_tests(tests, package) == ["test_naming.py"]
    assert stray_folders(tests, package) == [
        "elsewhere: no __init__.py",
        "elsewhere: tests of no room of pciname/",
        "naming: no __init__.py",
    ]
