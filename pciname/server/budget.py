"""What one request may cost the server: the YAML nodes of a Lint (or
GpuOptions) request, counted before anything is composed, and the slots
that bound how many Lint RPCs run at once.

Bytes alone do not bound a YAML request: 1 MiB of ``- a`` lines is 260,000
nodes, and PyYAML's composed nodes cost about 600 bytes each (the lint tree
of one such request took a server from 75 to 310 MB). :func:`count_nodes`
walks the request's parse events (libyaml's parser when PyYAML has it: no
node is built, and it is ten times faster than composing) and refuses the
request, one line, once the nodes pass the server's ``--max-lint-nodes`` or
the nesting passes :data:`MAX_YAML_DEPTH`. An alias counts as many nodes as
the anchored node holds, as a consumer that expands it sees them, so a
"billion laughs" is refused too. Every :data:`CHECK_EVERY` events it asks
whether the caller is still there (:func:`check_alive`): a cancelled RPC or
a passed deadline stops the work.

The limits' defaults are :mod:`pciname.server.config`'s. Nothing here
changes what is linted: the linter composes the same text afterwards, as
``pciname lint`` does.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import io
import threading
from typing import Any

import grpc
import yaml

from pciname.base.requests import nested_too_deeply
from pciname.requests.limits import MAX_YAML_DEPTH  # the request's declared depth: lint's own
from pciname.server.rpc.wire import FILE_KEY, LINT_INPUT, RpcFailure, failure, metadata_text, shown

# Events between two looks at the caller's deadline and cancellation.
CHECK_EVERY = 2048


#: How much earlier than this server's deadline a client's own can pass: the
#: client cancels at its deadline, and the server's is counted from when it
#: read the request's headers, later on a busy machine. A caller gone this
#: close to the deadline went at the deadline.
DEADLINE_SKEW = 0.5


def check_alive(context: grpc.ServicerContext) -> None:
    """DEADLINE_EXCEEDED once the caller's deadline passed, or the caller
    went within :data:`DEADLINE_SKEW` of it; CANCELLED once it went before."""
    remaining = context.time_remaining()
    if remaining is not None and remaining <= 0:  # (the RPC is not active then either)
        raise RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the work was done")
    if not context.is_active():
        if remaining is not None and remaining <= DEADLINE_SKEW:
            raise RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "the deadline passed before the work was done")
        raise RpcFailure(grpc.StatusCode.CANCELLED, "the caller cancelled the request")


def _parser() -> Any:
    return getattr(yaml, "CSafeLoader", None) if getattr(yaml, "__with_libyaml__", False) else None


def _events(text: str | bytes, loader: Any) -> Any:
    return yaml.parse(text, Loader=loader)


def count_nodes(
    text: str | bytes,
    name: str,
    limit: int,
    context: grpc.ServicerContext,
    *,
    already: int = 0,
    flag: str,
    reason: str | None = None,
) -> int:
    """The YAML nodes of ``text`` (aliases expanded), plus ``already``
    (the request's files before this one). INVALID_ARGUMENT past ``limit``
    or :data:`MAX_YAML_DEPTH` (that one with ``reason``, default
    lint-input with the file's name); what is not YAML is counted as far as
    it goes and left to the linter to report (in the words ``pciname lint``
    uses)."""
    fast = _parser()
    counted = already
    for loader in (fast, yaml.SafeLoader) if fast is not None else (yaml.SafeLoader,):
        counter = _Counter(name, limit, context, flag, reason)
        try:
            return counter.count(_events(text, loader), already)
        except yaml.YAMLError:
            continue  # not YAML to this parser: the next (PyYAML's own) counts, else the linter reports
        except RecursionError:
            break
        finally:
            counted = counter.counted
    return counted


class _Counter:
    """:func:`count_nodes` over one parser's events; ``counted``: the nodes
    counted so far, also when the parser failed part way."""

    def __init__(self, name: str, limit: int, context: grpc.ServicerContext, flag: str, reason: str | None) -> None:
        self.name, self.limit, self.context, self.flag, self.reason = name, limit, context, flag, reason
        self.counted = 0

    def count(self, events: Any, already: int) -> int:
        count, limit = already, self.limit
        sizes: dict[str, int] = {}
        open_: list[tuple[str | None, int]] = []  # (anchor, count at the start) of each open collection
        try:
            for seen, event in enumerate(events):
                if seen % CHECK_EVERY == 0:
                    check_alive(self.context)
                if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                    count += 1
                    open_.append((event.anchor, count))
                    if len(open_) > MAX_YAML_DEPTH:
                        raise self._too_deep(event.start_mark)
                elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                    anchor, start = open_.pop()
                    if anchor is not None:
                        sizes[anchor] = count - start + 1
                elif isinstance(event, yaml.ScalarEvent):
                    count += 1
                    if event.anchor is not None:
                        sizes[event.anchor] = 1
                elif isinstance(event, yaml.AliasEvent):
                    count += sizes.get(event.anchor or "", 1)
                else:
                    continue
                if count > limit:
                    raise self._too_many()
        finally:
            self.counted = count
        return count

    def _too_deep(self, mark: Any) -> RpcFailure:
        """The line lint gives YAML nested past :data:`MAX_YAML_DEPTH`
        (:func:`~pciname.base.requests.nested_too_deeply`): the first collection past it."""
        return failure(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"{shown(self.name, quote=False)}:{nested_too_deeply(mark.line + 1, mark.column + 1)}",
            self.reason or LINT_INPUT,
            *([] if self.reason else [(FILE_KEY, metadata_text(self.name))]),
        )

    def _too_many(self) -> RpcFailure:
        return RpcFailure(
            grpc.StatusCode.INVALID_ARGUMENT,
            f"more than this server's maximum of {self.limit} YAML nodes in one request ({self.flag}), "
            f"counting aliases as what they stand for, by {shown(self.name, quote=False)}; split the request",
        )


# Nodes past which a request's memory is handed back to the system after it.
RELEASE_AFTER_NODES = 10_000


def release_memory() -> None:
    """Give the memory a large request used back to the system: Python
    frees the nodes, but glibc keeps what a worker thread's arena held
    (a server stayed at its peak after one Lint of 100,000 nodes)."""
    gc.collect()
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name) if name else None
        trim = getattr(libc, "malloc_trim", None)
        if trim is not None:
            trim(0)
    except OSError:  # not glibc: nothing to trim
        pass


class CheckedText:
    """``text`` as a stream PyYAML reads 4 KiB at a time, asking
    :func:`check_alive` before each read: the linter's composer, which
    cannot be interrupted otherwise, stops when the caller cancels or its
    deadline passes. PyYAML reads it as it reads the text itself (the same
    decoding, errors and marks; ``name`` is the one it gives a string)."""

    def __init__(self, text: str | bytes, context: grpc.ServicerContext) -> None:
        self.name = "<unicode string>" if isinstance(text, str) else "<byte string>"
        self._stream: io.StringIO | io.BytesIO = io.StringIO(text) if isinstance(text, str) else io.BytesIO(text)
        self._context = context

    def read(self, size: int = -1) -> str | bytes:
        check_alive(self._context)
        return self._stream.read(size)

    def seek(self, offset: int) -> None:
        """Back to ``offset``: the linter reads the text once per pass, each from the start."""
        self._stream.seek(offset)


class Slots:
    """At most ``size`` holders at once; :meth:`take` refuses (never waits)
    beyond that, so waiting requests never hold the server's workers."""

    def __init__(self, size: int, what: str, flag: str) -> None:
        self.size = size
        self.what = what
        self.flag = flag
        self._semaphore = threading.BoundedSemaphore(size)

    def take(self) -> _Slot:
        if not self._semaphore.acquire(blocking=False):
            raise RpcFailure(
                grpc.StatusCode.RESOURCE_EXHAUSTED,
                f"{self.size} {self.what} already running, this server's maximum ({self.flag}); retry shortly",
            )
        return _Slot(self._semaphore)


class _Slot:
    def __init__(self, semaphore: threading.BoundedSemaphore) -> None:
        self._semaphore = semaphore

    def __enter__(self) -> _Slot:
        return self

    def __exit__(self, *exc: object) -> None:
        self._semaphore.release()


__all__ = [
    "CHECK_EVERY",
    "DEADLINE_SKEW",
    "MAX_YAML_DEPTH",
    "RELEASE_AFTER_NODES",
    "CheckedText",
    "Slots",
    "check_alive",
    "count_nodes",
    "release_memory",
]
