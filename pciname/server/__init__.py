"""pciname's gRPC name service (``pciname serve``). Its map (config, app,
service, rpc/, budget, data, tables, logs, metrics, _proto) is drawn once, in
docs/architecture.md; each module's first docstring names its job.

The names of :mod:`~pciname.server.app` and :mod:`~pciname.server.config`
below are imported on first use (the two imports inside :func:`__getattr__`,
kept on purpose): importing any module of this package imports this one, and
the client (which imports :mod:`pciname.server.rpc.wire`) must not load the
server, nor the CLI's start-up gRPC (``tests/server/test_server_proto.py``,
``tests/server/rpc/test_server_wire.py``); config alone would add about 15 ms
to ``import pciname.client``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from pciname.errors import ServeError

if TYPE_CHECKING:
    from pciname.server.app import LIVENESS_SERVICE, READINESS_SERVICE, NameServer, serve
    from pciname.server.config import DEFAULT_LISTEN, ServeConfig

__all__ = [
    "DEFAULT_LISTEN",
    "LIVENESS_SERVICE",
    "READINESS_SERVICE",
    "NameServer",
    "ServeConfig",
    "ServeError",
    "serve",
]


def __getattr__(name: str) -> Any:
    if name in ("LIVENESS_SERVICE", "READINESS_SERVICE", "NameServer", "serve"):
        from pciname.server import app

        return getattr(app, name)
    if name in ("DEFAULT_LISTEN", "ServeConfig"):
        from pciname.server import config

        return getattr(config, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
