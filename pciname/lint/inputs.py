"""Reading the YAML to lint: a file or standard input, bounded, without ever
blocking on a FIFO or a device. The linter (:mod:`pciname.lint.linter`) takes
text; what it gets from files and stdin is read here.
"""

from __future__ import annotations

import sys

from pciname.base import files
from pciname.errors import LintInputError

#: The path that means standard input, and the name findings and errors give it.
STDIN = "-"
STDIN_NAME = "<stdin>"


def read_input(path: str) -> tuple[bytes, str]:
    """The bytes of ``path`` (``-``: standard input) and its display name:
    a regular file (never blocks on a FIFO or a device) or stdin, of at most
    :data:`~pciname.base.files.MAX_YAML_BYTES`."""
    limit = files.MAX_YAML_BYTES  # looked up now: tests lower it
    name = STDIN_NAME if path == STDIN else path
    try:
        if path != STDIN:
            return files.read_bounded(path, limit), name
        if sys.stdin is None:
            raise OSError("standard input is closed")
        data = sys.stdin.buffer.read(limit + 1)
        if len(data) > limit:
            raise OSError(f"more than the {limit} bytes allowed")
        return data, name
    except OSError as error:
        raise LintInputError(f"{name}: cannot read: {error.strerror or error}", file=name) from None
