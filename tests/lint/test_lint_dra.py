"""``lint`` of DRA claims (pciname.lint.kinds.dra): what ``pciname vm-gpus --dra``
writes lints clean for every working driver / KubeVirt / API combination of
the facts, every other driver release is refused in one line, and
hand-written wrong claims and VMs are findings naming what the driver
publishes, on the CLI, in the library and over a real loopback gRPC server.
pciname's verdict that a selector matches nothing is held against a real
CEL implementation (``cel``, Rust's cel-interpreter) run on every device the
driver release can publish."""

from __future__ import annotations

import functools
import json
import uuid
from typing import Any

import cel
import grpc
import pytest
import yaml

from pciname.capabilities.vm_gpus import DEFAULT_NAME
from pciname.dra.claims import STABLE_ATTRIBUTES, dra_objects, predicted_device, selector
from pciname.dra.facts import RESOURCE_APIS, DraCombinationError, choose, drivers, facts, kubevirts
from pciname.dra.selectors import driver_devices, judge
from pciname.lint.codes import (
    CODES,
    DRA_CONSTRAINT_NOT_PUBLISHED,
    DRA_HOST_DEPENDENT_SELECTOR,
    DRA_INVALID_CONFIG,
    DRA_PREPARE_CRASH,
    DRA_REQUEST_LAYOUT,
    DRA_SELECTOR_MATCHES_NOTHING,
    DRA_UNKNOWN_CLAIM,
    DRA_UNKNOWN_REQUEST,
    DRA_WRONG_DEVICE_CLASS,
    RuleName,
    markdown_table,
)
from pciname.lint.linter import Linter
from pciname.server._proto import pciname_pb2 as pb
from tests.cli_run import pciname as run
from tests.conftest import REPO

GPUS = ("10de:2236=2", "10de:20b5", "10de:2330")
D = 'device.attributes["gpu.nvidia.com"]'
A10 = f'{D}.vendorID == "0x10de" && {D}.deviceID == "0x2236"'


def working() -> list[tuple[str, str]]:
    return [(d, k) for d, row in facts()["compatibility"].items() for k, entry in row.items() if entry["works"]]


def newest_driver() -> str:
    """The default: the newest tagged release that works (not main, unreleased)."""
    return choose().driver


def generated(driver: str, kubevirt: str, api: str, *extra: str) -> str:
    code, out, err = run(
        "vm-gpus", *GPUS, "--dra", "--dra-driver", driver, "--kubevirt", kubevirt, "--resource-api", api, *extra
    )
    assert code == 0, err
    return out


def findings(text: str, driver: str | None = None, kubevirt: str | None = None) -> tuple[list[Any], list[str]]:
    combination = choose(driver, kubevirt) if driver or kubevirt else None
    linter = Linter("latest", dra=combination)
    linter.add_text(text, "claims.yaml")
    return linter.run(), linter.notes


def template(api: str, expression: str = A10, device_class: str = "vfio.gpu.nvidia.com", name: str = "gpu1") -> dict:
    one = {"deviceClassName": device_class, "selectors": [{"cel": {"expression": expression}}]}
    request = {"name": name, "exactly": one} if api != "v1beta1" else {"name": name, **one}
    return {
        "apiVersion": f"resource.k8s.io/{api}",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "vm-gpus"},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


def vm(claim: str = "vm-gpus", request: str = "gpu1", list_key: str = "gpus", **source: str) -> dict:
    source = source or {"resourceClaimTemplateName": "vm-gpus"}
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {"name": "vm"},
        "spec": {
            "template": {
                "spec": {
                    "resourceClaims": [{"name": "vm-gpus", **source}],
                    "domain": {"devices": {list_key: [{"name": "g", "claimName": claim, "requestName": request}]}},
                }
            }
        },
    }


def stream(*documents: dict) -> str:
    return yaml.safe_dump_all(documents, sort_keys=False)


# -- the baseline: the generator's output lints clean ------------------------------------


@pytest.mark.parametrize(("driver", "kubevirt"), working())
@pytest.mark.parametrize("api", RESOURCE_APIS)
def test_what_vm_gpus_dra_writes_lints_clean(driver, kubevirt, api, tmp_path):
    for extra in ((), ("--product-name",)):
        path = tmp_path / "claims.yaml"
        path.write_text(generated(driver, kubevirt, api, *extra))
        code, out, err = run("lint", str(path), "--dra-driver", driver, "--kubevirt", kubevirt)
        # Clean, but for the warning of a release whose plugin crashes preparing some GPUs (v0.4.0).
        crash = [DRA_PREPARE_CRASH] if choose(driver, kubevirt).prepare_crash() else []
        assert (code, [line.split(": ")[1] for line in out.splitlines()]) == (len(crash), crash), out + err
        assert "error" not in err
        assert [f.code for f in findings(path.read_text(), driver, kubevirt)[0]] == crash


@pytest.mark.parametrize("driver", drivers())
def test_every_driver_release_of_the_facts_is_linted_for_or_refused_in_one_line(driver, tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text(generated(*working()[-1], "v1"))
    code, out, err = run("lint", str(path), "--dra-driver", driver)
    if any(d == driver for d, _ in working()):
        crash = [DRA_PREPARE_CRASH] if choose(driver).prepare_crash() else []
        assert (code, [line.split(": ")[1] for line in out.splitlines()]) == (len(crash), crash)
        return
    with pytest.raises(DraCombinationError) as refused:
        choose(driver)
    assert (code, out, err) == (2, "", f"pciname: error: {refused.value}\n")
    assert "nearest that works: --dra-driver" in err


def test_a_kubevirt_release_no_driver_works_with_is_refused_in_one_line(tmp_path):
    refused = [k for k in kubevirts() if not any(k == kv for _, kv in working())]
    assert refused
    path = tmp_path / "claims.yaml"
    path.write_text(generated(*working()[-1], "v1"))
    code, out, err = run("lint", str(path), "--kubevirt", refused[0])
    assert (code, out) == (2, "")
    assert err.startswith(f"pciname: error: KubeVirt {refused[0]} works with no DRA driver release")
    assert err.count("\n") == 1


def test_a_kubevirt_release_without_dra_still_lints_an_input_without_claims(tmp_path):
    """--kubevirt also says whose own plugin serves the CR's entries: a
    release no DRA driver works with is refused only for DRA claims."""
    path = tmp_path / "cr.yaml"
    path.write_text(
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt, namespace: kubevirt}\n"
        "spec:\n  configuration:\n    permittedHostDevices:\n      pciHostDevices:\n"
        "        - {pciVendorSelector: 10DE:2236, resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}\n"
    )
    assert run("lint", str(path), "--kubevirt", "v1.5.0")[:2] == (0, "")


def test_without_releases_the_newest_pair_is_used_and_said(tmp_path):
    path = tmp_path / "claims.yaml"
    path.write_text(generated(*working()[-1], "v1"))
    code, out, err = run("lint", str(path))
    driver, kubevirt = choose().driver, choose().kubevirt
    assert (code, out) == (0, "")
    assert f"DRA claims are checked against DRA driver {driver} and KubeVirt {kubevirt}" in err


# -- wrong selectors: what the driver publishes instead ----------------------------------

WRONG = {
    "nvml-product-name": (
        f'{D}.productName == "NVIDIA A10"',
        ['"GA102GL [A10]" for 10de:2236', '"NVIDIA A10"'],
        "2236",
    ),
    "gpu-uuid": (f'{D}.uuid == "GPU-4d0fbbd0-5f7d-2bd2-0d0e-2e3a6b1f53a2"', ["not a GPU- UUID"], None),
    "upper-case-device-id": (f'{D}.vendorID == "0x10de" && {D}.deviceID == "0x20B5"', ['"0x20b5"', '"0x20B5"'], "20b5"),
    "device-id-without-0x": (f'{D}.deviceID == "2236"', ['"0x2236"', '"2236"'], "2236"),
    "device-id-as-a-number": (f"{D}.deviceID == 0x2236", ["is a string", "8758 (0x2236)"], "2236"),
    "vendor-id-upper-case": (f'{D}.vendorID == "0x10DE" && {D}.deviceID == "0x2236"', ['vendorID is "0x10de"'], "2236"),
    "not-published-for-vfio": (f'{D}.architecture == "Ampere"', ["publishes no such attribute for vfio devices"], None),
    "wrong-domain": (
        'device.attributes["gpu.nvidia.com"].pciBusID == "0000:3b:00.0"',
        ["publishes pciBusID in the domain resource.kubernetes.io"],
        None,
    ),
    "type-gpu": (f'{D}.type == "gpu" && {D}.deviceID == "0x2236"', ['type is "vfio" for every vfio device'], "2236"),
    "id-and-name-of-two-gpus": (
        f'{D}.deviceID == "0x2236" && {D}.productName == "GA100 [A100 PCIe 80GB]"',
        ['10de:2236 is deviceID "0x2236", productName "GA102GL [A10]"'],
        "2236",
    ),
}


@pytest.mark.parametrize("api", RESOURCE_APIS)
@pytest.mark.parametrize("case", WRONG)
def test_a_selector_no_vfio_device_matches_names_what_the_driver_publishes(case, api):
    expression, words, device_id = WRONG[case]
    found, _ = findings(stream(template(api, expression), vm()), newest_driver())
    wrong = [f for f in found if f.code == DRA_SELECTOR_MATCHES_NOTHING]
    assert len(wrong) == 1, [(f.code, f.message) for f in found]
    finding = wrong[0]
    assert finding.value == expression
    assert finding.path.endswith("selectors[0].cel.expression")
    assert all(word in finding.message for word in words), finding.message
    if device_id is None:
        assert finding.expected is None
    else:
        combination = choose(newest_driver())
        product = "productName" in expression
        assert finding.expected == selector(predicted_device(device_id, combination), product_name=product)
    assert {f.code for f in found} <= {DRA_SELECTOR_MATCHES_NOTHING}


HOST = {
    "pci-address": 'device.attributes["resource.kubernetes.io"].pciBusID == "0000:3b:00.0"',
    "numa": f"{A10} && {D}.numa == 0",
    "uuid": f'{D}.uuid == "{uuid.uuid5(uuid.NAMESPACE_DNS, "0000:3b:00.0")}"',
}


@pytest.mark.parametrize("case", HOST)
def test_a_selector_on_host_dependent_values_is_a_warning(case):
    found, _ = findings(stream(template("v1", HOST[case]), vm()), newest_driver())
    assert [f.code for f in found] == [DRA_HOST_DEPENDENT_SELECTOR]
    assert "fits one node's GPU only" in found[0].message


def test_cel_lint_does_not_read_is_a_note_never_a_finding():
    expression = f'{D}.productName.matches("^GA102")'
    found, notes = findings(stream(template("v1", expression), vm()), newest_driver())
    assert found == []
    assert len(notes) == 1 and "lint cannot judge this selector" in notes[0] and "matches()" in notes[0]


def test_common_right_forms_are_no_finding():
    for expression in (
        A10,
        f"{D}.deviceID == '0x2236'",
        f'{D}.productName == "GA102GL [A10]"',
        f'{D}.deviceID in ["0x2236", "0x20b5"]',
        f'device.driver == "gpu.nvidia.com" && {D}.type == "vfio" && {D}.deviceID == "0x2236"',
        f'cel.bind(g, {D}, g.vendorID == "0x10de" && g.deviceID == "0x2236")',
        f'has({D}.productName) && {D}.productName.startsWith("GA102")',
        f'{D}.deviceID == "0x2236" || {D}.architecture == "Ampere"',
    ):
        assert findings(stream(template("v1", expression), vm()), newest_driver()) == ([], []), expression


# -- the verdicts against a real CEL implementation -----------------------------------------


def _sample(name: str, kind: str, address: str) -> Any:
    values = {
        "uuid": str(uuid.uuid5(uuid.NAMESPACE_DNS, address)),
        "pciBusID": address,
        "pcieRoot": "pci0000:00",
    }
    return values.get(name, {"string": "sample", "int": 0, "bool": False}[kind])


@functools.cache
def cel_devices(driver: str) -> tuple[dict[str, Any], ...]:
    """Every vfio device the release can publish (each NVIDIA id of its
    pci.ids, and one id it does not name), host values made up in the
    driver's forms, as nested maps."""
    combination = choose(driver)
    ids = [*driver_devices(combination).known, "0xfffe"]
    out = []
    for index, device_id in enumerate(i.removeprefix("0x") for i in ids):
        device = predicted_device(device_id, combination).cel_device()
        address = f"0000:{index % 256:02x}:00.0"
        for attribute in combination.vfio["attributes"]:
            domain, _, name = attribute["name"].rpartition("/")
            if name not in STABLE_ATTRIBUTES:
                device["attributes"].setdefault(domain, {})[name] = _sample(name, attribute["type"], address)
        out.append(device)
    return tuple(out)


def cel_matches(expression: str, driver: str) -> bool:
    program = cel.compile(expression)
    for device in cel_devices(driver):
        try:
            if program.execute({"device": device}) is True:
                return True
        except Exception:  # noqa: BLE001 - an evaluation error aborts allocation: no match
            continue
    return False


#: Selectors the reader once called matching nothing, or crashed on (issue 36, items 2 and 5).
ONCE_WRONG = [
    f"has(device.driver) && {A10}",
    f"{D}.iommuFDEnabled >= false && {A10}",
    f"{D}.numa == 010 || {A10}",
    "!" * 1201 + f"false && {A10}",
    " && ".join(["true"] * 1000) + f" && {A10}",
]


@pytest.mark.parametrize(
    "expression",
    [w[0] for w in WRONG.values()] + [A10, f'{D}.productName == "GA102GL [A10]"', HOST["pci-address"], *ONCE_WRONG],
)
def test_pcinames_verdict_is_a_real_cel_implementations(expression):
    driver = newest_driver()
    verdict = judge(expression, choose(driver))
    assert verdict.matches is cel_matches(expression, driver), (expression, verdict)


# -- the VMs' references --------------------------------------------------------------------


@pytest.mark.parametrize("list_key", ["gpus", "hostDevices"])
def test_a_claim_the_vm_does_not_list_is_a_finding(list_key):
    found, _ = findings(stream(template("v1"), vm(claim="gpu-claim", list_key=list_key)), newest_driver())
    assert [(f.code, f.value, f.expected) for f in found] == [(DRA_UNKNOWN_CLAIM, "gpu-claim", ["vm-gpus"])]
    assert found[0].path == f"spec.template.spec.domain.devices.{list_key}[0].claimName"


@pytest.mark.parametrize("api", RESOURCE_APIS)
def test_a_request_the_claim_template_does_not_have_is_a_finding(api):
    found, _ = findings(stream(template(api), vm(request="gpu2")), newest_driver())
    assert [(f.code, f.value, f.expected) for f in found] == [(DRA_UNKNOWN_REQUEST, "gpu2", ["gpu1"])]
    assert "ResourceClaimTemplate vm-gpus has no request gpu2" in found[0].message


def test_a_resource_claim_is_looked_up_by_resource_claim_name():
    claim = template("v1")
    claim["kind"] = "ResourceClaim"
    claim["spec"] = claim["spec"]["spec"]
    clean = stream(claim, vm(resourceClaimName="vm-gpus"))
    assert findings(clean, newest_driver())[0] == []
    found, _ = findings(stream(claim, vm(request="x", resourceClaimName="vm-gpus")), newest_driver())
    assert [f.code for f in found] == [DRA_UNKNOWN_REQUEST]
    # a template of that name is another object: nothing to check the request against
    assert findings(stream(template("v1"), vm(request="x", resourceClaimName="vm-gpus")), newest_driver())[0] == []


@pytest.mark.parametrize("api", RESOURCE_APIS)
def test_a_vm_request_for_another_device_class_is_a_finding(api):
    wrong = template(api, device_class="gpu.nvidia.com")
    found, _ = findings(stream(wrong, vm()), newest_driver())
    assert [(f.code, f.value, f.expected) for f in found] == [
        (DRA_WRONG_DEVICE_CLASS, "gpu.nvidia.com", "vfio.gpu.nvidia.com")
    ]
    assert "KubeVirt passes a GPU through only as a vfio device" in found[0].message
    assert findings(stream(wrong), newest_driver())[0] == []  # no VM asks for it: a pod's claim, not judged


@pytest.mark.parametrize(
    ("api", "key"), [("v1", "deviceClassName"), ("v1beta2", "deviceClassName"), ("v1beta1", "exactly")]
)
def test_a_request_in_another_versions_layout_is_a_finding(api, key):
    other = "v1beta1" if api != "v1beta1" else "v1"
    document = template(other)
    document["apiVersion"] = f"resource.k8s.io/{api}"
    found, _ = findings(stream(document), newest_driver())
    assert DRA_REQUEST_LAYOUT in {f.code for f in found}
    layout = next(f for f in found if f.code == DRA_REQUEST_LAYOUT)
    assert layout.path == f"spec.spec.devices.requests[0].{key}"


# -- opaque configs, as the driver prepares the claim ----------------------------------------

VFIO_CONFIG = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "VfioDeviceConfig"}


def with_config(*configs: dict, api: str = "v1") -> str:
    document = template(api)
    document["spec"]["spec"]["devices"]["config"] = list(configs)
    return stream(document, vm())


def config(parameters: dict, requests: list[str] | None = None, driver: str = "gpu.nvidia.com") -> dict:
    entry: dict[str, Any] = {"opaque": {"driver": driver, "parameters": parameters}}
    return {"requests": requests, **entry} if requests is not None else entry


def config_findings(*configs: dict) -> list[tuple[str, str, Any]]:
    found, _ = findings(with_config(*configs), newest_driver())
    return [(f.path, f.message, f.expected) for f in found if f.code == DRA_INVALID_CONFIG]


@pytest.mark.parametrize(
    "parameters",
    [
        VFIO_CONFIG,
        {**VFIO_CONFIG, "iommu": {"enableAPIDevice": True}},  # what vm-gpus --dra writes
        {**VFIO_CONFIG, "iommu": {"backendPolicy": "PreferIommuFD", "enableAPIDevice": False}},
        {**VFIO_CONFIG, "iommu": {"backendPolicy": "LegacyOnly"}},
        {**VFIO_CONFIG, "iommu": {"backendPolicy": "", "enableAPIDevice": None}},  # Normalize defaults both
        {**VFIO_CONFIG, "iommu": {}},
    ],
)
def test_a_vfio_config_the_driver_takes_is_no_finding(parameters):
    assert config_findings(config(parameters), config(parameters, ["gpu1"])) == []


def test_a_vfio_config_the_driver_refuses_is_a_finding():
    bad = {**VFIO_CONFIG, "metadata": {}, "iommu": {"backendPolicy": "Legacy", "enableAPIDevice": "true", "x": 1}}
    found = config_findings(config(bad, ["gpu1"]))
    prefix = "spec.spec.devices.config[0].opaque.parameters."
    fields = "(its fields: iommu.backendPolicy, iommu.enableAPIDevice)"
    assert [(path.removeprefix(prefix), expected) for path, _, expected in found] == [
        ("metadata", None),
        ("iommu.backendPolicy", ["LegacyOnly", "PreferIommuFD"]),
        ("iommu.enableAPIDevice", True),
        ("iommu.x", None),
    ]
    messages = [message for _, message, _ in found]
    assert messages[0] == (
        f"DRA driver v0.4.1 decodes VfioDeviceConfig strictly and has no field metadata {fields}: "
        "preparing the claim fails, so the VM never starts"
    )
    assert "takes iommu.backendPolicy LegacyOnly or PreferIommuFD, not 'Legacy'" in messages[1]
    assert "reads iommu.enableAPIDevice as a boolean, not 'true'" in messages[2]
    assert f"has no field iommu.x {fields}" in messages[3]
    iommu_list = config_findings(config({**VFIO_CONFIG, "iommu": ["x"]}))
    assert [m.split(": preparing")[0] for _, m, _ in iommu_list] == [
        "DRA driver v0.4.1 reads VfioDeviceConfig iommu as an object, not a sequence"
    ]


def test_another_config_kind_for_a_vfio_request_is_a_finding_and_for_all_requests_is_not():
    gpu_config = {"apiVersion": "resource.nvidia.com/v1beta1", "kind": "GpuConfig"}
    (found,) = config_findings(config(gpu_config, ["gpu1"]))
    assert found[0] == "spec.spec.devices.config[0].opaque.parameters" and found[2] == "VfioDeviceConfig"
    assert "applies only VfioDeviceConfig (resource.nvidia.com/v1beta1) to a vfio device, not GpuConfig" in found[1]
    # A config without requests applies to each request it fits: the driver
    # passes a GpuConfig by for a vfio device (the code's `continue`).
    assert config_findings(config(gpu_config)) == []
    # Another driver's config is that driver's to read.
    assert config_findings(config({"apiVersion": "x/v1", "kind": "Y", "z": 1}, ["gpu1"], "other.example.com")) == []


def test_what_vm_gpus_writes_has_a_config_the_driver_takes(tmp_path):
    text = generated(*working()[-1], "v1")
    assert "VfioDeviceConfig" in text
    assert [f for f in findings(text, newest_driver())[0] if f.code == DRA_INVALID_CONFIG] == []


def test_a_kubevirt_release_with_the_gate_off_gets_a_note():
    off = [k for d, k in working() if not facts()["kubevirt_releases"][k]["feature_gates"]["GPUsWithDRA"]["default"]]
    assert off
    _, notes = findings(stream(template("v1"), vm()), newest_driver(), off[0])
    assert any(f"KubeVirt {off[0]} leaves GPUsWithDRA off by default" in n for n in notes)


# -- the CLI and gRPC answer the same ---------------------------------------------------------

WRONG_FILE = {
    "claims.yaml": stream(
        template("v1", WRONG["nvml-product-name"][0]), vm(), vm(claim="missing"), template("v1beta1", HOST["numa"])
    )
}


def test_cli_json_and_rpc_findings_are_the_same(client, stub, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "claims.yaml").write_text(WRONG_FILE["claims.yaml"])
    driver, kubevirt = newest_driver(), working()[-1][1]
    code, out, _ = run("lint", "claims.yaml", "-o", "json", "--dra-driver", driver, "--kubevirt", kubevirt)
    assert code == 1
    cli = json.loads(out)
    assert {f["code"] for f in cli} == {DRA_SELECTOR_MATCHES_NOTHING, DRA_UNKNOWN_CLAIM, DRA_HOST_DEPENDENT_SELECTOR}
    result = client.lint(WRONG_FILE, dra_driver=driver, kubevirt=kubevirt)
    assert [f.to_dict() for f in result.findings] == cli
    files = [pb.LintFile(name="claims.yaml", text=WRONG_FILE["claims.yaml"])]
    response = stub.Lint(pb.LintRequest(files=files, dra_driver=driver, kubevirt=kubevirt), timeout=30)
    assert [f.code for f in response.findings] == [f["code"] for f in cli]


def test_a_refused_combination_is_invalid_argument_over_grpc(stub):
    refused = next(d for d in drivers() if not any(d == w for w, _ in working()))
    files = [pb.LintFile(name="claims.yaml", text=WRONG_FILE["claims.yaml"])]
    with pytest.raises(grpc.RpcError) as error:
        stub.Lint(pb.LintRequest(files=files, dra_driver=refused), timeout=30)
    assert error.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    with pytest.raises(DraCombinationError) as expected:
        choose(refused)
    # the line the CLI prints, naming the releases by the message's fields (it said --dra-driver)
    rpc_words = str(expected.value).replace("--dra-driver", "dra_driver").replace("--kubevirt", "kubevirt")
    assert rpc_words in error.value.details() and "--" not in error.value.details()


def test_the_library_takes_the_generators_objects():
    combination = choose(*working()[-1])
    objects = dra_objects([("2236", 2), ("2330", 1)], combination, name=DEFAULT_NAME)
    linter = Linter("latest", dra=combination)
    linter.add_data({"apiVersion": "v1", "kind": "List", "items": list(objects.documents)}, "objects")
    assert linter.run() == []


def test_the_dra_sections_table_is_the_registrys():
    readme = (REPO / "docs" / "dra.md").read_text(encoding="utf-8")
    section = readme.split("### GPUs through DRA", 1)[1].split("\n### ", 1)[0]
    assert markdown_table("", RuleName.DRA_CLAIMS) in section, "run python -m tools.lint_tables --write"
    assert {c for c, code in CODES.items() if code.rules[0] == RuleName.DRA_CLAIMS} == {
        DRA_SELECTOR_MATCHES_NOTHING,
        DRA_HOST_DEPENDENT_SELECTOR,
        DRA_WRONG_DEVICE_CLASS,
        DRA_UNKNOWN_CLAIM,
        DRA_UNKNOWN_REQUEST,
        DRA_REQUEST_LAYOUT,
        DRA_INVALID_CONFIG,
        DRA_CONSTRAINT_NOT_PUBLISHED,
        DRA_PREPARE_CRASH,
    }


# -- the caller's deadline while judging (issue 36, item 1) ----------------------------------


class _Stop(Exception):
    pass


def test_the_linters_check_is_called_while_a_selector_is_judged():
    """The linter's check (a deadline, a cancellation) reaches the CEL
    reader: judging a long selector calls it many times, and where it
    raises, the run stops."""
    long = " || ".join(f'{D}.productName.endsWith("{uuid.uuid4().hex}")' for _ in range(60))

    def calls(expression: str, stop_after: int | None = None) -> int:
        count = [0]

        def check() -> None:
            count[0] += 1
            if stop_after is not None and count[0] > stop_after:
                raise _Stop

        linter = Linter("latest", dra=choose(newest_driver()), check=check)
        linter.add_text(stream(template("v1", expression), vm()), "claims.yaml")
        linter.run()
        return count[0]

    short = calls(A10)
    assert calls(long) > short + 10
    with pytest.raises(_Stop):
        calls(long.replace("endsWith", "startsWith"), stop_after=short + 2)
