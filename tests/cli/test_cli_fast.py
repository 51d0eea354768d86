"""The fast path of ``pciname lookup`` (pciname.cli.fast) answers exactly as
the full argparse path does, or not at all: byte-identical stdout, stderr and
exit code over generated command lines, valid and invalid, from the
packaged answers (tests/resolution/test_answers.py checks those against the resolver)."""

from __future__ import annotations

import io
import os
import subprocess
import sys

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from pciname import cli
from pciname.base import render
from pciname.cli import fast
from pciname.resolution import answers
from tests.cli_run import call
from tests.conftest import REPO

PROFILES = [
    "latest",
    "gpu-operator@v23.9.2",
    "preview",
    "kubevirt-gpu-device-plugin@v1.0.0",
    "v1.2.2",
    "LATEST",
    "sandbox-device-plugin@v0.0.5",
    "gpu-operator@v26.7.0+kata",
]
DEVICES = [
    "10de:2236",
    "10DE:2236",
    "0x10de:0x2236",
    "10de:1eb8",
    "10de:2330",
    "10de:002a",
    "10de:24fa",
    "10de:ffff",
    "8086:1234",
    "2236",
    " 10de:2236",
    "10de:22366",
    "zz",
    "",
    "10de:",
    ":2236",
    "0X10DE:0X1EB8",
]
FLAGS = [
    "-p",
    "--profile",
    "-o",
    "--output",
    "name",
    "json",
    "yaml",
    "table",
    "nonsense-profile",
    "",
    "--help",
    "-h",
    "--pciids",
    "--algorithm",
    "--alias",
    "--alias=",
    "--nvswitch-alias",
    "--prof",
    "--",
    "-x",
    "--server",
    "--profile=preview",
    "--output=json",
    "lookup",
    "reverse",
    "--warnings",
    "all",
    "auto",
]
VOCABULARY = PROFILES + DEVICES + FLAGS


@pytest.fixture(autouse=True)
def empty_cache(tmp_path, monkeypatch):
    """A cache dir of this test's own: the fast path reads none."""
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "cache"))
    answers.clear()


@pytest.mark.parametrize(
    "argv",
    [
        ["lookup", "10de:2236"],
        ["lookup", "10de:2236", "-p", "gpu-operator@v23.9.2"],
        ["lookup", "-p", "preview", "10de:2330", "10DE:2236"],
        ["lookup", "10de:2236", "-o", "json"],
        ["lookup", "0x10de:0x1eb8", "10de:2236", "--profile", "v1.2.2", "--output", "json"],
        ["lookup", "10de:002a", "10de:2236", "-p", "kubevirt-gpu-device-plugin@v1.0.0"],
    ],
)
def test_plain_lookups_are_answered_by_the_fast_path_exactly(argv):
    expected = call(cli.full, argv)
    got = call(fast.lookup, argv)
    assert got[0] is not None, "the fast path did not answer"
    assert got == expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tokens=st.lists(st.sampled_from(VOCABULARY), min_size=0, max_size=6))
@example(tokens=["10de:2236", "-p", "latest", "10de:1eb8"])
@example(tokens=["10de:2236", "-p", "-o", "json"])
@example(tokens=["10de:2236", "-p", ""])
@example(tokens=["10de:2236", "-o", "name", "-o", "json"])
@example(tokens=["8086:1234"])
@example(tokens=["10de:2236", "-p", "nonsense-profile"])
def test_property_fast_path_and_argparse_agree(tokens):
    argv = ["lookup", *tokens]
    expected = call(cli.full, argv)
    got = call(fast.lookup, argv)
    if got[0] is None:
        assert got[1:] == ("", ""), "the fast path printed, then gave up"
    else:
        assert got == expected
    assert call(cli.main, argv) == expected


@pytest.mark.parametrize(
    "argv",
    [
        ["lookup", "10de:2236", "-p", "LATEST"],
        ["lookup", "10de:2236", "-p", "GPU-Operator@23.9.2"],
        ["lookup", "10de:9999"],
        ["lookup", "1002:2236"],
        ["lookup", "10de:2236", "--pciids", "x"],
    ],
)
def test_what_the_package_does_not_answer_takes_the_full_path(argv, tmp_path):
    """Spellings the package does not list, ids outside its tables, other
    vendors, other options: the full path answers, and keeps no answer
    table in the cache (only the catalogs' tables)."""
    assert call(fast.lookup, argv) == (None, "", "")
    call(cli.main, argv)
    assert {p.suffix for p in (tmp_path / "cache").rglob("*") if p.is_file()} <= {".marshal"}


def test_no_table_is_written_for_a_custom_file(tmp_path, monkeypatch):
    from tests.conftest import DEBIAN_SID

    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "cache"))
    code, out, _ = call(cli.full, ["lookup", "10de:2236", "--pciids", str(DEBIAN_SID)])
    assert (code, out) == (0, "nvidia.com/GA102GL_A10\n")
    assert not list((tmp_path / "cache").rglob("*.answers"))


FORBIDDEN = {
    "argparse",
    "typing",
    "pathlib",
    "cachetools",
    "grpc",
    "kubernetes",
    "yaml",
    "pyparsing",
    "dataclasses",
    "hashlib",
    "threading",
    "tempfile",
    "shutil",
    "locale",
    "gettext",
    "random",
    "lzma",
    "tarfile",
    "zlib",
    "enum",
    "re",
    "json",
    "__future__",  # no module of the fast path imports annotations from it
}
#: The only pciname modules a fast-path lookup loads.
FAST_MODULES = {
    "pciname",
    "pciname._version",
    "pciname.resolution",  # a docstring only
    "pciname.resolution.answers",
    "pciname.cli",
    "pciname.cli.fast",
    "pciname.naming",
    "pciname.pciids",
    "pciname.base",  # a docstring only
    "pciname.base.render",  # (pciname.base.files, the limits: only for --stdin or more than fast.MANY ids)
    "pciname.pciids.ids",  # the one id parser (pciname.errors only when it raises)
}


@pytest.mark.parametrize(
    "argv",
    [
        ["lookup", "10de:2236"],
        ["lookup", "10de:2236", "-p", "gpu-operator@v23.9.2"],
        ["lookup", "10de:2236", "-o", "json"],
        ["lookup", "10de:2236", "-p", "kubevirt-gpu-device-plugin@v1.1.1"],
    ],
)
def test_the_fast_path_imports_almost_nothing(argv, tmp_path):
    """A plain lookup in a fresh process loads none of argparse, typing,
    pathlib, cachetools (nor what they bring), and no pciname module but
    the fast path's, before the answer is printed, on an empty cache for a
    packaged profile spelling (nothing is built or written)."""
    env = {**os.environ, "PCINAME_CACHE_DIR": str(tmp_path / "cache"), "PYTHONPATH": str(REPO)}
    full = subprocess.run(
        [sys.executable, "-c", f"from pciname import cli; raise SystemExit(cli.full({argv!r}))"],
        capture_output=True,
        text=True,
        env={**env, "PCINAME_CACHE_DIR": str(tmp_path / "full")},
        cwd=REPO,
        timeout=120,
    )
    code = (
        "import sys\n"
        "before = set(sys.modules)\n"
        "from pciname.cli import main\n"
        f"code = main({argv!r})\n"
        "new = set(sys.modules) - before\n"
        "loaded = {m.split('.')[0] for m in new}\n"
        "ours = {m for m in new if m.split('.')[0] == 'pciname'}\n"
        f"print(code, sorted(loaded & {FORBIDDEN!r}), sorted(ours - {FAST_MODULES!r}), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=REPO, timeout=120)
    assert proc.stdout == full.stdout
    assert proc.stderr == full.stderr + f"{full.returncode} [] []\n"
    assert not (tmp_path / "cache").exists(), "nothing is built or written for a packaged profile"


def run_with_stdin(function, argv: list[str], data: bytes, monkeypatch) -> tuple[object, str, str]:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    return call(function, argv)


STDIN_TOKENS = DEVICES + ["10de:2236"] * 3 + ["10de:1eb8", "10de:2330", "2330"]


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    tokens=st.lists(st.sampled_from(VOCABULARY), min_size=0, max_size=4),
    lines=st.lists(st.sampled_from(STDIN_TOKENS), min_size=0, max_size=40),
    separator=st.sampled_from(["\n", " ", "\t", "\r\n"]),
)
@example(tokens=[], lines=["10de:2236"] * 25, separator="\n")
@example(tokens=["--warnings", "all"], lines=["10de:1eb8", "10de:2236"] * 15, separator=" ")
@example(tokens=["-o", "json"], lines=["10de:2330"] * 21, separator="\n")
@example(tokens=[], lines=[], separator="\n")
def test_property_stdin_lookups_agree(tokens, lines, separator, monkeypatch):
    argv = ["lookup", "--stdin", *tokens]
    data = separator.join(lines).encode()
    expected = run_with_stdin(cli.full, argv, data, monkeypatch)
    got = run_with_stdin(fast.lookup, argv, data, monkeypatch)
    if got[0] is None:
        assert got[1:] == ("", ""), "the fast path printed, then gave up"
        # What the fast path read of stdin, the full path still gets.
        assert sys.stdin.buffer.read() == data
    else:
        assert got == expected
    assert run_with_stdin(cli.main, argv, data, monkeypatch) == expected


@pytest.mark.parametrize("profile", ["latest", "kubevirt-gpu-device-plugin@v1.0.0", "preview"])
def test_a_large_stdin_lookup_is_answered_by_the_fast_path(profile, monkeypatch):
    every = "\n".join(f"10de:{i}" for i in answers.table(profile).devices()).encode()
    for extra in ([], ["--warnings", "all"], ["-o", "name"]):
        extra = [*extra, "-p", profile]
        argv = ["lookup", "--stdin", *extra]
        expected = run_with_stdin(cli.full, argv, every, monkeypatch)
        got = run_with_stdin(fast.lookup, argv, every, monkeypatch)
        assert got[0] is not None and got == expected


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.text() | st.integers() | st.floats(),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.tuples(inner, inner)
        | st.dictionaries(st.text(max_size=5) | st.integers(-3, 3) | st.none(), inner, max_size=3)
    ),
    max_leaves=12,
)


@given(data=JSON_VALUES)
@example(data=[{"message": 'é \u2028 \x00 " \\ \n \t \ud800', "warnings": [], "x": {}}])
@example(data={"n": 1.5, "big": 10**30, "nan": float("nan")})
def test_the_one_json_writer_is_jsons(data):
    """What the fast path prints and every surface writes
    (render.json_text, dump_json): json's bytes, for anything json writes."""
    import json

    assert render.json_text(data) == json.dumps(data, indent=2, ensure_ascii=False)
    out = io.StringIO()
    render.dump_json(data, out)
    assert out.getvalue() == json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def test_the_one_json_writer_leaves_what_it_does_not_write_to_json():
    """A cycle, a value json cannot write: json's own errors."""
    import json

    loop: list[object] = []
    loop.append(loop)
    for bad, error in ((loop, ValueError), ({"x": object()}, TypeError), ([{1.5: 2}], None)):
        if error is None:
            assert render.json_text(bad) == json.dumps(bad, indent=2, ensure_ascii=False)
            continue
        with pytest.raises(error) as got:
            render.json_text(bad)
        with pytest.raises(error) as want:
            json.dumps(bad, indent=2, ensure_ascii=False)
        assert str(got.value) == str(want.value)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    spellings=st.lists(st.sampled_from(["{}", "10de:{}", "0x10de:0x{}", "10DE:{}", "0X{}"]), min_size=65, max_size=300),
    extra=st.sampled_from([[], ["--warnings", "all"], ["-p", "preview"], ["-p", "v1.2.2", "--warnings", "auto"]]),
    odd=st.sampled_from([None, "1002:2236", "10de:zzzz", "10de:abcd", "10de:2236x"]),
    data=st.data(),
)
def test_property_large_stdin_lookups_of_any_spelling_agree(spellings, extra, odd, data, monkeypatch):
    """More than 64 devices, spelt every way, with a device outside the
    table or not a device at times."""
    ids = answers.table(extra[1] if extra[:1] == ["-p"] else "latest").devices()
    picked = data.draw(st.lists(st.sampled_from(ids), min_size=len(spellings), max_size=len(spellings)))
    tokens = [form.format(i.upper() if form.isupper() else i) for form, i in zip(spellings, picked)]
    if odd is not None:
        tokens.insert(len(tokens) // 2, odd)
    argv = ["lookup", "--stdin", *extra]
    payload = "\n".join(tokens).encode()
    expected = run_with_stdin(cli.full, argv, payload, monkeypatch)
    got = run_with_stdin(fast.lookup, argv, payload, monkeypatch)
    if got[0] is None:
        assert got[1:] == ("", "") and odd is not None
    else:
        assert got == expected
