"""pciname's gRPC name service (``pciname serve``).

* :mod:`pciname.server.app`: :class:`NameServer`, :class:`ServeConfig` and
  :func:`serve` (health, reflection, reload, drain, TLS, metrics);
* :mod:`pciname.server.service`: the ``pciname.v1.PciName`` handlers;
* :mod:`pciname.server.data`: one generation of served data;
* :mod:`pciname.server._proto`: the generated stubs of
  ``proto/pciname/v1/pciname.proto`` (regenerate with
  ``python -m pciname.server.protogen``).

Clients use :mod:`pciname.client`.
"""

from .app import DEFAULT_LISTEN, LIVENESS_SERVICE, NameServer, ServeConfig, ServeError, serve

__all__ = ["DEFAULT_LISTEN", "LIVENESS_SERVICE", "NameServer", "ServeConfig", "ServeError", "serve"]
