"""pciname's gRPC name service (``pciname serve``): the package and its map.

* :mod:`pciname.server.config`: :class:`ServeConfig`, the default and the
  checks of every ``pciname serve`` flag (no gRPC in it);
* :mod:`pciname.server.app`: :class:`NameServer` and :func:`serve`, the
  life of a server (health, reflection, reload, drain, TLS, metrics);
* :mod:`pciname.server.service`: the ``pciname.v1.PciName`` servicer and
  the RPCs over the names;
* :mod:`pciname.server.rpc`: the RPCs over the domain rooms, one module per
  group: ``kubevirt`` (PermittedHostDevices, NodePool, VgpuTypes), ``lint``,
  ``cluster`` (GpuOptions and the server's cluster access), ``admission``;
* :mod:`pciname.server.rpc.mapping`: the one mapping between messages and
  plain values, read from their descriptors;
* :mod:`pciname.server.rpc.wire`: what the server sends (messages, status
  codes, ``pciname-error`` reasons) and the request limits, shared with the
  client (:mod:`pciname.client` reads answers back through the mapping,
  statuses as ``Remote*`` errors);
* :mod:`pciname.server.budget`: what one request may cost (the YAML nodes
  of a Lint or GpuOptions request, concurrent Lint RPCs) and the checks of
  the caller's cancellation and deadline while it works;
* :mod:`pciname.server.data`: one generation of served data;
* :mod:`pciname.server.logs`, :mod:`pciname.server.metrics`: its log and
  its Prometheus metrics;
* :mod:`pciname.server._proto`: the generated stubs of
  ``proto/pciname/v1/pciname.proto`` (regenerate with
  ``python -m tools.protogen``).

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
