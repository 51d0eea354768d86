"""The YAML pciname writes reads back as the strings written, in PyYAML and in
Go: ``tests/go_oracle_yaml/main.go`` reads it with go-yaml v2 (what
sigs.k8s.io/yaml forks: kubectl, Helm) and go-yaml v3 (kustomize), built from
Debian's Go source. PyYAML's own SafeDumper leaves ``y``, ``08``, ``1e3``,
``0o17`` ... plain, which Go reads as booleans and numbers; every YAML
pciname emits goes through :class:`pciname.base.yaml_out.Dumper`, which quotes
them, and writes every other string as SafeDumper does."""

from __future__ import annotations

import ast
import json
import math
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings, strategies as st

from pciname.base.yaml_out import GO_YAML_TIMESTAMP, Dumper, ambiguous, go_yaml_typed
from tests.cli_run import pciname
from tests.conftest import NEEDS_GO_YAML, REPO
from tests.go_oracles import ask, oracle as go_oracle
from tests.sysfs_tree import SysfsTree

#: Strings some YAML reader takes for another type when they are written plain.
TYPED = [
    *("y", "n", "Y", "N", "yes", "Yes", "YES", "no", "on", "On", "off", "OFF", "true", "False"),
    *("08", "09", "0777", "1e3", "1E3", "-1e-3", "1.5e+3", "0o17", "0O17", "0x1F", "0X1f", "0b101", "0B11"),
    *("-0b101", "0b+101", "0b-101", "0o+17", "0o-17", "1_000", "1_", "+_1", "-0x_1F", "0x1_F", "1__0"),
    *(".5", ".5e3", ".5_5", "+1", "-0", "1.", "1.2.3", ".", "99999999999999999999", "0x1FFFFFFFFFFFFFFFF"),
    *(".inf", "-.Inf", "+.INF", ".NaN", ".nan", "~", "null", "Null", "NULL", "", "<<", "="),
    *("2001-12-14", "2001-1-2", "2001-12-14t21:59:43.10-05:00", "2001-12-14T21:59:43Z", "2001-12-14 21:59:43.10"),
    *("2001-12-14   21:59:43,5", "2001-12-14 21:59:43.10 -5", "2001-02-30", "1e999"),
    *("12:30", "1:20:30", "-12:30", "190:20:30.15", "0000:00:01.0"),
]
#: Strings no reader takes for anything but themselves: written as SafeDumper writes them.
PLAIN = [
    *("nvidia.com/GA102GL_A10", "GRID T4-1Q", "A10-24Q", "u1.medium", "20Gi", "ingress-nginx", "latest"),
    *("inf", "nan", "Infinity", "+inf", "+.nan", "0x", "0b", "0o", "0x1p3", "e3", "1e", "1e+", "._5", "_1"),
    *("0b2", "0o8", "yes please", "y2", "nope", "ON!", "+", "1-2", "2001-12-1x", "v1.6.0", "a:b", "x=y", "<<<"),
]
#: Whitespace, indicators and other characters YAML treats specially.
AWKWARD = [" x", "x ", "a: b", "#x", "x #y", "- x", "? x", "'", '"', "\\", "\t", "\n", "x\ny", "é", "\x7f", "\ufeff"]
#: YAML 1.1's line breaks but newline (NEL, LS, PS), which YAML 1.2 does not break lines at.
OTHER_BREAKS = ["\x85", "\u2028", "\u2029", "GRID\x85T4-1Q", "x\u2028\ny", " \u2029 "]
#: Pieces the random strings are made of: enough of each grammar to stumble on its corners.
PIECES = [*"0123456789+-._:eExXoObBtTzZ ,yYnN~<=", "inf", "nan", "Inf", "NaN", "0x", "0o", "0b", "  "]
PIECES += ["2001-12-14", "2001-2-30", "21:59:43", "1:2:3", "-05:00", ",5"]
PIECE_STRINGS = st.lists(st.sampled_from(PIECES), max_size=6).map("".join)


@pytest.fixture(scope="module")
def oracle() -> Path:
    return go_oracle("yaml")


def go_read(oracle: Path, text: str) -> dict[str, Any]:
    """What go-yaml v2 and v3 make of ``text``, as Python data: strings as
    strings, Go's bool, int, float64 and nil as Python's, anything else as a
    (Go type, text) pair."""
    return {version: _python(read) for version, read in json.loads(ask(oracle, stdin=text)).items()}


_GO_SCALARS: dict[str, Any] = {"int": int, "uint64": int, "float64": float, "bool": lambda v: v == "true"}


def _python(read: Any) -> Any:
    if isinstance(read, str):
        return read
    if isinstance(read, list):
        return [_python(item) for item in read]
    if "map" in read:
        return {_python(key): _python(value) for key, value in read["map"]}
    if "error" in read:
        return ("error", read["error"])
    if read["type"] == "<nil>":
        return None
    return _GO_SCALARS[read["type"]](read["value"]) if read["type"] in _GO_SCALARS else (read["type"], read["value"])


def document(strings: list[str]) -> list[Any]:
    """Each string as a sequence item, a mapping key and a mapping value."""
    return [[s, {s: s}] for s in strings]


def dump(data: Any) -> str:
    return yaml.dump(data, Dumper=Dumper, sort_keys=False, allow_unicode=True)


def assert_read_back(oracle: Path, strings: list[str]) -> None:
    text = dump(document(strings))
    assert yaml.safe_load(text) == document(strings)
    for version, read in go_read(oracle, text).items():
        assert isinstance(read, list), (version, read)
        wrong = [(s, got) for s, got in zip(strings, read, strict=True) if got != [s, {s: s}]]
        assert not wrong, (version, wrong[:5])


# -- the defect, shown with Go ----------------------------------------------------------


@NEEDS_GO_YAML
def test_safe_dump_alone_is_misread_by_go(oracle):
    """What this module fixes: SafeDumper writes these plain, and go-yaml v2
    (kubectl) reads other types; v3 reads dates as times and ``0o+17`` as 15."""
    read = go_read(oracle, yaml.safe_dump(["y", "n", "08", "1e3", "1E3", ".5e3", "0o17", "0O17", "0b+101", "+_1"]))
    assert read["v2"] == [True, False, 8.0, 1000.0, 1000.0, 500.0, 15, 15, 5, 1]
    assert [type(v) for v in read["v2"]] == [bool, bool, float, float, float, float, int, int, int, int]
    read = go_read(oracle, yaml.safe_dump(["0o+17", "2001-1-2"]))
    assert read["v3"] == [15, ("time.Time", "2001-01-02 00:00:00 +0000 UTC")] and read["v2"] == ["0o+17", "2001-1-2"]


# -- every string reads back ----------------------------------------------------------------


@NEEDS_GO_YAML
def test_typed_plain_and_awkward_strings_read_back_as_strings(oracle):
    assert_read_back(oracle, TYPED + PLAIN + AWKWARD + OTHER_BREAKS)


def test_typed_strings_are_quoted_and_the_others_written_as_safe_dump_does():
    assert [s for s in TYPED if not ambiguous(s)] == []
    assert [s for s in PLAIN + AWKWARD if ambiguous(s)] == []
    for s in PLAIN + AWKWARD:
        assert dump(document([s])) == yaml.safe_dump(document([s]), allow_unicode=True, sort_keys=False)
    assert dump(["y", "08", ""]) == "- 'y'\n- '08'\n- ''\n"
    assert dump({"on": ["1e3"]}) == "'on':\n- '1e3'\n"


@NEEDS_GO_YAML
def test_nel_ls_and_ps_are_written_escaped(oracle):
    """SafeDumper writes them raw in single quotes, where PyYAML and go-yaml
    read NEL back as a space (and YAML 1.2 readers take none of them for a
    line break); escaped in double quotes, every reader reads them back."""
    assert yaml.safe_load(yaml.safe_dump(["GRID\x85T4-1Q"], allow_unicode=True)) == ["GRID T4-1Q"]
    assert dump(["GRID\x85T4-1Q", "x\u2028y", "\u2029"]) == '- "GRID\\NT4-1Q"\n- "x\\Ly"\n- "\\P"\n'
    assert_read_back(oracle, OTHER_BREAKS)


@NEEDS_GO_YAML
@pytest.mark.parametrize("seed", range(3))
def test_random_strings_read_back_as_strings(oracle, seed):
    rng = random.Random(seed)
    strings = sorted({"".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 7))) for _ in range(4000)})
    assert_read_back(oracle, strings)


@NEEDS_GO_YAML
@settings(max_examples=40, deadline=None)
@given(st.lists(st.text(max_size=8), min_size=1, max_size=40, unique=True))
def test_any_strings_read_back_as_strings(oracle, strings):
    assert_read_back(oracle, strings)


@settings(max_examples=300, deadline=None)
@given(PIECE_STRINGS | st.text(max_size=8))
def test_unambiguous_strings_are_written_as_safe_dump_writes_them(text):
    if not ambiguous(text) and not any(c in text for c in "\x85\u2028\u2029"):
        assert dump(document([text])) == yaml.safe_dump(document([text]), allow_unicode=True, sort_keys=False)
    else:
        assert "- '" in dump([text]) or '- "' in dump([text])


def written_plain(text: str) -> bool:
    """Whether ``text``, as a YAML document, is one plain scalar of this text
    (PyYAML's parser, before any resolving)."""
    try:
        events = list(yaml.parse(text))
    except yaml.YAMLError:
        return False
    scalars = [e for e in events if isinstance(e, yaml.ScalarEvent)]
    return len(events) == 5 and len(scalars) == 1 and scalars[0].style is None and scalars[0].value == text


@settings(max_examples=300, deadline=None)
@given(PIECE_STRINGS)
def test_what_pyyaml_reads_plain_as_another_type_is_ambiguous(text):
    """PyYAML is a YAML 1.1 reader: whatever it takes, written plain, for
    another type, the YAML 1.1 patterns take too."""
    if not written_plain(text):
        return
    try:
        read = yaml.safe_load(text)
    except yaml.constructor.ConstructorError:  # a type PyYAML resolves to but cannot build (=: value)
        read = None
    except ValueError:  # resolved as an int it cannot build ("0b_", "0x_"): PyYAML crashes on it
        read = None
    if read != text:
        assert ambiguous(text), (text, read)


def out_of_range(text: str) -> bool:
    """A number Go's strconv refuses as too large (go-yaml then reads a string)."""
    plain = text.replace("_", "")
    try:
        return math.isinf(float(plain))
    except ValueError:
        pass
    try:
        return not -(2**63) <= int(plain, 0) < 2**64
    except ValueError:
        return False


@NEEDS_GO_YAML
@pytest.mark.parametrize("seed", range(3))
def test_go_yaml_typed_is_what_go_yaml_reads(oracle, seed):
    """go_yaml_typed against go-yaml itself, on strings written plain by
    hand: whatever v2 or v3 reads as another type, it says is typed; and
    what it says is typed, v2 or v3 reads so, but for the merge key ``<<``
    (a merge only as a key), timestamps (v2 reads them into interface{} as
    strings; v3 only the dates that exist) and numbers out of range."""
    rng = random.Random(seed)
    strings = {"".join(rng.choice(PIECES) for _ in range(rng.randrange(1, 7))) for _ in range(6000)}
    strings = sorted(s for s in strings | set(TYPED + PLAIN) if written_plain(s))
    read = go_read(oracle, "".join(f"- {s}\n" for s in strings))
    typed = {s for version in ("v2", "v3") for s, got in zip(strings, read[version], strict=True) if got != s}
    assert sorted(s for s in typed if not go_yaml_typed(s)) == []
    unexplained = [
        s
        for s in strings
        if go_yaml_typed(s)
        and s not in typed
        and s != "<<"
        and not GO_YAML_TIMESTAMP.fullmatch(s)
        and not out_of_range(s)
    ]
    assert unexplained == []
    assert len(typed) > 100  # the pieces make numbers, words and dates


# -- every emitter uses the one Dumper ------------------------------------------------------


#: Dumps read back at once by PyYAML (libyaml), never written out: the lint
#: of an object read from the cluster composes its dump.
INTERNAL = {("pciname/lint/compose.py", "compose_data")}


def test_every_yaml_dump_in_pciname_uses_the_dumper():
    """No call in pciname/ dumps YAML but through yaml_out.Dumper, but in
    the functions named in INTERNAL."""
    offenders = []
    for path in sorted((REPO / "pciname").rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        where = str(path.relative_to(REPO))
        skipped = {
            id(n)
            for f in ast.walk(tree)
            if isinstance(f, ast.FunctionDef) and (where, f.name) in INTERNAL
            for n in ast.walk(f)
        }
        for node in ast.walk(tree):
            if id(node) in skipped or not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)):
                continue
            if node.func.attr in ("safe_dump", "safe_dump_all", "dump", "dump_all", "emit", "serialize"):
                if not isinstance(node.func.value, ast.Name) or node.func.value.id != "yaml":
                    continue
                dumper = next((k.value for k in node.keywords if k.arg == "Dumper"), None)
                if not (isinstance(dumper, ast.Name) and dumper.id == "Dumper"):
                    offenders.append(f"{where}:{node.lineno}")
    assert offenders == []
    assert all((REPO / f).exists() for f, _ in INTERNAL)


# -- the command line, end to end --------------------------------------------------------


@NEEDS_GO_YAML
def test_node_pool_group_and_cluster_named_like_numbers_and_booleans(oracle):
    out = pciname("node-pool", "y", "10de:2236", "--instance-type", "08", "--role", "on", "--role", "0o17")
    assert out.returncode == 0, out.stderr
    values = yaml.safe_load(out.stdout)
    group = values["nodeGroups"]["y"]
    assert (group["instanceType"], group["roles"], group["minReplicas"]) == ("08", ["on", "0o17"], 0)
    assert go_read(oracle, out.stdout) == {"v2": values, "v3": values}
    out = pciname("node-pool", "n", "10de:2236", "--format", "kubernetes-nodes", "--cluster", "1e3")
    assert out.returncode == 0, out.stderr
    nodes = yaml.safe_load(out.stdout)
    assert (nodes["metadata"]["name"], nodes["spec"]["cluster"]) == ("1e3-n", "1e3")
    assert go_read(oracle, out.stdout) == {"v2": nodes, "v3": nodes}


@NEEDS_GO_YAML
def test_scan_and_offered_types_named_like_numbers_and_booleans(oracle, tmp_path):
    """Strings from the host (mdev type ids and names) as the host has them."""
    tree = SysfsTree(tmp_path / "node")
    tree.add_function("0000:3b:00.0", driver="nvidia")
    tree.add_mdev_type("0000:3b:00.0", "0o17", "y\n")
    tree.add_mdev_type("0000:3b:00.0", "08", "NVIDIA 1e3\n")
    out = pciname("scan", "--sysfs-root", str(tree.root), "-o", "yaml")
    scanned = yaml.safe_load(out.stdout)
    offered = sorted((o["type_id"], o["name"], o["type"]) for o in scanned["offered"])
    assert offered == [("08", "NVIDIA 1e3", "1e3"), ("0o17", "y", "y")]
    assert go_read(oracle, out.stdout) == {"v2": scanned, "v3": scanned}
    out = pciname("permitted-host-devices", "--from-scan", str(tree.root), "--offered")
    assert out.returncode == 0, out.stderr
    permitted = yaml.safe_load(out.stdout)
    mdevs = permitted["permittedHostDevices"]["mediatedDevices"]
    assert sorted(m["mdevNameSelector"] for m in mdevs) == ["NVIDIA 1e3", "y"]
    assert go_read(oracle, out.stdout) == {"v2": permitted, "v3": permitted}
    tree.add_mdev_type("0000:3b:00.0", "nvidia-1", "GRID\x85T4-1Q\n")  # a NEL, as a host may have it
    out = pciname("scan", "--sysfs-root", str(tree.root), "-o", "yaml")
    scanned = yaml.safe_load(out.stdout)
    assert {(o["name"], o["type"]) for o in scanned["offered"] if o["type_id"] == "nvidia-1"} == {
        ("GRID\x85T4-1Q",) * 2
    }
    assert go_read(oracle, out.stdout) == {"v2": scanned, "v3": scanned}


@NEEDS_GO_YAML
def test_admission_policy_named_like_a_boolean(oracle):
    out = pciname("admission-policy", "10de:2236", "--name", "y")
    assert out.returncode == 0, out.stderr
    documents = list(yaml.safe_load_all(out.stdout))
    assert [d["metadata"]["name"] for d in documents] == ["y", "y"] and documents[1]["spec"]["policyName"] == "y"
    texts = out.stdout.split("\n---\n")
    assert [go_read(oracle, text) for text in texts] == [{"v2": d, "v3": d} for d in documents]
