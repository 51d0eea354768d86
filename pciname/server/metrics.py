"""The name service's Prometheus metrics (prometheus-client).

Each server has its own registry, served on ``--metrics-listen``:

* ``pciname_rpc_requests_total{method,code}``: finished RPCs by status code;
* ``pciname_rpc_errors_total{method,code}``: the non-OK ones;
* ``pciname_rpc_duration_seconds{method}``: latency histogram;
* ``pciname_rpc_in_flight``: RPCs being handled now;
* ``pciname_resolved_devices_total{method}``: devices answered;
* ``pciname_reloads_total{trigger,result}``: data (re)loads, result
  ``success`` or ``failure`` (trigger ``startup``, ``signal``, ``file-change``
  or ``api``);
* ``pciname_data_generation``, ``pciname_data_loaded_timestamp_seconds``,
  ``pciname_profiles_served``, ``pciname_last_reload_success``;
* ``pciname_tls_files_loaded``: 1 while the TLS files last seen could be
  read (a server with TLS), 0 while changed ones cannot be (the old
  certificates keep serving).
"""

from __future__ import annotations

import socket
import threading
from typing import Any
from wsgiref.simple_server import WSGIRequestHandler, WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, make_wsgi_app

from pciname.server.config import METRICS_IDLE_SECONDS, METRICS_MAX_CONNECTIONS
from pciname.server.rpc.wire import METHODS

# Latency buckets from 100 us (a cached Resolve) to 10 s (a stalled stream).
_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)


class Metrics:
    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        self.registry = registry or CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "pciname_rpc_requests", "Finished RPCs by method and status code", ("method", "code"), registry=r
        )
        self.errors = Counter(
            "pciname_rpc_errors", "RPCs that ended with a non-OK status", ("method", "code"), registry=r
        )
        self.duration = Histogram(
            "pciname_rpc_duration_seconds", "Time spent handling an RPC", ("method",), buckets=_BUCKETS, registry=r
        )
        self.in_flight = Gauge("pciname_rpc_in_flight", "RPCs being handled now", registry=r)
        self.devices = Counter("pciname_resolved_devices", "Devices answered", ("method",), registry=r)
        self.reloads = Counter(
            "pciname_reloads", "Data (re)loads by trigger and result", ("trigger", "result"), registry=r
        )
        self.generation = Gauge("pciname_data_generation", "Generation of the data being served", registry=r)
        self.loaded_at = Gauge(
            "pciname_data_loaded_timestamp_seconds", "When the data being served was loaded", registry=r
        )
        self.profiles_served = Gauge("pciname_profiles_served", "Profiles whose pci.ids is loaded", registry=r)
        self.last_reload_ok = Gauge(
            "pciname_last_reload_success", "1 if the last (re)load succeeded, 0 if it was rejected", registry=r
        )
        self.tls_loaded = Gauge(
            "pciname_tls_files_loaded",
            "1 if the TLS files last seen could be read, 0 if the old ones still serve",
            registry=r,
        )
        # Pre-bound children: the hot path must not pay for label lookups.
        self.ok = {m: self.requests.labels(m, "OK") for m in METHODS}
        self.timers = {m: self.duration.labels(m) for m in METHODS}
        self.device_counts = {m: self.devices.labels(m) for m in METHODS}
        for m in METHODS:  # make every series visible from the start
            self.errors.labels(m, "INVALID_ARGUMENT")
        for trigger in ("startup", "signal", "file-change", "api"):
            for result in ("success", "failure"):
                self.reloads.labels(trigger, result)

    def rpcs_in_flight(self) -> int:
        """``pciname_rpc_in_flight`` now: how many handlers are running."""
        return sum(int(sample.value) for family in self.in_flight.collect() for sample in family.samples)

    def error(self, method: str, code: str) -> None:
        self.requests.labels(method, code).inc()
        self.errors.labels(method, code).inc()

    def reloaded(
        self,
        trigger: str,
        ok: bool,
        *,
        generation: int | None = None,
        loaded_at: float | None = None,
        profiles: int | None = None,
    ) -> None:
        self.reloads.labels(trigger, "success" if ok else "failure").inc()
        self.last_reload_ok.set(1 if ok else 0)
        if ok:
            if generation is not None:
                self.generation.set(generation)
            if loaded_at is not None:
                self.loaded_at.set(loaded_at)
            if profiles is not None:
                self.profiles_served.set(profiles)


def start_http(
    metrics: Metrics,
    host: str,
    port: int,
    *,
    max_connections: int = METRICS_MAX_CONNECTIONS,
    idle_seconds: float = METRICS_IDLE_SECONDS,
) -> tuple[WSGIServer, threading.Thread]:
    """Serve ``/metrics`` on host:port; returns (http server, thread).

    prometheus-client's own server starts a thread per connection, with no
    cap (800 idle connections made 825 threads): this one serves at most
    ``max_connections`` at once (a thread each; the next are closed at once)
    and drops a connection idle for ``idle_seconds``."""

    class Handler(WSGIRequestHandler):
        timeout = idle_seconds  # socket timeout of each connection: idle ones are dropped

        def log_message(self, format: str, *args: Any) -> None:  # quiet, as prometheus-client's
            pass

    family = socket.getaddrinfo(host or None, port, type=socket.SOCK_STREAM)[0][0]

    class Server(WSGIServer):
        address_family = family
        daemon_threads = True
        request_queue_size = 128  # accepted (and refused or served) at once, not left in SYN retries

        def __init__(self) -> None:
            self._slots = threading.BoundedSemaphore(max_connections)
            super().__init__((host, port), Handler)

        def process_request(self, request: Any, client_address: Any) -> None:
            if not self._slots.acquire(blocking=False):
                self.shutdown_request(request)  # full: closed, no thread
                return

            def serve() -> None:
                try:
                    self.finish_request(request, client_address)
                except Exception:  # noqa: BLE001 - a client's broken connection
                    pass
                finally:
                    self.shutdown_request(request)
                    self._slots.release()

            threading.Thread(target=serve, name="pciname-metrics-conn", daemon=True).start()

    httpd = Server()
    httpd.set_app(make_wsgi_app(metrics.registry))
    thread = threading.Thread(
        target=httpd.serve_forever, kwargs={"poll_interval": 0.5}, name="pciname-metrics", daemon=True
    )
    thread.start()
    return httpd, thread
