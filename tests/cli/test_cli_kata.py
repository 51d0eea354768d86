"""The Kata family through the ``pciname`` program, as users run it:
``lookup``, ``reverse``, ``diff`` and ``profiles`` with Kata profiles and
``--alias``/``--nvswitch-alias``, and the one-line refusals. Expected names
follow the upstream rules (tests/naming/test_kata_profiles.py says which)."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.cli_run import pciname as run


def assert_one_line_error(proc: subprocess.CompletedProcess, *fragments: str) -> None:
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    for fragment in fragments:
        assert fragment in line


A10 = "10de:2236"
MAX_Q = "10de:2bb4"


def test_lookup_json_says_plugin_alias_and_socket():
    proc = run("lookup", A10, "-p", "gpu-operator@v26.7.0+kata", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    (found,) = json.loads(proc.stdout)
    assert found["plugin"] == "sandbox-device-plugin"
    assert found["alias"] == "pgpu"
    assert found["resource_name"] == "nvidia.com/pgpu"
    assert found["socket_path"] == "/var/lib/kubelet/device-plugins/sandbox-pgpu.sock"
    assert found["env_var"] is None
    assert found["plugin_release"] == "v0.0.5" and found["algorithm"] == "go-nvlib"


def test_lookup_name_warns_that_the_default_alias_is_shared():
    proc = run("lookup", A10, "-p", "sandbox-device-plugin@v0.0.5")
    assert (proc.returncode, proc.stdout) == (0, "nvidia.com/pgpu\n")
    assert proc.stderr.startswith("pciname: 10de:2236: shared-alias: P_GPU_ALIAS is 'pgpu' (unset")
    assert len(proc.stderr.splitlines()) == 1


def test_an_empty_alias_gives_per_model_names():
    proc = run("lookup", A10, MAX_Q, "-p", "sandbox-device-plugin@latest", "--alias", "")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [
        "nvidia.com/GA102GL_A10",
        "nvidia.com/GB202GL_RTX_PRO_6000_BLACKWELL_MAX-Q_WORKSTATION_EDITION",
    ]
    assert proc.stderr == ""
    assert run("lookup", A10, "-p", "sandbox-device-plugin@v0.0.5", "--alias=a10").stdout == "nvidia.com/a10\n"


def test_reverse_and_diff_with_aliases():
    proc = run("reverse", "nvidia.com/GA102GL_A10", "-p", "sandbox-device-plugin@v0.0.5", "--alias", "")
    assert (proc.returncode, proc.stdout) == (0, "10de:2236\n")
    # under the default alias the per-model name is advertised for nothing
    proc = run("reverse", "nvidia.com/GA102GL_A10", "-p", "sandbox-device-plugin@v0.0.5")
    assert (proc.returncode, proc.stdout) == (1, "")
    proc = run(
        "diff", "--from", "gpu-operator@v26.7.0", "--to", "gpu-operator@v26.7.0+kata", "--alias", "", "-o", "json"
    )
    assert proc.returncode == 0, proc.stderr
    diff = json.loads(proc.stdout)
    assert (diff["from"], diff["to"]) == ("gpu-operator@v26.7.0", "gpu-operator@v26.7.0+kata")
    changes = {c["device"]: c for c in diff["changes"]}
    assert changes[MAX_Q]["new"].endswith("_MAX-Q_WORKSTATION_EDITION")
    assert changes[MAX_Q]["old"].endswith("_MAXQ_WORKSTATION_EDITION")
    assert A10 not in changes


def test_profiles_lists_the_kata_family():
    proc = run("profiles", "-o", "json")
    infos = {p["name"]: p for p in json.loads(proc.stdout)}
    assert infos["gpu-operator@v26.7.0+kata"]["plugin"] == "sandbox-device-plugin"
    assert infos["gpu-operator@v26.7.0+kata"]["source"].startswith("NVIDIA/gpu-operator@")
    assert infos["sandbox-device-plugin@v0.0.1"]["algorithm"] == "vendor-section"
    table = run("profiles").stdout
    assert "sandbox-device-plugin@v0.0.5 (sandbox-device-plugin@latest)" in table


def test_aliases_are_refused_where_no_kata_plugin_reads_them():
    assert_one_line_error(run("lookup", A10, "--alias", "x"), "is not a sandbox-device-plugin profile")
    assert_one_line_error(
        run("lookup", A10, "-p", "sandbox-device-plugin@v0.0.1", "--nvswitch-alias", "x"), "reads no NVSWITCH_ALIAS"
    )
    assert_one_line_error(
        run("diff", "--from", "latest", "--to", "v1.2.2", "--alias", ""), "is not a sandbox-device-plugin profile"
    )
    assert_one_line_error(
        run("lookup", A10, "-p", "gpu-operator@v24.9.0+kata"), "deploys no Kata sandbox device plugin"
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["permitted-host-devices", A10],
        ["vm-gpus", A10],
        ["vgpu-types", A10],
        ["admission-policy", A10],
        ["mdev-name", "GRID T4-1Q"],
    ],
)
def test_the_kubevirt_generators_refuse_a_kata_profile(argv):
    """The Kata plugin serves Kata pods, not KubeVirt, and has no vGPU: a
    KubeVirt block with its names would be a silent wrong answer."""
    assert_one_line_error(
        run(*argv, "-p", "gpu-operator@v26.7.0+kata"),
        f"{argv[0]}: gpu-operator@v26.7.0+kata is the Kata sandbox device plugin's",
    )


def test_snapshots_list_names_the_kata_releases_of_each_file():
    proc = run("snapshots", "list", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    rows = {r["snapshot"]: r for r in json.loads(proc.stdout)}
    assert rows["2025.07.11"]["kata_plugin_releases"] == ["v0.0.1", "v0.0.2", "v0.0.3", "v0.0.4", "v0.0.5"]
    assert rows["2019-08-14"]["kata_plugin_releases"] == []


def test_kata_pod_help_names_the_default_its_request_answers_with():
    from pciname.capabilities.kata_pod import KataPodRequest

    default = KataPodRequest().default_profile
    assert default.startswith("gpu-operator@") and default.endswith("+kata")
    text = " ".join(run("kata-pod", "--help").stdout.split())
    assert f"naming profile (default the newest GPU Operator release in Kata mode: {default})" in text
    assert "kubevirt-gpu-device-plugin@v" not in text
    # and a pod without -p is named under that very profile
    assert run("kata-pod", A10, "-o", "json").returncode == 0


@pytest.mark.parametrize(
    "command",
    [["permitted-host-devices"], ["vm-gpus"], ["vgpu-types"], ["admission-policy"], ["mdev-name"], ["node-pool", "g"]],
)
def test_the_kubevirt_generators_offer_no_kata_only_options(command):
    text = run(*command, "--help").stdout
    assert "--alias" not in text and "--nvswitch-alias" not in text and "+kata" not in text
    proc = run(*command, A10, "--alias", "x")
    assert proc.returncode == 2 and "unrecognized arguments: --alias x" in proc.stderr


def test_diff_from_and_to_have_help():
    text = " ".join(run("diff", "--help").stdout.split())
    assert "--from PROFILE the profile upgraded from" in text
    assert "--to PROFILE the profile upgraded to" in text
