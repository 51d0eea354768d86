"""The data a server answers from, built whole and swapped whole.

A :class:`DataSet` is one generation of the server's data: a pinned
:class:`~pciname.api.Resolver` with every installed profile preloaded
(strictly: a pci.ids file with a malformed line fails the build), which
profiles are served and which are missing their snapshot, and caches of
encoded answers. The server builds a new one beside the old on a reload and
replaces a single reference, so a request in flight finishes on the
generation it started with and nothing is ever half-loaded.

:func:`watch_signature` is what the reload watcher compares between polls:
the identity of ``data/pci.ids`` and of a ``--pciids`` file, and the
listing of every snapshot directory.
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass, field, replace
from pathlib import Path

from ..api import ProfileInfo, Resolution, Resolver
from ..errors import PciIdsError, SnapshotMissingError
from ..naming.profiles import DEFAULT_PROFILE, Profile, canonical_name, custom_profile, load_registry
from ..paths import embedded_pciids_path, snapshot_search_dirs
from ._proto import pciname_pb2 as pb

CUSTOM = "custom"

# Encoded answers kept per generation (all profiles together); past this the
# cache starts over. An entry is one encoded Resolution, about 0.5 KB.
ENCODED_CACHE_MAX = 32_768
_SPELLINGS_MAX = 4_096


def resolution_message(r: Resolution) -> pb.Resolution:
    return pb.Resolution(
        device=r.device,
        profile=r.profile,
        resource_name=r.resource_name,
        name=r.name,
        device_name=r.device_name,
        pci_ids_version=r.pci_ids_version,
        env_var=r.env_var,
        socket_path=r.socket_path,
        warnings=[pb.Warning(code=w.code, message=w.message) for w in r.warnings],
        advertised=r.advertised,
        vendor_name=r.vendor_name,
        algorithm=r.algorithm,
        plugin_release=r.plugin_release,
        pci_ids_sha256=r.pci_ids_sha256,
    )


def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        low = n & 0x7F
        n >>= 7
        if n:
            out.append(low | 0x80)
        else:
            out.append(low)
            return bytes(out)


def framed(message: bytes, field_number: int = 1) -> bytes:
    """``message`` as one element of a repeated message field (tag, length,
    bytes): concatenating these is the encoding of the repeated field."""
    return _varint(field_number << 3 | 2) + _varint(len(message)) + message


@dataclass
class ServedProfile:
    """How the resolver knows a served profile: its canonical name, or the
    Profile object of the custom one."""

    name: str
    key: str | Profile


@dataclass
class DataSet:
    generation: int
    resolver: Resolver
    served: dict[str, ServedProfile]  # canonical name -> profile
    missing: dict[str, Profile]  # known profiles whose snapshot is not installed
    default: ServedProfile
    custom: ServedProfile | None
    infos: list[ProfileInfo]
    files: dict[str, str]  # pci.ids path -> sha256, of the files in use
    loaded_at: float
    load_seconds: float
    _spellings: dict[str, ServedProfile] = field(default_factory=dict)
    # profile name -> device text as sent -> (element of a repeated Resolution
    # field, length of its tag+length header)
    _encoded: dict[str, dict[str, tuple[bytes, int]]] = field(default_factory=dict)
    _encoded_count: int = 0
    _profiles_message: bytes | None = None

    # -- profiles -------------------------------------------------------------

    def profile(self, spelling: str) -> ServedProfile:
        """The served profile a request's ``profile`` means ("" = default).

        UnknownProfileError for names pciname does not know (and ``custom``
        without --pciids), SnapshotMissingError naming the file for known
        profiles whose pci.ids is not installed on this server.
        """
        found = self._spellings.get(spelling)
        if found is not None:
            return found
        text = spelling.strip()
        if not text:
            found = self.default
        elif text.lower() == CUSTOM and self.custom is not None:
            found = self.custom
        else:
            name = canonical_name(text)  # UnknownProfileError
            found = self.served.get(name)
            if found is None:
                from ..snapshots import missing_message

                profile = self.missing[name]
                snap = profile.snapshot
                assert snap is not None
                raise SnapshotMissingError(
                    _on_this_server(missing_message(snap, name)),
                    snapshot=snap.key,
                    sha256=snap.sha256,
                    url=snap.url,
                )
        if len(self._spellings) < _SPELLINGS_MAX:
            self._spellings[spelling] = found
        return found

    # -- encoded answers ------------------------------------------------------

    def encoded_table(self, profile: ServedProfile) -> dict[str, tuple[bytes, int]]:
        table = self._encoded.get(profile.name)
        if table is None:
            table = self._encoded.setdefault(profile.name, {})
        return table

    def encode(self, profile: ServedProfile, device: str) -> tuple[bytes, int]:
        """Resolve ``device`` and keep its encoding (InvalidDeviceError if malformed)."""
        (resolution,) = self.resolver.resolve_many([device], profile.key)
        message = resolution_message(resolution).SerializeToString()
        element = framed(message)
        entry = (element, len(element) - len(message))
        if self._encoded_count >= ENCODED_CACHE_MAX:
            self._encoded = {}
            self._encoded_count = 0
        self.encoded_table(profile)[device] = entry
        self._encoded_count += 1
        return entry

    def profiles_message(self) -> bytes:
        if self._profiles_message is None:
            response = pb.ListProfilesResponse(data_generation=self.generation)
            for info in self.infos:
                response.profiles.append(
                    pb.ProfileInfo(
                        name=info.name,
                        kind=info.kind,
                        released=info.released,
                        algorithm=info.algorithm,
                        plugin_release=info.plugin_release,
                        pci_ids_version=info.pci_ids_version,
                        pci_ids_sha256=info.pci_ids_sha256,
                        installed=info.installed,
                        aliases=list(info.aliases),
                        note=info.note,
                        is_default=info.name == self.default.name,
                    )
                )
            self._profiles_message = response.SerializeToString()
        return self._profiles_message

    def catalog_path(self, profile: ServedProfile) -> Path:
        return self.resolver.view(profile.key).catalog.path

    def nvidia_devices(self, profile: ServedProfile) -> list[Resolution]:
        return self.resolver.devices(profile.key)

    def vendor_devices(self, profile: ServedProfile, vendor: str) -> list[Resolution]:
        """Every device pci.ids lists under ``vendor`` (not NVIDIA)."""
        from ..api import load

        db = load(self.catalog_path(profile))
        entry = db.vendors.get(vendor)
        if entry is None:
            return []
        return self.resolver.resolve_many([f"{vendor}:{d}" for d in sorted(entry.devices)], profile.key)


def _on_this_server(message: str) -> str:
    return message.replace("which is not installed;", "which is not installed on this server;", 1)


def build(
    generation: int,
    *,
    default_profile: str = DEFAULT_PROFILE,
    pciids: str | Path | None = None,
    algorithm: str = "vendor-section",
) -> DataSet:
    """Load every installed profile (and the ``--pciids`` file) into a new
    pinned resolver. Raises PciIdsError (PciIdsSyntaxError for a malformed
    line) or SnapshotMissingError when a file vanished while loading; the
    caller keeps its old data then."""
    from ..api import profiles as profile_infos
    from ..catalog import verified_paths
    from ..snapshots import locate

    started = time.monotonic()
    registry = load_registry()
    verified = verified_paths()
    served: dict[str, ServedProfile] = {}
    missing: dict[str, Profile] = {}
    for profile in registry.profiles.values():
        if profile.snapshot is None or locate(profile.snapshot, verified) is not None:
            served[profile.name] = ServedProfile(profile.name, profile.name)
        else:
            missing[profile.name] = profile
    resolver = Resolver(pinned=True)
    resolver.preload(list(served), strict=True)
    custom = None
    if pciids is not None:
        path = Path(pciids).absolute()
        profile = custom_profile(path, algorithm)._replace(name=CUSTOM)
        resolver.preload([profile], strict=True)  # type: ignore[list-item]
        custom = ServedProfile(CUSTOM, profile)

    files: dict[str, str] = {}
    for entry in [*served.values(), *([custom] if custom else [])]:
        catalog = resolver.view(entry.key).catalog
        files[str(catalog.path)] = catalog.sha256

    infos = [replace(info, installed=info.name in served) for info in profile_infos()]
    if custom is not None:
        catalog = resolver.view(custom.key).catalog
        infos.append(
            ProfileInfo(
                name=CUSTOM,
                kind="custom",
                released=None,
                algorithm=algorithm,
                plugin_release=None,
                pci_ids_version=catalog.version,
                pci_ids_sha256=catalog.sha256,
                installed=True,
                path=str(catalog.path),
                aliases=(),
                note=f"{algorithm} over {catalog.path} (--pciids)",
            )
        )

    if default_profile.strip().lower() == CUSTOM:
        if custom is None:
            raise PciIdsError("--default-profile custom needs --pciids FILE")
        default = custom
    else:
        name = canonical_name(default_profile)
        if name not in served:
            from ..snapshots import missing_message

            snap = missing[name].snapshot
            assert snap is not None
            raise SnapshotMissingError(
                "--default-profile: " + missing_message(snap, name), snapshot=snap.key, sha256=snap.sha256, url=snap.url
            )
        default = served[name]

    return DataSet(
        generation=generation,
        resolver=resolver,
        served=served,
        missing=missing,
        default=default,
        custom=custom,
        infos=infos,
        files=files,
        loaded_at=time.time(),
        load_seconds=time.monotonic() - started,
    )


# -- what the watcher compares ------------------------------------------------


def _file_state(path: Path) -> tuple:
    try:
        st = os.stat(path)
    except OSError as error:
        return (str(path), "missing", error.errno)
    return (str(path), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _dir_state(directory: Path) -> tuple:
    try:
        entries = list(os.scandir(directory))
    except OSError as error:
        return (str(directory), "missing", error.errno)
    listing = []
    for entry in entries:
        if entry.name.startswith("."):  # fetch/import temporaries, ConfigMap internals
            continue
        try:
            st = entry.stat()  # follows symlinks: a ConfigMap's ..data swap shows
        except OSError:
            continue
        if not entry.is_file():
            continue
        listing.append((entry.name, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns))
    return (str(directory), tuple(sorted(listing)))


def watched_files(pciids: str | Path | None = None) -> list[Path]:
    files = [embedded_pciids_path()]
    if pciids is not None:
        files.append(Path(pciids).absolute())
    return files


def watch_signature(pciids: str | Path | None = None) -> tuple:
    """Changes whenever a file the server's data comes from may have changed."""
    return (
        tuple(_file_state(path) for path in watched_files(pciids)),
        tuple(_dir_state(directory) for directory in snapshot_search_dirs()),
    )


__all__ = ["CUSTOM", "DataSet", "ServedProfile", "build", "framed", "resolution_message", "watch_signature"]
