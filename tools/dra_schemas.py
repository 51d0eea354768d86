"""Maintainer script: extract the OpenAPI schemas the ``vm-gpus --dra`` output
is validated against (``tests/kubevirt/test_dra_schemas.py``) into
``tests/data/dra-schemas.json.xz``, with the sidecar
``tests/data/dra-schemas.source.json`` naming every source.

    python -m tools.dra_schemas --kubectl-validate-git DIR --kubevirt-git DIR [--out tests/data/dra-schemas]

* Kubernetes: the OpenAPI v3 document of each ``resource.k8s.io`` version
  pciname writes (:data:`pciname.dra.facts.RESOURCE_APIS`), for every
  Kubernetes minor that serves all of them. kubernetes/kubernetes itself is
  too large to mirror here; kubernetes-sigs/kubectl-validate vendors its
  ``api/openapi-spec/v3/apis__resource.k8s.io__<v>_openapi.json`` verbatim
  (``cmd/download-builtin-schemas``: GitHub's contents API at
  ``ref=release-1.<minor>``) as ``pkg/openapiclient/builtins/1.<minor>/apis/
  resource.k8s.io/<v>.json``; the sidecar names both. Kept: every schema
  reachable from ``io.k8s.api.resource.<v>.ResourceClaimTemplate`` and
  ``...DeviceClass``, verbatim.
* KubeVirt: ``api/openapi-spec/swagger.json`` (Swagger 2.0) at each release
  tag that works with a DRA driver release in ``data/dra/releases.json``.
  Kept, verbatim: the definitions on the path of the VM fragment
  (``v1.VirtualMachine`` ... ``v1.Devices``) and every definition reachable
  from ``v1.GPU`` and from the ``resourceClaims`` items (``k8s.io.api.core.
  v1.PodResourceClaim`` up to v1.8, ``v1.VirtualMachineInstanceResourceClaim``
  from v1.9) and from ``metadata`` (ObjectMeta). Other references stay
  dangling: the test makes them stubs.

Both projects are Apache-2.0. The git directories may be bare.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import lzma
import subprocess
import sys
from pathlib import Path
from typing import Any

from pciname.dra.facts import RESOURCE_APIS, facts

KUBERNETES = "kubernetes/kubernetes"
KUBECTL_VALIDATE = "kubernetes-sigs/kubectl-validate"
KUBEVIRT = "kubevirt/kubevirt"
LICENCE = "Apache-2.0"
BUILTINS = "pkg/openapiclient/builtins"
K8S_PATH = "api/openapi-spec/v3/apis__resource.k8s.io__{api}_openapi.json"
KUBEVIRT_PATH = "api/openapi-spec/swagger.json"
K8S_ROOTS = ("ResourceClaimTemplate", "DeviceClass")
#: The VM fragment's path: definition, property leading on.
VM_PATH = (
    ("v1.VirtualMachine", "spec"),
    ("v1.VirtualMachineSpec", "template"),
    ("v1.VirtualMachineInstanceTemplateSpec", "spec"),
    ("v1.VirtualMachineInstanceSpec", "domain"),
    ("v1.DomainSpec", "devices"),
    ("v1.Devices", "gpus"),
)
GPU = "v1.GPU"
OBJECT_META = "k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta"
DEFAULT_OUT = Path("tests/data/dra-schemas")


class SchemaError(Exception):
    """An upstream document not of the expected shape."""


def _git(git_dir: Path, *args: str) -> str:
    done = subprocess.run(["git", "-C", str(git_dir), *args], capture_output=True, text=True, check=False)
    if done.returncode:
        raise SchemaError(f"git -C {git_dir} {' '.join(args)}: {done.stderr.strip()}")
    return done.stdout


def _refs(schema: Any) -> set[str]:
    """The names every ``$ref`` in ``schema`` points at (either spec's prefix)."""
    found: set[str] = set()
    if isinstance(schema, dict):
        for key, value in schema.items():
            if key == "$ref" and isinstance(value, str):
                found.add(value.rsplit("/", 1)[1])
            else:
                found |= _refs(value)
    elif isinstance(schema, list):
        for value in schema:
            found |= _refs(value)
    return found


def closure(schemas: dict[str, Any], roots: list[str]) -> dict[str, Any]:
    """Every schema reachable from ``roots``, verbatim, sorted by name."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        name = todo.pop()
        if name in seen:
            continue
        if name not in schemas:
            raise SchemaError(f"{name}: referenced but not defined")
        seen.add(name)
        todo += sorted(_refs(schemas[name]) - seen)
    return {name: schemas[name] for name in sorted(seen)}


def _source(repo: str, ref: str, commit: str, path: str, data: bytes, **more: Any) -> dict[str, Any]:
    return {
        "repository": repo,
        "ref": ref,
        "commit": commit,
        "path": path,
        "sha256": hashlib.sha256(data).hexdigest(),
        "license": LICENCE,
        **more,
    }


def kubernetes(git_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(schemas, sources) by Kubernetes minor and API version, for the minors
    serving every version pciname writes."""
    head = _git(git_dir, "rev-parse", "HEAD").strip()
    listed = _git(git_dir, "ls-tree", "-r", "--name-only", "HEAD", "--", BUILTINS).split()
    minors = sorted(
        {p.split("/")[3] for p in listed if "/apis/resource.k8s.io/" in p},
        key=lambda m: tuple(int(x) for x in m.split(".")),
    )
    schemas: dict[str, Any] = {}
    sources: dict[str, Any] = {}
    for minor in minors:
        paths = {api: f"{BUILTINS}/{minor}/apis/resource.k8s.io/{api}.json" for api in RESOURCE_APIS}
        if not all(path in listed for path in paths.values()):
            continue
        for api, path in paths.items():
            data = _git(git_dir, "show", f"HEAD:{path}").encode()
            document = json.loads(data)
            components = document.get("components", {}).get("schemas")
            if not isinstance(components, dict):
                raise SchemaError(f"{KUBECTL_VALIDATE} {path}: no components.schemas")
            roots = [f"io.k8s.api.resource.{api}.{kind}" for kind in K8S_ROOTS]
            schemas.setdefault(minor, {})[api] = {"roots": roots, "schemas": closure(components, roots)}
            changed = _git(git_dir, "log", "-1", "--format=%H %cs", "HEAD", "--", path).split()
            sources.setdefault(minor, {})[api] = _source(
                KUBERNETES,
                f"release-{minor}",
                "not recorded by the copy (GitHub contents API at the branch head when copied)",
                K8S_PATH.format(api=api),
                data,
                copied_by={
                    "repository": KUBECTL_VALIDATE,
                    "commit": head,
                    "path": path,
                    "last_changed": {"commit": changed[0], "date": changed[1]},
                    "how": "cmd/download-builtin-schemas: GET api.github.com/repos/kubernetes/kubernetes/contents/"
                    f"api/openapi-spec/v3?ref=release-{minor}, each file written as downloaded",
                    "license": LICENCE,
                },
            )
    if not schemas:
        raise SchemaError(f"{KUBECTL_VALIDATE}: no Kubernetes minor serves all of {', '.join(RESOURCE_APIS)}")
    return schemas, sources


def working_kubevirts() -> list[str]:
    """KubeVirt releases that work with some DRA driver release, in release order."""
    compatibility = facts()["compatibility"]
    return [k for k in facts()["kubevirt_releases"] if any(compatibility[d][k]["works"] for d in compatibility)]


def kubevirt(git_dir: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """(definitions, sources) by KubeVirt release tag."""
    schemas: dict[str, Any] = {}
    sources: dict[str, Any] = {}
    for tag in working_kubevirts():
        commit = _git(git_dir, "rev-parse", f"{tag}^{{commit}}").strip()
        data = _git(git_dir, "show", f"{commit}:{KUBEVIRT_PATH}").encode()
        definitions = json.loads(data).get("definitions")
        if not isinstance(definitions, dict):
            raise SchemaError(f"{KUBEVIRT} {tag} {KUBEVIRT_PATH}: no definitions")
        for name, prop in VM_PATH:
            if prop not in definitions.get(name, {}).get("properties", {}):
                raise SchemaError(f"{KUBEVIRT} {tag}: {name} has no property {prop}")
        claims = definitions["v1.VirtualMachineInstanceSpec"]["properties"].get("resourceClaims")
        if claims is None:
            raise SchemaError(f"{KUBEVIRT} {tag}: v1.VirtualMachineInstanceSpec has no resourceClaims")
        claim = claims["items"]["$ref"].rsplit("/", 1)[1]
        kept = closure(definitions, [GPU, claim, OBJECT_META])
        kept.update({name: definitions[name] for name, _ in VM_PATH})
        schemas[tag] = {
            "path": [list(step) for step in VM_PATH],
            "gpu": GPU,
            "resource_claim": claim,
            "definitions": dict(sorted(kept.items())),
        }
        sources[tag] = _source(KUBEVIRT, tag, commit, KUBEVIRT_PATH, data)
    return schemas, sources


ABOUT = (
    "Subsets of upstream OpenAPI documents, verbatim, for tests/kubevirt/test_dra_schemas.py (which makes them "
    "strict: additionalProperties false on every object schema that lists properties). kubernetes: per "
    "Kubernetes minor and resource.k8s.io version, every schema reachable from ResourceClaimTemplate and "
    "DeviceClass (OpenAPI v3 components.schemas). kubevirt: per release tag, the definitions on the VM "
    "fragment's path (kept whole; references off the path dangle and the test makes them stubs that accept "
    "anything), and every definition reachable from v1.GPU, the resourceClaims items and ObjectMeta. Written by "
    "tools/dra_schemas.py; kubernetes/kubernetes, kubernetes-sigs/kubectl-validate and kubevirt/kubevirt are "
    "all Apache-2.0 (https://www.apache.org/licenses/LICENSE-2.0)."
)


def write(out: Path, kubernetes_git: Path, kubevirt_git: Path) -> None:
    k8s_schemas, k8s_sources = kubernetes(kubernetes_git)
    kv_schemas, kv_sources = kubevirt(kubevirt_git)
    document = {"kubernetes": k8s_schemas, "kubevirt": kv_schemas}
    text = json.dumps(document, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    data = text.encode()
    out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{out}.json.xz").write_bytes(lzma.compress(data, preset=9 | lzma.PRESET_EXTREME))
    sidecar = {
        "about": ABOUT,
        "file": f"{out.name}.json.xz",
        "sha256": hashlib.sha256(data).hexdigest(),
        "license": LICENCE,
        "kubernetes": k8s_sources,
        "kubevirt": kv_sources,
    }
    Path(f"{out}.source.json").write_text(json.dumps(sidecar, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.dra_schemas", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubectl-validate-git", type=Path, required=True, help=f"a clone of {KUBECTL_VALIDATE}")
    parser.add_argument("--kubevirt-git", type=Path, required=True, help=f"a clone of {KUBEVIRT}")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="PREFIX of PREFIX.json.xz, PREFIX.source.json")
    args = parser.parse_args(argv)
    try:
        write(args.out, args.kubectl_validate_git, args.kubevirt_git)
    except SchemaError as error:
        print(f"dra_schemas: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
