"""Test helpers around the packaged answer tables (pciname.answers)."""

from __future__ import annotations

import pytest

from pciname import answers


def without_packaged_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    """In this process, as if the package carried no answer tables: every
    lookup and resolve takes the full path (or a cached answer table)."""
    monkeypatch.setattr(answers, "packaged_dir", lambda: "/nonexistent/pciname-packaged-answers")
    answers.clear()
