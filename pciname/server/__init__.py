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
* :mod:`pciname.server.rpc.wire`: every conversion between library values and
  messages (both directions), status codes, ``pciname-error`` reasons and
  request limits, shared with :mod:`pciname.client`;
* :mod:`pciname.server.rpc.budget`: what one request may cost (the YAML nodes
  of a Lint or GpuOptions request, concurrent Lint RPCs) and the checks of
  the caller's cancellation and deadline while it works;
* :mod:`pciname.server.data`: one generation of served data;
* :mod:`pciname.server.logs`, :mod:`pciname.server.metrics`: its log and
  its Prometheus metrics;
* :mod:`pciname.server._proto`: the generated stubs of
  ``proto/pciname/v1/pciname.proto`` (regenerate with
  ``python -m tools.protogen``).

The names below are imported on first use, so the client (which imports
:mod:`pciname.server.rpc.wire`) does not load the server.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from pciname.errors import ServeError
    from pciname.server.app import LIVENESS_SERVICE, NameServer, serve
    from pciname.server.config import DEFAULT_LISTEN, ServeConfig

__all__ = ["DEFAULT_LISTEN", "LIVENESS_SERVICE", "NameServer", "ServeConfig", "ServeError", "serve"]


def __getattr__(name: str) -> Any:
    if name in ("LIVENESS_SERVICE", "NameServer", "serve"):
        from pciname.server import app

        return getattr(app, name)
    if name in ("DEFAULT_LISTEN", "ServeConfig"):
        from pciname.server import config

        return getattr(config, name)
    if name == "ServeError":
        from pciname.errors import ServeError

        return ServeError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
