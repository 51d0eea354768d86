"""Packaged answers: the record of every NVIDIA device id under every
packaged profile, precomputed, and read with ``marshal`` before anything
else of pciname is imported.

``pciname/packaged/`` is part of the package, as the ``.py`` files beside
it are, and is trusted as they are: nothing in it is digest-checked when
read; a test regenerates it and compares bytes, so it cannot go stale
unnoticed. Written by ``python -m pciname.packaged_answers``, it holds (all
marshal data):

* ``index``: pciname's version, the keys of a record in order (``order``),
  the fields a row holds (``fields``), every spelling of every packaged
  profile (``spellings``: spelling -> profile) and per profile its
  ``header`` (the fields all its records share) and its ``table``;
* one table per distinct set of rows, named by a digest of its bytes:
  NVIDIA device id -> row, a tuple of the ``fields`` with each string as
  its index in ``strings`` and the warnings as (code, index in
  ``messages``) pairs;
* ``strings`` and ``messages``: the strings the rows of every table share.

One fast path uses them: :func:`pciname.resolve` and a plain ``pciname
lookup`` (:mod:`pciname.cli.fast`) of NVIDIA device ids under a packaged
profile spelling. Anything else takes the full path (the resolver and its
catalogs), which the user cache speeds up with its own checks.

This module imports only ``os``, ``marshal`` and two constants (no
``from __future__ import annotations``: importing ``__future__`` costs
start-up time).
"""

import marshal
import os

from ._version import __version__
from .naming import DEFAULT_PROFILE
from .pciids import NVIDIA_VENDOR_ID

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    #: (the profile's header, its rows)
    Table = tuple[dict[str, Any], dict[str, tuple[Any, ...]]]

__all__ = ["DEFAULT_PROFILE", "NVIDIA_VENDOR_ID"]

#: The packaged answers' directory, beside this module.
DIRECTORY = os.path.join(os.path.dirname(os.path.abspath(__file__)), "packaged")
INDEX = "index"
STRINGS = "strings"
MESSAGES = "messages"
_HEX = frozenset("0123456789abcdefABCDEF")

_files: "dict[str, Any]" = {}  # path -> what it holds (None: absent or not marshal data)


def packaged_dir() -> str:
    """Where the packaged answers are (tests move them)."""
    return DIRECTORY


def load(name: str) -> "Any":
    """What the packaged file ``name`` holds, read once; None if it is absent."""
    path = os.path.join(packaged_dir(), name)
    if path not in _files:
        try:
            with open(path, "rb") as handle:
                _files[path] = marshal.loads(handle.read())
        except (OSError, EOFError, ValueError, TypeError):
            _files[path] = None
    return _files[path]


def index() -> "dict[str, Any] | None":
    """The packaged index, or None (absent, or written for another version)."""
    found = load(INDEX)
    return found if type(found) is dict and found.get("version") == __version__ else None


def table(spelling: str) -> "Table | None":
    """The header and rows of the packaged profile ``spelling`` names, or None."""
    found = index()
    profile = found["spellings"].get(spelling) if found is not None else None
    if profile is None:
        return None
    entry = found["profiles"][profile]  # type: ignore[index]
    rows = load(entry["table"])
    return None if rows is None else (entry["header"], rows)


def hex4(text: str) -> str | None:
    if text[:2] in ("0x", "0X"):
        text = text[2:]
    if len(text) == 4 and _HEX.issuperset(text):
        return text.lower()
    return None


def device_id(token: str) -> tuple[str, str] | None:
    """``VENDOR:DEVICE`` or a bare ``DEVICE`` (vendor 10de) as
    :func:`pciname.pciids.ids.parse_device_id` reads it (without surrounding
    white space), else None (a test holds the two to the same answers)."""
    vendor, sep, device = token.partition(":")
    if not sep:
        vendor, device = NVIDIA_VENDOR_ID, vendor
    v, d = hex4(vendor), hex4(device)
    if v is None or d is None:
        return None
    return v, d


def value(found: "Any") -> "Any":
    """A row's value as the record holds it: a string for its index, the
    warnings as dicts."""
    if type(found) is int:
        return load(STRINGS)[found]
    if type(found) is tuple:
        messages = load(MESSAGES)
        return [{"code": code, "message": messages[at]} for code, at in found]
    return found


def record(answers: "Table", device: str) -> "dict[str, Any] | None":
    """The record of NVIDIA device id ``device`` (4 lower-case hex digits),
    exactly as the full path builds it, or None if the table has no row."""
    header, rows = answers
    row = rows.get(device)
    if row is None:
        return None
    found = index()
    assert found is not None
    values = dict(header, device=f"{NVIDIA_VENDOR_ID}:{device}")
    values.update(zip(found["fields"], map(value, row)))
    return {key: values[key] for key in found["order"]}


def packaged_record(device: str, spelling: str) -> "dict[str, Any] | None":
    """The record of ``device`` under profile ``spelling`` from the packaged
    answers, or None (not a plain NVIDIA device id, or not packaged)."""
    parsed = device_id(device)
    if parsed is None or parsed[0] != NVIDIA_VENDOR_ID:
        return None
    found = table(spelling)
    return None if found is None else record(found, parsed[1])


#: The default resolver's memo (:class:`pciname.resolver.Resolver` fills and
#: clears it): (device, profile) -> Resolution. It lives here so that
#: :func:`pciname.resolve` reads it before the resolver is imported.
memo: "dict[tuple[object, object], Any]" = {}
MEMO_MAX = 100_000


def remember(into: "dict[tuple[object, object], Any]", key: "tuple[object, object]", result: "Any") -> "Any":
    """Keep ``result`` in a memo (emptied when full); unhashable keys are not kept."""
    try:
        if len(into) >= MEMO_MAX:
            into.clear()
        into[key] = result
    except TypeError:
        pass
    return result


def clear() -> None:
    """Forget what was read from the package (tests move it)."""
    _files.clear()
