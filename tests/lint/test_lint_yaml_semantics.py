"""lint reads YAML as its consumers do: of a key written twice the last value
(and a ``duplicate-key`` finding, as kubectl's strict decoding refuses it),
merge keys merged with explicit keys overriding (issue 16, item 1)."""

from __future__ import annotations

import re
import textwrap

import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pciname.lint.linter import DUPLICATE_KEY, Finding, flatten_merges, lint_data, lint_text


class SpecLoader(yaml.SafeLoader):
    """PyYAML's safe loader with merge keys as the YAML merge-key spec (and
    go-yaml) read them: PyYAML's own ``flatten_mapping`` changed in 6.0.4
    (a merge sequence's later mapping now wins), and what lint reads must not
    follow a library's version."""

    def flatten_mapping(self, node: yaml.MappingNode) -> None:
        flatten_merges(node)


def spec_load(text: str) -> object:
    return yaml.load(text, Loader=SpecLoader)


RIGHT = "nvidia.com/GA102GL_A10"
WRONG = "nvidia.com/GA102GL_A10_TYPO"


def y(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


def found(text: str) -> list[tuple[int, str, str]]:
    return [(f.line, f.code, f.path) for f in lint_text(text, "d.yaml", "latest")]


def test_the_last_of_two_resource_names_is_checked():
    text = y(
        f"""
        pciHostDevices:
        - pciVendorSelector: "10DE:2236"
          resourceName: {RIGHT}
          resourceName: {WRONG}
          externalResourceProvider: true
        """
    )
    assert found(text) == [
        (4, "duplicate-key", "pciHostDevices[0].resourceName"),
        (4, "wrong-resource-name", "pciHostDevices[0].resourceName"),
    ]
    (dup,) = [f for f in lint_text(text, "d.yaml") if f.code == DUPLICATE_KEY]
    assert "line 3" in dup.message and "kubectl" in dup.message


def test_a_right_last_value_leaves_only_the_duplicate():
    text = f'pciHostDevices:\n- pciVendorSelector: "10DE:2236"\n  resourceName: {WRONG}\n  resourceName: {RIGHT}\n  externalResourceProvider: true\n'
    assert found(text) == [(4, "duplicate-key", "pciHostDevices[0].resourceName")]


def test_keys_that_are_one_python_value_are_duplicates():
    # yes and true are one key to PyYAML; "a" and a too.
    text = 'x:\n  yes: 1\n  true: 2\n  "a": 1\n  a: 2\n'
    assert [(line, code) for line, code, _ in found(text)] == [(3, "duplicate-key"), (5, "duplicate-key")]


def test_a_duplicate_permitted_host_devices_block_hides_nothing():
    text = y(
        f"""
        spec:
          configuration:
            permittedHostDevices:
              pciHostDevices:
              - {{pciVendorSelector: "10DE:2236", resourceName: {RIGHT}, externalResourceProvider: true}}
            permittedHostDevices:
              pciHostDevices:
              - {{pciVendorSelector: "10DE:2236", resourceName: {WRONG}, externalResourceProvider: true}}
        """
    )
    assert [code for _, code, _ in found(text)] == ["duplicate-key", "wrong-resource-name"]


def test_a_merged_wrong_name_is_found():
    text = y(
        f"""
        x-base: &base
          pciVendorSelector: "10DE:2236"
          resourceName: {WRONG}
          externalResourceProvider: true
        permittedHostDevices:
          pciHostDevices:
          - <<: *base
        """
    )
    assert found(text) == [(3, "wrong-resource-name", "permittedHostDevices.pciHostDevices[0].resourceName")]


def test_explicit_keys_override_merged_ones_without_a_duplicate_finding():
    text = y(
        f"""
        x-base: &base
          pciVendorSelector: "10DE:2236"
          resourceName: {WRONG}
        x-erp: &erp
          externalResourceProvider: false
          resourceName: nvidia.com/OTHER
        permittedHostDevices:
          pciHostDevices:
          - <<: [*base, *erp]
            externalResourceProvider: true
          - <<: *base
            pciVendorSelector: "10DE:27B8"
            resourceName: nvidia.com/AD104GL_L4
            externalResourceProvider: true
        """
    )
    # [*base, *erp]: the first listed wins, so base's wrong name is used.
    assert found(text) == [(3, "wrong-resource-name", "permittedHostDevices.pciHostDevices[0].resourceName")]


def test_a_merge_of_a_scalar_is_a_yaml_error():
    import pytest

    from pciname.errors import LintInputError

    with pytest.raises(LintInputError, match=r"^m.yaml:2:7: YAML syntax error: .*for merging"):
        lint_text("a:\n  <<: 1\n", "m.yaml")


def test_cli_exit_code_for_a_duplicate(tmp_path, capsys):
    from pciname.cli import main

    path = tmp_path / "d.yaml"
    path.write_text(
        f'pciHostDevices:\n- pciVendorSelector: "10DE:2236"\n  resourceName: {RIGHT}\n  resourceName: {WRONG}\n  externalResourceProvider: true\n'
    )
    assert main(["lint", str(path)]) == 1
    out = capsys.readouterr().out
    assert "duplicate-key" in out and "wrong-resource-name" in out


# -- generated: lint's verdict is the verdict on what a spec-following YAML load reads ----------

_KEYS = ("pciVendorSelector", "resourceName", "externalResourceProvider")
_VALUES = {
    "pciVendorSelector": ('"10DE:2236"', '"10DE:27B8"', "bogus"),
    "resourceName": (RIGHT, WRONG, "nvidia.com/AD104GL_L4", "intel.com/qat"),
    "externalResourceProvider": ("true", "false", '"true"'),
}
_pair = st.sampled_from(_KEYS).flatmap(lambda k: st.sampled_from(_VALUES[k]).map(lambda v: (k, v)))


@st.composite
def _entries(draw: st.DrawFn) -> tuple[str, bool]:
    """A pciHostDevices list of 1-3 entries, each made of explicit pairs (keys
    possibly repeated) and merges of anchored bases; and whether any mapping
    repeats a key."""
    bases = draw(st.lists(st.lists(_pair, min_size=1, max_size=4), max_size=3))
    lines = ["x-bases:"]
    repeated = False
    for i, pairs in enumerate(bases):
        lines.append(f"  b{i}: &b{i}")
        lines.extend(f"    {k}: {v}" for k, v in pairs)
        repeated |= len({k for k, _ in pairs}) < len(pairs)
    lines += ["permittedHostDevices:", "  pciHostDevices:"]
    for _ in range(draw(st.integers(1, 3))):
        merged = draw(st.lists(st.integers(0, len(bases) - 1), max_size=2, unique=True)) if bases else []
        own = draw(st.lists(_pair, min_size=0 if merged else 1, max_size=4))
        repeated |= len({k for k, _ in own}) < len(own)
        body = []
        if merged:
            body.append(
                "<<: " + (f"*b{merged[0]}" if len(merged) == 1 else "[" + ", ".join(f"*b{m}" for m in merged) + "]")
            )
        body.extend(f"{k}: {v}" for k, v in own)
        lines.append("  - " + body[0])
        lines.extend("    " + line for line in body[1:])
    return "\n".join(lines) + "\n", repeated


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_entries())
def test_lint_sees_what_safe_load_sees(case: tuple[str, bool]) -> None:
    text, repeated = case
    ours = lint_text(text, "g.yaml", "latest")
    theirs = lint_data(spec_load(text), "g.yaml", "latest")

    def strip(findings: list[Finding]) -> list[tuple[str, str, str, str]]:
        # the lines differ (lint_data's refer to the dump), nothing else may
        return sorted(
            (f.code, f.path, repr(f.value), re.sub(r"line \d+", "line N", f.message))
            for f in findings
            if f.code != DUPLICATE_KEY
        )

    assert strip(ours) == strip(theirs), text
    assert any(f.code == DUPLICATE_KEY for f in ours) == repeated, text
    assert not any(f.code == DUPLICATE_KEY for f in theirs)
