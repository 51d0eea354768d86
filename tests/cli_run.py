"""The one way tests run the command line.

:func:`pciname` runs ``pciname ARGV`` in this process (``pciname.cli.main``,
what the ``pciname`` script calls), with its own stdin, stdout and stderr,
and, if asked, its own environment and working directory: as fast as a call,
and it sees what a process would (the streams are UTF-8 text over bytes, as
a process's are, so the CLI's own stream set-up runs).

:func:`pciname_process` runs it as a process of its own, ``python -m
pciname``, for the tests where the process itself is the point: start-up
(what gets imported), signals, a hang that must be cut by a timeout, the
streams' encoding under a locale, another copy of the package on the path.

:func:`call` runs any CLI entry point in this process (the fast path,
``cli.full``, ``kubectl_main``).

Each gives a :class:`Ran`: ``(code, out, err)`` as a tuple, also readable as
``returncode``, ``stdout`` and ``stderr``, as a finished process is.
"""

from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any, NamedTuple

#: The checkout (``python -m pciname`` runs its package).
REPO = Path(__file__).resolve().parents[1]


class Ran(NamedTuple):
    """What one run of the CLI did."""

    #: What the entry point returned or exited with (None: it returned None).
    code: Any
    out: str
    err: str

    @property
    def returncode(self) -> int:
        """The exit status a process would have had."""
        if self.code is None:
            return 0
        return self.code if isinstance(self.code, int) else 1

    @property
    def stdout(self) -> str:
        return self.out

    @property
    def stderr(self) -> str:
        return self.err


def _stream() -> io.TextIOWrapper:
    """A text stream over bytes, as a process's stdout is (UTF-8, strict)."""
    return io.TextIOWrapper(io.BytesIO(), encoding="utf-8", errors="strict", newline="\n", write_through=True)


def _text(stream: io.TextIOWrapper) -> str:
    stream.flush()
    buffer = stream.buffer
    assert isinstance(buffer, io.BytesIO)
    return buffer.getvalue().decode("utf-8", "surrogateescape")


@contextlib.contextmanager
def _environment(env: Mapping[str, str | None] | None, cwd: Path | str | None) -> Iterator[None]:
    """``env``'s variables set (None: unset) and ``cwd`` the working
    directory while the CLI runs; pciname's in-process caches cleared on
    both sides, as a new process starts without them."""
    if env is None and cwd is None:
        yield
        return
    import pciname

    saved, here = dict(os.environ), os.getcwd()
    try:
        for name, value in (env or {}).items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        if cwd is not None:
            os.chdir(cwd)
        pciname.clear_caches()
        yield
    finally:
        os.chdir(here)
        os.environ.clear()
        os.environ.update(saved)
        pciname.clear_caches()


def only(env: Mapping[str, str]) -> dict[str, str | None]:
    """``env`` as the whole environment: for ``env=`` of :func:`pciname`,
    every other variable of this process unset while it runs."""
    return {**{name: None for name in os.environ}, **env}


def call(
    function: Callable[[list[str]], Any],
    argv: list[str] | tuple[str, ...],
    *,
    stdin: str | bytes | None = None,
    env: Mapping[str, str | None] | None = None,
    cwd: Path | str | None = None,
) -> Ran:
    """``function(argv)`` (a CLI entry point) in this process, with ``stdin``
    as its input (None: the test's own ``sys.stdin``): what it returned or
    exited with, and what it wrote."""
    out, err = _stream(), _stream()
    old_stdin = sys.stdin
    if stdin is not None:
        data = stdin.encode() if isinstance(stdin, str) else stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8")
    try:
        with _environment(env, cwd), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = function([str(arg) for arg in argv])
            except SystemExit as exited:
                code = exited.code
                if code is not None and not isinstance(code, int):
                    print(code, file=sys.stderr)
    finally:
        if stdin is not None:  # the test's own sys.stdin stays as the CLI left it
            sys.stdin = old_stdin
    return Ran(code, _text(out), _text(err))


def pciname(
    *argv: str | Path,
    stdin: str | bytes | None = None,
    env: Mapping[str, str | None] | None = None,
    cwd: Path | str | None = None,
) -> Ran:
    """``pciname ARGV`` in this process, reading ``stdin``; unless given,
    the stream the test put in ``sys.stdin``, or nothing."""
    from pciname.cli import main

    if stdin is None and not isinstance(getattr(sys.stdin, "buffer", None), io.BytesIO):
        stdin = b""
    return call(main, [str(arg) for arg in argv], stdin=stdin, env=env, cwd=cwd)


def pciname_process(
    *argv: str | Path,
    stdin: str | bytes | None = None,
    env: Mapping[str, str | None] | None = None,
    cwd: Path | str = REPO,
    timeout: float = 120,
    replace_env: bool = False,
) -> Ran:
    """``python -m pciname ARGV`` as a process of its own, with this
    checkout first on its path; ``env``'s variables added to this process's
    (None: unset), or with ``replace_env`` its whole environment. A hang
    past ``timeout`` raises :class:`subprocess.TimeoutExpired`."""
    environment: dict[str, str] = {} if replace_env else {**os.environ, "PYTHONPATH": str(REPO)}
    for name, value in (env or {}).items():
        if value is None:
            environment.pop(name, None)
        else:
            environment[name] = value
    data = stdin.encode() if isinstance(stdin, str) else stdin
    done = subprocess.run(
        [sys.executable, "-m", "pciname", *map(str, argv)],
        input=data,
        capture_output=True,
        env=environment,
        cwd=cwd,
        timeout=timeout,
    )
    return Ran(done.returncode, _decoded(done.stdout), _decoded(done.stderr))


def _decoded(data: bytes) -> str:
    """A process's output as ``text=True`` reads it: UTF-8, universal newlines."""
    return data.decode("utf-8", "surrogateescape").replace("\r\n", "\n").replace("\r", "\n")
