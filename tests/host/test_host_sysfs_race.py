"""``scan --sysfs-root`` never reads outside the root, even while the tree
changes under it (issue 16, item 12): a directory swapped for a symlink
between its check and the read must not send the read out of the root."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from pciname.host import rootfs
from pciname.host.sysfs import scan
from tests.sysfs_tree import SysfsTree

ADDRESS = "0000:3b:00.0"
SECRET = "0x1337\n"  # the device id outside the root


def _outside(tmp_path: Path) -> Path:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "vendor").write_text("0x10de\n")
    (outside / "device").write_text(SECRET)
    (outside / "class").write_text("0x030200\n")
    return outside


_SWAP = """
import ctypes, os, sys
target, outside, aside = sys.argv[1:4]
os.symlink(outside, aside)
libc = ctypes.CDLL(None, use_errno=True)
AT_FDCWD, RENAME_EXCHANGE = -100, 2
def exchange():
    if libc.renameat2(AT_FDCWD, target.encode(), AT_FDCWD, aside.encode(), RENAME_EXCHANGE) != 0:
        raise OSError(ctypes.get_errno(), "renameat2")
exchange(); exchange()  # renameat2(RENAME_EXCHANGE) works here (Linux 3.15, glibc 2.28)
print("ready", flush=True)
while True:
    exchange()
"""


class Swapper:
    """Another process swaps the function's directory with an absolute
    symlink to ``outside`` (atomically: ``renameat2(RENAME_EXCHANGE)``) and
    back, as fast as it can, until stopped (a process, not a thread: the
    swaps run while this process reads)."""

    def __init__(self, target: Path, outside: Path) -> None:
        self.args = [
            sys.executable,
            "-c",
            _SWAP,
            str(target),
            str(outside),
            str(target.with_name(target.name + ".aside")),
        ]
        self.target = target
        self.process: subprocess.Popen[str] | None = None

    def __enter__(self) -> Swapper:
        self.process = subprocess.Popen(self.args, stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None and self.process.stdout.readline() == "ready\n"
        return self

    def __exit__(self, *exc: object) -> None:
        assert self.process is not None
        self.process.kill()
        self.process.wait(10)
        aside = self.target.with_name(self.target.name + ".aside")
        if self.target.is_symlink():  # killed between two exchanges: put the directory back
            self.target.unlink()
            os.rename(aside, self.target)
        else:
            aside.unlink()


def test_a_racing_symlink_swap_never_reads_outside_the_root(tmp_path):
    root = tmp_path / "root"
    tree = SysfsTree(root)
    tree.add_function(ADDRESS, device="0x2236\n")
    outside = _outside(tmp_path)
    seen: set[bytes] = set()
    with Swapper(tree.device_dir(ADDRESS), outside):
        for _ in range(2000):
            for attr in ("device", "vendor"):
                try:
                    seen.add(rootfs.read_attr(root, f"sys/bus/pci/devices/{ADDRESS}/{attr}"))
                except OSError:
                    pass  # caught mid-swap: unreadable, which scan reports
            try:
                names = [e.name for e in rootfs.entries(root, f"sys/bus/pci/devices/{ADDRESS}")]
                assert ("vendor" in names and "driver" in names) or "device" not in names
            except OSError:
                pass
    assert SECRET.encode() not in seen
    assert b"0x2236\n" in seen  # and the reads inside did succeed


def test_racing_scans_never_report_a_device_from_outside(tmp_path):
    root = tmp_path / "root"
    tree = SysfsTree(root)
    tree.add_function(ADDRESS, device="0x2236\n")
    outside = _outside(tmp_path)
    devices: set[str | None] = set()
    with Swapper(tree.device_dir(ADDRESS), outside):
        for _ in range(40):
            devices.update(f.device for f in scan(root, "latest").functions)
    assert "1337" not in devices


def test_planted_symlinks_stay_inside_the_root(tmp_path):
    """An absolute link means ROOT/..., and ``..`` stops at the root: a link
    planted to reach the outside reads the root's own files or nothing."""
    root = tmp_path / "root"
    tree = SysfsTree(root)
    tree.add_function(ADDRESS, device="0x2236\n")
    outside = _outside(tmp_path)
    planted = tree.sys / "bus" / "pci" / "devices" / "0000:3c:00.0"
    os.symlink(outside, planted)  # absolute: ROOT + the outside path, which does not exist
    climbing = tree.sys / "bus" / "pci" / "devices" / "0000:3d:00.0"
    os.symlink("../../../../../../../../../../" + str(outside).lstrip("/"), climbing)
    for link in (planted, climbing):
        try:
            data = rootfs.read_attr(root, f"sys/bus/pci/devices/{link.name}/device")
        except OSError as error:
            assert rootfs.missing(error)
        else:
            raise AssertionError(f"read {data!r} through {link}")
    assert {f.address: f.device for f in scan(root, "latest").functions}.get("0000:3c:00.0") is None
    assert "1337" not in {f.device for f in scan(root, "latest").functions}
