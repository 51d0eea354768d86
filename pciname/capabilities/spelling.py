"""How a surface names a request's fields in its one-line errors: the CLI
by its flags (``--replace-defaults``), gRPC by the message's fields
(``replace_defaults``). A rule is written once, with the field's name; the
surface's spelling makes its words."""

from __future__ import annotations

import enum

#: The CLI flags not spelled as ``--`` + the field with ``-`` for ``_``.
CLI_FLAGS = {"roles": "--role"}


class Spelling(enum.Enum):
    CLI = "cli"
    RPC = "rpc"

    def __call__(self, field: str) -> str:
        """``field`` (a request attribute) as this surface spells it."""
        if self is Spelling.RPC:
            return field
        return CLI_FLAGS.get(field) or "--" + field.replace("_", "-")


__all__ = ["Spelling"]
