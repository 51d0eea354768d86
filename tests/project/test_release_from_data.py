"""A plugin release and a GPU Operator release are data, not code (issue 23,
item 7): a ``profiles.json`` with one more of each, and nothing else
changed, gives profiles that ``pciname lookup`` resolves, ``profiles``
lists and the operator release maps to its plugin; the recipe in
``docs/architecture.md`` says which files to touch."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import REPO

#: Run pciname with the release facts read from the file given first.
PRELUDE = """
import sys
from pathlib import Path
import pciname.naming.profiles as profiles
facts = Path(sys.argv.pop(1))
profiles.embedded_profiles_path = lambda: facts
from pciname.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _with_new_releases(tmp_path: Path) -> Path:
    facts = json.loads((REPO / "data" / "profiles.json").read_text(encoding="utf-8"))
    plugins = facts["kubevirt_gpu_device_plugin"]
    newest = max(plugins, key=lambda v: tuple(int(x) for x in v.lstrip("v").split(".")))
    plugins["v9.0.0"] = {**plugins[newest], "released": "2030-01-01", "note": "a release added as data only"}
    operators = facts["gpu_operator"]
    any_operator = next(iter(operators.values()))
    operators["v30.1.0"] = {**any_operator, "released": "2030-01-02", "sandbox_device_plugin": "v9.0.0"}
    path = tmp_path / "profiles.json"
    path.write_text(json.dumps(facts, indent=2), encoding="utf-8")
    return path


def _pciname(facts: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run(
        [sys.executable, "-c", PRELUDE, str(facts), *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_a_new_plugin_and_operator_release_from_data_alone(tmp_path):
    facts = _with_new_releases(tmp_path)
    plain = _pciname(REPO / "data" / "profiles.json", "lookup", "10de:2236", "-p", "kubevirt-gpu-device-plugin@v9.0.0")
    assert plain.returncode == 2 and "v9.0.0" in plain.stderr  # unknown without the new facts
    for profile in ("kubevirt-gpu-device-plugin@v9.0.0", "gpu-operator@v30.1.0"):
        done = _pciname(facts, "lookup", "10de:2236", "-p", profile, "-o", "json")
        assert done.returncode == 0, done.stderr
        answer = json.loads(done.stdout)
        record = answer[0] if isinstance(answer, list) else answer
        assert record["resource_name"] == "nvidia.com/GA102GL_A10"
        assert "v9.0.0" in json.dumps(record)
    listed = _pciname(facts, "profiles")
    assert listed.returncode == 0 and "kubevirt-gpu-device-plugin@v9.0.0" in listed.stdout


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(x) for x in text.lstrip("v").split("."))


def test_the_readme_release_table_is_the_data():
    """The README's plugin release table, row by row, is data/profiles.json:
    each release's date, algorithm, image pci.ids and the GPU Operator
    releases that deploy it."""
    facts = json.loads((REPO / "data" / "profiles.json").read_text(encoding="utf-8"))
    readme = (REPO / "docs" / "profiles.md").read_text(encoding="utf-8")
    header = "| plugin release | released | algorithm | pci.ids in the image | GPU Operator releases |\n"
    table = readme[readme.index(header) + len(header) :].split("\n\n", 1)[0].splitlines()[1:]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    expected = []
    for release, plugin in sorted(facts["kubevirt_gpu_device_plugin"].items(), key=lambda item: _version(item[0])):
        operators = sorted(
            (v for v, o in facts["gpu_operator"].items() if o["sandbox_device_plugin"] == release), key=_version
        )
        expected.append(
            [release, plugin["released"], plugin["algorithm"], plugin["snapshot"], ", ".join(operators) or "-"]
        )
    assert rows == expected


def test_the_readme_kata_table_is_the_data():
    """The README's Kata table, row by row, is data/kata/releases.json: each
    plugin release's date, algorithm, what an unset P_GPU_ALIAS means, its
    pci.ids and the GPU Operator releases that deploy it in Kata mode."""
    facts = json.loads((REPO / "data" / "kata" / "releases.json").read_text(encoding="utf-8"))
    readme = (REPO / "docs" / "kata.md").read_text(encoding="utf-8")
    header = (
        "| Kata plugin release | released | algorithm | `P_GPU_ALIAS` unset | pci.ids "
        "| GPU Operator releases (Kata mode) |\n"
    )
    table = readme[readme.index(header) + len(header) :].split("\n\n", 1)[0].splitlines()[1:]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    expected = []
    for release, plugin in sorted(facts["plugin_releases"].items(), key=lambda item: _version(item[0])):
        operators = sorted((v for v, o in facts["operator_releases"].items() if o["plugin"] == release), key=_version)
        unset = plugin["aliases"]["P_GPU_ALIAS"]["unset"] or "per-model"
        expected.append(
            [
                release,
                plugin["date"],
                plugin["algorithm"],
                unset,
                plugin["pci_ids"]["version"],
                ", ".join(operators) or "-",
            ]
        )
    assert rows == expected
