"""The library API: resolutions, warnings, reverse, diff, profiles, errors."""

from __future__ import annotations

import dataclasses

import pytest

import pciname
from pciname.naming import checks
from tests.conftest import LATEST, LATEST_RELEASE, TEST_DATA


def test_resolution_fields():
    r = pciname.resolve("10de:2236")
    assert r.device == "10de:2236"
    assert r.profile == LATEST  # the default: latest
    assert r.plugin_release == LATEST_RELEASE
    assert r.algorithm == "vendor-section"
    assert r.name == "GA102GL_A10"
    assert r.resource_name == "nvidia.com/GA102GL_A10"
    assert r.vendor_name == "NVIDIA Corporation"
    assert r.device_name == "GA102GL [A10]"
    assert r.pci_ids_version == "2025.07.11"
    assert r.pci_ids_sha256 == "a96cd22db83c10d9141ecd7b14325ed9c936de5ef01d78e7e7e43f070184270b"
    assert r.env_var == "PCI_RESOURCE_NVIDIA_COM_GA102GL_A10"
    assert r.socket_path == "/var/lib/kubelet/device-plugins/kubevirt-GA102GL_A10.sock"
    assert r.warnings == ()
    assert r.advertised
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.name = "x"  # type: ignore[misc]


@pytest.mark.parametrize("spelling", ["10de:2236", "10DE:2236", "0x10de:0x2236", " 10de:2236 ", "2236"])
def test_device_spellings(spelling):
    assert pciname.resolve(spelling).device == "10de:2236"


@pytest.mark.parametrize("bad", ["", "10de:", ":2236", "10de:223", "10de:22366", "zz:2236", "10de-2236", "10de:2236:1"])
def test_malformed_devices(bad):
    with pytest.raises(pciname.InvalidDeviceError, match="malformed device"):
        pciname.resolve(bad)


def test_profile_spellings_are_canonical():
    assert pciname.resolve("10de:2236", "latest").profile == LATEST
    assert pciname.resolve("10de:2236", "v1.2.2").profile == "kubevirt-gpu-device-plugin@v1.2.2"
    assert pciname.resolve("10de:2236", "GPU-Operator@23.9.2").profile == "gpu-operator@v23.9.2"
    assert pciname.resolve("10de:2236", "gpu-operator@v23.9.2").plugin_release == "v1.2.4"
    with pytest.raises(pciname.UnknownProfileError, match="unknown profile 'v9.9.9'"):
        pciname.resolve("10de:2236", "v9.9.9")


def test_unnamed_device_falls_back_to_the_id():
    r = pciname.resolve("10de:2335", "kubevirt-gpu-device-plugin@v1.2.2")
    assert r.name == ""
    assert r.resource_name == "nvidia.com/2335"
    assert r.warning_codes == ("unnamed-device",)
    assert r.advertised


def test_v1_0_0_does_not_advertise_unnamed_devices():
    r = pciname.resolve("10de:ffff", "kubevirt-gpu-device-plugin@v1.0.0")
    assert r.resource_name is None and r.env_var is None and r.socket_path is None
    assert r.warning_codes == ("not-advertised",)
    assert not r.advertised
    assert pciname.resolve("10de:ffff", "kubevirt-gpu-device-plugin@v1.0.1").resource_name == "nvidia.com/ffff"


def test_non_nvidia_vendor_is_not_advertised_but_described():
    r = pciname.resolve("8086:1234")
    assert r.resource_name is None
    assert r.vendor_name == "Intel Corporation"
    assert r.device_name == "430MX - 82371MX Mobile PCI I/O IDE Xcelerator (MPIIX)"
    assert r.warning_codes == ("not-advertised",)
    assert "not NVIDIA" in r.warnings[0].message


def test_kubelet_invalid_name():
    r = pciname.resolve("10de:24fa", "kubevirt-gpu-device-plugin@v1.4.0")
    assert r.resource_name == "nvidia.com/GA104_RTX_A4500_EMBEDDED_GPU_"
    assert "invalid-resource-name" in r.warning_codes
    assert "ends with '_'" in r.warnings[r.warning_codes.index("invalid-resource-name")].message
    assert not r.advertised
    # Still so on the newest release; pci.ids fixed it later, so only the preview has the space gone.
    assert pciname.resolve("10de:24fa").resource_name == "nvidia.com/GA104_RTX_A4500_EMBEDDED_GPU_"
    assert pciname.resolve("10de:24fa", "preview").resource_name == "nvidia.com/GA104_RTX_A4500_EMBEDDED_GPU"


def test_too_long_name_and_socket(tmp_path):
    long_name = "GX" + "A" * 80
    path = tmp_path / "pci.ids"
    path.write_text(f"10de  NVIDIA Corporation\n\t2236  {long_name}\n")
    r = pciname.resolve("10de:2236", pciname.custom_profile(path, "vendor-section"))
    assert r.resource_name == f"nvidia.com/{long_name.upper()}"
    assert set(r.warning_codes) == {"invalid-resource-name", "socket-path-too-long"}
    assert "82 characters" in r.warnings[0].message


def test_name_collision_lists_the_other_ids():
    r = pciname.resolve("10de:002a", "kubevirt-gpu-device-plugin@v1.0.1")
    assert r.resource_name == "nvidia.com/NV5_Riva_TNT2"
    assert "name-collision" in r.warning_codes
    message = r.warnings[r.warning_codes.index("name-collision")].message
    assert "10de:002b" in message and "10de:002a" not in message


def test_custom_profile_any_algorithm(tmp_path):
    path = tmp_path / "mine.ids"
    path.write_text("# 2236 from a comment\n10de  NVIDIA\n\t2236  GA102GL [A10]\n")
    assert pciname.resolve("10de:2236", pciname.custom_profile(path, "whole-file-2019")).name == "from_a_comment"
    assert pciname.resolve("10de:2236", pciname.custom_profile(path, "whole-file-anchored")).name == "GA102GL_A10"
    with pytest.raises(pciname.UnknownAlgorithmError):
        pciname.custom_profile(path, "whole-file")
    with pytest.raises(pciname.PciIdsError, match="cannot read"):
        pciname.resolve("10de:2236", pciname.custom_profile(tmp_path / "absent", "vendor-section"))


def test_missing_snapshot_says_how_to_get_it(unpackaged, monkeypatch, tmp_path):
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path))
    pciname.clear_caches()
    with pytest.raises(pciname.SnapshotMissingError) as caught:
        pciname.resolve("10de:2236", "gpu-operator@v23.9.2")
    message = str(caught.value)
    assert "\n" not in message
    assert "2023.05.23" in message and "e97ddbf60c71ba0a5125878f1dde91d9b0aeaa50c7d074bba376510313fa85d7" in message
    assert "pciname snapshots fetch" in message and "pciname snapshots import" in message
    assert "https://raw.githubusercontent.com/NVIDIA/kubevirt-gpu-device-plugin/" in message


def test_reverse():
    assert pciname.reverse("nvidia.com/GA102GL_A10") == ["10de:2236"]
    assert pciname.reverse("GA102GL_A10") == ["10de:2236"]
    assert pciname.reverse("nvidia.com/NV5_Riva_TNT2", "kubevirt-gpu-device-plugin@v1.0.1") == [
        "10de:002a",
        "10de:002b",
    ]
    assert pciname.reverse("nvidia.com/2335", "kubevirt-gpu-device-plugin@v1.2.2") == ["10de:2335"]
    assert pciname.reverse("nvidia.com/2335") == []  # the newest file names it
    assert pciname.reverse("nvidia.com/NO_SUCH_GPU") == []


def test_diff_finds_the_h100_rename():
    entries = {e.device: e for e in pciname.diff("gpu-operator@v23.9.2", "gpu-operator@v26.3.1")}
    h100 = entries["10de:2330"]
    assert (h100.old, h100.new, h100.change) == (
        "nvidia.com/GH100H100_SXM5_80GB",
        "nvidia.com/GH100_H100_SXM5_80GB",
        "renamed",
    )
    assert "10de:2236" not in entries  # unchanged names are not listed
    assert pciname.diff("latest", LATEST) == []


def test_diff_appears_and_vanishes():
    entries = {
        e.device: e for e in pciname.diff("kubevirt-gpu-device-plugin@v1.0.0", "kubevirt-gpu-device-plugin@v1.0.1")
    }
    assert entries and all(e.change == "appears" and e.old is None for e in entries.values())
    back = pciname.diff("kubevirt-gpu-device-plugin@v1.0.1", "kubevirt-gpu-device-plugin@v1.0.0")
    assert {e.device for e in back} == set(entries) and all(e.change == "vanishes" for e in back)


def test_profiles_listing():
    infos = {p.name: p for p in pciname.profiles()}
    assert len([p for p in infos.values() if p.kind == "plugin"]) == 20
    assert len([p for p in infos.values() if p.kind == "gpu-operator"]) == 33
    latest = infos[LATEST]
    assert latest.aliases == ("latest",) and latest.installed and latest.pci_ids_version == "2025.07.11"
    assert infos["preview"].installed and infos["preview"].pci_ids_version == "2026.10.24"
    assert infos["preview"].kind == "preview" and "no release" in infos["preview"].note
    assert infos["gpu-operator@v22.9.0"].plugin_release == "v1.2.1"
    assert infos["gpu-operator@v22.9.0"].algorithm == "whole-file-anchored"


def test_profiles_not_installed(unpackaged, monkeypatch, tmp_path):
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path))
    infos = {p.name: p for p in pciname.profiles()}
    assert infos["preview"].installed
    assert not infos["kubevirt-gpu-device-plugin@v1.2.2"].installed


def test_resolve_many_keeps_order_and_rejects_bad_input_whole():
    results = pciname.resolve_many(["10de:2330", "10de:2236", "10de:2330"], "latest")
    assert [r.device for r in results] == ["10de:2330", "10de:2236", "10de:2330"]
    with pytest.raises(pciname.InvalidDeviceError):
        pciname.resolve_many(["10de:2236", "nope"])


def test_resolve_many_shares_the_records_resolve_keeps():
    pciname.clear_caches()
    many = pciname.resolve_many(["10de:2236", "10de:2330"], "latest")
    assert many[0] is pciname.resolve("10de:2236", "latest")  # remembered by resolve_many, read by resolve
    first = pciname.resolve("10de:20b5", "latest")
    assert pciname.resolve_many(["10de:20b5", "10de:2236"], "latest") == [first, many[0]]
    assert pciname.resolve_many(["10de:20b5"], "latest")[0] is first  # resolve's object, not a rebuilt one


def test_resolve_many_parses_every_device_before_resolving_any():
    pciname.clear_caches()
    with pytest.raises(pciname.InvalidDeviceError):
        pciname.resolve_many(["10de:2236", "10de:nope", "10de:2330"], "latest")
    resolver = pciname.Resolver()
    with pytest.raises(pciname.InvalidDeviceError):
        resolver.resolve_many(["10de:2236", ["not", "a", "device"]], "latest")  # type: ignore[list-item]
    assert resolver.memo == {}


def test_repeated_resolve_is_memoised():
    assert pciname.resolve("10de:2236") is pciname.resolve("10de:2236")


def test_load_database():
    db = pciname.load()
    assert db.version == "2026.10.24"
    assert db.vendors["10de"].devices["2236"].name == "GA102GL [A10]"
    assert pciname.load() is db


def test_env_var_and_mdev_names():
    assert checks.env_var("nvidia.com/GRID_T4-1Q", mediated=True) == "MDEV_PCI_RESOURCE_NVIDIA_COM_GRID_T4-1Q"
    assert checks.mdev_resource_name("GRID T4-1Q\n") == "nvidia.com/GRID_T4-1Q"
    assert checks.mdev_resource_name("NVIDIA  A100-40C") == "nvidia.com/NVIDIA_A100-40C"
    assert checks.env_var("nvidia.com/TU104GL_Tesla_T4") == "PCI_RESOURCE_NVIDIA_COM_TU104GL_TESLA_T4"


def test_pinned_resolver_keeps_its_data_when_files_change(tmp_path):
    path = tmp_path / "pci.ids"
    path.write_text("10de  NVIDIA Corporation\n\t2236  Old Name\n")
    profile = pciname.custom_profile(path, "vendor-section")
    pinned = pciname.Resolver(pinned=True)
    assert pinned.preload([profile]) == [profile.name]
    assert pinned.resolve("10de:2236", profile).resource_name == "nvidia.com/OLD_NAME"
    path.write_text("10de  NVIDIA Corporation\n\t2236  New Name\n\t2237  New Name\n")
    assert pinned.resolve_many(["10de:2236"], profile)[0].resource_name == "nvidia.com/OLD_NAME"
    assert pinned.reverse("nvidia.com/NEW_NAME", profile) == []
    fresh = pciname.Resolver()
    assert fresh.resolve("10de:2236", profile).resource_name == "nvidia.com/NEW_NAME"
    assert fresh.reverse("nvidia.com/NEW_NAME", profile) == ["10de:2236", "10de:2237"]


def test_strict_preload_rejects_a_malformed_file(tmp_path):
    path = tmp_path / "pci.ids"
    path.write_text("10de  NVIDIA Corporation\n\tzzzz  Broken\n")
    with pytest.raises(pciname.PciIdsError, match=r"pci.ids:2:2: Parse error"):
        pciname.Resolver(pinned=True).preload([pciname.custom_profile(path, "vendor-section")])
    # The lenient default still answers: the plugin never validates its file.
    assert (
        pciname.resolve("10de:2236", pciname.custom_profile(path, "vendor-section")).resource_name == "nvidia.com/2236"
    )


def test_non_nvidia_names_in_every_profile():
    for profile in ("preview", "kubevirt-gpu-device-plugin@v1.2.1"):
        r = pciname.Resolver(pinned=True).resolve("8086:1234", profile)
        assert r.vendor_name == "Intel Corporation" and r.device_name.startswith("430MX")


def _latest_vs_preview() -> dict[str, tuple[str, str]]:
    rows = (
        line.split()
        for line in (TEST_DATA / "latest-vs-preview.txt").read_text().splitlines()
        if not line.startswith("#")
    )
    return {device: (latest, preview) for device, latest, preview in rows}


def test_the_default_is_latest_and_the_74_preview_differences_are_pinned():
    """The default answers what clusters running the newest release
    advertise; the preview (Debian's newest pci.ids) differs on exactly these
    ids, so the default cannot drift silently."""
    pinned = _latest_vs_preview()
    assert len(pinned) == 74
    devices = sorted(pinned)
    default = pciname.resolve_many(devices)
    assert {r.device: r.resource_name for r in default} == {d: latest for d, (latest, _) in pinned.items()}
    assert {r.profile for r in default} == {LATEST}
    preview = pciname.resolve_many(devices, "preview")
    assert {r.device: r.resource_name for r in preview} == {d: p for d, (_, p) in pinned.items()}
    assert {(e.device, e.old, e.new) for e in pciname.diff("latest", "preview")} == {
        (d, a, b) for d, (a, b) in pinned.items()
    }
    h20 = pciname.resolve("10de:230c")
    assert h20.resource_name == "nvidia.com/230c" and h20.warning_codes == ("unnamed-device",)


def test_preview_keeps_its_old_name():
    assert pciname.resolve("10de:2236", "embedded").profile == "preview"
    assert pciname.resolve("10de:2236", "").profile == LATEST


def test_text_from_a_pciids_file_is_valid_utf8(tmp_path):
    """Invalid UTF-8 in a pci.ids file (decoded with surrogateescape) never
    reaches a Resolution: each undecodable byte sequence is U+FFFD, the one
    representation pciname uses for them (`valid_text`)."""
    from pciname.naming.gotext import valid_text

    ids = tmp_path / "bad.ids"
    ids.write_bytes(
        b"# Version: 2026\xff\n10de  NVIDIA \xff\n\t2236  GA102GL [A10\xe2\x82]\n8086  Intel \xfe\n\t1234  x\xfd\n"
    )
    custom = pciname.custom_profile(ids, "vendor-section")
    a10, intel, unnamed = pciname.resolve_many(["10de:2236", "8086:1234", "10de:ffff"], custom)
    assert (a10.name, a10.device_name, a10.vendor_name) == ("GA102GL_A10", "GA102GL [A10\ufffd]", "NVIDIA \ufffd")
    assert (intel.vendor_name, intel.device_name, a10.pci_ids_version) == ("Intel \ufffd", "x\ufffd", "2026\ufffd")
    assert "pci.ids 2026\ufffd" in unnamed.warnings[0].message
    for r in (a10, intel, unnamed):
        for value in (r.vendor_name, r.device_name, r.pci_ids_version, *(w.message for w in r.warnings)):
            (value or "").encode("utf-8")  # no lone surrogate left
    assert pciname.load(ids).vendors["10de"].name == "NVIDIA \udcff"  # the database keeps the file's bytes
    assert valid_text("NVIDIA \udcff") == "NVIDIA \ufffd" and valid_text(None) is None
    assert valid_text("\ud800x") == "\ufffd\ufffd\ufffdx"  # a surrogate that stands for no byte
