"""Reading a node's tree as if its directory were ``/``: chroot-style path
resolution and bounded reads of sysfs attributes, the way the plugin reads them.

Every path is resolved inside the root as a chroot would
(:func:`resolve_in_root`): an absolute link target ``/x`` means ``ROOT/x``
and ``..`` stops at the root, so a tree cannot make a reader read anything
outside it. Only regular files of at most
:data:`~pciname.files.MAX_SYSFS_ATTR_BYTES` are read, with an open that never
blocks.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

from ..files import MAX_SYSFS_ATTR_BYTES, read_bounded

#: Symbolic links followed while resolving one path (Linux's MAXSYMLINKS).
MAX_SYMLINKS = 40


class ShortFile(Exception):
    """A file the plugin's ``readIDFromFile`` panics on: fewer than 2 bytes."""


def resolve_in_root(root: Path, path: str, *, follow_last: bool = True) -> Path:
    """``path`` (relative to ``root``, or absolute meaning under it) resolved
    the way the kernel would if ``root`` were ``/``: every symlink is
    followed, an absolute target ``/x/y`` means ``root/x/y`` and ``..`` never
    climbs above ``root``. With ``follow_last=False`` a link in the last
    component is kept (to ``readlink`` it).

    The result is ``root`` joined with components that were checked to be
    directories, not symlinks (the last one: not a symlink, unless kept), so
    it names a file inside ``root``. Raises OSError: a missing component, a
    non-directory in the middle, more than :data:`MAX_SYMLINKS` links
    (``ELOOP``).
    """
    return root.joinpath(*components(root, path, follow_last))


def components(root: Path, path: str, follow_last: bool = True) -> list[str]:
    """The components of :func:`resolve_in_root`'s answer, below ``root``."""
    pending = [p for p in reversed(path.split("/")) if p not in ("", ".")]
    done: list[str] = []
    links = 0
    while pending:
        part = pending.pop()
        if part == "..":
            if done:
                done.pop()
            continue
        if not pending and not follow_last:
            done.append(part)
            break
        candidate = root.joinpath(*done, part)
        st = os.lstat(candidate)
        if stat.S_ISLNK(st.st_mode):
            links += 1
            if links > MAX_SYMLINKS:
                raise OSError(errno.ELOOP, os.strerror(errno.ELOOP), os.fspath(root.joinpath(path.lstrip("/"))))
            target = os.readlink(candidate)
            if target.startswith("/"):
                done.clear()
            pending.extend(p for p in reversed(target.split("/")) if p not in ("", "."))
            continue
        if pending and not stat.S_ISDIR(st.st_mode):
            raise NotADirectoryError(errno.ENOTDIR, os.strerror(errno.ENOTDIR), os.fspath(candidate))
        done.append(part)
    return done


def resolved(root: Path, path: str) -> str:
    """``path`` resolved inside ``root``, as a path relative to it (every
    link followed). Raises OSError."""
    return "/".join(components(root, path))


def directory(root: Path, path: str) -> str:
    """``path`` resolved inside ``root`` (relative to it), which must be a
    directory. Raises OSError (FileNotFoundError when it is none)."""
    real = resolved(root, path)
    if not stat.S_ISDIR(os.lstat(root.joinpath(real)).st_mode):
        raise FileNotFoundError(errno.ENOENT, "not a directory", os.fspath(root.joinpath(path)))
    return real


def entries(path: Path) -> list[os.DirEntry[str]]:
    """The entries of the directory ``path`` in the plugin's order (Go's
    ``ioutil.ReadDir``: by name, byte-wise)."""
    with os.scandir(path) as it:
        return sorted(it, key=lambda e: e.name.encode("utf-8", "surrogateescape"))


def read_attr(root: Path, path: str) -> bytes:
    """The bytes of the sysfs attribute ``path`` (relative to ``root``),
    resolved inside ``root``: a regular file of at most
    MAX_SYSFS_ATTR_BYTES, opened without blocking. Raises OSError."""
    return read_bounded(resolve_in_root(root, path), MAX_SYSFS_ATTR_BYTES, follow_symlinks=False)


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


def link_base(root: Path, path: str) -> str:
    """The plugin's readLink: the last component of the link target. Raises OSError."""
    return os.readlink(resolve_in_root(root, path, follow_last=False)).rpartition("/")[2]


def link_target(root: Path, real_dir: str, name: str) -> str:
    """The target of the link ``name`` in ``real_dir``, a directory already
    resolved inside ``root`` (:func:`directory`): read, not followed. Raises OSError."""
    return os.readlink(root.joinpath(real_dir, name))


def missing(exc: OSError) -> bool:
    """Absent, as opposed to present but refused (not regular, too large, a loop)."""
    return isinstance(exc, (FileNotFoundError, NotADirectoryError))


def reason(exc: OSError) -> str:
    """What went wrong, without the path (messages name the path themselves)."""
    return exc.strerror or str(exc)
