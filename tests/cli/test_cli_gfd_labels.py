"""``pciname gfd-labels``: the request built from its options, the answer
printed as YAML or JSON; bad input is one line and exit 2."""

from __future__ import annotations

import json

from tests.cli_run import pciname


def test_the_labels_as_json_and_yaml():
    ran = pciname("gfd-labels", "NVIDIA H100 80GB HBM3", "--count", "8", "--compute", "9.0", "-o", "json")
    assert ran.returncode == 0, ran.stderr
    labels = json.loads(ran.stdout)["labels"]
    assert labels["nvidia.com/gpu.product"] == "NVIDIA-H100-80GB-HBM3"
    assert (labels["nvidia.com/gpu.count"], labels["nvidia.com/gpu.family"]) == ("8", "hopper")
    ran = pciname("gfd-labels", "Tesla T4", "--replicas", "2", "--release", "v0.17.0")
    assert ran.returncode == 0 and "  nvidia.com/gpu.product: Tesla-T4-SHARED\n" in ran.stdout
    assert ran.stdout.startswith("release: v0.17.0\n")


def test_bad_input_is_one_line_and_exit_2():
    ran = pciname("gfd-labels", "x", "--replicas", "0")
    assert (ran.returncode, ran.stdout, ran.stderr) == (
        2,
        "",
        "pciname: error: --count is 1 to 1024, --replicas at least 1, --memory-mib not negative\n",
    )


def test_docs_naming_section_10_gfd_labels_transcript_is_what_the_cli_prints():
    from tests.conftest import REPO

    section = (REPO / "docs" / "naming.md").read_text(encoding="utf-8").split("\n## 10. ", 1)[1]
    transcript = section.split("```text\n")[2].split("```", 1)[0]
    argv = ["gfd-labels", "NVIDIA A100-SXM4-40GB", "--count", "8", "--compute", "8.0", "--replicas", "4"]
    assert f'`pciname {argv[0]} "NVIDIA\nA100-SXM4-40GB" {" ".join(argv[2:])}` prints:' in section
    ran = pciname(*argv)
    assert (ran.returncode, ran.stdout) == (0, transcript)
