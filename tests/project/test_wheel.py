"""The wheel a plain ``pip install .`` builds: under 3 MB (issue 24's
bound, with every snapshot, the packaged answers and every release's facts
inside), and carrying each data file the code reads at run time."""

from __future__ import annotations

import subprocess
import sys
import zipfile

from tests.conftest import REPO

MAX_WHEEL_BYTES = 3_000_000


def test_the_wheel_is_small_and_carries_the_release_facts(tmp_path):
    done = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", str(tmp_path), str(REPO)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    (wheel,) = tmp_path.glob("pciname-*.whl")
    assert wheel.stat().st_size < MAX_WHEEL_BYTES, wheel.stat().st_size
    names = set(zipfile.ZipFile(wheel).namelist())
    for data in (
        "profiles.json",
        "snapshots.tar.xz",
        "cozystack/releases.json",
        "kata/releases.json",
        "dra/releases.json",
        "kubevirt/releases.json",
        "hami/releases.json",
        "k8s-device-plugin/releases.json",
    ):
        assert f"pciname/data/{data}" in names, data
    assert "pciname/naming/kata.py" in names
    assert not any(name.startswith(("tools/", "tests/")) for name in names)
