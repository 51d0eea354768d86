"""docs/hami.md's table of which images keep HAMi-core's limits, per HAMi
release, is the verdict (pciname.hami.isolation) on each kind of C library,
row for row; so is its comparison with Cozystack's own image table (read from
cozystack's README per release by tools/hami_extract.py); its image-check
transcript is what the command prints."""

from __future__ import annotations

import shlex

from pciname.hami.isolation import CLibrary, Verdict, judge
from pciname.hami.releases import release, releases
from tests.cli_run import pciname
from tests.conftest import REPO
from tests.extract_util import Extracted
from tests.hami_util import NEW_GLIBC, compile_library, docker_save, tar


def _library(kind: str, machine: str, old: bool) -> CLibrary:
    if kind == "musl":
        return CLibrary("/lib/ld-musl.so.1", "musl", None, machine, {"dlsym": frozenset({""})})
    base = {"x86_64": "GLIBC_2.2.5", "aarch64": "GLIBC_2.17"}[machine]
    symbols = {"dlvsym": frozenset({base}), "dlsym": frozenset({base} if old else {base, "GLIBC_2.34"})}
    if old:
        symbols["_dl_sym"] = frozenset({"GLIBC_PRIVATE"})
    return CLibrary("/lib/libc.so.6", "glibc", None, machine, symbols)


COLUMNS = (
    ("glibc < 2.34", _library("glibc", "x86_64", True)),
    ("glibc >= 2.34, x86-64", _library("glibc", "x86_64", False)),
    ("glibc >= 2.34, arm64", _library("glibc", "aarch64", False)),
    ("musl", _library("musl", "x86_64", False)),
)


def _cell(verdict: Verdict) -> str:
    if verdict.holds is None:
        return "not judged"
    if verdict.holds:
        return "holds"
    if "defines no dlvsym" in verdict.reasons[0]:
        return "not bound (no dlvsym)"
    assert verdict.sees is not None
    if "(when " in verdict.sees:
        return "dies when " + verdict.sees.split("(when ")[1].split(" runs before")[0] + " runs first"
    return "dies"


def table() -> list[str]:
    rows = [
        "| HAMi | HAMi-core | " + " | ".join(name for name, _ in COLUMNS) + " |",
        "| --- | --- |" + " --- |" * len(COLUMNS),
    ]
    for tag in releases():
        facts = release(tag)
        cells = " | ".join(_cell(judge(facts, library)) for _, library in COLUMNS)
        rows.append(f"| {tag} | {facts.libvgpu_commit[:7]} | {cells} |")
    return rows


def _table_after(header: str) -> list[str]:
    """The docs' table whose first line starts with ``header``, line for line."""
    lines = (REPO / "docs" / "hami.md").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(header))
    end = next((i for i in range(start, len(lines)) if not lines[i].startswith("| ")), len(lines))
    return lines[start:end]


def test_the_docs_table_is_the_verdict_row_for_row():
    assert _table_after("| HAMi | HAMi-core |") == table()


def _row_library(glibc: str, machine: str) -> CLibrary:
    if glibc == "N/A":
        return _library("musl", machine, False)
    return _library("glibc", machine, tuple(map(int, glibc.split("."))) < (2, 34))


def cozystack_table() -> list[str]:
    """Per run of Cozystack releases shipping one HAMi (and one README table):
    each row of Cozystack's table beside the verdict on x86-64 and arm64."""
    runs: list[tuple[list[str], str, list[list[str]]]] = []
    for row in Extracted("hami", "hami_extract").shipped()["cozystack"]["releases"]:
        if row["hami"] is None:
            continue
        rows = row["image_table"]["rows"]
        if runs and (runs[-1][1], runs[-1][2]) == (row["hami"], rows):
            runs[-1][0].append(row["release"])
        else:
            runs.append(([row["release"]], row["hami"], rows))
    lines = [
        "| Cozystack | HAMi | image | glibc | Cozystack's README says | x86-64, from the code | arm64, from the code |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for tags, hami, rows in runs:
        facts = release(hami)
        for image, glibc, says in rows:
            cells = [_cell(judge(facts, _row_library(glibc, m))) for m in ("x86_64", "aarch64")]
            lines.append(f"| {tags[0]} to {tags[-1]} | {hami} | {image} | {glibc} | {says} | {' | '.join(cells)} |")
    return lines


def test_the_cozystack_comparison_is_cozystacks_table_beside_the_verdict():
    assert _table_after("| Cozystack | HAMi |") == cozystack_table()


def _transcripts(text):
    """Each fenced block of ``$ `` lines: (files its ``$ cat FILE`` lines write, [(command, expected lines)])."""
    for block in text.split("```\n$ ")[1:]:
        lines = ("$ " + block.split("```", 1)[0]).splitlines()
        files, commands = {}, []
        for line in lines:
            if line.startswith("$ cat "):
                files[line[6:]] = []
            elif line.startswith("$ "):
                commands.append((line[2:], []))
            elif commands:
                commands[-1][1].append(line)
            else:
                files[list(files)[-1]].append(line)
        yield {name: "\n".join(body) + "\n" for name, body in files.items()}, commands


def test_the_transcripts_are_what_the_commands_print(tmp_path):
    """docs/hami.md's transcripts, replayed; the image-check one on the image it describes
    (``audit --hami``'s needs a cluster: tests/cluster/test_audit_hami.py replays it)."""
    libc = compile_library(tmp_path, "libc.so.6", version="2.36", dl_sym=False, script=NEW_GLIBC)
    docker_save(tmp_path / "app.tar", [tar([("lib/x86_64-linux-gnu/libc.so.6", libc)])])
    text = (REPO / "docs" / "hami.md").read_text(encoding="utf-8")
    blocks = [(files, commands) for files, commands in _transcripts(text) if "audit --hami" not in commands[0][0]]
    assert sum(len(commands) for _, commands in blocks) == 3
    for files, commands in blocks:
        for name, body in files.items():
            (tmp_path / name).write_text(body)
        for command, expected in commands:
            argv = shlex.split(command.removesuffix("; echo $?"))
            ran = pciname(*argv[1:], cwd=tmp_path)
            assert [*ran.out.splitlines(), str(ran.code)] == expected
            assert ran.err == ""
