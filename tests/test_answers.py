"""The packaged answer tables (pciname.answers, data/answers/): fresh with
respect to the code and data they come from, answering exactly as the full
path does (pciname.resolve and `pciname lookup`), and never believed when
damaged."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

import pciname
from pciname import answers, cli, packaged_answers
from pciname.cli import fast
from pciname.naming.profiles import DEFAULT_PROFILE, canonical_name, load_registry
from pciname.resolver import Resolver

from .conftest import REPO
from .test_cache_integrity import CORRUPTIONS, corrupt
from .test_cli_fast import VOCABULARY, run_in_process

PACKAGED = REPO / "data" / answers.PACKAGED_DIR


def packaged_index() -> dict:
    answers.clear()
    index = answers.packaged_index()
    assert index is not None, "no packaged answer tables: run python -m pciname.packaged_answers"
    return index


SPELLINGS = sorted(packaged_index()["spellings"])
TABLE_IDS = sorted({i for name in os.listdir(PACKAGED) if name.endswith(".answers")
                    for table in [answers.read_table(str(PACKAGED / name), owned=False)]
                    for i in (table["ids"][k:k + 4] for k in range(0, len(table["ids"]), 4))})


def test_the_packaged_tables_are_what_the_code_and_data_make_now():
    """They cannot go stale: any change to the code or data that changes an
    answer (or the spellings, or pciname's version) fails here until
    ``python -m pciname.packaged_answers`` is run."""
    built = packaged_answers.build()
    on_disk = packaged_answers.on_disk(PACKAGED)
    assert sorted(on_disk) == sorted(built), "run: python -m pciname.packaged_answers"
    for name, blob in built.items():
        assert on_disk[name] == blob, f"{name} is stale: run python -m pciname.packaged_answers"


def test_every_packaged_profile_is_answered_under_its_spellings():
    index = packaged_index()
    registry = load_registry()
    for spelling, canonical in index["spellings"].items():
        assert canonical_name(spelling, registry) == canonical, spelling
    # Every profile whose pci.ids ships in the package, under its canonical name.
    assert set(index["profiles"]) == {p.name for p in registry.profiles.values()}
    assert {canonical for spelling, canonical in index["spellings"].items() if spelling == canonical} == set(
        index["profiles"]
    )
    assert index["spellings"]["latest"] == registry.get("latest").name
    # Profiles that share rows share a table file.
    assert len({entry["table"] for entry in index["profiles"].values()}) < len(index["profiles"])


def test_the_default_profile_is_the_naming_rules_default():
    assert answers.DEFAULT_PROFILE == DEFAULT_PROFILE


def outcome(call) -> tuple:
    try:
        result = call()
    except Exception as error:  # the class and message are compared
        return ("error", type(error), str(error))
    return ("ok", type(result), result, repr(result))


_full = Resolver()
DEVICE_FORMS = st.sampled_from(TABLE_IDS).flatmap(
    lambda i: st.sampled_from([f"10de:{i}", f"10DE:{i.upper()}", f"0x10de:0x{i}", i, f"0X10de:{i}", f" 10de:{i}",
                               f"{i}\n", f"8086:{i}", f"10de:{i}0"])
)
DEVICES = st.one_of(
    DEVICE_FORMS,
    st.from_regex(r"(0x)?[0-9a-fA-F]{0,5}:?(0[xX])?[0-9a-fA-F]{0,5}", fullmatch=True),
    st.text(max_size=10),
)
PROFILE_SPELLINGS = st.sampled_from([*SPELLINGS, "LATEST", "Preview", "v9.9.9", "", "GPU-Operator@23.9.2", "1.2.2"])


@settings(max_examples=400, deadline=None)
@given(device=DEVICES, profile=PROFILE_SPELLINGS)
@example(device="10de:2236", profile="latest")
@example(device="10de:2335", profile="kubevirt-gpu-device-plugin@v1.2.2")
@example(device="10de:002a", profile="kubevirt-gpu-device-plugin@v1.0.0")
@example(device="10de:ffff", profile="preview")
@example(device="8086:1234", profile="latest")
@example(device="10de:2236", profile="v9.9.9")
@example(device="zz", profile="v9.9.9")
@example(device="١٠de:2236", profile="latest")  # non-ASCII digits: not hex to either path
def test_property_resolve_from_the_package_is_the_full_paths_resolution(device, profile):
    answers.remembered.clear()
    fast_outcome = outcome(lambda: pciname.resolve(device, profile))
    assert fast_outcome == outcome(lambda: _full.resolve(device, profile))
    parsed = answers.device_id(device)
    if profile in SPELLINGS and parsed is not None and parsed[0] == "10de" and parsed[1] in TABLE_IDS:
        # ... and it came from the package.
        record = answers.packaged_record(device, profile)
        assert record is not None
        assert fast_outcome[2].to_dict() == record


def test_every_device_of_every_packaged_profile_is_answered_as_the_full_path_does():
    """Every row of every table, through every profile that uses it."""
    index = packaged_index()
    seen = set()
    for canonical, entry in index["profiles"].items():
        table = answers.packaged(canonical)
        assert table is not None
        if entry["table"] in seen and canonical != "preview":
            ids = table["ids"][:40]  # rows already checked: the header is this profile's
        else:
            ids = table["ids"]
        seen.add(entry["table"])
        view = _full.view(canonical)
        for k in range(0, len(ids), 4):
            device = ids[k:k + 4]
            assert answers.record(table, device) == view.record(pciname.parse_device(device)), (canonical, device)


def test_results_are_frozen_dataclasses_without_importing_dataclasses_first():
    """pciname.results writes out what @dataclass(frozen=True, slots=True)
    made (importing dataclasses costs more than python -c pass)."""
    import copy
    import dataclasses
    import pickle

    full = _full.resolve("10de:002a", "v1.0.0")
    fast_one = pciname.resolve("10de:002a", "v1.0.0")
    for r in (full, pciname.diff("v1.2.1", "v1.2.2")[0], pciname.profiles()[0]):
        assert dataclasses.is_dataclass(r)
        names = [f.name for f in dataclasses.fields(r)]
        assert names == list(type(r).__slots__) == list(type(r).__match_args__)
        assert repr(r) == f"{type(r).__name__}({', '.join(f'{n}={getattr(r, n)!r}' for n in names)})"
        assert pickle.loads(pickle.dumps(r)) == r == copy.deepcopy(r) and hash(copy.copy(r)) == hash(r)
        assert dataclasses.replace(r) == r and dataclasses.replace(r, **{names[0]: "x"}) != r
        assert dataclasses.astuple(r) == tuple(getattr(r, n) for n in names)
        assert not hasattr(r, "__dict__")
        for change in (lambda: setattr(r, names[0], "x"), lambda: delattr(r, names[0]), lambda: setattr(r, "y", 1)):
            with pytest.raises(dataclasses.FrozenInstanceError):
                change()
    assert [f.default for f in dataclasses.fields(full)][-1] == ()
    assert full == fast_one and hash(full) == hash(fast_one) and full != full.to_dict()
    match fast_one:
        case pciname.Resolution(device, profile):
            assert (device, profile) == ("10de:002a", "kubevirt-gpu-device-plugin@v1.0.0")


def test_resolve_remembers_and_clear_caches_forgets():
    pciname.clear_caches()
    first = pciname.resolve("10de:2236")
    assert pciname.resolve("10de:2236") is first
    assert type(first) is pciname.Resolution
    pciname.clear_caches()
    again = pciname.resolve("10de:2236")
    assert again == first and again is not first


#: Top-level modules `import pciname; pciname.resolve(...)` must not load.
RESOLVE_FORBIDDEN = {"argparse", "pathlib", "cachetools", "grpc", "kubernetes", "yaml", "pyparsing", "hashlib",
                     "tempfile", "shutil", "threading", "lzma", "tarfile", "zlib", "json", "platformdirs", "importlib",
                     "dataclasses", "inspect", "ast", "dis", "typing"}
#: The only pciname modules it loads.
RESOLVE_MODULES = {"pciname", "pciname._version", "pciname.answers", "pciname.results", "pciname.naming",
                   "pciname.naming.checks"}


@pytest.mark.parametrize("profile", ["latest", "gpu-operator@v23.9.2", "kubevirt-gpu-device-plugin@v1.1.1", "preview"])
def test_a_fresh_resolve_of_a_packaged_profile_loads_little_and_builds_nothing(profile, tmp_path):
    env = {**os.environ, "PCINAME_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "import pciname\n"
        f"r = pciname.resolve('10de:2236', {profile!r})\n"
        "new = set(sys.modules) - before\n"
        "ours = {m for m in new if m.split('.')[0] == 'pciname'}\n"
        f"print(r.resource_name, sorted({{m.split('.')[0] for m in new}} & {RESOLVE_FORBIDDEN!r}),"
        f" sorted(ours - {RESOLVE_MODULES!r}))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO,
                          timeout=120)
    expected = _full.resolve("10de:2236", profile).resource_name
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{expected} [] []\n", "")
    assert not (tmp_path / "cache").exists()


# -- damage ---------------------------------------------------------------------

CHECKED = [("10de:2236", "latest"), ("10de:2330", "gpu-operator@v23.9.2"), ("10de:002a", "v1.0.0"),
           ("10de:2335", "kubevirt-gpu-device-plugin@v1.2.2"), ("10de:1eb8", "preview"), ("2236", "v1.2.1")]
ARGVS = [["lookup", "10de:2236"], ["lookup", "10de:2330", "10de:1eb8", "-p", "gpu-operator@v23.9.2", "-o", "json"],
         ["lookup", "10de:002a", "-p", "v1.0.0"]]


@pytest.fixture(scope="module")
def expected():
    resolutions = {(d, p): _full.resolve(d, p) for d, p in CHECKED}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PCINAME_CACHE_DIR", "/nonexistent/cache")  # nothing cached: the full path
        lookups = {tuple(argv): run_in_process(cli.full, argv) for argv in ARGVS}
    return resolutions, lookups


def copy_of_the_package_tables(root: Path) -> Path:
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(PACKAGED, root)
    return root


def check_answers(expected, directory: Path, monkeypatch) -> None:
    """Every answer is right with the tables in ``directory``; the fast
    path answers or leaves it to the full path."""
    resolutions, lookups = expected
    monkeypatch.setattr(answers, "packaged_dir", lambda: str(directory))
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(directory.parent / "cache"))
    answers.clear()
    for (device, profile), want in resolutions.items():
        answers.remembered.clear()
        got = pciname.resolve(device, profile)
        assert (got, repr(got)) == (want, repr(want))
    for argv, want in lookups.items():
        got = run_in_process(fast.lookup, list(argv))
        assert got[0] is None and got[1:] == ("", "") or got == want
        assert run_in_process(cli.main, list(argv)) == want
    pciname.clear_caches()


def test_the_packaged_tables_answer_when_intact(expected, tmp_path, monkeypatch):
    directory = copy_of_the_package_tables(tmp_path / "answers")
    check_answers(expected, directory, monkeypatch)
    for argv in ARGVS:
        assert run_in_process(fast.lookup, argv)[0] is not None, argv


@pytest.mark.parametrize("target", ["strings", "messages", "table", "index"])
def test_an_edited_name_in_a_packaged_table_is_not_served(target, expected, tmp_path, monkeypatch):
    directory = copy_of_the_package_tables(tmp_path / "answers")
    edited = 0
    for path in directory.iterdir():
        kind = "table" if path.suffix == ".answers" else path.name
        if kind == target:
            data = path.read_bytes()
            # A name (in the pool), a row's string index or a header's field, edited in place.
            old = {"strings": b"GA102GL_A10", "messages": b"share one socket", "table": b"\xe9",
                   "index": b"NVIDIA Corporation"}[target]
            new = {"strings": b"GA102GL_A11", "messages": b"share one sockeT", "table": b"\xea",
                   "index": b"NVIDIA Corporatiom"}[target]
            if old in data:
                path.write_bytes(data.replace(old, new))
                edited += 1
    assert edited
    check_answers(expected, directory, monkeypatch)
    monkeypatch.setattr(answers, "packaged_dir", lambda: str(directory))
    answers.clear()
    if target in ("strings", "index"):
        assert answers.packaged_record("10de:2236", "latest") is None
    if target == "messages":  # a device with a (now damaged) collision warning
        assert answers.packaged_record("10de:002a", "v1.0.0") is None
        assert answers.packaged_record("10de:2236", "latest") is not None  # no message to read


def test_swapped_packaged_tables_are_not_believed(expected, tmp_path, monkeypatch):
    directory = copy_of_the_package_tables(tmp_path / "answers")
    tables = sorted(directory.glob("*.answers"))
    one, two = tables[0].read_bytes(), tables[1].read_bytes()
    tables[0].write_bytes(two)
    tables[1].write_bytes(one)
    monkeypatch.setattr(answers, "packaged_dir", lambda: str(directory))
    answers.clear()
    assert answers.read_table(str(tables[0]), owned=False, named=True) is None
    check_answers(expected, directory, monkeypatch)


def test_tables_of_another_pciname_version_are_not_believed(expected, tmp_path, monkeypatch):
    directory = copy_of_the_package_tables(tmp_path / "answers")
    monkeypatch.setattr(answers, "__version__", "0.0.1")
    monkeypatch.setattr(answers, "packaged_dir", lambda: str(directory))
    answers.clear()
    assert answers.packaged("latest") is None
    check_answers(expected, directory, monkeypatch)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(CORRUPTIONS, min_size=1, max_size=3))
def test_property_every_answer_is_right_whatever_happens_to_the_packaged_tables(expected, tmp_path, ops):
    directory = copy_of_the_package_tables(tmp_path / "prop-answers")
    for op in ops:
        corrupt(directory, op, "*")
    with pytest.MonkeyPatch.context() as mp:
        check_answers(expected, directory, mp)
    answers.clear()


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(st.sampled_from(VOCABULARY + SPELLINGS[:8]), min_size=0, max_size=6))
@example(tokens=["10de:2236", "-p", "kubevirt-gpu-device-plugin@v1.1.1", "-o", "json"])
@example(tokens=["10de:002a", "10de:2236", "-p", "v1.0.0", "--warnings", "all"])
def test_property_lookups_from_the_package_agree_with_argparse(tokens, tmp_path, monkeypatch):
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "cache"))
    answers.clear()
    argv = ["lookup", *tokens]
    expected = run_in_process(cli.full, argv)
    shutil.rmtree(tmp_path / "cache", ignore_errors=True)  # what the fast path reads is the package's
    got = run_in_process(fast.lookup, argv)
    if got[0] is None:
        assert got[1:] == ("", "")
    else:
        assert got == expected


@pytest.mark.parametrize("profile", ["latest", "kubevirt-gpu-device-plugin@v1.0.0", "preview"])
def test_a_large_lookup_from_the_package_is_the_full_paths(profile, tmp_path, monkeypatch):
    """Every device id at once (the pools read whole, rows in one loop):
    with the warnings summed up, listed, and with a damaged pool."""
    import io

    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "cache"))
    answers.clear()
    ids = answers.packaged(profile)["ids"]
    every = "\n".join(f"10de:{ids[k:k + 4]}" for k in range(0, len(ids), 4)).encode()

    def run(function, argv):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(every)))
        return run_in_process(function, argv)

    for extra in ([], ["--warnings", "all"]):
        argv = ["lookup", "--stdin", "-p", profile, *extra]
        expected = run(cli.full, argv)
        answers.clear()
        got = run(fast.lookup, argv)
        assert got[0] is not None and got == expected
    directory = copy_of_the_package_tables(tmp_path / "answers")
    for name in (answers.POOL_NAME, answers.MESSAGES_NAME):
        data = bytearray((directory / name).read_bytes())
        data[-3] ^= 1  # one string of each pool, damaged
        (directory / name).write_bytes(bytes(data))
    monkeypatch.setattr(answers, "packaged_dir", lambda: str(directory))
    for extra in ([], ["--warnings", "all"]):
        argv = ["lookup", "--stdin", "-p", profile, *extra]
        expected = run(cli.full, argv)
        answers.clear()
        got = run(fast.lookup, argv)
        assert got[1:] == ("", "") if got[0] is None else got == expected


# -- the column of large lookups ------------------------------------------------


def column_from_rows(table: dict, ids: list[str]) -> tuple[list, bytes, list]:
    records = [answers.record(table, i) for i in ids]
    assert all(r is not None for r in records)
    return ([r["resource_name"] for r in records], bytes(r["advertised"] for r in records),
            [tuple(w["code"] for w in r["warnings"]) for r in records])


def every_id(table: dict) -> list[str]:
    return [table["ids"][k:k + 4] for k in range(0, len(table["ids"]), 4)]


@pytest.mark.parametrize("profile", sorted(packaged_index()["profiles"]))
def test_the_column_answers_as_the_rows_do_for_every_id_of_every_packaged_profile(profile):
    answers.clear()
    table = answers.packaged(profile)
    ids = every_id(table)
    column = answers.column_answers(table, ids)
    assert column is not None and column == column_from_rows(table, ids)
    assert set(column[1]) <= {0, 1}
    shuffled = ids[::-7] + ids[:5] * 3  # any order, repeats
    assert answers.column_answers(table, shuffled) == column_from_rows(table, shuffled)
    assert answers.column_answers(table, [*ids[:3], "zzzz"]) is None  # not in the table


def test_a_cached_tables_column_holds_the_names_and_answers_as_its_rows(tmp_path):
    view = Resolver(pinned=True).view(DEFAULT_PROFILE)
    from pciname.pciids.ids import NVIDIA_VENDOR_ID
    from pciname.resolver import DeviceId

    records = [view.record(DeviceId(NVIDIA_VENDOR_ID, i)) for i in view.universe()]
    header, blob = answers.encode(records, header_in_index=True)
    (tmp_path / "t.answers").write_bytes(blob)
    table = answers.read_table(str(tmp_path / "t.answers"))
    assert all(type(n) is str or n is None for n in table["names"])
    ids = every_id(table)
    assert answers.column_answers(table, ids) == column_from_rows(table, ids)
    # A flipped byte anywhere in the index (the column is in it): never believed.
    size = int.from_bytes(blob[len(answers.MAGIC) + answers.DIGEST_BYTES:][:4], "little")
    start = len(answers.MAGIC) + answers.DIGEST_BYTES + 4
    for at in range(start, start + size, max(1, size // 97)):
        damaged = bytearray(blob)
        damaged[at] ^= 0x10
        (tmp_path / "t.answers").write_bytes(bytes(damaged))
        assert answers.read_table(str(tmp_path / "t.answers")) is None, at


def test_encode_keeps_no_column_that_would_answer_differently():
    view = Resolver(pinned=True).view(DEFAULT_PROFILE)
    from pciname.pciids.ids import NVIDIA_VENDOR_ID
    from pciname.resolver import DeviceId

    records = [view.record(DeviceId(NVIDIA_VENDOR_ID, i)) for i in sorted(view.universe())[:40]]
    assert answers.encode(records, header_in_index=True) is not None
    # advertised 1 (not True): the rows compare equal, the column's byte would not.
    odd = [dict(r, advertised=1 if r["advertised"] else 0) for r in records]
    assert answers.encode(odd, header_in_index=True) is None


@pytest.mark.parametrize("damage", ["negative", "beyond", "string", "flag", "codes", "code", "short"])
def test_a_column_not_as_encode_writes_it_is_not_believed(damage):
    answers.clear()
    table = dict(answers.packaged(DEFAULT_PROFILE))
    names, advertised, codes = list(table["names"]), bytearray(table["advertised"]), list(table["codes"])
    if damage == "negative":
        names[3] = -1
    elif damage == "beyond":
        names[3] = len(answers.packaged_resources())
    elif damage == "string":
        names[3] = "nvidia.com/X"
    elif damage == "flag":
        advertised[3] = 2
    elif damage == "codes":
        codes[3] = ["name-collision"]
    elif damage == "code":
        codes[3] = (7,)
    else:
        names.pop()
    table.update(names=names, advertised=bytes(advertised), codes=codes)
    table.pop("column_checked", None)
    assert answers.column_answers(table, every_id(table)) is None


def test_a_damaged_resources_file_is_not_believed_and_large_lookups_stay_right(tmp_path, monkeypatch):
    import io

    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "cache"))
    answers.clear()
    every = "\n".join(f"10de:{i}" for i in every_id(answers.packaged(DEFAULT_PROFILE))).encode()
    argv = ["lookup", "--stdin"]

    def run(function):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(every)))
        answers.clear()
        return run_in_process(function, argv)

    expected = run(cli.full)
    assert run(fast.lookup) == expected
    pristine = (PACKAGED / answers.RESOURCES_NAME).read_bytes()
    directory = copy_of_the_package_tables(tmp_path / "answers")
    monkeypatch.setattr(answers, "packaged_dir", lambda: str(directory))
    for at in (len(answers.RESOURCES_MAGIC) + 3, len(pristine) // 2, len(pristine) - 2):
        damaged = bytearray(pristine)
        damaged[at] ^= 1
        (directory / answers.RESOURCES_NAME).write_bytes(bytes(damaged))
        answers.clear()
        assert answers.packaged_resources() is None
        assert run(fast.lookup) == (None, "", "")
        assert run(cli.main) == expected
    (directory / answers.RESOURCES_NAME).unlink()
    assert run(fast.lookup) == (None, "", "")
    assert run(cli.main) == expected
    answers.clear()


TOKEN_IDS = ["2236", "1eb8", "2330", "002a", "0000", "ffff", "ABCD", "22Z6"]
TOKENS = st.one_of(
    st.sampled_from(TOKEN_IDS).flatmap(lambda d: st.sampled_from(
        [f"10de:{d}", d, f"0x10de:0x{d}", f"10DE:{d.upper()}", f"10de:{d.upper()}", f"1002:{d}", f"10de:{d}x",
         f"0X{d}", f":{d}", f"10de:{d}:", f"10de::{d}"])),
    st.text(max_size=10),
)


@settings(max_examples=300, deadline=None)
@given(tokens=st.lists(TOKENS, max_size=30), profile=st.sampled_from(["latest", "preview", "v1.0.0"]))
def test_property_the_token_fast_path_is_the_exact_parse(tokens, profile):
    answers.clear()
    table = answers.packaged(profile)
    tokens = tokens + [f"10de:{i}" for i in every_id(table)[:40]]
    parsed = [answers.device_id(t) for t in tokens]
    exact = None if any(p is None or p[0] != "10de" for p in parsed) else [p[1] for p in parsed]
    assert answers.device_ids(table, tokens) == exact
    # A table with an id not in lower case: every token is parsed.
    upper = dict(table, ids=table["ids"][:-4] + "ABCD")
    upper.pop("positions", None)
    assert answers.device_ids(upper, tokens) == exact


def test_setup_ships_every_packaged_answer_file():
    """A file of data/answers/ left out of the wheel (e.g. ``resources``)
    would leave large lookups to the full path in every install."""
    import ast
    import fnmatch

    tree = ast.parse((REPO / "setup.py").read_text())
    (patterns,) = [ast.literal_eval(k.value)["pciname.data"] for node in ast.walk(tree)
                   if isinstance(node, ast.Call) for k in node.keywords if k.arg == "package_data"]
    files = [f"{answers.PACKAGED_DIR}/{p.name}" for p in PACKAGED.iterdir() if not p.name.startswith(".")]
    assert answers.RESOURCES_NAME in {p.name for p in PACKAGED.iterdir()}
    assert [f for f in files if not any(fnmatch.fnmatchcase(f, pat) for pat in patterns)] == []
