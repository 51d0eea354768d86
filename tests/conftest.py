"""Shared fixtures: the real data in ../shared, and an isolated cache.

Every test runs with ``PCINAME_CACHE_DIR`` in a fresh temporary directory
and ``PCINAME_SNAPSHOTS`` pointing at the plugin images' pci.ids files in
``../shared`` (read there, never copied into the project).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
PLUGIN_PCIIDS = SHARED / "pciids" / "kubevirt-gpu-device-plugin"
DEBIAN_PCIIDS = SHARED / "pciids" / "debian"
VECTORS = SHARED / "vectors" / "nvidia-device-names.json"
SHARED_PROFILES = SHARED / "profiles.json"

needs_shared = pytest.mark.skipif(not PLUGIN_PCIIDS.is_dir(), reason="../shared test data is not present")
needs_lspci = pytest.mark.skipif(shutil.which("lspci") is None, reason="lspci (Debian pciutils) is not installed")


@pytest.fixture(scope="session")
def session_cache(tmp_path_factory) -> Path:
    """One cache dir for the session: catalogs on disk are keyed by file
    identity, so sharing them is safe and keeps the suite fast."""
    return tmp_path_factory.mktemp("pciname-cache")


@pytest.fixture(autouse=True)
def isolated_pciname(session_cache, monkeypatch):
    """The session cache and the shared snapshots for every test, and no
    in-process state carried between tests (memoised resolutions would not
    notice a test's changed environment). A test that writes snapshots into
    the cache sets its own PCINAME_CACHE_DIR."""
    import pciname

    cache = session_cache
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(cache))
    monkeypatch.setenv("PCINAME_SNAPSHOTS", str(PLUGIN_PCIIDS))
    pciname.clear_caches()
    yield cache
    pciname.clear_caches()


@pytest.fixture(scope="session")
def vectors() -> dict:
    return json.loads(VECTORS.read_text())


@pytest.fixture(scope="session")
def shared_profiles() -> dict:
    return json.loads(SHARED_PROFILES.read_text())
