"""The Kata sandbox device plugin's naming rules (NVIDIA/sandbox-device-plugin).

The plugin the GPU Operator deploys on vm-passthrough nodes in Kata mode
(``sandboxWorkloads.mode: kata``) names GPUs by rules of its own, written
here to read like its Go code (the facts per release, with their sources,
are ``data/kata/releases.json``; docs/naming.md tells the story):

* v0.0.1 reads ``/usr/pci.ids`` itself, as the KubeVirt plugin's
  ``vendor-section`` algorithm does (:mod:`pciname.naming.algorithms`);
* v0.0.2 and later take go-nvlib's ``DeviceName``: go-nvlib's own pci.ids
  parser (:func:`go_nvlib_devices`, ``pkg/pciids/pciids.go``; a device it
  does not find is ``UNKNOWN_DEVICE``), then ``formatDeviceName``
  (:func:`format_device_name`), which keeps ``-`` where the KubeVirt plugin
  deletes it;
* the resource is ``nvidia.com/<name>`` where ``<name>`` is the alias when
  one is in force (:func:`advertised_name`: ``P_GPU_ALIAS`` for GPUs,
  ``NVSWITCH_ALIAS`` for NVSwitches), else the per-model name; the socket is
  ``sandbox-<name>.sock`` (:func:`socket_path`), so every model under one
  alias shares one socket.

go-nvlib reads a file with ``bufio.Reader.ReadBytes('\\n')``: no line
length limit, and a last line without ``\\n`` is never parsed
(:func:`go_nvlib_lines`). Where its parser panics (a line too short to slice,
a sub-entry before its parent) the plugin crashes on start:
:class:`GoNvlibPanic` says where.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from pciname.errors import PciIdsError
from pciname.naming.gotext import slash_dot, spaces_to_underscore, to_upper, trim_space

#: The Kata plugin family, as profiles spell it.
KATA_PLUGIN = "sandbox-device-plugin"
#: go-nvlib's name for a device its pci.ids parse does not hold (nvpci.UnknownDeviceString).
UNKNOWN_DEVICE = "UNKNOWN_DEVICE"
#: The aliases cmd/main.go falls back to when the variable is unset (v0.0.2 and later).
DEFAULT_PGPU_ALIAS = "pgpu"
DEFAULT_NVSWITCH_ALIAS = "nvswitch"
PGPU_ALIAS_ENV = "P_GPU_ALIAS"
NVSWITCH_ALIAS_ENV = "NVSWITCH_ALIAS"
#: pluginapi.DevicePluginPath + "sandbox-%s.sock" (pkg/device_plugin/generic_device_plugin.go).
SOCKET_FORMAT = "/var/lib/kubelet/device-plugins/sandbox-{}.sock"
#: The PCI classes nvpci's IsGPU() and IsNVSwitch() compare the whole 24-bit class with.
GPU_CLASSES = (0x030000, 0x030200)
NVSWITCH_CLASS = 0x068000

_NOT_KEPT = re.compile(r"[^a-zA-Z0-9_-]+")
_NVIDIA = 0x10DE
_HEX = frozenset("0123456789abcdefABCDEF")


class GoNvlibPanic(PciIdsError):
    """go-nvlib's pci.ids parser panics on this file: the plugin crashes on start."""


def format_device_name(name: str) -> str:
    """``formatDeviceName``: upper case; ``/`` and ``.`` to ``_``; runs of RE2
    ``\\s`` to ``_``; every character outside ``[a-zA-Z0-9_-]`` deleted."""
    if name == "":
        return ""
    return _NOT_KEPT.sub("", spaces_to_underscore(slash_dot(to_upper(name))))


def go_nvlib_lines(text: str) -> list[str]:
    """The lines ``ReadBytes('\\n')`` hands go-nvlib's scanner, without their
    ``\\n``: a last line without one ends the file unread (``io.EOF``)."""
    return text.split("\n")[:-1]


def _parse_hex(text: str) -> int:
    # strconv.ParseUint(text, 16, bits) with its error ignored: 0 unless all hex.
    return int(text, 16) if text and set(text) <= _HEX else 0


def _entry(line: str, offset: int, number: int) -> tuple[int, str]:
    """``scanEntry``: the id (the first ``offset`` bytes of the trimmed line)
    and the trimmed rest."""
    raw = trim_space(line).encode("utf-8", "surrogateescape")
    if len(raw) < offset:
        raise GoNvlibPanic(f"line {number}: {line.strip()!r} is too short for go-nvlib's scanner (slice out of range)")
    ident = raw[:offset].decode("utf-8", "surrogateescape")
    return _parse_hex(ident), trim_space(raw[offset:].decode("utf-8", "surrogateescape"))


def _check_sub_vendor(line: str, number: int) -> None:
    # scanSubVendor slices the trimmed line at 4 and the trimmed rest at 4.
    first = trim_space(line).encode("utf-8", "surrogateescape")
    rest = trim_space(first[4:].decode("utf-8", "surrogateescape")).encode("utf-8", "surrogateescape")
    if len(first) < 4 or len(rest) < 4:
        raise GoNvlibPanic(f"line {number}: {line.strip()!r} is too short for go-nvlib's scanner (slice out of range)")


def _token(line: str, in_vendor: bool) -> str:
    """``scanner.scan``'s token for one line (``in_vendor``: a vendor line came
    after the last class line)."""
    head, two_tabs = line[:1], line[:2] == "\t\t"
    if line.startswith("EOF"):
        return "EOF"
    if line == "" or head == "#":
        return "NEWLINE"  # and COMMENT: both ignored
    if head in "0123456789abcdef":
        return "VENDOR"
    if head == "\t" and in_vendor:
        return "SUBVENDOR" if two_tabs else "DEVICE"
    if head == "C":
        return "CLASS"
    if head == "\t":
        return "PROGIF" if two_tabs else "SUBCLASS"
    return "ILLEGAL"  # go-nvlib prints a warning and reads on


def _nil_map(number: int, what: str, parent: str) -> GoNvlibPanic:
    return GoNvlibPanic(f"line {number}: a {what} line before any {parent} line (go-nvlib: assignment to a nil map)")


def go_nvlib_devices(lines: Iterable[str]) -> dict[str, str]:
    """NVIDIA's device names as go-nvlib's ``NewDB().GetDeviceName(0x10de, id)``
    finds them: 4-hex-digit id -> name (a later ``10de`` vendor line starts a
    new, empty device table; a later line of an id replaces the earlier).

    Reads like ``parser.parse`` of ``pkg/pciids``; the subsystem and class
    tables it also builds matter only where building them panics (a
    sub-entry before any entry it belongs to)."""
    vendors: dict[int, dict[int, str]] = {}
    devices: dict[int, str] = {}  # hkVendor.devices
    in_vendor = False
    seen: set[str] = set()  # the tokens met so far: which hk* maps exist
    for number, line in enumerate(lines, 1):
        token = _token(line, in_vendor)
        if token == "EOF":
            break
        if token == "VENDOR":
            in_vendor = True
            ident, _ = _entry(line, 4, number)
            devices = vendors[ident] = {}
        elif token == "DEVICE":
            ident, name = _entry(line, 4, number)
            devices[ident] = name
        elif token == "SUBVENDOR":
            _check_sub_vendor(line, number)
            if "DEVICE" not in seen:
                raise _nil_map(number, "subsystem", "device")
        elif token == "CLASS":
            in_vendor = False
            _entry(line[1:], 2, number)
        elif token in ("SUBCLASS", "PROGIF"):
            _entry(line, 2, number)
            parent = "CLASS" if token == "SUBCLASS" else "SUBCLASS"
            if parent not in seen:
                raise _nil_map(number, token.lower(), parent.lower())
        seen.add(token)
    return {f"{ident:04x}": name for ident, name in vendors.get(_NVIDIA, {}).items()}


def go_nvlib(lines: Iterable[str], device_id: str) -> str:
    """v0.0.2 and later: ``formatDeviceName`` of go-nvlib's ``DeviceName`` for
    ``device_id`` (``UNKNOWN_DEVICE`` when its parse holds none); ``""`` when
    nothing survives the filter (the plugin then uses the device id)."""
    wanted = _parse_hex(device_id) if len(device_id) == 4 else -1
    names = {int(key, 16): name for key, name in go_nvlib_devices(lines).items()}
    return format_device_name(names.get(wanted, UNKNOWN_DEVICE))


# pci.ids names of NVIDIA functions that are not GPUs (class 0x03xx) or
# NVSwitches: audio, USB and UCSI controllers, bridges and the like.
_OTHER_FUNCTION = re.compile(
    r"audio|\busb\b|ucsi|smbus|ethernet|\bsata\b|\bide\b|bridge|\blpc\b|memory controller|coprocessor"
    r"|\bapu\b|\bisa\b|serial|\bmcp\w*\b|nforce|co-processor",
    re.IGNORECASE,
)


def looks_like_nvswitch(pci_name: str | None) -> bool:
    """Whether a pci.ids device name names an NVSwitch (inferred: the plugin
    reads the class, 0x068000, which an id alone does not give)."""
    return pci_name is not None and "nvswitch" in pci_name.lower()


def looks_like_other_function(pci_name: str | None) -> bool:
    """Whether a pci.ids device name names a function the plugin skips (not
    a GPU, not an NVSwitch: an HD audio or USB controller, a bridge, ...)."""
    return pci_name is not None and _OTHER_FUNCTION.search(pci_name) is not None


def advertised_name(model_name: str, alias: str | None) -> str:
    """``<name>`` of ``nvidia.com/<name>``: the alias in force, else the
    per-model name (``createDevicePlugins``: an empty alias means none)."""
    return alias if alias else model_name


def effective_alias(given: str | None, unset_default: str) -> str:
    """The alias a plugin runs with: ``given`` (``""`` included) when the
    variable is set, else the release's default for an unset variable."""
    return unset_default if given is None else given


def socket_path(name: str) -> str:
    """The plugin's kubelet socket for ``<name>``."""
    return SOCKET_FORMAT.format(name)
