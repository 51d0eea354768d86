"""The service under its own inputs (issue 16, the minor items): limits of
the watcher, the metrics endpoint and the health port."""

from __future__ import annotations

import pytest

from pciname.cli import main
from pciname.server import ServeConfig, ServeError
from pciname.server.config import MIN_WATCH_INTERVAL


@pytest.mark.parametrize("value", [1e-9, 0.001, MIN_WATCH_INTERVAL / 2])
def test_watch_interval_has_a_sane_minimum(value, capsys):
    with pytest.raises(ServeError, match=r"^--watch-interval: must be 0 \(off\) or at least 0.1 seconds: "):
        ServeConfig(insecure=True, watch_interval=value).validate()
    code = main(["serve", "--insecure", "--listen", "127.0.0.1:0", "--watch-interval", repr(value)])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and "--watch-interval: must be 0 (off) or at least 0.1 seconds" in err
    ServeConfig(insecure=True, watch_interval=0).validate()
    ServeConfig(insecure=True, watch_interval=MIN_WATCH_INTERVAL).validate()


def test_watch_interval_help_names_the_minimum(capsys):
    from pciname.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser("serve").parse_args(["serve", "--help"])
    shown = " ".join(capsys.readouterr().out.split())
    assert f"0 disables (SIGHUP still reloads), else at least {MIN_WATCH_INTERVAL:g}" in shown
