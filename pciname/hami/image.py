"""An image read offline, never extracted: a ``docker save`` tarball, an OCI
image layout (directory or tarball) or an unpacked root filesystem. Layers
are applied in order in memory (whiteouts ``.wh.NAME`` and ``.wh..wh..opq``
honoured), symlinks are resolved inside the image only, and the C library
the image's programs would load is found and read (:mod:`pciname.hami.libc`).

Nothing is written anywhere. Bad or hostile input (a member escaping the
root, a device file, a link loop, a layer that is not a tar, past a budget)
is an :class:`ImageError` in one line."""

from __future__ import annotations

import io
import json
import os
import posixpath
import tarfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from pciname.base.echo import shown
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


class _Outer:
    """The files around the layers: a tarball's members or an OCI layout directory's files."""

    def __init__(self, where: str, tar: tarfile.TarFile | None = None, directory: Path | None = None) -> None:
        self.where, self.tar, self.directory = where, tar, directory

    def names(self) -> set[str]:
        if self.tar is not None:
            return set(self.tar.getnames())
        assert self.directory is not None
        return {p.relative_to(self.directory).as_posix() for p in self.directory.rglob("*") if p.is_file()}

    def open(self, name: str) -> IO[bytes] | None:
        """The member ``name``, or None; a directory's file only when it resolves to a regular file inside it."""
        if self.tar is not None:
            try:
                return self.tar.extractfile(name)
            except KeyError:
                return None
        assert self.directory is not None
        path = (self.directory / name).resolve()
        if not path.is_relative_to(self.directory.resolve()) or not path.is_file():
            return None  # a blob outside the layout (a link out of it, ".."): not the image's
        return open(path, "rb")

    def json(self, name: str) -> Any:
        handle = self.open(name)
        if handle is None:
            raise KeyError(name)
        with handle:
            return json.load(handle)


def _tarball(path: Path | None, data: bytes | None, where: str) -> tarfile.TarFile:
    try:
        if data is not None:
            return tarfile.open(fileobj=io.BytesIO(data), mode="r:*")
        return tarfile.open(path, mode="r:*")
    except (tarfile.TarError, OSError, EOFError) as error:
        raise ImageError(f"{where}: not a tar ({error})") from None


def _layers_of(outer: _Outer) -> list[str]:
    names = outer.names()
    if "manifest.json" in names:
        return [str(layer) for layer in outer.json("manifest.json")[0]["Layers"]]
    if "index.json" in names:
        digest = outer.json("index.json")["manifests"][0]["digest"].replace(":", "/")
        manifest = outer.json(f"blobs/{digest}")
        return [f"blobs/{layer['digest'].replace(':', '/')}" for layer in manifest["layers"]]
    raise ImageError(f"{outer.where}: neither a docker save tarball (manifest.json) nor an OCI layout (index.json)")


def _apply_layers(outer: _Outer, budget: Budget) -> Tree:
    where = outer.where
    try:
        layers = _layers_of(outer)
    except (KeyError, IndexError, TypeError, ValueError, AttributeError) as error:
        raise ImageError(f"{where}: a manifest pciname cannot read ({error})") from None
    if len(layers) > budget.max_layers:
        raise ImageError(f"{where}: {len(layers)} layers, more than {budget.max_layers}")
    tree = Tree(budget)
    for name in layers:
        handle = outer.open(name)
        if handle is None:
            raise ImageError(f"{where}: layer {name} is not in the image")
        with handle, _layer(handle, f"{where}: {name}") as layer:
            try:
                tree.apply(layer, f"{where}: {name}")
            except (tarfile.TarError, EOFError, OSError) as error:
                raise ImageError(f"{where}: {name}: a layer that is not a tar ({error})") from None
    return tree


def _kind(path: Path) -> str:
    """What is at ``path`` on the host: "layout", "rootfs", "docker-dir", "file" (an ImageError otherwise)."""
    try:
        if path.is_dir():
            if (path / "index.json").is_file():
                return "layout"
            return "docker-dir" if (path / "manifest.json").is_file() else "rootfs"
        if path.is_file():
            return "file"
    except OSError as error:
        raise ImageError(f"{shown(str(path), quote=False)}: {error.strerror or error}") from None
    raise ImageError(f"{shown(str(path), quote=False)}: no such image file or directory")


def open_image(path: str | Path, budget: Budget | None = None) -> Tree:
    """The image at ``path`` (a root filesystem, an OCI layout directory, a
    docker save or OCI layout tarball) as its files after every layer."""
    budget = budget or Budget()
    path = Path(path)
    kind = _kind(path)
    if kind == "layout":
        return _apply_layers(_Outer(str(path), directory=path), budget)
    if kind == "rootfs":
        return _rootfs(path, budget)
    if kind == "docker-dir":
        raise ImageError(f"{path}: an unpacked docker save directory: give it as the tarball docker save wrote")
    if path.stat().st_size > budget.max_bytes:
        raise ImageError(f"{path}: larger than {budget.max_bytes} bytes")
    with _tarball(path, None, str(path)) as outer:
        return _apply_layers(_Outer(str(path), tar=outer), budget)


def image_from_bytes(data: bytes, where: str = "the image", budget: Budget | None = None) -> Tree:
    """A docker save or OCI layout tarball given as its bytes (the RPC's), as :func:`open_image` reads a file."""
    budget = budget or Budget()
    if len(data) > budget.max_bytes:
        raise ImageError(f"{where}: larger than {budget.max_bytes} bytes")
    with _tarball(None, data, where) as outer:
        return _apply_layers(_Outer(where, tar=outer), budget)


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
