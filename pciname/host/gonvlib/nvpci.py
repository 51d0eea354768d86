"""What go-nvlib's ``getNvidiaDeviceByPciBusID`` does alike wherever it is
vendored: its files read and their numbers parsed (:class:`Files`), its
errors (:class:`DiscoveryError`), and its walk down a VF's ``physfn`` link,
done once per device and without recursion (:class:`Walk`).

``getNvidiaDeviceByPciBusID`` (go-nvlib ``pkg/nvpci/nvpci.go``, vendored by
the DRA driver, kubernetes-sigs/dra-driver-nvidia-gpu v0.4.1
``9036620f6c4f75476f2f27fd68c4de2c2901816b``, and by the Kata sandbox
device plugin) reads a device's own files, then, when its ``physfn`` link
resolves, calls itself on the link's target and fails with ``unable to detect
physfn for ADDRESS: …`` when that call fails. Links that form a chain are
followed to its end (Go's stack grows); links that loop recurse until Go's
stack overflows and the plugin crashes. Its cache holds physical functions
only, so every VF of a chain rebuilds the rest of the chain.

:func:`build` gives the same outcome for each device with one iterative
walk: each address is read at most once per :class:`Walk` (its outcome kept),
a loop is found when the walk meets an address it is still waiting on, and
a chain longer than :data:`MAX_PHYSFN_LINKS` is refused with a diagnosis
rather than followed.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import ClassVar, Generic, TypeVar

from pciname.errors import PcinameBaseError
from pciname.host import rootfs
from pciname.naming.gotext import go_parse_uint, trim_space

#: The links one walk follows: the functions of a whole PCI segment (256
#: buses of 32 devices of 8 functions); a real VF's chain has one link.
MAX_PHYSFN_LINKS = 256 * 32 * 8


class DiscoveryError(PcinameBaseError):
    """A call that fails go-nvlib's discovery (``crash``: the plugin crashes),
    ``depth`` physfn links above the device that failed it."""

    def __init__(self, message: str, crash: bool = False, depth: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.crash = crash
        self.depth = depth

    def __str__(self) -> str:
        if self.depth == 0:
            return self.message
        if self.depth == 1:
            return f"unable to detect physfn: {self.message}"
        return f"unable to detect physfn ({self.depth} physfn links down): {self.message}"

    def up(self) -> DiscoveryError:
        """The failure one physfn link further up the chain (of the same class)."""
        return type(self)(self.message, self.crash, self.depth + 1)


#: The characters of a file's text a diagnosis quotes (a sysfs attribute
#: may hold 64 KiB: the diagnosis says how long the rest is).
QUOTED_CHARS = 40


def quoted(text: str) -> str:
    """``text`` as a diagnosis quotes it: its repr, cut after
    :data:`QUOTED_CHARS` characters with their count."""
    if len(text) <= QUOTED_CHARS:
        return repr(text)
    return f"{text[:QUOTED_CHARS]!r}… ({len(text)} characters)"


class Files:
    """A device's files as go-nvlib reads them, under ``ROOT``; its failures
    raised as :attr:`error`."""

    error: ClassVar[type[DiscoveryError]] = DiscoveryError

    def __init__(self, root: Path) -> None:
        self.root = root

    def _text(self, path: str, what: str) -> str:
        """``strings.TrimSpace(os.ReadFile(path))``."""
        try:
            return trim_space(rootfs.read_attr(self.root, path).decode("utf-8", "surrogateescape"))
        except OSError as exc:
            raise self.error(f"unable to read PCI {what} ({rootfs.reason(exc)})") from None

    def _uint(self, path: str, what: str, bits: int, base: int = 0) -> int:
        """``strconv.ParseUint(text, base, bits)`` of the file: its error
        (of syntax, or a value out of range, of any length) fails the call."""
        text = self._text(path, what)
        value, ok = go_parse_uint(text, bits, base)
        if not ok:
            why = f"out of range of uint{bits}" if value else f"not a Go uint{bits} literal"
            raise self.error(f"unable to parse PCI {what} {quoted(text)}: {why}")
        return value


D = TypeVar("D")


class Walk(Generic[D]):
    """The outcomes of one GetAllDevices call, each device built once."""

    def __init__(self, own: Callable[[str], tuple[D | None, str | None]], error: type[DiscoveryError]) -> None:
        """``own(address)``: the device's own part, its files read as go-nvlib
        reads them: the device (None: not NVIDIA's or Mellanox's) and the
        address its ``physfn`` link names (None: no link); raises ``error``."""
        self._own = own
        self._error = error
        self._done: dict[str, D | DiscoveryError | None] = {}

    def build(self, address: str) -> D | None:
        """getNvidiaDeviceByPciBusID(address): the device or None; raises
        DiscoveryError where go-nvlib returns an error or crashes."""
        waiting: list[tuple[str, D]] = []  # devices whose physfn is being built, the first first
        on_path: set[str] = set()
        current = address
        outcome: D | DiscoveryError | None
        while True:
            if current in self._done:
                outcome = self._done[current]
                break
            if current in on_path:
                outcome = self._error(
                    f"physfn links loop back to {current}: go-nvlib recurses until Go's stack overflows", True
                )
                break
            if len(waiting) >= MAX_PHYSFN_LINKS:
                outcome = self._error(
                    f"more than {MAX_PHYSFN_LINKS} physfn links in a chain: pciname does not follow them further"
                )
                break
            try:
                device, physfn = self._own(current)
            except DiscoveryError as exc:
                outcome = exc
                self._done[current] = exc
                break
            if device is None or physfn is None:
                outcome = device
                self._done[current] = device
                break
            waiting.append((current, device))
            on_path.add(current)
            current = physfn
        for below, found in reversed(waiting):
            outcome = outcome.up() if isinstance(outcome, DiscoveryError) else found
            self._done[below] = outcome
        if isinstance(outcome, DiscoveryError):
            raise outcome
        return outcome
