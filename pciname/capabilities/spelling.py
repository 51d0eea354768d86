"""How a surface names a request's fields in its one-line errors: the CLI
by its flags (``--replace-defaults``), gRPC by the message's fields
(``replace_defaults``). A rule is written once, with the field's name; the
surface's spelling makes its words."""

from __future__ import annotations

import enum

from pciname.errors import PcinameError

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

    def auto_refused(self, field: str = "profile") -> PcinameError:
        """Profile ``auto`` where there is no cluster to infer it from, in
        this surface's words (each names the requests that read a cluster)."""
        where = "audit, gpu-options and apply" if self is Spelling.CLI else "GpuOptions; name a profile"
        return PcinameError(f"{self(field)} auto needs a cluster to infer from: it works with {where}")


__all__ = ["Spelling"]
