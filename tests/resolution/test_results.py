"""pciname.resolution.results writes its three classes out by hand instead of with
``@dataclass(frozen=True, slots=True)`` (importing dataclasses costs more than
``python -c pass``). Here the reference is what ``@dataclass`` itself makes
of the same fields and defaults, and every behaviour a caller can see must be
the same: construction (positional, keyword, defaults, errors), repr,
equality and hashing, ordering (none), pickling, ``dataclasses.fields``,
``asdict``, ``astuple``, ``replace``, pattern matching, and what assigning or
deleting an attribute raises."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest
from hypothesis import given, strategies as st

from pciname.naming.checks import NameWarning
from pciname.resolution.results import DiffEntry, ProfileInfo, Resolution

CLASSES = (Resolution, DiffEntry, ProfileInfo)


def reference(cls: type) -> type:
    """``@dataclass(frozen=True, slots=True)`` over ``cls``'s fields, in order,
    with its defaults, under its name."""
    spec = []
    for name in cls._fields:
        if name in cls._defaults:
            spec.append((name, cls.__annotations__[name], dataclasses.field(default=cls._defaults[name])))
        else:
            spec.append((name, cls.__annotations__[name]))
    return dataclasses.make_dataclass(cls.__name__, spec, frozen=True, slots=True)


REFERENCES = {cls: reference(cls) for cls in CLASSES}

texts = st.one_of(st.none(), st.text(max_size=8))
warnings = st.lists(
    st.builds(NameWarning, st.sampled_from(["unnamed-device", "name-collision"]), st.text(max_size=8)), max_size=2
).map(tuple)


def values(cls: type) -> st.SearchStrategy[list[object]]:
    """Field values for ``cls``, of the kinds its fields hold."""
    per_field = []
    for name in cls._fields:
        if name == "warnings":
            per_field.append(warnings)
        elif name == "aliases":
            per_field.append(st.lists(st.text(max_size=4), max_size=2).map(tuple))
        elif name == "installed":
            per_field.append(st.booleans())
        else:
            per_field.append(texts)
    return st.tuples(*per_field).map(list)


def outcome(call):
    """What a call gives: its value, or the type and text of what it raises."""
    try:
        return ("value", call())
    except Exception as exc:  # noqa: BLE001 - the comparison is the point
        return ("raises", type(exc).__name__, str(exc))


def pair(cls, args):
    return cls(*args), REFERENCES[cls](*args)


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_the_class_looks_like_the_dataclass(cls):
    ref = REFERENCES[cls]
    assert dataclasses.is_dataclass(cls)
    assert [(f.name, f.type, f.default) for f in dataclasses.fields(cls)] == [
        (f.name, f.type, f.default) for f in dataclasses.fields(ref)
    ]
    assert cls.__match_args__ == ref.__match_args__
    assert cls.__slots__ == ref.__slots__
    assert cls.__qualname__ == ref.__qualname__


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
@given(data=st.data())
def test_behaviour_equals_the_dataclass(cls, data):
    a_args, b_args = data.draw(values(cls)), data.draw(values(cls))
    if data.draw(st.booleans()):
        b_args = list(a_args)
    a, ra = pair(cls, a_args)
    b, rb = pair(cls, b_args)

    assert repr(a) == repr(ra)
    assert (a == b) == (ra == rb) and (a != b) == (ra != rb)
    assert outcome(lambda: hash(a)) == outcome(lambda: hash(ra))
    assert (a == a_args) == (ra == a_args)  # never equal to a list or tuple
    assert outcome(lambda: a < b)[:2] == outcome(lambda: ra < rb)[:2]  # no ordering
    assert dataclasses.asdict(a) == dataclasses.asdict(ra)
    assert dataclasses.astuple(a) == dataclasses.astuple(ra)
    assert pickle.loads(pickle.dumps(a)) == a and copy.deepcopy(a) == a and copy.copy(a) == a
    first = cls._fields[0]
    assert dataclasses.replace(a, **{first: "x"}) == cls(*(["x"] + a_args[1:]))
    assert outcome(lambda: dataclasses.replace(a, nope=1))[:2] == outcome(lambda: dataclasses.replace(ra, nope=1))[:2]
    match a:
        case cls(x):
            assert x == a_args[0]
    assert outcome(lambda: setattr(a, first, 1)) == outcome(lambda: setattr(ra, first, 1))
    assert outcome(lambda: delattr(a, first)) == outcome(lambda: delattr(ra, first))
    # Another name: Python 3.11's slotted frozen dataclass raises a TypeError
    # from inside its own __setattr__ ("super(type, obj): obj must be an
    # instance or subtype of type", its closure holds the class it replaced);
    # the written-out class says what it means.
    assert outcome(lambda: setattr(a, "not_a_field", 1)) == (
        "raises",
        "FrozenInstanceError",
        "cannot assign to field 'not_a_field'",
    )
    assert outcome(lambda: delattr(a, "not_a_field")) == (
        "raises",
        "FrozenInstanceError",
        "cannot delete field 'not_a_field'",
    )
    assert a == cls(*a_args)  # nothing above changed it


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_construction_errors_equal_the_dataclass(cls):
    ref = REFERENCES[cls]
    n = len(cls._fields)
    for args, kwargs in [
        ((), {}),
        (("x",) * (n + 1), {}),
        (("x",) * n, {"nope": 1}),
        (("x",) * n, {cls._fields[0]: "y"}),
    ]:
        assert outcome(lambda: cls(*args, **kwargs))[:2] == outcome(lambda: ref(*args, **kwargs))[:2], (args, kwargs)  # noqa: B023 - called at once
    keywords = {name: "x" for name in cls._fields if name not in cls._defaults}
    assert repr(cls(**keywords)) == repr(ref(**keywords))
