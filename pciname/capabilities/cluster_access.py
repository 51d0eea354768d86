"""The cluster reads of a server started with ``--kube``
(:class:`pciname.server.access.ClusterAccess`), so that the service
imports no domain room: its configuration loaded (a credential plugin run)
and the KubeVirt CR and Nodes read, as ``pciname gpu-options`` reads them
(:mod:`pciname.cluster.kube`). Light to import, as the server's start-up is."""

from __future__ import annotations

from pciname.cluster.kube import (
    ClusterState as ClusterState,
    connect_loaded as connect_loaded,
    read_cluster as read_cluster,
)

__all__ = ["ClusterState", "connect_loaded", "read_cluster"]
