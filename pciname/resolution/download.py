"""Downloads: one URL's bytes (http, https or file), streamed, within a
timeout per connection and read and a deadline for the whole download
(redirects included), with one line saying why when it fails. What to
download and where the bytes go is :mod:`pciname.resolution.snapshots`'.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from pciname.errors import PcinameBaseError, SnapshotVerifyError

if TYPE_CHECKING:
    import http.client
    import socket
    import urllib.request

_CHUNK = 1 << 20


class DownloadError(PcinameBaseError):
    """A download failed (network, protocol, deadline): the message says why."""


def one_line(text: str, limit: int = 300) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 3] + "..."


class Deadline:
    """A total deadline for one download: when it passes, every connection
    the download opened is shut down, which ends whatever read is blocked
    on it, however slowly the server trickles (per-read timeouts never
    fire on a server that sends a byte a second).

    It shuts down its own duplicates of the sockets (``shutdown`` acts on
    the connection, whichever descriptor names it), so it never touches a
    descriptor the download may have closed and the process reused."""

    def __init__(self, seconds: float) -> None:
        import threading
        import time

        self.seconds = seconds
        self._clock = time.monotonic
        self._end = self._clock() + seconds
        self._lock = threading.Lock()
        self._sockets: list[socket.socket] = []
        self._stopped = False
        self.expired = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        self._timer.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            self._stopped = True
            for sock in self._sockets:
                sock.close()
            self._sockets.clear()

    def remaining(self) -> float:
        return max(0.0, self._end - self._clock())

    def watch(self, sock: socket.socket) -> None:
        import socket

        with self._lock:
            if self._stopped:
                return
            duplicate = sock.dup()
            self._sockets.append(duplicate)
            if self.expired:
                try:
                    duplicate.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass

    def _expire(self) -> None:
        import socket

        with self._lock:
            if self._stopped:
                return
            self.expired = True
            for sock in self._sockets:
                try:
                    sock.shutdown(socket.SHUT_RDWR)
                except OSError:  # not connected (any more)
                    pass

    def error(self) -> DownloadError:
        return DownloadError(f"no complete download within the {self.seconds:g} s deadline")


def opener(deadline: Deadline) -> urllib.request.OpenerDirector:
    """A urllib opener for http, https and file URLs whose connections the
    deadline watches (no ftp: it could not be)."""
    import urllib.request

    def watched(connection_class: type[http.client.HTTPConnection]) -> type[http.client.HTTPConnection]:
        class Connection(connection_class):  # type: ignore[valid-type,misc]  # a class chosen at run time
            def __init__(self, *args: Any, **kwargs: Any) -> None:
                super().__init__(*args, **kwargs)
                # http.client's hook for making the TCP connection (before
                # any TLS): the deadline gets the raw socket, and the connect
                # itself waits no longer than the deadline allows.
                create = getattr(self, "_create_connection")  # noqa: B009 - mypy cannot type it

                def create_watched(address: Any, timeout: Any = None, *args: Any, **kwargs: Any) -> socket.socket:
                    left = deadline.remaining()
                    if left <= 0:
                        raise TimeoutError("deadline passed")
                    if isinstance(timeout, (int, float)):
                        left = min(left, timeout)
                    sock: socket.socket = create(address, left, *args, **kwargs)
                    deadline.watch(sock)
                    return sock

                self._create_connection = create_watched

        return Connection

    class HTTP(urllib.request.HTTPHandler):
        def do_open(self, http_class: Any, req: urllib.request.Request, **kwargs: Any) -> http.client.HTTPResponse:
            return super().do_open(watched(http_class), req, **kwargs)

    handlers: list[urllib.request.BaseHandler] = [
        urllib.request.ProxyHandler(),
        urllib.request.UnknownHandler(),
        HTTP(),
        urllib.request.HTTPDefaultErrorHandler(),
        urllib.request.HTTPRedirectHandler(),
        urllib.request.FileHandler(),
        urllib.request.HTTPErrorProcessor(),
    ]
    if hasattr(urllib.request, "HTTPSHandler"):  # Python built with ssl

        class HTTPS(urllib.request.HTTPSHandler):
            def do_open(self, http_class: Any, req: urllib.request.Request, **kwargs: Any) -> http.client.HTTPResponse:
                return super().do_open(watched(http_class), req, **kwargs)

        handlers.append(HTTPS())
    opener = urllib.request.OpenerDirector()
    for handler in handlers:
        opener.add_handler(handler)
    return opener


def describe(error: BaseException, timeout: float) -> str:
    """One line for a failed download's exception."""
    import http.client
    import urllib.error
    import urllib.request

    if isinstance(error, urllib.error.HTTPError):
        reason = str(error.reason)
        if reason.startswith(urllib.request.HTTPRedirectHandler.inf_msg):
            limit = urllib.request.HTTPRedirectHandler.max_redirections
            return f"too many redirects (a redirect loop, or more than {limit})"
        return f"HTTP {error.code} {reason}"
    if isinstance(error, urllib.error.URLError):
        cause = error.reason
        if isinstance(cause, TimeoutError):
            return f"cannot connect: timed out after {timeout:g} s"
        if isinstance(cause, OSError):
            if cause.filename is not None:  # a file: URL
                return cause.strerror or str(cause)
            return f"cannot connect: {cause.strerror or cause}"
        return str(cause)
    if isinstance(error, TimeoutError):
        return f"no data for {timeout:g} s (timed out)"
    if isinstance(error, http.client.HTTPException):
        return _bad_response(error)
    if isinstance(error, OSError):
        return error.strerror or str(error) or type(error).__name__
    return str(error) or type(error).__name__


def _bad_response(error: http.client.HTTPException) -> str:
    """One line for what http.client found wrong with the server's answer."""
    import http.client

    if isinstance(error, http.client.RemoteDisconnected):
        return "the server closed the connection without answering"
    if isinstance(error, http.client.BadStatusLine):
        line = str(error.args[0]) if error.args else ""
        return f"bad HTTP response: not an HTTP status line: {line[:80]!r}"
    if isinstance(error, http.client.IncompleteRead):
        return "bad HTTP response: the body ended early, or its chunked encoding is broken"
    detail = str(error)
    return f"bad HTTP response: {detail}" if detail else f"bad HTTP response ({type(error).__name__})"


def download(url: str, size: int, write: Callable[[bytes], None], *, timeout: float, deadline: float) -> str:
    """Stream ``url`` to ``write``, at most ``size`` bytes and exactly that
    many; the sha256 (hex) of what was written. DownloadError (network,
    protocol, deadline) or SnapshotVerifyError (not ``size`` bytes) when it
    fails; whatever ``write`` raises."""
    import hashlib
    import http.client
    import urllib.error

    digest = hashlib.sha256()
    done = 0
    with Deadline(deadline) as clock:
        try:
            with opener(clock).open(url, timeout=timeout) as response:
                announced = response.headers.get("Content-Length", "")
                if announced.strip().isdigit() and int(announced) > size:
                    raise SnapshotVerifyError(
                        f"the server announces {int(announced)} bytes, more than the expected {size}"
                    )
                read = getattr(response, "read1", response.read)
                while chunk := read(_CHUNK):
                    if clock.expired:
                        raise clock.error()
                    done += len(chunk)
                    if done > size:
                        raise SnapshotVerifyError(f"larger than the expected {size} bytes")
                    digest.update(chunk)
                    write(chunk)
        except (OSError, http.client.HTTPException, ValueError) as error:
            # OSError covers urllib.error.*, socket timeouts and resets;
            # ValueError, URLs urllib cannot use.
            if isinstance(error, urllib.error.HTTPError):
                error.close()
            if clock.expired or clock.remaining() <= 0:
                raise clock.error() from None
            raise DownloadError(describe(error, timeout)) from None
        if done != size:
            if clock.expired:
                raise clock.error()
            raise DownloadError(f"the response ended after {done} of the expected {size} bytes")
    return digest.hexdigest()
