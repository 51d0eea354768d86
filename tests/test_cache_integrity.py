"""The on-disk table cache is never trusted: whatever happens to it (bit
flips, edits, truncation, swapped or linked files, FIFOs, a directory other
users can write), every answer is still right, nothing hangs, and nothing
outside the cache is ever written.

The packaged answer tables are hidden here, so that every answer comes from
the cache (tests/test_answers.py damages the packaged ones)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pciname

from .answers_util import without_packaged_answers

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


CORRUPTIONS = st.one_of(
    st.tuples(st.just("flip"), st.integers(min_value=0), st.integers(min_value=0, max_value=7)),
    st.tuples(st.just("truncate"), st.integers(min_value=0), st.just(0)),
    st.tuples(st.just("swap"), st.integers(min_value=0), st.integers(min_value=0)),
    st.tuples(st.just("link"), st.integers(min_value=0), st.integers(min_value=0)),
    st.tuples(st.just("fifo"), st.integers(min_value=0), st.just(0)),
    st.tuples(st.just("devzero"), st.integers(min_value=0), st.just(0)),
    st.tuples(st.just("empty"), st.integers(min_value=0), st.just(0)),
)


def corrupt(tables_dir: Path, op: tuple, pattern: str = "*.marshal") -> None:
    kind, a, b = op
    files = sorted(tables_dir.glob(pattern))
    target = files[a % len(files)]
    regular = [f for f in files if f.is_file() and not f.is_symlink()]
    # Files this operation opens itself: an earlier operation may have made
    # them a link or a FIFO, and opening a FIFO (to read or to write) blocks.
    opened = {"flip": [target], "truncate": [target], "empty": [target], "swap": [target, files[b % len(files)]]}
    if any(f not in regular for f in opened.get(kind, [])):
        return
    if kind == "flip":
        data = bytearray(target.read_bytes())
        if data:
            data[a % len(data)] ^= 1 << b
        target.write_bytes(bytes(data))
    elif kind == "truncate":
        data = target.read_bytes()
        target.write_bytes(data[: a % max(len(data), 1)])
    elif kind == "swap":
        other = files[b % len(files)]
        one, two = target.read_bytes(), other.read_bytes()
        target.write_bytes(two)
        other.write_bytes(one)
    elif kind == "link":
        target.unlink()
        target.symlink_to(files[b % len(files)] if files[b % len(files)] != target else "/etc/hostname")
    elif kind == "fifo":
        target.unlink()
        os.mkfifo(target)
    elif kind == "devzero":
        target.unlink()
        target.symlink_to("/dev/zero")
    else:
        target.write_bytes(b"")


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


# -- the answer tables of `pciname lookup`'s fast path (pciname.cli.fast) ------

ANSWER_ARGVS = [
    ["lookup", "10de:2236"],
    ["lookup", "10de:2236", "10de:1eb8", "-p", "gpu-operator@v23.9.2"],
    ["lookup", "10de:2330", "-p", "preview", "-o", "json"],
]


def cli_answer(argv: list[str]) -> tuple[object, str, str]:
    import contextlib
    import io

    from pciname import cli

    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(list(argv))
        except SystemExit as exit_:
            code = exit_.code
    pciname.clear_caches()
    return code, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def pristine_answers(tmp_path_factory):
    """The right CLI answers, and the answer tables a clean run leaves behind."""
    cache = tmp_path_factory.mktemp("pristine-answers")
    with pytest.MonkeyPatch.context() as mp:
        without_packaged_answers(mp)
        mp.setenv("PCINAME_CACHE_DIR", str(cache))
        expected = {tuple(argv): cli_answer(argv) for argv in ANSWER_ARGVS}
        from pciname.cli import fast

        assert all(fast.load(p) is not None for p in ("latest", "gpu-operator@v23.9.2", "preview"))
    tables = sorted((cache / "tables").glob("*.answers"))
    assert len(tables) == 3
    return expected, {p.name: p.read_bytes() for p in tables}


def answer_cache(root: Path, tables: dict[str, bytes]) -> Path:
    cache = fresh_cache(root, tables)
    return cache


def test_an_edited_answer_table_is_not_served_and_is_rebuilt(pristine_answers, tmp_path, monkeypatch):
    expected, tables = pristine_answers
    edited = {name: data.replace(b"GA102GL_A10", b"GA102GL_A11") for name, data in tables.items()}
    assert edited != tables
    cache = answer_cache(tmp_path / "cache", edited)
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    from pciname.cli import fast

    # The index is intact; the edited rows fail their digests when read.
    assert fast.load("latest", every_row=True) is None
    assert fast.lookup(["lookup", "10de:2236"]) is None
    assert {tuple(argv): cli_answer(argv) for argv in ANSWER_ARGVS} == expected
    assert fast.load("latest", every_row=True) is not None  # rebuilt by the full path
    # A table is rebuilt when a damaged row is asked for (its other rows are still served).
    for profile in ("gpu-operator@v23.9.2", "preview"):
        code, out, _ = cli_answer(["lookup", "10de:2236", "-p", profile])
        assert (code, out) == (0, "nvidia.com/GA102GL_A10\n")
    assert all(b"GA102GL_A11" not in p.read_bytes() for p in (cache / "tables").glob("*.answers"))


@pytest.mark.parametrize("how", ["world-writable", "other-owner-dir", "other-owner-file"])
def test_answer_tables_in_an_untrusted_place_are_not_read_or_written(how, pristine_answers, tmp_path, monkeypatch):
    expected, tables = pristine_answers
    cache = answer_cache(tmp_path / "cache", tables)
    if how == "world-writable":
        cache.chmod(0o777)
    elif how == "other-owner-dir":
        os.chown(cache / "tables", 65534, 65534)
    else:
        for path in (cache / "tables").iterdir():
            os.chown(path, 65534, 65534)
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    from pciname.cli import fast

    assert fast.load("latest") is None
    before = {p.name: p.read_bytes() for p in (cache / "tables").iterdir()}
    assert {tuple(argv): cli_answer(argv) for argv in ANSWER_ARGVS} == expected
    if how != "other-owner-file":  # the dir is untrusted: nothing written
        assert {p.name: p.read_bytes() for p in (cache / "tables").iterdir()} == before


def corrupt_answers(tables_dir: Path, op: tuple) -> None:
    corrupt(tables_dir, op, "*.answers")


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(ops=st.lists(CORRUPTIONS, min_size=1, max_size=3))
def test_property_every_cli_answer_is_right_whatever_happens_to_the_answer_tables(pristine_answers, tmp_path, ops):
    expected, tables = pristine_answers
    cache = answer_cache(tmp_path / "prop-answers", tables)
    for op in ops:
        corrupt_answers(cache / "tables", op)
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("PCINAME_CACHE_DIR", str(cache))
        assert {tuple(argv): cli_answer(argv) for argv in ANSWER_ARGVS} == expected


def test_tables_of_pciids_files_gone_or_changed_are_pruned(tmp_path, monkeypatch):
    """Writing a catalog table removes those of files that are gone or not
    what they were (they can never be read again); the others stay."""
    from pciname import catalog

    from .conftest import PLUGIN_PCIIDS

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
