"""The two vGPU naming rules (pciname.naming.mdev) against Go itself:
``tests/go_oracle_mdev/main.go`` states them with Go's strings.Trim,
strings.Split (recovering the index-out-of-range panic) and regexp ``\\s+``;
on generated type names full of white space Python and Go may disagree on
(tab, CR, form feed, vertical tab, NEL, NBSP, U+2028), every answer of the
fast functions and of the references must match Go's. Skipped when Go is
not installed (CI installs ``golang-go``)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from pciname.naming import mdev
from tests.conftest import NEEDS_GO
from tests.go_oracles import ask, oracle as go_oracle

pytestmark = NEEDS_GO

ALPHABET = [" ", "  ", "\t", "\n", "\r", "\f", "\v", "\x85", "\u00a0", "\u2028", "GRID", "T4-1Q", "A100", "-", "é"]
FIXED = [
    "GRID T4-1Q",
    "GRID T4-1Q\n",
    "\n\nGRID T4-1Q\n\n",
    "GRID  T4-1Q",
    "GRID\tT4-1Q",
    "GRID T4-1Q\r\n",
    "T4",
    "",
    "\n",
    " ",
]


@pytest.fixture(scope="module")
def oracle() -> Path:
    return go_oracle("mdev")


@pytest.mark.parametrize("seed", range(3))
def test_mdev_rules_agree_with_go(oracle, seed):
    rng = random.Random(seed)
    names = FIXED + ["".join(rng.choice(ALPHABET) for _ in range(rng.randrange(0, 9))) for _ in range(3000)]
    answers = json.loads(ask(oracle, stdin=json.dumps(names)))
    assert len(answers) == len(names)
    mismatches = []
    for name, (second_field, whitespace_runs) in zip(names, answers, strict=True):
        for rule, want in ((mdev.SECOND_FIELD, second_field), (mdev.WHITESPACE_RUNS, whitespace_runs)):
            got = (mdev.type_string(name, rule), mdev.type_string_reference(name, rule))
            if got != (want, want):
                mismatches.append((name, rule, want, got))
    assert not mismatches, mismatches[:3]
