"""The DRA release facts (data/dra/releases.json) are exactly what the
maintainer script writes from the vendored upstream files
(tests/data/dra-inputs.*: kubernetes-sigs/dra-driver-nvidia-gpu (and the tags of its first home,
NVIDIA/k8s-dra-driver-gpu), kubevirt/kubevirt and
NVIDIA/gpu-operator blobs, without go-nvlib's embedded pci.ids); the facts the
issue names hold; every fact names a file the script read at that release;
and a changed upstream function is an error of one line naming repository,
release and file, never a guess."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from tests.extract_util import Extracted
from tools import dra_extract as extract, upstream

FAMILY = Extracted("dra", "dra_extract")
SHIPPED, INPUTS = FAMILY.shipped_path, FAMILY.inputs
shipped, sidecar, tarball, run = FAMILY.shipped, FAMILY.sidecar, FAMILY.tarball, FAMILY.run
DRIVER, KUBEVIRT, OPERATOR = extract.DRIVER_REPOSITORY, extract.KUBEVIRT_REPOSITORY, extract.OPERATOR_REPOSITORY
WORKING = ("v1.8.3", "v1.8.4", "v1.9.0")


# -- the shipped facts are the script's ---------------------------------------------


def test_shipped_facts_are_what_the_script_writes_from_the_vendored_inputs():
    document = extract.extract(*extract.load_inputs(INPUTS))
    assert SHIPPED.read_text(encoding="utf-8") == upstream.dumps(document)


def test_the_script_checks_the_shipped_facts(tmp_path):
    done = run("--from-inputs", str(INPUTS), "--check")
    assert (done.returncode, done.stdout.strip().endswith("up to date")) == (0, True), done.stderr
    stale = shipped()
    stale["driver_releases"]["v0.4.0"]["vfio"]["publishes"] = False
    (tmp_path / "releases.json").write_text(json.dumps(stale))
    done = run("--from-inputs", str(INPUTS), "--check", "--out", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"{tmp_path}/releases.json: STALE: 1 facts differ: driver_releases.v0.4.0.vfio.publishes"
    ]


def test_bad_arguments_and_inputs_are_one_line_and_exit_2(tmp_path):
    done = run("--from-inputs", str(tmp_path / "nothing"))
    assert done.returncode == 2 and len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert done.stderr.startswith("dra_extract: error: ") and "Traceback" not in done.stderr
    done = run("--driver-git", str(tmp_path))
    assert done.returncode == 2 and "Traceback" not in done.stderr


def test_the_inputs_name_their_sources_hold_every_blob_and_no_pci_ids():
    side, blobs = sidecar(), tarball()
    assert {repo: row["license"] for repo, row in side["repositories"].items()} == extract.LICENSES
    held = {name.rpartition("/")[2] for name in blobs}
    assert all(upstream.blob_id(data) == name.rpartition("/")[2] for name, data in blobs.items())
    for repo, row in side["repositories"].items():
        for tag, at in row["tags"].items():
            # Final tags only, and the driver's main branch, last.
            assert re.fullmatch(r"v\d+\.\d+\.\d+", tag) or (repo, tag) == (DRIVER, extract.UNRELEASED), (repo, tag)
            assert len(at["commit"]) == 40 and re.fullmatch(r"20\d\d-\d\d-\d\d", at["date"]), (repo, tag)
            for path, blob in at["files"].items():
                assert blob is None or blob in held or blob in side["pci_ids"], (repo, tag, path)
    assert side["pci_ids"] and not held & set(side["pci_ids"])
    # Licence headers stay: every Go file vendored from the three repositories is Apache-2.0 text.
    go = [data for data in blobs.values() if data.startswith((b"/*", b"//", b"package"))]
    assert go and all(b"Apache License" in data[:2000] or b"package " in data[:200] for data in go)
    assert sum(b"Licensed under the Apache License, Version 2.0" in data[:2000] for data in go) > len(go) * 0.9
    assert INPUTS.with_suffix(".tar.xz").stat().st_size < 250_000
    kubevirt_tags = list(side["repositories"][KUBEVIRT]["tags"])
    assert kubevirt_tags[0] == "v1.6.0" and kubevirt_tags == sorted(kubevirt_tags, key=upstream.version_key)


def test_every_source_path_was_read_at_that_release():
    document, side = shipped(), sidecar()
    kinds = (("driver_releases", DRIVER), ("kubevirt_releases", KUBEVIRT), ("operator_releases", OPERATOR))
    for key, repo in kinds:
        for tag, release in document[key].items():
            files = side["repositories"][repo]["tags"][tag]["files"]
            assert side["repositories"][repo]["tags"][tag]["commit"] == release["commit"], (repo, tag)
            text = json.dumps(release)
            paths = set(
                re.findall(
                    r"(?<![\w/.-])((?:cmd|pkg|api|vendor|deployments|staging|controllers|manifests)/[\w./-]+)", text
                )
            )
            assert paths, (repo, tag)
            for path in paths:
                path = path.rstrip(".")
                read = path in files or any(f.startswith(path + "/") for f in files)
                assert read, (repo, tag, path)
                # A path read but absent at that release is only named as absent.
                if path in files and files[path] is None:
                    assert f"{path} absent" in text, (repo, tag, path)


# -- the facts ------------------------------------------------------------------------


def test_which_driver_releases_publish_vfio_devices():
    drivers = shipped()["driver_releases"]
    # Release order: calendar versions, then the move to semantic versions with v0.4.0.
    assert list(drivers) == [
        "v25.3.0",
        "v25.3.1",
        "v25.3.2",
        "v25.8.0",
        "v25.8.1",
        "v25.12.0",
        "v0.4.0",
        "v0.4.1",
        "main",
    ]
    for tag in ("v25.3.0", "v25.3.1", "v25.3.2", "v25.8.0", "v25.8.1"):
        assert drivers[tag]["vfio"] == {
            "code": False,
            "publishes": False,
            "note": drivers[tag]["vfio"]["note"],
        }, tag
        assert "PassthroughSupport" not in drivers[tag]["feature_gates"]["gates"], tag
    buggy = drivers["v25.12.0"]["vfio"]
    assert (buggy["code"], buggy["publishes"], buggy["enumeration"]["function"]) == (
        True,
        False,
        "enumerateGpuPciDevices",
    )
    assert "publishes no vfio device" in buggy["enumeration"]["bug"]
    fixed = drivers["v0.4.0"]["vfio"]
    assert (fixed["publishes"], fixed["enumeration"]["bug"], fixed["enumeration"]["parent_required"]) == (
        True,
        None,
        False,
    )
    for tag in ("v25.12.0", "v0.4.0"):
        gates = drivers[tag]["feature_gates"]["gates"]
        assert (gates["PassthroughSupport"]["default"], gates["PassthroughSupport"]["prerelease"]) == (False, "Alpha")
    assert drivers["v0.4.0"]["feature_gates"]["gates"]["DeviceMetadata"] == {
        "default": False,
        "prerelease": "Alpha",
        "since": "0.4",
    }
    assert (
        "DeviceMetadata requires PassthroughSupport to also be enabled" in drivers["v0.4.0"]["feature_gates"]["rules"]
    )
    assert "DeviceMetadata" not in drivers["v25.12.0"]["feature_gates"]["gates"]


def test_what_a_vfio_device_carries():
    drivers = shipped()["driver_releases"]
    for tag in ("v25.12.0", "v0.4.0"):
        vfio = drivers[tag]["vfio"]
        assert drivers[tag]["driver_name"] == "gpu.nvidia.com"
        assert vfio["device_name"]["format"] == "gpu-vfio-%d"
        assert vfio["device_class"]["name"] == "vfio.gpu.nvidia.com"
        assert vfio["device_class"]["selector"] == (
            "device.driver == 'gpu.nvidia.com' && device.attributes['gpu.nvidia.com'].type == 'vfio'"
        )
        attrs = {a["name"]: a for a in vfio["attributes"]}
        assert attrs["gpu.nvidia.com/deviceID"]["computed"].startswith('sysfs device id as "0x%04x"')
        assert (
            attrs["gpu.nvidia.com/uuid"]["computed"].startswith("UUID v5")
            and "not a GPU- UUID" in attrs["gpu.nvidia.com/uuid"]["computed"]
        )
        assert attrs["gpu.nvidia.com/numa"]["type"] == "int" and attrs["gpu.nvidia.com/type"]["type"] == "string"
        assert [c["name"] for c in vfio["capacity"]] == ["gpu.nvidia.com/addressableMemory"]
        assert vfio["product_name"]["embedded"]["version"] == "2025.07.11"
        assert vfio["product_name"]["system_paths"][0] == "/usr/share/misc/pci.ids"
        assert drivers[tag]["api"]["driver_types"] == "k8s.io/api/resource/v1"
    assert sorted(a["name"] for a in drivers["v0.4.0"]["vfio"]["attributes"]) == [
        "gpu.nvidia.com/deviceID",
        "gpu.nvidia.com/iommuFDEnabled",
        "gpu.nvidia.com/numa",
        "gpu.nvidia.com/productName",
        "gpu.nvidia.com/type",
        "gpu.nvidia.com/uuid",
        "gpu.nvidia.com/vendorID",
        "resource.kubernetes.io/pciBusID",
        "resource.kubernetes.io/pcieRoot",
    ]
    assert "gpu.nvidia.com/iommuFDEnabled" not in {a["name"] for a in drivers["v25.12.0"]["vfio"]["attributes"]}
    assert (
        drivers["v0.4.0"]["vfio"]["product_name"]["go_nvlib"],
        drivers["v25.12.0"]["vfio"]["product_name"]["go_nvlib"],
    ) == (
        "v0.10.0",
        "v0.9.0",
    )


def test_the_opaque_config_per_release():
    drivers = shipped()["driver_releases"]
    old, new = drivers["v25.12.0"]["vfio"]["config"], drivers["v0.4.0"]["vfio"]["config"]
    assert (old["api_version"], old["kind"], old["fields"]) == ("resource.nvidia.com/v1beta1", "VfioDeviceConfig", {})
    assert old["dev_vfio_vfio"].startswith("always")
    assert new["fields"]["iommu"]["backendPolicy"]["values"] == ["LegacyOnly", "PreferIommuFD"]
    assert new["fields"]["iommu"]["enableAPIDevice"]["default"] is False
    assert new["dev_vfio_vfio"].startswith("only with iommu.enableAPIDevice: true")
    metadata = drivers["v0.4.0"]["vfio"]["device_metadata"]
    assert metadata["claim_path"] == (
        "/var/run/kubernetes.io/dra-device-attributes/resourceclaims/<claimName>/<requestName>/<driver>-metadata.json"
    )
    assert metadata["api_version"] == "metadata.resource.k8s.io/v1alpha1"


def test_kubevirt_releases():
    kubevirt = shipped()["kubevirt_releases"]
    assert next(iter(kubevirt)) == "v1.6.0" and list(kubevirt)[-1] == "v1.9.0"
    for tag, release in kubevirt.items():
        api = release["vm_api"]
        assert api["gpus_claim"] and api["hostDevices_claim"] and api["resourceClaims"], tag
        beta = tag == "v1.9.0"
        for gate in ("GPUsWithDRA", "HostDevicesWithDRA"):
            assert release["feature_gates"][gate]["state"] == ("Beta" if beta else "Alpha"), tag
            assert release["feature_gates"][gate]["default"] is beta, tag
        pci = release["pci_address"]
        if upstream.version_key(tag) < (1, 8, 0):
            assert (pci["mechanism"], pci["attribute"]) == (
                "resourceslice-attribute",
                "resource.kubernetes.io/pcieRoot",
            )
        else:
            assert (pci["mechanism"], pci["attribute"]) == ("metadata-file", "resource.kubernetes.io/pciBusID")
    assert kubevirt["v1.9.0"]["vm_api"]["resourceClaims"] == "VirtualMachineInstanceResourceClaim"
    assert kubevirt["v1.8.0"]["pci_address"]["claim_path"].startswith("/var/run/dra-device-attributes/")


def test_only_the_fixed_driver_with_kubevirt_reading_the_kep_5304_path_works():
    compat = shipped()["compatibility"]
    works = {(d, k) for d, row in compat.items() for k, cell in row.items() if cell["works"]}
    assert works == {(d, k) for d in ("v0.4.0", "v0.4.1", "main") for k in WORKING}
    assert "pcieRoot" in compat["v0.4.0"]["v1.7.4"]["reason"]
    assert "/var/run/dra-device-attributes/" in compat["v0.4.0"]["v1.8.2"]["reason"]
    assert "bug" in compat["v25.12.0"]["v1.9.0"]["reason"]
    assert "enableAPIDevice: true" in compat["v0.4.0"]["v1.9.0"]["reason"]


def test_the_gpu_operator_and_what_the_mirror_cannot_establish():
    document = shipped()
    operators = document["operator_releases"]
    assert list(operators) == ["v26.7.0"] and document["operator_tags_without_dra_driver"][-1] == "v26.3.3"
    release = operators["v26.7.0"]
    assert release["dra_driver"] == {
        "image": "nvcr.io/nvidia/dra-driver-nvidia-gpu",
        "version": "v0.5.0",
        "version_in_mirror": False,
        "feature_gates": {},
        "modelled_by": "main",
    }
    assert release["excludes_sandbox_device_plugin"] is True
    assert "gpuCluster.deployCR (default false)" in release["deployed_when"]
    main = document["driver_releases"]["main"]
    assert document["missing"] == [
        "GPU Operator v26.7.0 deploys DRA driver v0.5.0, which is no tag of the kubernetes-sigs/dra-driver-nvidia-gpu "
        f"mirror (newest: v0.4.1): modelled by unreleased main (kubernetes-sigs/dra-driver-nvidia-gpu commit "
        f"{main['commit']}, {main['date']}, VERSION v0.5.0-dev): what v0.5.0 most likely publishes, not a release"
    ]
    assert main["unreleased"]["version"] == "v0.5.0-dev" and main["unreleased"]["certainty"] in document["missing"][0]


def test_the_driver_moved_home_after_v0_4_0():
    document = shipped()
    drivers = document["driver_releases"]
    assert document["repositories"]["driver"] == "kubernetes-sigs/dra-driver-nvidia-gpu"
    assert document["repositories"]["driver_before"] == "NVIDIA/k8s-dra-driver-gpu"
    for tag, release in drivers.items():
        assert release["repository"] == DRIVER, tag
        old = tag in ("v25.3.0", "v25.3.1", "v25.3.2", "v25.8.0", "v25.8.1", "v25.12.0", "v0.4.0")
        assert ("tagged_in" in release) is old, tag
    # The old home's tags are in the inputs (tags only), at the commits the new home tags.
    old_tags = sidecar()["repositories"]["NVIDIA/k8s-dra-driver-gpu"]["tags"]
    assert "v0.4.1" not in old_tags and old_tags["v0.4.0"]["commit"] == drivers["v0.4.0"]["commit"]
    assert drivers["v0.4.1"]["commit"] == "764900e7833798a1528bd52a2af3e1b2d5f7a616"
    assert drivers["v0.4.1"]["date"] == "2026-06-30"


def test_v0_4_0_crashes_preparing_a_gpu_without_sr_iov_and_v0_4_1_does_not():
    drivers = shipped()["driver_releases"]
    crash = drivers["v0.4.0"]["vfio"]["prepare_without_sriov"]
    assert crash["crashes"] is True and "sriov_totalvfs" in crash["gpus"] and "nvidia driver" in crash["gpus"]
    assert "verifyDisabledVFs" in crash["source"] and "getSriovInfoForPhysicalFunction" in crash["source"]
    for tag in ("v0.4.1", "main"):
        assert drivers[tag]["vfio"]["prepare_without_sriov"]["crashes"] is False, tag


def test_main_publishes_numa_node_and_fabric_manager_attributes_not_numa():
    drivers = shipped()["driver_releases"]

    def names(tag: str) -> set[str]:
        return {a["name"] for a in drivers[tag]["vfio"]["attributes"]}

    assert "gpu.nvidia.com/numa" in names("v0.4.0") and names("v0.4.0") == names("v0.4.1")
    fabric = {"gpu.nvidia.com/gpuModuleID", *(f"gpu.nvidia.com/partition{n}" for n in (1, 2, 4, 8))}
    assert names("main") == (names("v0.4.1") - {"gpu.nvidia.com/numa"}) | {"resource.kubernetes.io/numaNode"} | fabric
    by_name = {a["name"]: a for a in drivers["main"]["vfio"]["attributes"]}
    assert "omitted when negative" in by_name["resource.kubernetes.io/numaNode"]["computed"]
    assert "DRAListTypeAttributes" in by_name["resource.kubernetes.io/numaNode"]["computed"]
    assert all("gate FabricManagerPartitioning" in by_name[n]["computed"] for n in fabric)
    gates = drivers["main"]["feature_gates"]["gates"]
    new = set(gates) - set(drivers["v0.4.1"]["feature_gates"]["gates"])
    assert new == {"FabricManagerPartitioning", "HostManagedIMEXDaemon", "DRAListTypeAttributes", "ConsumableShares"}
    assert all(not gates[g]["default"] for g in new)


# -- changed upstream code is refused ----------------------------------------------------


def _with_changed(repo: str, tag: str, path: str, old: bytes, new: bytes) -> tuple[Any, Any, Any]:
    sources = list(extract.load_inputs(INPUTS))
    index = (DRIVER, KUBEVIRT, OPERATOR).index(repo)
    source = sources[index]
    row = source.rows[tag]
    data = source.blobs[row["files"][path]]
    assert old in data
    changed = data.replace(old, new)
    blob = upstream.blob_id(changed)
    source.blobs = {**source.blobs, blob: changed}
    source.rows = {**source.rows, tag: {**row, "files": {**row["files"], path: blob}}}
    return sources[0], sources[1], sources[2]


@pytest.mark.parametrize(
    ("repo", "tag", "path", "old", "new"),
    [
        # The v25.12.0 bug fixed in place: no longer the known shape, so not silently "publishes none".
        (
            DRIVER,
            "v25.12.0",
            extract.NVLIB,
            b"for _, devices := range perGPUAllocatable {\n\t\tmaps.Copy(all, devices)",
            b"for _, devices := range devs {\n\t\tmaps.Copy(all, devices)",
        ),
        (DRIVER, "v0.4.0", extract.DEVICEINFO, b'"gpu-vfio-%d"', b'"vfio-%s"'),
        (DRIVER, "v0.4.0", extract.NVLIB, b"productName:            device.DeviceName,", b"productName: nvml(),"),
        (KUBEVIRT, "v1.9.0", extract.KV_UTILS, b"DefaultMetadataBasePath ", b"OtherBasePath "),
        # main's Fabric Manager attributes behind another call shape, and its NUMA attribute's.
        (
            DRIVER,
            "main",
            extract.DEVICEINFO,
            b"\t\t\td.parent.addFabricManagerAttributes(device.Attributes)",
            b"\t\t\taddFabricManagerAttributes(d.parent, device.Attributes)",
        ),
        (
            DRIVER,
            "main",
            extract.DEVICEINFO,
            b"if numaNode == nil || *numaNode < 0 {",
            b"if numaNode == nil {",
        ),
        # The nil check of v0.4.1 in another shape: not silently "crashes".
        (
            DRIVER,
            "v0.4.1",
            extract.VFIO_DEVICE,
            b"numVFs := gpu.SriovInfo.PhysicalFunction.NumVFs",
            b"numVFs := gpu.NumVFs()",
        ),
    ],
)
def test_a_changed_upstream_function_is_one_line_naming_release_and_file(repo, tag, path, old, new):
    with pytest.raises(extract.ExtractError) as error:
        extract.extract(*_with_changed(repo, tag, path, old, new))
    message = str(error.value)
    assert "\n" not in message and message.startswith(f"{repo.partition('/')[2]} {tag}: "), message
