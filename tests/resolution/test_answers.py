"""The packaged answers (pciname.resolution.answers, pciname/packaged/): what the code
and data make now, answering exactly as the full path does (pciname.resolve
and `pciname lookup`: tests/cli/test_cli_fast.py), and set aside whole when they
are not this version's or absent."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, given, settings, strategies as st

import pciname
from pciname import cli
from pciname.cli import fast
from pciname.naming.profiles import canonical_name, load_registry
from pciname.pciids.ids import device_id
from pciname.resolution import answers
from pciname.resolution.resolver import Resolver
from tests.cli_run import call
from tests.conftest import REPO
from tools import packaged_answers

PACKAGED = Path(answers.DIRECTORY)


def packaged_index() -> dict:
    answers.clear()
    index = answers.index()
    assert index is not None, "no packaged answers: run python -m tools.packaged_answers"
    return index


SPELLINGS = sorted(packaged_index()["spellings"])
TABLE_IDS = sorted({i for profile in packaged_index()["profiles"] for i in answers.table(profile).devices()})


def test_the_packaged_answers_are_what_the_code_and_data_make_now():
    """They cannot go stale: any change to the code or data that changes an
    answer (or the spellings, or pciname's version) fails here until
    ``python -m tools.packaged_answers`` is run."""
    built = packaged_answers.build()
    on_disk = packaged_answers.on_disk(PACKAGED)
    assert sorted(on_disk) == sorted(built), "run: python -m tools.packaged_answers"
    for name, blob in built.items():
        assert on_disk[name] == blob, f"{name} is stale: run python -m tools.packaged_answers"
    assert packaged_answers.main(["--check"]) == 0


def test_check_says_when_the_packaged_answers_are_stale(tmp_path, capsys):
    shutil.copytree(PACKAGED, tmp_path / "packaged")
    (tmp_path / "packaged" / answers.STRINGS).write_bytes(b"")
    assert packaged_answers.main(["--check", str(tmp_path / "packaged")]) == 1
    assert "STALE: run python -m tools.packaged_answers" in capsys.readouterr().out


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


def outcome(call) -> tuple:
    try:
        result = call()
    except Exception as error:  # noqa: BLE001 - the class and message are compared
        return ("error", type(error), str(error))
    return ("ok", type(result), result, repr(result))


_full = Resolver()
DEVICE_FORMS = st.sampled_from(TABLE_IDS).flatmap(
    lambda i: st.sampled_from(
        [
            f"10de:{i}",
            f"10DE:{i.upper()}",
            f"0x10de:0x{i}",
            i,
            f"0X10de:{i}",
            f" 10de:{i}",
            f"{i}\n",
            f"8086:{i}",
            f"10de:{i}0",
        ]
    )
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
    answers.memo.clear()
    fast_outcome = outcome(lambda: pciname.resolve(device, profile))
    assert fast_outcome == outcome(lambda: _full.resolve(device, profile))
    parsed = device_id(device)
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
        table = answers.table(canonical)
        assert table is not None
        ids = table.devices()
        view = _full.view(canonical)
        assert ids == view.universe(), canonical  # every id the profile is asked about
        if entry["table"] in seen and canonical != "preview":
            ids = ids[:10]  # rows already checked: the header is this profile's
        seen.add(entry["table"])
        for device in ids:
            assert answers.record(table, device) == view.record(pciname.parse_device(device)), (canonical, device)


def test_every_table_holds_one_encoding_of_its_rows():
    """What lookups of many ids read (every row at once) is, row by row,
    what a single lookup reads (one row, where ``ends`` says), in every
    packaged table; and a table file is its head and its rows, nothing more."""
    index = packaged_index()
    for entry in {e["table"]: e for e in index["profiles"].values()}.values():
        table = answers.Table(entry["header"], answers.mapped(entry["table"]))
        every = table.every_row()
        assert every == tuple(table.row(at) for at in range(0, len(table.ids), 4)), entry["table"]
        assert len(every) == len(table.devices()) == len(table.ends) // 4 - 1, entry["table"]
        assert int.from_bytes(table.ends[-4:], "little") + table.start == len(table.blob), entry["table"]
        names = answers.utf8_strings([row[index["fields"].index("resource_name")] or 0 for row in every])
        for device, name in zip(table.devices(), names):
            record = answers.record(table, device)
            assert record is not None
            assert bytes(name).decode("utf-8", "surrogatepass") == (record["resource_name"] or ""), device


def test_results_are_frozen_dataclasses_without_importing_dataclasses_first():
    """pciname.resolution.results writes out what @dataclass(frozen=True, slots=True)
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
        for change in (lambda: setattr(r, names[0], "x"), lambda: delattr(r, names[0]), lambda: setattr(r, "y", 1)):  # noqa: B023 - called at once
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


def test_there_is_one_memo_the_default_resolvers():
    """pciname.resolve (packaged or not), pciname.api.resolve and the
    default resolver remember in one dict, which clear_caches empties."""
    from pciname.api import resolve as api_resolve
    from pciname.resolution.resolver import default_resolver

    pciname.clear_caches()
    assert default_resolver().memo is answers.memo and not answers.memo
    packaged = pciname.resolve("10de:2236", "latest")  # from the packaged answers
    full = api_resolve("10de:2236", "GPU-Operator@23.9.2")  # a spelling the package does not list
    assert answers.memo == {("10de:2236", "latest"): packaged, ("10de:2236", "GPU-Operator@23.9.2"): full}
    assert pciname.resolve("10de:2236", "GPU-Operator@23.9.2") is full
    assert default_resolver().resolve("10de:2236", "latest") is packaged
    pciname.clear_caches()
    assert not answers.memo


#: Top-level modules `import pciname; pciname.resolve(...)` must not load.
RESOLVE_FORBIDDEN = {
    "argparse",
    "pathlib",
    "cachetools",
    "grpc",
    "kubernetes",
    "yaml",
    "pyparsing",
    "hashlib",
    "tempfile",
    "shutil",
    "threading",
    "lzma",
    "tarfile",
    "zlib",
    "json",
    "platformdirs",
    "importlib",
    "dataclasses",
    "inspect",
    "ast",
    "dis",
    "typing",
}
#: The only pciname modules it loads.
RESOLVE_MODULES = {
    "pciname",
    "pciname._version",
    "pciname.resolution",  # a docstring only
    "pciname.resolution.answers",
    "pciname.resolution.results",
    "pciname.naming",
    "pciname.naming.checks",
    "pciname.pciids",
    "pciname.pciids.ids",  # the one id parser: no re, no pciname.errors until it raises
}


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
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    expected = _full.resolve("10de:2236", profile).resource_name
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, f"{expected} [] []\n", "")
    assert not (tmp_path / "cache").exists()


# -- set aside whole -------------------------------------------------------------

CHECKED = [
    ("10de:2236", "latest"),
    ("10de:2330", "gpu-operator@v23.9.2"),
    ("10de:002a", "v1.0.0"),
    ("10de:2335", "kubevirt-gpu-device-plugin@v1.2.2"),
    ("10de:1eb8", "preview"),
    ("2236", "v1.2.1"),
]
ARGVS = [
    ["lookup", "10de:2236"],
    ["lookup", "10de:2330", "10de:1eb8", "-p", "gpu-operator@v23.9.2", "-o", "json"],
    ["lookup", "10de:002a", "-p", "v1.0.0"],
]


@pytest.fixture(scope="module")
def expected():
    resolutions = {(d, p): _full.resolve(d, p) for d, p in CHECKED}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PCINAME_CACHE_DIR", "/nonexistent/cache")  # nothing cached: the full path
        lookups = {tuple(argv): call(cli.full, argv) for argv in ARGVS}
    return resolutions, lookups


def check_answers(expected, directory: Path, monkeypatch, *, packaged: bool) -> None:
    """Every answer is right with the packaged answers in ``directory``,
    from them (``packaged``) or from the full path."""
    resolutions, lookups = expected
    monkeypatch.setattr(answers, "packaged_dir", lambda: str(directory))
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(directory.parent / "cache"))
    answers.clear()
    for (device, profile), want in resolutions.items():
        answers.memo.clear()
        got = pciname.resolve(device, profile)
        assert (got, repr(got)) == (want, repr(want))
        assert (answers.packaged_record(device, profile) is not None) == packaged
    for argv, want in lookups.items():
        assert call(fast.lookup, list(argv)) == (want if packaged else (None, "", ""))
        assert call(cli.main, list(argv)) == want
    pciname.clear_caches()


def test_the_packaged_answers_answer(expected, tmp_path, monkeypatch):
    shutil.copytree(PACKAGED, tmp_path / "packaged")
    check_answers(expected, tmp_path / "packaged", monkeypatch, packaged=True)


def test_packaged_answers_of_another_pciname_version_are_set_aside(expected, tmp_path, monkeypatch):
    shutil.copytree(PACKAGED, tmp_path / "packaged")
    monkeypatch.setattr(answers, "__version__", "0.0.1")
    check_answers(expected, tmp_path / "packaged", monkeypatch, packaged=False)


@pytest.mark.parametrize("missing", [answers.INDEX, "table"])
def test_absent_packaged_answers_leave_everything_to_the_full_path(missing, expected, tmp_path, monkeypatch):
    shutil.copytree(PACKAGED, tmp_path / "packaged")
    if missing == "table":
        for entry in packaged_index()["profiles"].values():
            (tmp_path / "packaged" / entry["table"]).unlink(missing_ok=True)
    else:
        (tmp_path / "packaged" / missing).unlink()
    check_answers(expected, tmp_path / "packaged", monkeypatch, packaged=False)


def test_setup_ships_every_packaged_answer_file():
    """A file of pciname/packaged/ left out of the wheel would leave
    lookups to the full path in every install."""
    import ast
    import fnmatch

    tree = ast.parse((REPO / "setup.py").read_text())
    (patterns,) = [
        ast.literal_eval(k.value)["pciname"]
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for k in node.keywords
        if k.arg == "package_data"
    ]
    files = [f"{PACKAGED.name}/{p.name}" for p in PACKAGED.iterdir() if not p.name.startswith(".")]
    assert len(files) >= 4
    assert [f for f in files if not any(fnmatch.fnmatchcase(f, pat) for pat in patterns)] == []


def test_the_tests_latest_is_the_registrys():
    """tests/conftest.py's LATEST: the one test line a new plugin release changes."""
    from tests.conftest import LATEST

    assert load_registry().get("latest").name == LATEST
