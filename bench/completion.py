"""Speed of shell completion: one answer of ``pciname __complete`` (what
each TAB runs in bash, zsh and fish, and kubectl_complete-pciname under
kubectl), wall time, warm, against ``python -c pass`` from the same
interpreter. Goal: under 50 ms per call, device ids included.

    python bench/completion.py [--repeat N]

Run from a checkout (the editable install's finder adds to every start,
the baseline's too); each figure is the median of N runs.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
GOAL_MS = 50
#: What a user TABs, as the words the scripts hand over.
CASES = {
    "subcommand (pciname lo<TAB>)": ["lo"],
    "profile (--profile cozystack@v1.<TAB>)": ["lookup", "--profile", "cozystack@v1."],
    "device ids (lookup 10de:22<TAB>)": ["lookup", "10de:22"],
    "device ids, every one (lookup -p preview <TAB>)": ["lookup", "-p", "preview", ""],
    "vGPU types (10de:2236 --vgpu <TAB>)": ["permitted-host-devices", "10de:2236", "--vgpu", ""],
    "file names (lint <TAB>)": ["lint", ""],
}


def wall_ms(argv: list[str], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(argv, stdout=subprocess.DEVNULL, check=True, cwd=REPO)
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    args = parser.parse_args()
    base = wall_ms([sys.executable, "-c", "pass"], args.repeat)
    print(f"python -c pass: {base:.1f} ms")
    worst = 0.0
    for name, words in CASES.items():
        ms = wall_ms([sys.executable, "-m", "pciname", "__complete", *words], args.repeat)
        worst = max(worst, ms)
        print(f"{name}: {ms:.1f} ms ({ms / base:.2f}x python -c pass)")
    print(f"worst: {worst:.1f} ms (goal < {GOAL_MS} ms): {'ok' if worst < GOAL_MS else 'OVER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
