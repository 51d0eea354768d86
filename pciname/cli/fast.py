"""The fast path of ``pciname lookup``, and the one printer of its names.

argparse, typing, pathlib and the catalogs cost several times ``python -c
pass``; so :func:`lookup` answers a plain lookup of NVIDIA device ids under
a packaged profile spelling from the packaged answers
(:mod:`pciname.resolution.answers`), printing through the functions the full
path (:func:`pciname.cli.core.run_lookup`) prints with. Anything else gets
None and the full path runs, which owns --help, every error and every other
command. No ``from __future__ import annotations`` (start-up time).
"""

import sys

from pciname.base.render import PROGRAM, dump_json, write_line
from pciname.pciids.ids import device_id
from pciname.resolution import answers

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Sequence
    from typing import Any

_OPTIONS = {"-p": "profile", "--profile": "profile", "-o": "output", "--output": "output", "--warnings": "warnings"}
_CHOICES = {"output": ("name", "json"), "warnings": ("auto", "all")}
#: ``lookup -o name`` lists warnings one line each for up to this many
#: devices, and sums them up in one line beyond (``--warnings all``: always).
LIST_WARNINGS_UP_TO = 20
#: Lookups of more devices than this read every row at once (:func:`_bulk`).
MANY = 64
_ASCII_PRINTABLE = bytes(range(0x20, 0x7F))


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
    plain: dict[str, Any] = {"output": "name", "warnings": "auto", "stdin": False}
    given: set[str] = set()  # the options seen (each may come once)
    i = run_end = 1  # run_end: just after the last device (the devices come in one run)
    while i < len(argv):
        token, value = argv[i], argv[i + 1] if i + 1 < len(argv) else "-"
        option = "stdin" if token == "--stdin" else _OPTIONS.get(token)
        if option in given:
            return None
        if option == "stdin":
            plain["stdin"], i = True, i + 1
        elif option is not None and not value.startswith("-") and value in _CHOICES.get(option, (value,)):
            plain[option], i = value, i + 2
        elif token.startswith("-") or (devices and run_end != i) or device_id(token) is None:
            return None
        else:
            devices.append(token)
            i = run_end = i + 1
        if option:
            given.add(option)
    if not (devices or plain["stdin"]) or (plain["stdin"] and plain["output"] != "name"):
        return None  # nothing to look up; or bulk JSON: the full path's
    plain.update(devices=devices, profile=plain.get("profile") or answers.DEFAULT_PROFILE)
    return plain


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
    from pciname.base.files import MAX_LOOKUP_STDIN_BYTES  # the limits: not at a single lookup's start-up

    data = sys.stdin.buffer.read(MAX_LOOKUP_STDIN_BYTES + 1)
    code = None
    if len(data) <= MAX_LOOKUP_STDIN_BYTES:
        code = _answer(plain, plain["devices"] + data.decode("utf-8", "replace").split())
    if code is None:
        import io

        sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
    return code


def _answer(plain: "dict[str, Any]", devices: "list[str]") -> "int | None":
    table = answers.table(plain["profile"]) if devices else None
    if table is None:
        return None
    if len(devices) <= MANY:
        return _answered(plain, table, devices)
    import gc

    from pciname.base.files import MAX_LOOKUP_DEVICES  # the limits: not at a single lookup's start-up

    if len(devices) > MAX_LOOKUP_DEVICES:
        return None
    gc.disable()  # thousands of rows, no cycles: the collector would only walk them
    try:
        code = _bulk(table, devices) if plain["output"] == "name" and plain["warnings"] == "auto" else None
        return code if code is not None else _answered(plain, table, devices)
    finally:
        gc.enable()


def _answered(plain: "dict[str, Any]", table: "answers.Table", devices: "list[str]") -> "int | None":
    """The records of ``devices`` from ``table``, printed as the full path
    prints them; None, having written nothing, if one is not in the table."""
    spelt = {}
    for token in dict.fromkeys(devices):  # each distinct spelling read once
        vendor, device = device_id(token) or ("", "")
        found = answers.record(table, device) if vendor == answers.NVIDIA_VENDOR_ID else None
        if found is None:
            return None
        spelt[token] = found
    records = [spelt[token] for token in devices]
    if plain["output"] == "json":
        dump_json(records)
    else:
        print_names(records, listed(plain["warnings"], len(records)))
    return 0 if all(r["advertised"] for r in records) else 1


def listed(warnings: str, devices: int) -> bool:
    """Whether ``lookup -o name --warnings auto|all`` of so many devices
    lists each warning (else one line sums them up)."""
    return warnings == "all" or devices <= LIST_WARNINGS_UP_TO


def print_names(records: "list[dict[str, Any]]", list_warnings: bool) -> None:
    """``lookup -o name`` of records (``Resolution.to_dict()``'s shape), for
    both paths: the names on stdout (an empty line if not advertised, even
    for a name kubelet refuses), the warnings on stderr, one line each
    (``list_warnings``) or one summing them up by code; all printable."""
    out, err = sys.stdout, sys.stderr
    counts: dict[str, int] = {}
    for r in records:
        write_line(r["resource_name"] if r["advertised"] else "", out)
        for w in r["warnings"]:
            if list_warnings:
                write_line(f"{PROGRAM}: {r['device']}: {w['code']}: {w['message']}", err)
            else:
                counts[w["code"]] = counts.get(w["code"], 0) + 1
    if counts:
        err.write(warnings_summary(counts, len(records)))


def warnings_summary(counts: "dict[str, int]", devices: int) -> str:
    """The one stderr line that sums up the warnings of a large lookup."""
    total = sum(counts.values())
    by_code = ", ".join(f"{code} {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return f"{PROGRAM}: {total} warning{'s' if total > 1 else ''} for {devices} devices ({by_code}); --warnings all lists them\n"


def _bulk(table: "answers.Table", devices: "list[str]") -> "int | None":
    """:func:`print_names` of many devices, warnings summed up, from every row
    read at once, when each is spelt ``10de:dddd`` or ``dddd`` and every name
    is printable ASCII; else None, having written nothing."""
    ids = table.devices()
    known = dict(zip(ids, range(len(ids))))
    found = list(map(known.get, map(str.removeprefix, devices, [answers.NVIDIA_VENDOR_ID + ":"] * len(devices))))
    if None in found or sys.byteorder != "little":
        return None
    fields = answers.index()["fields"]  # type: ignore[index]
    resource, advertised, warnings = (fields.index(k) for k in ("resource_name", "advertised", "warnings"))
    rows = table.every_row()
    names = b"\n".join(answers.utf8_strings([(rows[i][advertised] and rows[i][resource]) or 0 for i in found]))  # type: ignore[index]
    if names.translate(None, _ASCII_PRINTABLE) != b"\n" * (len(found) - 1):
        return None
    sys.stdout.write(names.decode("ascii") + "\n")
    warned = [code for i in found for code, _ in rows[i][warnings]]  # type: ignore[index]
    if warned:
        sys.stderr.write(warnings_summary({code: warned.count(code) for code in set(warned)}, len(found)))
    return 0 if all(rows[i][advertised] for i in found) else 1  # type: ignore[index]
