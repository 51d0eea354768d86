"""The terminal transcripts of README.md and of every documentation page
(``docs/**/*.md``) are real: every ``$ pciname ...`` shown with its output
is run again and must print exactly that.

A transcript is a fenced block whose lines start with ``$ ``. Each command
is followed by what it prints: its stderr, then its stdout (as a terminal
shows them: pciname writes its warnings and errors before its answer),
unless it sends one to /dev/null. ``; echo $?`` after a command,
or a following ``$ echo $?``, prints its exit code. ``$ cat FILE`` followed
by text creates FILE with that text for the commands after it. A line
``...`` in the output stands for any number of lines.

Not replayed, and listed in :data:`NOT_REPLAYED`: commands that need
something the test does not have (a node's sysfs, a cluster), and the
one-line overview whose lines carry ``# comments`` instead of output.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.cli_run import only, pciname
from tests.conftest import REPO

README = REPO / "README.md"
#: Pages whose transcripts run on a node or an image another test builds,
#: and that test replays them.
OWN_REPLAYER = {
    "docs/hami.md": "tests/hami/test_hami_docs.py (builds the images)",
    "docs/why-no-gpu.md": "tests/host/test_doctor_doc.py (builds the nodes)",
}
#: Every page whose transcripts are replayed here: the README and the docs site.
PAGES = [
    page for page in [README, *sorted((REPO / "docs").rglob("*.md"))] if str(page.relative_to(REPO)) not in OWN_REPLAYER
]

#: Substrings of commands that are shown, not replayed, and why.
NOT_REPLAYED = {
    "--sysfs-root /tmp/node": "needs a node's sysfs tree (tests/host/test_host_sysfs.py builds that very node)",
    "--from-scan /host": "needs a node's sysfs tree",
    "kubectl ": "needs a cluster",
    "--sysfs-root /tmp/dra-node": "needs a node's sysfs tree (tests/host/test_scan_dra.py builds it and replays these)",
    "audit --dra": "needs a cluster (tests/cluster/test_audit_dra.py replays it on its fake API server)",
}


@dataclass
class Command:
    line: int
    text: str
    expected: list[str] = field(default_factory=list)


@dataclass
class Transcript:
    line: int
    commands: list[Command]
    files: dict[str, str]


def transcripts(text: str) -> list[Transcript]:
    """Every fenced block of a page that holds a ``$ `` line."""
    found: list[Transcript] = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        fence = re.match(r"^(\s*)```", lines[i])
        if not fence:
            i += 1
            continue
        indent = len(fence.group(1))
        start = i + 1
        i += 1
        while i < len(lines) and not lines[i].strip().startswith("```"):
            i += 1
        body = [line[indent:] for line in lines[start:i]]
        i += 1
        if any(line.startswith("$ ") for line in body):
            found.append(_parse(start + 1, body))
    return found


def _parse(first_line: int, body: list[str]) -> Transcript:
    commands: list[Command] = []
    files: dict[str, str] = {}
    cat_target: str | None = None
    cat_lines: list[str] = []
    for offset, line in enumerate(body):
        if line.startswith("$ "):
            if cat_target is not None:
                files[cat_target] = "\n".join(cat_lines) + "\n"
                cat_target = None
            cmd = line[2:]
            if cmd.startswith("cat "):
                cat_target, cat_lines = cmd[4:].strip(), []
            elif cmd == "echo $?":
                commands[-1].text += "; echo $?"
            else:
                commands.append(Command(first_line + offset, cmd))
        elif cat_target is not None:
            cat_lines.append(line)
        elif commands:
            commands[-1].expected.append(line)
    if cat_target is not None:
        files[cat_target] = "\n".join(cat_lines) + "\n"
    return Transcript(first_line, commands, files)


def _replayed(command: Command) -> bool:
    if any(marker in command.text for marker in NOT_REPLAYED):
        return False
    # The overview: one command a line, a comment instead of output.
    return not (re.search(r"\s#\s", command.text) and not command.expected)


def run(command: Command, cwd: Path, env: dict[str, str]) -> list[str]:
    """What the command prints, as the README shows it."""
    text = command.text
    echo_rc = text.endswith("; echo $?")
    if echo_rc:
        text = text[: -len("; echo $?")]
    keep_out = keep_err = True
    if text.endswith(" 2>/dev/null"):
        text, keep_err = text[: -len(" 2>/dev/null")], False
    if text.endswith(" >/dev/null"):
        text, keep_out = text[: -len(" >/dev/null")], False
    argv = shlex.split(text)
    assert argv[0] == "pciname", f"line {command.line}: not a pciname command: {command.text}"
    done = pciname(*argv[1:], cwd=cwd, env=only(env))
    shown = (done.stderr if keep_err else "") + (done.stdout if keep_out else "")
    out = shown.split("\n")
    if out and out[-1] == "":
        out.pop()
    if echo_rc:
        out.append(str(done.returncode))
    return out


def matches(expected: list[str], got: list[str]) -> bool:
    """``expected`` equals ``got``, a ``...`` line matching any lines."""
    if not expected:
        return not got
    if expected[0] == "...":
        return any(matches(expected[1:], got[k:]) for k in range(len(got) + 1))
    return bool(got) and got[0] == expected[0] and matches(expected[1:], got[1:])


ALL = [(page.relative_to(REPO), t) for page in PAGES for t in transcripts(page.read_text(encoding="utf-8"))]
CASES = [(page, t, c) for page, t in ALL for c in t.commands if _replayed(c)]


def test_the_readme_has_transcripts_to_replay():
    # Every feeds flag with output lives in these: a parser that finds none
    # would make the test below pass on nothing.
    assert len(CASES) >= 15, [c.text for _, _, c in CASES]
    shown = " ".join(c.text for _, _, c in CASES)
    for flag in (
        "--format cozystack",
        "--variant vgpu",
        "--cozystack-defaults",
        "--replace-defaults",
        "--fragment",
        "--format patch",
        "--instance-type",
        "--profile gpu-operator@v23.9.2",
    ):
        assert flag in shown, flag


def test_matches_understands_ellipsis():
    assert matches(["a", "...", "d"], ["a", "b", "c", "d"])
    assert matches(["a", "...", "d"], ["a", "d"])
    assert not matches(["a", "...", "d"], ["a", "b", "c"])
    assert not matches(["a", "b"], ["a", "b", "c"])


def test_every_docs_page_with_a_transcript_is_replayed():
    for name, replayer in OWN_REPLAYER.items():
        assert (REPO / name).is_file() and (REPO / replayer.split()[0]).is_file(), name
    pages = {str(page) for page, _, _ in CASES}
    for name in ("docs/passthrough.md", "docs/kata.md", "docs/dra.md", "docs/vgpu.md", "README.md"):
        assert name in pages, name


@pytest.mark.parametrize(("page", "transcript", "command"), CASES, ids=[f"{p}:{c.line}" for p, _, c in CASES])
def test_readme_transcript(page, transcript, command, tmp_path, session_cache):
    for name, content in transcript.files.items():
        (tmp_path / name).write_text(content, encoding="utf-8")
    env = {
        "PATH": "/usr/bin:/bin",
        "PCINAME_CACHE_DIR": str(session_cache),
        "PYTHONPATH": str(REPO),
        "HOME": str(tmp_path),
    }
    got = run(command, tmp_path, env)
    assert matches(command.expected, got), (
        f"{page}:{command.line}: $ {command.text}\n--- the page shows\n"
        + "\n".join(command.expected)
        + "\n--- it prints\n"
        + "\n".join(got)
    )


# -- the Debian tools the tests need: one registry ------------------------------------------------


def test_readme_and_ci_install_exactly_the_registrys_debian_packages():
    from tests.conftest import DEBIAN_TOOLS

    readme = re.findall(r"^apt-get install ([^\n`]+)$", (REPO / "README.md").read_text(), re.M)
    assert [line.split() for line in readme] == [list(DEBIAN_TOOLS)]
    ci = (REPO / ".ci" / "run").read_text()
    assert sorted(re.findall(r"missing\+=\(([^)]+)\)", ci)) == sorted(DEBIAN_TOOLS)


def test_ci_runs_the_readmes_own_commands_in_a_fresh_virtual_environment():
    """.ci/run is a newcomer: it makes the README's venv, then runs the
    README's install-and-test command, line for line."""
    blocks = re.findall(r"^```\n(.*?)^```", (REPO / "README.md").read_text(), re.M | re.S)
    venv = "python3 -m venv .venv && . .venv/bin/activate"
    test = next(b for b in blocks if "pytest" in b and venv in b).splitlines()
    ci = (REPO / ".ci" / "run").read_text()
    assert test[0] == venv
    assert "python3 -m venv --clear .venv\n" in ci and "\n. .venv/bin/activate\n" in ci
    install, _, run = test[1].partition(" && ")
    assert f"python -m {install}" in ci or f"python -m pip install -q -e {install.split()[-1]}" in ci
    assert re.search(rf"^{re.escape(run)} -rs", ci, re.M)


def test_a_test_skips_only_through_the_registry():
    """No skipif, skip or importorskip of its own: a skip names its package."""
    offenders = []
    for path in sorted((REPO / "tests").rglob("*.py")):
        if path in (REPO / "tests" / "conftest.py", Path(__file__)):
            continue
        text = path.read_text()
        for word in ("skipif(", "pytest.skip(", "importorskip("):
            if word in text:
                offenders.append(f"{path.relative_to(REPO)}: {word}")
    assert offenders == []


def test_the_readme_is_read_in_five_minutes():
    """At most 300 lines, none over 200 characters: the rest is in docs/."""
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 300, len(lines)
    assert [n for n, line in enumerate(lines, 1) if len(line) > 200] == []


def test_the_readmes_path_table_links_pages_that_exist():
    text = README.read_text(encoding="utf-8")
    table = text.split("## Which path do I have?", 1)[1].split("\n## ", 1)[0]
    links = re.findall(r"\]\((docs/[\w/.-]+\.md)\)", table)
    assert len(links) >= 6 and [link for link in links if not (REPO / link).is_file()] == []
    nav = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    assert [link for link in links if link.removeprefix("docs/") not in nav] == []
