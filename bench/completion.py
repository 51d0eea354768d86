"""Speed of shell completion: one answer of ``pciname __complete`` (what
each TAB runs in bash, zsh and fish, and kubectl_complete-pciname under
kubectl), wall time, warm, against ``python -c pass`` from the same venv.
Goal: under 50 ms per call, device ids included.

    python bench/completion.py [--repeat N] [--venv DIR]

Timed as users run it: from a venv with a plain ``pip install .`` of this
checkout (bench/core.py's Venv, built once in ``--venv``), runs interleaved
so that the machine's drift hits all alike; each figure is the median.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

from core import Venv, interleaved

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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=21)
    parser.add_argument("--venv", type=Path, default=Path(tempfile.gettempdir()) / "pciname-bench-venv")
    args = parser.parse_args()
    venv = Venv(args.venv)
    venv.prepare()
    cmds = {"python -c pass": [str(venv.python), "-c", "pass"]}
    cmds |= {name: [str(venv.pciname), "__complete", *words] for name, words in CASES.items()}
    times = interleaved(cmds, dict(os.environ), args.repeat)
    base = times.pop("python -c pass")
    print(f"python -c pass: {base:.1f} ms")
    worst = 0.0
    for name, ms in times.items():
        worst = max(worst, ms)
        print(f"{name}: {ms:.1f} ms ({ms / base:.2f}x python -c pass)")
    print(f"worst: {worst:.1f} ms (goal < {GOAL_MS} ms): {'ok' if worst < GOAL_MS else 'OVER'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
