"""Terminal escapes never reach the terminal (issue 16, item 15): control
characters from linted YAML, node and CR names, messages and pci.ids names
print as ``\\xNN`` in text output (``lint``'s lines, every ``-o table``,
``-o name``, ``scan``, ``audit``, error lines); JSON and YAML are left as
their encoders write them."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from pciname.base.render import printable, table
from pciname.cli import main
from tests.conftest import REPO
from tests.sysfs_tree import SysfsTree

ESC_OSC = "\x1b]0;owned\x07"  # retitles the terminal
ERASE = "\x1b[2K\r"  # erases the line so far and goes back to its start
C1_CSI = "\x9b2K"
RAW = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f]")  # anything but tab and the line ends we print


def raw_controls(text: str) -> list[str]:
    return [m for line in text.split("\n") for m in RAW.findall(line)]


def test_printable_escapes_c0_del_and_c1_and_keeps_tabs_only_where_asked():
    assert printable("a\x1b[2Kb\x7fc\x9bd\x00e\nf\rg") == "a\\x1b[2Kb\\x7fc\\x9bd\\x00e\\x0af\\x0dg"
    assert printable("a\tb") == "a\\x09b"
    assert printable("a\tb", tab=True) == "a\tb"
    assert printable("GA102GL [A10] × ü 日本") == "GA102GL [A10] × ü 日本"  # other text as it is


def test_every_table_cell_is_escaped(capsys):
    table([("x\x1b[31m", None, "a\tb")], ("H\x9b", "B", "C"))
    out = capsys.readouterr().out
    assert raw_controls(out) == [] and "\t" not in out
    assert "x\\x1b[31m" in out and "H\\x9b" in out and "a\\x09b" in out


def test_lint_text_and_table_escape_what_the_yaml_holds(tmp_path, capsys):
    hidden = tmp_path / "hide.yaml"
    # Double-quoted YAML can carry any control character: a name whose text
    # erases its own finding's line, and a VM asking for it.
    hidden.write_text(
        "pciHostDevices:\n"
        '- pciVendorSelector: "10DE:2236"\n'
        '  resourceName: "nvidia.com/GA102GL_A10_TYPO\\e[2K\\rall good"\n'
        "  externalResourceProvider: true\n"
        '"x\\e]0;title\\a": 1\n'
        '"x\\e]0;title\\a": 2\n'
    )
    assert main(["lint", str(hidden)]) == 1
    out = capsys.readouterr().out
    assert raw_controls(out) == []
    assert "GA102GL_A10_TYPO\\x1b[2K\\x0dall good" in out and "x\\x1b]0;title\\x07" in out
    assert main(["lint", str(hidden), "-o", "table"]) == 1
    out = capsys.readouterr().out
    assert raw_controls(out) == [] and "\\x1b[2K" in out
    assert main(["lint", str(hidden), "-o", "json"]) == 1
    data = json.loads(capsys.readouterr().out)  # JSON as json writes it: the value itself
    assert any("\x1b[2K\r" in str(f["value"]) for f in data)


def test_lint_error_lines_escape_the_file_name(tmp_path, capsys):
    missing = tmp_path / f"no{ESC_OSC}such.yaml"
    assert main(["lint", str(missing)]) == 2
    err = capsys.readouterr().err
    assert raw_controls(err) == [] and "no\\x1b]0;owned\\x07such.yaml" in err


@pytest.fixture
def escaping_pciids(tmp_path):
    path = tmp_path / "esc.ids"
    path.write_text(f"# Version: 2030.01.01\n10de  NVIDIA{C1_CSI} Corporation\n\t2236  GA102GL {ESC_OSC}[A10{ERASE}]\n")
    return path


def test_lookup_table_and_name_escape_pciids_names(escaping_pciids, capsys):
    assert main(["lookup", "--pciids", str(escaping_pciids), "10de:2236", "-o", "table"]) in (0, 1)
    out = capsys.readouterr().out
    assert raw_controls(out) == [] and "\\x1b]0;owned\\x07" in out
    main(["lookup", "--pciids", str(escaping_pciids), "10de:2236", "-o", "name", "--warnings", "all"])
    captured = capsys.readouterr()
    assert raw_controls(captured.out + captured.err) == []


@pytest.mark.parametrize("many", [False, True])
def test_the_fast_path_escapes_names_as_the_full_path_does(many, monkeypatch, capsys):
    """The fast path prints through the one lookup printer: names and
    warnings with control characters (a pci.ids name may hold them) print
    escaped, byte for byte as the full path's printer prints the same
    records; a lookup of many ids leaves such names to that printer too."""
    from pciname.cli import fast
    from pciname.cli.core import print_records
    from pciname.resolution import answers

    real = answers.string
    monkeypatch.setattr(
        answers, "string", lambda pool, at: real(pool, at) + (ERASE if pool == answers.STRINGS else C1_CSI)
    )
    monkeypatch.setattr(answers, "utf8_strings", lambda ats: [memoryview(ESC_OSC.encode())] * len(list(ats)))
    devices = ["10de:2236", "10de:05be"] * (40 if many else 1)
    assert fast.lookup(["lookup", *devices, "--warnings", "auto"]) == 1  # 10de:05be is not advertised
    got = capsys.readouterr()
    table = answers.table("latest")
    print_records([answers.record(table, d.partition(":")[2]) for d in devices], "name", list_warnings=not many)
    assert (got.out, got.err) == tuple(capsys.readouterr())
    assert raw_controls(got.out + got.err) == [] and "\\x1b[2K\\x0d" in got.out
    assert ("\\x9b2K" in got.err) is not many and ("80 warnings for 80 devices" in got.err) is many


def test_scan_table_escapes_what_sysfs_holds(tmp_path, capsys):
    tree = SysfsTree(tmp_path)
    tree.add_function("0000:3b:00.0", driver=f"nvidia{ESC_OSC}")
    tree.add_function("0000:3c:00.0")
    tree.add_mdev("a1b2c3d4-0000-0000-0000-000000000001", "0000:3c:00.0", type_name=f"GRID T4-1Q{ERASE}\n")
    main(["scan", "--sysfs-root", str(tmp_path)])
    out = capsys.readouterr().out
    assert raw_controls(out) == []
    assert "nvidia\\x1b]0;owned\\x07" in out and "\\x1b[2K\\x0d" in out


def test_audit_text_escapes_cluster_names(capsys):
    from pciname.cli.cluster import _audit_table

    result = {
        "kubevirt": f"kubevirt/kv{ESC_OSC}",
        "management": {"manager": f"hco{C1_CSI}"},
        "profile": "v1.4.0",
        "profile_source": "--profile",
        "inference": {"names": []},
        "permitted": [
            {
                "kind": "pci",
                "selector": "10DE:2236",
                "resource_name": f"nvidia.com/X{ERASE}",
                "expected": "nvidia.com/GA102GL_A10",
                "nodes": {f"node{ESC_OSC}": 1},
            }
        ],
        "advertised": [],
        "findings": [{"code": "wrong-resource-name", "path": "x", "message": f"API said {ERASE}fine"}],
    }
    _audit_table(result)
    out = capsys.readouterr().out
    assert raw_controls(out) == []
    assert "kv\\x1b]0;owned\\x07 (managed by hco\\x9b2K)" in out and "API said \\x1b[2K\\x0dfine" in out


def test_describe_and_check_text_escape_pciids_lines(escaping_pciids, tmp_path, capsys):
    assert main(["describe", "10de:2236", "--pciids", str(escaping_pciids)]) == 0
    out = capsys.readouterr().out
    assert raw_controls(out) == [] and "Device: GA102GL \\x1b]0;owned\\x07[A10\\x1b[2K" in out
    bad = tmp_path / "bad.ids"
    bad.write_text(f"# Version: 1\n10de  NVIDIA\n\tnot{ESC_OSC} a line\n")
    assert main(["check", str(bad)]) == 1
    assert raw_controls(capsys.readouterr().out) == []


def test_fetch_failure_lines_escape_what_a_mirror_says(tmp_path, capsys, monkeypatch):
    """A mirror's error text (a hostile one's) is a line of ours: escaped."""
    from pciname.resolution import snapshots

    def hostile(*args, **kwargs):
        snap = snapshots.known_snapshots()[0]
        yield snapshots.FetchResult(snap, "http://127.0.0.1:9/x", None, "failed", f"HTTP 500: {ERASE}all fine")

    monkeypatch.setattr(snapshots, "iter_fetch", hostile)
    assert main(["snapshots", "fetch", "--base-url", "http://127.0.0.1:9/"]) == 1
    err = capsys.readouterr().err
    assert raw_controls(err) == [] and "HTTP 500: \\x1b[2K\\x0dall fine" in err


# -- undecodable bytes in names, under every locale (issue 36, item 12) ----------------------

#: The locales: Python gives stdout ``surrogateescape`` under C, POSIX and
#: C.UTF-8 (and in UTF-8 mode), ``strict`` under a UTF-8 locale; None: unset.
LOCALES = ["C", "POSIX", "C.UTF-8", "en_US.UTF-8", None]


def _scan_in(locale, root, output):
    """``pciname scan`` in a process of its own (its stream setup is the
    point) under ``locale``, with no encoding chosen by the environment."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LC_", "LANG", "PYTHONIOENCODING", "PYTHONUTF8"))}
    if locale is not None:
        env["LC_ALL"] = locale
    return subprocess.run(
        [sys.executable, "-m", "pciname", "scan", "--sysfs-root", str(root), "-o", output],
        capture_output=True,
        env=env,
        cwd=REPO,
        timeout=120,
    )


@pytest.fixture(scope="module")
def undecodable_node(tmp_path_factory):
    """A node whose second function's name ends in the byte 0x9B (an 8-bit
    CSI), which no UTF-8 decoder takes, on the host driver (so a
    diagnosis names it too)."""
    tree = SysfsTree(tmp_path_factory.mktemp("locale") / "node")
    tree.add_function("0000:3b:00.0")
    tree.add_function("0000:3b:00.\udc9b", driver="nvidia")  # written as the raw byte
    assert b"0000:3b:00.\x9b" in os.listdir(os.fsencode(tree.sys / "bus" / "pci" / "devices"))
    return tree.root


@pytest.mark.parametrize("locale", LOCALES)
@pytest.mark.parametrize("output", ["table", "json"])
def test_scan_output_is_valid_utf8_with_undecodable_bytes_escaped(undecodable_node, locale, output):
    proc = _scan_in(locale, undecodable_node, output)
    assert proc.returncode == 1 and b"Traceback" not in proc.stderr, proc.stderr
    assert b"\x9b" not in proc.stdout + proc.stderr  # never the raw byte
    out = proc.stdout.decode("utf-8")  # strictly: valid UTF-8
    proc.stderr.decode("utf-8")
    if output == "json":
        addresses = {f["address"] for f in json.loads(out)["functions"]}
        assert "0000:3b:00.\udc9b" in addresses  # the JSON escape of the byte's surrogate
    else:
        assert "0000:3b:00.\\udc9b" in out
