"""Maintainer script: extract HAMi's per-release facts (``data/hami/releases.json``)
from the git history of ``Project-HAMi/HAMi`` (every final tag ``vX.Y.Z``
from v2.4.0) and, for the HAMi-core commit each release pins as its
``libvgpu`` submodule, from ``Project-HAMi/HAMi-core``.

    python -m tools.hami_extract --git HAMI_DIR --core-git HAMI_CORE_DIR --cozystack-git COZYSTACK_DIR \
        [--inputs tests/data/hami-inputs]
    python -m tools.hami_extract --from-inputs tests/data/hami-inputs [--check]

``--inputs``/``--from-inputs``/``--check`` as in :mod:`tools.kata_extract`:
the files read are vendored (each blob once) so a test re-runs the script
and compares with the shipped facts.

Per HAMi release, from its chart (``charts/hami/``) and code:

* ``names``: the top-level values ``resourceName``, ``resourceMem``,
  ``resourceMemPercentage``, ``resourceCores``, ``resourcePriority``;
* ``node_selector``: the ``devicePlugin`` values key that
  ``templates/device-plugin/daemonsetnvidia.yaml`` reads for the DaemonSet's
  ``nodeSelector`` (it changes case at v2.8.0) and that key's value;
* ``device_split_count``: ``devicePlugin.deviceSplitCount``;
* ``defaults``: the scheduler's ``defaultMemory``/``defaultCores``
  (``templates/scheduler/device-configmap.yaml``, or ``scheduler.defaultMem``
  and ``defaultCores`` in ``values.yaml`` before that file held them), and
  whether ``pkg/device/nvidia/device.go`` turns a request with neither
  ``gpumem`` nor ``gpumem-percentage`` into 100 per cent of the memory;
* ``libvgpu``: the submodule's commit and, when HAMi-core's mirror holds it,
  how each function that looks up the real ``dlsym`` does it: the
  ``dlvsym`` versions it tries, in order, and whether its fallback calls
  glibc's private ``_dl_sym`` (``src/libvgpu.c``: ``dlsym``, ``preInit``;
  ``src/nvml/hook.c``: ``load_nvml_libraries``).

Per Cozystack release (``cozystack/cozystack``, every final tag from v1.0.0):
the HAMi its chart ``packages/system/hami/charts/hami/Chart.yaml`` ships
(``appVersion``; none without the chart), the values key the tenant
Kubernetes app's ``templates/helmreleases/hami.yaml`` switches HAMi on with
(``addons.hami.enabled``), and the rows of the image table in
``packages/system/hami/README.md`` (Cozystack's own, to compare with the code).

Each fact names its file. A shape the script does not know is an error
naming the release and file: nothing is guessed. A submodule commit the
HAMi-core mirror does not hold is recorded as such (``code: null``).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tools import upstream
from tools.upstream import (
    TAG,
    At,
    ExtractError,
    GitSource,
    Recording,
    Source,
    VendoredSource,
    add_extractor_options,
    line_of,
    publish,
    version_key,
)

REPOSITORY = "Project-HAMi/HAMi"
CORE_REPOSITORY = "Project-HAMi/HAMi-core"
LICENSE = "Apache-2.0"
FIRST = "v2.4.0"
COZYSTACK_REPOSITORY = "cozystack/cozystack"
COZYSTACK_FIRST = "v1.0.0"
COZY_CHART = "packages/system/hami/charts/hami/Chart.yaml"
COZY_SWITCH = "packages/apps/kubernetes/templates/helmreleases/hami.yaml"
COZY_README = "packages/system/hami/README.md"
CHART = "charts/hami/"
VALUES = CHART + "values.yaml"
DAEMONSET = CHART + "templates/device-plugin/daemonsetnvidia.yaml"
DEVICE_CONFIG = CHART + "templates/scheduler/device-configmap.yaml"
DEVICE_GO = "pkg/device/nvidia/device.go"
SUBMODULE = "libvgpu"
#: A path whose "listing" is the commit a submodule (gitlink) pins.
GITLINK = SUBMODULE + "#gitlink"
NAME_KEYS = ("resourceName", "resourceMem", "resourceMemPercentage", "resourceCores", "resourcePriority")
#: (file, function) of HAMi-core that look up the real dlsym.
DLSYM_LOOKUPS = (("src/libvgpu.c", "dlsym"), ("src/libvgpu.c", "preInit"), ("src/nvml/hook.c", "load_nvml_libraries"))

_SELECTOR = re.compile(r"nodeSelector: \{\{ toYaml \.Values\.devicePlugin\.(\w+) ")
_DEFAULT = re.compile(r"^\s+(defaultMemory|defaultCores): (\d+)\s*$", re.M)
_SPLIT = re.compile(r"^\s+deviceSplitCount: (\d+|\{\{ \.Values\.devicePlugin\.deviceSplitCount \}\})\s*$", re.M)
_WHOLE_MEMORY = re.compile(r"if mempnum == 101 && memnum == 0 \{(?:.*\n){1,5}?\s*mempnum = 100\n")
_VERSION = re.compile(r'"(GLIBC_[0-9.]+)"')
_DL_SYM_CALL = re.compile(r"\b_dl_sym\s*\(")


class HamiGitSource(GitSource):
    """A git source that also lists a submodule's pinned commit (path ``X#gitlink``)."""

    def listdir(self, commit: str, path: str) -> list[str] | None:
        if not path.endswith("#gitlink"):
            return super().listdir(commit, path)
        done = self._git("ls-tree", commit, "--", path.removesuffix("#gitlink"), check=False)
        fields = done.stdout.decode().split()
        return [fields[2]] if done.returncode == 0 and fields[:2] == ["160000", "commit"] else None


class CoreGitSource(GitSource):
    """HAMi-core read at the commits HAMi pins (no tags of its own are read)."""

    def tags(self) -> list[tuple[str, str, str]]:
        return []

    def has(self, commit: str) -> bool:
        return self._git("cat-file", "-e", f"{commit}^{{commit}}", check=False).returncode == 0

    def head(self) -> tuple[str, str] | None:
        """(commit, committer date) of the main branch, None without one."""
        done = self._git("log", "-1", "--format=%H %cs", "refs/heads/main", check=False)
        return (done.stdout.decode().split()[0], done.stdout.decode().split()[1]) if done.returncode == 0 else None


def chart_facts(at: At) -> dict[str, Any]:
    """One release's names, node selector and split count (values.yaml, the DaemonSet)."""
    values = yaml.safe_load(at.text(VALUES))
    if not isinstance(values, dict) or not isinstance(values.get("devicePlugin"), dict):
        raise at.fail(VALUES, "no devicePlugin values")
    missing = [k for k in NAME_KEYS if not isinstance(values.get(k), str)]
    if missing:
        raise at.fail(VALUES, f"no {', '.join(missing)}")
    daemonset = at.text(DAEMONSET)
    key = at.find(DAEMONSET, daemonset, _SELECTOR.pattern, "the nodeSelector's values key")
    selector = values["devicePlugin"].get(key.group(1))
    if not isinstance(selector, dict):
        raise at.fail(VALUES, f"devicePlugin.{key.group(1)} is not a map")
    split_path, split = split_count(at, values)
    return {
        "names": {"path": VALUES, **{k: values[k] for k in NAME_KEYS}},
        "node_selector": {
            "path": DAEMONSET,
            "line": line_of(daemonset, key.start(1)),
            "values_key": f"devicePlugin.{key.group(1)}",
            "labels": {str(k): str(v) for k, v in selector.items()},
        },
        "device_split_count": {"path": split_path, "value": split},
        "_values": values,
    }


def split_count(at: At, values: dict[str, Any]) -> tuple[str, int]:
    """The scheduler's deviceSplitCount: written in its device config, or the values it reads there."""
    config = at.maybe(DEVICE_CONFIG)
    m = _SPLIT.search(config) if config is not None else None
    if m is not None and m.group(1).isdigit():
        return DEVICE_CONFIG, int(m.group(1))
    split = values["devicePlugin"].get("deviceSplitCount")
    if not isinstance(split, int):
        raise at.fail(VALUES, "devicePlugin.deviceSplitCount is not a number")
    return VALUES, split


def default_facts(at: At, values: dict[str, Any]) -> dict[str, Any]:
    """The scheduler's defaults when gpumem or gpucores is left out."""
    config = at.maybe(DEVICE_CONFIG)
    found = dict(_DEFAULT.findall(config)) if config is not None else {}
    if len(found) == 2:
        source, memory, cores = DEVICE_CONFIG, int(found["defaultMemory"]), int(found["defaultCores"])
    else:
        scheduler = values.get("scheduler")
        if not isinstance(scheduler, dict) or not {"defaultMem", "defaultCores"} <= scheduler.keys():
            raise at.fail(VALUES, "no defaultMemory/defaultCores in either place this script knows")
        source, memory, cores = VALUES, int(scheduler["defaultMem"]), int(scheduler["defaultCores"])
    device = at.text(DEVICE_GO)
    whole = _WHOLE_MEMORY.search(device)
    if whole is None:
        raise at.fail(DEVICE_GO, "the memory default is not in a shape this script knows")
    return {
        "path": source,
        "memory_mb": memory,
        "cores": cores,
        "whole_memory_when_unset": {"path": DEVICE_GO, "line": line_of(device, whole.start()), "percent": 100},
    }


def c_function(at: At, path: str, text: str, name: str) -> tuple[int, str] | None:
    """(line, body) of C function ``name`` defined in ``text`` (braces matched), or None."""
    m = re.search(r"^[\w \t\*]*\b" + re.escape(name) + r"\s*\([^;{]*\)\s*\{", text, re.M)
    if m is None:
        return None
    depth, i = 1, m.end()
    while depth and i < len(text):
        depth += {"{": 1, "}": -1}.get(text[i], 0)
        i += 1
    if depth:
        raise at.fail(path, f"function {name} has no end")
    return line_of(text, m.start()), text[m.end() : i - 1]


def core_facts(at: At) -> list[dict[str, Any]]:
    """How each HAMi-core function that looks up the real dlsym does it."""
    lookups = []
    for path, name in DLSYM_LOOKUPS:
        found = c_function(at, path, at.text(path), name)
        if found is None:
            raise at.fail(path, f"no function {name}")
        line, body = found
        code = "\n".join(re.sub(r"//.*$", "", raw) for raw in body.splitlines())
        lookups.append(
            {
                "path": path,
                "function": name,
                "line": line,
                "dlvsym_versions": _VERSION.findall(code),
                "falls_back_to_dl_sym": _DL_SYM_CALL.search(code) is not None,
            }
        )
    return lookups


def libvgpu_facts(at: At, core: Source | None) -> dict[str, Any]:
    pinned = at.source.listdir(at.commit, GITLINK)
    if not pinned:
        raise at.fail(SUBMODULE, "not a submodule")
    commit = pinned[0]
    facts: dict[str, Any] = {"repository": CORE_REPOSITORY, "commit": commit, "code": None}
    core_at = At(CORE_REPOSITORY, f"{commit[:7]} (libvgpu of HAMi {at.tag})", commit, core) if core else None
    if core_at is not None and core_at.source.listdir(commit, "src") is not None:
        facts["code"] = core_facts(core_at)
    else:
        facts["missing"] = f"{CORE_REPOSITORY} does not hold this commit"
        facts["inferred"] = _inferred(at, commit, core)
    return facts


def _inferred(at: At, commit: str, core: Source | None) -> dict[str, Any] | None:
    """For a pinned commit the HAMi-core source lacks: the lookups of HAMi-core's
    main branch as read (inferred, not read: the pinned commit is taken to keep them),
    with the dates that are the evidence."""
    head = core.head() if core is not None and hasattr(core, "head") else None
    if head is None or core is None:
        return None
    dated = next((date for tag, _, date in at.source.tags() if tag == at.tag), "")
    evidence = (
        f"{commit[:7]} is not in {CORE_REPOSITORY} as read; its main branch is read at {head[0][:7]} ({head[1]}), "
        f"before HAMi {at.tag} ({dated}) pinned {commit[:7]}: HAMi-core's code at the pinned commit is inferred "
        "to find dlsym as main did"
    )
    main = At(CORE_REPOSITORY, f"{head[0][:7]} (main, for HAMi {at.tag})", head[0], core)
    return {"from": head[0], "date": head[1], "evidence": evidence, "code": core_facts(main)}


def release_facts(at: At, core: Source | None) -> dict[str, Any]:
    chart = chart_facts(at)
    values = chart.pop("_values")
    return {
        "release": at.tag,
        "commit": at.commit,
        **chart,
        "defaults": default_facts(at, values),
        "libvgpu": libvgpu_facts(at, core),
    }


def extract(source: Source, core: Source | None, cozystack: Source | None = None) -> dict[str, Any]:
    releases = [
        release_facts(At(REPOSITORY, tag, commit, source), core)
        for tag, commit, _ in source.tags()
        if version_key(tag) >= version_key(FIRST)
    ]
    if not releases:
        raise ExtractError(f"{REPOSITORY}: no final release tag from {FIRST}")
    return {
        "about": (
            "HAMi's resource names, device-plugin node selector, split count, defaults and the HAMi-core commit "
            "(and how it finds the real dlsym), per release (tools/hami_extract.py writes this file)"
        ),
        "repository": REPOSITORY,
        "license": LICENSE,
        "releases": releases,
        "cozystack": {
            "repository": COZYSTACK_REPOSITORY,
            "releases": [] if cozystack is None else cozystack_releases(cozystack, [r["release"] for r in releases]),
        },
    }


def cozystack_facts(at: At) -> dict[str, Any]:
    """The HAMi one Cozystack release ships, the values key that turns it on
    in a tenant cluster and the rows of its README's image table."""
    chart, switch = at.maybe(COZY_CHART), at.maybe(COZY_SWITCH)
    facts: dict[str, Any] = {"release": at.tag, "commit": at.commit, "hami": None}
    if chart is None and switch is None:
        return facts
    if chart is None or switch is None:
        raise at.fail(COZY_CHART if chart is None else COZY_SWITCH, "missing beside the other")
    version = at.find(COZY_CHART, chart, r'^appVersion: "?v?(\d+\.\d+\.\d+)"?\s*$', "appVersion")
    key = at.find(COZY_SWITCH, switch, r"^\{\{-? if (?:and )?\.Values\.(addons\.hami\.enabled)\b", "the HAMi switch")
    facts["hami"] = "v" + version.group(1)
    facts["chart"] = {"path": COZY_CHART, "line": line_of(chart, version.start())}
    facts["switch"] = {"path": COZY_SWITCH, "line": line_of(switch, key.start()), "values_key": key.group(1)}
    readme = at.maybe(COZY_README) or ""
    header = re.search(r"^\| Distribution +\| glibc +\| Result +\|\n\|[-| ]+\|\n((?:\|.*\|\n)+)", readme, re.M)
    rows = [
        [cell.strip() for cell in row.strip("|").split("|")] for row in (header.group(1) if header else "").split("\n")
    ]
    facts["image_table"] = {
        "path": COZY_README,
        "line": line_of(readme, header.start()) if header else None,
        "rows": [row for row in rows if len(row) == 3],
    }
    return facts


def cozystack_releases(cozystack: Source, hami: list[str]) -> list[dict[str, Any]]:
    """Every Cozystack release's facts; a HAMi shipped that is no release read is an error."""
    rows = []
    for tag, commit, _ in cozystack.tags():
        if version_key(tag) < version_key(COZYSTACK_FIRST):
            continue
        at = At(COZYSTACK_REPOSITORY, tag, commit, cozystack)
        facts = cozystack_facts(at)
        if facts["hami"] is not None and facts["hami"] not in hami:
            raise at.fail(COZY_CHART, f"HAMi {facts['hami']} is no release of {REPOSITORY} from {FIRST}")
        rows.append(facts)
    return rows


class _CoreRecording(Recording):
    """A recording of HAMi-core whose "tags" are the commits read (and its main branch's head)."""

    def head(self) -> tuple[str, str] | None:
        found: tuple[str, str] | None = self.source.head()  # type: ignore[attr-defined]
        self.head_row = found
        return found

    def sidecar(self, repository: str, license: str) -> dict[str, Any]:
        commits = sorted(set(self.files) | set(self.trees))
        head = getattr(self, "head_row", None)
        return {
            "repository": repository,
            "license": license,
            "head": None if head is None else {"commit": head[0], "date": head[1]},
            "tags": {
                commit: {
                    "commit": commit,
                    "date": "",
                    "files": dict(sorted(self.files.get(commit, {}).items())),
                    "trees": dict(sorted(self.trees.get(commit, {}).items())),
                }
                for commit in commits
            },
        }


class _CoreVendored(VendoredSource):
    def __init__(self, rows: dict[str, Any], blobs: dict[str, bytes], head: dict[str, str] | None) -> None:
        super().__init__(rows, blobs, {})
        self.head_row = head

    def head(self) -> tuple[str, str] | None:
        return None if self.head_row is None else (self.head_row["commit"], self.head_row["date"])

    def listdir(self, commit: str, path: str) -> list[str] | None:
        if not any(row["commit"] == commit for row in self.rows.values()):
            return None  # a commit the mirror did not hold when the inputs were written
        return super().listdir(commit, path)


class _CoreGit(CoreGitSource):
    def listdir(self, commit: str, path: str) -> list[str] | None:
        return super().listdir(commit, path) if self.has(commit) else None


def load_inputs(prefix: str | Path) -> tuple[VendoredSource, VendoredSource, VendoredSource]:
    def build(
        sidecar: dict[str, Any], blobs: dict[str, bytes]
    ) -> tuple[VendoredSource, VendoredSource, VendoredSource]:
        repositories = sidecar["repositories"]
        hami = VendoredSource(repositories[REPOSITORY]["tags"], blobs, {})
        cozystack = VendoredSource(repositories[COZYSTACK_REPOSITORY]["tags"], blobs, {})
        core = repositories[CORE_REPOSITORY]
        return hami, _CoreVendored(core["tags"], blobs, core.get("head")), cozystack

    return upstream.load_inputs(prefix, build)


def write_inputs(prefix: Path, recording: Recording, core: Recording, cozystack: Recording) -> None:
    sidecar = recording.sidecar(REPOSITORY, LICENSE)
    sidecar["tags"] = {t: row for t, row in sidecar["tags"].items() if TAG.match(t) and row["files"]}
    cozy = cozystack.sidecar(COZYSTACK_REPOSITORY, LICENSE)
    cozy["tags"] = {t: row for t, row in cozy["tags"].items() if TAG.match(t) and row["files"]}
    document = {
        "about": (
            "Upstream files the HAMi facts (data/hami/releases.json) are extracted from, each blob once in the "
            ".tar.xz beside this file, named by its git blob id; per HAMi release tag its commit, date, the blob "
            "of each path read and the libvgpu submodule's commit; per HAMi-core commit the blobs read; per "
            "Cozystack release tag the blobs read (null: absent)."
        ),
        "repositories": {
            REPOSITORY: sidecar,
            CORE_REPOSITORY: core.sidecar(CORE_REPOSITORY, LICENSE),
            COZYSTACK_REPOSITORY: cozy,
        },
    }
    upstream.write_inputs(prefix, document, {**recording.blobs, **core.blobs, **cozystack.blobs})


def shipped_dir() -> Path:
    return upstream.shipped_dir("hami")


def _sources(args: Any) -> tuple[tuple[Source, Source, Source], tuple[Recording, Recording, Recording] | None]:
    """The HAMi, HAMi-core and Cozystack sources, and the recordings of them when read from git."""
    if args.git is None:
        return load_inputs(args.from_inputs), None
    if args.core_git is None or args.cozystack_git is None:
        raise ExtractError("--git needs --core-git (HAMi-core) and --cozystack-git (Cozystack)")
    recordings = (
        Recording(HamiGitSource(args.git, since=version_key(FIRST))),
        _CoreRecording(_CoreGit(args.core_git)),
        Recording(GitSource(args.cozystack_git, since=version_key(COZYSTACK_FIRST))),
    )
    return recordings, recordings


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.hami_extract", description=__doc__.split("\n\n")[0])
    parser.add_argument("--git", help=f"a {REPOSITORY} git repository (bare is fine)")
    parser.add_argument("--core-git", help=f"a {CORE_REPOSITORY} git repository (bare is fine)")
    parser.add_argument("--cozystack-git", help=f"a {COZYSTACK_REPOSITORY} git repository (bare is fine)")
    add_extractor_options(parser, "hami")
    args = parser.parse_args(argv)
    if (args.git is None) == (args.from_inputs is None):
        parser.error("give --git DIR --core-git DIR --cozystack-git DIR or --from-inputs PREFIX")
    try:
        sources, recordings = _sources(args)
        document = extract(*sources)
    except (ExtractError, subprocess.SubprocessError) as error:
        print(f"hami_extract: error: {error}", file=sys.stderr)
        return 2
    out = args.out or shipped_dir()
    checked = publish(out, document, check=args.check)
    if checked is not None:
        return checked
    if recordings is not None and args.inputs is not None:
        write_inputs(args.inputs, *recordings)
    cozystack = document["cozystack"]["releases"]
    print(f"{out / 'releases.json'}: {len(document['releases'])} HAMi releases, {len(cozystack)} Cozystack releases")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
