"""The ValidatingAdmissionPolicy of ``pciname admission-policy``: strict
schemas of every Kubernetes release from 1.30 that kubernetes-validate ships,
its CEL run in two real CEL implementations (tests/kubevirt/admission_util.py) on real
objects, and ``pciname lint`` as the oracle of every verdict and message."""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import kubernetes_validate
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pciname.kubevirt.generate import permitted_host_devices, vm_gpus
from pciname.lint.hints import LIST_PERMITTED_MAX
from pciname.lint.linter import NOT_PERMITTED, WRONG_MDEV_RESOURCE_NAME, WRONG_RESOURCE_NAME, Linter
from pciname.policy import admission
from pciname.policy.admission import TARGETS, admission_policy, allowed_from_cr, allowed_from_devices
from pciname.resolution.resolver import resolver_or_default
from tests.cli_run import pciname as _cli
from tests.conftest import REPO, TEST_DATA
from tests.kubevirt.admission_util import Evaluator

SMALL = (["10de:2236", "10de:1eb8"], ["NVIDIA A10-24Q"])


def _schema_versions() -> list[str]:
    """Every Kubernetes release from 1.30 whose strict schemas kubernetes-validate ships."""
    base = Path(kubernetes_validate.__file__).parent / "kubernetes-json-schema"
    found = []
    for d in base.iterdir():
        m = re.fullmatch(r"v(\d+)\.(\d+)\.(\d+)-local-strict", d.name)
        if m and (int(m[1]), int(m[2])) >= (1, 30):
            found.append(f"{m[1]}.{m[2]}.{m[3]}")
    return sorted(found, key=lambda v: tuple(map(int, v.split("."))))


def _policy(devices: list[str], mdevs: list[str], actions: tuple[str, ...] = ("Deny",), profile: str = "latest"):
    permitted, _ = allowed_from_devices(devices, mdevs, profile)
    return admission_policy(permitted, profile, actions), permitted


_CACHE: dict[Any, Any] = {}


def _small():
    if "small" not in _CACHE:
        result, permitted = _policy(*SMALL)
        _CACHE["small"] = (result, permitted, Evaluator(result.objects[0]))
    return _CACHE["small"]


def _large():
    """The largest allowed set: every NVIDIA device the profile advertises, and vGPU types."""
    if "large" not in _CACHE:
        import pciname

        devices = [r.device for r in pciname.devices("latest") if r.advertised]
        result, permitted = _policy(devices, ["NVIDIA A10-24Q", "NVIDIA A100-40C", "GRID T4-1Q"])
        _CACHE["large"] = (result, permitted, Evaluator(result.objects[0]))
    return _CACHE["large"]


def _kubevirt_cr(permitted: dict[str, Any]) -> str:
    return yaml.safe_dump(
        {
            "apiVersion": "kubevirt.io/v1",
            "kind": "KubeVirt",
            "metadata": {"name": "kubevirt", "namespace": "kubevirt"},
            "spec": {"configuration": {"permittedHostDevices": permitted}},
        },
        sort_keys=False,
    )


_CR_DOCS: dict[int, tuple[dict[str, Any], list[Any]]] = {}


def _lint(permitted: dict[str, Any], obj: dict[str, Any]) -> list[Any]:
    """lint's findings on ``obj`` beside a KubeVirt CR that permits exactly
    ``permitted``. The CR is composed once (the largest takes 1.2 s to
    compose) and its documents handed to each new Linter."""
    if id(permitted) not in _CR_DOCS:
        base = Linter("latest")
        base.add_text(_kubevirt_cr(permitted), "kubevirt.yaml")
        _CR_DOCS[id(permitted)] = (permitted, base._docs)
    linter = Linter("latest")
    linter._docs.extend(_CR_DOCS[id(permitted)][1])
    linter.add_text(yaml.safe_dump(obj, sort_keys=False), "object.yaml")
    return [f for f in linter.run() if f.file == "object.yaml"]


def _agree(evaluator: Evaluator, permitted: dict[str, Any], obj: dict[str, Any]) -> None:
    """Lint is the oracle: the policy refuses exactly the objects lint finds
    not-permitted names in, and its message names one of them and every
    name lint expects instead."""
    verdict = evaluator(obj)
    wrong = [f for f in _lint(permitted, obj) if f.code == NOT_PERMITTED]
    assert verdict.allowed == (not wrong), (verdict.messages, [f.format() for f in wrong])
    if wrong:
        (message,) = verdict.messages
        named = [f for f in wrong if f" {f.value} is not permitted" in message]
        assert named, (message, [f.value for f in wrong])
        hints = {k for name, (_, value) in evaluator.constants.items() if name.startswith("hints") for k in value}
        allowed = {e["resourceName"] for key in ("pciHostDevices", "mediatedDevices") for e in permitted.get(key, [])}
        if not hints and len(allowed) > LIST_PERMITTED_MAX:
            # More allowed names than the hint budget covers for every known
            # wrong name: no hint is written, and the message says so.
            assert "too many for pciname to write hints for: `pciname lint` names the closest" in message, message
            return
        if hints and named[0].value not in hints:
            # The largest sets: hints are written ahead for the names releases
            # and Cozystack use; of any other name the policy cannot say what
            # is close (no difflib in CEL), and says so.
            assert "no permitted name pciname knows of is close" in message, message
            return
        for name in named[0].expected:
            assert name in message, (message, named[0].expected)


# -- schemas and size -------------------------------------------------------------


def test_there_are_schemas_from_1_30_on():
    versions = _schema_versions()
    assert versions[0].startswith("1.30.") and len(versions) >= 8


@pytest.mark.parametrize("actions", [("Warn", "Audit"), ("Deny",), ("Deny", "Audit"), ("Audit",)])
def test_objects_validate_strictly_against_every_release_from_1_30(actions):
    result, _ = _policy(*SMALL, actions=actions)
    for version in _schema_versions():
        for obj in result.objects:
            kubernetes_validate.validate(obj, version, strict=True)
    assert result.objects[1]["spec"]["validationActions"] == list(actions)


def test_a_field_kubernetes_does_not_define_is_refused_by_the_strict_schema():
    result, _ = _small()[:2]
    bad = copy.deepcopy(result.objects[0])
    bad["spec"]["validations"][0]["bogus"] = True
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(bad, _schema_versions()[0], strict=True)


def test_the_largest_allowed_set_fits_the_cel_and_object_limits():
    result, permitted, _ = _large()
    for version in _schema_versions()[:1] + _schema_versions()[-1:]:
        for obj in result.objects:
            kubernetes_validate.validate(obj, version, strict=True)
    spec = result.objects[0]["spec"]
    expressions = [v["expression"] for v in spec["variables"]] + [
        e for v in spec["validations"] for e in (v["expression"], v["messageExpression"])
    ]
    assert max(len(e) for e in expressions) <= admission.CHUNK_CODE_POINTS < admission.MAX_EXPRESSION_CODE_POINTS
    size = len(json.dumps(result.objects[0]).encode())
    assert size <= admission.MAX_POLICY_BYTES
    names = {e["resourceName"] for key in ("pciHostDevices", "mediatedDevices") for e in permitted[key]}
    assert result.allowed == tuple(sorted(names)) and len(names) > 1000
    print(f"largest set: {len(names)} names, policy {size} bytes, longest expression {max(map(len, expressions))}")


def test_only_core_cel_is_used():
    """No Kubernetes extension function (join, lowerAscii, split, ...), only
    has() and the core macros and functions."""
    result, _, _ = _small()
    spec = result.objects[0]["spec"]
    text = " ".join(
        [v["expression"] for v in spec["variables"]]
        + [e for v in spec["validations"] for e in (v["expression"], v["messageExpression"])]
    )
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)
    text = re.sub(r"'(?:[^'\\]|\\.)*'", "''", text)
    called = set(re.findall(r"([A-Za-z_][A-Za-z0-9_]*)\s*\(", text))
    assert called <= {"has", "size", "startsWith", "filter", "map", "exists", "all"}, called


# -- the A10 / A10G case -------------------------------------------------------------


def test_a_vm_asking_for_the_a10g_name_for_an_a10_is_refused_under_deny():
    result, permitted = _policy(["10de:2236"], [], ("Deny",))
    assert result.objects[1]["spec"]["validationActions"] == ["Deny"]
    vm = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {"name": "a10"},
        "spec": {
            "template": {"spec": {"domain": {"devices": {"gpus": [vm_gpus([("10de:2237", 1)]).data["gpus"][0]]}}}}
        },
    }
    assert vm["spec"]["template"]["spec"]["domain"]["devices"]["gpus"][0]["deviceName"] == "nvidia.com/GA102GL_A10G"
    evaluator = Evaluator(result.objects[0])
    (message,) = evaluator(vm).messages
    assert "nvidia.com/GA102GL_A10G is not permitted" in message and "nvidia.com/GA102GL_A10," not in message
    assert message.endswith("permitted: nvidia.com/GA102GL_A10")
    _agree(evaluator, permitted, vm)


def test_the_default_binding_warns_and_audits():
    permitted, _ = allowed_from_devices(["10de:2236"])
    assert admission_policy(permitted).objects[1]["spec"]["validationActions"] == ["Warn", "Audit"]


# -- real objects, lint as the oracle ------------------------------------------------


def _examples() -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((TEST_DATA / "kubevirt-examples.yaml").read_text()) if d]


def _with_names(obj: dict[str, Any], target_kind: str, gpus: list[str], host: list[str]) -> dict[str, Any]:
    obj = copy.deepcopy(obj)
    target = next(t for t in TARGETS if t.kind == target_kind)
    node = obj
    for key in target.devices:
        node = node.setdefault(key, {})
    if gpus:
        node["gpus"] = [{"name": f"g{i}", "deviceName": n} for i, n in enumerate(gpus)]
    if host:
        node["hostDevices"] = [{"name": f"h{i}", "deviceName": n} for i, n in enumerate(host)]
    return obj


@pytest.mark.parametrize("which", ["small", "large"])
def test_kubevirt_examples_as_they_are_and_with_gpus(which):
    _, permitted, evaluator = _small() if which == "small" else _large()
    for example in _examples():
        _agree(evaluator, permitted, example)
        target = example["kind"]
        cases = (
            ["nvidia.com/GA102GL_A10"],
            ["nvidia.com/GA102GL_A10G"],
            ["nvidia.com/A10"],
            ["nvidia.com/TU104GL_Tesla_T4"],
            ["nvidia.com/NVIDIA_A10-24Q", "nvidia.com/A10-24Q"],
        )
        for names in cases if which == "small" else cases[2:4]:  # lint of the large CR takes 0.25 s
            for gpus, host in ((names, []), ([], names)):
                _agree(evaluator, permitted, _with_names(example, target, gpus, host))
    gpu_example = next(e for e in _examples() if e["metadata"]["name"] == "vmi-gpu")
    assert not evaluator(gpu_example).allowed  # nvidia.com/GP102GL_Tesla_P40 is not among them


def test_vm_gpus_output_and_cluster_api_templates():
    _, permitted, evaluator = _small()
    for devices in ([("10de:2236", 2)], [("10de:1eb8", 1)], [("10de:2237", 1)], [("10de:2330", 1), ("10de:2236", 1)]):
        gpus = vm_gpus(devices).data["gpus"]
        names = [g["deviceName"] for g in gpus]
        for target in TARGETS:
            obj = _with_names(
                {"apiVersion": "x/v1", "kind": target.kind, "metadata": {"name": "o"}}, target.kind, names, []
            )
            _agree(evaluator, permitted, obj)


def _cozystack_release(kind: str, gpus: list[str]) -> dict[str, Any]:
    values: dict[str, Any]
    if kind == "Kubernetes":
        values = {"nodeGroups": {"md0": {"minReplicas": 0}, "gpu": {"gpus": [{"name": n} for n in gpus]}}}
    else:
        values = {"cluster": "c", "gpus": [{"name": n} for n in gpus]}
    return {
        "apiVersion": "helm.toolkit.fluxcd.io/v2",
        "kind": "HelmRelease",
        "metadata": {
            "name": "kubernetes-c" if kind == "Kubernetes" else "kubernetes-nodes-c-gpu",
            "namespace": "tenant-foo",
            "labels": {"apps.cozystack.io/application.kind": kind},
        },
        "spec": {"values": values},
    }


def test_cozystack_tenant_kubernetes_helmrelease_agrees_with_lint():
    _, permitted, evaluator = _small()
    for names in (["nvidia.com/GA102GL_A10"], ["nvidia.com/GA102GL_A10G"], ["nvidia.com/GA102GL_A10", "nvidia.com/X"]):
        release = _cozystack_release("Kubernetes", names)
        _agree(evaluator, permitted, release)
        verdict = evaluator(release)
        if not verdict.allowed:
            assert verdict.messages[0].startswith(
                "HelmRelease kubernetes-c (Cozystack Kubernetes): nodeGroups.gpu.gpus: "
            )


def test_cozystack_kubernetes_nodes_helmrelease_agrees_with_lint():
    """lint reads the KubernetesNodes HelmRelease (by its label) as the policy
    does: verdicts agree, and the message names lint's hint."""
    _, permitted, evaluator = _small()
    for names in (
        ["nvidia.com/GA102GL_A10"],
        ["nvidia.com/GA102GL_A10G"],
        ["nvidia.com/GA102GL_A10", "nvidia.com/X"],
        ["nvidia.com/NVIDIA_A10-24Q", "intel.com/qat"],
        [],
    ):
        release = _cozystack_release("KubernetesNodes", names)
        _agree(evaluator, permitted, release)
        verdict = evaluator(release)
        if not verdict.allowed:
            assert verdict.messages[0].startswith(
                "HelmRelease kubernetes-nodes-c-gpu (Cozystack KubernetesNodes): gpus: "
            )
    (message,) = evaluator(_cozystack_release("KubernetesNodes", ["nvidia.com/GA102GL_A10G"])).messages
    assert "gpus: nvidia.com/GA102GL_A10G is not permitted" in message and "nvidia.com/GA102GL_A10" in message
    for label in ("VirtualMachine", "Kubernetes", None):  # another application's values are not read, by either
        other = _cozystack_release("KubernetesNodes", ["nvidia.com/GA102GL_A10G"])
        other["metadata"]["labels"] = {} if label is None else {"apps.cozystack.io/application.kind": label}
        assert evaluator(other).allowed
        _agree(evaluator, permitted, other)


def _cr_agrees(evaluator: Evaluator, cr: dict[str, Any]) -> None:
    linter = Linter("latest")
    linter.add_text(yaml.safe_dump(cr, sort_keys=False), "cr.yaml")
    wrong = [f for f in linter.run() if f.code in (WRONG_RESOURCE_NAME, WRONG_MDEV_RESOURCE_NAME)]
    verdict = evaluator(cr)
    assert verdict.allowed == (not wrong), (verdict.messages, [f.format() for f in wrong])
    for message in verdict.messages:
        assert any(f"advertises it as {f.expected}, not {f.value}" in message for f in wrong), message


@pytest.mark.parametrize("which", ["small", "large"])
def test_kubevirt_cr_names_agree_with_lint(which):
    _, _permitted, evaluator = _small() if which == "small" else _large()
    right = permitted_host_devices(["10de:2236", "10de:2330", "10de:26b9"], ["NVIDIA A10-24Q"]).data
    cr = yaml.safe_load(_kubevirt_cr(right))
    _cr_agrees(evaluator, cr)
    for index, wrong in ((0, "nvidia.com/A10"), (1, "nvidia.com/GH100H100_SXM5_80GB"), (2, "nvidia.com/AD102GL_L40S")):
        bad = copy.deepcopy(cr)
        bad["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"][index]["resourceName"] = wrong
        _cr_agrees(evaluator, bad)
        lower = copy.deepcopy(bad)
        entry = lower["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"][index]
        entry["pciVendorSelector"] = entry["pciVendorSelector"].lower()
        _cr_agrees(evaluator, lower)
        kubevirt_own = copy.deepcopy(bad)  # KubeVirt's own plugin advertises it: any valid name
        kubevirt_own["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"][index].pop(
            "externalResourceProvider"
        )
        assert evaluator(kubevirt_own).allowed
    bad = copy.deepcopy(cr)
    bad["spec"]["configuration"]["permittedHostDevices"]["mediatedDevices"][0]["resourceName"] = "nvidia.com/A10-24Q"
    _cr_agrees(evaluator, bad)


# -- hypothesis: generated VMs -----------------------------------------------------

_NAMES = st.sampled_from(
    [
        "nvidia.com/GA102GL_A10",
        "nvidia.com/GA102GL_A10G",
        "nvidia.com/TU104GL_TESLA_T4",
        "nvidia.com/TU104GL_Tesla_T4",
        "nvidia.com/NVIDIA_A10-24Q",
        "nvidia.com/A10-24Q",
        "nvidia.com/GH100_H100_SXM5_80GB",
        "nvidia.com/GH100H100_SXM5_80GB",
        "nvidia.com/AD102GL_L40S",
        "nvidia.com/26b9",
        "kubevirt.io/storage",
        "intel.com/qat",
    ]
)
_RANDOM = st.builds(lambda s: "nvidia.com/" + s, st.from_regex(r"[A-Za-z0-9_]{1,12}", fullmatch=True))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    kind=st.sampled_from([t.kind for t in TARGETS]),
    gpus=st.lists(st.one_of(_NAMES, _RANDOM), max_size=4),
    host=st.lists(st.one_of(_NAMES, _RANDOM), max_size=3),
)
def test_generated_vms_small_set(kind, gpus, host):
    _, permitted, evaluator = _small()
    _agree(
        evaluator,
        permitted,
        _with_names({"apiVersion": "x/v1", "kind": kind, "metadata": {"name": "v"}}, kind, gpus, host),
    )


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from([t.kind for t in TARGETS]), gpus=st.lists(_NAMES, max_size=4), data=st.data())
def test_generated_vms_largest_set(kind, gpus, data):
    """With every device allowed, a wrong name gets a precomputed hint: for
    every name a release or Cozystack's defaults use (names drawn from them)."""
    _result, permitted, evaluator = _large()
    universe = sorted(admission._universe(resolver_or_default(None), "latest"))
    extra = data.draw(st.lists(st.sampled_from(universe), max_size=2))
    _agree(
        evaluator,
        permitted,
        _with_names({"apiVersion": "x/v1", "kind": kind, "metadata": {"name": "v"}}, kind, gpus + extra, []),
    )


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    shape=st.sampled_from(
        [
            ("Kubernetes", "Kubernetes"),
            ("KubernetesNodes", "KubernetesNodes"),
            ("KubernetesNodes", "Kubernetes"),
            ("KubernetesNodes", "Postgres"),
            ("KubernetesNodes", None),
        ]
    ),
    gpus=st.lists(st.one_of(_NAMES, _RANDOM), max_size=4),
)
def test_generated_cozystack_helmreleases_agree_with_lint(shape, gpus):
    """HelmReleases of both applications' shapes, labelled as theirs, as the
    other application's, as a third one's or not at all: the policy and lint
    read the same ones, by the label. (A Kubernetes shape is drawn only with
    its own label: lint reads ``nodeGroups`` anywhere, as tenant values files
    have them, while the policy reads only what Cozystack labels.)"""
    _, permitted, evaluator = _small()
    kind, label = shape
    release = _cozystack_release(kind, gpus)
    if label is None:
        del release["metadata"]["labels"]
    else:
        release["metadata"]["labels"] = {"apps.cozystack.io/application.kind": label}
    _agree(evaluator, permitted, release)


# -- from a CR, and the command line --------------------------------------------------


def test_from_cr_allows_what_works_and_leaves_out_what_lint_finds():
    cr = _kubevirt_cr(
        {
            "pciHostDevices": [
                {
                    "pciVendorSelector": "10DE:2236",
                    "resourceName": "nvidia.com/GA102GL_A10",
                    "externalResourceProvider": True,
                },
                {"pciVendorSelector": "10DE:2237", "resourceName": "nvidia.com/A10G", "externalResourceProvider": True},
                {"pciVendorSelector": "10DE:26B9", "resourceName": "nvidia.com/L40S-24Q"},
            ]
        }
    )
    permitted, findings = allowed_from_cr(cr, "kubevirt.yaml")
    result = admission_policy(permitted)
    assert result.allowed == ("nvidia.com/GA102GL_A10", "nvidia.com/L40S-24Q")
    assert len(findings) == 1 and "wrong-resource-name" in findings[0]


def test_cli_yaml_stream_json_list_and_exit_codes(tmp_path):
    out = _cli("admission-policy", "10de:2236", "--action", "Deny")
    assert out.returncode == 0, out.stderr
    docs = list(yaml.safe_load_all(out.stdout))
    assert [d["kind"] for d in docs] == ["ValidatingAdmissionPolicy", "ValidatingAdmissionPolicyBinding"]
    assert docs[1]["spec"]["validationActions"] == ["Deny"]
    listed = json.loads(_cli("admission-policy", "10de:2236", "-o", "json").stdout)
    assert listed["kind"] == "List" and listed["items"][1]["spec"]["validationActions"] == ["Warn", "Audit"]
    for bad in (
        ["admission-policy"],
        ["admission-policy", "10de:2236", "--action", "Deny", "--action", "Warn"],
        ["admission-policy", "10de:2236", "--from-cr", str(tmp_path / "missing.yaml")],
        ["admission-policy", "zz"],
        ["admission-policy", "10de:2236", "--name", "Not_A_Name"],
    ):
        out = _cli(*bad)
        assert out.returncode == 2 and len(out.stderr.splitlines()) == 1 and "Traceback" not in out.stderr, (
            bad,
            out.stderr,
        )
    cr = tmp_path / "kubevirt.yaml"
    cr.write_text(
        _kubevirt_cr(
            {
                "pciHostDevices": [
                    {
                        "pciVendorSelector": "10DE:2237",
                        "resourceName": "nvidia.com/A10G",
                        "externalResourceProvider": True,
                    }
                ]
            }
        )
    )
    out = _cli("admission-policy", "--from-cr", str(cr))
    assert out.returncode == 1 and "left out: " in out.stderr and "wrong-resource-name" in out.stderr
    out = _cli("admission-policy", "--from-cr", "-", stdin=_kubevirt_cr(permitted_host_devices(["10de:2236"]).data))
    assert out.returncode == 0, out.stderr
    assert "nvidia.com/GA102GL_A10" in out.stdout


def test_the_readme_table_lists_every_target():
    text = (REPO / "docs" / "admission.md").read_text()
    start = text.index("| object | where the GPU names are | rule |")
    rows = text[start : text.index("\n\n", start)].splitlines()[2:]
    cells = [[c.strip() for c in row.strip("|").split("|")] for row in rows]
    vmi_rows = [(obj, where) for obj, where, _ in cells if "HelmRelease" not in obj and obj[-9:] != "KubeVirt`"]
    listed = {
        (obj.split("` ")[0].strip("`"), obj.split("` ")[1], where.strip("`")) for obj, where in vmi_rows if "`" in where
    }
    expected = {(t.group, t.kind, ".".join(t.devices)) for t in TARGETS}
    assert expected <= listed, expected - listed
    for kind, where in admission.HELM_TARGETS.items():
        assert any(f"application.kind: {kind}`" in obj and where in w for obj, w, _ in cells), kind


def _sample_devices() -> list[Any]:
    import pciname

    return [r for r in pciname.devices("latest") if r.advertised][::40]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_generated_kubevirt_crs_agree_with_lint(data):
    """pciHostDevices entries of devices the profile advertises, selectors in
    upper or lower case, right or wrong names, with or without
    externalResourceProvider, some disabled; mdev entries of a known type."""
    _, _, evaluator = _small()
    devices = _sample_devices()
    names = [r.resource_name for r in devices] + ["nvidia.com/A10", "nvidia.com/GA102GL_A10G"]
    entries = []
    for r in data.draw(st.lists(st.sampled_from(devices), max_size=4)):
        entry: dict[str, Any] = {
            "pciVendorSelector": data.draw(st.sampled_from([r.device.upper(), r.device])),
            "resourceName": data.draw(st.sampled_from([r.resource_name] + names)),
        }
        if data.draw(st.booleans()):
            entry["externalResourceProvider"] = True
        if data.draw(st.integers(0, 5)) == 0:
            entry["disabled"] = True
        entries.append(entry)
    block: dict[str, Any] = {"pciHostDevices": entries}
    if data.draw(st.booleans()):
        block["mediatedDevices"] = [
            {
                "mdevNameSelector": "NVIDIA A10-24Q",
                "resourceName": data.draw(st.sampled_from(["nvidia.com/NVIDIA_A10-24Q", "nvidia.com/A10-24Q"])),
                "externalResourceProvider": True,
            }
        ]
    _cr_agrees(evaluator, yaml.safe_load(_kubevirt_cr(block)))


def test_a_vm_with_generate_name_gets_the_message_too():
    _, _, evaluator = _small()
    vm = _with_names(
        {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", "metadata": {"generateName": "gpu-"}},
        "VirtualMachine",
        ["nvidia.com/A10"],
        [],
    )
    (message,) = evaluator(vm).messages
    assert message.startswith("VirtualMachine gpu-*: GPU deviceName nvidia.com/A10 is not permitted")


@pytest.mark.parametrize(
    ("given", "line"),
    [
        (["--context", "c"], "--context goes with --from-cluster"),
        (["--kubevirt", "ns/kv"], "--kubevirt goes with --from-cluster"),
        (["--kubeconfig", "k", "--context", "c"], "--kubeconfig, --context go with --from-cluster"),
    ],
)
def test_the_cluster_options_without_from_cluster_are_named_as_given(given, line):
    """One option "goes with --from-cluster", several "go" (main named all
    three, "go", whichever was given)."""
    from tests.cli_run import pciname

    assert pciname("admission-policy", "10de:2236", *given) == (2, "", f"pciname: error: {line}\n")
