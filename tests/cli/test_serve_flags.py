"""``pciname serve``'s flags are ServeConfig's fields: each field is one
flag (its name, its default, its help and metavar from the field's
metadata, its group and place from FLAG_GROUPS), and nothing else is but
the log's two."""

from __future__ import annotations

import argparse
from dataclasses import MISSING, fields

from pciname.cli import build_parser
from pciname.server import config
from pciname.server.config import FLAG_GROUPS, Flag, ServeConfig, flag, flag_default


def _serve() -> argparse.ArgumentParser:
    sub = next(a for a in build_parser("serve")._actions if isinstance(a, argparse._SubParsersAction))
    return sub.choices["serve"]


def test_flag_groups_hold_every_field_once():
    listed = [name for _, names in FLAG_GROUPS for name in names]
    assert sorted(listed) == sorted(f.name for f in fields(ServeConfig))
    assert len(listed) == len(set(listed))


def test_every_field_says_how_its_flag_shows():
    for field in fields(ServeConfig):
        assert isinstance(field.metadata.get("flag"), Flag), field.name
        assert field.default is not MISSING, field.name
        assert field.metadata["flag"].help_text(), field.name


def test_the_parser_has_a_flag_per_field_in_its_group_and_order():
    serve = _serve()
    groups = {g.title: [a for a in g._group_actions] for g in serve._action_groups}
    for title, names in FLAG_GROUPS:
        assert [a.option_strings for a in groups[title]] == [[flag(n)] for n in names], title
        for action, name in zip(groups[title], names):
            assert action.dest == name
            if isinstance(action, argparse._StoreTrueAction):
                assert flag_default(name) is False
            else:
                assert action.default == flag_default(name) == getattr(ServeConfig(), name), name
    assert [a.dest for a in groups["logging"]] == ["log_format", "log_level"]
    options = {a.dest for a in serve._actions if a.option_strings} - {"help"}
    assert options == {f.name for f in fields(ServeConfig)} | {"log_format", "log_level"}


def test_parsing_nothing_gives_serveconfigs_defaults():
    args = build_parser("serve").parse_args(["serve"])
    assert ServeConfig(**{f.name: getattr(args, f.name) for f in fields(ServeConfig)}) == ServeConfig()
    assert (args.log_format, args.log_level) == (config.DEFAULT_LOG_FORMAT, config.DEFAULT_LOG_LEVEL)


def test_the_help_writes_defaults_as_people_do():
    text = _serve().format_help()
    assert "(default 10)" in text and "(default 4 MiB)" in text and "(default 0)" in text
    assert "%(default)s" not in text and "10.0" not in text
