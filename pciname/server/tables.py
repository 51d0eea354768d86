"""What a generation builds only when a request first needs it: a profile's
view (its catalog, universe and resource index), once, on a bounded pool of
builder threads (:data:`~pciname.server.config.BUILD_THREADS`), never on
the health service's thread.

A request that needs a table being built waits for it within its deadline
(:func:`deadline` sets it for the handler's thread): past the deadline it
is answered DEADLINE_EXCEEDED and the build goes on for the next request.
A build that fails (a snapshot removed meanwhile, a pci.ids file changed
since the generation was made) fails every request of that table in the
generation, with the same error; the watcher's reload makes a new one.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future
from contextlib import contextmanager

import grpc

from pciname.api import Resolver
from pciname.base.paths import embedded_pciids_path
from pciname.errors import PciIdsError, PciIdsSyntaxError
from pciname.naming.gotext import valid_text
from pciname.resolution.catalog import catalog_for
from pciname.resolution.resolver import ProfileLike, ProfileView, as_profile
from pciname.server.config import BUILD_THREADS
from pciname.server.rpc.wire import RpcFailure

_local = threading.local()
_UNBOUNDED = 86400.0 * 365


@contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Requests for tables in this thread wait at most ``seconds`` (None: no bound)."""
    previous = getattr(_local, "deadline", None)
    unbounded = seconds is None or seconds > _UNBOUNDED  # gRPC's "no deadline" is a huge number
    _local.deadline = None if seconds is None or unbounded else time.monotonic() + seconds
    try:
        yield
    finally:
        _local.deadline = previous


class _Builders:
    """A bounded pool of daemon threads (a build blocked on a hung file
    system must not keep the process from exiting, as a reload's thread
    does not): :data:`BUILD_THREADS` at most, started on first use."""

    def __init__(self, threads: int) -> None:
        self._queue: queue.SimpleQueue[tuple[Future[ProfileView], Callable[[], ProfileView]]] = queue.SimpleQueue()
        self._threads = threads
        self._started = 0
        self._lock = threading.Lock()

    def submit(self, build: Callable[[], ProfileView]) -> Future[ProfileView]:
        future: Future[ProfileView] = Future()
        self._queue.put((future, build))
        with self._lock:
            if self._started < self._threads:
                self._started += 1
                threading.Thread(target=self._run, name=f"pciname-build-{self._started}", daemon=True).start()
        return future

    def _run(self) -> None:
        while True:
            future, build = self._queue.get()
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(build())
            except BaseException as error:  # noqa: BLE001 - every waiter gets it
                future.set_exception(error)


_builders = _Builders(BUILD_THREADS)


def _wait(future: Future[ProfileView], what: str) -> ProfileView:
    until = getattr(_local, "deadline", None)
    timeout = None if until is None else max(0.0, until - time.monotonic())
    try:
        return future.result(timeout)
    except TimeoutError:
        if future.done():
            raise
        raise RpcFailure(
            grpc.StatusCode.DEADLINE_EXCEEDED,
            f"the deadline passed while the table of {what} was being built (a first request of it); retry",
        ) from None


class LazyResolver(Resolver):
    """A pinned resolver whose views are built on first use, once each.

    ``embedded_sha256``: the sha256 of ``data/pci.ids`` when the generation
    was made; a view built later from another file is refused (the file
    changed: the watcher loads it as a new generation)."""

    def __init__(self, generation: int, embedded_sha256: str) -> None:
        super().__init__(pinned=True)
        self.generation = generation
        self.embedded_sha256 = embedded_sha256
        self._building: dict[object, Future[ProfileView]] = {}

    def built(self, profile: ProfileLike) -> bool:
        return profile in self._views

    def view(self, profile: ProfileLike) -> ProfileView:
        if not isinstance(profile, str) and (profile.alias is not None or profile.nvswitch_alias is not None):
            return super().view(profile)  # the plain profile's view (below), re-aliased
        view = self._views.get(profile)
        if view is not None:
            return view
        with self._lock:
            future = self._building.get(profile)
            if future is None:
                future = _builders.submit(lambda: self._build(profile))
                self._building[profile] = future
        return _wait(future, profile if isinstance(profile, str) else profile.name)

    def adopt(self, profile: ProfileLike, view: ProfileView) -> None:
        """Keep ``view`` (built by the caller, e.g. at the generation's start)."""
        with self._lock:
            self._views[profile] = view

    def _build(self, profile: ProfileLike) -> ProfileView:
        view = ProfileView(as_profile(profile))
        if view.catalog.issues:
            raise PciIdsSyntaxError(view.catalog.issues[0], str(view.catalog.path))
        self._check_embedded(view)
        view.by_resource()
        with self._lock:
            self._views[profile] = view
        return view

    def _check_embedded(self, view: ProfileView) -> None:
        """The view's universe (and the preview's names) came from the
        ``data/pci.ids`` this generation was made with."""
        path = embedded_pciids_path()
        if catalog_for(path).sha256 != self.embedded_sha256:
            raise PciIdsError(
                f"{valid_text(str(path))}: changed since data generation {self.generation} was loaded; "
                "the server loads the new file when it has settled (or on SIGHUP)"
            )


__all__ = ["LazyResolver", "deadline"]
