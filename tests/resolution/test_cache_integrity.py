"""The on-disk table cache is never trusted: whatever happens to it (bit
flips, edits, truncation, swapped or linked files, FIFOs, a directory other
users can write), every answer is still right, nothing hangs, and nothing
outside the cache is ever written.

The packaged answer tables are hidden here, so that every answer comes from
the cache: the packaged answers are part of the package, trusted as its
code is (tests/resolution/test_answers.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import pciname
from tests.cli_run import call
from tests.conftest import CORRUPTIONS, corrupt, without_packaged_answers

PROFILES = ["latest", "kubevirt-gpu-device-plugin@v1.0.1", "kubevirt-gpu-device-plugin@v1.2.1", "preview"]
DEVICES = ["10de:2236", "10de:2330", "10de:1eb8", "10de:002a", "10de:230c", "10de:24fa", "8086:1234"]


def answers() -> dict:
    pciname.clear_caches()
    return {(d, p): pciname.resolve(d, p).to_dict() for p in PROFILES for d in DEVICES}


@pytest.fixture(autouse=True)
def cached_tables_only(monkeypatch):
    without_packaged_answers(monkeypatch)


@pytest.fixture(scope="module")
def pristine(tmp_path_factory):
    """The right answers, and the tables a clean run leaves behind."""
    cache = tmp_path_factory.mktemp("pristine-cache")
    with pytest.MonkeyPatch.context() as mp:
        without_packaged_answers(mp)
        mp.setenv("PCINAME_CACHE_DIR", str(cache))
        expected = answers()
    tables = sorted((cache / "tables").glob("*.marshal"))
    assert len(tables) >= 4
    return expected, {p.name: p.read_bytes() for p in tables}


def fresh_cache(root: Path, tables: dict[str, bytes]) -> Path:
    if root.exists():
        shutil.rmtree(root)
    (root / "tables").mkdir(parents=True, mode=0o700)
    root.chmod(0o700)
    for name, data in tables.items():
        (root / "tables" / name).write_bytes(data)
        (root / "tables" / name).chmod(0o600)
    return root


def test_an_edited_name_in_a_table_is_not_served(pristine, tmp_path, monkeypatch):
    """sed of GA102GL_A10 to GA102GL_A11 inside the tables: still the right name."""
    expected, tables = pristine
    edited = {name: data.replace(b"GA102GL_A10", b"GA102GL_A11") for name, data in tables.items()}
    assert edited != tables
    cache = fresh_cache(tmp_path / "cache", edited)
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    assert answers() == expected
    proc = subprocess.run(
        [sys.executable, "-m", "pciname", "lookup", "10de:2236"], capture_output=True, text=True, timeout=60
    )
    assert (proc.returncode, proc.stdout) == (0, "nvidia.com/GA102GL_A10\n")
    # ... and the damaged tables were rebuilt from the source.
    assert all(b"GA102GL_A11" not in p.read_bytes() for p in (cache / "tables").glob("*.marshal"))


def test_a_crafted_tiny_table_allocates_nothing_and_a_fifo_does_not_hang(pristine, tmp_path, monkeypatch):
    expected, tables = pristine
    cache = fresh_cache(tmp_path / "cache", tables)
    names = sorted(tables)
    # marshal of a list claiming 2**31 elements: 5 bytes that once made a lookup allocate 16.8 GB.
    (cache / "tables" / names[0]).write_bytes(b"[\xff\xff\xff\x7f")
    fifo = cache / "tables" / names[1]
    fifo.unlink()
    os.mkfifo(fifo)
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    assert answers() == expected  # returns: the FIFO is never opened for a blocking read


def test_links_are_not_followed_for_reading_or_writing(pristine, tmp_path, monkeypatch):
    expected, tables = pristine
    cache = fresh_cache(tmp_path / "cache", tables)
    victim = tmp_path / "victim"
    victim.write_text("precious\n")
    names = sorted(tables)
    for name in names:  # every table is a link: one to another table, the rest to a file outside
        (cache / "tables" / name).unlink()
    (cache / "tables" / names[0]).symlink_to(cache / "tables" / names[-1])
    for name in names[1:]:
        (cache / "tables" / name).symlink_to(victim)
    # The temporary names the old code wrote through, planted as links too.
    for name in names:
        (cache / "tables" / f".{name}.{os.getpid()}.tmp").symlink_to(victim)
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    assert answers() == expected
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("how", ["world-writable", "group-writable", "other-owner"])
def test_an_untrusted_cache_dir_is_neither_read_nor_written(how, pristine, tmp_path, monkeypatch):
    expected, tables = pristine
    edited = {name: data.replace(b"GA102GL_A10", b"GA102GL_A11") for name, data in tables.items()}
    cache = fresh_cache(tmp_path / "cache", edited)
    if how == "world-writable":
        cache.chmod(0o777)
    elif how == "group-writable":
        (cache / "tables").chmod(0o770)
    else:
        os.chown(cache, 65534, 65534)
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    before = {p.name: p.read_bytes() for p in (cache / "tables").iterdir()}
    assert answers() == expected
    assert {p.name: p.read_bytes() for p in (cache / "tables").iterdir()} == before  # nothing written
    # A sticky world-writable dir of one's own (like /tmp) is fine.
    if how == "world-writable":
        cache.chmod(0o1777)
        answers()
        assert {p.name: p.read_bytes() for p in (cache / "tables").iterdir()} != before


def test_a_table_of_another_user_is_not_read(pristine, tmp_path, monkeypatch):
    expected, tables = pristine
    edited = {name: data.replace(b"GA102GL_A10", b"GA102GL_A11") for name, data in tables.items()}
    cache = fresh_cache(tmp_path / "cache", edited)
    for path in (cache / "tables").iterdir():
        os.chown(path, 65534, 65534)
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    assert answers() == expected


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(CORRUPTIONS, min_size=1, max_size=3))
def test_property_every_answer_is_right_whatever_happens_to_the_tables(pristine, tmp_path, ops):
    expected, tables = pristine
    cache = fresh_cache(tmp_path / "prop-cache", tables)
    for op in ops:
        corrupt(cache / "tables", op)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PCINAME_CACHE_DIR", str(cache))
        assert answers() == expected


# -- `pciname lookup` keeps no other table in the cache ---------------------

ANSWER_ARGVS = [
    ["lookup", "10de:2236"],
    ["lookup", "10de:2236", "10de:1eb8", "-p", "gpu-operator@v23.9.2"],
    ["lookup", "10de:2330", "-p", "preview", "-o", "json"],
    ["lookup", "10de:2236", "-p", "LATEST"],  # a spelling the package does not list
]


def cli_answer(argv: list[str]) -> tuple[object, str, str]:
    from pciname import cli

    found = call(cli.main, argv)
    pciname.clear_caches()
    return found


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(CORRUPTIONS, min_size=1, max_size=3))
def test_property_every_cli_answer_is_right_whatever_happens_to_the_tables(pristine, tmp_path, ops):
    expected = {tuple(argv): cli_answer(argv) for argv in ANSWER_ARGVS}
    cache = fresh_cache(tmp_path / "prop-answers", pristine[1])
    for op in ops:
        corrupt(cache / "tables", op)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PCINAME_CACHE_DIR", str(cache))
        assert {tuple(argv): cli_answer(argv) for argv in ANSWER_ARGVS} == expected
        # The catalogs' tables are the only ones the cache holds.
        assert {p.suffix for p in (cache / "tables").iterdir() if not p.name.startswith(".")} <= {".marshal"}


def test_tables_of_pciids_files_gone_or_changed_are_pruned(tmp_path, monkeypatch):
    """Writing a catalog table removes those of files that are gone or not
    what they were (they can never be read again); the others stay."""
    from pciname.resolution import catalog
    from tests.conftest import PLUGIN_PCIIDS

    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "cache"))
    files = {}
    for name in ("gone", "changed", "kept", "new"):
        files[name] = tmp_path / f"{name}.ids"
        shutil.copy(PLUGIN_PCIIDS / "2019-08-14.ids", files[name])
    tables = {}
    for name in ("gone", "changed", "kept"):
        catalog.catalog_for(files[name])
        tables[name] = catalog._cache_file(catalog.file_identity(files[name]))
        assert tables[name].is_file()
    (tmp_path / "cache" / "tables" / "notes.txt").write_text("not a table\n")
    files["gone"].unlink()
    with files["changed"].open("a") as handle:
        handle.write("# one more comment\n")
    catalog.catalog_for(files["new"])
    left = {p.name for p in (tmp_path / "cache" / "tables").iterdir()}
    assert tables["gone"].name not in left and tables["changed"].name not in left
    assert {tables["kept"].name, "notes.txt", catalog._cache_file(catalog.file_identity(files["new"])).name} == left
    pciname.clear_caches()
    assert catalog.catalog_for(files["kept"]).nvidia_devices  # still read from its table
