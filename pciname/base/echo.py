"""How a one-line error echoes an input: quoted, and cut with its size past
a limit, so a line stays short whatever was sent (the service's details,
:mod:`pciname.server.rpc.wire`, and the objects a caller sends,
:mod:`pciname.capabilities.served`)."""

from __future__ import annotations

#: What error details show of an input.
ECHO_CHARS = 64


def shown(text: str, limit: int = ECHO_CHARS, *, quote: bool = True) -> str:
    """``text`` as error details show an input: quoted (``repr``), and past
    ``limit`` characters cut, with its size: ``'10de:22'…(1048576 bytes)``."""
    if len(text) <= limit:
        return repr(text) if quote else text
    size = len(text.encode("utf-8", "surrogatepass"))
    head = repr(text[:limit]) if quote else text[:limit]
    return f"{head}…({size} bytes)"


__all__ = ["ECHO_CHARS", "shown"]
