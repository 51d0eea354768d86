"""What the tests of the fact extractors (tools/*_extract.py) share: a
family's shipped facts, its vendored inputs and its script run as users run it."""

from __future__ import annotations

import json
import subprocess
import sys
import tarfile
from typing import Any

from tests.conftest import REPO


class Extracted:
    """The shipped ``data/<family>/releases.json``, the inputs
    ``tests/data/<family>-inputs.{json,tar.xz}`` and ``python -m tools.<script>``."""

    def __init__(self, family: str, script: str) -> None:
        self.shipped_path = REPO / "data" / family / "releases.json"
        self.inputs = REPO / "tests" / "data" / f"{family}-inputs"
        self.script = script

    def shipped(self) -> dict[str, Any]:
        return dict(json.loads(self.shipped_path.read_text(encoding="utf-8")))

    def sidecar(self) -> dict[str, Any]:
        return dict(json.loads(self.inputs.with_suffix(".json").read_text(encoding="utf-8")))

    def tarball(self) -> dict[str, bytes]:
        with tarfile.open(self.inputs.with_suffix(".tar.xz"), "r:xz") as tar:
            return {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}  # type: ignore[union-attr]

    def run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", f"tools.{self.script}", *args], capture_output=True, text=True, cwd=REPO
        )
