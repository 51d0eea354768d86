"""The CLI contract, through the installed ``pciname`` entry point in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from tests.cli_run import pciname as run, pciname_process
from tests.conftest import LATEST, REPO, trimmed_install


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for fragment in fragments:
        assert fragment in lines[0]


def test_lookup_default_is_latest():
    proc = run("lookup", "10de:2236")
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "nvidia.com/GA102GL_A10\n", "")
    # What a cluster on the newest release shows, not the preview's GH100_H20_NVL16.
    proc = run("lookup", "10de:230c", "-o", "json")
    (record,) = json.loads(proc.stdout)
    assert (proc.returncode, record["resource_name"], record["profile"]) == (0, "nvidia.com/230c", LATEST)
    assert [w["code"] for w in record["warnings"]] == ["unnamed-device"]
    table = run("lookup", "10de:2236", "-o", "table").stdout.splitlines()
    assert table[0].split()[-1] == "PROFILE" and table[1].split()[-1] == LATEST
    assert "default latest" in run("lookup", "--help").stdout


def test_lookup_with_operator_profile():
    proc = run("lookup", "10de:2330", "--profile", "gpu-operator@v23.9.2")
    assert (proc.returncode, proc.stdout) == (0, "nvidia.com/GH100H100_SXM5_80GB\n")


def test_lookup_names_in_input_order_with_all_spellings():
    proc = run("lookup", "10DE:2330", "0x10de:0x2236", "10de:2330")
    assert proc.stdout.splitlines() == [
        "nvidia.com/GH100_H100_SXM5_80GB",
        "nvidia.com/GA102GL_A10",
        "nvidia.com/GH100_H100_SXM5_80GB",
    ]


def test_lookup_json_contract():
    proc = run("lookup", "10de:2236", "8086:1234", "-o", "json")
    assert proc.returncode == 1  # one device is not advertised
    data = json.loads(proc.stdout)
    assert isinstance(data, list) and len(data) == 2
    first = data[0]
    for key in (
        "device",
        "profile",
        "name",
        "resource_name",
        "device_name",
        "pci_ids_version",
        "env_var",
        "socket_path",
        "warnings",
    ):
        assert key in first
    assert first["device"] == "10de:2236" and first["resource_name"] == "nvidia.com/GA102GL_A10"
    assert data[1]["resource_name"] is None
    assert data[1]["warnings"][0]["code"] == "not-advertised" and data[1]["warnings"][0]["message"]


def test_lookup_yaml_and_table():
    data = yaml.safe_load(run("lookup", "10de:2236", "-o", "yaml").stdout)
    assert data[0]["resource_name"] == "nvidia.com/GA102GL_A10"
    table = run("lookup", "10de:2236", "-o", "table").stdout.splitlines()
    assert table[0].split()[:2] == ["DEVICE", "RESOURCE"]
    assert table[1].split()[:2] == ["10de:2236", "nvidia.com/GA102GL_A10"]


def test_lookup_stdin_bulk_every_nvidia_id(vectors):
    ids = sorted(vectors["kubevirt-gpu-device-plugin"]["v1.2.1"])
    proc = run(
        "lookup", "--stdin", "--profile", "kubevirt-gpu-device-plugin@v1.2.1", stdin="\n".join(f"10de:{i}" for i in ids)
    )
    expected = vectors["kubevirt-gpu-device-plugin"]["v1.2.1"]
    records = json.loads(run("lookup", *ids, "--profile", "kubevirt-gpu-device-plugin@v1.2.1", "-o", "json").stdout)
    assert [r["resource_name"] for r in records] == [f"nvidia.com/{expected[i] or i}" for i in ids]
    # -o name: an empty line for each name kubelet refuses (or whose socket path is too long)
    refused = [{w["code"] for w in r["warnings"]} for r in records if not r["advertised"]]
    assert len(refused) == 30 and all(codes & {"invalid-resource-name", "socket-path-too-long"} for codes in refused)
    assert proc.stdout.splitlines() == [r["resource_name"] if r["advertised"] else "" for r in records]


def test_lookup_not_advertised_exit_1():
    proc = run("lookup", "10de:ffff", "--profile", "kubevirt-gpu-device-plugin@v1.0.0")
    assert proc.returncode == 1
    assert proc.stdout == "\n"
    assert "not-advertised" in proc.stderr and "Traceback" not in proc.stderr


def test_lookup_custom_file_and_algorithm(tmp_path):
    path = tmp_path / "pci.ids"
    path.write_text("# 2236 in a comment\n10de  NVIDIA\n\t2236  GA102GL [A10]\n")
    assert (
        run("lookup", "10de:2236", "--pciids", str(path), "--algorithm", "whole-file-2019").stdout
        == "nvidia.com/in_a_comment\n"
    )
    assert run("lookup", "10de:2236", "--pciids", str(path)).stdout == "nvidia.com/GA102GL_A10\n"


@pytest.mark.parametrize(
    "args, fragments",
    [
        (("lookup", "10de:zzzz"), ("malformed device '10de:zzzz'",)),
        (("lookup", "10de:2236", "--profile", "nope"), ("unknown profile 'nope'",)),
        (("lookup",), ("no devices given",)),
        (("lookup", "10de:2236", "--profile", "latest", "--pciids", "x"), ("cannot be combined",)),
        (("lookup", "10de:2236", "--pciids", "/nonexistent/pci.ids"), ("/nonexistent/pci.ids", "cannot read")),
        (("lookup", "10de:2236", "--algorithm", "bogus"), ("invalid choice",)),
        (("diff", "--from", "v1.2.2", "--to", "v7"), ("unknown profile 'v7'",)),
        (("frobnicate",), ("invalid choice",)),
    ],
)
def test_bad_input_is_one_line_exit_2(args, fragments):
    assert_one_line_error(run(*args), *fragments)


def test_missing_snapshot_is_one_line_exit_2(tmp_path):
    env = {"PCINAME_CACHE_DIR": str(tmp_path / "cache"), **trimmed_install(tmp_path / "install", ["2025.07.11.ids"])}
    # Another copy of the package on the path: a process of its own.
    proc = pciname_process("lookup", "10de:2236", "--profile", "v1.2.2", env=env)
    assert_one_line_error(proc, "2023.05.23", "e97ddbf60c71", "pciname snapshots fetch")


def test_reverse_and_diff():
    assert run("reverse", "nvidia.com/GA102GL_A10").stdout == "10de:2236\n"
    assert run("reverse", "nvidia.com/NOPE").returncode == 1
    proc = run("diff", "--from", "gpu-operator@v23.9.2", "--to", "gpu-operator@v26.3.1", "-o", "json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert data["from"] == "gpu-operator@v23.9.2"
    change = next(c for c in data["changes"] if c["device"] == "10de:2330")
    assert change == {
        "device": "10de:2330",
        "change": "renamed",
        "old": "nvidia.com/GH100H100_SXM5_80GB",
        "new": "nvidia.com/GH100_H100_SXM5_80GB",
    }
    table = run("diff", "--from", "gpu-operator@v23.9.2", "--to", "gpu-operator@v26.3.1").stdout
    assert "10de:2330  renamed  nvidia.com/GH100H100_SXM5_80GB" in table


def test_profiles_command():
    data = json.loads(run("profiles", "-o", "json").stdout)
    names = [p["name"] for p in data]
    assert names[0] == "preview"
    assert "gpu-operator@v26.7.0" in names and "kubevirt-gpu-device-plugin@v1.0.0" in names
    table = run("profiles").stdout
    assert f"{LATEST} (latest)" in table


def test_version_and_help_everywhere():
    from pciname import __version__

    assert run("--version").stdout.strip() == f"pciname {__version__}"
    for command in ("lookup", "reverse", "diff", "profiles", "snapshots", "check", "describe"):
        proc = run(command, "--help")
        assert proc.returncode == 0 and "usage: pciname" in proc.stdout, command
    for action in ("list", "import", "fetch"):
        assert run("snapshots", action, "--help").returncode == 0


def test_server_cannot_be_combined_with_a_local_file():
    assert_one_line_error(
        run("lookup", "10de:2236", "--server", "127.0.0.1:1", "--pciids", "x"), "--server cannot be combined"
    )


def test_lookup_start_up_path_stays_light():
    """`pciname lookup` is measured against `python -c pass` (bench/core.py):
    it must not load grpc, kubernetes, yaml, pyparsing or dataclasses."""
    code = (
        "import sys\n"
        "from pciname.cli import main\n"
        "assert main(['lookup', '10de:2236']) == 0\n"
        "heavy = {'grpc', 'kubernetes', 'yaml', 'pyparsing', 'dataclasses', 'hashlib'}\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in heavy), file=sys.stderr)\n"
    )
    run("lookup", "10de:2236")  # warm the on-disk catalog cache first
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert proc.stdout == "nvidia.com/GA102GL_A10\n"
    assert proc.stderr.strip() == "[]"


@pytest.mark.parametrize(
    "args, fragments",
    [
        (("lookup", "10de:2236", "--pciids", ""), ("--pciids needs a file name",)),
        (("reverse", "GA102GL_A10", "--pciids", ""), ("--pciids needs a file name",)),
        (("lookup", "10de:2236", "--server", ""), ("argument --server: empty address",)),
        (("lookup", "10de:2236", "--server", "127.0.0.1:99999"), ("argument --server", "a port from 1 to 65535")),
        (("lookup", "10de:2236", "--server", "127.0.0.1:0"), ("argument --server", "a port from 1 to 65535")),
        (("lookup", "10de:2236", "--server", "127.0.0.1:1", "--pciids", ""), ("--server cannot be combined",)),
        (("lookup", "10de:2236", "--tls-ca", "ca.pem"), ("the --tls options go with --server",)),
        (
            ("lookup", "10de:2236", "--server", "127.0.0.1:1", "--tls-cert", "c.pem"),
            ("--tls-cert and --tls-key go together",),
        ),
        (
            ("lookup", "10de:2236", "--server", "127.0.0.1:1", "--tls-ca", "/nonexistent/ca.pem"),
            ("/nonexistent/ca.pem cannot be used: cannot read it",),
        ),
        (("health", "--server", "localhost:65536"), ("argument --server", "a port from 1 to 65535")),
        (("health", "--timeout", "inf"), ("argument --timeout: not a finite number",)),
    ],
)
def test_empty_and_out_of_range_values_are_one_line_exit_2(args, fragments):
    """They used to be ignored (--pciids '', --server ''), wrapped around (port
    99999 is another port) or crash."""
    proc = run(*args)
    assert_one_line_error(proc, *fragments)
    assert proc.stdout == ""


INVALID_UTF8_PCIIDS = (
    b"# Version: 2026\xff\n"
    b"10de  NVIDIA \xffCorporation\n"
    b"\t2236  GA102GL [A10\xff]\n"
    b"8086  Intel \xfe\n"
    b"\t1234  Some \xc3Intel device\n"
)


@pytest.mark.parametrize("encoding", ["utf-8:strict", "utf-8"])
def test_lookup_output_is_valid_utf8_whatever_the_pciids_bytes(tmp_path, encoding):
    """Undecodable bytes in a pci.ids file are U+FFFD in every output (as in
    `pciname describe -o json`): JSON stays valid UTF-8, a strict stdout
    never raises."""
    ids = tmp_path / "bad.ids"
    ids.write_bytes(INVALID_UTF8_PCIIDS)
    env = {**os.environ, "PYTHONIOENCODING": encoding}
    outputs = {}
    for fmt in ("json", "yaml", "table", "name"):
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "pciname",
                "lookup",
                "--pciids",
                str(ids),
                "10de:2236",
                "8086:1234",
                "10de:ffff",
                "-o",
                fmt,
            ],
            capture_output=True,
            env=env,
            cwd=REPO,
            timeout=120,
        )
        assert proc.returncode == 1, proc  # 8086:1234 is not advertised
        assert b"Traceback" not in proc.stderr, proc.stderr.decode("utf-8", "replace")
        outputs[fmt] = proc.stdout.decode("utf-8")  # strictly: valid UTF-8
        proc.stderr.decode("utf-8")
    a10, intel, unnamed = json.loads(outputs["json"])
    assert (a10["name"], a10["device_name"], a10["vendor_name"]) == (
        "GA102GL_A10",
        "GA102GL [A10\ufffd]",
        "NVIDIA \ufffdCorporation",
    )
    assert a10["pci_ids_version"] == "2026\ufffd"
    assert (intel["vendor_name"], intel["device_name"]) == ("Intel \ufffd", "Some \ufffdIntel device")
    assert "pci.ids 2026\ufffd" in unnamed["warnings"][0]["message"]
    assert yaml.safe_load(outputs["yaml"]) == [a10, intel, unnamed]
    assert "GA102GL [A10\ufffd]" in outputs["table"]


# -- limits: bounded input, one-line errors ----------------------------------------------------


def _fifo(tmp_path):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    return fifo


@pytest.mark.parametrize(
    "argv",
    [
        ["check", "{path}"],
        ["check", "data/pci.ids", "{path}"],
        ["describe", "--pciids", "{path}", "10de:2236"],
        ["lookup", "--pciids", "{path}", "10de:2236"],
    ],
)
@pytest.mark.parametrize("kind", ["dev-zero", "fifo", "directory"])
def test_pciids_input_that_is_not_a_regular_file_is_refused_at_once(tmp_path, argv, kind):
    """/dev/zero used to end in a MemoryError traceback and a FIFO would
    hang: both are refused without being read (the run's timeout is 120 s,
    a FIFO nobody writes to would block forever)."""
    path = {"dev-zero": "/dev/zero", "fifo": _fifo(tmp_path) if kind == "fifo" else None, "directory": tmp_path}[kind]
    proc = run(*[a.format(path=path) for a in argv], env={"PCINAME_CACHE_DIR": str(tmp_path / "cache")})
    assert_one_line_error(proc, f"{path}: cannot read pci.ids file: ")
    if kind != "directory":
        assert "not a regular file" in proc.stderr


def test_check_stdin_is_read_with_the_same_bound():
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run(
            [sys.executable, "-m", "pciname", "check", "-"],
            stdin=zero,
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )
    assert_one_line_error(proc, "<stdin>: cannot read pci.ids file: more than the 67108864 bytes allowed")


def test_check_stdin_limit_in_process(capsys, monkeypatch):
    import io

    from pciname.base import files
    from pciname.cli import main

    monkeypatch.setattr(files, "MAX_PCIIDS_BYTES", 16)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"10de NV\n\t2236 A\n")))  # 16 bytes: fine
    assert main(["check", "-"]) == 0
    assert capsys.readouterr().out.startswith("<stdin>: ok, ")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"10de NV\n\t2236 AB\n")))  # 17 bytes
    assert main(["check", "-"]) == 2
    assert (
        capsys.readouterr().err == "pciname: error: <stdin>: cannot read pci.ids file: more than the 16 bytes allowed\n"
    )


def test_lookup_device_limit():
    from pciname.base.files import MAX_LOOKUP_DEVICES

    proc = run("lookup", "--stdin", stdin="2236 " * MAX_LOOKUP_DEVICES + "2236")
    assert_one_line_error(proc, f"{MAX_LOOKUP_DEVICES + 1} devices given; a lookup takes at most {MAX_LOOKUP_DEVICES}")
    proc = run("lookup", "10de:2236", "--stdin", stdin="2236\n" * (MAX_LOOKUP_DEVICES - 1))
    assert proc.returncode == 0 and proc.stdout == "nvidia.com/GA102GL_A10\n" * MAX_LOOKUP_DEVICES


def test_lookup_stdin_byte_limit():
    from pciname.base.files import MAX_LOOKUP_STDIN_BYTES

    proc = run("lookup", "--stdin", stdin=" " * MAX_LOOKUP_STDIN_BYTES + "2236")
    assert_one_line_error(proc, f"--stdin: more than {MAX_LOOKUP_STDIN_BYTES} bytes")
    with open("/dev/zero", "rb") as zero:
        proc = subprocess.run(
            [sys.executable, "-m", "pciname", "lookup", "--stdin"],
            stdin=zero,
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=120,
        )
    assert_one_line_error(proc, "--stdin: more than")


def test_lookup_stdin_that_is_not_utf8_is_a_malformed_device():
    proc = subprocess.run(
        [sys.executable, "-m", "pciname", "lookup", "--stdin"],
        input=b"10de:2236 \xff\xfe",
        capture_output=True,
        cwd=REPO,
        timeout=120,
    )
    assert proc.returncode == 2 and b"Traceback" not in proc.stderr and len(proc.stderr.splitlines()) == 1


def test_lookup_repeated_devices_resolve_once_and_print_each_time(monkeypatch, capsys):
    """The bulk path resolves each distinct device once; every output format
    still shows one complete, independent entry per input device."""
    import io

    from pciname.cli import main
    from pciname.resolution.resolver import Resolver

    asked: list[list[str]] = []
    original = Resolver.records

    def counting(self, devices, profile="latest"):
        devices = list(devices)
        asked.append(devices)
        return original(self, devices, profile)

    monkeypatch.setattr(Resolver, "records", counting)
    stdin = "10de:2236 10de:230c 10de:2236\n" * 500
    for fmt in ("json", "yaml"):
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(stdin.encode())))
        assert main(["lookup", "--stdin", "-o", fmt]) == 0
        out = capsys.readouterr().out
        assert "&id" not in out and "*id" not in out  # no YAML aliases
        loaded = json.loads(out) if fmt == "json" else yaml.safe_load(out)
        assert len(loaded) == 1500
        assert [r["device"] for r in loaded[:3]] == ["10de:2236", "10de:230c", "10de:2236"]
        assert loaded[0] == loaded[2] == loaded[-1] and loaded[1]["warnings"][0]["code"] == "unnamed-device"
    assert asked == [["10de:2236", "10de:230c"]] * 2


def test_lookup_sums_up_the_warnings_of_a_large_input_in_one_line(vectors):
    """More than LIST_WARNINGS_UP_TO devices: one stderr line counting the
    warnings by code; --warnings all lists each; the exit code and stdout
    do not change."""
    from pciname.cli.fast import LIST_WARNINGS_UP_TO

    ids = "\n".join(f"10de:{i}" for i in sorted(vectors["kubevirt-gpu-device-plugin"]["v1.2.1"]))
    summed = run("lookup", "--stdin", "-p", "kubevirt-gpu-device-plugin@v1.2.1", stdin=ids)
    listed = run("lookup", "--stdin", "-p", "kubevirt-gpu-device-plugin@v1.2.1", "--warnings", "all", stdin=ids)
    assert (summed.returncode, summed.stdout) == (listed.returncode, listed.stdout)
    lines = listed.stderr.splitlines()
    assert len(lines) > LIST_WARNINGS_UP_TO and all(line.startswith("pciname: 10de:") for line in lines)
    codes: dict[str, int] = {}
    for line in lines:
        code = line.split(": ")[2]
        codes[code] = codes.get(code, 0) + 1
    by_code = ", ".join(f"{c} {n}" for c, n in sorted(codes.items(), key=lambda kv: (-kv[1], kv[0])))
    n = len(ids.splitlines())
    assert summed.stderr == f"pciname: {len(lines)} warnings for {n} devices ({by_code}); --warnings all lists them\n"


def test_lookup_lists_the_warnings_of_a_small_input():
    from pciname.cli.fast import LIST_WARNINGS_UP_TO

    devices = ["10de:ffff"] * LIST_WARNINGS_UP_TO
    proc = run("lookup", *devices, "-p", "kubevirt-gpu-device-plugin@v1.0.0")
    assert proc.returncode == 1 and proc.stdout == "\n" * LIST_WARNINGS_UP_TO
    assert len(proc.stderr.splitlines()) == LIST_WARNINGS_UP_TO
    assert all(": not-advertised: " in line for line in proc.stderr.splitlines())
    proc = run("lookup", *devices, "10de:ffff", "-p", "kubevirt-gpu-device-plugin@v1.0.0")
    assert proc.returncode == 1
    assert (
        proc.stderr == f"pciname: {LIST_WARNINGS_UP_TO + 1} warnings for {LIST_WARNINGS_UP_TO + 1} devices "
        "(not-advertised 21); --warnings all lists them\n"
    )
