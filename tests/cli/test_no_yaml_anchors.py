"""No generated YAML holds anchors or aliases (``&id001`` / ``*id001``):
people copy and edit it, and PyYAML anchors any object written twice (a
Deployment's selector labels and its template's labels are one dict). The
one Dumper (pciname.base.yaml_out) writes every object out in full."""

from __future__ import annotations

import pytest
import yaml

from pciname.base.yaml_out import Dumper
from tests.cli_run import pciname

#: Every command that writes YAML, each with devices that make it write something.
GENERATORS = [
    ("kata-pod", "--kind", "deployment", "10de:2330"),
    ("kata-pod", "--kind", "pod", "10de:2330=2", "10de:2236"),
    ("permitted-host-devices", "10de:2236", "10de:2330"),
    ("node-pool", "gpu", "10de:2236=2"),
    ("vm-gpus", "10de:2236", "10de:2330"),
    ("vm-gpus", "10de:2236=2", "--dra"),
    ("admission-policy", "10de:2236"),
    ("lookup", "10de:2236", "10de:2330", "-o", "yaml"),
]


def _anchored(text: str) -> list[str]:
    return [
        f"{type(event).__name__} {event.anchor}"
        for event in yaml.parse(text)
        if getattr(event, "anchor", None) is not None
    ]


@pytest.mark.parametrize("argv", GENERATORS, ids=" ".join)
def test_generated_yaml_has_no_anchor(argv: tuple[str, ...]) -> None:
    ran = pciname(*argv)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.strip()
    assert _anchored(ran.stdout) == []
    assert "&id0" not in ran.stdout and "*id0" not in ran.stdout


def test_dumper_writes_a_shared_object_twice_in_full() -> None:
    labels = {"app": "x"}
    text = yaml.dump({"a": labels, "b": labels, "c": [labels]}, Dumper=Dumper, sort_keys=False)
    assert _anchored(text) == []
    assert yaml.safe_load(text) == {"a": {"app": "x"}, "b": {"app": "x"}, "c": [{"app": "x"}]}
