"""bench/service_load.py runs, tiny (issue 42): pciname's server and the
bare grpcio server both answer Resolve and ResolveBatch with no error, and
every figure it prints is a number. No figure is judged here: they are
ratios for a person to read beside the machine's load."""

from __future__ import annotations

import re
import subprocess
import sys

from tests.conftest import REPO

ROW = re.compile(
    r"^  (bare|pciname) +(\d+) req/s +p50 +([\d.]+) ms +p99 +([\d.]+) ms +server CPU +([\d.]+) ms/req +errors (\d+)"
)


def test_service_load_bench_runs_tiny() -> None:
    done = subprocess.run(
        [
            sys.executable,
            str(REPO / "bench" / "service_load.py"),
            "--seconds",
            "0.4",
            "--concurrency",
            "2",
            "--processes",
            "1",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=REPO,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    heads = [line for line in done.stdout.splitlines() if line.endswith(":") and " at concurrency " in line]
    assert heads == [f"{kind} at concurrency {level}:" for kind in ("resolve", "batch") for level in (2,)]
    lines = done.stdout.splitlines()
    rows = [ROW.match(line) for line in lines if line.startswith(("  bare ", "  pciname ")) and "/ bare:" not in line]
    assert len(rows) == 4 and all(rows), done.stdout
    for match in rows:
        assert match is not None
        assert int(match[2]) > 0, match[0]  # the server answered
        assert match[6] == "0", match[0]  # and never with an error
    ratios = [line for line in lines if line.startswith("  pciname / bare: throughput ")]
    assert len(ratios) == 2 and "nan" not in "".join(ratios), done.stdout
