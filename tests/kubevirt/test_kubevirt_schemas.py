"""Every document pciname generates for KubeVirt validates against KubeVirt's
own v1 OpenAPI schemas, made strict.

The schemas are upstream's (``tests/data/kubevirt-v1-openapi-subset.json``,
a subset of kubevirt/kubevirt's ``api/openapi-spec/swagger.json``; its
sidecar ``.md`` says which commit and what was cut). Strict: at test time,
every object schema that lists ``properties`` and says nothing about other
keys gets ``additionalProperties: false``, so a misspelt or invented field
fails, as does a wrong type or a missing required field.

Checked: the KubeVirt CR with the generated ``spec.configuration`` block
(``--format kubevirt``), the CR after the JSON merge patch (``--format
patch``) and the patch itself, the server-side apply body ``pciname apply``
sends, and a VirtualMachine with the generated
``spec.template.spec.domain.devices.gpus``; from the library over many
generated requests (device ids the packaged snapshots really name, vGPU
types, counts, every installed profile, ``include_broken`` on and off), from
the CLI's stdout and from the gRPC ``PermittedHostDevices`` answer.
"""

from __future__ import annotations

import copy
import functools
import io
import json
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st
from jsonschema import Draft7Validator

from pciname.base.render import emit
from pciname.cli import main
from pciname.kubevirt.generate import FORMATS, permitted_host_devices, render, vm_gpus
from pciname.kubevirt.objects import apply_body
from tests.cli_run import pciname as cli
from tests.conftest import TEST_DATA
from tests.fake_kube import FakeKube, kubevirt, node

SUBSET = TEST_DATA / "kubevirt-v1-openapi-subset.json"
KUBEVIRT = "v1.KubeVirt"
VIRTUAL_MACHINE = "v1.VirtualMachine"
STUB = "x-pciname-stub"

A10 = {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/GA102GL_A10", "externalResourceProvider": True}
GRID = {"mdevNameSelector": "GRID T4-1Q", "resourceName": "nvidia.com/GRID_T4-1Q", "externalResourceProvider": True}


# -- the schemas ------------------------------------------------------------------------


def strict(schema: Any) -> Any:
    """A copy of a Swagger 2.0 schema in which every object schema with
    ``properties`` and no ``additionalProperties`` forbids other keys."""
    if isinstance(schema, list):
        return [strict(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out = {}
    for key, value in schema.items():
        if key in ("properties", "definitions"):
            out[key] = {name: strict(sub) for name, sub in value.items()}
        elif key in ("items", "additionalProperties", "allOf", "anyOf", "oneOf", "not"):
            out[key] = strict(value)
        else:
            out[key] = copy.deepcopy(value)
    if "properties" in out and "additionalProperties" not in out:
        out["additionalProperties"] = False
    return out


@functools.cache
def spec() -> dict[str, Any]:
    return json.loads(SUBSET.read_text(encoding="utf-8"))


@functools.cache
def strict_definitions() -> dict[str, Any]:
    return {name: strict(schema) for name, schema in spec()["definitions"].items()}


@functools.cache
def validator(definition: str) -> Draft7Validator:
    schema = {"$ref": f"#/definitions/{definition}", "definitions": strict_definitions()}
    Draft7Validator.check_schema(schema)
    return Draft7Validator(schema)


def errors(document: Any, definition: str) -> list[str]:
    """Each validation error as ``path: message`` (none: the document is valid)."""
    found = validator(definition).iter_errors(document)
    return sorted(f"{'/'.join(str(p) for p in e.absolute_path) or '<root>'}: {e.message}" for e in found)


def assert_valid(document: Any, definition: str) -> None:
    problems = errors(document, definition)
    assert not problems, "\n".join([f"not a valid {definition}:", *problems, json.dumps(document, indent=1)])


# -- the documents ------------------------------------------------------------------------


def kubevirt_cr(configuration: dict[str, Any]) -> dict[str, Any]:
    """A KubeVirt CR whose spec.configuration is the given block."""
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
        "spec": {"configuration": configuration},
    }


def merge_patch(target: Any, patch: Any) -> Any:
    """RFC 7386 JSON merge patch."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = copy.deepcopy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def virtual_machine(devices: dict[str, Any]) -> dict[str, Any]:
    """A minimal VirtualMachine (what upstream requires, and no more) whose
    domain.devices is the given block."""
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {"name": "gpu-vm", "namespace": "tenant-a"},
        "spec": {"runStrategy": "Always", "template": {"spec": {"domain": {"devices": devices}}}},
    }


def base_cr() -> dict[str, Any]:
    """A deployed KubeVirt CR as the API server returns it, with entries of its own."""
    return kubevirt({"pciHostDevices": [A10], "mediatedDevices": [GRID]})


def as_text(data: Any, output: str) -> Any:
    """``data`` printed as the CLI and the gRPC service print it, read back."""
    out = io.StringIO()
    emit(data, output, out)
    return parse(out.getvalue(), output)


def parse(text: str, output: str) -> Any:
    return json.loads(text) if output == "json" else yaml.safe_load(text)


def assert_kubevirt_documents(permitted: dict[str, Any], output: str | None = None) -> None:
    """Each way pciname places a permittedHostDevices block is a valid KubeVirt
    CR (printed as ``output``, yaml or json, and read back, when given)."""
    block = render(permitted, "kubevirt")
    assert set(block) == {"permittedHostDevices"}
    if output:
        block = as_text(block, output)
    assert_valid(kubevirt_cr(block), KUBEVIRT)
    patch = render(permitted, "patch")
    if output:
        patch = as_text(patch, output)
    assert_valid(patch, KUBEVIRT)  # the merge patch is itself a (partial) KubeVirt object
    patched = merge_patch(base_cr(), patch)
    for key, entries in permitted.items():  # a merge patch replaces lists whole
        assert patched["spec"]["configuration"]["permittedHostDevices"][key] == entries
    assert_valid(patched, KUBEVIRT)
    assert_valid(apply_body(base_cr(), permitted), KUBEVIRT)


# -- the vendored schemas themselves ------------------------------------------------------


def test_the_subset_names_its_source_and_keeps_the_generated_paths_whole():
    source = spec()["x-pciname-source"]
    assert source["repository"] == "https://github.com/kubevirt/kubevirt"
    assert source["path"] == "api/openapi-spec/swagger.json"
    assert len(source["commit"]) == 40 and source["license"] == "Apache-2.0"
    definitions = spec()["definitions"]
    path_types = [
        "v1.KubeVirt",
        "v1.KubeVirtSpec",
        "v1.KubeVirtConfiguration",
        "v1.PermittedHostDevices",
        "v1.PciHostDevice",
        "v1.MediatedHostDevice",
        "v1.VirtualMachine",
        "v1.VirtualMachineSpec",
        "v1.VirtualMachineInstanceTemplateSpec",
        "v1.VirtualMachineInstanceSpec",
        "v1.DomainSpec",
        "v1.Devices",
        "v1.GPU",
    ]
    for name in path_types:
        assert STUB not in definitions[name] and definitions[name]["properties"], name
    assert definitions["v1.PciHostDevice"]["required"] == ["pciVendorSelector", "resourceName"]
    assert definitions["v1.MediatedHostDevice"]["required"] == ["mdevNameSelector", "resourceName"]
    assert definitions["v1.GPU"]["required"] == ["name"]
    assert definitions["v1.DomainSpec"]["required"] == ["devices"]
    # every reference resolves, to a full definition or a documented stub
    text = SUBSET.read_text(encoding="utf-8")
    for name in definitions:
        assert definitions[name].get("properties") or STUB in definitions[name], name
    refs = {part.split('"', 1)[0] for part in text.split('"$ref": "#/definitions/')[1:]}
    assert refs <= set(definitions)


def test_strict_closes_every_object_with_properties():
    closed = [name for name, d in strict_definitions().items() if d.get("additionalProperties") is False]
    assert sorted(closed) == sorted(
        name for name, d in spec()["definitions"].items() if "properties" in d and "additionalProperties" not in d
    )
    assert len(closed) == 13
    # the loose ObjectMeta stand-in stays loose: metadata as the API server returns it validates
    assert_valid(base_cr(), KUBEVIRT)


# -- the strict check can fail ------------------------------------------------------------

BAD_CRS = {
    "unknown field in a pciHostDevices entry": {
        "permittedHostDevices": {"pciHostDevices": [dict(A10, vendor="NVIDIA")]}
    },
    "unknown field in a mediatedDevices entry": {
        "permittedHostDevices": {"mediatedDevices": [dict(GRID, mdevTypeSelector="GRID T4-1Q")]}
    },
    "externalResourceProvider as a string": {
        "permittedHostDevices": {"pciHostDevices": [dict(A10, externalResourceProvider="true")]}
    },
    "resourceName null": {"permittedHostDevices": {"pciHostDevices": [dict(A10, resourceName=None)]}},
    "resourceName missing": {"permittedHostDevices": {"pciHostDevices": [{"pciVendorSelector": "10DE:2236"}]}},
    "mdevNameSelector missing": {
        "permittedHostDevices": {"mediatedDevices": [{"resourceName": "nvidia.com/GRID_T4-1Q"}]}
    },
    "entries not a list": {"permittedHostDevices": {"pciHostDevices": A10}},
    "misspelt list": {"permittedHostDevices": {"pciDevices": [A10]}},
    "misspelt block": {"permittedHostDevice": {"pciHostDevices": [A10]}},
}


@pytest.mark.parametrize("configuration", BAD_CRS.values(), ids=BAD_CRS.keys())
def test_a_bad_kubevirt_cr_is_rejected(configuration):
    assert errors(kubevirt_cr(configuration), KUBEVIRT)


BAD_GPUS = {
    "unknown field": [
        {"name": "gpu1", "deviceName": "nvidia.com/GA102GL_A10", "resourceName": "nvidia.com/GA102GL_A10"}
    ],
    "name missing": [{"deviceName": "nvidia.com/GA102GL_A10"}],
    "deviceName a number": [{"name": "gpu1", "deviceName": 10}],
    "deviceName null": [{"name": "gpu1", "deviceName": None}],
}


@pytest.mark.parametrize("gpus", BAD_GPUS.values(), ids=BAD_GPUS.keys())
def test_a_bad_virtual_machine_is_rejected(gpus):
    assert errors(virtual_machine({"gpus": gpus}), VIRTUAL_MACHINE)


def test_what_the_schemas_require_is_required():
    vm = virtual_machine({"gpus": [{"name": "gpu1", "deviceName": "nvidia.com/GA102GL_A10"}]})
    assert_valid(vm, VIRTUAL_MACHINE)
    del vm["spec"]["template"]["spec"]["domain"]["devices"]
    assert errors(vm, VIRTUAL_MACHINE) == ["spec/template/spec/domain: 'devices' is a required property"]
    assert errors({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirt"}, KUBEVIRT) == [
        "<root>: 'spec' is a required property"
    ]
    cr = kubevirt_cr({"permittedHostDevices": {"pciHostDevices": [A10]}})
    cr["spec"]["configurations"] = cr["spec"].pop("configuration")
    assert errors(cr, KUBEVIRT) == ["spec: Additional properties are not allowed ('configurations' was unexpected)"]


# -- the library, over many requests -------------------------------------------------------


@functools.cache
def installed_profiles() -> tuple[str, ...]:
    """The installed profiles of the KubeVirt plugin (a Kata profile is
    refused by every KubeVirt generator: tests/cli/test_cli_kata.py)."""
    import pciname.api

    return tuple(p.name for p in pciname.api.profiles() if p.installed and p.plugin == "kubevirt-gpu-device-plugin")


@functools.cache
def nvidia_ids() -> tuple[str, ...]:
    """Device ids the packaged data really names: the oldest and newest plugin
    releases, a GPU Operator release and the preview."""
    import pciname.api

    wanted = ("kubevirt-gpu-device-plugin@v1.0.0", "latest", "gpu-operator@v23.9.2", "preview")
    return tuple(sorted({r.device for profile in wanted for r in pciname.api.devices(profile)}))


SPELLINGS = (str, str.upper, lambda d: "0x" + d.replace(":", ":0x"))
#: vGPU type names as sysfs gives them, and a few the plugin trips over.
MDEV_TYPES = (
    "GRID T4-1Q",
    "GRID T4-16Q",
    "NVIDIA A100-40C",
    "NVIDIA A10-24Q",
    "NVIDIA L4-12A",
    "GRID  A10-2Q",
    "T4",
    "NVIDIA RTX6000-Ada-4Q",
    "GRID P40-24Q",
)

profiles = st.deferred(lambda: st.sampled_from(("latest", *installed_profiles())))
devices = st.one_of(
    st.tuples(st.deferred(lambda: st.sampled_from(nvidia_ids())), st.sampled_from(SPELLINGS)).map(lambda t: t[1](t[0])),
    st.sampled_from(("10de:ffff", "8086:1234", "1002:73bf")),  # unknown to NVIDIA's names, or not NVIDIA
)
mdev_types = st.one_of(
    st.sampled_from(MDEV_TYPES),
    st.sampled_from(
        ("null", "yes", "1.5", "0x10", "~", "on", "GRID 1:30")
    ),  # plain YAML would read these as non-strings
    st.text(st.sampled_from("ABGIRDNVTQ0123456789- _."), min_size=1, max_size=24),
)
resource_requests = st.sampled_from(("nvidia.com/GA102GL_A10", "nvidia.com/GRID_T4-1Q", "nvidia.com/bad name"))
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(
    st.lists(devices, max_size=6),
    st.lists(mdev_types, max_size=4),
    profiles,
    st.booleans(),
    st.sampled_from((None, "yaml", "json")),
)
def test_permitted_host_devices_make_valid_kubevirt_crs(device_ids, mdevs, profile, include_broken, output):
    snippet = permitted_host_devices(device_ids, mdevs, profile, include_broken)
    assert_kubevirt_documents(snippet.data, output)


@SETTINGS
@given(
    st.lists(st.tuples(st.one_of(devices, resource_requests), st.integers(1, 4)), max_size=5),
    st.lists(st.tuples(mdev_types, st.integers(1, 4)), max_size=3),
    profiles,
    st.booleans(),
    st.sampled_from(("gpu", "vgpu-", "a")),
    st.sampled_from((None, "yaml", "json")),
)
def test_vm_gpus_make_valid_virtual_machines(requests, mdevs, profile, include_broken, prefix, output):
    snippet = vm_gpus(requests, profile, include_broken, mdevs=mdevs, prefix=prefix)
    assert set(snippet.data) == {"gpus"}
    devices = as_text(snippet.data, output) if output else snippet.data
    assert_valid(virtual_machine(devices), VIRTUAL_MACHINE)


def test_kept_broken_names_still_validate():
    """With include_broken, names kubelet refuses are kept: the schema takes
    any string, so they validate (lint is what catches them), and an entry
    without a name at all is never emitted."""
    snippet = permitted_host_devices(["10de:2236"], ["GRID  A10-2Q", "T4"], "v1.0.1", include_broken=True)
    assert [e["resourceName"] for e in snippet.data["mediatedDevices"]] == ["nvidia.com/"]
    assert_kubevirt_documents(snippet.data)
    vm = vm_gpus([("nvidia.com/bad name", 1)], mdevs=[("T4", 1)], profile="v1.0.1", include_broken=True)
    assert vm.data == {"gpus": [{"name": "gpu1", "deviceName": "nvidia.com/bad name"}]}
    assert_valid(virtual_machine(vm.data), VIRTUAL_MACHINE)


# -- the CLI's stdout ------------------------------------------------------------------------


PHD_ARGS = [
    ("10de:2236", "0x10DE:0x1EB8", "--mdev", "GRID T4-1Q", "--mdev", "NVIDIA A100-40C"),
    ("10de:2330", "--profile", "gpu-operator@v23.9.2"),
    ("10de:2236", "10de:ffff", "--mdev", "GRID  A10-2Q", "--include-broken", "--profile", "v1.0.1"),
    ("--mdev", "NVIDIA L4-12A"),
]


@pytest.mark.parametrize("output", ["yaml", "json"])
@pytest.mark.parametrize("fmt", ["kubevirt", "patch"])
@pytest.mark.parametrize("args", PHD_ARGS, ids=range(len(PHD_ARGS)))
def test_cli_permitted_host_devices_output_validates(args, fmt, output):
    proc = cli("permitted-host-devices", *args, "--format", fmt, "-o", output)
    assert proc.returncode in (0, 1), proc.stderr
    document = parse(proc.stdout, output)
    if fmt == "kubevirt":
        assert_valid(kubevirt_cr(document), KUBEVIRT)
        permitted = document["permittedHostDevices"]
    else:
        assert_valid(document, KUBEVIRT)
        assert_valid(merge_patch(base_cr(), document), KUBEVIRT)
        permitted = document["spec"]["configuration"]["permittedHostDevices"]
    assert permitted.get("pciHostDevices") or permitted.get("mediatedDevices")


VM_ARGS = [
    ("10de:2236=2", "--mdev", "GRID T4-1Q=3"),
    ("nvidia.com/GA102GL_A10", "10de:1eb8", "--prefix", "vgpu"),
    ("10de:2236", "nvidia.com/bad name", "--include-broken", "--profile", "v1.0.1"),
]


@pytest.mark.parametrize("output", ["yaml", "json"])
@pytest.mark.parametrize("args", VM_ARGS, ids=range(len(VM_ARGS)))
def test_cli_vm_gpus_output_validates(args, output):
    proc = cli("vm-gpus", *args, "-o", output)
    assert proc.returncode in (0, 1), proc.stderr
    document = parse(proc.stdout, output)
    assert document["gpus"]
    assert_valid(virtual_machine(document), VIRTUAL_MACHINE)


@pytest.fixture
def fake_cluster(monkeypatch):
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "KUBECONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    server = FakeKube(nodes=[node("gpu-a10-1", {"nvidia.com/GA102GL_A10": "2"})], kubevirts=[base_cr()]).start()
    yield server
    server.stop()


def test_cli_apply_sends_a_valid_kubevirt_cr(fake_cluster, tmp_path, capsys):
    code = main(
        [
            "apply",
            "permitted-host-devices",
            "10de:2236",
            "10de:1eb8",
            "--mdev",
            "NVIDIA A100-40C",
            "--kubeconfig",
            str(fake_cluster.kubeconfig(tmp_path)),
            "-o",
            "json",
        ]
    )
    capsys.readouterr()
    assert code == 0
    (patch,) = [r for r in fake_cluster.requests if r.method == "PATCH"]
    body = patch.json()
    assert (
        body["spec"]["configuration"]["permittedHostDevices"]["mediatedDevices"][0]["mdevNameSelector"]
        == "NVIDIA A100-40C"
    )
    assert_valid(body, KUBEVIRT)
    assert_valid(fake_cluster.kubevirts[0], KUBEVIRT)


# -- gRPC ------------------------------------------------------------------------------------


# ``stub``: conftest's, a server on loopback with the packaged snapshots.

GRPC_REQUESTS = [
    {"devices": ["10de:2236", "10de:1eb8"], "mdev_types": ["GRID T4-1Q"]},
    {"devices": ["10de:2330"], "profile": "gpu-operator@v23.9.2"},
    {
        "devices": ["10de:2236", "10de:ffff"],
        "mdev_types": ["GRID  A10-2Q", "T4"],
        "profile": "v1.0.1",
        "include_broken": True,
    },
]


@pytest.mark.parametrize("fmt", ["", "kubevirt", "patch"])
@pytest.mark.parametrize("fields", GRPC_REQUESTS, ids=range(len(GRPC_REQUESTS)))
def test_grpc_permitted_host_devices_texts_validate(stub, fields, fmt):
    from pciname.server._proto import pciname_pb2 as pb

    answer = stub.PermittedHostDevices(pb.PermittedHostDevicesRequest(format=fmt, **fields), timeout=30)
    for document in (yaml.safe_load(answer.yaml), json.loads(answer.json)):
        if answer.format == "kubevirt":
            assert_valid(kubevirt_cr(document), KUBEVIRT)
            permitted = document["permittedHostDevices"]
        else:
            assert answer.format == "patch"
            assert_valid(document, KUBEVIRT)
            assert_valid(merge_patch(base_cr(), document), KUBEVIRT)
            permitted = document["spec"]["configuration"]["permittedHostDevices"]
        assert [e["resourceName"] for e in permitted.get("pciHostDevices", [])] == [
            e.resource_name for e in answer.pci_host_devices
        ]


def test_every_format_but_cozystack_is_checked_here():
    """The cozystack format is Cozystack's platform values, not a KubeVirt
    object: its schema is another test's. A new format must be added here."""
    assert set(FORMATS) == {"kubevirt", "cozystack", "patch"}
