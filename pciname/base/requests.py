"""The one grammar of a device request every room reads: ``DEVICE`` or
``DEVICE=COUNT`` (:func:`parse_request`), and the most GPUs one node may ask
for (:data:`MAX_GPUS`). KubeVirt's generators, the DRA claims and the Kata
pods take their counts from here, so each refuses the same counts with the
same line. Also the deepest YAML any request's text may nest
(:data:`MAX_YAML_DEPTH`), which lint and the server's budgets both hold."""

from __future__ import annotations

from pciname.errors import PcinameError

#: GPUs one node may ask for: the most a ``DEVICE=COUNT`` request may count,
#: and the most GPU entries one node-pool group (or one VM) may get, counts
#: added up. Far above any real node (8 to 16 GPUs, a few hundred vGPUs);
#: far below what would exhaust memory.
MAX_GPUS = 1024

#: Collections (mappings, sequences) YAML text may hold open at once: lint
#: (``pciname lint``, the Lint and admission RPCs) refuses text nested deeper,
#: one line naming the first collection past it, before reading further, and
#: the server's node count refuses it before lint composes anything. Far
#: deeper than any Kubernetes object (a VirtualMachine nests about 12);
#: shallow enough that PyYAML's own composer (3 Python frames a level)
#: reaches it well inside Python's recursion limit, whoever calls.
MAX_YAML_DEPTH = 200


def nested_too_deeply(line: int, column: int) -> str:
    """The words for YAML nested past :data:`MAX_YAML_DEPTH`, after the
    text's name: ``LINE:COL: ...``, 1-based, of the first collection past it."""
    return f"{line}:{column}: YAML nested too deeply to read (more than {MAX_YAML_DEPTH} levels)"


def parse_request(text: object) -> tuple[str, int]:
    """``DEVICE`` or ``DEVICE=COUNT`` -> (DEVICE, COUNT); COUNT defaults to 1.
    Anything else (not a string, no DEVICE, a bad COUNT) is a PcinameError."""
    if not isinstance(text, str):
        raise PcinameError(f"malformed request {text!r}: expected DEVICE or DEVICE=COUNT, e.g. 10de:2236=2")
    item, sep, count = text.strip().rpartition("=")
    if not sep:
        item = count
    item = item.strip()
    if not item:
        raise PcinameError(f"malformed request {text!r}: expected DEVICE or DEVICE=COUNT, e.g. 10de:2236=2")
    if not sep:
        return item, 1
    digits = count.strip()
    if not (digits.isascii() and digits.isdigit()) or not digits.strip("0"):
        raise PcinameError(f"malformed count in {text!r}: expected a whole number of at least 1")
    digits = digits.lstrip("0")
    if len(digits) > len(str(MAX_GPUS)) or int(digits) > MAX_GPUS:
        raise PcinameError(f"count in {text!r} is more than the {MAX_GPUS} GPUs a node may have")
    return item, int(digits)
