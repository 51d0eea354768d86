"""Lint pauses Python's cyclic collector while it composes and walks nodes
(issue 42: the collections walked every node alive, two thirds of
composing's time), and gives it back as it found it: on if it was on, off
if the caller had turned it off, on again only when the last of several
threads linting at once is done."""

from __future__ import annotations

import gc
import threading
import weakref
from collections.abc import Iterator

import pytest

from pciname.capabilities.lint import LintRequest, answer
from pciname.errors import LintInputError
from pciname.lint import compose as compose_module
from pciname.lint.compose import compose_documents, paused_collector
from pciname.lint.linter import Linter
from tests.kube_documents import KUBEVIRT_CR, vm

TEXT = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n  k: v\n"


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    (gc.enable if was else gc.disable)()


def test_composing_pauses_the_collector_and_turns_it_back_on(collector_on, monkeypatch) -> None:
    seen = []
    real = compose_module._compose_fast

    def spy(text, loader_class):
        seen.append(gc.isenabled())
        return real(text, loader_class)

    monkeypatch.setattr(compose_module, "_compose_fast", spy)
    compose_documents(TEXT, "a.yaml")
    assert seen == [False]
    assert gc.isenabled()


def test_a_syntax_error_still_turns_it_back_on(collector_on) -> None:
    with pytest.raises(LintInputError, match="YAML syntax error"):
        compose_documents("a: [\n", "bad.yaml")
    assert gc.isenabled()


def test_a_caller_that_turned_it_off_keeps_it_off() -> None:
    was = gc.isenabled()
    gc.disable()
    try:
        linter = Linter("latest")
        linter.add_text(TEXT, "a.yaml")
        linter.run()
        assert not gc.isenabled()
    finally:
        (gc.enable if was else gc.disable)()


def test_the_rules_run_with_it_paused(collector_on, monkeypatch) -> None:
    seen = []
    linter = Linter("latest")
    linter.add_text(TEXT, "a.yaml")
    real_run = Linter._run

    def spy(self):
        seen.append(gc.isenabled())
        return real_run(self)

    monkeypatch.setattr(Linter, "_run", spy)
    assert linter.run() == []
    assert seen == [False] and gc.isenabled()


def test_threads_share_one_pause_and_the_last_one_out_turns_it_on(collector_on) -> None:
    """Thread A enters, B enters, A leaves (B still inside: still off), B leaves (on)."""
    a_in, b_in, a_out, b_out = (threading.Event() for _ in range(4))
    inside_after_a_left: list[bool] = []

    def first() -> None:
        with paused_collector():
            a_in.set()
            b_in.wait(30)
        a_out.set()

    def second() -> None:
        a_in.wait(30)
        with paused_collector():
            b_in.set()
            a_out.wait(30)
            inside_after_a_left.append(gc.isenabled())
        b_out.set()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert b_out.is_set()
    assert inside_after_a_left == [False]
    assert gc.isenabled()


def test_a_lint_frees_its_nodes_without_the_collector() -> None:
    """Reference counting alone frees every node once the linter is gone (a
    cycle through the sites' walk kept them all until the collector walked
    them: 0.6 s of bench/lint_speed.py's lint)."""
    was = gc.isenabled()
    gc.disable()
    try:
        linter = Linter("latest")
        linter.add_text(KUBEVIRT_CR + "---\n" + vm("nvidia.com/GA102GL_A10"), "fleet.yaml")
        roots = [weakref.ref(doc.root) for doc in linter._docs]
        linter.run()
        del linter
        assert len(roots) == 2 and [root() for root in roots] == [None, None]
    finally:
        (gc.enable if was else gc.disable)()


def test_the_lint_answer_is_one_pause(collector_on) -> None:
    """Composing, the rules and the steps between them under one pause (each
    paused alone, the collection between them walked every node): ``check``
    is asked between the steps."""
    seen: list[bool] = []
    request = LintRequest(files=(("a.yaml", TEXT),)).validated()
    assert answer(request, "latest", check=lambda: seen.append(gc.isenabled())).findings == []
    assert seen == [False, False, False] and gc.isenabled()
