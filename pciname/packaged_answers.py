"""Writes the packaged answer tables (``data/answers/``) from the packaged
pci.ids files and profiles.

    python -m pciname.packaged_answers [--check] [DIR]

Every profile whose pci.ids file ships in the package (each plugin and GPU
Operator release, and the preview) gets its answers for every NVIDIA device
id it knows (:mod:`pciname.answers`). Tables with the same rows (profiles
that share a pci.ids file, an algorithm and an unnamed-device rule) are
written once, named by their digest; their names and warning messages are
pooled (``strings``, ``messages``; the resource names the columns for
large lookups index, ``resources``); ``index`` lists every spelling each
profile answers to (canonical name, aliases, the bare release) with the
profile's header and its table. The output is a pure function of the
package's code and data: run this after changing either (a test regenerates
the tables and compares bytes). ``--check`` writes nothing and exits 1 when
the tables on disk differ.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from . import answers
from ._version import __version__
from .naming.profiles import LATEST, PREVIEW, Profile, canonical_name, load_registry
from .paths import data_dir
from .pciids.ids import NVIDIA_VENDOR_ID
from .resolver import DeviceId, Resolver


def _spellings(profile: Profile) -> list[str]:
    """The spellings that select ``profile``: canonical, aliases, bare release."""
    candidates = [profile.name, *profile.aliases]
    kind, _, release = profile.name.partition("@")
    if release:
        candidates += [release, f"{kind}@{release}"]
    if profile.kind == PREVIEW:
        candidates.append(PREVIEW)
    registry = load_registry()
    found = []
    for spelling in dict.fromkeys(candidates):
        try:
            if canonical_name(spelling, registry) == profile.name:
                found.append(spelling)
        except Exception:  # not a spelling of anything
            continue
    if profile.name == registry.get(LATEST).name:
        found.append(LATEST)
    return list(dict.fromkeys(found))


def _packaged(profile: Profile) -> bool:
    from .snapshots import locate

    if profile.snapshot is None:
        return bool(profile.kind == PREVIEW)
    location = locate(profile.snapshot)
    if location is None:
        return False
    return bool(location.packaged)


def build() -> dict[str, bytes]:
    """File name -> bytes of every packaged table and the index."""
    resolver = Resolver(pinned=True)
    files: dict[str, bytes] = {}
    profiles: dict[str, dict[str, object]] = {}
    spellings: dict[str, str] = {}
    pool: dict[str, int] = {}
    messages: dict[str, int] = {}
    resources: dict[str, int] = {}
    for profile in load_registry().profiles.values():
        if not _packaged(profile):
            continue
        view = resolver.view(profile.name)
        records = [view.record(DeviceId(NVIDIA_VENDOR_ID, i)) for i in view.universe()]
        encoded = answers.encode(
            records, header_in_index=False, pool=pool, messages=messages, resources=resources, row_digests=False
        )
        if encoded is None:
            raise SystemExit(f"{profile.name}: its records cannot be kept in an answer table")
        header, blob = encoded
        name = answers.table_name(blob)
        files[name] = blob
        profiles[profile.name] = {"header": header, "table": name}
        for spelling in _spellings(profile):
            spellings.setdefault(spelling, profile.name)
    index = {"format": answers.FORMAT, "version": __version__, "spellings": spellings, "profiles": profiles}
    files[answers.INDEX_NAME] = answers.encode_index(index)
    files[answers.POOL_NAME] = answers.encode_pool(pool)
    files[answers.MESSAGES_NAME] = answers.encode_pool(messages)
    files[answers.RESOURCES_NAME] = answers.encode_resources(resources)
    return dict(sorted(files.items()))


def on_disk(directory: Path) -> dict[str, bytes]:
    if not directory.is_dir():
        return {}
    return {p.name: p.read_bytes() for p in sorted(directory.iterdir()) if p.is_file()}


def write(directory: Path, files: dict[str, bytes]) -> None:
    """Make ``directory`` hold exactly ``files``."""
    directory.mkdir(parents=True, exist_ok=True)
    for stale in set(on_disk(directory)) - set(files):
        (directory / stale).unlink()
    for name, blob in files.items():
        tmp = directory / f".{name}.tmp"
        tmp.write_bytes(blob)
        os.replace(tmp, directory / name)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    rest = [a for a in args if a != "--check"]
    directory = Path(rest[0]) if rest else data_dir() / answers.PACKAGED_DIR
    files = build()
    if check:
        fresh = on_disk(directory) == files
        print(f"{directory}: {'up to date' if fresh else 'STALE: run python -m pciname.packaged_answers'}")
        return 0 if fresh else 1
    write(directory, files)
    total = sum(len(b) for b in files.values())
    tables = sum(name.endswith(".answers") for name in files)
    print(f"{directory}: {tables} tables, the index and the string pools, {total / 1e3:.0f} kB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
