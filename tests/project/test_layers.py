"""The import graph, read from the source with ``ast``: data flows one way,
pci.ids text -> database -> naming -> catalog -> resolver -> api -> the
domain rooms, each a layer of its own in one order (dra, host, kata,
kubevirt, cozystack, cluster, lint, policy: no two import each other) ->
capabilities -> the package's face -> server -> cli, and no module imports itself back through a
cycle. Every folder and module under pciname/ has a place: one that no layer
names fails. Imports inside functions count (they are dependencies all the
same); imports only for type checkers do not, except between domain rooms."""

from __future__ import annotations

import ast
import importlib
from collections.abc import Iterable
from pathlib import Path

import pytest

from pciname.errors import PcinameBaseError
from tests.conftest import REPO, TESTS

PACKAGE = REPO / "pciname"

# The layers, lowest first. A module may import modules of its own layer or
# of a lower one, never of a higher one. Each names modules or folders of
# pciname/ (a folder holds its submodules); "pciname" itself is the package's
# __init__ alone.
LAYERS: list[tuple[str, tuple[str, ...]]] = [
    ("base", ("pciname._version", "pciname.errors", "pciname.base")),
    ("database", ("pciname.pciids",)),
    ("naming", ("pciname.naming",)),
    (
        "catalog",
        (
            "pciname.resolution",
            "pciname.resolution.answers",
            "pciname.resolution.catalog",
            "pciname.resolution.download",
            "pciname.resolution.snapshots",
            "pciname.resolution.results",
        ),
    ),
    ("resolver", ("pciname.resolution.resolver",)),
    ("api", ("pciname.api",)),
    # The domain rooms, in one order: each imports only the rooms before it.
    ("dra", ("pciname.dra",)),
    ("host", ("pciname.host",)),
    ("kata", ("pciname.kata",)),
    ("kubevirt", ("pciname.kubevirt",)),
    ("hami", ("pciname.hami",)),
    ("cozystack", ("pciname.cozystack",)),
    ("cluster", ("pciname.cluster",)),
    ("lint", ("pciname.lint",)),
    ("policy", ("pciname.policy",)),
    ("requests", ("pciname.requests",)),
    ("capabilities", ("pciname.capabilities",)),
    # The package's face exposes the capabilities (their registry and request types).
    ("facade", ("pciname",)),
    ("server", ("pciname.server", "pciname.client")),
    ("cli", ("pciname.cli", "pciname.__main__")),
]
#: The domain rooms, lowest first (docs/architecture.md draws them in this order).
DOMAIN_ROOMS = ("dra", "host", "kata", "kubevirt", "hami", "cozystack", "cluster", "lint", "policy")
#: Folders of pciname/ that hold data, not modules: no layer names them.
DATA_FOLDERS = ("packaged",)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


MODULES = {module_name(p): p for p in PACKAGE.rglob("*.py")}


def _named_by(module: str, prefix: str) -> bool:
    """Whether a layer's ``prefix`` names ``module``: the module itself, or a
    folder the module is in (the package ``pciname`` names its __init__ only)."""
    return module == prefix or (prefix != "pciname" and module.startswith(prefix + "."))


def find_layer(module: str) -> int | None:
    """The rank of the layer that names ``module`` most closely, or None."""
    best, best_len = None, -1
    for rank, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if _named_by(module, prefix) and len(prefix) > best_len:
                best, best_len = rank, len(prefix)
    return best


def layer_of(module: str) -> int:
    rank = find_layer(module)
    assert rank is not None, f"{module} is in no layer: add it to LAYERS"
    return rank


def unplaced(modules: Iterable[str], folders: Iterable[str]) -> list[str]:
    """Modules no layer names, and folders directly under pciname/ (their
    names) that are neither named by a layer nor data."""
    named = {prefix for _, prefixes in LAYERS for prefix in prefixes}
    found = [m for m in modules if find_layer(m) is None]
    found += [f"pciname.{f}/" for f in folders if f"pciname.{f}" not in named and f not in DATA_FOLDERS]
    return sorted(found)


def top_folders() -> list[str]:
    return sorted(p.name for p in PACKAGE.iterdir() if p.is_dir() and p.name != "__pycache__")


def _type_checking_only(node: ast.AST) -> bool:
    test = getattr(node, "test", None)
    return isinstance(node, ast.If) and (
        (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING")
        or (isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")
    )


def imports_of(module: str, *, typing_too: bool = False) -> set[str]:
    path = MODULES[module]
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if _type_checking_only(node) and not typing_too:
            return
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.split(".")[0] == "pciname")
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.split(".")[0] != "pciname":
                return
            submodules = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in MODULES]
            # "from . import x" and "from pkg import x" depend on the
            # submodule x, not on the package.
            if len(submodules) < len(node.names):
                found.add(target)
            found.update(submodules)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text(encoding="utf-8")))
    found.discard(module)
    return {m for m in found if m in MODULES}


GRAPH = {module: imports_of(module) for module in MODULES}
#: With the imports only type checkers read: between domain rooms these count too.
TYPED_GRAPH = {module: imports_of(module, typing_too=True) for module in MODULES}


def test_every_module_and_folder_has_a_layer():
    assert unplaced(MODULES, top_folders()) == []


def test_a_new_room_without_a_layer_fails():
    """A folder added under pciname/ that no layer names is caught, whether
    the check reads its modules or the folder alone; so is a loose module."""
    assert unplaced([*MODULES, "pciname.newroom", "pciname.newroom.thing"], [*top_folders(), "newroom"]) == [
        "pciname.newroom",
        "pciname.newroom.thing",
        "pciname.newroom/",
    ]
    assert unplaced(["pciname.extra"], []) == ["pciname.extra"]
    # The package's own name places its __init__ only, not what is under it.
    assert find_layer("pciname.dra.claims") == layer_of("pciname.dra")
    assert find_layer("pciname.newroom") is None


def test_every_layer_names_what_exists():
    """No stale entry: each name in LAYERS is a module or a folder of pciname/."""
    folders = {f"pciname.{f}" for f in top_folders()}
    stale = [p for _, prefixes in LAYERS for p in prefixes if p not in MODULES and p not in folders]
    assert stale == []


def test_the_domain_rooms_are_ordered_layers():
    names = [name for name, _ in LAYERS]
    ranks = [names.index(room) for room in DOMAIN_ROOMS]
    assert ranks == list(range(ranks[0], ranks[0] + len(DOMAIN_ROOMS)))
    assert all(LAYERS[rank][1] == (f"pciname.{room}",) for rank, room in zip(ranks, DOMAIN_ROOMS, strict=True))


def room_imports() -> dict[tuple[str, str], list[str]]:
    """(room, other room) -> the imports of one domain room's modules into
    another's, those only for type checkers too."""
    found: dict[tuple[str, str], list[str]] = {}
    for module in sorted(TYPED_GRAPH):
        room = module.split(".")[1] if module.count(".") else ""
        for target in sorted(TYPED_GRAPH[module]):
            other = target.split(".")[1] if target.count(".") else ""
            if room in DOMAIN_ROOMS and other in DOMAIN_ROOMS and room != other:
                found.setdefault((room, other), []).append(f"{module} -> {target}")
    return found


def test_no_two_domain_rooms_import_each_other():
    edges = room_imports()
    both_ways = sorted({tuple(sorted(pair)) for pair in edges if (pair[1], pair[0]) in edges})
    assert both_ways == []
    upward = {pair: found for pair, found in edges.items() if DOMAIN_ROOMS.index(pair[1]) > DOMAIN_ROOMS.index(pair[0])}
    assert upward == {}


@pytest.mark.parametrize("module", sorted(MODULES))
def test_no_module_imports_a_higher_layer(module):
    rank = layer_of(module)
    upward = sorted(f"{target} ({LAYERS[layer_of(target)][0]})" for target in GRAPH[module] if layer_of(target) > rank)
    assert not upward, f"{module} ({LAYERS[rank][0]}) imports a higher layer: {', '.join(upward)}"


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(GRAPH[v]):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for module in sorted(GRAPH):
        if module not in index:
            connect(module)
    return found


def test_the_import_graph_has_no_cycle():
    # A package's __init__ that imports its own modules, which import
    # nothing back from it, is no cycle; anything else is.
    assert _cycles() == []


def test_the_checker_sees_a_cycle_and_an_upward_import(monkeypatch):
    """The checks above can fail: planted edges are caught."""
    monkeypatch.setitem(GRAPH, "pciname.naming.gotext", GRAPH["pciname.naming.gotext"] | {"pciname.naming.checks"})
    monkeypatch.setitem(GRAPH, "pciname.naming.checks", GRAPH["pciname.naming.checks"] | {"pciname.naming.gotext"})
    assert ["pciname.naming.checks", "pciname.naming.gotext"] in _cycles()
    assert layer_of("pciname.cli.core") > layer_of("pciname.resolution.resolver")
    monkeypatch.setitem(TYPED_GRAPH, "pciname.dra.facts", TYPED_GRAPH["pciname.dra.facts"] | {"pciname.lint.codes"})
    assert ("dra", "lint") in room_imports()
    assert layer_of("pciname.lint.codes") > layer_of("pciname.dra.facts")


def test_test_modules_do_not_import_each_other():
    """What tests share lives in conftest.py and helper modules, not in
    another test module (importing one collects its tests' globals twice)."""
    found = []
    for path in sorted(TESTS.rglob("test_*.py")):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                imported = [node.module or "", *(f"{node.module or ''}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                imported = [a.name for a in node.names]
            else:
                continue
            if any(part.startswith("test_") for name in imported for part in name.split(".")):
                found.append(f"{path.relative_to(TESTS)} imports {imported[0] or imported[1]}")
    assert found == []


# -- docs/architecture.md is true to the code ----------------------------------------------

ARCHITECTURE = REPO / "docs" / "architecture.md"


def doc_table(heading: str) -> list[list[str]]:
    """The rows of the first table under ``## heading`` in docs/architecture.md, cells stripped."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    section = text.split(f"\n## {heading}\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines() if line.startswith("|")]
    return [[cell.strip() for cell in row] for row in rows[2:]]


def _code_names(cell: str) -> list[str]:
    return [part.strip().strip("`") for part in cell.split(",")]


def test_the_doc_draws_the_layers_in_order():
    assert [(name, tuple(_code_names(cell))) for name, cell in doc_table("Layers")] == LAYERS


def test_the_doc_draws_every_domain_room_in_order():
    """The picture lists the domain rooms in the layers' order."""
    text = ARCHITECTURE.read_text(encoding="utf-8")
    picture = text.split("domain rooms, one layer each", 1)[1].split("pciname/requests/", 1)[0]
    drawn = [line.split()[0].rstrip("/") for line in picture.splitlines()[1:] if line[16:17].isalpha()]
    assert drawn == list(DOMAIN_ROOMS)


def _capability_modules() -> list[str]:
    """The modules of pciname/capabilities/ that define an answer (``answer`` or ``answer_*``)."""
    found = []
    for path in sorted((PACKAGE / "capabilities").glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef)]
        if any(name == "answer" or name.startswith("answer_") for name in names):
            found.append(path.stem)
    return found


def registry_rows() -> list[list[str]]:
    """docs/architecture.md's table of capabilities as the registry makes it, row for row."""
    from pciname.capabilities.registry import CAPABILITIES

    return [
        [f"`{c.command}`", f"`{c.module}`", f"`{c.request}`", f"`{c.answer}`", ", ".join(c.rpcs) or "-"]
        + [", ".join(c.formats) or "-"]
        for c in CAPABILITIES
    ]


def test_the_doc_lists_every_capability():
    """The table is the registry (on a difference the message holds the rows
    to paste), and every module of pciname/capabilities/ that defines an
    answer is an entry's."""
    expected = registry_rows()
    assert doc_table("Capabilities") == expected, "\n" + "\n".join(f"| {' | '.join(row)} |" for row in expected)
    registered = {row[1].strip("`") for row in expected}
    assert registered == set(_capability_modules())
    assert "dra_claims" in registered and "spelling" not in registered and "registry" not in registered


def exception_classes() -> dict[str, type[BaseException]]:
    """Every exception class defined in pciname, by its module and name (every module imported)."""
    found: dict[str, type[BaseException]] = {}
    for module in sorted(MODULES):
        if module == "pciname.__main__" or "._proto" in module:
            continue
        for name, value in vars(importlib.import_module(module)).items():
            if isinstance(value, type) and issubclass(value, BaseException) and value.__module__ == module:
                found[f"{module}.{name}"] = value
    return found


def test_every_exception_class_derives_from_the_one_root():
    classes = exception_classes()
    assert "pciname.errors.PcinameError" in classes and "pciname.kubevirt.shapes.ShapeError" in classes
    assert sorted(name for name, cls in classes.items() if not issubclass(cls, PcinameBaseError)) == []


def test_the_doc_says_where_each_error_family_lives():
    """Public exception classes outside errors.py are the doc's table, each in the module it names."""
    outside = sorted(
        (name.rpartition(".")[2], name.rpartition(".")[0])
        for name in exception_classes()
        if not name.startswith("pciname.errors.") and not name.rpartition(".")[2].startswith("_")
    )
    assert sorted((row[0].strip("`"), row[1].strip("`")) for row in doc_table("Errors")) == outside


# -- maintainer tools stay out of the package ----------------------------------------------


def _main_blocks(path: Path) -> list[int]:
    """Lines of ``if __name__ == "__main__":`` blocks in a module."""
    lines = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Compare):
            names = [n.id for n in ast.walk(node.test) if isinstance(n, ast.Name)]
            texts = [n.value for n in ast.walk(node.test) if isinstance(n, ast.Constant)]
            if "__name__" in names and "__main__" in texts:
                lines.append(node.lineno)
    return lines


def test_no_runnable_build_tool_ships_in_the_package():
    """Extractors and generators live in tools/, which the wheel does not
    carry: in pciname/ only __main__.py runs as a program."""
    runnable = {m: _main_blocks(p) for m, p in MODULES.items() if p.name != "__main__.py"}
    assert not {m: lines for m, lines in runnable.items() if lines}
    tools = PACKAGE.parent / "tools"
    assert sorted(p.stem for p in tools.glob("*.py") if _main_blocks(p)) == [
        "cli_reference",
        "cozystack_extract",
        "dra_extract",
        "dra_schemas",
        "hami_extract",
        "k8s_device_plugin_extract",
        "kata_extract",
        "kubevirt_extract",
        "lint_tables",
        "packaged_answers",
        "protogen",
        "vgpu_catalogue",
    ]


def test_the_package_never_imports_the_tools():
    for module, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and not node.level:
                assert (node.module or "").split(".")[0] != "tools", module
            elif isinstance(node, ast.Import):
                assert all(a.name.split(".")[0] != "tools" for a in node.names), module


# -- rooms of a size one can hold in mind --------------------------------------------------

#: The most lines of modules one folder of pciname/ holds directly.
MAX_ROOM_LINES = 3000
#: The most modules loose at the top of pciname/ (the face and the base).
MAX_TOP_MODULES = 8


def test_no_room_is_a_monolith():
    rooms = {p.parent for p in PACKAGE.rglob("*.py") if "_proto" not in p.parts}
    sizes = {
        str(room.relative_to(PACKAGE.parent)): sum(
            len(p.read_text(encoding="utf-8").splitlines()) for p in room.glob("*.py")
        )
        for room in rooms
    }
    assert {room: lines for room, lines in sizes.items() if lines > MAX_ROOM_LINES} == {}


def test_the_top_of_the_package_shows_the_face_only():
    top = sorted(p.name for p in PACKAGE.glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top


# -- the surfaces only translate -------------------------------------------------------------

#: The surfaces' modules that may reach a domain room directly: the CLI's speed layer (the
#: lookup fast path and the completion protocol, measured on their own). Everything else of
#: pciname/cli asks pciname.capabilities.
SURFACE_EXCEPTIONS = ("pciname.cli.fast", "pciname.cli.completion")
#: The surfaces held to it: the CLI and the gRPC handlers (pciname/server/rpc).
SURFACES = ("pciname.cli", "pciname.__main__", "pciname.server.rpc")


def domain_imports(surfaces: Iterable[str], graph: dict[str, set[str]]) -> list[str]:
    """Each import of a domain room by a module of ``surfaces`` (but the
    exceptions), those only for type checkers too."""
    found = []
    for module in sorted(graph):
        inside = any(_named_by(module, s) for s in surfaces)
        if not inside or any(_named_by(module, e) for e in SURFACE_EXCEPTIONS):
            continue
        for target in sorted(graph[module]):
            if target.count(".") and target.split(".")[1] in DOMAIN_ROOMS:
                found.append(f"{module} -> {target}")
    return found


def test_the_cli_and_the_rpc_handlers_import_no_domain_room():
    """The CLI builds requests, asks the registry and prints, and an RPC
    handler builds its request from the message and sends the answer back:
    what a domain room knows reaches them through pciname.capabilities."""
    assert domain_imports(SURFACES, TYPED_GRAPH) == []


def test_the_surface_check_sees_a_domain_import(monkeypatch):
    monkeypatch.setitem(TYPED_GRAPH, "pciname.cli.kata", TYPED_GRAPH["pciname.cli.kata"] | {"pciname.kata.pod"})
    monkeypatch.setitem(TYPED_GRAPH, "pciname.cli.fast", TYPED_GRAPH["pciname.cli.fast"] | {"pciname.lint.codes"})
    rpc = "pciname.server.rpc.cluster"
    monkeypatch.setitem(TYPED_GRAPH, rpc, TYPED_GRAPH[rpc] | {"pciname.kubevirt.shapes"})
    assert domain_imports(SURFACES, TYPED_GRAPH) == [
        "pciname.cli.kata -> pciname.kata.pod",
        "pciname.server.rpc.cluster -> pciname.kubevirt.shapes",
    ]
