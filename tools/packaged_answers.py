"""Writes the packaged answers (``pciname/packaged/``, :mod:`pciname.resolution.answers`)
from the packaged pci.ids files and profiles.

    python -m tools.packaged_answers [--check] [DIR]

Every profile whose pci.ids file ships in the package (each plugin and GPU
Operator release, and the preview) gets its record of every NVIDIA device
id it knows. Profiles with the same rows share one table; ``index`` lists
every spelling each profile answers to (canonical name, aliases, the bare
release). The output is a pure function of the package's code and data:
run this after changing either (a test regenerates it and compares bytes).
``--check`` writes nothing and exits 1 when the files on disk differ.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pciname._version import __version__
from pciname.naming.profiles import LATEST, PREVIEW, Profile, canonical_name, load_registry
from pciname.pciids.ids import NVIDIA_VENDOR_ID
from pciname.resolution import answers
from pciname.resolution.resolver import DeviceId, Resolver

#: The record fields every record of a profile shares: a table's header.
#: marshal's format 2: no references, whose use depends on reference counts
#: (the same data would not always make the same bytes).
_MARSHAL = 2
SHARED = ("profile", "algorithm", "plugin_release", "vendor_name", "pci_ids_version", "pci_ids_sha256", "plugin")


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
        except Exception:  # noqa: BLE001 - not a spelling of anything, whatever the parser raises
            continue
    if profile.name == registry.get(LATEST).name:
        found.append(LATEST)
    return list(dict.fromkeys(found))


def _packaged(profile: Profile) -> bool:
    from pciname.resolution.snapshots import locate

    if profile.snapshot is None:
        return bool(profile.kind == PREVIEW)
    location = locate(profile.snapshot)
    if location is None:
        return False
    return bool(location.packaged)


def build() -> dict[str, bytes]:
    """File name -> bytes of every packaged table, the index and the pools."""
    resolver = Resolver(pinned=True)
    files: dict[str, bytes] = {}
    profiles: dict[str, dict[str, object]] = {}
    spellings: dict[str, str] = {}
    strings: dict[str, int] = {"": 0}  # string 0 is "" (answers.utf8_strings)
    messages: dict[str, int] = {}
    order: list[str] = []
    fields: list[str] = []
    for profile in load_registry().profiles.values():
        if not _packaged(profile):
            continue
        view = resolver.view(profile.name)
        records = [view.record(DeviceId(NVIDIA_VENDOR_ID, i)) for i in view.universe()]
        order = order or list(records[0])
        fields = fields or [key for key in order if key not in SHARED and key != "device"]
        rows: dict[str, tuple[Any, ...]] = {}
        for record in records:
            assert list(record) == order and all(record[key] == records[0][key] for key in SHARED), profile.name
            rows[record["device"].partition(":")[2]] = tuple(_pooled(record[key], strings, messages) for key in fields)
        blob = _table("".join(rows), tuple(rows.values()))
        name = hashlib.sha256(blob).hexdigest()[:16]
        files[name] = blob
        profiles[profile.name] = {"header": {key: records[0][key] for key in SHARED}, "table": name}
        for spelling in _spellings(profile):
            spellings.setdefault(spelling, profile.name)
    index = {"version": __version__, "order": order, "fields": fields, "spellings": spellings, "profiles": profiles}
    files[answers.INDEX] = marshal.dumps(index, _MARSHAL)
    files[answers.STRINGS] = _pool(strings)
    files[answers.MESSAGES] = _pool(messages)
    return dict(sorted(files.items()))  # tests/resolution/test_answers.py reads every record back


def _table(ids: str, rows: tuple[tuple[Any, ...], ...]) -> bytes:
    """A table file (see :mod:`pciname.resolution.answers`): its head, then
    the rows as one marshal tuple, which is its header and each row's bytes
    one after the other (format 2 shares nothing between them), so that
    ``ends`` can say where each row starts."""
    each = [marshal.dumps(row, _MARSHAL) for row in rows]
    whole = marshal.dumps(rows, _MARSHAL)
    first = len(whole) - sum(map(len, each))
    assert whole == whole[:first] + b"".join(each)
    head = marshal.dumps({"ids": ids, "ends": first.to_bytes(4, "little") + _ends(each, first)}, _MARSHAL)
    return len(head).to_bytes(4, "little") + head + whole


def _ends(blobs: Iterable[bytes], end: int = 0) -> bytes:
    """Where each blob ends, once they are joined after ``end`` bytes (4 bytes each)."""
    ends = []
    for blob in blobs:
        end += len(blob)
        ends.append(end.to_bytes(4, "little"))
    return b"".join(ends)


def _pool(pool: dict[str, int]) -> bytes:
    """A pool file: the count, where each string ends, the strings (UTF-8)."""
    blobs = [text.encode("utf-8", "surrogatepass") for text in pool]
    return len(blobs).to_bytes(4, "little") + _ends(blobs) + b"".join(blobs)


def _pooled(value: object, strings: dict[str, int], messages: dict[str, int]) -> object:
    """A record's value as a row holds it (see :mod:`pciname.resolution.answers`)."""
    if isinstance(value, str):
        return strings.setdefault(value, len(strings))
    if isinstance(value, list):  # the warnings
        return tuple((w["code"], messages.setdefault(w["message"], len(messages))) for w in value)
    if value is None or type(value) is bool:
        return value
    raise SystemExit(f"a packaged answer cannot hold {value!r}")


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
    directory = Path(rest[0]) if rest else Path(answers.DIRECTORY)
    files = build()
    if check:
        fresh = on_disk(directory) == files
        print(f"{directory}: {'up to date' if fresh else 'STALE: run python -m tools.packaged_answers'}")
        return 0 if fresh else 1
    write(directory, files)
    total = sum(len(b) for b in files.values())
    tables = len(files) - 3
    print(f"{directory}: {tables} tables, the index and the string pools, {total / 1e3:.0f} kB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
