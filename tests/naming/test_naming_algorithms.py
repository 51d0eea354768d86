"""The four algorithms and Go's text semantics, on crafted and generated files."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, example, given, settings, strategies as st

from pciname.naming import gotext
from pciname.naming.algorithms import (
    ALGORITHMS,
    REFERENCE,
    VENDOR_SECTION,
    WHOLE_FILE_2019,
    WHOLE_FILE_ANCHORED,
    WHOLE_FILE_UPPER,
    NameIndex,
    clean_2019,
    clean_upper,
)


def lines(text: str) -> list[str]:
    return gotext.scan_lines(text)


def name(algorithm: str, text: str, device_id: str) -> str:
    """Both implementations, which must agree; returns the name."""
    reference = REFERENCE[algorithm](lines(text), device_id)
    assert NameIndex(lines(text), algorithm).name(device_id) == reference
    return reference


# -- Go text semantics ----------------------------------------------------------


def test_scan_lines_splits_on_newline_only_and_drops_one_cr():
    text = "a\r\nb\vc\fd\x1ce\x85f\u2028g\r\r\nlast"
    assert lines(text) == ["a", "b\vc\fd\x1ce\x85f\u2028g\r", "last"]
    assert lines("x\n") == ["x"]
    assert lines("x\n\n") == ["x", ""]
    assert lines("") == []


def test_scan_lines_stops_at_a_line_of_64_kib():
    ok = "a" * (64 * 1024 - 1)
    assert lines(f"one\n{ok}\nthree") == ["one", ok, "three"]
    too_long = "a" * (64 * 1024)
    assert lines(f"one\n{too_long}\nthree") == ["one"]
    # Counted in bytes, not characters: 21,846 three-byte characters.
    wide = "\u20ac" * 21846
    assert lines(f"one\n{wide}\nthree") == ["one"]


def test_trim_space_is_go_unicode_isspace():
    assert gotext.trim_space("\t\v\f\r\n \x85\xa0\u1680\u2000\u200a\u2028\u2029\u202f\u205f\u3000x\u3000 ") == "x"
    # Python's strip() also removes \x1c-\x1f; Go's TrimSpace does not.
    assert gotext.trim_space("\x1cx\x1f") == "\x1cx\x1f"
    assert gotext.trim_space("\u200bx") == "\u200bx"  # zero-width space is not white space


def test_to_upper_is_simple_case_mapping():
    assert gotext.to_upper("abc ß ﬁ ŉ ı ſ é") == "ABC ß ﬁ ŉ I S É"
    assert gotext.to_upper("\udcff") == "\udcff"  # an invalid byte stays what it was


def test_go_regexp_spaces_are_ascii_only():
    assert gotext.spaces_to_underscore("a \t\n\f\rb\vc\xa0d\u3000e") == "a_b\vc\xa0d\u3000e"


def test_clean_functions():
    assert clean_upper(" GA102GL [A10] ") == "GA102GL_A10"
    assert clean_upper("TU106 [GeForce RTX 2060 Rev. A]") == "TU106_GEFORCE_RTX_2060_REV__A"
    assert clean_upper("Straße ﬁne ıs ſ") == "STRAE_NE_IS_S"
    assert clean_2019("TU104GL [Tesla T4]") == "TU104GL_Tesla_T4"
    assert clean_2019("a.b/c") == "abc"
    assert clean_upper("x\v y\xa0z") == "X_YZ"
    assert clean_upper("GA104 [RTX A4500 Embedded GPU ]") == "GA104_RTX_A4500_EMBEDDED_GPU_"


# -- whole-file algorithms ------------------------------------------------------------

FILE = """\
# comment mentioning 2236 here
10de  NVIDIA Corporation
\t2236  GA102GL [A10]
"""


def test_whole_file_takes_any_line_even_comments():
    assert name(WHOLE_FILE_2019, FILE, "2236") == "here"
    assert name(WHOLE_FILE_UPPER, FILE, "2236") == "HERE"
    assert name(WHOLE_FILE_ANCHORED, FILE, "2236") == "GA102GL_A10"
    assert name(VENDOR_SECTION, FILE, "2236") == "GA102GL_A10"


def test_id_twice_on_the_first_line_ends_the_search_empty():
    text = "x 2236 y 2236 z\n\t2236  Good\n"
    for algorithm in (WHOLE_FILE_2019, WHOLE_FILE_UPPER):
        assert name(algorithm, text, "2236") == ""
    # anchored: the two-part check comes before the anchor check
    assert name(WHOLE_FILE_ANCHORED, text, "2236") == ""
    assert name(WHOLE_FILE_ANCHORED, "22362236 a\n2236 b\n", "2236") == ""


def test_anchored_skips_lines_with_text_before_the_id():
    text = "1234 2236 not this\n\t\t10de 2236  Nor this\n2236x  This one\n"
    assert name(WHOLE_FILE_ANCHORED, text, "2236") == "X_THIS_ONE"
    assert name(WHOLE_FILE_UPPER, text, "2236") == "NOT_THIS"


def test_whole_file_subsystem_lines_and_overlaps():
    text = "\t\t10de 1f08  Dell SAS 5/iR Integrated RAID controller\n"
    assert name(WHOLE_FILE_UPPER, text, "1f08") == "DELL_SAS_5_IR_INTEGRATED_RAID_CONTROLLER"
    assert name(WHOLE_FILE_UPPER, "aaaaa x\n", "aaaa") == "A_X"
    assert name(WHOLE_FILE_2019, "no id here\n", "2236") == ""


# -- vendor-section ---------------------------------------------------------------------


@pytest.mark.parametrize(
    "section, expected",
    [
        ("\t2236  GA102GL [A10]\n", "GA102GL_A10"),
        ("# comment\n\t2236  After comment\n", "AFTER_COMMENT"),
        ("\t1111  Other\n\t\t10de 2236  Subsystem\n\t2236  Device\n", "DEVICE"),
        ("\t1111  Other\n\n\t2236  After blank\n", ""),
        ("\t1111  Other\n  2236  Spaces\n", ""),
        ("10df  Next vendor\n\t2236  Not ours\n", ""),
        ("\t22361 Longer id\n", "1_LONGER_ID"),
        ("\t2236\r\n", ""),
        ("\t2236  Name\r\n", "NAME"),
        ("\t2236  Caf\xc3\xa9 \udcff x\n", "CAF__X"),
    ],
)
def test_vendor_section(section, expected):
    text = "0001  First\n\t2236  Wrong vendor\n10de  NVIDIA\n" + section
    assert name(VENDOR_SECTION, text, "2236") == expected


def test_vendor_section_first_10de_prefix_wins():
    text = "10de1  Not a vendor line but starts with 10de\n\t2236  Taken\n10de  NVIDIA\n\t2236  Real\n"
    assert name(VENDOR_SECTION, text, "2236") == "TAKEN"
    assert name(VENDOR_SECTION, "\t2236  no vendor\n", "2236") == ""


def test_invalid_utf8_leaves_no_trace():
    raw = b"10de  NVIDIA\n\t2236  GA\xff\xfe102\xc3 [A10\xed\xa0\x80]\n"
    text = raw.decode("utf-8", "surrogateescape")
    assert name(VENDOR_SECTION, text, "2236") == "GA102_A10"
    assert name(WHOLE_FILE_2019, text, "2236") == "GA102_A10"


# -- generated files: the index must equal the reference ----------------------------

IDS = ("2236", "1f08", "10de", "aaaa", "0000")
PIECES = st.sampled_from(
    [
        *IDS,
        "10de",
        "\t",
        "\t\t",
        " ",
        "  ",
        "#",
        "\r",
        "\v",
        "\x85",
        "\xa0",
        "\u3000",
        "ß",
        "ı",
        ".",
        "/",
        "[",
        "]",
        "a",
        "B",
        "7",
        "\udcff",
        "x",
        "GA102GL",
    ]
)
LINE = st.lists(PIECES, max_size=8).map("".join)
FILES = st.lists(LINE, max_size=30).map("\n".join)


@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(text=FILES, device_id=st.sampled_from(IDS))
@example(text="10de\n\t2236 x", device_id="2236")
def test_index_equals_reference_on_generated_files(text, device_id):
    file_lines = lines(text)
    for algorithm in ALGORITHMS:
        index = NameIndex(file_lines, algorithm)
        assert index.name(device_id) == REFERENCE[algorithm](file_lines, device_id), algorithm


@settings(max_examples=200, deadline=None)
@given(text=st.text(max_size=300), device_id=st.from_regex(r"[0-9a-f]{4}", fullmatch=True))
def test_index_equals_reference_on_arbitrary_text(text, device_id):
    file_lines = lines(text)
    for algorithm in ALGORITHMS:
        assert NameIndex(file_lines, algorithm).name(device_id) == REFERENCE[algorithm](file_lines, device_id)


@settings(max_examples=200, deadline=None)
@given(raw=st.binary(max_size=400))
def test_any_bytes_give_a_clean_name(raw):
    text = raw.decode("utf-8", "surrogateescape")
    for algorithm in ALGORITHMS:
        for device_id in ("2236", "0000"):
            result = NameIndex(lines(text), algorithm).name(device_id)
            allowed = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
            if algorithm != WHOLE_FILE_2019:
                allowed.add(".")
            assert set(result) <= allowed
