"""``vm-gpus --dra``: the combination chosen from the facts, the refusals,
the predicted devices and the generated documents.

Expected values come from the facts' sources (data/dra/releases.json names
them): the driver's VfioDeviceInfo.GetDevice (``vendorID``/``deviceID`` as
``0x%04x``, ``productName`` go-nvlib's raw name, ``type`` "vfio"), its
DeviceClass template, KubeVirt's ClaimRequest and resourceClaims, and the
compatibility table the extractor derived from how each KubeVirt release
finds the PCI address.
"""

from __future__ import annotations

import json

import pytest

from pciname.capabilities.dra_claims import DraClaimsRequest, answer
from pciname.dra import facts as dra_facts
from pciname.dra.claims import predicted_device, selector
from pciname.dra.facts import DraCombinationError, choose
from pciname.errors import PcinameError
from tests.cli_run import pciname as run
from tests.conftest import REPO

FACTS = dra_facts.facts()
WORKING = sorted((d, k) for d, row in FACTS["compatibility"].items() for k, entry in row.items() if entry["works"])


def test_the_defaults_are_the_newest_working_releases():
    combination = choose()
    # The newest tagged release that works for vfio: v0.4.1, not main (unreleased).
    assert (combination.driver, combination.kubevirt, combination.resource_api) == ("v0.4.1", "v1.9.0", "v1")
    assert (combination.driver, combination.kubevirt) in WORKING
    assert combination.certainty == (
        "release v0.4.1 (kubernetes-sigs/dra-driver-nvidia-gpu commit 764900e7833798a1528bd52a2af3e1b2d5f7a616, "
        "2026-06-30)"
    )
    # what the facts say works: the drivers that publish vfio devices, with the KubeVirt releases
    # that read pciBusID from the metadata files where the driver writes them
    assert sorted((d, k) for d in ("v0.4.0", "v0.4.1", "main") for k in ("v1.8.3", "v1.8.4", "v1.9.0")) == WORKING
    assert dra_facts.for_driver().driver == "v0.4.1"


@pytest.mark.parametrize(
    ("driver", "kubevirt", "reason", "nearest"),
    [
        ("v25.12.0", None, "publishes no vfio device, by a bug: enumerateGpuPciDevices", "v0.4.0 --kubevirt v1.9.0"),
        ("v25.3.0", "v1.9.0", "the driver publishes no vfio device", "v0.4.0 --kubevirt v1.9.0"),
        ("v0.4.0", "v1.7.0", "resource.kubernetes.io/pcieRoot", "v0.4.0 --kubevirt v1.8.3"),
        (None, "v1.8.1", "KubeVirt reads /var/run/dra-device-attributes/", "v0.4.1 --kubevirt v1.8.3"),
    ],
)
def test_a_combination_that_cannot_work_is_one_line_with_the_nearest_that_does(driver, kubevirt, reason, nearest):
    with pytest.raises(DraCombinationError) as caught:
        choose(driver, kubevirt)
    message = str(caught.value)
    assert "\n" not in message and reason in message
    assert message.endswith(f"nearest that works: --dra-driver {nearest}")


def test_an_unknown_release_names_the_known_ones_and_what_is_missing():
    with pytest.raises(DraCombinationError) as caught:
        choose("v0.4.2")
    message = str(caught.value)
    assert "known: v25.3.0" in message and "v0.4.1, main" in message
    # GPU Operator v26.7.0's driver: modelled by main, said so
    assert "v0.5.0" in message and "modelled by unreleased main" in message
    with pytest.raises(DraCombinationError, match="--kubevirt 'v1.5.0'"):
        choose(kubevirt="v1.5.0")
    with pytest.raises(DraCombinationError, match="--resource-api"):
        choose(resource_api="v2")


def test_the_predicted_device_is_what_getdevice_computes():
    combination = choose()
    a10 = predicted_device("2236", combination)
    assert a10.driver == "gpu.nvidia.com"
    assert a10.attributes == {
        "type": "vfio",
        "vendorID": "0x10de",
        "deviceID": "0x2236",
        "productName": "GA102GL [A10]",  # go-nvlib's raw name, not NVML's "NVIDIA A10"
    }
    # host-dependent values are named, never predicted
    for name in ("gpu-vfio-%d", "gpu.nvidia.com/uuid", "resource.kubernetes.io/pciBusID", "gpu.nvidia.com/numa"):
        assert name in a10.host_dependent
    assert any("embedded pci.ids 2025.07.11" in text for text in a10.inferred)
    assert predicted_device("ffff", combination).attributes["productName"] == "UNKNOWN_DEVICE"


def test_selectors_use_stable_attributes_only():
    device = predicted_device("2236", choose())
    plain = selector(device)
    assert plain == (
        'device.attributes["gpu.nvidia.com"].vendorID == "0x10de" && '
        'device.attributes["gpu.nvidia.com"].deviceID == "0x2236"'
    )
    assert selector(device, product_name=True).endswith('.productName == "GA102GL [A10]"')
    for host_value in ("uuid", "pciBusID", "numa", "pcieRoot"):
        assert host_value not in plain


def _documents(*devices: str, **options) -> list[dict]:
    return list(answer(DraClaimsRequest(devices, **options).validated()).documents)


@pytest.mark.parametrize(("api", "wrapped"), [("v1", True), ("v1beta2", True), ("v1beta1", False)])
def test_the_claim_template_per_api(api, wrapped):
    template, vm, deviceclass = _documents("10de:2236=2", "2bb4", resource_api=api, kubevirt="v1.8.4")
    assert template["apiVersion"] == deviceclass["apiVersion"] == f"resource.k8s.io/{api}"
    requests = template["spec"]["spec"]["devices"]["requests"]
    assert [r["name"] for r in requests] == ["gpu1", "gpu2", "gpu3"]
    one = requests[0]["exactly"] if wrapped else requests[0]
    assert one["deviceClassName"] == "vfio.gpu.nvidia.com" and one["count"] == 1
    assert '"0x2bb4"' in (requests[2]["exactly"] if wrapped else requests[2])["selectors"][0]["cel"]["expression"]
    config = template["spec"]["spec"]["devices"]["config"][0]
    assert config["requests"] == ["gpu1", "gpu2", "gpu3"]
    assert config["opaque"]["parameters"] == {
        "apiVersion": "resource.nvidia.com/v1beta1",
        "kind": "VfioDeviceConfig",
        "iommu": {"enableAPIDevice": True},
    }
    vm_spec = vm["spec"]["template"]["spec"]
    assert vm_spec["resourceClaims"] == [{"name": "vm-gpus", "resourceClaimTemplateName": "vm-gpus"}]
    assert vm_spec["domain"]["devices"]["gpus"][2] == {"name": "gpu3", "claimName": "vm-gpus", "requestName": "gpu3"}
    assert (
        deviceclass["spec"]["selectors"][0]["cel"]["expression"]
        == FACTS["driver_releases"]["v0.4.0"]["vfio"]["device_class"]["selector"]
    )


@pytest.mark.parametrize(
    ("devices", "options", "fragment"),
    [
        ((), {}, "no GPUs given"),
        (("1002:0001",), {}, "NVIDIA GPUs only"),
        (("10de:2236=0",), {}, "malformed count"),
        (("10de:2236",), {"name": "Bad_Name"}, "--name 'Bad_Name'"),
        (("10de:2236=1000", "2bb4=100"), {}, "one VM takes at most"),
    ],
)
def test_bad_requests_are_one_line(devices, options, fragment):
    with pytest.raises(PcinameError) as caught:
        DraClaimsRequest(devices, **options).validated()
    assert fragment in str(caught.value) and "\n" not in str(caught.value)


def test_the_cli_writes_one_stream_and_says_the_releases_and_gates():
    proc = run("vm-gpus", "10de:2236=1", "--dra", "--kubevirt", "v1.8.4", "-o", "json")
    assert proc.returncode == 0, proc.stderr
    listed = json.loads(proc.stdout)
    assert (listed["kind"], [d["kind"] for d in listed["items"]]) == (
        "List",
        ["ResourceClaimTemplate", "VirtualMachine", "DeviceClass"],
    )
    lines = proc.stderr.splitlines()
    assert lines[0] == "pciname: DRA driver v0.4.1, KubeVirt v1.8.4, resource.k8s.io/v1"
    assert any("PassthroughSupport=true, DeviceMetadata=true" in line for line in lines)
    assert any("leaves GPUsWithDRA off by default" in line for line in lines)  # Alpha in v1.8.x
    yaml_out = run("vm-gpus", "10de:2236", "--dra", "-o", "yaml")
    assert yaml_out.returncode == 0 and yaml_out.stdout.count("\n---\n") == 2
    assert not any("GPUsWithDRA" in line for line in yaml_out.stderr.splitlines())  # Beta, on, in v1.9.0


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["--dra-driver", "v0.4.2"], "no such release"),
        (["--dra-driver", "v25.12.0", "--kubevirt", "v1.9.0"], "nearest that works"),
        (["-p", "latest"], "--profile: --dra selects GPUs"),
        (["--vgpu", "A10-4Q"], "--vgpu: --dra selects GPUs"),
        (["-o", "table"], "-o table does not go with --dra"),
    ],
)
def test_the_cli_refuses_in_one_line(argv, fragment):
    proc = run("vm-gpus", "10de:2236", "--dra", *argv)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    (line,) = proc.stderr.strip().splitlines()
    assert fragment in line


def test_dra_options_need_dra():
    proc = run("vm-gpus", "10de:2236", "--kubevirt", "v1.9.0")
    assert proc.returncode == 2 and proc.stderr == "pciname: error: --kubevirt goes with --dra\n"


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["--name", "x"], "--name goes with --dra"),
        (["--name", "x", "--product-name"], "--product-name, --name go with --dra"),
    ],
)
def test_dra_options_need_dra_in_words_that_agree(argv, line):
    """One option goes with --dra, several go (main said "--name go with --dra")."""
    code, out, err = run("vm-gpus", "10de:2236", *argv)
    assert (code, out, err) == (2, "", f"pciname: error: {line}\n")


def _vfio_cell(entry: dict) -> str:
    vfio = entry["vfio"]
    if not vfio["code"]:
        return "no vfio code"
    if not vfio["publishes"]:
        return "none: a bug (`enumerateGpuPciDevices`)"
    return f"yes, with `{vfio['gate']}`"


def test_the_readme_dra_table_is_the_data():
    """README's DRA table, row by row, is data/dra/releases.json: each driver
    release's date, whether it publishes vfio devices, and the KubeVirt
    releases it works with."""
    readme = (REPO / "docs" / "dra.md").read_text(encoding="utf-8")
    header = "| DRA driver | released | vfio devices | works with KubeVirt |\n"
    table = readme[readme.index(header) + len(header) :].split("\n\n", 1)[0].splitlines()[1:]
    rows = [[cell.strip() for cell in line.strip("|").split("|")] for line in table]
    expected = []
    for release, entry in FACTS["driver_releases"].items():
        works = [k for k, x in FACTS["compatibility"][release].items() if x["works"]]
        shown = f"{release} (unreleased, {entry['unreleased']['version']})" if "unreleased" in entry else release
        expected.append([shown, entry["date"], _vfio_cell(entry), ", ".join(works) or "-"])
    assert rows == expected
    assert "enumerateGpuPciDevices" in (FACTS["driver_releases"]["v25.12.0"]["vfio"]["enumeration"]["bug"] or "")


def test_v0_4_1_works_and_says_it_is_a_release():
    """The issue's example: v0.4.1 was refused as no tag; it is the new home's first release."""
    proc = run("vm-gpus", "10de:2236=1", "--dra", "--dra-driver", "v0.4.1")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    assert lines[0] == "pciname: DRA driver v0.4.1, KubeVirt v1.9.0, resource.k8s.io/v1"
    assert lines[1] == (
        "pciname: DRA driver v0.4.1 is release v0.4.1 (kubernetes-sigs/dra-driver-nvidia-gpu commit "
        "764900e7833798a1528bd52a2af3e1b2d5f7a616, 2026-06-30)"
    )
    assert not any("crashes" in line for line in lines)
    assert "vfio.gpu.nvidia.com" in proc.stdout


@pytest.mark.parametrize("given", ["main", "v0.5.0", "0.5.0"])
def test_main_is_taken_only_when_asked_and_labelled_unreleased(given):
    combination = choose(given)
    assert combination.driver == "main"
    main = FACTS["driver_releases"]["main"]
    assert combination.certainty == (
        f"unreleased main (kubernetes-sigs/dra-driver-nvidia-gpu commit {main['commit']}, {main['date']}, "
        "VERSION v0.5.0-dev): what v0.5.0 most likely publishes, not a release"
    )
    objects = answer(DraClaimsRequest(("10de:2236",), dra_driver=given).validated())
    assert objects.notes[0] == f"DRA driver main is {combination.certainty}"


def test_v0_4_0_says_its_plugin_crashes_on_a_gpu_without_sr_iov():
    objects = answer(DraClaimsRequest(("10de:2236",), dra_driver="v0.4.0").validated())
    crash = [n for n in objects.notes if "crashes" in n]
    assert len(crash) == 1
    assert crash[0].startswith("DRA driver v0.4.0 crashes (a nil-pointer panic of its kubelet plugin) preparing a ")
    assert "no sriov_totalvfs" in crash[0] and "verifyDisabledVFs" in crash[0] and crash[0].endswith("fixed in v0.4.1")
    proc = run("vm-gpus", "10de:2236", "--dra", "--dra-driver", "v0.4.0")
    assert proc.returncode == 0 and f"pciname: {crash[0]}" in proc.stderr.splitlines()


def test_a_refused_combination_names_the_releases_in_each_surfaces_words(stub):
    """The DraClaims RPC named them by the CLI's flags (--dra-driver); it names its own fields now."""
    import grpc

    from pciname.requests.spelling import RequestError, Spelling
    from pciname.server._proto import pciname_pb2 as pb

    with pytest.raises(RequestError) as refused:
        DraClaimsRequest(("10de:2236",), dra_driver="v25.3.0", kubevirt="v1.9.0").validated()
    cli, rpc = str(refused.value), refused.value.spelled(Spelling.RPC)
    assert cli.endswith("nearest that works: --dra-driver v0.4.0 --kubevirt v1.9.0")
    assert rpc == cli.replace("--dra-driver", "dra_driver").replace("--kubevirt", "kubevirt")
    with pytest.raises(grpc.RpcError) as caught:
        stub.DraClaims(pb.DraClaimsRequest(devices=["10de:2236"], dra_driver="v25.3.0", kubevirt="v1.9.0"))
    assert (caught.value.code(), caught.value.details()) == (grpc.StatusCode.INVALID_ARGUMENT, rpc)
