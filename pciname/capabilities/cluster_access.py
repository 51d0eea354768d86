"""The read-only access to its cluster of a server started with ``--kube``:
one :class:`ClusterAccess`, made at start, whose reads the ``GpuOptions``
and ``AdmissionPolicy`` RPCs make, as ``pciname gpu-options`` reads a
cluster (:mod:`pciname.cluster.kube`), so that the service imports no
domain room. Light to import: the server's start-up makes one before any
RPC module is imported."""

from __future__ import annotations

import threading
from typing import Any

from pciname.cluster.kube import DEFAULT_TIMEOUT, ClusterState, connect_loaded, read_cluster
from pciname.errors import ClusterError, PcinameError

#: The ClusterError reason of a configuration that cannot be loaded (or credentials not had).
CONFIG = "config"


class ClusterAccess:
    """Read-only access to the cluster the server runs in (``--kube``):
    ``kubeconfig``/``context`` as ``pciname gpu-options`` takes them (none:
    $KUBECONFIG, ~/.kube/config, else the in-cluster service account).

    The configuration is loaded once (a kubeconfig credential plugin runs
    then, within the time the request has) and again only when it must, as
    the kubernetes client renews credentials: when they expire (the
    plugin's expirationTimestamp, less five minutes), when a file it was
    loaded from changes, or after the API server refused them (401, 403).
    Each request's API calls get ``timeout`` seconds in all (less when the
    RPC's deadline is nearer)."""

    def __init__(
        self, kubeconfig: str | None = None, context: str | None = None, timeout: float = DEFAULT_TIMEOUT
    ) -> None:

        self.kubeconfig = kubeconfig
        self.context = context
        self.timeout = timeout
        self.loads = 0  # how many times the configuration was loaded
        self._lock = threading.Lock()
        self._client: Any = None
        self._loaded: Any = None

    def _connect(self, timeout: float) -> Any:

        with self._lock:
            if self._client is None or self._loaded.stale():
                client, loaded = connect_loaded(self.kubeconfig, self.context, timeout=timeout)
                self.loads += 1
                old, self._client, self._loaded = self._client, client, loaded
                if old is not None:
                    old.close()
            return self._client

    def _forget(self) -> None:
        with self._lock:
            if self._client is not None:
                self._client.close()
            self._client = self._loaded = None

    def check(self) -> None:
        """Load the configuration (at start-up): PcinameError if it cannot be."""
        self._connect(self.timeout)

    def close(self) -> None:
        self._forget()

    def read(self, kubevirt_name: str | None, timeout: float) -> ClusterState:
        """The cluster's KubeVirt CR and Nodes; a :class:`~pciname.errors.ClusterError`
        if they cannot be read (reason :data:`CONFIG`: the configuration cannot be loaded)."""

        budget = min(self.timeout, timeout)
        try:
            api = self._connect(budget)
        except PcinameError as error:
            raise ClusterError(f"this server cannot read the cluster: {error}", reason=CONFIG) from None
        try:
            return read_cluster(api, kubevirt_name, timeout=budget)
        except ClusterError as error:
            if error.reason == "refused" and error.status in (401, 403):
                self._forget()  # the next request loads the credentials afresh
            raise


__all__ = ["CONFIG", "ClusterAccess", "ClusterState"]
