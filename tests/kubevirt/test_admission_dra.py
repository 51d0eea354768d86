"""``admission-policy --dra``: the policy that holds DRA claims for NVIDIA's
vfio DeviceClass to the allowed GPUs. Its objects validate strictly against
the ``admissionregistration.k8s.io/v1`` schemas of every Kubernetes release
from 1.30; its CEL, run in the two real CEL implementations of
tests/kubevirt/admission_util.py, admits the claims ``pciname vm-gpus --dra``
writes for allowed GPUs (every driver release that publishes vfio devices,
every ``resource.k8s.io`` version, with and without the product name) and
refuses everything else asking that DeviceClass; CLI, library and gRPC give
the same documents, and a driver that publishes nothing is one line."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import grpc
import kubernetes_validate
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pciname.capabilities.admission import AdmissionPolicyRequest, answer
from pciname.capabilities.dra_claims import DraClaimsRequest, answer as dra_answer
from pciname.dra.facts import RESOURCE_APIS, facts
from pciname.policy.admission_dra import PADDING, RULE, SUFFIX, allowed_selectors, publishing_drivers
from pciname.server._proto import pciname_pb2 as pb
from tests.cli_run import pciname as _cli
from tests.conftest import REPO
from tests.kubevirt.admission_util import Evaluator

ALLOWED = ("10de:2236", "10de:1eb8")
OTHER = "10de:20b5"  # an NVIDIA GPU the policy does not allow
VFIO = "vfio.gpu.nvidia.com"
DOMAIN = 'device.attributes["gpu.nvidia.com"]'
PLAIN_1EB8 = f'{DOMAIN}.vendorID == "0x10de" && {DOMAIN}.deviceID == "0x1eb8"'

_CACHE: dict[Any, Any] = {}
#: A KubeVirt CR that permits 10DE:2236 by its right name and 10DE:2237 by a wrong one.
CR = """apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata: {name: kubevirt, namespace: kubevirt}
spec:
  configuration:
    permittedHostDevices:
      pciHostDevices:
      - {pciVendorSelector: "10DE:2236", resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}
      - {pciVendorSelector: "10DE:2237", resourceName: nvidia.com/A10G, externalResourceProvider: true}
"""


def _schema_versions() -> list[str]:
    """Every Kubernetes release from 1.30 whose strict schemas kubernetes-validate ships."""
    base = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    found = []
    for d in base.iterdir():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)-local-strict", d.name)
        if m and (int(m[1]), int(m[2])) >= (1, 30):
            found.append(f"{m[1]}.{m[2]}.{m[3]}")
    return sorted(found, key=lambda v: tuple(map(int, v.split("."))))


def _answer(devices=ALLOWED, actions=("Deny",), driver=None, **more):
    request = AdmissionPolicyRequest(tuple(devices), actions=tuple(actions), dra=True, dra_driver=driver, **more)
    return answer(request.validated(), "latest")


def _evaluator(driver: str | None = None, devices=ALLOWED) -> Evaluator:
    key = (driver, tuple(devices))
    if key not in _CACHE:
        _CACHE[key] = Evaluator(_answer(devices, driver=driver).policy.objects[2])
    return _CACHE[key]


def _template(driver: str, api: str, gpus: tuple[str, ...], product_name: bool = False) -> dict[str, Any]:
    """The ResourceClaimTemplate ``pciname vm-gpus --dra`` writes."""
    request = DraClaimsRequest(gpus, dra_driver=driver, resource_api=api, product_name=product_name)
    objects = dra_answer(request.validated())
    template = objects.documents[0]
    assert template["kind"] == "ResourceClaimTemplate"
    return template


def _claim(template: dict[str, Any]) -> dict[str, Any]:
    """The ResourceClaim kube-controller-manager makes of a template."""
    return {
        "apiVersion": template["apiVersion"],
        "kind": "ResourceClaim",
        "metadata": {"name": "vm-gpus-abcde", "namespace": "default"},
        "spec": copy.deepcopy(template["spec"]["spec"]),
    }


def _with_selectors(api: str, *expressions: str, device_class: str = VFIO, name: str = "gpu1") -> dict[str, Any]:
    """A ResourceClaimTemplate of one request with these selectors."""
    one: dict[str, Any] = {"deviceClassName": device_class, "allocationMode": "ExactCount", "count": 1}
    if expressions:
        one["selectors"] = [{"cel": {"expression": e}} for e in expressions]
    request = {"name": name, "exactly": one} if api != "v1beta1" else {"name": name, **one}
    return {
        "apiVersion": f"resource.k8s.io/{api}",
        "kind": "ResourceClaimTemplate",
        "metadata": {"name": "t"},
        "spec": {"spec": {"devices": {"requests": [request]}}},
    }


# -- the objects ---------------------------------------------------------------------


def test_dra_adds_a_policy_and_binding_named_after_the_policy():
    result = _answer(name="gpus", actions=("Warn", "Audit")).policy
    kinds = [(o["kind"], o["metadata"]["name"]) for o in result.objects]
    assert kinds == [
        ("ValidatingAdmissionPolicy", "gpus"),
        ("ValidatingAdmissionPolicyBinding", "gpus"),
        ("ValidatingAdmissionPolicy", "gpus" + SUFFIX),
        ("ValidatingAdmissionPolicyBinding", "gpus" + SUFFIX),
    ]
    policy, binding = result.objects[2], result.objects[3]
    assert binding["spec"] == {"policyName": "gpus-dra", "validationActions": ["Warn", "Audit"]}
    assert policy["spec"]["matchConstraints"]["resourceRules"] == [
        {
            "apiGroups": ["resource.k8s.io"],
            "apiVersions": ["v1", "v1beta2", "v1beta1"],
            "operations": ["CREATE", "UPDATE"],
            "resources": ["resourceclaims", "resourceclaimtemplates"],
        }
    ]
    assert policy["metadata"]["annotations"] == {
        "pciname.io/dra-driver": "v0.4.1",  # the newest tagged release, not main
        "pciname.io/device-class": VFIO,
        "pciname.io/allowed-gpus": "2",
    }
    without = answer(AdmissionPolicyRequest(ALLOWED, name="gpus").validated(), "latest").policy
    assert without.objects == result.objects[:2]


@pytest.mark.parametrize("actions", [("Warn", "Audit"), ("Deny",), ("Deny", "Audit"), ("Audit",)])
def test_objects_validate_strictly_against_every_release_from_1_30(actions):
    result = _answer(actions=actions).policy
    for version in _schema_versions():
        for obj in result.objects[2:]:
            kubernetes_validate.validate(obj, version, strict=True)
    assert result.objects[3]["spec"]["validationActions"] == list(actions)


def test_every_nvidia_gpu_allowed_fits_the_cel_and_object_limits():
    import pciname

    devices = sorted({r.device for r in pciname.devices("latest") if r.advertised})
    policy = _answer(devices).policy.objects[2]
    assert len(json.dumps(policy).encode()) < 1_000_000
    expressions = [v["expression"] for v in policy["spec"]["variables"]]
    assert max(len(e) for e in expressions) <= 100_000 and len(expressions) > 6  # the maps are chunked
    kubernetes_validate.validate(policy, _schema_versions()[-1], strict=True)
    evaluate = Evaluator(policy)
    allowed = _template(publishing_drivers()[-1], "v1", (f"{devices[-1]}=1",), product_name=True)
    assert evaluate(allowed).allowed
    padded = _with_selectors("v1", f"  {PLAIN_1EB8}\n")
    assert evaluate(padded).allowed == ("10de:1eb8" in devices)
    assert not evaluate(_with_selectors("v1", PLAIN_1EB8.replace("1eb8", "1EB8"))).allowed


# -- claims pciname writes -------------------------------------------------------------


@pytest.mark.parametrize("driver", publishing_drivers())
@pytest.mark.parametrize("api", RESOURCE_APIS)
@pytest.mark.parametrize("product_name", [False, True])
def test_the_claims_vm_gpus_writes_for_allowed_gpus_pass(driver, api, product_name):
    evaluate = _evaluator(driver)
    template = _template(driver, api, ("10de:2236=2", "10de:1eb8=1"), product_name)
    assert evaluate(template).allowed, evaluate(template).messages
    assert evaluate(_claim(template)).allowed


@pytest.mark.parametrize("driver", publishing_drivers())
@pytest.mark.parametrize("api", RESOURCE_APIS)
def test_a_claim_for_a_gpu_not_allowed_is_refused_naming_the_request(driver, api):
    evaluate = _evaluator(driver)
    template = _template(driver, api, ("10de:2236=1", f"{OTHER}=1"))
    verdict = evaluate(template)
    assert verdict.messages == [
        f"ResourceClaimTemplate vm-gpus: request gpu2: no selector holds it to an allowed GPU (pciname admission "
        f"policy, DRA driver {driver}): a request for DeviceClass {VFIO} passes only when one of its selectors is, "
        "but for leading and trailing spaces, tabs and line breaks, exactly one `pciname vm-gpus DEVICE --dra` "
        "writes for an allowed GPU (with or without --product-name); allowed: 10de:2236, 10de:1eb8"
    ]
    claim = evaluate(_claim(template))
    assert claim.messages and claim.messages[0].startswith("ResourceClaim vm-gpus-abcde: request gpu2: ")


def test_a_product_name_selected_claim_for_a_gpu_not_allowed_is_refused():
    template = _template(publishing_drivers()[-1], "v1", (f"{OTHER}=1",), product_name=True)
    assert not _evaluator()(template).allowed


# -- selectors written by hand -----------------------------------------------------------


NVML = f'{DOMAIN}.productName == "NVIDIA A10"'
REFUSED = {
    "NVML-style product name": NVML,
    "pciname's selector narrowed by an NVML-style product name": f"{PLAIN_1EB8} && {NVML}",
    "wrong-case device id": PLAIN_1EB8.replace("0x1eb8", "0x1EB8"),
    "upper-case prefix": PLAIN_1EB8.replace("0x1eb8", "0X1eb8"),
    "device id without 0x": PLAIN_1EB8.replace("0x1eb8", "1eb8"),
    "a GPU- uuid": f'{DOMAIN}.uuid == "GPU-4cf8db2d-06c0-7d70-1a51-e59b25b2c16c"',
    "widened by ||": f"{PLAIN_1EB8} || true",
    "in parentheses": f"({PLAIN_1EB8})",
    "single quotes": PLAIN_1EB8.replace('"', "'"),
    "vendor id only": f'{DOMAIN}.vendorID == "0x10de"',
    "a wrong product name for the id": f'{PLAIN_1EB8} && {DOMAIN}.productName == "GA102GL [A10]"',
    "a product name with a trailing clause": f'{PLAIN_1EB8} && {DOMAIN}.productName == "TU104GL [Tesla T4]" || true',
    "space inside": PLAIN_1EB8.replace(" && ", "  && "),
    "padded by a form feed": f"\f{PLAIN_1EB8}",
}


@pytest.mark.parametrize("api", RESOURCE_APIS)
@pytest.mark.parametrize("what", sorted(REFUSED))
def test_a_selector_not_held_to_an_allowed_gpu_is_refused(api, what):
    verdict = _evaluator()(_with_selectors(api, REFUSED[what]))
    assert len(verdict.messages) == 1 and verdict.messages[0].startswith("ResourceClaimTemplate t: request gpu1: ")


PASSED = {
    "exact": PLAIN_1EB8,
    "leading spaces": f"   {PLAIN_1EB8}",
    "a trailing line break (a YAML block scalar)": f"{PLAIN_1EB8}\n",
    "tabs and CRLF": f"\t{PLAIN_1EB8}\r\n",
    "with the product name, padded": f' {PLAIN_1EB8} && {DOMAIN}.productName == "TU104GL [Tesla T4]"\n',
}


@pytest.mark.parametrize("api", RESOURCE_APIS)
@pytest.mark.parametrize("what", sorted(PASSED))
def test_a_selector_pciname_writes_passes_trimmed(api, what):
    assert _evaluator()(_with_selectors(api, PASSED[what])).allowed


def test_a_held_selector_beside_others_passes_they_only_narrow_it():
    assert _evaluator()(_with_selectors("v1", NVML, PLAIN_1EB8, f'{DOMAIN}.uuid == "GPU-1"')).allowed


@pytest.mark.parametrize("api", RESOURCE_APIS)
def test_a_vfio_request_without_selectors_is_refused(api):
    assert not _evaluator()(_with_selectors(api)).allowed
    empty = _with_selectors(api, PLAIN_1EB8)
    one = empty["spec"]["spec"]["devices"]["requests"][0]
    (one.get("exactly") or one)["selectors"] = [{"cel": {}}]
    assert not _evaluator()(empty).allowed


@pytest.mark.parametrize("api", RESOURCE_APIS)
def test_other_device_classes_pass_untouched(api):
    evaluate = _evaluator()
    assert evaluate(_with_selectors(api, NVML, device_class="gpu.nvidia.com")).allowed
    assert evaluate(_with_selectors(api, device_class="vfio.example.com")).allowed
    assert evaluate(_with_selectors(api, REFUSED["a GPU- uuid"], device_class="mig.nvidia.com")).allowed


def _first_available(api: str, *units: tuple[str, str]) -> dict[str, Any]:
    template = _with_selectors(api, PLAIN_1EB8)
    template["spec"]["spec"]["devices"]["requests"] = [
        {
            "name": "gpu",
            "firstAvailable": [
                {"name": f"s{i}", "deviceClassName": cls, "selectors": [{"cel": {"expression": e}}]}
                for i, (cls, e) in enumerate(units)
            ],
        }
    ]
    return template


@pytest.mark.parametrize("api", RESOURCE_APIS)
def test_every_first_available_subrequest_for_vfio_is_held(api):
    evaluate = _evaluator()
    assert evaluate(_first_available(api, (VFIO, PLAIN_1EB8), ("gpu.nvidia.com", NVML))).allowed
    verdict = evaluate(_first_available(api, (VFIO, PLAIN_1EB8), (VFIO, NVML)))
    assert len(verdict.messages) == 1 and ": request gpu: " in verdict.messages[0]


def test_other_kinds_and_empty_claims_have_nothing_to_check():
    evaluate = _evaluator()
    assert evaluate({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}).allowed
    assert evaluate({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": "x"}}).allowed
    bare = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate", "metadata": {"generateName": "g-"}}
    assert evaluate({**bare, "spec": {"spec": {}}}).allowed
    verdict = evaluate({**_with_selectors("v1", NVML), "metadata": {"generateName": "g-"}})
    assert verdict.messages[0].startswith("ResourceClaimTemplate g-*: request gpu1: ")


def test_a_claim_being_deleted_is_not_checked():
    claim = _with_selectors("v1", NVML)
    claim["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    assert _evaluator()(claim).matched is False


def test_an_update_is_checked_for_what_it_adds():
    evaluate = _evaluator()
    old = _with_selectors("v1", NVML)
    relabelled = copy.deepcopy(old)
    relabelled["metadata"]["labels"] = {"a": "b"}
    assert evaluate(relabelled, old).allowed  # written before the policy: it can still be updated
    added = copy.deepcopy(old)
    added["spec"]["spec"]["devices"]["requests"].append(
        _with_selectors("v1", f"{PLAIN_1EB8} || true", name="gpu2")["spec"]["spec"]["devices"]["requests"][0]
    )
    verdict = evaluate(added, old)
    assert len(verdict.messages) == 1 and ": request gpu2: " in verdict.messages[0]
    changed = _with_selectors("v1", REFUSED["a GPU- uuid"])
    assert not evaluate(changed, old).allowed  # the same request name, another selector


# -- the rule itself as the oracle ---------------------------------------------------------


def _selectors(devices: tuple[str, ...]) -> list[str]:
    from pciname.dra.facts import choose

    plain, named = allowed_selectors([d.partition(":")[2] for d in devices], choose(publishing_drivers()[-1]))
    return plain + named


_PADS = st.text(alphabet=" \t\n\r\f\vx", max_size=3)


@st.composite
def _mutated(draw: st.DrawFn) -> str:
    """pciname's selector for an allowed GPU or another one, maybe changed by one character."""
    text = draw(st.sampled_from(_selectors((*ALLOWED, OTHER))))
    change = draw(st.sampled_from(["none", "insert", "delete", "case"]))
    at = draw(st.integers(0, len(text) - 1))
    if change == "insert":
        text = text[:at] + draw(st.sampled_from(list(' "\\|&()x0\n'))) + text[at:]
    elif change == "delete":
        text = text[:at] + text[at + 1 :]
    elif change == "case":
        text = text[:at] + text[at].swapcase() + text[at + 1 :]
    return text


@pytest.fixture(scope="module")
def evaluate() -> Evaluator:
    """The policy's evaluator, built before any example runs (celpy raises the recursion limit)."""
    return _evaluator()


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(before=_PADS, core=_mutated(), after=_PADS, api=st.sampled_from(RESOURCE_APIS))
def test_a_selector_passes_exactly_when_trimmed_it_is_one_pciname_writes_for_an_allowed_gpu(
    evaluate, before, core, after, api
):
    text = before + core + after
    expected = text.strip(PADDING) in _selectors(ALLOWED)
    assert evaluate(_with_selectors(api, text)).allowed == expected, repr(text)


def test_the_readme_states_the_rule_the_message_gives():
    readme = (REPO / "docs" / "admission.md").read_text(encoding="utf-8")
    assert RULE.format(device_class=VFIO) + "." in readme
    assert RULE.format(device_class=VFIO) in _answer().policy.objects[2]["spec"]["validations"][0]["messageExpression"]


# -- where the allowed GPUs come from -----------------------------------------------------


def test_a_policy_that_allows_no_gpu_refuses_every_vfio_claim():
    result = answer(
        AdmissionPolicyRequest(mdev_types=("NVIDIA A10-24Q",), dra=True).validated(), "latest"
    ).policy.objects[2]
    verdict = Evaluator(result)(_with_selectors("v1", PLAIN_1EB8))
    assert verdict.messages[0].endswith("; the policy allows no GPU")
    assert Evaluator(result)(_with_selectors("v1", NVML, device_class="gpu.nvidia.com")).allowed


def test_the_gpus_left_out_of_the_names_are_left_out_of_the_claims_too():
    result = _answer(("10de:2236", "15b3:101e"))
    assert [s.item for s in result.left_out] == ["15b3:101e"]
    assert result.policy.objects[2]["metadata"]["annotations"]["pciname.io/allowed-gpus"] == "1"


def test_with_a_kubevirt_cr_the_allowed_gpus_are_its_working_entries(tmp_path):
    path = tmp_path / "kubevirt.yaml"
    path.write_text(CR, encoding="utf-8")
    cli = _cli("admission-policy", "--from-cr", str(path), "--dra", "--action", "Deny", "-o", "json", "-p", "latest")
    assert cli.returncode == 1  # 10DE:2237's name is wrong: left out, of the claims too
    policy = json.loads(cli.stdout)["items"][2]
    evaluate = Evaluator(policy)
    assert evaluate(_template(publishing_drivers()[-1], "v1", ("10de:2236=1",))).allowed
    assert not evaluate(_template(publishing_drivers()[-1], "v1", ("10de:2237=1",))).allowed
    assert policy["spec"]["validations"][0]["messageExpression"].endswith('allowed: 10de:2236"')


# -- surfaces --------------------------------------------------------------------------


def test_cli_library_and_grpc_give_the_same_documents(client):
    args = ["admission-policy", *ALLOWED, "--dra", "--action", "Deny"]
    library = _answer().policy
    for output, text in (("yaml", library.to_yaml()), ("json", library.to_json())):
        cli = _cli(*args, "-o", output)
        assert cli.returncode == 0 and cli.stdout == text
    over_grpc = client.admission_policy(list(ALLOWED), actions=["Deny"], dra=True, profile="latest")
    assert over_grpc.yaml == library.to_yaml() and over_grpc.json == library.to_json()
    named = client.admission_policy(list(ALLOWED), dra=True, dra_driver=publishing_drivers()[-1], profile="latest")
    assert [d["metadata"]["name"] for d in yaml.safe_load_all(named.yaml)][2:] == ["pciname-gpu-names-dra"] * 2


def test_the_refused_releases_below_are_the_facts_ones():
    """v25.12.0 carries the vfio code but publishes nothing by a bug; v25.3.0 has no vfio code."""
    releases = facts()["driver_releases"]
    bugged = [d for d, f in releases.items() if (f["vfio"].get("enumeration") or {}).get("bug")]
    assert bugged == ["v25.12.0"] and "v25.3.0" in releases and "v9" not in releases
    assert publishing_drivers() and not set(bugged + ["v25.3.0"]) & set(publishing_drivers())


@pytest.mark.parametrize(
    ("args", "needle"),
    [
        (["--dra", "--dra-driver", "v25.12.0"], "--dra-driver v25.12.0: the driver publishes no vfio device, by a bug"),
        (["--dra", "--dra-driver", "v25.3.0"], "--dra-driver v25.3.0: the driver publishes no vfio device; the newest"),
        (["--dra", "--dra-driver", "v9"], "--dra-driver 'v9': no such release in pciname's facts"),
        (["--dra-driver", "v0.4.0"], "--dra-driver goes with --dra"),
    ],
)
def test_a_refused_driver_is_one_line_and_exit_2(args, needle):
    cli = _cli("admission-policy", "10de:2236", *args)
    assert cli.returncode == 2 and cli.stdout == ""
    assert cli.stderr.startswith(f"pciname: error: {needle}") and cli.stderr.count("\n") == 1


@pytest.mark.parametrize(
    ("message", "needle"),
    [
        (pb.AdmissionPolicyRequest(devices=["10de:2236"], dra=True, dra_driver="v25.12.0"), "dra_driver v25.12.0: "),
        (pb.AdmissionPolicyRequest(devices=["10de:2236"], dra=True, dra_driver="v9"), "dra_driver 'v9': no such"),
        (pb.AdmissionPolicyRequest(devices=["10de:2236"], dra_driver="v0.4.0"), "dra_driver goes with dra"),
    ],
)
def test_grpc_refuses_a_driver_in_one_line(stub, message, needle):
    with pytest.raises(grpc.RpcError) as raised:
        stub.AdmissionPolicy(message, timeout=60)
    assert raised.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in raised.value.details() and "\n" not in raised.value.details()
