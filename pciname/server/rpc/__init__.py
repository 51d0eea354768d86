"""The RPC handlers beyond the name lookups, one module per capability
group (:mod:`~pciname.server.rpc.kubevirt`, :mod:`~pciname.server.rpc.lint`,
:mod:`~pciname.server.rpc.cluster`, :mod:`~pciname.server.rpc.admission`; what they
share: :mod:`~pciname.server.rpc.shared`),
the wire format every handler speaks (:mod:`~pciname.server.rpc.wire`:
proto <-> library, status codes, reasons, request limits) and what one
request may cost (:mod:`~pciname.server.rpc.budget`)."""
