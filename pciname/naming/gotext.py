"""Go's text semantics, as the device plugin's Go code applies them.

Python's own ``str.splitlines``, ``str.strip``, ``str.upper`` and ``\\s`` all
differ from Go's in ways that change resource names (docs/naming.md, section 2), so
the naming algorithms use these instead. Text is the pci.ids bytes decoded as
UTF-8 with ``surrogateescape``: every invalid byte becomes one lone surrogate,
just as Go's decoder sees one ``utf8.RuneError`` per invalid byte; neither is
white space, neither has a case, and the final filters drop both.
"""

from __future__ import annotations

import re
from functools import lru_cache

# bufio.Scanner's default maximum token size: a line this long or longer
# (without its "\n") makes Scan() fail with ErrTooLong, ending the read.
SCANNER_MAX_LINE_BYTES = 64 * 1024

# unicode.IsSpace: Latin-1 spaces plus the White_Space property.
GO_SPACE = (
    "\t\n\v\f\r \x85\xa0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)

_GO_REGEXP_SPACES = re.compile(r"[\t\n\f\r ]+")  # RE2's \s
_NOT_UPPER_KEPT = re.compile(r"[^a-zA-Z0-9_.]+")
_NOT_2019_KEPT = re.compile(r"[^a-zA-Z0-9_]+")
_SLASH_DOT = str.maketrans("/.", "__")


def scan_lines(text: str) -> list[str]:
    """The lines ``bufio.Scanner`` with ``ScanLines`` yields for ``text``.

    Split on ``\\n`` only; drop one trailing ``\\r`` from each line; no empty
    line after a final ``\\n``; stop before the first line of 64 KiB or more,
    as Scan() then fails with ErrTooLong and the plugin's loop ends.
    """
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    # A character is 1 to 4 bytes: only long lines need their bytes counted.
    limit = SCANNER_MAX_LINE_BYTES
    if len(text) >= limit // 4 and max(map(len, lines), default=0) >= limit // 4:
        for index, line in enumerate(lines):
            if len(line) >= limit // 4 and len(line.encode("utf-8", "surrogateescape")) >= limit:
                del lines[index:]
                break
    return [line[:-1] if line.endswith("\r") else line for line in lines]


def valid_text(text: str | None) -> str | None:
    """``text`` as pciname shows it outside itself: valid UTF-8.

    Names, the Version/Date header and paths are decoded with
    ``surrogateescape``, so invalid UTF-8 in a pci.ids file (or a path)
    survives as lone surrogates, which no UTF-8 stream, JSON document or
    protobuf string can carry. Every maximal invalid byte sequence becomes
    one U+FFFD REPLACEMENT CHARACTER (Python's ``errors="replace"``); valid
    text and None are returned as they are. This is the one representation
    of undecodable bytes in records, JSON, YAML, tables and gRPC answers.
    """
    if text is None or text.isascii():
        return text
    try:
        raw = text.encode("utf-8", "surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that stands for no byte
        raw = text.encode("utf-8", "surrogatepass")
    return raw.decode("utf-8", "replace")


def trim_space(text: str) -> str:
    """``strings.TrimSpace``."""
    return text.strip(GO_SPACE)


@lru_cache(maxsize=4096)
def _upper_rune(char: str) -> str:
    # unicode.ToUpper is a one-to-one simple case mapping. Python's
    # str.upper applies full mappings (ß -> SS, ﬁ -> FI); where that yields
    # several characters Go has no such mapping for the rune, and where it
    # yields one it agrees with Go's simple mapping.
    upper = char.upper()
    return upper if len(upper) == 1 else char


def to_upper(text: str) -> str:
    """``strings.ToUpper``: per-rune simple upper-case mapping."""
    if text.isascii():
        return text.upper()
    return "".join(map(_upper_rune, text))


def slash_dot(text: str) -> str:
    """Every ``/`` and ``.`` to ``_``."""
    return text.translate(_SLASH_DOT)


def spaces_to_underscore(text: str) -> str:
    """``regexp.MustCompile(`\\s+`).ReplaceAllString(s, "_")``."""
    return _GO_REGEXP_SPACES.sub("_", text)


def filter_upper(text: str) -> str:
    """Delete every character outside ``[a-zA-Z0-9_.]``."""
    return _NOT_UPPER_KEPT.sub("", text)


def filter_2019(text: str) -> str:
    """Delete every character outside ``[a-zA-Z0-9_]``."""
    return _NOT_2019_KEPT.sub("", text)


# -- strconv, as go-nvlib parses sysfs files --------------------------------------

_UINT_DIGITS_MAX = 64
_GO_UINT = re.compile(r"(?:0[xX](?:_?[0-9a-fA-F])+|0[oO](?:_?[0-7])+|0[bB](?:_?[01])+|0(?:_?[0-7])*|[1-9](?:_?[0-9])*)")


def go_parse_uint(text: str, bits: int, base: int = 0) -> tuple[int, bool]:
    """``strconv.ParseUint(text, base, bits)`` as Go returns it: the value and
    whether it parsed (a syntax error gives 0, a value out of range the
    largest ``bits``-bit value, both with ``False``, as Go pairs them with
    ErrSyntax and ErrRange). Base 0 takes Go's integer literal prefixes and
    underscores; base 10 ASCII digits only. The digits are never handed to
    ``int()`` past what a 64-bit value can hold, so a number of any length
    (over Python's 4,300-digit ``int()`` limit too) is a range error, not an
    exception."""
    if base == 10:
        if not (text.isascii() and text.isdigit()):
            return 0, False
        digits, radix = text, 10
    elif not _GO_UINT.fullmatch(text):
        return 0, False
    else:
        digits = text.replace("_", "")
        prefix = digits[:2].lower()
        if prefix in ("0x", "0o", "0b"):
            digits, radix = digits[2:], {"0x": 16, "0o": 8, "0b": 2}[prefix]
        elif digits.startswith("0"):
            radix = 8
        else:
            radix = 10
    significant = digits.lstrip("0") or "0"
    # No base-2 or larger number of more than 64 significant digits fits 64 bits.
    value = int(significant, radix) if len(significant) <= _UINT_DIGITS_MAX else 1 << bits
    if value >= 1 << bits:
        return (1 << bits) - 1, False
    return value, True


def go_uint(text: str, bits: int, base: int = 0) -> int | None:
    """``strconv.ParseUint(text, base, bits)`` (None: an error, of syntax or range)."""
    value, ok = go_parse_uint(text, bits, base)
    return value if ok else None


def go_int(text: str) -> int | None:
    """``strconv.ParseInt(text, 0, 64)`` (None: an error)."""
    sign, rest = (-1, text[1:]) if text[:1] == "-" else (1, text[1:] if text[:1] == "+" else text)
    value = go_uint(rest, 64)
    if value is None or value > (1 << 63) - (sign > 0):
        return None
    return sign * value


def nvpci_address_key(address: str) -> int:
    """go-nvlib nvpci GetAllDevices' sort key: the address without ``:`` and ``.`` as a hex
    number (ParseUint's error ignored: 0, or the maximum when out of range)."""
    digits = address.replace(":", "").replace(".", "")
    if not digits or not all(c in "0123456789abcdefABCDEF" for c in digits):
        return 0
    return min(int(digits, 16), (1 << 64) - 1)
