"""Maintainer script: extract the Cozystack release facts pciname ships
(``data/cozystack/releases.json`` and ``data/cozystack/schemas.json``) from
the history of a ``cozystack/cozystack`` git repository, every final
release tag ``vX.Y.Z`` from :data:`FIRST_RELEASE` on.

    python -m tools.cozystack_extract GIT_DIR [--inputs tests/data/cozystack-inputs]
    python -m tools.cozystack_extract --from-inputs tests/data/cozystack-inputs [--check]

``GIT_DIR`` may be a bare repository (files are read with ``git cat-file``).
``--inputs PREFIX`` also writes the upstream files the facts come from, each
distinct blob once, as ``PREFIX.tar.xz`` with the sidecar ``PREFIX.json``
(repository, and per tag its commit, date and the blob of each path);
``--from-inputs`` extracts from those instead of git, and ``--check``
compares with the shipped facts (exit 1 when they differ). A test does the
same, so shipped facts are always what this script writes.

For each release (every fact names its source path; the release is its key):

* its date (the tag commit's committer date) and commit;
* the GPU Operator chart it vendors (``Chart.yaml`` ``version``) and the
  sandbox device plugin release that chart deploys (its ``values.yaml``
  ``sandboxDevicePlugin.version``, unless Cozystack's wrapper values set
  ``gpu-operator.sandboxDevicePlugin.version``);
* the tenant ``Kubernetes`` node-group schema
  (``nodeGroups.additionalProperties`` of ``packages/apps/kubernetes/values.schema.json``)
  and the ``KubernetesNodes`` values schema, stored once each by digest,
  with the app's kind and plural (its ApplicationDefinition), API group and
  version (its Go API package) and whether the iaas bundle installs it;
* whether the iaas bundle wires GPUs into the KubeVirt CR, the variants it
  accepts (``bundles.iaas.gpuOperatorVariant``), for each variant which of
  ``gpu.permittedHostDevices``' lists it reads and which default table it
  puts in front, and the tables themselves.

Anything the script does not recognise is an error naming the release and
file: a changed template is never guessed at.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import yaml

from tools import upstream
from tools.upstream import (
    ExtractError,
    GitSource,
    Recording,
    VendoredSource,
    add_extractor_options,
    blob_id,
    dumps,
    read_blobs,
)

REPOSITORY = "cozystack/cozystack"
FIRST_RELEASE = (1, 0, 0)

CHART = "packages/system/gpu-operator/charts/gpu-operator/Chart.yaml"
CHART_VALUES = "packages/system/gpu-operator/charts/gpu-operator/values.yaml"
WRAPPER_VALUES = "packages/system/gpu-operator/values.yaml"
KUBERNETES_SCHEMA = "packages/apps/kubernetes/values.schema.json"
NODES_SCHEMA = "packages/apps/kubernetes-nodes/values.schema.json"
NODES_RD = "packages/system/kubernetes-nodes-rd/cozyrds/kubernetes-nodes.yaml"
NODES_API = "api/apps/v1alpha1/kubernetesnodes/types.go"
IAAS = "packages/core/platform/templates/bundles/iaas.yaml"
PLATFORM = "packages/core/platform"
NODES_PACKAGE = "cozystack.kubernetes-nodes-application"

#: Every upstream file the facts are read from (default tables: any
#: ``files/*.yaml`` the iaas bundle reads, see :func:`_wiring`).
PATHS = (CHART, CHART_VALUES, WRAPPER_VALUES, KUBERNETES_SCHEMA, NODES_SCHEMA, NODES_RD, NODES_API, IAAS)
TABLE_FILES = ("files/gpu-passthrough-defaults.yaml", "files/gpu-vgpu-defaults.yaml")

Reader = Callable[[str, str], "bytes | None"]


def digest(value: Any) -> str:
    """The id a schema is stored under: sha256 of its canonical JSON, 16 hex digits."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


# -- sources ----------------------------------------------------------------------


def vendored(prefix: str | Path) -> VendoredSource:
    """The source ``--inputs`` wrote at ``prefix`` (the test's input)."""
    prefix = Path(prefix)
    sidecar = json.loads(prefix.with_suffix(".json").read_text(encoding="utf-8"))
    return VendoredSource(sidecar["tags"], read_blobs(prefix), {})


# -- facts of one release ---------------------------------------------------------


def _yaml(data: bytes, where: str) -> Any:
    try:
        return _parsed(data)
    except yaml.YAMLError as error:
        raise ExtractError(f"{where}: not YAML: {error}") from None


@lru_cache(maxsize=64)
def _parsed(data: bytes) -> Any:
    """YAML of ``data``, parsed once per distinct file (most releases share
    theirs); callers only read it."""
    return yaml.load(data, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))


def _gpu_operator(tag: str, read: Callable[[str], bytes | None]) -> tuple[dict[str, Any], dict[str, Any]]:
    chart, values = read(CHART), read(CHART_VALUES)
    if chart is None or values is None:
        raise ExtractError(f"{tag}: no GPU Operator chart at {CHART}")
    version = _yaml(chart, f"{tag}:{CHART}").get("version")
    plugin_source = f"{CHART_VALUES} sandboxDevicePlugin.version"
    plugin = (_yaml(values, f"{tag}:{CHART_VALUES}").get("sandboxDevicePlugin") or {}).get("version")
    wrapper = read(WRAPPER_VALUES)
    if wrapper is not None:
        override = (
            ((_yaml(wrapper, f"{tag}:{WRAPPER_VALUES}") or {}).get("gpu-operator") or {}).get("sandboxDevicePlugin")
            or {}
        ).get("version")
        if override:
            plugin, plugin_source = override, f"{WRAPPER_VALUES} gpu-operator.sandboxDevicePlugin.version"
    if not isinstance(version, str) or not isinstance(plugin, str):
        raise ExtractError(f"{tag}: no chart version or sandboxDevicePlugin.version")
    return (
        {"version": version if version.startswith("v") else f"v{version}", "source": f"{CHART} version"},
        {"version": plugin if plugin.startswith("v") else f"v{plugin}", "source": plugin_source},
    )


def _node_group(tag: str, read: Callable[[str], bytes | None], schemas: dict[str, Any]) -> dict[str, Any]:
    data = read(KUBERNETES_SCHEMA)
    if data is None:
        raise ExtractError(f"{tag}: no {KUBERNETES_SCHEMA}")
    try:
        group = json.loads(data)["properties"]["nodeGroups"]["additionalProperties"]
    except (KeyError, TypeError, ValueError):
        raise ExtractError(f"{tag}: {KUBERNETES_SCHEMA} has no nodeGroups.additionalProperties") from None
    key = digest(group)
    schemas[key] = group
    return {"schema": key, "source": f"{KUBERNETES_SCHEMA} properties.nodeGroups.additionalProperties"}


def _kubernetes_nodes(
    tag: str, read: Callable[[str], bytes | None], iaas: str, schemas: dict[str, Any]
) -> dict[str, Any] | None:
    data = read(NODES_SCHEMA)
    if data is None:
        return None
    schema = json.loads(data)
    key = digest(schema)
    schemas[key] = schema
    rd, api = read(NODES_RD), read(NODES_API)
    if rd is None or api is None:
        raise ExtractError(f"{tag}: {NODES_SCHEMA} without {NODES_RD} or {NODES_API}")
    application = (_yaml(rd, f"{tag}:{NODES_RD}").get("spec") or {}).get("application") or {}
    text = api.decode()
    group = re.search(r"^// \+groupName=(\S+)$", text, re.M)
    version = re.search(r"^// \+versionName=(\S+)$", text, re.M)
    if not application.get("kind") or not application.get("plural") or group is None or version is None:
        raise ExtractError(f"{tag}: no kind, plural, groupName or versionName for KubernetesNodes")
    return {
        "schema": key,
        "source": NODES_SCHEMA,
        "api_version": f"{group.group(1)}/{version.group(1)}",
        "kind": application["kind"],
        "plural": application["plural"],
        "release_prefix": ((_yaml(rd, f"{tag}:{NODES_RD}").get("spec") or {}).get("release") or {}).get("prefix", ""),
        "kind_source": f"{NODES_RD} spec.application, spec.release.prefix; {NODES_API} +groupName, +versionName",
        "installed_by_iaas_bundle": f'"{NODES_PACKAGE}"' in iaas,
        "installed_source": f"{IAAS} include of {NODES_PACKAGE}",
    }


# The iaas bundle's GPU wiring, as Helm template actions.
_ACTION = re.compile(r"\{\{-?\s*(.*?)\s*-?\}\}", re.S)
_VARIANT_VAR = re.compile(r"^\$(\w+) := \.Values\.bundles\.iaas\.gpuOperatorVariant \| default \"([^\"]+)\"$")
_USER_LIST = re.compile(r"^\$(\w+) := default \(list\) \(+\.Values\.gpu\)\.permittedHostDevices\)\.(\w+)\)$")
_TABLE_VAR = re.compile(r"^\$(\w+) := \$\.Files\.Get \"([^\"]+)\" \| fromYaml$")
_CONCAT = re.compile(r"^\$(\w+) = concat \$\1 \$(\w+)((?:\.\w+)*)$")
_LIST_VAR = re.compile(r"^\$(\w+) := list$")
_SET_LIST = re.compile(r"^\$_ := set \$permitted \"(\w+)\" \$(\w+)$")


def _wiring(tag: str, iaas: str, read: Callable[[str], bytes | None], tables: dict[str, Any]) -> dict[str, Any] | None:
    """What the iaas bundle does with ``gpu.permittedHostDevices`` (None: nothing)."""
    actions = [m.group(1) for m in _ACTION.finditer(iaas) if not m.group(1).startswith("/*")]
    variant_var = default = None
    for a in actions:
        m = _VARIANT_VAR.match(a)
        if m:
            variant_var, default = m.group(1), m.group(2)
    if variant_var is None:
        if "permittedHostDevices" in iaas or "gpuOperatorVariant" in iaas:
            raise ExtractError(f"{tag}: {IAAS} mentions GPU wiring in a way this script does not know")
        return None
    eq = re.compile(r"eq \$" + variant_var + r' "([^"]+)"')
    accepted: list[str] = []
    for a in actions:
        if a.startswith("if not (or") and eq.search(a):
            accepted = eq.findall(a)
    if not accepted or default not in accepted:
        raise ExtractError(f"{tag}: {IAAS}: no check of the accepted variants")
    lists = _Lists(
        user={m.group(1): m.group(2) for a in actions if (m := _USER_LIST.match(a))},
        files={m.group(1): m.group(2) for a in actions if (m := _TABLE_VAR.match(a))},
        list_of={m.group(2): m.group(1) for a in actions if (m := _SET_LIST.match(a))},
    )
    branches = _branches(tag, actions, variant_var)
    variants: dict[str, Any] = {}
    for variant in accepted:
        body = branches.get(variant, branches.get(""))
        if body is None:
            raise ExtractError(f"{tag}: {IAAS}: variant {variant} has no branch")
        variants[variant] = _variant(tag, body, lists, read, tables)
    return {"source": IAAS, "default_variant": default, "variants": variants}


@dataclass
class _Lists:
    """The bundle's variables: the user's lists ($var -> pciHostDevices or
    mediatedDevices of gpu.permittedHostDevices), the default tables' files
    ($var -> file) and the lists it sets ($pci -> pciHostDevices)."""

    user: dict[str, str]
    files: dict[str, str]
    list_of: dict[str, str]


def _branches(tag: str, actions: list[str], variant_var: str) -> dict[str, list[str]]:
    """The actions of each branch of the ``if eq $variant "X"`` chain, by
    variant ("": the final else)."""
    branches: dict[str, list[str]] = {}
    current: list[str] | None = None
    depth = 0
    names: list[str] = []
    for a in actions:
        head = a.split(" ", 1)[0]
        if current is None:
            m = re.match(r"^if eq \$" + variant_var + r' "([^"]+)"$', a)
            if m:
                names, current, depth = [m.group(1)], [], 0
            continue
        if head in ("if", "range", "with", "define", "block"):
            depth += 1
        elif head == "end":
            if depth == 0:
                branches[names[-1]] = current
                break
            depth -= 1
        elif head == "else" and depth == 0:
            branches[names[-1]] = current
            m = re.match(r"^else if eq \$" + variant_var + r' "([^"]+)"$', a)
            names.append(m.group(1) if m else "")
            current = []
            continue
        current.append(a)
    else:
        raise ExtractError(f"{tag}: {IAAS}: no if/else on the GPU variant")
    return branches


def _variant(
    tag: str, body: list[str], lists: _Lists, read: Callable[[str], bytes | None], tables: dict[str, Any]
) -> dict[str, Any]:
    """One variant's branch: the user's lists it reads, the default tables it adds (each into ``tables``)."""
    reads: list[str] = []
    defaults: list[dict[str, Any]] = []
    condition: list[str] = []
    for a in body:
        if a.startswith("if "):
            condition.append(a)
        elif a == "end" and condition:
            condition.pop()
        m = _CONCAT.match(a)
        if not m:
            continue
        target, var, field = m.group(1), m.group(2), m.group(3).lstrip(".")
        if target not in lists.list_of:
            raise ExtractError(f"{tag}: {IAAS}: ${target} is not a permittedHostDevices list")
        if var in lists.user and not field:
            reads.append(lists.user[var])
        elif var in lists.files and field:
            path = f"{PLATFORM}/{lists.files[var]}"
            data = read(path)
            if data is None:
                raise ExtractError(f"{tag}: {path} is read by the bundle but missing")
            table = _table(tag, path, data, field, lists.list_of[target])
            tables[table["id"]] = table
            when = " ".join(condition)
            defaults.append(
                {
                    "table": table["id"],
                    "list": lists.list_of[target],
                    "unless_replace_defaults": "not $replace" in when,
                    "needs_vgpu_device_manager": "$deviceManagerOn" in when,
                }
            )
        else:
            raise ExtractError(f"{tag}: {IAAS}: concat of ${var}{m.group(3)} is not understood")
    return {"reads": sorted(set(reads)), "defaults": defaults}


_LIST_FIELDS = {"pciHostDevices": "pciVendorSelector", "mediatedDevices": "mdevNameSelector"}


def _table(tag: str, path: str, data: bytes, field: str, kind: str) -> dict[str, Any]:
    node = _yaml(data, f"{tag}:{path}")
    for part in field.split("."):
        node = node.get(part) if isinstance(node, dict) else None
    if not isinstance(node, list):
        raise ExtractError(f"{tag}: {path}: {field} is not a list")
    selector = _LIST_FIELDS[kind]
    entries = []
    for item in node:
        if (
            not isinstance(item, dict)
            or not isinstance(item.get(selector), str)
            or not isinstance(item.get("resourceName"), str)
        ):
            raise ExtractError(f"{tag}: {path}: an entry of {field} has no {selector} or resourceName")
        entries.append(
            {
                "selector": item[selector],
                "resourceName": item["resourceName"],
                "externalResourceProvider": item.get("externalResourceProvider") is True,
            }
        )
    blob = blob_id(data)
    return {
        "id": f"{path.rpartition('/')[2]}@{blob[:10]}",
        "path": path,
        "blob": blob,
        "field": field,
        "list": kind,
        "entries": entries,
    }


def extract(source: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """(releases document, schemas document) from ``source``."""
    releases: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    tables: dict[str, Any] = {}
    for tag, commit, date in source.tags():

        def read(path: str, commit: str = commit) -> bytes | None:
            data: bytes | None = source.read(commit, path)
            return data

        iaas_bytes = read(IAAS)
        if iaas_bytes is None:
            raise ExtractError(f"{tag}: no {IAAS}")
        iaas = iaas_bytes.decode()
        operator, plugin = _gpu_operator(tag, read)
        releases[tag] = {
            "date": date,
            "commit": commit,
            "gpu_operator": operator,
            "sandbox_device_plugin": plugin,
            "node_group": _node_group(tag, read, schemas),
            "kubernetes_nodes": _kubernetes_nodes(tag, read, iaas, schemas),
            "gpu_wiring": _wiring(tag, iaas, read, tables),
        }
    document = {
        "about": (
            "Facts about Cozystack releases that pciname writes for, one entry per final release tag, extracted "
            "from the cozystack/cozystack git history by `python -m tools.cozystack_extract` (do not edit "
            "by hand). Each fact names its source path at the release's commit. Schemas are in schemas.json by id."
        ),
        "repository": REPOSITORY,
        "releases": releases,
        "tables": dict(sorted(tables.items())),
    }
    return document, {
        "about": "Cozystack values schemas by id (see releases.json)",
        "schemas": dict(sorted(schemas.items())),
    }


def write_inputs(prefix: Path, recording: Recording) -> None:
    rows = {
        tag: {"commit": commit, "date": date, "files": dict(sorted(recording.files.get(commit, {}).items()))}
        for tag, commit, date in recording.tags()
    }
    sidecar = {
        "about": (
            "Upstream files the Cozystack facts are extracted from (Apache-2.0, cozystack/cozystack), each blob "
            "once in the .tar.xz beside this file, named by its git blob id; per release tag its commit, date "
            "and the blob of each path read (null: absent)."
        ),
        "repository": REPOSITORY,
        "license": "Apache-2.0",
        "tags": rows,
    }
    upstream.write_inputs(prefix, sidecar, recording.blobs)


README_SECTION = "### Cozystack releases"


def update_readme(readme: Path) -> bool:
    """Rewrite the table of releases in ``readme``'s Cozystack releases
    section from the shipped facts (True: it changed)."""
    from pciname.cozystack import releases as cozystack

    cozystack._documents.cache_clear()
    cozystack.releases.cache_clear()
    text = readme.read_text(encoding="utf-8")
    head, sep, rest = text.partition(README_SECTION)
    if not sep:
        return False
    lines = rest.split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("| ")), None)
    if first is None:
        return False
    last = first
    while last < len(lines) and lines[last].startswith("| "):
        last += 1
    table = cozystack.release_table().rstrip("\n").split("\n")
    new = head + sep + "\n".join(lines[:first] + table + lines[last:])
    if new == text:
        return False
    readme.write_text(new, encoding="utf-8")
    return True


def shipped_dir() -> Path:
    return upstream.shipped_dir("cozystack")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.cozystack_extract", description=__doc__.split("\n\n")[0])
    parser.add_argument("git_dir", nargs="?", help="a cozystack/cozystack git repository (bare is fine)")
    add_extractor_options(parser, "cozystack")
    args = parser.parse_args(argv)
    if (args.git_dir is None) == (args.from_inputs is None):
        parser.error("give GIT_DIR or --from-inputs PREFIX")
    recording = None
    source: Any
    if args.from_inputs is not None:
        source = vendored(args.from_inputs)
    else:
        recording = source = Recording(GitSource(args.git_dir, since=FIRST_RELEASE))
    try:
        releases, schemas = extract(source)
    except ExtractError as error:
        print(f"cozystack_extract: error: {error}", file=sys.stderr)
        return 2
    out = args.out or shipped_dir()
    files = {"releases.json": dumps(releases), "schemas.json": dumps(schemas)}
    if args.check:
        stale = [
            name
            for name, text in files.items()
            if not (out / name).is_file() or (out / name).read_text(encoding="utf-8") != text
        ]
        print(f"{out}: {'STALE: ' + ', '.join(stale) if stale else 'up to date'}")
        return 1 if stale else 0
    out.mkdir(parents=True, exist_ok=True)
    for name, text in files.items():
        (out / name).write_text(text, encoding="utf-8")
    if args.out is None:
        readme = out.parent.parent / "docs" / "passthrough.md"
        if readme.is_file() and update_readme(readme):
            print(f"{readme}: the table of Cozystack releases rewritten")
    if recording is not None and args.inputs is not None:
        write_inputs(args.inputs, recording)
    print(
        f"{out}: {len(releases['releases'])} releases, {len(schemas['schemas'])} schemas, {len(releases['tables'])} tables"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
