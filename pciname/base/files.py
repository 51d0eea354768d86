"""Reading input files safely: regular files only, of a bounded size.

Every file pciname reads on a user's behalf (pci.ids files, cached tables,
YAML to lint, sysfs attributes) goes through :func:`read_bounded`:

* the open never blocks (``O_NONBLOCK``): a FIFO or a device in place of a
  file is refused, not waited on forever;
* only a regular file is read (``fstat`` of the opened descriptor, so a
  file swapped between a check and the open cannot slip through);
* at most ``limit`` bytes: a larger file, ``/dev/zero`` or a file that grows
  while being read is refused with a message naming the limit, instead of
  exhausting memory.

The limits are defined here, once, and documented in the README. The fast
path of ``pciname lookup`` reads two of them, so this module is on its
measured start-up path: no ``from __future__ import annotations``, and the
error class (:mod:`pciname.errors` costs 0.4 ms) is imported when raised.
"""

import errno
import os
import stat

MIB = 1 << 20

# The real pci.ids is about 1.7 MB; refuse anything far past that.
MAX_PCIIDS_BYTES = 64 * MIB

# YAML to lint, per file (or stdin): a KubeVirt CR or a whole manifest
# bundle is well under this; PyYAML needs about 2 s and 40 MB per MB.
MAX_YAML_BYTES = 16 * MIB

# Devices one ``lookup`` resolves (arguments and --stdin together), and the
# bytes --stdin may hold: 64 per device on average, white space included.
MAX_LOOKUP_DEVICES = 100_000
MAX_LOOKUP_STDIN_BYTES = 64 * MAX_LOOKUP_DEVICES
# A kubeconfig with embedded certificates is a few KB.
MAX_KUBECONFIG_BYTES = 4 * MIB
# A PEM file: a TLS certificate chain, key or CA bundle (a few KB), or a
# token or certificate file a kubeconfig names.
MAX_CREDENTIAL_FILE_BYTES = 1 * MIB

# A sysfs attribute is at most a page (4 KiB); leave room, refuse the rest.
MAX_SYSFS_ATTR_BYTES = 64 * 1024


def read_bounded(path: str | os.PathLike[str], limit: int, *, follow_symlinks: bool = True) -> bytes:
    """The bytes of the regular file at ``path``, at most ``limit`` of them.

    Raises OSError (FileLimitError for a file that is not regular or is too
    large); callers turn it into their one-line message.
    """
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    if not follow_symlinks:
        flags |= getattr(os, "O_NOFOLLOW", 0)
    fd = os.open(path, flags)
    try:
        return read_fd(fd, limit, path)
    finally:
        os.close(fd)


def _limit_error(code: int, message: str, path: str | os.PathLike[str]) -> OSError:
    from pciname.errors import FileLimitError  # start-up: only when raising (see the module's docstring)

    return FileLimitError(code, message, os.fspath(path))


def read_fd(fd: int, limit: int, path: str | os.PathLike[str]) -> bytes:
    """:func:`read_bounded` of a descriptor already opened (``O_NONBLOCK``)
    by the caller, who closes it; ``path`` names it in errors."""
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        raise _limit_error(errno.EINVAL, "not a regular file", path)
    if st.st_size > limit:
        raise _limit_error(errno.EFBIG, f"{st.st_size} bytes, more than the {limit} allowed", path)
    chunks = []
    size = 0
    while chunk := os.read(fd, max(st.st_size - size, 0) + 65536):
        size += len(chunk)
        if size > limit:
            raise _limit_error(errno.EFBIG, f"more than the {limit} bytes allowed", path)
        chunks.append(chunk)
    return b"".join(chunks)


def read_blob(path: str, *, owned: bool, limit: int) -> bytes | None:
    """The bytes of a regular file of at most ``limit`` bytes (belonging to
    this user if ``owned``), opened without following a link or blocking on
    a FIFO; None if anything about it is wrong (a cache's tables are read
    with it: anything odd means "not cached")."""
    flags = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or (owned and st.st_uid != os.geteuid()) or st.st_size > limit:
            return None
        blob = os.read(fd, st.st_size + 1)  # a file that grew since fstat fails its digest
    except OSError:
        return None
    finally:
        os.close(fd)
    return blob if len(blob) <= limit else None


def write_atomically(directory: str, target: str, blob: bytes, *, prefix: str) -> bool:
    """Write ``blob`` to a new file in ``directory`` (``mkstemp``, named
    ``prefix...``: created exclusively, never through a planted link) and
    rename it to ``target``; False when that fails."""
    import tempfile

    try:
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=prefix, suffix=".tmp")
    except OSError:
        return False
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(blob)
        os.replace(tmp, target)
    except OSError:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        return False
    return True
