"""Close-name hints ("closest permitted: ...") within a budget of comparisons.

A hint compares one name with every candidate (difflib, about 5 µs a pair
here), so the hints of a run cost names x candidates: 1,868 wrong names
against 3,000 allowed ones took a minute of CPU. One :class:`HintBudget` per
lint run or admission policy holds the comparisons left
(:data:`MAX_HINT_PAIRS`) and the caller's deadline check; a hint whose
comparisons the budget cannot cover is not computed, and says so, before
any work is spent on it. :class:`Candidates` prepares a candidate set once
(sorted, case folded), for every name compared with it.
"""

from __future__ import annotations

import difflib
import heapq
from collections.abc import Callable, Iterable

#: Name-to-candidate comparisons one lint run or admission policy spends on
#: hints: about 1.4 s of CPU here (5.5 µs a pair, measured with 100 to 6,000
#: candidates), enough for every wrong name of a profile (about 1,900)
#: against some 130 allowed names.
MAX_HINT_PAIRS = 250_000

#: A not-permitted message lists every permitted name when there are at most
#: this many and none is close (the admission policy's message does the same).
LIST_PERMITTED_MAX = 8


class HintBudget:
    """The comparisons left for hints, and the caller's deadline check
    (asked before each hint: it raises when the caller is gone)."""

    def __init__(self, pairs: int = MAX_HINT_PAIRS, check: Callable[[], None] | None = None) -> None:
        self.pairs = pairs
        self.check = check

    def take(self, pairs: int) -> bool:
        """Spend ``pairs`` comparisons if they are left (True), else spend none (False)."""
        if self.check is not None:
            self.check()
        if pairs > self.pairs:
            return False
        self.pairs -= pairs
        return True


def _fold(name: str) -> str:
    return name.partition("/")[2].upper()


def model_tokens(key: str) -> tuple[str, ...]:
    """The model names in a folded name, the parts after the chip, whole
    and shortened from the end: ``GA102GL_A10`` -> ``A10``;
    ``GH100_H100_SXM5_80GB`` -> ``H100_SXM5_80GB``, ``H100_SXM5``, ``H100``.
    None for a name of one part."""
    parts = key.split("_")[1:]
    return tuple("_".join(parts[:end]) for end in range(len(parts), 0, -1) if all(parts[:end]))


def rank(name: str, keys: Iterable[str], *, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to ``n`` of ``keys`` close to ``name``, best first, by what a user
    likely meant: a key one of whose :func:`model_tokens` is ``name`` first
    (``A10`` means ``GA102GL_A10``, not ``GA107``, which only shares a
    prefix), then the rest as :func:`difflib.get_close_matches` ranks them."""
    matcher = difflib.SequenceMatcher()
    matcher.set_seq2(name)
    scored: list[tuple[float, str]] = []
    for key in keys:
        if name in model_tokens(key):
            scored.append((2.0, key))
            continue
        matcher.set_seq1(key)
        if matcher.real_quick_ratio() >= cutoff and matcher.quick_ratio() >= cutoff and matcher.ratio() >= cutoff:
            scored.append((matcher.ratio(), key))
    return [key for _, key in heapq.nlargest(n, scored)]


class Candidates:
    """A set of names to find close ones in, compared by ``key`` (default:
    the part after the domain, ``nvidia.com/``, upper case), each key kept
    with its first full spelling in sorted order."""

    def __init__(self, names: Iterable[str], key: Callable[[str], str] | None = None) -> None:
        self.names = sorted(set(names))
        self._fold = key or _fold
        self._folded: dict[str, str] = {}
        for name in self.names:
            self._folded.setdefault(self._fold(name), name)
        self._keys = list(self._folded)

    def __len__(self) -> int:
        return len(self.names)

    def closest(self, name: str, budget: HintBudget | None, *, n: int = 3, cutoff: float = 0.6) -> list[str] | None:
        """Up to ``n`` close names (best first); None when ``budget`` cannot cover the comparisons."""
        if not self._keys:
            return []
        if budget is not None and not budget.take(len(self._keys)):
            return None
        close = rank(self._fold(name), self._keys, n=n, cutoff=cutoff)
        return [self._folded[c] for c in close]


def not_permitted_hint(
    name: str, permitted: Iterable[str] | Candidates, budget: HintBudget | None = None
) -> tuple[list[str], str]:
    """What to ask for instead of a name that is not permitted: the closest
    permitted names (difflib on the part after ``nvidia.com/``, case
    ignored, at most 3), else every permitted name when there are at most
    :data:`LIST_PERMITTED_MAX`; and the text saying so. The one rule of lint's
    ``not-permitted`` and the admission policy's message."""
    allowed = permitted if isinstance(permitted, Candidates) else Candidates(permitted)
    if len(allowed) <= LIST_PERMITTED_MAX:
        close = allowed.closest(name, None)  # a few comparisons: never refused
    else:
        close = allowed.closest(name, budget)
    if close:
        return close, f"closest permitted: {', '.join(close)}"
    if not len(allowed):
        return [], "no permitted entry works"
    if len(allowed) <= LIST_PERMITTED_MAX:
        return allowed.names, f"permitted: {', '.join(allowed.names)}"
    if close is None:
        return [], f"{len(allowed)} permitted, too many to compare within pciname's hint budget"
    return [], f"no permitted name is close ({len(allowed)} permitted)"


__all__ = [
    "LIST_PERMITTED_MAX",
    "MAX_HINT_PAIRS",
    "Candidates",
    "HintBudget",
    "model_tokens",
    "not_permitted_hint",
    "rank",
]
