"""docs/reference/cli.md is what tools/cli_reference.py makes from the
argparse parsers now: a changed option or help text fails here until the
page is written anew."""

from __future__ import annotations

from tools import cli_reference


def test_the_page_is_the_parsers():
    assert cli_reference.PAGE.read_text(encoding="utf-8") == cli_reference.page(), (
        "run python -m tools.cli_reference --write"
    )


def test_the_page_has_every_command():
    from pciname.cli import COMMAND_MODULES, build_parser

    assert COMMAND_MODULES
    text = cli_reference.PAGE.read_text(encoding="utf-8")
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name in sub.choices:  # type: ignore[attr-defined]
        assert f"\n## `pciname {name}`\n" in text, name
    assert "\n## `pciname snapshots import`\n" in text


def test_check_notices_a_stale_page(tmp_path, monkeypatch):
    stale = tmp_path / "cli.md"
    stale.write_text(cli_reference.page().replace("--profile", "--profil", 1), encoding="utf-8")
    monkeypatch.setattr(cli_reference, "PAGE", stale)
    assert cli_reference.main(["--check"]) == 1
    assert cli_reference.main(["--write"]) == 0
    assert cli_reference.main(["--check"]) == 0
