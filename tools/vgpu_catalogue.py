"""Writes NVIDIA's vGPU type catalogue (``data/vgpu-types.json``) from
``NVIDIA/vgpu-device-manager`` ``examples/config-example.yaml``, at every
release tag.

    python -m tools.vgpu_catalogue --git MIRROR [--archive OUT]   # maintainers: read every tag of a clone
    python -m tools.vgpu_catalogue [--check] [--archive FILE] [OUT]

The config file (Apache-2.0; GPU Operator ships the same text as ConfigMap
``default-vgpu-devices-config``, ``assets/state-vgpu-device-manager/0500_configmap.yaml``)
holds one single-type config per vGPU type, ``TYPE: [{devices: all,
vgpu-devices: {TYPE: N}}]``, where N is the most instances of TYPE one GPU
takes, and a ``default`` config whose ``device-filter: "0xDDDD10DE"`` entries
tie each PCI device id to the family of the type it creates there. A type's
family is its ``GPU`` group under the manager's own patterns
(``pkg/types/vgpu_type.go``: time-sliced ``A10-24Q``, ``RTX6000-Ada-24Q``;
MIG-backed ``A100D-1-10CME``).

What sysfs calls the type: go-nvlib ``pkg/nvmdev`` ``parseMdevTypeName``
keeps the last space-separated token of ``mdev_type/name`` (``NVIDIA
A10-24Q`` -> ``A10-24Q``), and the manager matches a config's type against
that token, else against it with a MIG attribute suffix stripped
(``stripVGPUConfigSuffix`` in ``pkg/vgpu/config.go``). The ``GFX`` suffix is
never part of a vGPU type name (the comment there: "none of the vGPU type
names contain the GFX suffix"), so ``DC-1-24QGFX`` creates ``DC-1-24Q``
vGPUs; ``ME`` types exist as named (``GRID A100D-1-10CME`` is a real sysfs
string).

Per release the output records the commit and its counts, and for each type
the first release that lists it. The vendored input for the test
(``tests/data/vgpu-device-manager-configs.tar.xz``) holds the file of every
tag as ``TAG@COMMIT.yaml``; ``--git MIRROR --archive FILE`` writes it.
``--check`` writes nothing and exits 1 when the shipped data differs.
"""

from __future__ import annotations

import argparse
import io
import json
import re
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

import yaml

from pciname.base.paths import data_dir
from pciname.naming.vgpu import GFX_SUFFIX, family_of

REPO = "NVIDIA/vgpu-device-manager"
PATH = "examples/config-example.yaml"
COPY = (
    "NVIDIA/gpu-operator assets/state-vgpu-device-manager/0500_configmap.yaml "
    "(ConfigMap default-vgpu-devices-config, data config.yaml): the same configs"
)
LICENCE = "Apache-2.0"
OUTPUT_NAME = "vgpu-types.json"
_FILTER = re.compile(r"0x([0-9A-Fa-f]{4})10DE\Z")
_TAG = re.compile(r"v(\d+)\.(\d+)\.(\d+)\Z")


def _version_key(tag: str) -> tuple[int, ...]:
    m = _TAG.match(tag)
    return tuple(int(g) for g in m.groups()) if m else (-1,)


def parse_config(text: str) -> dict[str, Any]:
    """One release's catalogue: ``configs`` (config name -> (type, max)) in
    file order, ``devices`` (device id -> families, in file order) and
    ``default`` (device id -> [config, count] ``default`` creates there). The
    first two releases' format has no counts (0) and no device ids."""
    doc = yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
    configs: dict[str, tuple[str, str, int]] = {}
    devices: dict[str, list[str]] = {}
    default: dict[str, list[list[Any]]] = {}
    for name, entries in doc["vgpu-configs"].items():
        if entries and all(isinstance(e, str) for e in entries):
            # v0.1.0 and v0.2.0: a config is a list of type names, with no
            # counts and no device filters.
            if name != "default" and entries == [name] and family_of(str(name)) is not None:
                configs[str(name)] = (str(family_of(str(name))), str(name), 0)
            continue
        if name == "default":
            for entry in entries:
                m = _FILTER.match(str(entry.get("device-filter", "")))
                if m is None:
                    raise ValueError(f"default: device-filter {entry.get('device-filter')!r} is not 0xDDDD10DE")
                device = m.group(1).lower()
                for config in entry["vgpu-devices"]:
                    family = family_of(str(config))
                    if family is None:
                        raise ValueError(f"default: {config!r} is not a vGPU type name")
                    if family not in devices.setdefault(device, []):
                        devices[device].append(family)
                    default.setdefault(device, []).append([str(config), int(entry["vgpu-devices"][config])])
            continue
        if len(entries) != 1 or entries[0].get("devices") != "all" or list(entries[0]["vgpu-devices"]) != [name]:
            continue  # not a single-type config (none in any release so far)
        family = family_of(str(name))
        if family is None:
            raise ValueError(f"{name!r} is not a vGPU type name")
        count = int(entries[0]["vgpu-devices"][name])
        vgpu_type = name[: -len(GFX_SUFFIX)] if name.endswith(GFX_SUFFIX) else name
        configs[str(name)] = (family, vgpu_type, count)
    return {"configs": configs, "devices": devices, "default": default}


def build(releases: list[tuple[str, str, str]]) -> dict[str, Any]:
    """The catalogue from (tag, commit, text) of every release, oldest first:
    the newest release's types, each with the first release listing it."""
    releases = sorted(releases, key=lambda r: _version_key(r[0]))
    parsed = [(tag, commit, parse_config(text)) for tag, commit, text in releases]
    since: dict[str, str] = {}
    summary = []
    for tag, commit, p in parsed:
        for name in p["configs"]:
            since.setdefault(name, tag)
        summary.append(
            {
                "release": tag,
                "commit": commit,
                "configs": len(p["configs"]),
                "families": len({f for f, _, _ in p["configs"].values()}),
                "device_ids": len(p["devices"]),
            }
        )
    tag, commit, newest = parsed[-1]
    if any(count < 1 for _, _, count in newest["configs"].values()) or not newest["devices"]:
        raise ValueError(f"{tag}: the newest release has configs without counts or no device filters")
    families: dict[str, dict[str, Any]] = {}
    for name, (family, vgpu_type, count) in newest["configs"].items():
        entry = families.setdefault(family, {"devices": [], "types": []})
        entry["types"].append([name, vgpu_type, count, since[name]])
    for device, fams in newest["devices"].items():
        for family in fams:
            if family not in families:
                raise ValueError(f"default ties 10de:{device} to {family}, which has no single-type configs")
            families[family]["devices"].append(device)
    return {
        "comment": "Generated by python -m tools.vgpu_catalogue from the release tags; do not edit.",
        "source": {"repo": REPO, "path": PATH, "release": tag, "commit": commit, "copy": COPY, "licence": LICENCE},
        "releases": summary,
        "devices": {d: newest["devices"][d] for d in sorted(newest["devices"])},
        "default": {d: newest["default"][d] for d in sorted(newest["default"])},
        "families": families,
    }


def render(catalogue: dict[str, Any]) -> str:
    return json.dumps(catalogue, indent=1, ensure_ascii=False) + "\n"


def read_archive(path: Path) -> list[tuple[str, str, str]]:
    """(tag, commit, text) of every ``TAG@COMMIT.yaml`` member."""
    out = []
    with tarfile.open(path, "r:xz") as tar:
        for member in tar.getmembers():
            if not member.isfile() or not member.name.endswith(".yaml"):
                continue
            tag, _, commit = member.name[: -len(".yaml")].partition("@")
            handle = tar.extractfile(member)
            assert handle is not None
            out.append((tag, commit, handle.read().decode("utf-8")))
    return out


def read_git(mirror: Path) -> list[tuple[str, str, str]]:
    """(tag, commit, text) of every release tag of a clone that has the file."""

    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(mirror), *args], check=True, capture_output=True, text=True).stdout

    out = []
    for tag in git("tag", "--list", "v*").split():
        if _TAG.match(tag) is None:
            continue
        commit = git("rev-parse", f"{tag}^{{commit}}").strip()
        try:
            text = git("show", f"{commit}:{PATH}")
        except subprocess.CalledProcessError:
            continue  # a tag without the file
        out.append((tag, commit, text))
    return sorted(out, key=lambda r: _version_key(r[0]))


def write_archive(releases: list[tuple[str, str, str]], path: Path) -> None:
    """A reproducible xz tar of the inputs (sorted, no times, no owners)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:xz", format=tarfile.USTAR_FORMAT) as tar:
        for tag, commit, text in sorted(releases, key=lambda r: _version_key(r[0])):
            data = text.encode("utf-8")
            info = tarfile.TarInfo(f"{tag}@{commit}.yaml")
            info.size, info.mode, info.mtime = len(data), 0o644, 0
            tar.addfile(info, io.BytesIO(data))
    path.write_bytes(buffer.getvalue())


def default_archive() -> Path:
    return Path(__file__).resolve().parent.parent / "tests" / "data" / "vgpu-device-manager-configs.tar.xz"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.vgpu_catalogue", description=__doc__.split("\n\n")[0])
    parser.add_argument("output", nargs="?", type=Path, help=f"where to write (default: data/{OUTPUT_NAME})")
    parser.add_argument(
        "--git", type=Path, metavar="MIRROR", help="read every release tag of this vgpu-device-manager clone"
    )
    parser.add_argument("--archive", type=Path, metavar="FILE", help="the vendored inputs (read; with --git, written)")
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 when the output differs")
    args = parser.parse_args(argv)
    archive = args.archive or default_archive()
    if args.git is not None:
        releases = read_git(args.git)
        if not args.check:
            write_archive(releases, archive)
    else:
        releases = read_archive(archive)
    text = render(build(releases))
    output = args.output or data_dir() / OUTPUT_NAME
    if args.check:
        fresh = output.is_file() and output.read_text(encoding="utf-8") == text
        print(f"{output}: {'up to date' if fresh else 'STALE: run python -m tools.vgpu_catalogue'}")
        return 0 if fresh else 1
    output.write_text(text, encoding="utf-8")
    print(f"{output}: {len(releases)} releases")
    return 0


if __name__ == "__main__":
    sys.exit(main())
