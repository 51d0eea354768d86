"""How a plugin release turns a vGPU's ``mdev_type/name`` into a resource
(docs/naming.md, section 4). The rule is a per-release fact
(``mdev_name`` in ``data/profiles.json``, :attr:`Profile.mdev_name`):

* ``second-field`` (v1.0.0, v1.0.1): strip ``\\n`` from both ends, split at
  every single space and keep field 1 (the second). ``GRID T4-1Q`` gives
  ``T4-1Q``; two spaces in a row give an empty field (``nvidia.com/``, which
  kubelet refuses); a name without a space has no field 1 and the plugin
  panics (index out of range), so nothing at all is advertised on that node.
* ``whitespace-runs`` (v1.1.x and later): strip ``\\n`` from both ends, then
  every run of Go RE2 ``\\s`` (tab, newline, form feed, carriage return,
  space) becomes ``_``. ``GRID T4-1Q`` gives ``GRID_T4-1Q``.

Each rule is given twice, as in :mod:`pciname.naming.algorithms`: a fast
function and a small reference written to read like the Go code, one byte
at a time; tests prove them equal.
"""

from __future__ import annotations

from pciname.errors import PcinameError
from pciname.naming import checks
from pciname.naming.checks import NameWarning

SECOND_FIELD = "second-field"
WHITESPACE_RUNS = "whitespace-runs"
MDEV_NAME_RULES = (SECOND_FIELD, WHITESPACE_RUNS)
#: The newest releases' rule: for custom and preview profiles, and a release
#: entry of profiles.json without ``mdev_name``.
DEFAULT_MDEV_NAME = WHITESPACE_RUNS


def check_mdev_rule(rule: str) -> str:
    """``rule`` if it is a known mdev naming rule, else PcinameError."""
    if rule not in MDEV_NAME_RULES:
        raise PcinameError(f"unknown mdev naming rule {rule!r}: use one of {', '.join(MDEV_NAME_RULES)}")
    return rule


# -- fast -----------------------------------------------------------------------


def type_string(type_name: str, rule: str = DEFAULT_MDEV_NAME) -> str | None:
    """The name part the plugin registers for ``type_name`` (as read from
    ``mdev_type/name``), or None when the plugin panics on it."""
    text = type_name.strip("\n")
    if rule == WHITESPACE_RUNS:
        return checks.whitespace_runs_to_underscore(text)
    if rule == SECOND_FIELD:
        fields = text.split(" ", 2)
        return fields[1] if len(fields) > 1 else None
    check_mdev_rule(rule)  # raises
    raise AssertionError(rule)


def mdev_resource(type_name: str, rule: str = DEFAULT_MDEV_NAME) -> str | None:
    """``nvidia.com/<name part>``, or None when the plugin panics."""
    part = type_string(type_name, rule)
    return None if part is None else checks.resource_name(part)


def crash_warning(type_name: str) -> NameWarning:
    """Why a type name without a space brings the v1.0.x plugin down."""
    return NameWarning(
        checks.PLUGIN_CRASH,
        f"vGPU type {type_name!r} has no space: the v1.0.x plugin takes the second space-separated field, "
        "finds none and panics (index out of range); on a node with this vGPU nothing at all is advertised",
    )


def mdev_warnings(type_name: str, rule: str = DEFAULT_MDEV_NAME) -> list[NameWarning]:
    """The plugin crash, or kubelet validity and socket length of the name."""
    part = type_string(type_name, rule)
    if part is None:
        return [crash_warning(type_name)]
    return checks.name_warnings(part)


# -- reference: as the Go code reads ------------------------------------------


_GO_SPACE = "\t\n\f\r "  # RE2 \s: [\t\n\f\r ]


def _go_trim_newlines(s: str) -> str:
    """Go ``strings.Trim(s, "\\n")``."""
    start, end = 0, len(s)
    while start < end and s[start] == "\n":
        start += 1
    while end > start and s[end - 1] == "\n":
        end -= 1
    return s[start:end]


def _go_split(s: str, sep: str) -> list[str]:
    """Go ``strings.Split(s, sep)`` for a one-character ``sep``."""
    fields, current = [], ""
    for c in s:
        if c == sep:
            fields.append(current)
            current = ""
        else:
            current += c
    fields.append(current)
    return fields


def _go_replace_space_runs(s: str) -> str:
    """Go ``regexp.MustCompile(`\\s+`).ReplaceAllString(s, "_")``."""
    out, in_run = "", False
    for c in s:
        if c in _GO_SPACE:
            if not in_run:
                out += "_"
            in_run = True
        else:
            out += c
            in_run = False
    return out


def second_field_reference(type_name: str) -> str | None:
    """v1.0.x ``readVgpuIDFromFile``: trim, split on " ", index 1 (None: panic)."""
    str_array = _go_split(_go_trim_newlines(type_name), " ")
    if len(str_array) < 2:
        return None  # strArray[1]: index out of range
    return str_array[1]


def whitespace_runs_reference(type_name: str) -> str:
    """v1.1.x and later: trim, then every ``\\s`` run to ``_``."""
    return _go_replace_space_runs(_go_trim_newlines(type_name))


def type_string_reference(type_name: str, rule: str) -> str | None:
    """:func:`type_string`, from the references."""
    if check_mdev_rule(rule) == SECOND_FIELD:
        return second_field_reference(type_name)
    return whitespace_runs_reference(type_name)
