"""Maintainer script: extract the container variant's facts
(``data/k8s-device-plugin/releases.json``) from the git history of
``NVIDIA/k8s-device-plugin``: every final tag ``vX.Y.Z`` from v0.15.0, the
first release whose repository holds GPU Feature Discovery
(``internal/lm/``) beside the plugin.

    python -m tools.k8s_device_plugin_extract --git DIR --operator-git DIR [--inputs tests/data/k8s-device-plugin-inputs]
    python -m tools.k8s_device_plugin_extract --from-inputs tests/data/k8s-device-plugin-inputs [--check]

``--inputs``/``--from-inputs``/``--check`` as in :mod:`tools.kata_extract`.

Per release, each with its file and line:

* ``names``: the resource names ``internal/rm/rm.go``'s
  ``AddDefaultResourcesToConfig`` adds: whole GPUs (``AddGPUResource("*",
  NAME)``), MIG devices under strategy ``single`` (``AddMIGResource("*",
  NAME)``) and under ``mixed`` (``"mig-"+profile`` with ``+`` replaced, only
  profiles with C == G); the prefix every name gets and the suffix of a
  renamed shared resource (``api/config/v1/consts.go``).
* ``gfd``: the labels ``internal/lm/resource.go`` sets per resource: the
  suffixes of ``baseLabeler``, the product name's parts (``sanitise``'s
  deleted characters, the joiner, the ``SHARED`` part and the ``MIG`` part),
  the other labels (memory, family, compute.major, compute.minor) and
  ``getArchFamily``'s table.

Per ``NVIDIA/gpu-operator`` final tag from v24.3.0 (the first to deploy a
plugin from v0.15.0), ``operator_releases``: the image and version of its
chart's ``devicePlugin`` and ``gfd`` values (``deployments/gpu-operator/values.yaml``).

A shape the script does not know is an error naming the release and file.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tools.upstream import (
    INPUT_ERRORS,
    TAG,
    At,
    ExtractError,
    GitSource,
    Recording,
    Source,
    VendoredSource,
    add_extractor_options,
    publish,
    read_blobs,
    version_key,
    write_blobs,
)

REPOSITORY = "NVIDIA/k8s-device-plugin"
OPERATOR_REPOSITORY = "NVIDIA/gpu-operator"
LICENSE = "Apache-2.0"
FIRST = "v0.15.0"
OPERATOR_FIRST = "v24.3.0"
OPERATOR_VALUES = "deployments/gpu-operator/values.yaml"
RM = "internal/rm/rm.go"
LM = "internal/lm/resource.go"
CONSTS = "api/config/v1/consts.go"
RESOURCES = "api/config/v1/resources.go"
SHARING = "api/config/v1/sharing.go"
#: go-nvlib's MIG profile names, as the plugin vendors it.
PROFILE = "vendor/github.com/NVIDIA/go-nvlib/pkg/nvlib/device/mig_profile.go"

_GPU = r'config\.Resources\.AddGPUResource\("\*", "([a-z0-9.-]+)"\)'
_SINGLE = r'case spec\.MigStrategySingle:\n\s*return config\.Resources\.AddMIGResource\("\*", "([a-z0-9.-]+)"\)'
_MIXED = r'resourceName := strings\.ReplaceAll\("([a-z-]+)"\+p\.String\(\), "(.)", "(.)"\)'
_C_EQUALS_G = r"if info\.C != info\.G \{\n\s*return nil\n\s*\}"
_PROFILE = (
    r'if p\.C == p\.G \{\n\s*return fmt\.Sprintf\("(%dg\.%dgb%s)", p\.G, p\.GB, suffix\)\n\s*\}\n'
    r'\s*return fmt\.Sprintf\("(%dc\.%dg\.%dgb%s)", p\.C, p\.G, p\.GB, suffix\)'
)
_STRATEGY = re.compile(r'^\s*SharingStrategy(\w+)\s*= SharingStrategy\("([a-z-]+)"\)', re.M)
_ATTRIBUTES = r'suffix = "(.)" \+ strings\.Join\(p\.Attributes, ","\)'
_NEGATED = r'suffix = "(.)" \+ strings\.Join\(p\.NegAttributes, ","\)'
_PREFIX = r'ResourceNamePrefix\s+= "([a-z.]+)"'
_SUFFIX = r'DefaultSharedResourceNameSuffix = "([a-z.]+)"'
_RENAME = r"func \(r ResourceName\) DefaultSharedRename\(\) ResourceName \{\n\s*return r \+ DefaultSharedResourceNameSuffix\n\}"
_FULL = r'const fullGPUResourceName = "([a-z./]+)"'
_LABELLED = r"resourceLabeler := newResourceLabeler\(fullGPUResourceName, config\)"
_RAW = r"rawLabels := map\[string\]interface\{\}\{\n((?:\s*\"[a-z-]+\":.*\n)+)\s*\}"
_SANITISE = r'func sanitise\(input string\) string \{\n(?:.*\n){0,2}?\s*re := regexp\.MustCompile\("([^"]+)"\)\n\s*input = re\.ReplaceAllString\(input, ""\)\n(?:.*\n)?\s*sanitised = strings\.Join\(strings\.Fields\(input\), "(.)"\)'
_REPLACE = r'strippedParts = append\(strippedParts, strings\.ReplaceAll\(p, " ", "(.)"\)\)'
_SHARED = r'if rl\.isShared\(\) && !rl\.isRenamed\(\) \{\n\s*strippedParts = append\(strippedParts, "([A-Z]+)"\)'
_MIG_PARTS = r'resourceLabeler\.baseLabeler\(count, model, "([A-Z]+)", migProfile\)'
_MEMORY = r'resourceLabeler\.single\("([a-z]+)", totalMemoryMi?B\)'
_ARCH = r'rl\.labels\(map\[string\]interface\{\}\{\n\s*"(family)":\s+family,\n\s*"(compute\.major)":\s+computeMajor,\n\s*"(compute\.minor)":\s+computeMinor,'
_FAMILY = r"^func getArchFamily\(computeMajor, computeMinor int\) string \{\n\s*switch computeMajor \{\n((?:.*\n)*?)\s*\}\n\s*return \"([a-z-]+)\"\n\}"
_CASE = re.compile(
    r'case ([\d, ]+):\s*(?:if computeMinor < (\d+) \{\s*return "([a-z-]+)"\s*\}\s*)?return "([a-z-]+)"', re.S
)


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def _where(path: str, text: str, m: re.Match[str]) -> dict[str, Any]:
    return {"path": path, "line": _line(text, m.start())}


def name_facts(at: At) -> dict[str, Any]:
    """The resource names rm.go adds, and what api/config/v1 makes of them."""
    rm, consts, resources = at.text(RM), at.text(CONSTS), at.text(RESOURCES)
    gpu = at.find(RM, rm, _GPU, "the whole-GPU resource")
    single = at.find(RM, rm, _SINGLE, "the MIG strategy single resource")
    mixed = at.find(RM, rm, _MIXED, "the MIG strategy mixed resource name")
    c_equals_g = at.find(RM, rm, _C_EQUALS_G, "the C == G filter of mixed")
    prefix = at.find(CONSTS, consts, _PREFIX, "ResourceNamePrefix")
    profile_text = at.text(PROFILE)
    profile = at.find(PROFILE, profile_text, _PROFILE, "MigProfileInfo.String")
    negated = re.search(_NEGATED, profile_text)
    suffix = at.find(CONSTS, consts, _SUFFIX, "DefaultSharedResourceNameSuffix")
    rename = at.find(RESOURCES, resources, _RENAME, "DefaultSharedRename")
    return {
        "prefix": {**_where(CONSTS, consts, prefix), "value": prefix.group(1)},
        "gpu": {**_where(RM, rm, gpu), "name": gpu.group(1)},
        "mig_single": {**_where(RM, rm, single), "name": single.group(1)},
        "mig_mixed": {
            **_where(RM, rm, mixed),
            "prefix": mixed.group(1),
            "replace": [mixed.group(2), mixed.group(3)],
            "only_c_equals_g": {"path": RM, "line": _line(rm, c_equals_g.start())},
            "profile_forms": {
                **_where(PROFILE, profile_text, profile),
                "c_equals_g": profile.group(1),
                "otherwise": profile.group(2),
                "attributes": at.find(PROFILE, profile_text, _ATTRIBUTES, "the attributes' suffix").group(1),
                "negated_attributes": negated.group(1) if negated else None,
            },
        },
        "shared_rename": {
            **_where(CONSTS, consts, suffix),
            "suffix": suffix.group(1),
            "appended_at": _where(RESOURCES, resources, rename),
        },
    }


def families(at: At, lm: str) -> dict[str, Any]:
    """getArchFamily's switch: per case its majors, an optional minor bound and the families."""
    m = at.find(LM, lm, _FAMILY, "getArchFamily")
    cases = []
    for case in _CASE.finditer(m.group(1)):
        majors = [int(x) for x in case.group(1).replace(" ", "").split(",")]
        below = {"minor_below": int(case.group(2)), "family_below": case.group(3)} if case.group(2) else {}
        cases.append({"majors": majors, **below, "family": case.group(4)})
    if len(cases) != m.group(1).count("case "):
        raise at.fail(LM, "a case of getArchFamily is not in a shape this script knows")
    return {**_where(LM, lm, m), "cases": cases, "otherwise": m.group(2)}


def product_rule(at: At, lm: str) -> dict[str, Any]:
    """How a product name's part is cleaned: sanitise (characters deleted,
    whitespace runs joined) from v0.16.0, spaces replaced before."""
    sanitise = re.search(_SANITISE, lm, re.M)
    if sanitise is not None:
        return {
            **_where(LM, lm, sanitise),
            "rule": "sanitise",
            "deleted": sanitise.group(1),
            "joiner": sanitise.group(2),
        }
    spaces = at.find(LM, lm, _REPLACE, "sanitise or the spaces' replacement")
    return {**_where(LM, lm, spaces), "rule": "spaces", "deleted": None, "joiner": spaces.group(1)}


def gfd_facts(at: At) -> dict[str, Any]:
    """The labels GFD sets per resource (internal/lm/resource.go)."""
    lm = at.text(LM)
    full = at.find(LM, lm, _FULL, "fullGPUResourceName")
    raw = at.find(LM, lm, _RAW, "baseLabeler's labels")
    shared = at.find(LM, lm, _SHARED, "the SHARED product part")
    mig = at.find(LM, lm, _MIG_PARTS, "the MIG product parts")
    memory = at.find(LM, lm, _MEMORY, "the memory label")
    arch = at.find(LM, lm, _ARCH, "the architecture labels")
    return {
        "full_gpu_resource": {
            **_where(LM, lm, full),
            "name": full.group(1),
            "labelled_as": _where(LM, lm, at.find(LM, lm, _LABELLED, "the whole GPUs' labeler")),
        },
        "base_labels": {**_where(LM, lm, raw), "suffixes": re.findall(r'"([a-z-]+)":', raw.group(1))},
        "product": {
            **product_rule(at, lm),
            "shared_part": {**_where(LM, lm, shared), "value": shared.group(1)},
            "mig_part": {**_where(LM, lm, mig), "value": mig.group(1)},
        },
        "memory_label": {**_where(LM, lm, memory), "suffix": memory.group(1)},
        "architecture_labels": {**_where(LM, lm, arch), "suffixes": list(arch.groups())},
        "families": families(at, lm),
        "sharing_strategies": sharing_strategies(at),
    }


def sharing_strategies(at: At) -> dict[str, Any]:
    """The ``.sharing-strategy`` values (api/config/v1/sharing.go), by Go name."""
    text = at.text(SHARING)
    found = list(_STRATEGY.finditer(text))
    if not found:
        raise at.fail(SHARING, "no SharingStrategy constants")
    return {**_where(SHARING, text, found[0]), "values": {m.group(1): m.group(2) for m in found}}


def _component(at: At, values: str, key: str) -> dict[str, Any]:
    """The image and version of one top-level block of the chart's values, with the version's line."""
    block = at.find(OPERATOR_VALUES, values, rf"^{key}:\n((?:[ #].*\n|\n)*)", f"the {key} values")
    image = re.search(r"^  image: (\S+)$", block.group(1), re.M)
    version = re.search(r"^  version: (v\d+\.\d+\.\d+)(\S*)$", block.group(1), re.M)
    if image is None or version is None:
        raise at.fail(OPERATOR_VALUES, f"{key}.image or {key}.version is not in a shape this script knows")
    line = _line(values, block.start(1) + version.start())
    return {
        "path": OPERATOR_VALUES,
        "line": line,
        "image": image.group(1),
        "version": version.group(1) + version.group(2),
    }


def operator_facts(source: Source) -> dict[str, Any]:
    """Per GPU Operator release: the device plugin and GFD its chart deploys."""
    found = {}
    for tag, commit, date in source.tags():
        if version_key(tag) < version_key(OPERATOR_FIRST):
            continue
        at = At(OPERATOR_REPOSITORY, tag, commit, source)
        values = at.text(OPERATOR_VALUES)
        found[tag] = {
            "commit": commit,
            "date": date,
            "device_plugin": _component(at, values, "devicePlugin"),
            "gfd": _component(at, values, "gfd"),
        }
    return found


def release_facts(at: At, date: str) -> dict[str, Any]:
    return {"release": at.tag, "commit": at.commit, "date": date, "names": name_facts(at), "gfd": gfd_facts(at)}


def extract(source: Source, operator: Source) -> dict[str, Any]:
    releases = [
        release_facts(At(REPOSITORY, tag, commit, source), date)
        for tag, commit, date in source.tags()
        if version_key(tag) >= version_key(FIRST)
    ]
    if not releases:
        raise ExtractError(f"{REPOSITORY}: no final release tag from {FIRST}")
    return {
        "about": (
            "The resource names NVIDIA's container device plugin advertises and the labels its GPU Feature "
            "Discovery sets, per release (tools/k8s_device_plugin_extract.py writes this file)"
        ),
        "repository": REPOSITORY,
        "license": LICENSE,
        "releases": releases,
        "operator_repository": OPERATOR_REPOSITORY,
        "operator_releases": operator_facts(operator),
    }


def load_inputs(prefix: str | Path) -> tuple[VendoredSource, VendoredSource]:
    prefix = Path(prefix)
    try:
        sidecar = json.loads(prefix.with_suffix(".json").read_text(encoding="utf-8"))
        blobs = read_blobs(prefix)
        plugin = VendoredSource(sidecar["repositories"][REPOSITORY]["tags"], blobs, {})
        return plugin, VendoredSource(sidecar["repositories"][OPERATOR_REPOSITORY]["tags"], blobs, {})
    except INPUT_ERRORS as error:
        raise ExtractError(f"{prefix}: not inputs this script wrote: {error}") from None


def _read_tags(recording: Recording, repository: str) -> dict[str, Any]:
    sidecar = recording.sidecar(repository, LICENSE)
    sidecar["tags"] = {t: row for t, row in sidecar["tags"].items() if TAG.match(t) and row["files"]}
    return sidecar


def write_inputs(prefix: Path, recording: Recording, operator: Recording) -> None:
    document = {
        "about": (
            "Upstream files the container variant's facts (data/k8s-device-plugin/releases.json) are extracted "
            "from, each blob once in the .tar.xz beside this file, named by its git blob id; per release tag its "
            "commit, date and the blob of each path read."
        ),
        "repositories": {
            REPOSITORY: _read_tags(recording, REPOSITORY),
            OPERATOR_REPOSITORY: _read_tags(operator, OPERATOR_REPOSITORY),
        },
    }
    prefix.parent.mkdir(parents=True, exist_ok=True)
    prefix.with_suffix(".json").write_text(json.dumps(document, indent=1) + "\n", encoding="utf-8")
    write_blobs(prefix, {**recording.blobs, **operator.blobs})


def shipped_dir() -> Path:
    from pciname.base.paths import data_dir

    return data_dir() / "k8s-device-plugin"


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m tools.k8s_device_plugin_extract", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--git", help=f"a {REPOSITORY} git repository (bare is fine)")
    parser.add_argument("--operator-git", help=f"a {OPERATOR_REPOSITORY} git repository (bare is fine)")
    add_extractor_options(parser, "k8s-device-plugin")
    args = parser.parse_args(argv)
    if (args.git is None) == (args.from_inputs is None):
        parser.error("give --git DIR or --from-inputs PREFIX")
    recordings = None
    try:
        if args.git is not None:
            if args.operator_git is None:
                raise ExtractError("--git needs --operator-git (the GPU Operator repository)")
            plugin = Recording(GitSource(args.git, since=version_key(FIRST)))
            operator = Recording(GitSource(args.operator_git, since=version_key(OPERATOR_FIRST)))
            recordings = plugin, operator
            document = extract(plugin, operator)
        else:
            document = extract(*load_inputs(args.from_inputs))
    except (ExtractError, subprocess.SubprocessError) as error:
        print(f"k8s_device_plugin_extract: error: {error}", file=sys.stderr)
        return 2
    out = args.out or shipped_dir()
    checked = publish(out, document, check=args.check)
    if checked is not None:
        return checked
    if recordings is not None and args.inputs is not None:
        write_inputs(args.inputs, *recordings)
    print(f"{out / 'releases.json'}: {len(document['releases'])} k8s-device-plugin releases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
