"""The RPC handlers beyond the name lookups, one module per capability
group (:mod:`~pciname.server.rpc.kubevirt`, :mod:`~pciname.server.rpc.lint`,
:mod:`~pciname.server.rpc.cluster`, :mod:`~pciname.server.rpc.admission`; what they
share: :mod:`~pciname.server.rpc.shared`),
the wire format every handler speaks (:mod:`~pciname.server.rpc.wire`:
status codes, reasons, request limits) and the one mapping between messages
and plain values (:mod:`~pciname.server.rpc.mapping`). What one request may
cost is :mod:`pciname.server.budget`'s, the cluster a server reads
:mod:`pciname.capabilities.cluster_access`'s."""
