"""The pci.ids grammar: pciutils' rules, issues, and agreement with the fast loader.

Three oracles: hand-written expectations for each rule (checked against
lspci 3.9 by hand), pciutils itself (``lspci -i FILE`` stops at the first
malformed line and says which), and the structure a generator put into a
file. The grammar and :mod:`pciname.pciids.loader` must build equal
databases and report equal issues on everything.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st

from pciname.errors import PciIdsSyntaxError
from pciname.pciids import grammar, loader
from pciname.pciids.model import Device, DeviceClass, PciDatabase, ProgIf, Subclass, Subsystem, SyntaxIssue, Vendor
from tests.conftest import REAL_PCIIDS_FILES as REAL_FILES, needs_lspci
from tests.pciids.pciids_strategies import well_formed

LSPCI = shutil.which("lspci")


def parse(data: bytes) -> PciDatabase:
    """The grammar's database, after checking the loader builds the same."""
    db = grammar.parse_bytes(data)
    fast = loader.load_bytes(data)
    assert fast.issues == db.issues
    assert fast == db
    return db


def issues(data: bytes) -> list[tuple[int, int, str]]:
    return [(i.line, i.column, i.message) for i in parse(data).issues]


# -- one device dump for lspci: it reads the names file only when it has a name to look up

_DUMP_LINES = [
    "00:00.0 x",
    "00: de 10 36 22 00 00 00 00 00 00 00 03 00 00 00 00",
    "10: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
    "20: 00 00 00 00 00 00 00 00 00 00 00 00 de 10 2f 15",
    "30: 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00",
]


@pytest.fixture(scope="module")
def lspci_verdict(tmp_path_factory):
    """``verdict(data)`` -> lspci's complaint about a pci.ids file ('' if none)."""
    assert LSPCI is not None  # the tests that use it are marked needs_lspci
    workdir = tmp_path_factory.mktemp("lspci-verdict")
    dump = workdir / "one.dump"
    dump.write_text("\n".join(_DUMP_LINES) + "\n")
    ids = workdir / "t.ids"

    def verdict(data: bytes) -> str:
        ids.write_bytes(data)
        done = subprocess.run(
            [LSPCI, "-i", str(ids), "-F", str(dump), "-O", "hwdb.disable=1", "-vmm"],
            capture_output=True,
            timeout=30,
        )
        complaint = done.stderr.decode("utf-8", "replace").strip()
        assert (done.returncode != 0) == bool(complaint), complaint
        return complaint.replace(str(ids), "FILE")

    return verdict


def expected_verdict(db: PciDatabase) -> str:
    if not db.issues:
        return ""
    first = db.issues[0]
    return f"lspci: {first.message} at FILE, line {first.line}"


# -- the rules, one by one -----------------------------------------------------------

PE, TL, DUP, NOV = "Parse error", "Line too long", "Duplicate entry", "Vendor does not exist"

RULES = [
    # (what, file, issues as (line, column, message))
    ("vendor and device", b"10de NVIDIA\n\t2236 GA102GL [A10]\n", []),
    ("tab separators, upper-case hex", b"10DE\tNV\n\t2236\tA10\n\t\t10DE\t152F\tsub\n", []),
    ("extra blanks before the name", b"10de \t  NV\n", []),
    ("missing name", b"10de\n", [(1, 5, PE)]),
    ("only a blank for a name", b"10de  \n", [(1, 6, PE)]),
    ("blanks for a name", b"10de \t \n", [(1, 7, PE)]),
    ("bad hex points at the bad digit", b"10dg NV\n", [(1, 4, PE)]),
    ("no blank after the id", b"10deNV\n", [(1, 5, PE)]),
    ("leading space is not nesting", b" 10de NV\n", [(1, 1, PE)]),
    ("short device id", b"10de NV\n\t22 x\n", [(2, 4, PE)]),
    ("device name missing", b"10de NV\n\t2236\n", [(2, 6, PE)]),
    ("subsystem: second id bad", b"10de NV\n\t2236 A\n\t\t10de 15x2 s\n", [(3, 10, PE)]),
    ("subsystem: blank between ids missing", b"10de NV\n\t2236 A\n\t\t10de_152f s\n", [(3, 7, PE)]),
    ("subsystem: no name", b"10de NV\n\t2236 A\n\t\t10de 152f\n", [(3, 12, PE)]),
    ("class, subclass, prog-if", b"C 03 Display\n\t00 VGA\n\t\t00 VGA controller\n", []),
    ("class id short", b"C 3 x\n", [(1, 4, PE)]),
    ("class id long", b"C 030 x\n", [(1, 5, PE)]),
    ("class without name", b"C 03\n", [(1, 5, PE)]),
    ("'C' and a tab is a bad vendor line", b"C\t03 x\n", [(1, 2, PE)]),
    ("lower-case c is a bad vendor line", b"c 03 x\n", [(1, 2, PE)]),
    ("subclass id is two digits", b"C 03 D\n\t0000 x\n", [(2, 4, PE)]),
    ("generic block", b"10de NV\nS 10dE\n\t152f Generic\n", []),
    ("generic block, one trailing blank allowed", b"10de NV\nS 10de \n\t152f G\n", []),
    ("generic block, two trailing blanks", b"10de NV\nS 10de  \n\t152f G\n", [(2, 7, PE)]),
    ("generic block, text after the id", b"10de NV\nS 10de x\n", [(2, 7, PE)]),
    ("generic block of an unknown vendor", b"S 10de\n\t152f G\n10de NV\n", [(1, 3, NOV)]),
    ("nothing nests under a generic subsystem", b"10de NV\nS 10de\n\t152f G\n\t\t0000 0000 x\n", [(4, 1, PE)]),
    ("unknown block: anything nested is ignored", b"X foo\n\tjunk\n\t\t\t\tjunk\n10de NV\n", []),
    ("unknown block needs the space", b"X\n", [(1, 1, PE)]),
    ("'X ' loses its only blank", b"X \n", [(1, 1, PE)]),
    ("'X  ' keeps one", b"X  \n\tjunk\n", []),
    ("level 3", b"10de NV\n\t2236 A\n\t\t\t10de 0000 x\n", [(3, 1, PE)]),
    ("comments at any level, blank lines", b"10de NV\n\t\t\t# c\n \t # c\n\t\n   \n\t2236 A\n", []),
    ("level 1 with no block", b"\t2236 A\n\t\t10de 0000 skipped with it\n10de NV\n", [(1, 1, PE)]),
    ("level 2 under a vendor line", b"10de NV\n\t\t10de 0000 x\n", [(2, 1, PE)]),
    ("duplicate vendor (ids compare as numbers)", b"10de NV\n10DE NV2\n\t2236 skipped\n", [(2, 1, DUP)]),
    ("duplicate device", b"10de NV\n\t2236 A\n\t2236 B\n\t\t10de 0000 skipped\n", [(3, 2, DUP)]),
    ("duplicate subsystem", b"10de NV\n\t2236 A\n\t\t10de 0001 a\n\t\t10DE 0001 b\n", [(4, 3, DUP)]),
    ("duplicate class", b"C 03 D\nC 03 E\n\t00 skipped\n", [(2, 3, DUP)]),
    ("duplicate subclass", b"C 03 D\n\t00 V\n\t00 W\n\t\t00 skipped\n", [(3, 2, DUP)]),
    ("duplicate prog-if", b"C 03 D\n\t00 V\n\t\t00 a\n\t\t00 b\n", [(4, 3, DUP)]),
    ("duplicate generic subsystem", b"10de NV\nS 10de\n\t0001 a\nS 10de\n\t0001 b\n", [(5, 2, DUP)]),
    ("prog-if right under the class line", b"C 03 D\n\t\t01 a\n\t00 V\n\t\t00 b\n", []),
    ("... collides with subclass 00's", b"C 03 D\n\t\t00 a\n\t00 V\n\t\t00 b\n", [(4, 3, DUP)]),
    ("a bad vendor line takes its devices along", b"10dx NV\n\t2236 A\n\t\t10de 0 x\n1234 B\n\t0001 b\n", [(1, 4, PE)]),
    ("a bad device line takes its subsystems", b"10de NV\n\t22 A\n\t\t10de 0 x\n\t2236 B\n", [(2, 4, PE)]),
    ("every bad line is reported", b"10de NV\n\t22 A\n\tzz B\n\t2236\n", [(2, 4, PE), (3, 2, PE), (4, 6, PE)]),
]


@pytest.mark.parametrize("data, expected", [pytest.param(d, e, id=w) for w, d, e in RULES])
def test_rule(data, expected):
    assert issues(data) == expected


@needs_lspci
def test_rules_agree_with_lspci(lspci_verdict):
    for what, data, _ in RULES:
        assert lspci_verdict(data) == expected_verdict(parse(data)), what


def test_what_the_rules_build():
    db = parse(
        b"10DE \t NVIDIA Corporation \n"
        b"\t2236\tGA102GL [A10]\t\n"
        b"\t\t10de 152F\t A10  \n"
        b"S 10de\n"
        b"\t1234 Generic\n"
        b"C 03 Display controller\n"
        b"\t\t01 orphan\n"
        b"\t02 3D controller\n"
        b"\t00 VGA compatible controller\n"
        b"\t\t00 VGA controller\n"
    )
    assert db.vendors == {
        "10de": Vendor(
            "10de",
            "NVIDIA Corporation",
            {"2236": Device("2236", "GA102GL [A10]", {("10de", "152f"): Subsystem("10de", "152f", "A10 ")})},
        )
    }
    assert db.generic_subsystems == {("10de", "1234"): "Generic"}
    assert db.classes == {
        "03": DeviceClass(
            "03",
            "Display controller",
            {
                "00": Subclass(
                    "00",
                    "VGA compatible controller",
                    {"01": ProgIf("01", "orphan"), "00": ProgIf("00", "VGA controller")},
                ),
                "02": Subclass("02", "3D controller"),
            },
        )
    }
    # Without a subclass 00 line, the prog-if holder has no name.
    assert parse(b"C 03 D\n\t\t01 orphan\n").classes["03"].subclasses["00"] == Subclass(
        "00", "", {"01": ProgIf("01", "orphan")}
    )


def test_header_version_and_date():
    db = parse(b"#\n#\tList of PCI ID's\n#\n#\tVersion: 2026.10.24 \n#\tDate:    2026-10-24 03:15:02\n#\n10de NV\n")
    assert (db.version, db.date) == ("2026.10.24", "2026-10-24 03:15:02")
    # Only before the first entry, and the first one counts.
    db = parse(b"# Version: 1\n# Version: 2\n10de NV\n# Date: 3\n")
    assert (db.version, db.date) == ("1", None)
    db = parse(b"10de NV\n")
    assert (db.version, db.date) == (None, None)
    # A bad line ends the header as an entry would.
    db = parse(b"zz\n# Version: 1\n")
    assert db.version is None


# -- lines as pciutils reads them: fgets into 1024 bytes -----------------------------


def test_line_of_1022_bytes_is_fine_1023_is_too_long():
    ok = b"#" + b"x" * 1021
    assert len(ok) == 1022 and issues(b"10de NV\n" + ok + b"\n\t2236 A\n") == []
    long = b"#" + b"x" * 1022
    # the rest of it ("\n") is read as the next (blank) line
    assert issues(b"10de NV\n" + long + b"\n\t2236 A\n") == [(2, 1024, TL)]


def test_last_line_without_newline():
    assert issues(b"10de NV\n#" + b"x" * 1021) == []
    assert issues(b"10de NV\n#" + b"x" * 1022) == [(2, 1024, TL)]
    assert parse(b"10de NV\n\t2236 A10").vendors["10de"].devices["2236"].name == "A10"


def test_line_too_long_counts_bytes_and_reads_the_rest_as_lines():
    # 600 two-byte characters: 1200 bytes; the first 1023 bytes end inside a character.
    line = b"# " + "\u00e9".encode() * 600
    found = parse(b"10de NV\n" + line + b"\n\t2236 A\n1234 B\n\t0001 b\n")
    # "# ", 510 whole characters, 1 broken byte: column one past them; the
    # rest of the comment (starting with the other half) is line 3, a bad
    # top-level line that takes device 2236 along.
    assert [(i.line, i.column, i.message) for i in found.issues] == [(2, 2 + 510 + 1 + 1, TL), (3, 1, PE)]
    assert found.vendors["10de"].devices == {} and "0001" in found.vendors["1234"].devices
    # Text after \r is not part of the line, but fgets still reads it, 1023 bytes at a time.
    data = b"10de NV\n\t2236 A\r" + b"y" * 1100 + b"\n"
    assert issues(data) == [(3, 1, PE)]
    # ... so a device line can hide there, 1023 bytes into a line.
    data = b"10de NV\n\t2236 A\r" + b"y" * 1015 + b"\t2237 B\n\t2238 C\n"
    assert issues(data) == []
    assert [d.name for d in parse(data).vendors["10de"].devices.values()] == ["A", "B", "C"]


@needs_lspci
def test_line_rules_agree_with_lspci(lspci_verdict):
    cases = [
        b"10de NV\n#" + b"x" * 1021 + b"\n\t2236 A\n",
        b"10de NV\n#" + b"x" * 1022 + b"\n\t2236 A\n",
        b"10de NV\n#" + b"x" * 1021,
        b"10de NV\n#" + b"x" * 1022,
        b"10de NV\n# " + "\u00e9".encode() * 600 + b"\n\t2236 A\n",
        b"10de NV\n\t2236 A\r" + b"y" * 1100 + b"\n",
        b"10de NV\n\t2236 A\r" + b"y" * 1015 + b"\t2237 B\n\t2238 C\n",
        b"10de NV\x00junk\n\t2236 A\n",
        b"10de NV\n\t2236 A10\x00junk",
        b"10de NV\r\t2236 A10\r",
        b"10de NV\n" + b"1234 " + b"v" * 1100 + b"\n\t0001 x\n",
    ]
    for data in cases:
        assert lspci_verdict(data) == expected_verdict(parse(data)), data[:40]


def test_too_long_entry_skips_what_it_nests_a_too_long_comment_does_not():
    long_vendor = b"1234 " + b"v" * 1100
    found = parse(b"10de NV\n" + long_vendor + b"\n\t0001 x\n10df W\n\t0001 y\n")
    assert [(i.line, i.message) for i in found.issues] == [(2, TL), (3, PE)]  # line 3: the rest, "vvv..."
    assert found.vendors["10de"].devices == {} and "0001" in found.vendors["10df"].devices
    found = parse(b"10de NV\n#" + b"c" * 1100 + b"\n\t0001 x\n")
    assert [(i.line, i.message) for i in found.issues] == [(2, TL), (3, PE)]


def test_nul_byte():
    # pciutils sees the line end early with no newline: "Line too long".
    assert issues(b"10de NV\x00junk\n\t2236 A\n") == [(1, 8, TL)]
    # ... except on the last line, where it just ends the text.
    assert parse(b"10de NV\n\t2236 A10\x00junk").vendors["10de"].devices["2236"].name == "A10"


def test_carriage_returns():
    db = parse(b"# Version: 1\r\n10de NV \r\n\t2236 A10\r\n")
    assert db.version == "1" and db.vendors["10de"].name == "NV" and db.vendors["10de"].devices["2236"].name == "A10"
    # A lone \r ends the text but not the line: the device is never seen.
    assert parse(b"10de NV\r\t2236 A10\r").vendors["10de"].devices == {}


def test_invalid_utf8_names_keep_their_bytes():
    db = parse(b"10de N\xff\xfeV \xc3\n\t2236 \xe2\x82\n")
    assert db.vendors["10de"].name.encode("utf-8", "surrogateescape") == b"N\xff\xfeV \xc3"
    assert db.vendors["10de"].devices["2236"].name.encode("utf-8", "surrogateescape") == b"\xe2\x82"


def test_strict_loader_raises_the_first_issue():
    with pytest.raises(PciIdsSyntaxError) as raised:
        loader.load_bytes(b"10de NV\n\t22 A\n\tzz B\n", strict=True)
    assert raised.value.issue == SyntaxIssue(2, 4, PE)
    assert str(raised.value) == "<pci.ids>:2:4: Parse error"


def test_line_expressions_on_their_own():
    found = grammar.SUBSYSTEM_LINE.parse_string("\t\t10DE 152F  name\t")
    assert (found["subvendor"], found["subdevice"], found["name"]) == ("10de", "152f", "name\t")
    found = grammar.TOP_LEVEL_LINE.parse_string("C 0C Serial bus controller")
    assert (found["class"], found["name"]) == ("0c", "Serial bus controller")
    with pytest.raises(Exception) as raised:
        grammar.VENDOR_LINE.parse_string("10dX NV")
    assert raised.value.loc == 3
    assert [line.number for line in grammar.read_lines(b"a\nb\r\nc")] == [1, 2, 3]


def test_check_bytes_report():
    report = grammar.check_bytes(
        b"# Version: 7\n10de NV\n\t2236 A\n\t\t10de 0001 s\n\t\t10de 0002 t\n\t2237 B\n"
        b"S 10de\n\t0003 g\nC 03 D\n\t00 V\n\t\t00 p\nC 0c S\n"
    )
    assert report.ok and report.version == "7" and report.date is None
    assert (report.vendors, report.devices, report.subsystems, report.generic_subsystems) == (1, 2, 2, 1)
    assert (report.classes, report.subclasses, report.prog_ifs) == (2, 1, 1)
    report = grammar.check_bytes(b"10de NV\n\tzz\n")
    assert not report.ok and report.issues == [SyntaxIssue(2, 2, PE)]


# -- the real files ------------------------------------------------------------------------


def _compare_file(path: str) -> tuple[str, bool, int, int, str | None]:
    data = Path(path).read_bytes()
    slow, fast = grammar.parse_bytes(data), loader.load_bytes(data)
    return path, slow == fast, len(slow.vendors), len(slow.issues), slow.version


def test_grammar_and_loader_agree_on_every_real_file():
    workers = min(len(REAL_FILES), max(1, len(os.sched_getaffinity(0))))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(_compare_file, map(str, REAL_FILES)))
    for path, equal, vendors, found, _version in results:
        assert equal, path
        assert vendors >= 1 and found == 0, path
    versions = {Path(path).name: version for path, _, _, _, version in results}
    assert versions["pci.ids_0.0~2026.10.24-1"] == "2026.10.24"
    assert versions["2019-08-14.ids"] is None


@needs_lspci
def test_lspci_accepts_every_real_file(lspci_verdict):
    for path in REAL_FILES:
        assert lspci_verdict(path.read_bytes()) == "", path


# -- generated files (well_formed: tests/pciids/pciids_strategies.py) -------------------------------

_JUNK = [b"\t", b" ", b"\r", b"\0", b"\xff", b"\xc3", b"#", b"C ", b"S ", b"X ", b"0", b"F", b"g", b"\t\t\t", b"\n"]


@st.composite
def damaged(draw) -> bytes:
    """A valid file with a few mutations: stray tabs, CRs, NULs, invalid
    UTF-8, long lines, duplicated, lost, moved or cut lines."""
    data, _ = draw(well_formed())
    lines = data.split(b"\n")
    for _ in range(draw(st.integers(1, 4))):
        i = draw(st.integers(0, len(lines) - 1))
        line = lines[i]
        op = draw(st.sampled_from(["insert", "delete", "dup", "twin", "drop", "long", "cut", "junk", "move"]))
        if op == "insert":
            at = draw(st.integers(0, len(line)))
            lines[i] = line[:at] + draw(st.sampled_from(_JUNK)) + line[at:]
        elif op == "delete" and line:
            at = draw(st.integers(0, len(line) - 1))
            lines[i] = line[:at] + line[at + draw(st.integers(1, 3)) :]
        elif op == "dup":
            lines.insert(draw(st.integers(0, len(lines))), line)
        elif op == "twin":  # right after itself: a duplicate in the same block
            lines.insert(i + 1, line.upper() if draw(st.booleans()) else line)
        elif op == "drop" and len(lines) > 1:
            del lines[i]
        elif op == "long":
            size = draw(st.sampled_from([1021, 1022, 1023, 1024, 1500, 2046, 2047, 2048, 3100]))
            filler = draw(st.sampled_from([b"x", b"\t", b" ", b"\xc3\xa9", b"1"]))
            lines[i] = (line + filler * size)[: size + draw(st.integers(0, 2))]
        elif op == "cut":
            lines[i] = line[: draw(st.integers(0, len(line)))]
        elif op == "junk":
            lines.insert(i, draw(st.binary(max_size=12)))
        elif op == "move":
            lines.insert(draw(st.integers(0, len(lines))), lines.pop(i))
    return b"\n".join(lines)


_SYNTAX_BYTES = st.lists(
    st.sampled_from(
        [b"0", b"1", b"a", b"F", b"g", b" ", b"\t", b"\n", b"\r", b"#", b"C", b"S", b"X", b"\0", b"\xff", b"\xc3"]
    ),
    max_size=60,
).map(b"".join)

ANY_INPUT = st.one_of(damaged(), st.binary(max_size=200), _SYNTAX_BYTES)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(well_formed())
def test_generated_valid_files_give_what_they_hold(case):
    data, expected = case
    db = parse(data)
    assert db.issues == []
    assert db == expected


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANY_INPUT)
def test_grammar_and_loader_agree_on_any_input(data):
    db = parse(data)
    for issue in db.issues:
        assert issue.line >= 1 and issue.column >= 1
        assert issue.message in (PE, TL, DUP, NOV)
    lines = sorted(issue.line for issue in db.issues)
    assert lines == sorted(set(lines))  # at most one issue per line


@needs_lspci
@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(data=ANY_INPUT)
def test_first_issue_is_where_lspci_stops(lspci_verdict, data):
    assume(not data.startswith(b"\x1f\x8b"))  # lspci would read it as gzip
    assert lspci_verdict(data) == expected_verdict(parse(data))


# -- large inputs: line by line, one pattern match a well-formed line ------------------------

_LINE_CHARS = st.sampled_from(["0", "1", "a", "F", "g", "C", "S", "X", " ", "\t", "#", "é", "\x0b", "\udcff", "["])


@settings(max_examples=600, deadline=None)
@given(
    st.sampled_from(range(len(grammar.FORMS))),
    st.sampled_from(["", "\t", "\t\t", "C ", "S ", "\t\t10de", "10de", "\t2236"]),
    st.text(_LINE_CHARS, max_size=14),
)
def test_each_form_accepts_what_its_expression_accepts(which, prefix, rest):
    """The forms are the fast path: a form must accept exactly the lines its
    pyparsing expression accepts, with the same fields."""
    expr, form = grammar.FORMS[which]
    text = prefix + rest
    try:
        expected = expr.parse_string(text).as_dict()
    except Exception:  # noqa: BLE001 - any failure to parse is what is compared
        expected = None
    found = form.re.match(text)
    if expected is None:
        assert found is None, text
    else:
        assert found is not None, text
        fields = found.groupdict()
        assert {k: v.lower() if k != "name" else v for k, v in fields.items()} == expected


def _count_parses(monkeypatch) -> list[str]:
    import pyparsing as pp

    calls: list[str] = []
    original = pp.ParserElement.parse_string

    def counting(self, instring, *args, **kwargs):
        calls.append(instring)
        return original(self, instring, *args, **kwargs)

    monkeypatch.setattr(pp.ParserElement, "parse_string", counting)
    return calls


def test_well_formed_lines_never_run_pyparsing(monkeypatch):
    """check is linear: a well-formed line costs one pattern match, no
    pyparsing parse; the whole file is never parsed at once."""
    from tests.conftest import DEBIAN_SID

    calls = _count_parses(monkeypatch)
    data = DEBIAN_SID.read_bytes()
    report = grammar.check_bytes(data)
    assert report.ok and report.devices > 10_000
    assert grammar.check_bytes(b"\n" * 50_000 + b"# c\n\t# c\n" * 1000).ok
    assert calls == []


def test_malformed_lines_run_pyparsing_once_each(monkeypatch):
    calls = _count_parses(monkeypatch)
    lines = [
        b"10de NV",
        b"\t2236 A",
        b"\t\t10de 0001",  # 3: no name
        b"\t22",  # 4: short id
        b"\t\t10de 0002 x",  # under a bad device line: skipped
        b"\t\t\tdeep",  # 6: nested too deep
        b"10dX NV",  # 7
        b"\tffff x",  # in a bad block: skipped
        b"C zz x",  # 9
        b"S 10de x",  # 10
        b"10de again",  # 11: duplicate
        b"X unknown",
        b"\tanything",
    ]
    db = parse(b"\n".join(lines) + b"\n")
    assert [i.line for i in db.issues] == [3, 4, 6, 7, 9, 10, 11]
    # One pyparsing parse per malformed line whose context has an
    # expression, of that line alone; a line that may not stand where it
    # does needs none (column 1), nor does a duplicate (its form matched).
    assert calls == [lines[n - 1].decode() for n in (3, 4, 7, 9, 10)]


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(ANY_INPUT, st.integers(1, 40))
def test_blocks_of_any_size_read_the_same(data, block):
    """The grammar decodes the file a block at a time (never all of it at
    once); where blocks end does not matter."""
    expected = grammar.parse_bytes(data)
    saved = grammar._BLOCK_BYTES
    grammar._BLOCK_BYTES = block
    try:
        assert grammar.parse_bytes(data) == expected
        assert grammar.parse_bytes(data).issues == expected.issues
    finally:
        grammar._BLOCK_BYTES = saved


def test_large_file_of_blank_lines_and_long_lines():
    data = b"\n" * 200_000 + b"10de NV\n" + b"x" * 5000 + b"\n\t2236 A\n"
    db = parse(data)
    # 5000 bytes: four reads of 1023 too long, then the rest, a bad vendor line
    assert [(i.line, i.message) for i in db.issues] == [*((n, TL) for n in range(200_002, 200_006)), (200_006, PE)]
    assert db.vendors["10de"].devices == {}
