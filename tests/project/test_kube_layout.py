"""The domain rooms (dra, host, kata, kubevirt, cozystack, cluster, lint, policy), read from
the source with ``ast``: only the I/O module talks to Kubernetes (the
commands in pciname.cli go through it too), and every module says what its
one job is."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "pciname"
ROOMS = ("dra", "host", "kata", "kubevirt", "cozystack", "cluster", "lint", "policy")
MODULES = sorted(p for room in ROOMS for p in (PACKAGE / room).glob("*.py"))
CLI_MODULES = sorted((PACKAGE / "cli").glob("*.py"))

#: The one module that talks to a cluster through the kubernetes client.
IO_MODULE = PACKAGE / "cluster" / "kube.py"
#: The client and the HTTP library under it.
CLIENT_PACKAGES = ("kubernetes", "urllib3")


def imported_packages(path: Path) -> set[str]:
    """Top-level packages a module imports, anywhere in it (inside functions
    and ``if TYPE_CHECKING:`` blocks too)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
    return found


def test_the_modules_are_found():
    assert IO_MODULE in MODULES
    assert {"audit.py", "objects.py", "generate.py", "linter.py", "releases.py", "sysfs.py"} <= {
        path.name for path in MODULES
    }
    assert {"generate.py", "lint.py", "scan.py", "cluster.py"} <= {path.name for path in CLI_MODULES}


def _shown(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


@pytest.mark.parametrize("path", MODULES + CLI_MODULES, ids=_shown)
def test_only_the_io_module_imports_the_kubernetes_client(path):
    client = imported_packages(path) & set(CLIENT_PACKAGES)
    if path == IO_MODULE:
        assert "kubernetes" in client, "the I/O module is the one that talks to the cluster"
    else:
        assert not client, f"{_shown(path)} imports {', '.join(sorted(client))}: only {_shown(IO_MODULE)} may"


def test_the_check_sees_an_import_inside_a_function(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("def f():\n    from kubernetes.client import CoreV1Api\n    import urllib3.exceptions\n")
    assert imported_packages(planted) >= {"kubernetes", "urllib3"}


@pytest.mark.parametrize("path", MODULES, ids=_shown)
def test_every_module_opens_with_a_docstring(path):
    docstring = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")))
    assert docstring and docstring.strip(), f"{_shown(path)} has no docstring naming its job"
