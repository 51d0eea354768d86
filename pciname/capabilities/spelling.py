"""How a surface names a request's fields in its one-line errors: the CLI
by its flags (``--replace-defaults``), gRPC by the message's fields
(``replace_defaults``). A rule is written once, with the field's name; the
surface's spelling makes its words."""

from __future__ import annotations

import enum


class Spelling(enum.Enum):
    CLI = "cli"
    RPC = "rpc"

    def __call__(self, field: str) -> str:
        """``field`` (a request attribute) as this surface spells it."""
        return "--" + field.replace("_", "-") if self is Spelling.CLI else field


__all__ = ["Spelling"]
