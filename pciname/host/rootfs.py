"""Reading a node's tree as if its directory were ``/``: chroot-style path
resolution and bounded reads of sysfs attributes, the way the plugin reads them.

Every path is resolved inside the root as a chroot would
(:func:`_resolve`): an absolute link target ``/x`` means ``ROOT/x`` and
``..`` stops at the root, so a tree cannot make a reader read anything
outside it. The walk holds a descriptor of each directory and opens the next
component from it (``openat`` with ``O_NOFOLLOW``), so what was checked is
what is read, even while the tree changes. Only regular files of at most
:data:`~pciname.base.files.MAX_SYSFS_ATTR_BYTES` are read, with an open that never
blocks.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from pciname.base.files import MAX_SYSFS_ATTR_BYTES, read_fd
from pciname.errors import PcinameBaseError

#: Symbolic links followed while resolving one path (Linux's MAXSYMLINKS).
MAX_SYMLINKS = 40


class ShortFile(PcinameBaseError):
    """A file the plugin's ``readIDFromFile`` panics on: fewer than 2 bytes."""


_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: A directory on the way down: never through a symlink (the open itself refuses one).
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
#: The file read: never through a symlink, never waiting on a FIFO or a device.
_FILE_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | _CLOEXEC


class Entry:
    """One entry of a directory listing (:func:`entries`): its name and
    whether it is a directory itself (not a link to one)."""

    __slots__ = ("_dir", "name")

    def __init__(self, name: str, is_dir: bool) -> None:
        self.name = name
        self._dir = is_dir

    def is_dir(self, *, follow_symlinks: bool = True) -> bool:
        """``os.DirEntry.is_dir`` with ``follow_symlinks=False`` (the only one asked)."""
        return self._dir


class _At:
    """Where a path resolved inside a root ends: open descriptors of the
    directories walked from the root down (``fds[-1]`` holds the last
    component), the names of those directories, and the last component
    (None: the path is a directory walked into, e.g. the root itself).

    Each directory was opened from the previous one's descriptor with
    ``O_NOFOLLOW | O_DIRECTORY``, so what was checked is what is read: a
    component swapped for a symlink after its check makes the open fail,
    it is never followed out of the root."""

    def __init__(self, root: Path) -> None:
        self.fds = [os.open(root, os.O_RDONLY | os.O_DIRECTORY | _CLOEXEC)]
        self.parts: list[str] = []
        self.last: str | None = None

    @property
    def dir_fd(self) -> int:
        return self.fds[-1]

    def up(self) -> None:
        if self.parts:
            self.parts.pop()
            os.close(self.fds.pop())

    def to_root(self) -> None:
        while self.parts:
            self.up()

    def down(self, part: str) -> None:
        self.fds.append(os.open(part, _DIR_FLAGS, dir_fd=self.dir_fd))
        self.parts.append(part)

    def close(self) -> None:
        for fd in self.fds:
            os.close(fd)
        self.fds.clear()

    def __enter__(self) -> _At:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _resolve(root: Path, path: str, follow_last: bool = True) -> _At:
    """``path`` (relative to ``root``, or absolute meaning under it) resolved
    the way the kernel would if ``root`` were ``/``: every symlink is
    followed, an absolute target ``/x/y`` means ``root/x/y`` and ``..`` never
    climbs above ``root``; with ``follow_last=False`` a link in the last
    component is kept (to ``readlink`` it). Directories are walked with
    descriptors (:class:`_At`, which the caller closes). Raises OSError: a
    missing component, a non-directory in the middle, more than
    :data:`MAX_SYMLINKS` links (``ELOOP``)."""
    at = _At(root)
    try:
        pending = [p for p in reversed(path.split("/")) if p not in ("", ".")]
        links = 0
        while pending:
            part = pending.pop()
            if part == "..":
                at.up()
                continue
            if not pending and not follow_last:
                at.last = part
                break
            st = os.stat(part, dir_fd=at.dir_fd, follow_symlinks=False)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_SYMLINKS:
                    raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), os.fspath(root.joinpath(path.lstrip("/"))))
                target = os.readlink(part, dir_fd=at.dir_fd)
                if target.startswith("/"):
                    at.to_root()
                pending.extend(p for p in reversed(target.split("/")) if p not in ("", "."))
                continue
            if not pending:
                at.last = part
                break
            if not stat.S_ISDIR(st.st_mode):
                raise NotADirectoryError(
                    errno.ENOTDIR, os.strerror(errno.ENOTDIR), os.fspath(root.joinpath(*at.parts, part))
                )
            at.down(part)
        return at
    except BaseException:
        at.close()
        raise


def components(root: Path, path: str, follow_last: bool = True) -> list[str]:
    """The components of ``path`` resolved inside ``root`` (:func:`_resolve`),
    below ``root``: a name to resolve again, never to open as it is."""
    with _resolve(root, path, follow_last) as at:
        return at.parts + ([at.last] if at.last is not None else [])


def resolve_in_root(root: Path, path: str, *, follow_last: bool = True) -> Path:
    """``root`` joined with :func:`components`: for messages. Reading goes
    through :func:`read_attr`, :func:`entries` and :func:`link_base`, which
    resolve with descriptors, so a component swapped meanwhile cannot send
    them outside ``root``."""
    return root.joinpath(*components(root, path, follow_last))


def resolved(root: Path, path: str) -> str:
    """``path`` resolved inside ``root``, as a path relative to it (every
    link followed). Raises OSError."""
    return "/".join(components(root, path))


def directory(root: Path, path: str) -> str:
    """``path`` resolved inside ``root`` (relative to it), which must be a
    directory. Raises OSError (FileNotFoundError when it is none)."""
    with _resolve(root, path) as at:
        if at.last is not None:
            st = os.stat(at.last, dir_fd=at.dir_fd, follow_symlinks=False)
            if not stat.S_ISDIR(st.st_mode):
                raise FileNotFoundError(errno.ENOENT, "not a directory", os.fspath(root.joinpath(path)))
        return "/".join(at.parts + ([at.last] if at.last is not None else []))


def entries(root: Path, path: str) -> list[Entry]:
    """The entries of the directory ``path`` (inside ``root``) in the
    plugin's order (Go's ``ioutil.ReadDir``: by name, byte-wise), listed
    through a descriptor of the directory itself. Raises OSError."""
    with _resolve(root, path) as at:
        if at.last is not None:
            at.down(at.last)
        fd = os.dup(at.dir_fd)  # os.scandir(fd) closes nothing; listing by descriptor
        try:
            with os.scandir(fd) as it:
                found = [Entry(e.name, e.is_dir(follow_symlinks=False)) for e in it]
        finally:
            os.close(fd)
    return sorted(found, key=lambda e: e.name.encode("utf-8", "surrogateescape"))


def read_attr(root: Path, path: str) -> bytes:
    """The bytes of the sysfs attribute ``path`` (relative to ``root``),
    resolved inside ``root``: a regular file of at most
    MAX_SYSFS_ATTR_BYTES, opened (without blocking, never through a link)
    from the descriptor of its directory. Raises OSError."""
    shown = root.joinpath(path.lstrip("/"))
    with _resolve(root, path) as at:
        fd = os.open(at.last or ".", _FILE_FLAGS, dir_fd=at.dir_fd)
        try:
            return read_fd(fd, MAX_SYSFS_ATTR_BYTES, shown)
        finally:
            os.close(fd)


def read_head(root: Path, path: str, limit: int) -> bytes:
    """At most ``limit`` bytes from the start of ``path``, opened as :func:`read_attr` opens it. Raises OSError."""
    with _resolve(root, path) as at:
        fd = os.open(at.last or ".", _FILE_FLAGS, dir_fd=at.dir_fd)
        try:
            return os.read(fd, limit) if stat.S_ISREG(os.fstat(fd).st_mode) else b""
        finally:
            os.close(fd)


def read_text(root: Path, path: str) -> str:
    """An attribute as text, white space trimmed (undecodable bytes kept as
    surrogates). Raises OSError."""
    return read_attr(root, path).decode("utf-8", "surrogateescape").strip()


def read_id(root: Path, path: str) -> str:
    """The plugin's readIDFromFile: bytes[2:], ``\\n`` trimmed from both ends.
    Raises :class:`ShortFile` (the plugin panics) or OSError."""
    data = read_attr(root, path)
    if len(data) < 2:
        raise ShortFile(path)
    return data[2:].decode("utf-8", "surrogateescape").strip("\n")


def _readlink(root: Path, path: str) -> str:
    with _resolve(root, path, follow_last=False) as at:
        if at.last is None:
            raise OSError(errno.EINVAL, os.strerror(errno.EINVAL), os.fspath(root.joinpath(path.lstrip("/"))))
        return os.readlink(at.last, dir_fd=at.dir_fd)


def link_base(root: Path, path: str) -> str:
    """The plugin's readLink: the last component of the link target. Raises OSError."""
    return _readlink(root, path).rpartition("/")[2]


def link_target(root: Path, real_dir: str, name: str) -> str:
    """The target of the link ``name`` in ``real_dir``, a directory already
    resolved inside ``root`` (:func:`directory`): read, not followed. Raises OSError."""
    return _readlink(root, f"{real_dir}/{name}")


def missing(exc: OSError) -> bool:
    """Absent, as opposed to present but refused (not regular, too large, a loop)."""
    return isinstance(exc, (FileNotFoundError, NotADirectoryError))


def reason(exc: OSError) -> str:
    """What went wrong, without the path (messages name the path themselves)."""
    return exc.strerror or str(exc)
