"""DRA driver nodes for the scan tests: GPUs as the kernel shows them, with
the ``resource`` file go-nvlib reads (BARs whose sizes are written out), and
nodes that give every DRA diagnosis."""

from __future__ import annotations

import os

from pciname.dra.facts import for_driver
from pciname.host.dra_scan import dra_scan
from tests.sysfs_tree import SysfsTree

#: An A10's regions as /sys/bus/pci/devices/*/resource lists them: BAR0 16 MiB
#: of 32-bit memory, BAR1 32 GiB and BAR3 32 MiB of 64-bit prefetchable
#: memory (flags 0x14220c: type bits 0x4), then empty BARs, the ROM and the
#: SR-IOV BARs (13 lines). go-nvlib sums the 64-bit ones, 32 GiB + 32 MiB,
#: and rounds up to a power of two: 64 GiB.
EMPTY = "0x0000000000000000 0x0000000000000000 0x0000000000000000"
A10_RESOURCE = (
    "\n".join(
        [
            "0x00000000fb000000 0x00000000fbffffff 0x0000000000040200",
            "0x0000038000000000 0x00000387ffffffff 0x000000000014220c",
            EMPTY,
            "0x0000038800000000 0x0000038801ffffff 0x000000000014220c",
            *[EMPTY] * 9,
        ]
    )
    + "\n"
)
#: An audio function: one 16 KiB 32-bit BAR.
AUDIO_RESOURCE = "0x00000000fc080000 0x00000000fc083fff 0x0000000000040200\n" + "\n".join([EMPTY] * 12) + "\n"


def add(tree, address, resource=A10_RESOURCE, **kwargs):
    """A function as the kernel shows it, with the resource file go-nvlib reads."""
    path = tree.add_function(address, **kwargs)
    if resource is not None:
        (path / "resource").write_text(resource)
    return path


def a10_and_audio(tree):
    """An A10 (3b:00.0) and its audio function on vfio-pci in group 12 (README.md's node)."""
    add(tree, "0000:3b:00.0", device="0x2236\n", iommu_group="12")
    add(tree, "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", iommu_group="12", resource=AUDIO_RESOURCE)


def a10_audio_and_a100(tree):
    """:func:`a10_and_audio`; an A100 80GB (af:00.0) on nvidia on NUMA node 1;
    an Intel SATA controller."""
    a10_and_audio(tree)
    add(tree, "0000:af:00.0", device="0x20b5\n", driver="nvidia", iommu_group="87", numa_node="1\n")
    add(
        tree,
        "0000:00:1f.2",
        vendor="0x8086\n",
        device="0xa182\n",
        pci_class="0x010601\n",
        driver="ahci",
        iommu_group="5",
        resource=None,
    )


def dra_codes_seen(tmp_path):
    """(code, severity) of every DRA diagnosis, from nodes that give each."""
    seen = []
    for name, build, release in (
        ("two", a10_audio_and_a100, "v0.4.0"),  # dra-not-a-gpu, dra-gpu-on-nvidia
        ("bug", a10_audio_and_a100, "v25.12.0"),  # dra-no-vfio-devices
        ("driverless", _driverless_node, "v0.4.0"),  # dra-cannot-prepare
        ("rootless", _rootless_node, "v0.4.0"),  # dra-no-pcie-root
        ("failed", _numaless_audio_node, "v0.4.0"),  # dra-discovery-failed
    ):
        tree = SysfsTree(tmp_path / name)
        build(tree)
        seen += [(d.code, d.severity) for d in dra_scan(tree.root, for_driver(release)).diagnoses]
    return seen


def _driverless_node(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n", driver=None)


def _rootless_node(tree):
    """The A10's bus link absolute (/sys/devices/...): resolvePCIeRoot takes
    no absolute target."""
    add(tree, "0000:3b:00.0", device="0x2236\n")
    link = tree.sys / "bus/pci/devices/0000:3b:00.0"
    link.unlink()
    os.symlink("/sys/devices/pci0000:00/0000:3b:00.0", link)


def _numaless_audio_node(tree):
    add(tree, "0000:3b:00.0", device="0x2236\n")
    add(tree, "0000:3b:00.1", device="0x1aef\n", pci_class="0x040300\n", numa_node=None, resource=AUDIO_RESOURCE)


def readme_commands(marker):
    """README.md's transcript commands holding ``marker``: (the command, the
    lines it shows), read as tests/project/test_readme.py reads them (its
    output up to the next ``$ `` line or the fence)."""
    from tests.conftest import REPO

    lines = (REPO / "docs" / "dra.md").read_text(encoding="utf-8").split("\n")
    found = []
    for i, line in enumerate(lines):
        if line.startswith("$ ") and marker in line:
            shown = []
            for after in lines[i + 1 :]:
                if after.startswith(("$ ", "```")):
                    break
                shown.append(after)
            found.append((line[2:], shown))
    return found


def replay(command, cwd, env):
    """What ``command`` (``pciname ...``, maybe ``; echo $?``) prints, stdout then stderr, as lines."""
    import shlex

    from tests.cli_run import only, pciname

    text, echo = (command[: -len("; echo $?")], True) if command.endswith("; echo $?") else (command, False)
    argv = shlex.split(text)
    done = pciname(*argv[1:], cwd=cwd, env=only(env))
    out = (done.stdout + done.stderr).split("\n")
    if out[-1] == "":
        out.pop()
    return out + ([str(done.returncode)] if echo else [])
