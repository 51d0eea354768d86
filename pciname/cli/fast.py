"""The fast path of ``pciname lookup``: a plain lookup of NVIDIA device ids
under a packaged profile, answered from the packaged answers
(:mod:`pciname.resolution.answers`), importing almost nothing.

``pciname lookup DEVICE... [-p PROFILE] [-o name|json]`` is what people and
scripts run most; argparse, typing, pathlib and the catalog machinery cost
several times ``python -c pass`` before the answer is printed. So a plain
lookup of a profile spelling the package answers prints, from the packaged
records, exactly what the full path (:func:`pciname.cli.core.run_lookup`)
prints. :func:`lookup` answers only when it can answer exactly as argparse
and the full path would; for anything else (another shape of command line,
a device or spelling the package does not answer, a non-NVIDIA vendor) it
returns None and the caller runs the full path, which owns --help, every
error and every other command.

This module imports only ``os``, ``sys``, :mod:`pciname.resolution.answers` and the
limits of :mod:`pciname.base.files`. No ``from __future__ import annotations``
(importing ``__future__`` costs start-up time): annotations naming
type-only imports are strings.
"""

import sys

from pciname.base.files import MAX_LOOKUP_DEVICES, MAX_LOOKUP_STDIN_BYTES
from pciname.resolution import answers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

_OPTIONS = {"-p": "profile", "--profile": "profile", "-o": "output", "--output": "output", "--warnings": "warnings"}
_CHOICES = {"output": ("name", "json"), "warnings": ("auto", "all")}
#: ``lookup -o name`` lists warnings one line each for up to this many
#: devices, and sums them up in one line beyond (``--warnings all``: always
#: listed).
LIST_WARNINGS_UP_TO = 20
_ASCII_PRINTABLE = bytes(range(0x20, 0x7F))  # what str.isprintable() accepts of ASCII


# -- the command line ---------------------------------------------------------


def plain_lookup(argv: "Sequence[str]") -> "dict[str, Any] | None":
    """The plain lookup ``argv`` is, when the fast path may answer it:
    ``lookup``, then device ids (``VENDOR:DEVICE`` or a bare ``DEVICE``, 4
    hex digits each, optionally 0x-prefixed) in one run, and at most one
    each of ``-p/--profile P`` (P not starting with ``-``), ``-o/--output
    name|json``, ``--warnings auto|all`` and ``--stdin`` (then ``-o name``
    only), as a dict of these (and ``devices``); else None."""
    if len(argv) < 2 or argv[0] != "lookup":
        return None
    devices: list[str] = []
    values: dict[str, str] = {}
    stdin = False
    ended = False  # the run of devices is over
    i, n = 1, len(argv)
    while i < n:
        token = argv[i]
        if token.startswith("-"):
            if devices:
                ended = True
            if token == "--stdin":
                if stdin:
                    return None
                stdin = True
                i += 1
                continue
            option = _OPTIONS.get(token)
            if option is None or option in values or i + 1 >= n:
                return None
            value = argv[i + 1]
            if value.startswith("-") or (option != "profile" and value not in _CHOICES[option]):
                return None
            values[option] = value
            i += 2
            continue
        if ended or answers.device_id(token) is None:
            return None
        devices.append(token)
        i += 1
    if not devices and not stdin:
        return None
    if stdin and values.get("output", "name") != "name":  # bulk JSON: the full path's
        return None
    profile = values.get("profile") or answers.DEFAULT_PROFILE
    return {
        "devices": devices,
        "profile": profile,
        "output": values.get("output", "name"),
        "stdin": stdin,
        "warnings": values.get("warnings", "auto"),
    }


def warnings_summary(counts: "dict[str, int]", devices: int) -> str:
    """The one stderr line that sums up the warnings of a large lookup."""
    total = sum(counts.values())
    by_code = ", ".join(f"{code} {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return (
        f"pciname: {total} warning{'s' if total > 1 else ''} for {devices} devices ({by_code}); "
        "--warnings all lists them\n"
    )


def lookup(argv: "Sequence[str]") -> "int | None":
    """Answer a plain lookup from the packaged answers (the exit code), or
    None: the full path must run. Prints nothing unless it answers; what it
    read of stdin, it puts back for the full path."""
    plain = plain_lookup(argv)
    if plain is None:
        return None
    if not plain["stdin"]:
        return _answer(plain, plain["devices"])
    if sys.stdin is None:
        return None
    data = sys.stdin.buffer.read(MAX_LOOKUP_STDIN_BYTES + 1)
    code = None
    if len(data) <= MAX_LOOKUP_STDIN_BYTES:
        code = _answer(plain, plain["devices"] + data.decode("utf-8", "replace").split())
    if code is None:
        import io

        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
    return code


def _answer(plain: "dict[str, Any]", devices: "list[str]") -> "int | None":
    if not devices or len(devices) > MAX_LOOKUP_DEVICES:
        return None
    if len(devices) <= 64:
        return _answered(plain, devices)
    import gc

    gc.disable()  # thousands of rows, no cycles: the collector would only walk them
    try:
        return _answered(plain, devices)
    finally:
        gc.enable()


def _answered(plain: "dict[str, Any]", devices: "list[str]") -> "int | None":
    table = answers.table(plain["profile"])
    if table is None:
        return None
    if len(devices) > 64 and plain["output"] == "name" and plain["warnings"] == "auto" and sys.byteorder == "little":
        return _bulk(table, devices)
    spelt = _spelt(table, devices)
    if spelt is None:
        return None
    found = [spelt[token] for token in devices]
    if plain["output"] == "json":
        records = [answers.record(table, i) for i, _ in found]
        sys.stdout.write(json_text(records) + "\n")
        return 0 if all(r["advertised"] for r in records if r is not None) else 1
    return _names(plain["warnings"] == "all", table, spelt, found)


def _spelt(table: "answers.Table", devices: "list[str]") -> "dict[str, tuple[str, int]] | None":
    """Each distinct spelling of ``devices`` -> (its device id, its row in
    ``table``); None when one is not an NVIDIA device of the table."""
    spelt: dict[str, tuple[str, int]] = {}
    for token in dict.fromkeys(devices):  # each distinct spelling parsed once
        parsed = answers.device_id(token)
        at = -1 if parsed is None or parsed[0] != answers.NVIDIA_VENDOR_ID else table.find(parsed[1])
        if at == -1:
            return None
        spelt[token] = parsed[1], at  # type: ignore[index]
    return spelt


def _names(
    all_warnings: bool, table: "answers.Table", spelt: "dict[str, tuple[str, int]]", found: "list[tuple[str, int]]"
) -> "int | None":
    """``-o name``: the names on stdout, the warnings on stderr (one line
    each, or one that sums them up); None, before writing anything, when
    the full path must print them (escaped)."""
    fields = answers.index()["fields"]  # type: ignore[index]
    resource, advertised, warnings = (fields.index(k) for k in ("resource_name", "advertised", "warnings"))
    rows = table.rows({at for _, at in spelt.values()})
    pooled = answers.strings(answers.STRINGS, {row[resource] for row in rows.values() if row[resource] is not None})
    names = {at: "" if row[resource] is None else pooled[row[resource]] for at, row in rows.items()}
    if not _printable("".join(names.values())):
        return None  # the full path prints it, escaped (pciname.base.render.printable)
    out, err = sys.stdout, sys.stderr
    if all_warnings or len(found) <= LIST_WARNINGS_UP_TO:
        messages = answers.strings(answers.MESSAGES, {m for at in rows for _, m in rows[at][warnings]})
        if not _printable("".join(messages.values())):
            return None
        for i, at in found:  # as the full path writes them
            out.write(names[at] + "\n")
            for code, message in rows[at][warnings]:
                err.write(f"pciname: {answers.NVIDIA_VENDOR_ID}:{i}: {code}: {messages[message]}\n")
    else:
        out.write("".join([names[at] + "\n" for _, at in found]))
        counts: dict[str, int] = {}
        for _, at in found:
            for code, _ in rows[at][warnings]:
                counts[code] = counts.get(code, 0) + 1
        if counts:
            err.write(warnings_summary(counts, len(found)))
    return 0 if all(rows[at][advertised] for _, at in found) else 1


def _bulk(table: "answers.Table", devices: "list[str]") -> "int | None":
    """``_answered`` of many ids, read from the table's bulk section: as
    that writes them, the names and one line that sums up the warnings."""
    from itertools import chain, repeat

    known, names, advertised, codes = table.bulk()
    nvidia = answers.NVIDIA_VENDOR_ID + ":"  # "10de:dddd" and a bare "dddd": what device_id reads as dddd
    found: list[int | None] = list(map(known.get, map(str.removeprefix, devices, repeat(nvidia))))
    if None in found:
        for i, token in enumerate(devices):  # any other spelling
            if found[i] is None:
                parsed = answers.device_id(token)
                at = -1 if parsed is None or parsed[0] != answers.NVIDIA_VENDOR_ID else table.find(parsed[1])
                if at == -1:
                    return None
                found[i] = at >> 2
    joined = b"\n".join(map(names.__getitem__, found))  # type: ignore[arg-type]
    text = joined.decode("utf-8", "surrogatepass")
    ascii_only = joined.translate(None, _ASCII_PRINTABLE) == b"\n" * (len(found) - 1)  # names of printable ASCII
    if not ascii_only and (text.count("\n") != len(found) - 1 or not _printable(text.replace("\n", ""))):
        return None
    sys.stdout.write(text + "\n")
    warned = list(chain.from_iterable(map(codes.__getitem__, found)))  # type: ignore[arg-type]
    counts = {code: warned.count(code) for code in set(warned)}
    if counts:
        sys.stderr.write(warnings_summary(counts, len(found)))
    return 0 if all(map(advertised.__getitem__, found)) else 1  # type: ignore[arg-type]


def _printable(text: "str | None") -> bool:
    """Text this path may print as it is; anything else (a control character
    from a pci.ids name, but also any other character Python does not call
    printable) is left to the full path, which escapes control characters."""
    return text is None or text.isprintable()


def json_text(records: "list[dict[str, Any] | None]") -> str:
    """``json.dumps(records, indent=2, ensure_ascii=False)``, as
    :func:`pciname.base.render.dump_json` writes it, for what records hold
    (strings, booleans, None, lists of dicts of strings), without importing
    :mod:`json` (its decoder imports re): strings go through the C encoder
    json itself uses."""
    try:
        from _json import encode_basestring as quote
    except ImportError:  # pragma: no cover - CPython builds without _json
        import json

        return json.dumps(records, indent=2, ensure_ascii=False)
    constants = {True: "true", False: "false", None: "null"}

    def value(v: "Any", indent: str) -> str:
        if type(v) is str:
            return str(quote(v))
        if type(v) is bool or v is None:
            return constants[v]
        if type(v) is list:
            if not v:
                return "[]"
            inner = indent + "  "
            return "[\n" + ",\n".join(inner + value(item, inner) for item in v) + "\n" + indent + "]"
        if type(v) is dict:
            if not v:
                return "{}"
            inner = indent + "  "
            items = ",\n".join(f"{inner}{quote(k)}: {value(item, inner)}" for k, item in v.items())
            return "{\n" + items + "\n" + indent + "}"
        raise TypeError(f"not in a record: {v!r}")

    return value(records, "")
