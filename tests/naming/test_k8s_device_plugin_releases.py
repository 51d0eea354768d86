"""The container variant's facts (data/k8s-device-plugin/releases.json) are
exactly what tools/k8s_device_plugin_extract.py writes from the vendored
upstream files (tests/data/k8s-device-plugin-inputs.*, NVIDIA/k8s-device-plugin
blobs); the facts the issue names hold; a changed upstream line is one error
naming release and file; and the plugin's own Go functions, taken from each
release's vendored source and built into one program (the oracle), give the
names and labels pciname.naming.container gives."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from pciname.errors import PcinameError
from pciname.naming import container
from tests.conftest import NEEDS_GO
from tests.extract_util import Extracted
from tests.go_oracles import ask, build
from tools import k8s_device_plugin_extract as extract, upstream

FAMILY = Extracted("k8s-device-plugin", "k8s_device_plugin_extract")
SHIPPED, INPUTS = FAMILY.shipped_path, FAMILY.inputs


def test_shipped_facts_are_what_the_script_writes_from_the_vendored_inputs():
    assert SHIPPED.read_text(encoding="utf-8") == upstream.dumps(extract.extract(*extract.load_inputs(INPUTS)))


def test_the_script_checks_the_shipped_facts(tmp_path, capsys):
    assert extract.main(["--from-inputs", str(INPUTS), "--check"]) == 0
    stale = FAMILY.shipped()
    stale["releases"][-1]["names"]["gpu"]["name"] = "gpus"
    (tmp_path / "releases.json").write_text(json.dumps(stale))
    assert extract.main(["--from-inputs", str(INPUTS), "--check", "--out", str(tmp_path)]) == 1
    assert capsys.readouterr().out.splitlines()[-1] == f"{tmp_path}/releases.json: STALE: 1 facts differ: releases"


def test_the_facts_of_the_issue():
    """NVIDIA/k8s-device-plugin@1b826acc (v0.20.0): rm.go:111 whole GPUs, :116 single, :145 mixed."""
    releases = container.releases()
    assert list(releases) == [t for t, _, _ in extract.load_inputs(INPUTS)[0].tags()] and len(releases) == 18
    assert (next(iter(releases)), list(releases)[-1]) == ("v0.15.0", "v0.20.0")
    newest = container.release()
    assert newest.commit.startswith("1b826acc")
    names = newest.names
    assert (names["gpu"]["line"], names["mig_single"]["line"], names["mig_mixed"]["line"]) == (111, 116, 145)
    assert newest.resource(names["gpu"]["name"]) == newest.resource(names["mig_single"]["name"]) == "nvidia.com/gpu"
    assert newest.shared("nvidia.com/gpu") == "nvidia.com/gpu.shared"
    assert newest.mixed_name("1g.5gb") == "nvidia.com/mig-1g.5gb"
    assert newest.mixed_name("1g.10gb+me") == "nvidia.com/mig-1g.10gb.me"
    assert newest.mixed_name("1c.2g.10gb") is None  # C != G: the plugin skips it
    assert newest.mixed_name("1c.1g.5gb") is None  # go-nvlib writes no c. part when C == G
    assert [newest.mig_profile(f"nvidia.com/mig-{p}") for p in ("1g.10gb.me", "3g.20gb-me", "1g.5gb", "x")] == [
        "1g.10gb+me",
        "3g.20gb-me",
        "1g.5gb",
        None,
    ]
    assert newest.where(newest.gfd["product"]) == "NVIDIA/k8s-device-plugin@1b826acc internal/lm/resource.go:318"
    # v0.15.x only replaced spaces; sanitise (drop [^A-Za-z0-9-_. ], join whitespace runs) from v0.16.0.
    assert [tag for tag, r in releases.items() if r.gfd["product"]["rule"] == "spaces"] == ["v0.15.0", "v0.15.1"]
    assert releases["v0.15.1"].product("Tesla T4 (x)") == "Tesla-T4-(x)"
    assert releases["v0.16.0"].product("Tesla T4 (x)", shared=True) == "Tesla-T4-x-SHARED"
    assert releases["v0.16.0"].product("Tesla T4", shared=True, renamed=True) == "Tesla-T4"
    # getArchFamily grows: ada-lovelace from v0.17.1, blackwell from v0.17.2, rubin from v0.20.0.
    first = {
        f: next(t for t, r in releases.items() if f in r.families()) for f in ("ada-lovelace", "blackwell", "rubin")
    }
    assert first == {"ada-lovelace": "v0.17.1", "blackwell": "v0.17.2", "rubin": "v0.20.0"}
    assert releases["v0.17.0"].family(8, 9) == "ampere" and releases["v0.17.1"].family(8, 9) == "ada-lovelace"


def test_each_gpu_operator_release_deploys_a_known_plugin_and_gfd_from_it():
    """NVIDIA/gpu-operator deployments/gpu-operator/values.yaml, devicePlugin and gfd, per tag from v24.3.0."""
    operators = FAMILY.shipped()["operator_releases"]
    assert operators["v24.3.0"]["device_plugin"]["version"] == "v0.15.0-ubi8"
    assert operators["v26.7.0"]["commit"].startswith("10ee5b36")
    assert (operators["v26.7.0"]["device_plugin"]["version"], operators["v26.7.0"]["device_plugin"]["line"]) == (
        "v0.20.0",
        245,
    )
    for tag, row in operators.items():
        plugin, gfd = row["device_plugin"], row["gfd"]
        assert plugin["image"] == gfd["image"] == "k8s-device-plugin" and plugin["version"] == gfd["version"], tag
        assert re.sub(r"-ubi\d$", "", plugin["version"]) in container.releases(), tag


def test_gfd_labels_of_a_node():
    labels = container.gfd_labels(
        container.release("v0.20.0"),
        container.Gpus("NVIDIA A100-SXM4-40GB", 8, memory_mib=40960, compute=(8, 0), replicas=4),
    )
    assert labels == {
        "nvidia.com/gpu.compute.major": "8",
        "nvidia.com/gpu.compute.minor": "0",
        "nvidia.com/gpu.count": "8",
        "nvidia.com/gpu.family": "ampere",
        "nvidia.com/gpu.memory": "40960",
        "nvidia.com/gpu.product": "NVIDIA-A100-SXM4-40GB-SHARED",
        "nvidia.com/gpu.replicas": "4",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
    }
    # NVIDIA/k8s-device-plugin v0.20.0 internal/lm/resource_test.go 103-124: "time-slicing renamed does not
    # append suffix and doubles count", the labels under nvidia.com/gpu though the resource is gpu.shared.
    renamed = container.gfd_labels(container.release(), container.Gpus("MOCKMODEL", 1, 300, (8, 0), 2, renamed=True))
    assert renamed == {
        "nvidia.com/gpu.count": "1",
        "nvidia.com/gpu.replicas": "2",
        "nvidia.com/gpu.sharing-strategy": "time-slicing",
        "nvidia.com/gpu.memory": "300",
        "nvidia.com/gpu.product": "MOCKMODEL",
        "nvidia.com/gpu.family": "ampere",
        "nvidia.com/gpu.compute.major": "8",
        "nvidia.com/gpu.compute.minor": "0",
    }
    with pytest.raises(PcinameError, match=r"^unknown k8s-device-plugin release 'v9\.9\.9': pciname knows v0\.15\.0"):
        container.release("v9.9.9")


class _Changed:
    """The vendored source with one file of one commit edited."""

    def __init__(self, source: Any, path: str, old: str, new: str) -> None:
        self.source, self.path, self.old, self.new = source, path, old.encode(), new.encode()

    def tags(self) -> list[tuple[str, str, str]]:
        return list(self.source.tags())

    def read(self, commit: str, path: str) -> bytes | None:
        data = self.source.read(commit, path)
        return data.replace(self.old, self.new) if path == self.path and data else data


@pytest.mark.parametrize(
    ("path", "old", "new", "message"),
    [
        (extract.RM, '"mig-"+p.String()', '"mig-"+p.Name()', "internal/rm/rm.go: the MIG strategy mixed resource name"),
        (extract.LM, '"SHARED"', "sharedSuffix", "internal/lm/resource.go: the SHARED product part"),
        (extract.LM, "case 9:", "case 9 + 0:", "internal/lm/resource.go: a case of getArchFamily"),
    ],
)
def test_a_changed_upstream_line_is_one_error_naming_release_and_file(path, old, new, message):
    with pytest.raises(upstream.ExtractError) as raised:
        plugin, operator = extract.load_inputs(INPUTS)
        extract.extract(_Changed(plugin, path, old, new), operator)
    assert str(raised.value).startswith(f"k8s-device-plugin v0.15.0: {message}")


# -- the oracle: the plugin's own functions, built with Go ----------------------------

_FUNC = r"^func {}\(.*?^\}}$"
_CLOSURE = re.compile(r"VisitMigProfiles\(func\(p device\.MigProfile\) error \{\n(.*?)\n\t\t\}\)", re.S)

_HEAD = """package main

import (
\t"encoding/json"
\t"fmt"
\t"os"
\t"regexp"
\t"strings"
)

var _ = regexp.MustCompile
var _ = fmt.Sprintf
"""

_VARIANT = """
type resourceLabeler_N struct{ shared, renamed bool }

func (rl resourceLabeler_N) isShared() bool  { return rl.shared }
func (rl resourceLabeler_N) isRenamed() bool { return rl.renamed }

type MigProfileInfo_N struct {
\tC, G, GB                  int
\tAttributes, NegAttributes []string
}

func (p MigProfileInfo_N) GetInfo() MigProfileInfo_N { return p }

type resources_N struct{ got *[]string }

func (r resources_N) AddMIGResource(pattern, name string) error {
\t*r.got = append(*r.got, name)
\treturn nil
}

func mixed_N(p MigProfileInfo_N) []string {
\tgot := []string{}
\tconfig := struct{ Resources resources_N }{resources_N{&got}}
\tvisit := func(p MigProfileInfo_N) error {
CLOSURE
\t}
\t_ = visit(p)
\treturn got
}

func answer_N(in input) map[string]interface{} {
\tproducts := []string{}
\tfor _, name := range in.Names {
\t\tfor _, flags := range [][2]bool{{false, false}, {true, false}, {true, true}} {
\t\t\trl := resourceLabeler_N{flags[0], flags[1]}
\t\t\tproducts = append(products, rl.getProductName(name), rl.getProductName(name, "MIG", "1g.5gb"))
\t\t}
\t}
\tfamilies := []string{}
\tfor _, c := range in.Compute {
\t\tfamilies = append(families, getArchFamily_N(c[0], c[1]))
\t}
\tprofiles := [][]string{}
\tfor _, p := range in.Profiles {
\t\tinfo := MigProfileInfo_N{C: p.C, G: p.G, GB: p.GB, Attributes: p.Attributes, NegAttributes: p.NegAttributes}
\t\tprofiles = append(profiles, append([]string{info.String()}, mixed_N(info)...))
\t}
\treturn map[string]interface{}{"products": products, "families": families, "profiles": profiles}
}
"""

_MAIN = """
type profile struct {
\tC, G, GB                  int
\tAttributes, NegAttributes []string
}

type input struct {
\tNames    []string
\tCompute  [][2]int
\tProfiles []profile
}

func main() {
\tvar in input
\tif err := json.NewDecoder(os.Stdin).Decode(&in); err != nil {
\t\tpanic(err)
\t}
\tout := map[string]interface{}{}
ANSWERS
\t_ = json.NewEncoder(os.Stdout).Encode(out)
}
"""

NAMES = ["NVIDIA A100-SXM4-40GB", "Tesla T4", "NVIDIA H100 80GB HBM3", "A  b\tc (d)/e*f", "Ünïcode GPU", "", "  "]
COMPUTE = [(major, minor) for major in range(15) for minor in (0, 4, 5, 8, 9)]
PROFILES = [
    {"C": 1, "G": 1, "GB": 5, "Attributes": [], "NegAttributes": []},
    {"C": 1, "G": 1, "GB": 10, "Attributes": ["me"], "NegAttributes": []},
    {"C": 1, "G": 2, "GB": 10, "Attributes": [], "NegAttributes": []},
    {"C": 3, "G": 3, "GB": 20, "Attributes": [], "NegAttributes": ["me"]},
    {"C": 7, "G": 7, "GB": 80, "Attributes": ["me", "gfx"], "NegAttributes": []},
]


def _variant(n: int, rm: str, lm: str, profile: str) -> str:
    """One release's functions, renamed apart with the suffix ``_<n>``."""

    def function(text: str, name: str) -> str:
        found = re.search(_FUNC.format(re.escape(name)), text, re.M | re.S)
        assert found is not None, name
        return found.group(0)

    closure = _CLOSURE.search(rm)
    assert closure is not None
    parts = [
        _VARIANT.replace("CLOSURE", closure.group(1)),
        function(lm, "(rl resourceLabeler) getProductName"),
        function(lm, "getArchFamily"),
        function(profile, "(p MigProfileInfo) String"),
    ]
    if "func sanitise(" in lm:
        parts.append(function(lm, "sanitise"))
    code = "\n".join(parts)
    for word in ("resourceLabeler", "MigProfileInfo", "sanitise", "getArchFamily", "resources", "mixed", "answer"):
        code = re.sub(rf"\b{word}(_N)?\b", f"{word}_{n}", code)
    return code


def _python(release: container.Release) -> dict[str, Any]:
    """What pciname.naming.container says for the oracle's inputs."""
    products = []
    for name in NAMES:
        for shared, renamed in ((False, False), (True, False), (True, True)):
            products.append(release.product(name, shared=shared, renamed=renamed))
            products.append(release.product(name, "MIG", "1g.5gb", shared=shared, renamed=renamed))
    profiles = []
    for p in PROFILES:
        form = release.names["mig_mixed"]["profile_forms"]["c_equals_g" if p["C"] == p["G"] else "otherwise"]
        forms = release.names["mig_mixed"]["profile_forms"]
        suffix = (forms["attributes"] + ",".join(p["Attributes"])) if p["Attributes"] else ""
        if p["NegAttributes"] and forms["negated_attributes"]:
            suffix = forms["negated_attributes"] + ",".join(p["NegAttributes"])
        args = (p["G"], p["GB"]) if p["C"] == p["G"] else (p["C"], p["G"], p["GB"])
        text = form.replace("%d", "{}").replace("%s", "{}").format(*args, suffix)
        mixed = release.mixed_name(text)
        profiles.append([text] + ([mixed.removeprefix("nvidia.com/")] if mixed else []))
    return {"products": products, "families": [release.family(*c) for c in COMPUTE], "profiles": profiles}


@NEEDS_GO
def test_the_plugins_own_functions_built_with_go_say_what_the_facts_say(tmp_path):
    source = extract.load_inputs(INPUTS)[0]
    variants: dict[str, int] = {}
    by_release: dict[str, int] = {}
    code = []
    for tag, commit, _date in source.tags():
        texts = [(source.read(commit, p) or b"").decode() for p in (extract.RM, extract.LM, extract.PROFILE)]
        n = variants.setdefault("\0".join(texts), len(variants))
        by_release[tag] = n
        if n == len(code):
            code.append(_variant(n, *texts))
    answers = "".join(f'\tout["{n}"] = answer_{n}(in)\n' for n in range(len(code)))
    program = tmp_path / "k8s_device_plugin.go"
    program.write_text(_HEAD + "\n".join(code) + _MAIN.replace("ANSWERS\n", answers))
    stdin = json.dumps({"Names": NAMES, "Compute": COMPUTE, "Profiles": PROFILES})
    go = json.loads(ask(build(program), stdin=stdin))
    assert len(code) >= 4  # the releases differ in these files
    for tag, release in container.releases().items():
        assert _python(release) == go[str(by_release[tag])], tag
