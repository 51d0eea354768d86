"""YAML output every reader reads back as the strings written: the one
:class:`Dumper` every YAML pciname emits goes through.

PyYAML's SafeDumper quotes a string only when PyYAML itself would read it
plain as something else. Other readers resolve more plain scalars: kubectl,
Helm and client-go read YAML with go-yaml v2 (sigs.k8s.io/yaml forks it),
which reads ``y``, ``n``, ``on`` as booleans, ``08`` and ``1e3`` as floats,
``0o17``, ``0b101`` and ``1_000`` as integers. :func:`ambiguous` is true of
a string any of these resolvers reads plain as another type:

* YAML 1.1's types (yaml.org/type): bool, int (base 2, 8, 10, 16 and 60),
  float (the spec's pattern, which also takes ``1.2.3`` and ``.``), null,
  merge (``<<``), value (``=``) and timestamp;
* YAML 1.2's core schema, and its JSON schema;
* go-yaml v2's ``resolve`` (resolve.go): its table of words (``y``, ``Yes``,
  ``off``, ``~``, ``.inf``, ``<<`` ...); for what starts with ``.``,
  ``strconv.ParseFloat`` (``.5``, ``.5_5``); for what starts with a sign or
  a digit, a timestamp (Go's ``time.Parse`` of its four layouts), an integer
  (``strconv.ParseInt`` base 0 with ``_`` removed: ``0x``, ``0o``, ``0b``,
  a leading ``0`` for octal; and ``0b`` followed by a signed binary number)
  or a float (its ``yamlStyleFloat`` pattern, so ``08`` and ``1e3``).
  go-yaml v3's resolve is v2's without the YAML 1.1 words, plus ``0o``
  followed by a signed octal number: covered here too.

The :class:`Dumper` writes such a string quoted (single quotes, or double
where single quotes cannot hold it), and a string holding NEL, LS or PS
double-quoted (escaped: ``\\N``, ``\\L``, ``\\P``): SafeDumper writes those
raw, where YAML 1.1 readers (PyYAML, go-yaml) fold NEL to a space and YAML
1.2 readers take none of them for a line break. Every other string it
writes exactly as SafeDumper does.

The patterns are of syntax only, and where unsure broader: a number out of
range, a date that does not exist (``2001-02-30``) or a timestamp with its
zone on the wrong layout counts as typed, so no verdict rests on a reader's
range checks or Go's version (quoting never changes what a string reads
as; at worst a string is quoted that need not be).
"""

from __future__ import annotations

import re

import yaml

__all__ = ["Dumper", "ambiguous"]

_WORDS_11 = (
    "y|Y|yes|Yes|YES|n|N|no|No|NO|true|True|TRUE|false|False|FALSE|on|On|ON|off|Off|OFF"  # bool
    "|~|null|Null|NULL"  # null (the empty string too: see ambiguous)
    "|<<|="  # merge, value
)

#: YAML 1.1's implicit types (yaml.org/type/*.html), their regexps as the spec states them.
YAML_1_1 = re.compile(
    rf"""(?:{_WORDS_11})
    | [-+]?0b[01_]+ | [-+]?0[0-7_]+ | [-+]?(?:0|[1-9][0-9_]*) | [-+]?0x[0-9a-fA-F_]+  # int
    | [-+]?[1-9][0-9_]*(?::[0-5]?[0-9])+  # int, base 60
    | [-+]?(?:[0-9][0-9_]*)?\.[0-9.]*(?:[eE][-+][0-9]+)?  # float
    | [-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+\.[0-9_]*  # float, base 60
    | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
    | [0-9]{{4}}-[0-9]{{2}}-[0-9]{{2}}  # timestamp: a date
    | [0-9]{{4}}-[0-9]{{1,2}}-[0-9]{{1,2}}(?:[Tt]|[ \t]+)[0-9]{{1,2}}:[0-9]{{2}}:[0-9]{{2}}(?:\.[0-9]*)?
      (?:[ \t]*(?:Z|[-+][0-9]{{1,2}}(?::[0-9]{{2}})?))?  # timestamp: date and time
    """,
    re.ASCII | re.VERBOSE,
)

#: YAML 1.2's core schema (10.3), the empty string aside.
YAML_1_2_CORE = re.compile(
    r"""null|Null|NULL|~ | true|True|TRUE|false|False|FALSE
    | [-+]?[0-9]+ | 0o[0-7]+ | 0x[0-9a-fA-F]+
    | [-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
    | [-+]?\.(?:inf|Inf|INF) | \.(?:nan|NaN|NAN)
    """,
    re.ASCII | re.VERBOSE,
)

#: YAML 1.2's JSON schema (10.2).
YAML_1_2_JSON = re.compile(
    r"null|true|false|-?(?:0|[1-9][0-9]*)|-?(?:0|[1-9][0-9]*)(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?", re.ASCII
)

#: go-yaml v2's resolveMap: what it looks up whole, before any number.
GO_YAML_WORDS = frozenset(
    ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON")
    + ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF")
    + ("~", "null", "Null", "NULL")
    + (".nan", ".NaN", ".NAN", ".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF", "-.inf", "-.Inf", "-.INF")
    + ("<<",)
)
#: go-yaml's numbers for what starts with a sign or a digit, matched once
#: ``_`` is removed: strconv.ParseInt (and ParseUint) base 0; its fallbacks
#: ParseInt(rest, 2) after ``0b`` (v2, v3) and ParseInt(rest, 8) after
#: ``0o`` (v3), which take a sign after the prefix; yamlStyleFloat (v2, v3).
GO_YAML_NUMBER = re.compile(
    r"""[-+]?(?:0[xX][0-9a-fA-F]+ | 0[bB][01]+ | 0[oO][0-7]+ | [0-9]+)
    | 0b[-+][01]+ | 0o[-+][0-7]+
    | [-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?
    """,
    re.ASCII | re.VERBOSE,
)
#: go-yaml's floats for what starts with ``.``: strconv.ParseFloat of the
#: text as it is (an ``_`` only between digits).
GO_YAML_DOT_FLOAT = re.compile(r"\.[0-9](?:_?[0-9])*(?:[eE][-+]?[0-9](?:_?[0-9])*)?", re.ASCII)
#: go-yaml's timestamps: time.Parse of "2006-1-2T15:4:5.999999999Z07:00"
#: (also with "t"), "2006-1-2 15:4:5.999999999" and "2006-1-2" (a layout's
#: space takes a run of spaces; a fraction's separator is "." or ",").
GO_YAML_TIMESTAMP = re.compile(
    r"""[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}
    (?:(?:[Tt]|[ ]+)[0-9]{1,2}:[0-9]{1,2}:[0-9]{1,2}(?:[.,][0-9]+)?(?:Z|[-+][0-9]{2}:[0-9]{2})?)?
    """,
    re.ASCII | re.VERBOSE,
)
#: Where go-yaml's resolveTable sends a string on to numbers and timestamps.
_GO_YAML_NUMERIC_START = frozenset("+-0123456789")


def go_yaml_typed(text: str) -> bool:
    """Whether go-yaml v2 (or v3) reads ``text``, plain, as anything but a string."""
    if text in GO_YAML_WORDS or text == "":
        return True
    if text[0] == ".":
        return GO_YAML_DOT_FLOAT.fullmatch(text) is not None
    if text[0] not in _GO_YAML_NUMERIC_START:
        return False
    return bool(GO_YAML_TIMESTAMP.fullmatch(text) or GO_YAML_NUMBER.fullmatch(text.replace("_", "")))


def ambiguous(text: str) -> bool:
    """Whether some YAML reader (YAML 1.1, YAML 1.2 core or JSON schema,
    go-yaml v2 or v3) reads ``text``, written plain, as anything but this string."""
    return (
        text == ""
        or YAML_1_1.fullmatch(text) is not None
        or YAML_1_2_CORE.fullmatch(text) is not None
        or YAML_1_2_JSON.fullmatch(text) is not None
        or go_yaml_typed(text)
    )


#: The line breaks of YAML 1.1 but newline: YAML 1.2 has none of them.
_OTHER_BREAKS = re.compile("[\x85\u2028\u2029]")


class Dumper(yaml.SafeDumper):
    """SafeDumper whose strings every reader reads back as the strings
    written: an :func:`ambiguous` one is quoted, one with NEL, LS or PS
    double-quoted; and no anchors or aliases (``&id001`` / ``*id001``):
    an object written twice is written out twice, since people copy and
    edit this YAML."""

    def ignore_aliases(self, data: object) -> bool:
        return True

    def represent_str(self, data: str) -> yaml.ScalarNode:
        style = '"' if _OTHER_BREAKS.search(data) else "'" if ambiguous(data) else None
        return self.represent_scalar("tag:yaml.org,2002:str", data, style=style)


Dumper.add_representer(str, Dumper.represent_str)
