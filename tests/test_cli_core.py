"""The CLI contract, through the installed ``pciname`` entry point in a subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
import yaml

from .conftest import REPO, trimmed_install


def run(*args: str, stdin: str | None = None, env: dict | None = None) -> subprocess.CompletedProcess:
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "pciname", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=full_env,
        cwd=REPO,
        timeout=120,
    )


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
    assert (proc.returncode, record["resource_name"], record["profile"]) == (0, "nvidia.com/230c", "kubevirt-gpu-device-plugin@v1.6.0")
    assert [w["code"] for w in record["warnings"]] == ["unnamed-device"]
    table = run("lookup", "10de:2236", "-o", "table").stdout.splitlines()
    assert table[0].split()[-1] == "PROFILE" and table[1].split()[-1] == "kubevirt-gpu-device-plugin@v1.6.0"
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
    for key in ("device", "profile", "name", "resource_name", "device_name", "pci_ids_version", "env_var", "socket_path", "warnings"):
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
    proc = run("lookup", "--stdin", "--profile", "kubevirt-gpu-device-plugin@v1.2.1", stdin="\n".join(f"10de:{i}" for i in ids))
    expected = vectors["kubevirt-gpu-device-plugin"]["v1.2.1"]
    assert proc.stdout.splitlines() == [f"nvidia.com/{expected[i] or i}" for i in ids]


def test_lookup_not_advertised_exit_1():
    proc = run("lookup", "10de:ffff", "--profile", "kubevirt-gpu-device-plugin@v1.0.0")
    assert proc.returncode == 1
    assert proc.stdout == "\n"
    assert "not-advertised" in proc.stderr and "Traceback" not in proc.stderr


def test_lookup_custom_file_and_algorithm(tmp_path):
    path = tmp_path / "pci.ids"
    path.write_text("# 2236 in a comment\n10de  NVIDIA\n\t2236  GA102GL [A10]\n")
    assert run("lookup", "10de:2236", "--pciids", str(path), "--algorithm", "whole-file-2019").stdout == "nvidia.com/in_a_comment\n"
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
    proc = run("lookup", "10de:2236", "--profile", "v1.2.2", env=env)
    assert_one_line_error(proc, "2023.05.23", "e97ddbf60c71", "pciname snapshots fetch")


def test_reverse_and_diff():
    assert run("reverse", "nvidia.com/GA102GL_A10").stdout == "10de:2236\n"
    assert run("reverse", "nvidia.com/NOPE").returncode == 1
    proc = run("diff", "--from", "gpu-operator@v23.9.2", "--to", "gpu-operator@v26.3.1", "-o", "json")
    assert proc.returncode == 0
    data = json.loads(proc.stdout)
    assert data["from"] == "gpu-operator@v23.9.2"
    change = next(c for c in data["changes"] if c["device"] == "10de:2330")
    assert change == {"device": "10de:2330", "change": "renamed", "old": "nvidia.com/GH100H100_SXM5_80GB", "new": "nvidia.com/GH100_H100_SXM5_80GB"}
    table = run("diff", "--from", "gpu-operator@v23.9.2", "--to", "gpu-operator@v26.3.1").stdout
    assert "10de:2330  renamed  nvidia.com/GH100H100_SXM5_80GB" in table


def test_profiles_command():
    data = json.loads(run("profiles", "-o", "json").stdout)
    names = [p["name"] for p in data]
    assert names[0] == "preview"
    assert "gpu-operator@v26.7.0" in names and "kubevirt-gpu-device-plugin@v1.0.0" in names
    table = run("profiles").stdout
    assert "kubevirt-gpu-device-plugin@v1.6.0 (latest)" in table


def test_version_and_help_everywhere():
    from pciname import __version__

    assert run("--version").stdout.strip() == f"pciname {__version__}"
    for command in ("lookup", "reverse", "diff", "profiles", "snapshots", "check", "describe"):
        proc = run(command, "--help")
        assert proc.returncode == 0 and "usage: pciname" in proc.stdout, command
    for action in ("list", "import", "fetch"):
        assert run("snapshots", action, "--help").returncode == 0


def test_server_cannot_be_combined_with_a_local_file():
    assert_one_line_error(run("lookup", "10de:2236", "--server", "127.0.0.1:1", "--pciids", "x"), "--server cannot be combined")


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
