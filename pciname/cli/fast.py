"""The fast path of ``pciname lookup``: plain lookups answered from a small
per-profile answer table, importing almost nothing.

``pciname lookup DEVICE... [-p PROFILE] [-o name|json]`` is what people and
scripts run most; argparse, typing, pathlib and the catalog machinery cost
several times ``python -c pass`` before the answer is printed. So a plain
lookup reads the answer table (:mod:`pciname.answers`) of its profile
spelling: for every NVIDIA device id the profile knows, the fields of its
record, and the fields every record of the profile shares; and prints
exactly what the full path prints. The package carries the tables of every
packaged profile (so even a first run on an empty cache builds nothing);
for any other spelling, the full path (:func:`pciname.cli.core.run_lookup`),
after answering a plain lookup, saves its table in the cache.

:func:`lookup` answers only when it can answer exactly as argparse and the
full path would; for anything else (another shape of command line, a device
outside the table, a non-NVIDIA vendor, no valid table) it returns None and
the caller runs the full path, which owns --help, every error and every
other command.

A cached table follows the trust model of :mod:`pciname.catalog`'s tables: it is
believed only from a trusted cache dir, as a regular file of this user of
at most :data:`pciname.answers.MAX_ANSWERS_BYTES`, opened
O_NOFOLLOW|O_NONBLOCK, starting with :data:`pciname.answers.MAGIC` and a
BLAKE2b digest of its index that matches (the
index holds a BLAKE2b digest of each row, checked when the row is read), and whose
payload names this code (version, package dir, the identity of every source
file the answers depend on) and the identity of every data file they come
from (profiles.json, the packaged snapshots and their manifest, the embedded
pci.ids). Anything else is "not here": the full path answers and rewrites
it. Written to a mkstemp file and renamed into place; writing one removes
the tables that can never be believed again (:func:`prune`).

This module imports only ``os``, ``sys`` and :mod:`pciname.answers` at the
top (and ``_blake2`` to check a table): the writer's imports are inside
:func:`save`.
No ``from __future__ import annotations`` either (importing ``__future__``
costs start-up time): annotations naming type-only imports are strings.
"""

import os
import sys

from .. import answers
from .._version import __version__

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence
    from typing import Any

    from ..resolver import ProfileView

FORMAT = answers.FORMAT
_SUFFIX = ".answers"

#: What the answers depend on, relative to the package dir: a change to any
#: of these files gives them a new identity and the table is not believed.
CODE_FILES = (
    "_version.py",
    "paths.py",
    "files.py",
    "errors.py",
    "catalog.py",
    "snapshots.py",
    "resolver.py",
    "naming/algorithms.py",
    "naming/checks.py",
    "naming/gotext.py",
    "naming/profiles.py",
    "pciids/ids.py",
    "pciids/loader.py",
    "pciids/model.py",
    "answers.py",
    "cli/core.py",
    "cli/fast.py",
)
#: The data files, relative to the data dir.
DATA_FILES = ("profiles.json", "pci.ids", "snapshots.sha256", "snapshots.tar.xz")

_OPTIONS = {"-p": "profile", "--profile": "profile", "-o": "output", "--output": "output", "--warnings": "warnings"}
_CHOICES = {"output": ("name", "json"), "warnings": ("auto", "all")}
#: pciname.files.MAX_LOOKUP_DEVICES and MAX_LOOKUP_STDIN_BYTES (files
#: imports typing); a test keeps them equal.
MAX_LOOKUP_DEVICES = 100_000
MAX_LOOKUP_STDIN_BYTES = 64 * MAX_LOOKUP_DEVICES
#: ``lookup -o name`` lists warnings one line each for up to this many
#: devices, and sums them up in one line beyond (``--warnings all``: always
#: listed). The fast path answers only up to this many devices.
LIST_WARNINGS_UP_TO = 20


def package_dir() -> str:
    return answers.package_dir()


data_dir = answers.data_dir


def _untrusted(directory: str) -> bool:
    """:func:`pciname.paths.untrusted_reason` is not None (without pathlib)."""
    try:
        st = os.stat(directory)
    except FileNotFoundError:
        return False
    except OSError:
        return True
    import stat

    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid():
        return True
    return bool(st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX)


def tables_dir() -> str | None:
    """The cache dir's tables/ (as :func:`pciname.paths.cache_dir` finds it),
    or None when it is not to be trusted or not known without pathlib."""
    root = os.environ.get("PCINAME_CACHE_DIR")
    if not root:
        if not sys.platform.startswith("linux"):
            return None
        xdg = os.environ.get("XDG_CACHE_HOME", "").strip()
        base = xdg if os.path.isabs(xdg) else os.path.join(os.path.expanduser("~"), ".cache")
        root = os.path.join(base, "pciname")
    tables = os.path.join(root, "tables")
    if _untrusted(root) or _untrusted(tables):
        return None
    return tables


def table_path(tables: str, spelling: str, package: str) -> str:
    key = answers.digest(repr((FORMAT, __version__, package, spelling)).encode("utf-8", "surrogateescape"))
    return os.path.join(tables, f"{key[:8].hex()}{_SUFFIX}")


def _identity(path: str) -> tuple[int, int, int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def dependencies(package: str) -> list[tuple[str, tuple[int, int, int, int, int] | None]]:
    """Every file the answers depend on, with its identity now."""
    data = data_dir(package)
    paths = [os.path.join(package, name) for name in CODE_FILES] + [os.path.join(data, name) for name in DATA_FILES]
    return [(path, _identity(path)) for path in paths]


def load(spelling: str, *, every_row: bool = False) -> "dict[str, Any] | None":
    """The answer table of a profile spelling: the packaged one, else the
    trusted one in the cache dir, or None; with ``every_row``, a cached
    table only if every row is intact too (else rows are checked as they
    are read)."""
    table = answers.packaged(spelling)
    if table is not None:
        return table
    tables = tables_dir()
    if tables is None:
        return None
    package = package_dir()
    saved = answers.read_table(table_path(tables, spelling, package))
    if saved is None:
        return None
    try:
        if (
            saved["format"] != FORMAT
            or saved["version"] != __version__
            or saved["package"] != package
            or saved["spelling"] != spelling
            or saved["deps"] != dependencies(package)
            or not isinstance(saved["header"], dict)
        ):
            return None
        if every_row and not answers.every_row_intact(saved):
            return None
    except (KeyError, TypeError, ValueError, EOFError):
        return None
    return saved


# -- the command line ---------------------------------------------------------


class Plain:
    """A plain lookup command line, as the fast path reads it."""

    __slots__ = ("devices", "profile", "output", "stdin", "warnings")

    def __init__(self, devices: "list[str]", profile: str, output: str, stdin: bool, warnings: str) -> None:
        self.devices = devices
        self.profile = profile
        self.output = output
        self.stdin = stdin
        self.warnings = warnings


def plain_lookup(argv: "Sequence[str]") -> "Plain | None":
    """The plain lookup ``argv`` is, when the fast path may answer it:
    ``lookup``, then device ids (``VENDOR:DEVICE`` or a bare ``DEVICE``, 4
    hex digits each, optionally 0x-prefixed) in one run, and at most one
    each of ``-p/--profile P`` (P not starting with ``-``), ``-o/--output
    name|json``, ``--warnings auto|all`` and ``--stdin`` (then ``-o name``
    only); else None."""
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
        if ended or _device_id(token) is None:
            return None
        devices.append(token)
        i += 1
    if not devices and not stdin:
        return None
    if stdin and values.get("output", "name") != "name":  # bulk JSON: the full path's
        return None
    return Plain(
        devices, values.get("profile") or "latest", values.get("output", "name"), stdin, values.get("warnings", "auto")
    )


_device_id = answers.device_id
record = answers.record


def warnings_summary(counts: "dict[str, int]", devices: int) -> str:
    """The one stderr line that sums up the warnings of a large lookup."""
    total = sum(counts.values())
    by_code = ", ".join(f"{code} {n}" for code, n in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))
    return (
        f"pciname: {total} warning{'s' if total > 1 else ''} for {devices} devices ({by_code}); "
        "--warnings all lists them\n"
    )


def lookup(argv: "Sequence[str]") -> "int | None":
    """Answer a plain lookup from its answer table (the exit code), or None:
    the full path must run. Prints nothing unless it answers; what it read
    of stdin, it puts back for the full path."""
    plain = plain_lookup(argv)
    if plain is None:
        return None
    devices = plain.devices
    if plain.stdin:
        if sys.stdin is None:
            return None
        data = sys.stdin.buffer.read(MAX_LOOKUP_STDIN_BYTES + 1)
        code = _answer(plain, data)
        if code is None:
            import io

            sys.stdin = io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace")
        return code
    return _answer(plain, None)


def _answer(plain: Plain, data: "bytes | None") -> "int | None":
    devices = plain.devices
    if data is not None:
        if len(data) > MAX_LOOKUP_STDIN_BYTES:
            return None
        devices = devices + data.decode("utf-8", "replace").split()
    if not devices or len(devices) > MAX_LOOKUP_DEVICES:
        return None
    if len(devices) > 64:  # the table first: its ids make parsing a dict look-up
        table = load(plain.profile)
        if table is None:
            return None
        parsed_ids = answers.device_ids(table, devices)
        if parsed_ids is None:
            return None
        ids = parsed_ids
    else:
        ids = []
        for token in devices:
            parsed = _device_id(token)
            if parsed is None or parsed[0] != "10de":
                return None
            ids.append(parsed[1])
        table = load(plain.profile)
        if table is None:
            return None
    try:
        if plain.output == "name" and len(ids) > LIST_WARNINGS_UP_TO and plain.warnings != "all":
            return _summed(table, ids)
        if len(ids) > 64:
            answers.index_positions(table)
        if plain.output == "name":
            fields = table["fields"]
            r_resource, r_advertised, r_warnings = (
                fields.index("resource_name"),
                fields.index("advertised"),
                fields.index("warnings"),
            )
            rows: dict[str, tuple[Any, ...]] = {}
            listing = plain.warnings == "all" or len(ids) <= LIST_WARNINGS_UP_TO
            if len(ids) > 64:
                answers.load_strings(table, messages=listing)
            # Messages are read only if they are printed (codes always are).
            wanted = (r_resource, r_advertised, r_warnings) if listing else (r_resource, r_advertised)
            if len(ids) > 64:
                every = answers.rows_of(table, ids, wanted)
                if every is None:
                    return None
                rows = every
            for i in ids:
                if i not in rows:
                    row = answers.row(table, i, wanted)
                    if row is None:
                        return None
                    rows[i] = row
            found = [rows[i] for i in ids]
            if not all(_printable(row[r_resource]) for row in found) or (
                listing and not all(_printable(m) for row in found for _, m in row[r_warnings])
            ):
                return None  # the full path prints it, escaped (pciname.render.printable)
            out, err = sys.stdout, sys.stderr
            if listing:
                for device_id, row in zip(ids, found):
                    out.write((row[r_resource] or "") + "\n")
                    for code, message in row[r_warnings]:
                        err.write(f"pciname: 10de:{device_id}: {code}: {message}\n")
            else:
                counts: dict[str, int] = {}
                out.write("".join((row[r_resource] or "") + "\n" for row in found))
                for row in found:
                    for code, _ in row[r_warnings]:
                        counts[code] = counts.get(code, 0) + 1
                if counts:
                    err.write(warnings_summary(counts, len(ids)))
            return 0 if all(row[r_advertised] for row in found) else 1
        if len(ids) > 64:
            answers.load_strings(table, messages=True)
        unique = {i: record(table, i) for i in ids}
        records = [unique[i] for i in ids]
    except (KeyError, TypeError, ValueError, IndexError, EOFError):
        return None
    if any(r is None for r in records):
        return None
    sys.stdout.write(json_text(records) + "\n")
    return 0 if all(r["advertised"] for r in records if r is not None) else 1


def _printable(text: "str | None") -> bool:
    """Text this path may print as it is; anything else (a control character
    from a pci.ids name, but also any other character Python does not call
    printable) is left to the full path, which escapes control characters."""
    return text is None or text.isprintable()


def _summed(table: "dict[str, Any]", ids: "list[str]") -> "int | None":
    """``-o name`` of many devices, warnings summed up: from the table's
    column, not its rows."""
    column = answers.column_answers(table, ids)
    if column is None:
        return None
    names, advertised, codes = column
    if not all(_printable(name) for name in names):
        return None
    counts: dict[str, int] = {}
    for found in codes:
        for code in found:
            counts[code] = counts.get(code, 0) + 1
    sys.stdout.write("".join([(name or "") + "\n" for name in names]))
    if counts:
        sys.stderr.write(warnings_summary(counts, len(ids)))
    return 0 if all(advertised) else 1


def json_text(records: "list[dict[str, Any] | None]") -> str:
    """``json.dumps(records, indent=2, ensure_ascii=False)``, as
    :func:`pciname.render.dump_json` writes it, for what records hold
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


# -- writing ------------------------------------------------------------------


def save(spelling: str, view: "ProfileView", deps: "list[tuple[str, tuple[int, int, int, int, int] | None]]") -> bool:
    """Write the answer table of ``spelling`` (which selected ``view``'s
    profile), given the ``deps`` taken before the view was made; False when
    it is not written (untrusted or unwritable cache, a profile whose file
    is not the package's or the embedded one, files changed meanwhile)."""
    from ..catalog import identity_of
    from ..paths import embedded_pciids_path
    from ..pciids.ids import NVIDIA_VENDOR_ID
    from ..resolver import DeviceId
    from ..snapshots import locate

    tables = tables_dir()
    if tables is None or any(identity is None for path, identity in deps if not path.endswith(".py")):
        return False
    profile = view.profile
    source: tuple[object, ...]
    if profile.snapshot is None:
        if profile.kind != "preview":
            return False
        source = identity_of(embedded_pciids_path())
    else:
        location = locate(profile.snapshot)
        if location is None or not location.packaged:
            return False
        real, *stat = identity_of(location.path)
        source = (f"{real}#{location.member}", *stat)
    if view.catalog.identity != source:
        return False
    records = [view.record(DeviceId(NVIDIA_VENDOR_ID, i)) for i in view.universe()]
    extra = {"version": __version__, "package": package_dir(), "spelling": spelling, "deps": deps}
    encoded = answers.encode(records, header_in_index=True, extra=extra)
    if encoded is None or dependencies(package_dir()) != deps:
        return False
    return _write(tables, table_path(tables, spelling, package_dir()), encoded[1])


def _write(tables: str, target: str, blob: bytes) -> bool:
    try:
        os.makedirs(os.path.dirname(tables), mode=0o700, exist_ok=True)
        os.makedirs(tables, mode=0o700, exist_ok=True)
    except OSError:
        return False
    if tables_dir() != tables:  # created by someone else in the meantime
        return False
    if not answers.write_atomically(tables, target, blob):
        return False
    prune(tables, keep=target)
    return True


def prune(tables: str, keep: str) -> list[str]:
    """Remove the answer tables in ``tables`` that can never be believed
    again: those of this package dir written by other code (another version,
    changed files: a reinstall) and those of a package dir that is gone.
    Tables of other installs that still exist are left alone, and so is
    anything that is not a regular answer table file of this user. Returns
    the names removed."""
    package = package_dir()
    current = dependencies(package)
    removed: list[str] = []
    try:
        names = os.listdir(tables)
    except OSError:
        return removed
    for name in names:
        path = os.path.join(tables, name)
        if not name.endswith(_SUFFIX) or name.startswith(".") or path == keep:
            continue
        saved = answers.read_table(path)  # owned regular files only, never through a link
        if saved is None:
            continue
        try:
            owner = saved["package"]
            stale = (
                saved["deps"] != current or saved["version"] != __version__ or saved["format"] != FORMAT
                if owner == package
                else isinstance(owner, str) and not os.path.isdir(owner)
            )
        except (KeyError, TypeError):
            continue
        if stale:
            try:
                os.unlink(path)
            except OSError:
                continue
            removed.append(name)
    return removed
