"""The small lies and rough edges of issue 27, each through the real
``pciname`` program: what ``lookup -o name`` prints for a name kubelet
refuses, ``--vgpu`` never dropping a DEVICE, ``reverse`` saying why it
found nothing, ``check`` saying what the grammar expected, and one
program name in every error under kubectl."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys

import pytest
import yaml

from pciname import cli
from pciname.cli import fast
from tests.cli_run import call
from tests.conftest import LATEST, REPO

#: A device whose name kubelet refuses (it ends with ``_``): never advertised.
REFUSED = "10de:24fa"
REFUSED_NAME = "nvidia.com/GA104_RTX_A4500_EMBEDDED_GPU_"


def run(*args: str, argv0: str = "pciname", **kwargs) -> subprocess.CompletedProcess:
    """The installed program as ``argv0`` (``pciname`` or ``kubectl-pciname``) in a subprocess."""
    code = f"import sys; from pciname.cli import {'kubectl_main' if argv0.startswith('kubectl') else 'main'} as m; sys.exit(m())"
    return subprocess.run(
        [sys.executable, "-c", code, *args],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=dict(os.environ),
        timeout=120,
        **kwargs,
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    lines = proc.stderr.splitlines()
    assert proc.returncode == 2 and len(lines) == 1 and "Traceback" not in proc.stderr, proc
    assert all(fragment in lines[0] for fragment in fragments), lines


def test_lookup_name_prints_an_empty_line_for_a_name_kubelet_refuses():
    proc = run("lookup", "10de:2236", REFUSED, "10de:2330")
    assert proc.returncode == 1
    assert proc.stdout == "nvidia.com/GA102GL_A10\n\nnvidia.com/GH100_H100_SXM5_80GB\n"
    assert proc.stderr.startswith(f"pciname: {REFUSED}: invalid-resource-name: kubelet refuses {REFUSED_NAME}")
    (record,) = json.loads(run("lookup", REFUSED, "-o", "json").stdout)
    assert (record["resource_name"], record["advertised"]) == (REFUSED_NAME, False)
    assert REFUSED_NAME in run("lookup", REFUSED, "-o", "table").stdout


def test_lookup_help_says_what_name_prints_for_a_device_not_advertised():
    text = " ".join(run("lookup", "--help").stdout.split())
    assert "an empty line for a device that is not advertised (also when kubelet refuses its name" in text


@pytest.mark.parametrize("copies", [1, 40])  # 40 x 2 devices: the fast path's bulk printer
def test_the_fast_path_prints_the_same_empty_line(copies):
    argv = ["lookup", *[REFUSED, "10de:2236"] * copies]
    got = call(fast.lookup, argv)
    assert got == call(cli.full, argv)
    assert got[0] == 1 and got[1] == "\nnvidia.com/GA102GL_A10\n" * copies


@pytest.mark.parametrize(
    "command",
    [
        ("permitted-host-devices", "10de:2236", "10de:2237", "--vgpu", "A10-24Q"),
        ("permitted-host-devices", "10de:2237", "10de:2236", "--vgpu", "A10-24Q", "--format", "cozystack"),
        ("vm-gpus", "10de:2236", "10de:2237", "--vgpu", "A10-24Q=1"),
        ("node-pool", "gpus", "10de:2236", "10de:2237", "--vgpu", "A10-24Q=2"),
    ],
)
def test_vgpu_names_every_device_it_does_not_use(command):
    proc = run(*command)
    assert_one_line_error(proc, "10de:2237: none of the --vgpu types is for this GPU (A10-24Q is for 10de:2236)")
    assert proc.stdout == ""


def test_vgpu_uses_every_device_each_type_is_for():
    proc = run("permitted-host-devices", "10de:2236", "10de:1eb8", "--vgpu", "A10-24Q", "--vgpu", "T4-8Q")
    assert proc.returncode == 0, proc
    assert "NVIDIA A10-24Q" in proc.stdout and "GRID T4-8Q" in proc.stdout
    proc = run("permitted-host-devices", "10de:2236", "10de:1eb8", "--vgpu", "A10-24Q")
    assert_one_line_error(proc, "10de:1eb8: none of the --vgpu types is for this GPU")


def test_reverse_says_no_device_has_the_name_and_the_closest_names():
    proc = run("reverse", "nvidia.com/GA102GL_A1")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        f"pciname: no device of {LATEST} has the resource name nvidia.com/GA102GL_A1; "
        "the closest: nvidia.com/GA102GL_A10, nvidia.com/GA102GL_A10M, nvidia.com/GA102GL_A10G\n"
    )
    # letter case ignored; the profile's own names
    proc = run("reverse", "GH100H100_SXM5_80GB", "-p", "gpu-operator@v26.3.1", "-o", "json")
    assert proc.returncode == 1 and json.loads(proc.stdout) == {
        "resource_name": "nvidia.com/GH100H100_SXM5_80GB",
        "devices": [],
    }
    assert proc.stderr.startswith("pciname: no device of gpu-operator@v26.3.1 has the resource name ")
    assert "; the closest: nvidia.com/GH100_H100_SXM5_80GB, " in proc.stderr
    proc = run("reverse", "nvidia.com/" + "z" * 40)
    assert proc.returncode == 1 and proc.stderr.endswith("; none of its names is close\n")


def test_reverse_ranks_the_model_token_above_a_shared_prefix():
    # nvidia.com/A10 means the A10 (GA102GL_A10), not GA107 (which shares "A10" as a prefix)
    proc = run("reverse", "nvidia.com/A10")
    assert (proc.returncode, proc.stdout) == (1, "")
    assert proc.stderr == (
        f"pciname: no device of {LATEST} has the resource name nvidia.com/A10; "
        "the closest: nvidia.com/GA102GL_A10, nvidia.com/GA107, nvidia.com/GA106\n"
    )
    proc = run("reverse", "H100")
    assert proc.stderr.split("; the closest: ")[1].startswith("nvidia.com/GH100_H100_")


def test_lint_and_reverse_rank_alike():
    from pciname.lint.hints import Candidates, model_tokens, rank

    names = ["nvidia.com/GA107", "nvidia.com/GA106", "nvidia.com/GA104", "nvidia.com/GA102GL_A10"]
    assert Candidates(names).closest("nvidia.com/a10", None) == [
        "nvidia.com/GA102GL_A10",
        "nvidia.com/GA107",
        "nvidia.com/GA106",
    ]
    assert model_tokens("GH100_H100_SXM5_80GB") == ("H100_SXM5_80GB", "H100_SXM5", "H100")
    assert model_tokens("GA107") == ()
    # names of one part: exactly difflib's ranking
    import difflib

    keys = ["GA107", "GA106", "GA104", "TU104", "A100", "NV2A_XGPU"]
    assert rank("A10", keys) == difflib.get_close_matches("A10", keys, n=3, cutoff=0.6)
    assert rank("GPU", keys) == difflib.get_close_matches("GPU", keys, n=3, cutoff=0.6)


def test_reverse_of_a_name_it_has_says_nothing_more():
    proc = run("reverse", "GA102GL_A10")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "10de:2236\n", "")


@pytest.mark.parametrize(
    ("args", "begins"),
    [
        (("lookup", "--bogus"), "pciname: error: unrecognized arguments: --bogus"),  # argparse's, top level
        (("lookup", "10de:2236", "-o", "bogus"), "pciname lookup: error: argument -o/--output: invalid choice"),
        (("snapshots", "list", "-o", "x"), "pciname snapshots list: error: argument -o/--output: invalid choice"),
        (("lookup", "10de:zzzz"), "pciname: error: malformed device '10de:zzzz'"),  # pciname's own
        (("describe", "10de:2236", "--pciids", "/nonexistent"), "pciname: error: "),
    ],
)
@pytest.mark.parametrize("argv0", ["pciname", "kubectl-pciname"])
def test_one_program_name_in_every_error_also_under_kubectl(argv0, args, begins):
    proc = run(*args, argv0=argv0)
    assert_one_line_error(proc)
    assert proc.stderr.startswith(begins), proc.stderr


def test_under_kubectl_usage_says_kubectl_pciname_and_warnings_say_pciname():
    assert run("lookup", "--help", argv0="kubectl-pciname").stdout.startswith("usage: kubectl pciname lookup ")
    proc = run("lookup", REFUSED, "--warnings=all", argv0="kubectl-pciname")  # "=": the full path, not the fast one
    assert proc.returncode == 1 and proc.stderr.startswith(f"pciname: {REFUSED}: invalid-resource-name: ")
    proc = run("reverse", "NOPE", argv0="kubectl-pciname")
    assert proc.returncode == 1 and proc.stderr.startswith("pciname: no device of ")


def test_no_cli_module_spells_the_program_name_of_its_lines():
    """Every stderr line starts with render.PROGRAM, defined once."""
    spelt = [
        path.name
        for path in sorted((REPO / "pciname" / "cli").glob("*.py"))
        if any(quote + "pciname:" in path.read_text(encoding="utf-8") for quote in ('"', "'"))
    ]
    assert spelt == []


#: Malformed pci.ids files of several kinds, and what ``check`` says of each
#: line (pciutils' message, then what the grammar expected at the column).
MALFORMED = {
    "device-id.ids": (
        b"10de NVIDIA\n\t22z6 A10\n\t2236\n\t2237  \n",
        [
            "2:4: Parse error: expected a 4-digit hex device id",
            "3:6: Parse error: expected a space or tab after the id",
            "4:7: Parse error: expected a name after the id",
        ],
    ),
    "nesting.ids": (
        b"\t2236 orphan\n10de NVIDIA\n\t2236 A10\n\t\t\t10de 0001 deep\nS 10de\n\t\t0001 under nothing\n",
        [
            "1:1: Parse error: expected a vendor or class line before this one "
            "(a tab-indented line needs a block to belong to)",
            "4:1: Parse error: expected at most two tabs before an entry (only a comment may be nested deeper)",
            "6:1: Parse error: expected a device or subclass line above this one (two tabs nest a line under one)",
        ],
    ),
    "subsystems.ids": (
        b"10de NVIDIA\n\t2236 A10\n\t\t10de 0x01 sub\n\t\t1o de name\nS 10de x\n",
        [
            "3:9: Parse error: expected a 4-digit hex subsystem device id",
            "4:4: Parse error: expected a 4-digit hex subsystem vendor id",
            "5:7: Parse error: expected the end of the line (an S line holds a vendor id and nothing more)",
        ],
    ),
    "classes.ids": (
        b"C 0z bad\nC 03 Display\n\t0z bad\n\t00 VGA\n\t\t0 pi\nzz top\n10de\n10de NVIDIA\n10de again\n",
        [
            "1:4: Parse error: expected a 2-digit hex class id",
            "3:3: Parse error: expected a 2-digit hex subclass id",
            "5:4: Parse error: expected a 2-digit hex prog-if id",
            "6:1: Parse error: expected a top-level line: a 4-digit hex vendor id and a name, C and a class id and "
            "a name, S and a vendor id, a capital letter and a space (a block pciutils ignores), or a comment",
            "7:5: Parse error: expected a space or tab after the id",
            "9:1: Duplicate entry",
        ],
    ),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_check_says_what_the_grammar_expected(name, tmp_path):
    data, lines = MALFORMED[name]
    path = tmp_path / name
    path.write_bytes(data)
    proc = run("check", str(path))
    assert (proc.returncode, proc.stderr) == (1, "")
    *issues, summary = proc.stdout.splitlines()
    assert issues == [f"{path}:{line}" for line in lines]
    assert summary.startswith(f"{path}: {len(lines)} malformed lines, ")


def test_the_fast_loader_reports_the_same_issues_without_words():
    """Both readers' issues stay equal (``expected`` is the grammar's own
    words, not compared), and lspci's first issue is the same."""
    from pciname.pciids import grammar, loader

    for data, _lines in MALFORMED.values():
        ours, fast_loader = grammar.parse_bytes(data).issues, loader.load_bytes(data).issues
        assert ours == fast_loader and all(i.expected for i in ours if i.message == "Parse error")
        assert [i.expected for i in fast_loader] == [""] * len(fast_loader)


def test_the_readme_overview_shows_cozystack_values_that_are_not_defaults():
    """The overview's ``--format cozystack`` line (not replayed: a comment
    stands for its output) prints entries, not the empty block a GPU that
    is already a Cozystack default gives."""
    readme = (REPO / "docs" / "passthrough.md").read_text(encoding="utf-8")
    lines = [line for line in readme.splitlines() if line.startswith("$ pciname ") and " # " in line]
    (overview,) = [line for line in lines if "--format cozystack" in line]
    proc = run(*shlex.split(overview.removeprefix("$ pciname ").partition(" # ")[0]))
    assert (proc.returncode, proc.stderr) == (0, "")
    values = yaml.safe_load(proc.stdout)["gpu"]["permittedHostDevices"]
    assert values["pciHostDevices"] == [
        {"pciVendorSelector": "10DE:2237", "resourceName": "nvidia.com/GA102GL_A10G", "externalResourceProvider": True}
    ]
    # what the old example printed: the A10 is one of Cozystack's defaults
    proc = run("permitted-host-devices", "10de:2236", "--format", "cozystack")
    assert yaml.safe_load(proc.stdout)["gpu"]["permittedHostDevices"] == {} and "already-a-default" in proc.stderr


@pytest.mark.parametrize(
    ("before", "after"),
    [
        (["lookup", "10de:2236", "10de:2330", "-p", "latest"], ["lookup", "10de:2236", "-p", "latest", "10de:2330"]),
        (["vm-gpus", "10de:2236", "10de:2330", "-o", "json"], ["vm-gpus", "10de:2236", "-o", "json", "10de:2330"]),
        (
            ["node-pool", "gpu", "10de:2236=2", "10de:2330", "-o", "json"],
            ["node-pool", "gpu", "-o", "json", "10de:2236=2", "10de:2330"],
        ),
        (
            ["kata-pod", "10de:2330", "10de:2236", "--kind", "deployment"],
            ["kata-pod", "10de:2330", "--kind", "deployment", "10de:2236"],
        ),
        (
            ["permitted-host-devices", "10de:2236", "10de:2330", "-o", "json"],
            ["permitted-host-devices", "10de:2236", "-o", "json", "10de:2330"],
        ),
    ],
)
def test_devices_may_follow_options(before: list[str], after: list[str]) -> None:
    from tests.cli_run import pciname

    first, second = pciname(*before), pciname(*after)
    assert first.returncode == 0, first.stderr
    assert (second.returncode, second.stdout, second.stderr) == (first.returncode, first.stdout, first.stderr)


def test_an_unknown_option_among_devices_is_still_one_usage_line() -> None:
    from tests.cli_run import pciname

    ran = pciname("lookup", "10de:2236", "--bogus", "10de:2330")
    assert (ran.returncode, ran.stdout) == (2, "")
    assert ran.stderr.startswith("pciname: error: unrecognized arguments: --bogus") and ran.stderr.count("\n") == 1
