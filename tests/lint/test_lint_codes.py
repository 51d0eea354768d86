"""The lint codes' one registry (``pciname.lint.codes.CODES``) and what
is made from it: the README table, the lint module's docstring and the
``.proto`` comment fail here as soon as they drift from it."""

from __future__ import annotations

from pciname.lint import codes as lint_codes, linter as lint
from pciname.lint.codes import CODES, ERROR, WARNING
from tests.conftest import REPO
from tools import lint_tables


def test_the_readme_table_is_the_registrys():
    readme = (REPO / "docs" / "passthrough.md").read_text()
    section = readme.split("* `pciname lint FILE...", 1)[1].split("* `pciname scan", 1)[0]
    rows = [line for line in section.splitlines() if line.strip().startswith("|")]
    assert "\n".join(rows) + "\n" == lint_codes.markdown_table(), (
        "run python -m tools.lint_tables --write (docs/passthrough.md)"
    )


def test_the_proto_comment_is_the_registrys():
    proto = (REPO / "proto/pciname/v1/pciname.proto").read_text()
    assert lint_codes.proto_comment() in proto, "paste `python -m tools.lint_tables` into the .proto"
    assert lint_codes.proto_comment() + "  string code = 7;" in proto  # on Finding.code


def test_the_lint_docstring_lists_every_code_in_order_with_its_meaning():
    doc = lint.__doc__ or ""
    positions = [doc.index(f"``{code}`` ({c.severity})") for code, c in CODES.items()]
    assert positions == sorted(positions)
    for c in CODES.values():
        words = c.meaning.replace("`", "``").split()
        assert " ".join(words) in " ".join(doc.split())


def test_each_code_is_a_constant_of_the_registry_and_of_lint():
    constants = {v for k, v in vars(lint_codes).items() if k.isupper() and isinstance(v, str) and "-" in v}
    assert constants == set(CODES)
    assert {c.severity for c in CODES.values()} <= {ERROR, WARNING}
    for name, value in vars(lint_codes).items():
        if name.isupper() and isinstance(value, str) and value in CODES:
            assert getattr(lint, name) == value, name  # lint's names stay importable
    assert lint.CODES is CODES


def test_every_message_is_made_by_the_registry(monkeypatch):
    """A finding's message is its code's builder's: replacing the builders
    changes every message, so no rule writes its own."""
    from tests.kube_documents import COZYSTACK_VALUES, KUBEVIRT_CR, VMS

    monkeypatch.setattr(
        lint_codes,
        "CODES",
        {code: c._replace(message=lambda code=code, **facts: f"<{code}>") for code, c in CODES.items()},
    )
    monkeypatch.setattr(lint, "CODES", lint_codes.CODES)
    findings = lint.lint_text(KUBEVIRT_CR + "---\n" + VMS + "---\n" + COZYSTACK_VALUES, "x.yaml", "latest", "preview")
    assert findings
    assert all(f.message == f"<{f.code}>" for f in findings)


def test_write_makes_drifted_copies_anew():
    """What a merge leaves (a row added the old way, a code missing from the
    proto list) is rewritten from the registry by ``--write``."""
    readme = (REPO / "docs" / "passthrough.md").read_text()
    proto = (REPO / "proto/pciname/v1/pciname.proto").read_text()
    assert lint_tables.rewritten(readme, proto) == (readme, proto)
    drifted_readme = readme.replace(
        "  | `duplicate-key` |", "  | `some-new-code` | error | new |\n  | `duplicate-key` |", 1
    )
    drifted_readme = drifted_readme.replace("| code | severity | when |", "| code | when |", 1)
    drifted_proto = proto.replace("renamed-by-upgrade, duplicate-key", "renamed-by-upgrade", 1)
    assert (drifted_readme, drifted_proto) != (readme, proto)
    assert lint_tables.rewritten(drifted_readme, drifted_proto) == (readme, proto)
    assert lint_tables.main(["--check"]) == 0


def test_write_makes_a_drifted_dra_table_anew():
    """docs/dra.md's table of the dra-claims rule's codes, drifted, is
    rewritten from the registry."""
    page = (REPO / "docs" / "dra.md").read_text()
    assert lint_tables.rewritten_dra(page) == page
    head = page.index(lint_tables.TABLE_HEAD)
    first_row = page.index("\n| `", head) + 1
    drifted = page[:first_row] + page[page.index("\n", first_row) + 1 :]  # a row lost in a merge
    assert drifted != page
    assert lint_tables.rewritten_dra(drifted) == page
