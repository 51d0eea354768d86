"""The plugin images' pci.ids files inside the package: complete, verified on
every read, usable with no network, no snapshot dir and no writable cache,
and a damaged package is a clear error, never a wrong name."""

from __future__ import annotations

import io
import json
import lzma
import os
import subprocess
import sys
import tarfile

import pytest

import pciname
from pciname.base.paths import packaged_manifest_path, packaged_snapshots_path
from pciname.cozystack.releases import releases as cozystack_releases
from pciname.naming.profiles import load_registry
from pciname.resolution import snapshots
from tests.conftest import PLUGIN_PCIIDS, REPO, trimmed_install

_KATA = json.loads((REPO / "data" / "kata" / "releases.json").read_text(encoding="utf-8"))
#: Every profile: 54 of profiles.json, each Cozystack release, each Kata plugin release and Kata-mode operator release.
ALL_PROFILES = 54 + len(_KATA["plugin_releases"]) + len(_KATA["operator_releases"])


def cli(*args: str, env: dict, cwd) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pciname", *args],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        cwd=cwd,
        timeout=120,
    )


def test_every_snapshot_is_packaged_and_verifies():
    known = snapshots.known_snapshots()
    manifest = snapshots.packaged_manifest()
    assert set(manifest) == {s.sha256 for s in known}
    for snap in known:
        data = snapshots.packaged_bytes(snap)
        assert len(data) == snap.size
        assert data == (PLUGIN_PCIIDS / snap.filename).read_bytes()
    # Newest first: the default profile's file is the first member.
    latest = load_registry().get("latest").snapshot
    assert next(iter(manifest.values())) == latest.filename


def test_archive_keeps_the_files_byte_for_byte_with_their_headers():
    with tarfile.open(packaged_snapshots_path(), "r:xz") as archive:
        members = archive.getmembers()
        assert [m.name for m in members] == list(snapshots.packaged_manifest().values())
        newest = archive.extractfile(members[0]).read()
    assert newest.startswith(b"#\n#\tList of PCI ID's\n")
    assert b"#\tVersion: 2025.07.11\n" in newest[:200]


def test_pack_is_reproducible(tmp_path):
    packed = snapshots.pack([PLUGIN_PCIIDS], tmp_path)
    assert [s.filename for s in packed] == list(snapshots.packaged_manifest().values())
    assert (tmp_path / "snapshots.tar.xz").read_bytes() == packaged_snapshots_path().read_bytes()
    assert (tmp_path / "snapshots.sha256").read_text() == packaged_manifest_path().read_text()


def test_pack_refuses_an_incomplete_set(tmp_path):
    with pytest.raises(pciname.SnapshotVerifyError, match="2019-08-14"):
        snapshots.pack([p for p in PLUGIN_PCIIDS.glob("*.ids") if not p.name.startswith("2019")], tmp_path)


def test_every_profile_works_with_nothing_installed(monkeypatch, tmp_path):
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(tmp_path / "empty-cache"))
    pciname.clear_caches()
    infos = pciname.profiles()
    assert len(infos) == len(load_registry().profiles) == ALL_PROFILES + len(cozystack_releases())
    assert all(p.installed for p in infos)
    assert pciname.resolve("10de:2330", "gpu-operator@v23.9.2").resource_name == "nvidia.com/GH100H100_SXM5_80GB"
    assert (
        pciname.resolve("10de:1eb8", "kubevirt-gpu-device-plugin@v1.0.1").resource_name == "nvidia.com/TU104GL_Tesla_T4"
    )
    assert not (tmp_path / "empty-cache" / "snapshots").exists()  # read from the package, never extracted


def test_unwritable_cache_reads_from_the_package(monkeypatch, tmp_path):
    """A read-only root filesystem: the cache cannot be created, every
    answer still comes from the package (in memory)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(blocker / "cache"))  # mkdir fails: not a directory
    pciname.clear_caches()
    assert pciname.resolve("10de:2330", "gpu-operator@v23.9.2").resource_name == "nvidia.com/GH100H100_SXM5_80GB"
    assert pciname.resolve("8086:1234", "gpu-operator@v23.9.2").resource_name is None
    proc = cli("lookup", "10de:230c", env={"PCINAME_CACHE_DIR": str(blocker / "cache")}, cwd=tmp_path)
    assert (proc.returncode, proc.stdout) == (0, "nvidia.com/230c\n")


def _damaged_installs(tmp_path):
    """(description, install env) for packages damaged in different ways."""
    good = packaged_snapshots_path().read_bytes()
    flipped = bytearray(good)
    flipped[len(good) // 2] ^= 0x10
    # A well-formed archive whose 2023.05.23 member has other bytes of the same size.
    original = (PLUGIN_PCIIDS / "2023.05.23.ids").read_bytes()
    forged = original.replace(b"GH100[H100 SXM5 80GB]", b"GH100[H100 SXM5 80GX]")
    assert forged != original and len(forged) == len(original)
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", preset=1) as archive:
        for name in snapshots.packaged_manifest().values():
            data = forged if name == "2023.05.23.ids" else (PLUGIN_PCIIDS / name).read_bytes()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    cases = {
        "bit flip": bytes(flipped),
        "truncated": good[: len(good) // 3],
        "forged member": buffer.getvalue(),
        "not xz": b"this is not an archive\n",
        "empty xz": lzma.compress(b""),
    }
    root = tmp_path / "install"  # one copy of pciname; each case its own archive and cache
    env = trimmed_install(root, whole=True)
    for label, content in cases.items():
        (root / "data" / "snapshots.tar.xz").write_bytes(content)
        yield label, root, {**env, "PCINAME_CACHE_DIR": str(tmp_path / label.replace(" ", "-") / "cache")}


def test_a_damaged_package_is_a_clear_error_never_a_wrong_name(tmp_path):
    for label, root, env in _damaged_installs(tmp_path):
        proc = cli("lookup", "10de:2330", "--profile", "gpu-operator@v23.9.2", env=env, cwd=root)
        assert proc.returncode == 2, (label, proc)
        assert proc.stdout == "", label
        assert proc.stderr.count("\n") == 1 and "Traceback" not in proc.stderr, (label, proc.stderr)
        assert "packaged pci.ids snapshot 2023.05.23 is damaged" in proc.stderr, (label, proc.stderr)
        assert "reinstall pciname" in proc.stderr
        # ... and a good copy elsewhere is used instead.
        elsewhere = {**env, "PCINAME_SNAPSHOTS": str(PLUGIN_PCIIDS)}
        proc = cli("lookup", "10de:2330", "--profile", "gpu-operator@v23.9.2", env=elsewhere, cwd=root)
        assert (proc.returncode, proc.stdout) == (0, "nvidia.com/GH100H100_SXM5_80GB\n"), (label, proc)


def test_damage_after_the_first_use_changes_nothing_already_verified(tmp_path):
    """Tables on disk were built from verified bytes; a package damaged later
    (with a new identity: replaced) is read and verified again."""
    root = tmp_path / "install"
    env = {**trimmed_install(root, whole=True), "PCINAME_CACHE_DIR": str(tmp_path / "cache")}
    proc = cli("lookup", "10de:2330", "--profile", "v1.2.2", env=env, cwd=root)
    assert proc.stdout == "nvidia.com/GH100H100_SXM5_80GB\n"
    archive = root / "data" / "snapshots.tar.xz"
    archive.write_bytes(archive.read_bytes()[:1000])
    proc = cli("lookup", "10de:2330", "--profile", "v1.2.2", env=env, cwd=root)
    assert proc.returncode == 2 and "is damaged" in proc.stderr


def test_profiles_and_snapshots_list_show_the_package(tmp_path):
    env = {"PCINAME_CACHE_DIR": str(tmp_path / "cache")}
    listing = json.loads(cli("profiles", "-o", "json", env=env, cwd=tmp_path).stdout)
    assert len(listing) == ALL_PROFILES + len(cozystack_releases()) and all(p["installed"] for p in listing)
    snaps = json.loads(cli("snapshots", "list", "-o", "json", env=env, cwd=tmp_path).stdout)
    assert all(s["installed"] and s["packaged"] for s in snaps)
    assert all(s["path"].endswith(f"snapshots.tar.xz#{s['snapshot']}.ids") for s in snaps)
