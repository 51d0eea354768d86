"""``vm-gpus --dra`` writes objects the API servers accept: the
ResourceClaimTemplate and DeviceClass validate against Kubernetes' OpenAPI v3
schema of the ``resource.k8s.io`` version written (v1, v1beta2, v1beta1), and
the VirtualMachine fragment against KubeVirt's schema of the release written
(every release that works: v1.8.3, v1.8.4, v1.9.0), strictly.

The schemas are upstream's (``tests/data/dra-schemas.json.xz``, written by
``tools/dra_schemas.py``; ``dra-schemas.source.json`` names each source:
kubernetes/kubernetes ``api/openapi-spec/v3/apis__resource.k8s.io__<v>_openapi.json``
of release-1.34 and release-1.35 as kubernetes-sigs/kubectl-validate vendors
them, and kubevirt/kubevirt ``api/openapi-spec/swagger.json`` at each tag).
Strict, at test time:

* every object schema that lists ``properties`` and says nothing about other
  keys gets ``additionalProperties: false`` (OpenAPI leaves it out; the API
  servers prune or reject unknown fields), so an unknown or misplaced field
  fails;
* ``required`` and ``enum`` are honoured as upstream has them. The
  ``resource.k8s.io`` schemas carry no ``enum`` for ``allocationMode``: its
  values are listed in its description only ("Supported values are: -
  ExactCount: ... - All: ..."), and the conversion makes that list an enum.

The VM fragment is a partial object: its ``resourceClaims`` items are
validated against the release's item definition (``k8s.io.api.core.v1.
PodResourceClaim`` up to v1.8, ``v1.VirtualMachineInstanceResourceClaim``
from v1.9) and its ``gpus[]`` items against ``v1.GPU``; the whole fragment
also against ``v1.VirtualMachine``, with the definitions on its path upstream's
and every definition off it a stub that accepts anything (marked
``x-pciname-stub``). The documents come from the real CLI (``python -m
pciname vm-gpus ... --dra -o json``), for every working combination, one and
several GPUs, with and without ``--product-name``.
"""

from __future__ import annotations

import copy
import functools
import hashlib
import json
import lzma
import re
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
import yaml
from jsonschema import Draft7Validator

from pciname.dra.facts import RESOURCE_APIS, facts
from tests.cli_run import Ran, pciname_process
from tests.conftest import TEST_DATA

DATA = TEST_DATA / "dra-schemas.json.xz"
SOURCE = TEST_DATA / "dra-schemas.source.json"
STUB = "x-pciname-stub"
K8S_REF = "#/components/schemas/"
KUBEVIRT_REF = "#/definitions/"

#: What the tests generate: GPUs (one model, several models and counts).
GPU_SETS = {"one": ("10de:2236=1",), "several": ("10de:2236=2", "10de:20b5", "10de:1eb8=1")}


# -- the schemas ------------------------------------------------------------------------


@functools.cache
def upstream() -> dict[str, Any]:
    return json.loads(lzma.decompress(DATA.read_bytes()))


@functools.cache
def sources() -> dict[str, Any]:
    return json.loads(SOURCE.read_text(encoding="utf-8"))


def working() -> list[tuple[str, str]]:
    """(driver, KubeVirt) pairs the facts say work, in release order."""
    compatibility = facts()["compatibility"]
    return [
        (d, k) for d in facts()["driver_releases"] for k in facts()["kubevirt_releases"] if compatibility[d][k]["works"]
    ]


def kubernetes_minors() -> list[str]:
    return sorted(upstream()["kubernetes"], key=lambda m: tuple(int(x) for x in m.split(".")))


_SUPPORTED = re.compile(r"Supported values are:\s*\n((?:\s*\n|[ \t]*-[^\n]*\n|[ \t]+[^\n]*\n)+)")


def documented_enum(schema: dict[str, Any]) -> list[str] | None:
    """The values a string property's description lists as its only
    supported ones ("Supported values are:" then "- Value: ..." lines)."""
    if schema.get("type") != "string" or "enum" in schema:
        return None
    found = _SUPPORTED.search(str(schema.get("description", "")) + "\n")
    if not found:
        return None
    values = re.findall(r"^[ \t]*-[ \t]*([A-Za-z][A-Za-z0-9]*):", found.group(1), re.M)
    return values or None


def strict(schema: Any) -> Any:
    """A copy of an OpenAPI (v3 or Swagger 2.0) schema in which every object
    schema with ``properties`` and no ``additionalProperties`` forbids other
    keys, and a string whose description lists its supported values takes
    only those."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "properties":
            out[key] = {name: strict(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "not"):
            out[key] = strict(value)
        else:
            out[key] = copy.deepcopy(value)
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    enum = documented_enum(out)
    if enum:
        out["enum"] = enum
    return out


def _dangling(schemas: dict[str, Any], prefix: str) -> set[str]:
    text = json.dumps(schemas)
    return {name for name in re.findall(re.escape(prefix) + r'([^"]+)"', text) if name not in schemas}


@functools.cache
def k8s_validator(minor: str, api: str, kind: str) -> Draft7Validator:
    """Kubernetes ``minor``'s strict schema of ``resource.k8s.io/<api>`` ``kind``."""
    schemas = upstream()["kubernetes"][minor][api]["schemas"]
    assert not _dangling(schemas, K8S_REF), "the Kubernetes subsets are closed"
    root = {
        "$ref": f"{K8S_REF}io.k8s.api.resource.{api}.{kind}",
        "components": {"schemas": {n: strict(s) for n, s in schemas.items()}},
    }
    Draft7Validator.check_schema(root)
    return Draft7Validator(root)


@functools.cache
def kubevirt_validator(tag: str, definition: str) -> Draft7Validator:
    """KubeVirt ``tag``'s strict schema of ``definition``; a definition that
    is not kept (off the fragment's path) is a stub accepting anything."""
    definitions = upstream()["kubevirt"][tag]["definitions"]
    stubs = {
        name: {STUB: "off the VM fragment's path: any value accepted"} for name in _dangling(definitions, KUBEVIRT_REF)
    }
    root = {
        "$ref": f"{KUBEVIRT_REF}{definition}",
        "definitions": {**stubs, **{n: strict(s) for n, s in definitions.items()}},
    }
    Draft7Validator.check_schema(root)
    return Draft7Validator(root)


def problems(validator: Draft7Validator, document: Any) -> list[str]:
    """Each validation error as ``path: message`` (none: valid)."""
    return sorted(
        f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in validator.iter_errors(document)
    )


def assert_valid(validator: Draft7Validator, document: Any, what: str) -> None:
    found = problems(validator, document)
    assert not found, "\n".join([f"not a valid {what}:", *found, json.dumps(document, indent=1)])


# -- the documents, from the real CLI ------------------------------------------------------


def cli(*args: str) -> Ran:
    """A process each: the cases run concurrently, in threads."""
    return pciname_process("vm-gpus", *args)


def _args(api: str, kubevirt: str, driver: str, gpus: str, product_name: bool, output: str = "json") -> list[str]:
    extra = ["--product-name"] if product_name else []
    return [
        *GPU_SETS[gpus],
        "--dra",
        "--dra-driver",
        driver,
        "--kubevirt",
        kubevirt,
        "--resource-api",
        api,
        *extra,
        "-o",
        output,
    ]


CASES = [
    (api, kubevirt, driver, gpus, product_name)
    for driver, kubevirt in working()
    for api in RESOURCE_APIS
    for gpus in GPU_SETS
    for product_name in (False, True)
]


@functools.cache
def generated() -> dict[tuple[str, str, str, str, bool], list[dict[str, Any]]]:
    """Every case's documents (the CLI's ``-o json`` List), run concurrently."""

    def run(case: tuple[str, str, str, str, bool]) -> list[dict[str, Any]]:
        done = cli(*_args(*case))
        assert done.returncode == 0, (case, done.stderr)
        listed = json.loads(done.stdout)
        assert (listed["apiVersion"], listed["kind"]) == ("v1", "List"), listed
        return list(listed["items"])

    with ThreadPoolExecutor(max_workers=4) as pool:
        return dict(zip(CASES, pool.map(run, CASES)))


def test_the_combinations_are_the_ones_the_issue_names():
    """The facts' working combinations are the ones the schemas were vendored
    for (a new working KubeVirt needs ``tools/dra_schemas.py`` run again)."""
    assert working() == [(d, k) for d in ("v0.4.0", "v0.4.1", "main") for k in ("v1.8.3", "v1.8.4", "v1.9.0")]
    assert sorted(upstream()["kubevirt"]) == sorted({k for _, k in working()})
    assert RESOURCE_APIS == ("v1", "v1beta2", "v1beta1")
    assert kubernetes_minors() == ["1.34", "1.35"]
    assert all(sorted(upstream()["kubernetes"][m]) == sorted(RESOURCE_APIS) for m in kubernetes_minors())
    assert len(CASES) == 3 * 3 * 3 * 2 * 2  # APIs, KubeVirt releases, driver releases, GPUs, product name


def test_the_vendored_schemas_name_their_sources():
    side = sources()
    assert hashlib.sha256(lzma.decompress(DATA.read_bytes())).hexdigest() == side["sha256"]
    assert side["license"] == "Apache-2.0" and "Apache-2.0" in side["about"]
    for minor in kubernetes_minors():
        for api in RESOURCE_APIS:
            source = side["kubernetes"][minor][api]
            assert source["repository"] == "kubernetes/kubernetes" and source["ref"] == f"release-{minor}"
            assert source["path"] == f"api/openapi-spec/v3/apis__resource.k8s.io__{api}_openapi.json"
            copied = source["copied_by"]
            assert copied["repository"] == "kubernetes-sigs/kubectl-validate"
            assert re.fullmatch(r"[0-9a-f]{40}", copied["commit"]) and re.fullmatch(r"[0-9a-f]{64}", source["sha256"])
            assert copied["path"] == f"pkg/openapiclient/builtins/{minor}/apis/resource.k8s.io/{api}.json"
    for tag, source in side["kubevirt"].items():
        assert (source["repository"], source["ref"], source["path"]) == (
            "kubevirt/kubevirt",
            tag,
            "api/openapi-spec/swagger.json",
        )
        assert re.fullmatch(r"[0-9a-f]{40}", source["commit"]) and source["license"] == "Apache-2.0"


def test_strict_closes_objects_and_reads_documented_values():
    """The conversion itself: objects with properties are closed, maps stay
    open, and allocationMode takes the values its description lists."""
    schemas = upstream()["kubernetes"]["1.35"]["v1"]["schemas"]
    made = strict(schemas["io.k8s.api.resource.v1.ExactDeviceRequest"])
    assert made["additionalProperties"] is False
    assert made["properties"]["allocationMode"]["enum"] == ["ExactCount", "All"]
    meta = strict(schemas["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"])
    assert meta["properties"]["labels"]["additionalProperties"] == {"default": "", "type": "string"}
    assert (
        strict(schemas["io.k8s.apimachinery.pkg.runtime.RawExtension"])
        == schemas["io.k8s.apimachinery.pkg.runtime.RawExtension"]
    )


def _check_claim_objects(case: tuple[str, str, str, str, bool], documents: list[dict[str, Any]]) -> None:
    api, kubevirt, _, gpus, product_name = case
    template, vm, deviceclass = documents
    assert [d["kind"] for d in documents] == ["ResourceClaimTemplate", "VirtualMachine", "DeviceClass"]
    assert template["apiVersion"] == deviceclass["apiVersion"] == f"resource.k8s.io/{api}"
    for minor in kubernetes_minors():
        assert_valid(
            k8s_validator(minor, api, "ResourceClaimTemplate"), template, f"{api} ResourceClaimTemplate ({minor})"
        )
        assert_valid(k8s_validator(minor, api, "DeviceClass"), deviceclass, f"{api} DeviceClass ({minor})")
    shape = upstream()["kubevirt"][kubevirt]
    spec = vm["spec"]["template"]["spec"]
    for claim in spec["resourceClaims"]:
        assert_valid(kubevirt_validator(kubevirt, shape["resource_claim"]), claim, f"{kubevirt} resourceClaims item")
    for gpu in spec["domain"]["devices"]["gpus"]:
        assert_valid(kubevirt_validator(kubevirt, shape["gpu"]), gpu, f"{kubevirt} v1.GPU")
    assert_valid(kubevirt_validator(kubevirt, "v1.VirtualMachine"), vm, f"{kubevirt} VirtualMachine fragment")
    _check_references(template, spec, deviceclass, gpus, product_name)


def _check_references(
    template: dict[str, Any], spec: dict[str, Any], deviceclass: dict[str, Any], gpus: str, product_name: bool
) -> None:
    """What the schemas cannot say: the names tie the objects together."""
    devices = template["spec"]["spec"]["devices"]
    requests = devices["requests"]
    names = [r["name"] for r in requests]
    assert len(names) == len(set(names)) == sum(int(g.partition("=")[2] or 1) for g in GPU_SETS[gpus])
    label = re.compile(r"[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?")  # request names are DNS labels
    assert all(label.fullmatch(n) for n in names)
    for request in requests:
        one = request.get("exactly", request)
        assert one["deviceClassName"] == deviceclass["metadata"]["name"]
        assert ("productName" in one["selectors"][0]["cel"]["expression"]) is product_name
    claims = {c["name"]: c for c in spec["resourceClaims"]}
    assert all(c["resourceClaimTemplateName"] == template["metadata"]["name"] for c in claims.values())
    entries = spec["domain"]["devices"]["gpus"]
    assert len({g["name"] for g in entries}) == len(entries)  # gpus[] is a list-map keyed by name
    assert sorted(g["requestName"] for g in entries) == sorted(names)
    assert all(g["claimName"] in claims for g in entries)
    for config in devices.get("config", []):
        assert set(config["requests"]) <= set(names)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(str(p) for p in c))
def test_every_working_combination_validates_strictly(case):
    _check_claim_objects(case, generated()[case])


def test_the_yaml_stream_is_the_same_documents():
    """-o yaml writes the same documents as the List -o json holds."""
    for case in [CASES[0], CASES[-1]]:
        done = cli(*_args(*case, output="yaml"))
        assert done.returncode == 0, done.stderr
        assert list(yaml.safe_load_all(done.stdout)) == generated()[case]


# -- the checks can fail ------------------------------------------------------------------


def _one(case_api: str) -> list[dict[str, Any]]:
    return copy.deepcopy(generated()[(case_api, "v1.9.0", "v0.4.0", "one", False)])


def _fails(validator: Draft7Validator, document: Any, expected: str) -> None:
    found = problems(validator, document)
    assert found and any(expected in p for p in found), found


def test_a_v1beta1_request_under_v1_fails_and_the_reverse():
    template = _one("v1")[0]
    v1 = k8s_validator("1.35", "v1", "ResourceClaimTemplate")
    flat = copy.deepcopy(template)
    request = flat["spec"]["spec"]["devices"]["requests"][0]
    request.update(request.pop("exactly"))
    _fails(v1, flat, "Additional properties are not allowed ('allocationMode', 'count', 'deviceClassName', 'selectors'")
    v1beta1 = k8s_validator("1.35", "v1beta1", "ResourceClaimTemplate")
    _fails(v1beta1, {**template, "apiVersion": "resource.k8s.io/v1beta1"}, "'exactly' was unexpected")
    assert not problems(v1beta1, {**flat, "apiVersion": "resource.k8s.io/v1beta1"})  # the flat shape is v1beta1's


def test_unknown_fields_missing_fields_wrong_types_and_values_fail():
    template, _, deviceclass = _one("v1beta2")
    rct = k8s_validator("1.34", "v1beta2", "ResourceClaimTemplate")
    for change, expected in [
        (lambda t, e: t["spec"]["spec"].__setitem__("selectors", []), "'selectors' was unexpected"),
        (
            lambda t, e: e.__setitem__("allocationMode", "exactcount"),
            "'exactcount' is not one of ['ExactCount', 'All']",
        ),
        (lambda t, e: e.__setitem__("count", "1"), "'1' is not of type 'integer'"),
        (lambda t, e: e.pop("deviceClassName"), "'deviceClassName' is a required property"),
        (
            lambda t, e: t["spec"]["spec"]["devices"]["config"][0]["opaque"].pop("parameters"),
            "'parameters' is a required property",
        ),
        (lambda t, e: e["selectors"][0]["cel"].__setitem__("expr", "true"), "'expr' was unexpected"),
    ]:
        broken = copy.deepcopy(template)
        change(broken, broken["spec"]["spec"]["devices"]["requests"][0]["exactly"])
        _fails(rct, broken, expected)
    broken_class = copy.deepcopy(deviceclass)
    broken_class["spec"]["selector"] = broken_class["spec"].pop("selectors")
    _fails(k8s_validator("1.35", "v1beta2", "DeviceClass"), broken_class, "'selector' was unexpected")


@pytest.mark.parametrize("tag", ["v1.8.3", "v1.9.0"])
def test_a_wrong_vm_fragment_fails(tag):
    vm = _one("v1")[1]
    shape = upstream()["kubevirt"][tag]
    spec = vm["spec"]["template"]["spec"]
    gpu = {**spec["domain"]["devices"]["gpus"][0], "claim": "vm-gpus"}
    _fails(kubevirt_validator(tag, shape["gpu"]), gpu, "'claim' was unexpected")
    _fails(kubevirt_validator(tag, shape["gpu"]), {"claimName": "vm-gpus"}, "'name' is a required property")
    old = {"name": "vm-gpus", "source": {"resourceClaimTemplateName": "vm-gpus"}}  # the alpha PodResourceClaim shape
    _fails(kubevirt_validator(tag, shape["resource_claim"]), old, "'source' was unexpected")
    moved = copy.deepcopy(vm)
    moved_spec = moved["spec"]["template"]["spec"]
    moved_spec["devices"] = moved_spec.pop("domain")["devices"]  # gpus one level too high
    found = problems(kubevirt_validator(tag, "v1.VirtualMachine"), moved)
    assert any("'domain' is a required property" in p for p in found), found
    assert any("'devices' was unexpected" in p for p in found), found
