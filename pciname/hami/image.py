"""An image read offline, never extracted: a ``docker save`` tarball, an OCI
image layout (directory or tarball) or an unpacked root filesystem. Layers
are applied in order in memory (whiteouts ``.wh.NAME`` and ``.wh..wh..opq``
honoured), symlinks are resolved inside the image only, and the C library
the image's programs would load is found and read (:mod:`pciname.hami.libc`).

Nothing is written anywhere. Bad or hostile input (a member escaping the
root, a device file, a link loop, a layer that is not a tar, past a budget)
is an :class:`ImageError` in one line."""

from __future__ import annotations

import json
import os
import posixpath
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from pciname.errors import PcinameError
from pciname.hami.isolation import CLibrary
from pciname.hami.libc import defined_symbols_of, read_library


class ImageError(PcinameError):
    """An image pciname will not read (one line: which file, what)."""


@dataclass(frozen=True)
class Budget:
    max_bytes: int = 8 << 30
    max_layers: int = 128
    max_members: int = 500_000
    max_depth: int = 64
    max_hops: int = 40


#: Where programs' loaders look for the C library, in order (Debian multiarch, then the FHS places).
LIBC_PLACES = (
    "lib/x86_64-linux-gnu/libc.so.6",
    "lib/aarch64-linux-gnu/libc.so.6",
    "usr/lib/x86_64-linux-gnu/libc.so.6",
    "usr/lib/aarch64-linux-gnu/libc.so.6",
    "lib64/libc.so.6",
    "usr/lib64/libc.so.6",
    "lib/libc.so.6",
    "usr/lib/libc.so.6",
)
MUSL_PLACES = ("lib/ld-musl-x86_64.so.1", "lib/ld-musl-aarch64.so.1")


@dataclass
class _Entry:
    kind: str  # "file", "dir", "link"
    target: str = ""
    data: bytes | None = None
    #: A root filesystem's file, read when asked for.
    source: Path | None = None


class Tree:
    """The image's files after its layers, by path (no leading slash)."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.entries: dict[str, _Entry] = {}

    def _clean(self, name: str, where: str) -> str:
        parts = [p for p in name.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise ImageError(f"{where}: member {name!r} leaves the image's root")
        if len(parts) > self.budget.max_depth:
            raise ImageError(f"{where}: member {name[:80]!r} is deeper than {self.budget.max_depth} directories")
        return "/".join(parts)

    def _remove(self, path: str, *, children_only: bool = False) -> None:
        prefix = path + "/" if path else ""
        for key in [k for k in self.entries if k.startswith(prefix) or (k == path and not children_only)]:
            del self.entries[key]

    def apply(self, layer: tarfile.TarFile, where: str) -> None:
        for count, member in enumerate(layer):
            if count >= self.budget.max_members:
                raise ImageError(f"{where}: more than {self.budget.max_members} members")
            path = self._clean(member.name, where)
            parent, _, base = path.rpartition("/")
            if base == ".wh..wh..opq":
                self._remove(parent, children_only=True)
            elif base.startswith(".wh."):
                self._remove(posixpath.join(parent, base[4:]))
            elif member.isdev() or member.isfifo():
                raise ImageError(f"{where}: member {member.name!r} is a device or FIFO")
            elif member.isdir():
                self.entries[path] = _Entry("dir")
            elif member.issym():
                self.entries[path] = _Entry("link", member.linkname)
            elif member.islnk():
                self.entries[path] = _Entry("link", "/" + self._clean(member.linkname, where))
            elif member.isfile():
                handle = layer.extractfile(member)
                self.entries[path] = _Entry("file", data=handle.read() if handle is not None else b"")

    def resolve(self, path: str) -> str | None:
        """``path`` with every symlink resolved inside the image, or None when nothing is there."""
        hops, parts, done = 0, path.split("/"), ""
        while parts:
            part = parts.pop(0)
            if part in ("", "."):
                continue
            candidate = posixpath.dirname(done) if part == ".." else posixpath.join(done, part).lstrip("/")
            entry = self.entries.get(candidate)
            if entry is not None and entry.kind == "link":
                hops += 1
                if hops > self.budget.max_hops:
                    raise ImageError(f"{path}: more than {self.budget.max_hops} symlinks (a loop?)")
                target = entry.target
                done = "" if target.startswith("/") else done
                parts = target.split("/") + parts
                continue
            done = candidate
        entry = self.entries.get(done)
        return done if entry is not None and entry.kind == "file" else None

    def read(self, path: str) -> bytes | None:
        found = self.resolve(path)
        if found is None:
            return None
        entry = self.entries[found]
        return entry.source.read_bytes() if entry.source is not None else entry.data


def _layer(source: IO[bytes], where: str) -> tarfile.TarFile:
    try:
        return tarfile.open(fileobj=source, mode="r:*")
    except (tarfile.TarError, OSError, EOFError) as error:
        raise ImageError(f"{where}: a layer that is not a tar ({error})") from None


def _rootfs(directory: Path, budget: Budget) -> Tree:
    """A root filesystem's files; its symlinks are kept as links (never followed on the host)."""
    tree = Tree(budget)
    for top, dirs, files in os.walk(directory, followlinks=False):
        for name in dirs + files:
            path = Path(top) / name
            rel = path.relative_to(directory).as_posix()
            if len(tree.entries) >= budget.max_members:
                raise ImageError(f"{directory}: more than {budget.max_members} files")
            if path.is_symlink():
                tree.entries[rel] = _Entry("link", os.readlink(path))
            elif path.is_dir():
                tree.entries[rel] = _Entry("dir")
            elif path.is_file():
                tree.entries[rel] = _Entry("file", source=path)
    return tree


def _outer(path: Path) -> tarfile.TarFile:
    try:
        return tarfile.open(path, mode="r:*")
    except (tarfile.TarError, OSError, EOFError) as error:
        raise ImageError(f"{path}: not a tar ({error})") from None


def _layers_of(outer: tarfile.TarFile, where: str) -> list[str]:
    names = set(outer.getnames())
    if "manifest.json" in names:
        manifest = json.load(outer.extractfile("manifest.json"))  # type: ignore[arg-type]
        return [str(layer) for layer in manifest[0]["Layers"]]
    if "index.json" in names:
        index = json.load(outer.extractfile("index.json"))  # type: ignore[arg-type]
        digest = index["manifests"][0]["digest"].replace(":", "/")
        manifest = json.load(outer.extractfile(f"blobs/{digest}"))  # type: ignore[arg-type]
        return [f"blobs/{layer['digest'].replace(':', '/')}" for layer in manifest["layers"]]
    raise ImageError(f"{where}: neither a docker save tarball (manifest.json) nor an OCI layout (index.json)")


def open_image(path: str | Path, budget: Budget | None = None) -> Tree:
    """The image at ``path`` as its files after every layer."""
    budget = budget or Budget()
    path = Path(path)
    if path.is_dir() and not (path / "index.json").is_file() and not (path / "manifest.json").is_file():
        return _rootfs(path, budget)
    if path.is_dir():
        raise ImageError(f"{path}: an OCI layout directory: give it as a tarball (not read yet)")
    if not path.is_file():
        raise ImageError(f"{path}: no such image file or directory")
    if path.stat().st_size > budget.max_bytes:
        raise ImageError(f"{path}: larger than {budget.max_bytes} bytes")
    with _outer(path) as outer:
        try:
            layers = _layers_of(outer, str(path))
        except (KeyError, IndexError, TypeError, ValueError) as error:
            raise ImageError(f"{path}: a manifest pciname cannot read ({error})") from None
        if len(layers) > budget.max_layers:
            raise ImageError(f"{path}: {len(layers)} layers, more than {budget.max_layers}")
        tree = Tree(budget)
        for name in layers:
            handle = outer.extractfile(name) if name in outer.getnames() else None
            if handle is None:
                raise ImageError(f"{path}: layer {name} is not in the tarball")
            with _layer(handle, f"{path}: {name}") as layer:
                try:
                    tree.apply(layer, f"{path}: {name}")
                except (tarfile.TarError, EOFError) as error:
                    raise ImageError(f"{path}: {name}: a layer that is not a tar ({error})") from None
    return tree


def c_library(tree: Tree) -> CLibrary:
    """The C library the image's programs would load (musl's loader is its libc; glibc's
    ``libdl.so.2`` beside it adds the dlsym of glibc before 2.34)."""
    for place in MUSL_PLACES + LIBC_PLACES:
        data = tree.read(place)
        if data is not None:
            libdl = tree.read(posixpath.join(posixpath.dirname(place), "libdl.so.2"))
            extra = defined_symbols_of(libdl) if libdl is not None else None
            return read_library("/" + place, data, extra)
    raise ImageError("no C library in the image (no libc.so.6 or ld-musl in the places loaders look)")
