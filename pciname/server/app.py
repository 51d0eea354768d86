"""The life of a ``pciname serve`` server: start, health, reload, drain
(what it is told is :mod:`pciname.server.config`'s; what it answers,
:mod:`pciname.server.service`'s).

Life of a server (:class:`NameServer`):

1. :meth:`~NameServer.start` binds ``--listen`` (TLS, mutual TLS, or
   plaintext only with ``--insecure``) and serves at once: the health
   service answers NOT_SERVING (``liveness`` SERVING) and PciName answers
   UNAVAILABLE while the data loads.
2. :meth:`~NameServer.reload` (first at start-up) builds a whole new
   DataSet beside the old one and swaps the reference; health becomes
   SERVING. A failed build (a malformed pci.ids line, an unreadable file, a
   ``--pciids`` file without the pci.ids header or without an NVIDIA
   section) is logged and counted, and the old data keeps serving.
   Triggers: SIGHUP, and a change of ``data/pci.ids``, the ``--pciids``
   file or a snapshot directory seen by :meth:`~NameServer.poll` (every
   ``--watch-interval`` seconds; a change must be seen unchanged on two
   polls in a row, so a file being written is not loaded half-way). Any
   reload loads a ``--pciids`` file only once it has stayed unchanged for
   ``data.SETTLE_SECONDS`` and if its last line is complete; writers
   should rename the new file into place.
   ``serve`` runs each reload in its own thread
   (:meth:`~NameServer.start_reload`), one at a time, so signals are
   handled while a reload runs.
3. :meth:`~NameServer.drain` (SIGTERM, SIGINT): health goes NOT_SERVING,
   after ``--shutdown-delay`` the server stops taking RPCs, the ones in
   flight get ``--grace`` seconds to finish, and ``serve`` returns 0. A
   reload still running is not waited for (it is logged and abandoned; its
   data is never swapped in). Past the grace gRPC cancels the calls still
   open, but a handler thread in the middle of a computation does not
   notice, and its thread would keep the process alive until it is done:
   ``serve`` then flushes the logs and ends the process at once
   (``os._exit(0)``), and so it does if the drain itself is not over
   :data:`DRAIN_MARGIN` seconds after the delay and the grace.

Health service names: ``readiness``, ``""`` and ``pciname.v1.PciName``
are SERVING once data is loaded (every RPC can be answered) and until
shutdown begins, NOT_SERVING before and while draining (for a readiness
probe); ``liveness`` is SERVING from start until shutdown begins (for a
liveness or startup probe, which must not fail while the data loads).
"""

from __future__ import annotations

import logging
import os
import select
import signal
import sys
import threading
import time
from collections.abc import Callable
from concurrent import futures
from pathlib import Path
from types import FrameType
from typing import Any
from wsgiref.simple_server import WSGIServer

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc

from pciname.base.files import MAX_CREDENTIAL_FILE_BYTES, read_bounded
from pciname.capabilities.cluster_access import ClusterAccess
from pciname.cluster import node_events
from pciname.errors import PcinameError, ServeError
from pciname.naming.gotext import valid_text
from pciname.server import data as data_module
from pciname.server.config import (
    DEFAULT_LISTEN,
    DEFAULT_PORT,
    LIVENESS_SERVICE,
    READINESS_SERVICE,
    ServeConfig,
    grpc_address,
    split_address,
)
from pciname.server.data import DataSet, Signature, watch_signature
from pciname.server.logs import LOGGER_NAME, fields
from pciname.server.metrics import Metrics, start_http
from pciname.server.reflection import enable_server_reflection
from pciname.server.rpc.wire import SERVICE_NAME
from pciname.server.service import PciNameService

READINESS_SERVICES = ("", READINESS_SERVICE, SERVICE_NAME)
#: Seconds past ``--shutdown-delay`` and ``--grace`` a drain may take (the
#: servers' stop, the metrics server's) before ``serve`` ends the process anyway.
DRAIN_MARGIN = 5.0


# -- TLS ----------------------------------------------------------------------


class _CertificateFiles:
    """The TLS files, re-read when they change (certificate rotation: gRPC
    asks before every new connection's handshake).

    Each read is bounded and never blocks (:func:`pciname.base.files.read_bounded`):
    a FIFO, a device or a huge file in place of one is refused, logged once
    per change, counted in ``pciname_tls_files_loaded`` (0), and the old
    certificates keep serving until the files can be read again."""

    def __init__(
        self, cert: str, key: str, client_ca: str | None, logger: logging.Logger, metrics: Metrics | None = None
    ) -> None:
        self.paths = [Path(cert), Path(key)] + ([Path(client_ca)] if client_ca else [])
        self.log = logger
        self.metrics = metrics
        self._lock = threading.Lock()
        self._state = self._stat()
        self._refused: tuple[tuple[int, int, int] | None, ...] | None = None  # the state last refused
        self.initial = self._configuration()
        self._loaded(True)

    def _loaded(self, ok: bool) -> None:
        if self.metrics is not None:
            self.metrics.tls_loaded.set(1 if ok else 0)

    def _stat(self) -> tuple[tuple[int, int, int] | None, ...]:
        states: list[tuple[int, int, int] | None] = []
        for path in self.paths:
            try:
                st = os.stat(path)
                states.append((st.st_ino, st.st_size, st.st_mtime_ns))
            except OSError:
                states.append(None)
        return tuple(states)

    def _read(self, path: Path) -> bytes:
        try:
            return read_bounded(path, MAX_CREDENTIAL_FILE_BYTES)
        except OSError as error:
            raise ServeError(f"{path}: cannot read: {error.strerror or error}") from None

    def _configuration(self) -> grpc.ServerCertificateConfiguration:
        cert, key = self._read(self.paths[0]), self._read(self.paths[1])
        ca = self._read(self.paths[2]) if len(self.paths) > 2 else None
        return grpc.ssl_server_certificate_configuration([(key, cert)], root_certificates=ca)

    def fetch(self) -> grpc.ServerCertificateConfiguration | None:
        state = self._stat()
        if state == self._state or state == self._refused:
            return None
        with self._lock:
            if state == self._state or state == self._refused:
                return None
            try:
                configuration = self._configuration()
            except ServeError as error:
                self._refused = state  # retried when the files change again
                self._loaded(False)
                self.log.error(
                    "TLS files changed but cannot be read; keeping the old ones", extra=fields(error=str(error))
                )
                return None
            self._state = state
            self._refused = None
            self._loaded(True)
            self.log.info(
                "TLS files changed; new connections use them", extra=fields(files=[str(p) for p in self.paths])
            )
            return configuration

    def credentials(self) -> grpc.ServerCredentials:
        return grpc.dynamic_ssl_server_credentials(
            self.initial, self.fetch, require_client_authentication=len(self.paths) > 2
        )


# -- the server ---------------------------------------------------------------------


class NameServer:
    """One ``pciname serve`` instance (usable in-process, e.g. in tests)."""

    def __init__(self, config: ServeConfig, logger: logging.Logger | None = None) -> None:
        config.validate()
        self.config = config
        self.log = logger or logging.getLogger(LOGGER_NAME)
        self.metrics = Metrics()
        self._data: DataSet | None = None
        self._generation = 0
        self._reload_lock = threading.Lock()
        self._reload_finished: threading.Event | None = None  # of the last start_reload()
        self._reload_trigger: str | None = None
        self._loaded_signature: Signature | None = None
        self._seen_signature: Signature | None = None
        self._health_pool = futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="pciname-health")
        self.health = health.HealthServicer(experimental_non_blocking=True, experimental_thread_pool=self._health_pool)
        self.cluster = (
            ClusterAccess(config.kubeconfig, config.kube_context, config.kube_timeout) if config.kube else None
        )
        self.service = PciNameService(
            lambda: self._data,
            self.metrics,
            self.log,
            max_batch=config.max_batch,
            max_lint_files=config.max_lint_files,
            max_lint_bytes=config.max_lint_bytes,
            max_lint_nodes=config.max_lint_nodes,
            max_concurrent_lints=config.max_concurrent_lints,
            cluster=self.cluster,
            host_root=config.host_root,
        )
        self._server: grpc.Server | None = None
        self._health_server: grpc.Server | None = None
        self._metrics_http: tuple[WSGIServer, threading.Thread] | None = None
        self.port: int | None = None
        self.health_port: int | None = None
        self.metrics_port: int | None = None
        self._stopped = threading.Event()
        self._node_events: node_events.EventLoop | None = None

    @property
    def data(self) -> DataSet | None:
        return self._data

    # -- start ------------------------------------------------------------------

    def _options(self) -> list[tuple[str, int]]:
        options = [
            ("grpc.max_receive_message_length", self.config.max_recv_message_bytes),
            ("grpc.max_send_message_length", self.config.max_send_message_bytes),
            ("grpc.so_reuseport", 0),  # a second server must not silently share the port
        ]
        if self.config.max_connection_age:
            # Clients reconnect now and then, so new replicas get their share
            # of long-lived HTTP/2 connections; calls in flight get --grace.
            options.append(("grpc.max_connection_age_ms", int(self.config.max_connection_age * 1000)))
            options.append(("grpc.max_connection_age_grace_ms", int(max(self.config.grace, 1) * 1000)))
        return options

    def _bind(self, server: grpc.Server, address: str, credentials: grpc.ServerCredentials | None) -> int:
        target = grpc_address(address)
        try:
            port = server.add_secure_port(target, credentials) if credentials else server.add_insecure_port(target)
        except RuntimeError as error:
            raise ServeError(f"cannot listen on {address}: {error}") from None
        if not port:
            raise ServeError(f"cannot listen on {address} (address in use or not available)")
        return int(port)

    def start(self) -> int:
        """Bind and start serving (health NOT_SERVING until data is loaded). Returns the port."""
        config = self.config
        if self.cluster is not None:
            try:
                self.cluster.check()  # the kubeconfig / in-cluster config loads (no API call yet)
            except PcinameError as error:
                raise ServeError(f"--kube: {error}") from None
        credentials = None
        if config.tls_cert:
            assert config.tls_key is not None
            credentials = _CertificateFiles(
                config.tls_cert, config.tls_key, config.tls_client_ca, self.log, self.metrics
            ).credentials()
        for service in READINESS_SERVICES:
            self.health.set(service, health_pb2.HealthCheckResponse.NOT_SERVING)
        self.health.set(LIVENESS_SERVICE, health_pb2.HealthCheckResponse.SERVING)

        server = grpc.server(
            futures.ThreadPoolExecutor(max_workers=config.max_workers, thread_name_prefix="pciname-rpc"),
            options=self._options(),
            maximum_concurrent_rpcs=config.max_concurrent_rpcs,
        )
        handlers = self.service.method_handlers()
        server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler(SERVICE_NAME, handlers),))
        server.add_registered_method_handlers(SERVICE_NAME, handlers)
        health_pb2_grpc.add_HealthServicer_to_server(self.health, server)
        enable_server_reflection((SERVICE_NAME, health.SERVICE_NAME), server)
        self.port = self._bind(server, config.listen, credentials)

        health_server = None
        if config.health_listen:
            health_server = grpc.server(
                futures.ThreadPoolExecutor(max_workers=2, thread_name_prefix="pciname-health-rpc"),
                options=[("grpc.so_reuseport", 0)],
                maximum_concurrent_rpcs=16,
            )
            health_pb2_grpc.add_HealthServicer_to_server(self.health, health_server)
            self.health_port = self._bind(health_server, config.health_listen, None)

        if config.metrics_listen:
            if config.host_root is not None:
                from pciname.host.doctor.publish import DoctorCollector

                self.metrics.registry.register(DoctorCollector(config.host_root, config.host_variant, config.host_node))
            host, port = split_address(config.metrics_listen)
            try:
                self._metrics_http = start_http(self.metrics, host, port)
            except OSError as error:
                raise ServeError(
                    f"cannot serve metrics on {config.metrics_listen}: {error.strerror or error}"
                ) from None
            self.metrics_port = self._metrics_http[0].server_port

        if config.host_events and config.host_root and config.host_node:
            warn = self.log.warning
            self._node_events = node_events.started(
                config, lambda e: warn("node events not posted", extra=fields(error=e))
            )
        server.start()
        self._server = server
        if health_server is not None:
            health_server.start()
            self._health_server = health_server
        self.log.info(
            "listening",
            extra=fields(
                address=config.listen,
                port=self.port,
                tls=bool(credentials),
                mtls=bool(credentials and config.tls_client_ca),
                health_port=self.health_port,
                metrics_port=self.metrics_port,
                max_workers=config.max_workers,
                max_concurrent_rpcs=config.max_concurrent_rpcs,
                kube=config.kube,
            ),
        )
        return self.port

    # -- data ---------------------------------------------------------------------

    def reload(self, trigger: str = "api") -> bool:
        """Build new data beside the old and swap it in; False (old data kept) on failure."""
        with self._reload_lock:
            signature = watch_signature(self.config.pciids)
            started = time.monotonic()
            try:
                data = data_module.build(
                    self._generation + 1,
                    default_profile=self.config.default_profile,
                    pciids=self.config.pciids,
                    algorithm=self.config.algorithm,
                )
            except Exception as error:
                self._loaded_signature = self._seen_signature = signature  # retry on the next change only
                self.metrics.reloaded(trigger, False)
                keeping = f"generation {self._generation} keeps serving" if self._data else "no data is loaded"
                message = str(error) if isinstance(error, PcinameError) else f"{type(error).__name__}: {error}"
                message = valid_text(message) or message  # paths and lines of a file may hold undecodable bytes
                self.log.error(
                    "reload rejected",
                    exc_info=None if isinstance(error, PcinameError) else error,
                    extra=fields(
                        trigger=trigger, error=message, keeping=keeping, seconds=round(time.monotonic() - started, 3)
                    ),
                )
                return False
            if self._stopped.is_set():
                self.log.info(
                    "reload discarded: shutting down", extra=fields(trigger=trigger, generation=self._generation)
                )
                return False
            first = self._data is None
            self._generation = data.generation
            self._data = data  # the swap: one reference, read once per request
            self._loaded_signature = self._seen_signature = signature
            self.metrics.reloaded(
                trigger,
                True,
                generation=data.generation,
                loaded_at=data.loaded_at,
                profiles=len(data.served) + (1 if data.custom else 0),
            )
            self.log.info(
                "data loaded",
                extra=fields(
                    trigger=trigger,
                    generation=data.generation,
                    profiles=len(data.served) + (1 if data.custom else 0),
                    missing_profiles=len(data.missing),
                    files=len(data.files),
                    default_profile=data.default.name,
                    seconds=round(data.load_seconds, 3),
                ),
            )
            if first and not self._stopped.is_set():
                for service in READINESS_SERVICES:
                    self.health.set(service, health_pb2.HealthCheckResponse.SERVING)
            return True

    @property
    def reloading(self) -> bool:
        """A reload started by :meth:`start_reload` is still running."""
        finished = self._reload_finished
        return finished is not None and not finished.is_set()

    def start_reload(self, trigger: str, done: Callable[[], object] | None = None) -> bool:
        """Run :meth:`reload` in its own (daemon) thread and return at once;
        ``done()`` is called when it ends. False if one is still running (or
        the server is shutting down): reloads never queue up, and shutdown
        never waits for one (a read that blocks cannot hold SIGTERM up)."""
        if self.reloading or self._stopped.is_set():
            return False

        finished = threading.Event()

        def run() -> None:
            try:
                self.reload(trigger)
            finally:
                finished.set()  # before done(): whoever it wakes sees the reload over
                if done is not None:
                    done()

        self._reload_trigger = trigger
        self._reload_finished = finished
        threading.Thread(target=run, name=f"pciname-reload-{trigger}", daemon=True).start()
        return True

    def changed(self) -> bool:
        """The watcher's test: the watched files changed and have stayed
        unchanged since the previous call (only ``stat``, never a read)."""
        signature = watch_signature(self.config.pciids)
        if signature == self._loaded_signature:
            self._seen_signature = signature
            return False
        if signature != self._seen_signature:
            self._seen_signature = signature  # changed: wait one more poll for it to settle
            return False
        return True

    def poll(self) -> bool | None:
        """Reload if the watched files changed and have stayed unchanged since
        the previous poll. Returns the reload's result, or None if none ran."""
        return self.reload("file-change") if self.changed() else None

    # -- stop -----------------------------------------------------------------------

    def drain(self, grace: float | None = None, delay: float | None = None) -> None:
        """Health NOT_SERVING, wait ``delay``, stop taking RPCs, let those in
        flight finish within ``grace`` seconds, stop."""
        grace = self.config.grace if grace is None else grace
        delay = self.config.shutdown_delay if delay is None else delay
        if self._stopped.is_set():
            return
        self._stopped.set()
        self.health.enter_graceful_shutdown()
        self.log.info("draining", extra=fields(shutdown_delay=delay, grace=grace))
        if self.reloading:
            self.log.warning("reload still running; not waiting for it", extra=fields(trigger=self._reload_trigger))
        if delay:
            time.sleep(delay)
        done = []
        if self._server is not None:
            done.append(self._server.stop(grace))
        if self._health_server is not None:
            done.append(self._health_server.stop(grace))
        for event in done:
            event.wait(grace + 5)
        if self._metrics_http is not None:
            httpd, _thread = self._metrics_http
            httpd.shutdown()
            httpd.server_close()
            self._metrics_http = None
        self._health_pool.shutdown(wait=False)
        if self._node_events is not None:
            self._node_events.stop()
        if self.cluster is not None:
            self.cluster.close()
        self.log.info("stopped")

    def stop(self) -> None:
        """Stop at once (cancelling RPCs in flight)."""
        self.drain(grace=0, delay=0)

    @property
    def rpcs_running(self) -> int:
        """How many RPC handlers are running now (after a drain: those
        computing still, their calls cancelled)."""
        return self.metrics.rpcs_in_flight()


def _end_process(log: logging.Logger, message: str, **extra: Any) -> None:
    """Log ``message``, flush the logs and the standard streams, and end the
    process with status 0 (what a drain exits with) without waiting for
    any thread: worker threads still computing would hold a normal exit."""
    log.warning(message, extra=fields(**extra))
    for handler in [*log.handlers, *logging.getLogger().handlers]:
        try:
            handler.flush()
        except Exception:  # noqa: BLE001 - a log that cannot be flushed must not keep the process alive
            pass
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(0)


# -- the process ----------------------------------------------------------------------


class _Wakeup:
    """What :func:`serve`'s main loop sleeps on: a pipe the interpreter
    writes the number of every signal to (:func:`signal.set_wakeup_fd`),
    whichever thread the kernel delivered it to, and :meth:`set` writes 0 to
    (a reload ended).

    The loop reads the signal numbers from the pipe instead of relying on the
    Python-level handlers alone: those run only when the main thread executes
    bytecode, and a signal the kernel hands to another thread (one blocked
    reading a file, say) does not interrupt a main thread asleep on a lock.
    """

    def __init__(self) -> None:
        self._read, self._write = os.pipe()
        os.set_blocking(self._read, False)
        os.set_blocking(self._write, False)
        self._previous = signal.set_wakeup_fd(self._write, warn_on_full_buffer=False)

    def set(self) -> None:
        try:
            os.write(self._write, b"\0")
        except OSError:  # full: the loop wakes anyway
            pass

    def wait(self, timeout: float | None) -> list[int]:
        """What arrived within ``timeout`` seconds (None: until something
        does): signal numbers, and 0 for each :meth:`set`."""
        ready, _, _ = select.select([self._read], [], [], timeout)
        received: list[int] = []
        while ready:
            try:
                chunk = os.read(self._read, 4096)
            except BlockingIOError:
                break
            if not chunk:
                break
            received.extend(chunk)
        return received

    def close(self) -> None:
        signal.set_wakeup_fd(self._previous)
        os.close(self._read)
        os.close(self._write)


def serve(config: ServeConfig, logger: logging.Logger | None = None) -> int:
    """Run a server until SIGTERM/SIGINT; reload on SIGHUP and file changes.

    Exit status: 0 after a drain, 1 if the data cannot be loaded at start-up,
    2 if the server cannot start as configured. A drain with RPC handlers
    still running past ``--grace``, or not over :data:`DRAIN_MARGIN`
    seconds after ``--shutdown-delay`` and ``--grace``, ends the process
    there (status 0, the logs flushed) instead of returning: a worker thread
    still computing would keep it alive.

    Reloads run in their own thread (:meth:`NameServer.start_reload`); this
    loop only waits for signals, the watcher's interval and reloads' ends,
    so SIGTERM is acted on at once, whatever a reload is doing.
    """
    log = logger or logging.getLogger(LOGGER_NAME)
    requests = _Requests()
    previous = requests.install()
    wakeup = _Wakeup()
    try:
        server = NameServer(config, log)
        status = _start(server, requests, wakeup, log)
        if status is not None:
            return status
        _serve_until_stopped(server, config.watch_interval, requests, wakeup)
        log.info("shutdown requested", extra=fields(signal=requests.stop))
        _drain(server, config, log)
        return 0
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
        wakeup.close()


class _Requests:
    """What the signals asked for: to stop (the first signal's name) and to reload."""

    STOPS = frozenset({signal.SIGTERM, signal.SIGINT})
    HUP = getattr(signal, "SIGHUP", None)  # not on Windows

    def __init__(self) -> None:
        self.stop: str | None = None
        self.reload = False

    def install(self) -> dict[int, Any]:
        """Handle SIGTERM, SIGINT and SIGHUP: the handlers they had before, to restore."""
        previous: dict[int, Any] = {
            signal.SIGTERM: signal.signal(signal.SIGTERM, self.on_stop),
            signal.SIGINT: signal.signal(signal.SIGINT, self.on_stop),
        }
        if self.HUP is not None:
            previous[self.HUP] = signal.signal(self.HUP, self.on_reload)
        return previous

    def on_stop(self, signum: int, frame: FrameType | None) -> None:
        self.stop = self.stop or signal.Signals(signum).name

    def on_reload(self, signum: int, frame: FrameType | None) -> None:
        self.reload = True

    def note(self, received: list[int]) -> None:
        """The signals the wakeup pipe brought."""
        for number in received:
            if number in self.STOPS:
                self.on_stop(number, None)
            elif self.HUP is not None and number == self.HUP:
                self.on_reload(number, None)


def _start(server: NameServer, requests: _Requests, wakeup: _Wakeup, log: logging.Logger) -> int | None:
    """Start ``server`` and wait for its first load: the exit status when it
    cannot serve (2: cannot start, 1: no data), else None."""
    try:
        server.start()
    except ServeError as error:
        log.error("cannot start", extra=fields(error=str(error)))
        server.stop()
        return 2
    server.start_reload("startup", done=wakeup.set)
    while requests.stop is None and server.reloading:
        requests.note(wakeup.wait(None))
    if requests.stop is None and server.data is None:
        log.error("no data to serve; exiting")
        server.stop()
        return 1
    return None


def _serve_until_stopped(server: NameServer, interval: float, requests: _Requests, wakeup: _Wakeup) -> None:
    """Reload on SIGHUP and, every ``interval`` seconds (0: never), when the files changed; until a stop."""
    next_poll = time.monotonic() + interval
    while requests.stop is None:
        if not server.reloading:  # else: a SIGHUP meanwhile is served when it ends (that wakes this loop)
            if requests.reload:
                requests.reload = False
                server.start_reload("signal", done=wakeup.set)
            elif interval and time.monotonic() >= next_poll:  # the watcher
                next_poll = time.monotonic() + interval
                if server.changed():
                    server.start_reload("file-change", done=wakeup.set)
        if server.reloading or not interval:
            timeout = None
        else:
            timeout = max(0.0, next_poll - time.monotonic())
        requests.note(wakeup.wait(timeout))


def _drain(server: NameServer, config: ServeConfig, log: logging.Logger) -> None:
    """Drain ``server``; end the process when the drain is not over in time
    or RPC handlers still run past ``--grace``."""
    allowed = config.shutdown_delay + config.grace + DRAIN_MARGIN
    watchdog = threading.Timer(
        allowed, _end_process, (log, "drain not over in time; exiting"), {"seconds": round(allowed, 3)}
    )
    watchdog.daemon = True
    watchdog.start()
    server.drain()
    watchdog.cancel()
    running = server.rpcs_running
    if running:  # their calls are cancelled, but their threads compute on
        _end_process(log, "RPCs still running past --grace; exiting without them", rpcs=running, grace=config.grace)


# DEFAULT_LISTEN, DEFAULT_PORT, ServeConfig and split_address are
# pciname.server.config's, importable from here as well.
__all__ = [
    "DEFAULT_LISTEN",
    "DEFAULT_PORT",
    "LIVENESS_SERVICE",
    "READINESS_SERVICE",
    "READINESS_SERVICES",
    "NameServer",
    "ServeConfig",
    "ServeError",
    "serve",
    "split_address",
]
