"""The RPC handlers beyond the name lookups, one module per capability
group (:mod:`~pciname.server.rpc.kube`, :mod:`~pciname.server.rpc.admission`),
the wire format every handler speaks (:mod:`~pciname.server.rpc.wire`:
proto <-> library, status codes, reasons, request limits) and what one
request may cost (:mod:`~pciname.server.rpc.budget`)."""
