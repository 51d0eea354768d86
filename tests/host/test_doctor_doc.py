"""docs/why-no-gpu.md's transcripts, replayed: each ``<!-- replay: NODE -->``
block's command is run through the real command line on the node
tests/host/doctor_nodes.py builds under that name, and must print exactly
the lines the page shows, ending with its exit code."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from pciname.cli import main
from tests.host.doctor_nodes import REPLAYED

PAGE = Path(__file__).resolve().parents[2] / "docs" / "why-no-gpu.md"
BLOCK = re.compile(r"<!-- replay: (\S+) -->\n```console\n\$ (.*?); echo exit \$\?\n(.*?)```", re.S)


def transcripts() -> list[tuple[str, str, str]]:
    found = BLOCK.findall(PAGE.read_text(encoding="utf-8"))
    assert len(found) == PAGE.read_text(encoding="utf-8").count("<!-- replay:")  # every block parses
    return found


def test_the_page_replays_every_node_it_names():
    named = {node for node, _, _ in transcripts()}
    assert named and named <= set(REPLAYED)


@pytest.mark.parametrize(("node", "command", "shown"), transcripts(), ids=lambda v: v.split()[0][:30])
def test_a_transcript_replays(capsys, monkeypatch, tmp_path, node, command, shown):
    REPLAYED[node](tmp_path / node)
    monkeypatch.chdir(tmp_path)
    argv = shlex.split(command)
    assert argv[0] == "pciname"
    code = main(argv[1:])
    out, err = capsys.readouterr()
    assert err == ""
    assert out + f"exit {code}\n" == shown
