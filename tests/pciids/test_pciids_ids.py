"""The one id parser (pciname.pciids.ids.device_id): every reader of device
ids (parse_device_id, parse_subsystem_id, the packaged fast path) goes
through it, and it reads ids exactly as the regular expressions it replaced
did (kept here as the oracle: white space around, 0x prefixes, a bare
DEVICE meaning vendor 10de)."""

from __future__ import annotations

import re

import pytest
from hypothesis import example, given, settings, strategies as st

from pciname.errors import InvalidDeviceError
from pciname.pciids.ids import NVIDIA_VENDOR_ID, device_id, parse_device_id, parse_subsystem_id

_HEX4 = r"(?:0[xX])?([0-9a-fA-F]{4})"
PAIR = re.compile(rf"\s*{_HEX4}:{_HEX4}\s*\Z")
BARE = re.compile(rf"\s*{_HEX4}\s*\Z")


def oracle(text: str, bare: bool = True) -> tuple[str, str] | None:
    pair = PAIR.match(text)
    if pair:
        return pair.group(1).lower(), pair.group(2).lower()
    single = BARE.match(text) if bare else None
    return (NVIDIA_VENDOR_ID, single.group(1).lower()) if single else None


IDS = ["2236", "1eb8", "002a", "ffff", "ABCD", "22Z6", "223", "22366"]
TOKENS = st.one_of(
    st.sampled_from(IDS).flatmap(
        lambda d: st.sampled_from(
            [
                f"10de:{d}",
                d,
                f"0x10de:0x{d}",
                f"10DE:{d.upper()}",
                f"1002:{d}",
                f"10de:{d}x",
                f"0X{d}",
                f"0x0x{d}",
                f":{d}",
                f"10de:{d}:",
                f"10de::{d}",
                f"0x{d}:0X{d}",
                f"١٠de:{d}",
                f" 10de:{d}\n",
                f"\u200a{d}\u3000",
                f"10de :{d}",
                f"\t0x{d}",
            ]
        )
    ),
    st.from_regex(r"\s?(0[xX])?[0-9a-fA-F]{0,5}:?(0[xX])?[0-9a-fA-F]{0,5}\s?", fullmatch=True),
    st.text(max_size=12),
)


@settings(max_examples=500, deadline=None)
@given(text=TOKENS)
@example(text="0x12")
@example(text="\x1c10de:2236\x1f")
def test_property_the_parser_reads_ids_as_the_regular_expressions_did(text):
    expected = oracle(text)
    if expected is None:
        with pytest.raises(InvalidDeviceError, match=re.escape(f"malformed device {text!r}: expected VENDOR:DEVICE")):
            parse_device_id(text)
    else:
        assert parse_device_id(text) == expected
    # The fast path reads a token as the command line splits it: no white space around.
    assert device_id(text) == (expected if text == text.strip() else None)
    subsystem = oracle(text, bare=False)
    if subsystem is None:
        with pytest.raises(InvalidDeviceError, match=re.escape(f"malformed subsystem {text!r}: expected SUBVENDOR")):
            parse_subsystem_id(text)
    else:
        assert parse_subsystem_id(text) == subsystem


def test_the_messages_are_the_ones_users_see():
    with pytest.raises(InvalidDeviceError) as error:
        parse_device_id("zz")
    assert str(error.value) == (
        "malformed device 'zz': expected VENDOR:DEVICE as 4 hex digits each, e.g. 10de:2236 (or 0x10de:0x2236)"
    )
    with pytest.raises(InvalidDeviceError) as error:
        parse_subsystem_id("152f")
    assert (
        str(error.value)
        == "malformed subsystem '152f': expected SUBVENDOR:SUBDEVICE as 4 hex digits each, e.g. 10de:152f"
    )
    for not_text in (None, 0x2236, b"10de:2236"):
        with pytest.raises(InvalidDeviceError, match="malformed device"):
            parse_device_id(not_text)  # type: ignore[arg-type]
