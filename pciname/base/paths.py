"""Where pciname's files are: packaged data, user cache, snapshot dirs."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from stat import S_ISDIR, S_ISVTX

_PACKAGE = Path(__file__).resolve().parents[1]  # pciname/


def data_dir() -> Path:
    """The embedded data: ``pciname/data`` when installed, ``data/`` in a checkout."""
    installed = _PACKAGE / "data"
    if (installed / "pci.ids").is_file():
        return installed
    return _PACKAGE.parent / "data"


def embedded_pciids_path() -> Path:
    """Debian's pci.ids (sid) that ships with pciname: the ``preview`` profile,
    and the newest file pciname knows (its NVIDIA ids join every profile's)."""
    return data_dir() / "pci.ids"


def packaged_snapshots_path() -> Path:
    """The plugin images' pci.ids files, as one solid xz tar archive."""
    return data_dir() / "snapshots.tar.xz"


def packaged_manifest_path() -> Path:
    """``sha256sum`` lines of the archive's members, in archive order."""
    return data_dir() / "snapshots.sha256"


def embedded_profiles_path() -> Path:
    """The release facts: algorithms, snapshots, plugin and GPU Operator releases."""
    return data_dir() / "profiles.json"


def cozystack_releases_path() -> Path:
    """The Cozystack release facts (:mod:`tools.cozystack_extract` writes them)."""
    return data_dir() / "cozystack" / "releases.json"


def kata_releases_path() -> Path:
    """The Kata sandbox device plugin's release facts (:mod:`tools.kata_extract` writes them)."""
    return data_dir() / "kata" / "releases.json"


def dra_releases_path() -> Path:
    """The DRA facts: NVIDIA's DRA driver, KubeVirt and GPU Operator (:mod:`tools.dra_extract` writes them)."""
    return data_dir() / "dra" / "releases.json"


def kubevirt_releases_path() -> Path:
    """How KubeVirt's own device plugin matches selectors, per release (:mod:`tools.kubevirt_extract` writes them)."""
    return data_dir() / "kubevirt" / "releases.json"


def hami_releases_path() -> Path:
    """HAMi's facts per release: names, node selector, defaults, HAMi-core (:mod:`tools.hami_extract` writes them)."""
    return data_dir() / "hami" / "releases.json"


def cozystack_schemas_path() -> Path:
    """The Cozystack values schemas those facts name, by id."""
    return data_dir() / "cozystack" / "schemas.json"


def cache_dir() -> Path:
    """The user cache: ``$PCINAME_CACHE_DIR``, else the platform's user cache dir."""
    configured = os.environ.get("PCINAME_CACHE_DIR")
    if configured:
        return Path(configured)
    if sys.platform.startswith("linux"):
        # What platformdirs answers on Linux, without importing it on the hot path.
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        return (Path(xdg) if os.path.isabs(xdg) else Path.home() / ".cache") / "pciname"
    import platformdirs

    return Path(platformdirs.user_cache_dir("pciname", appauthor=False))


def untrusted_reason(directory: Path) -> str | None:
    """Why pciname must not read or write cache files in ``directory``
    (None: it may). As ssh and pip do: the directory must belong to the
    user pciname runs as, and be writable by nobody else unless it has the
    sticky bit. A missing directory is fine (pciname creates it, 0700)."""
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        return None
    except OSError as error:
        return f"{directory}: {error.strerror or error}"
    if not S_ISDIR(st.st_mode):
        return f"{directory}: not a directory"
    if st.st_uid != os.geteuid():
        return f"{directory}: belongs to uid {st.st_uid}, not to uid {os.geteuid()}"
    if st.st_mode & 0o022 and not st.st_mode & S_ISVTX:
        return f"{directory}: writable by group or others (mode {st.st_mode & 0o7777:04o}) without the sticky bit"
    return None


def snapshot_cache_dir() -> Path:
    """Where ``pciname snapshots import``/``fetch`` keep verified pci.ids files."""
    return cache_dir() / "snapshots"


def snapshot_search_dirs() -> list[Path]:
    """Directories searched for snapshots: ``$PCINAME_SNAPSHOTS``, then the cache."""
    dirs = [Path(entry) for entry in os.environ.get("PCINAME_SNAPSHOTS", "").split(os.pathsep) if entry]
    dirs.append(snapshot_cache_dir())
    return dirs
