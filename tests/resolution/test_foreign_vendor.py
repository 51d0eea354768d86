"""The warning ``name-from-another-vendor`` (issue 41): the whole-file
algorithms (plugin v1.0.0 to v1.2.1) name a device from the first line
holding its id anywhere in pci.ids, so an old profile can name an NVIDIA
GPU from another vendor's section. The name is what that release
advertised; the warning says where it comes from.

The line is found here by a plain scan that follows the Go loop (the first
trimmed line holding the id; the anchored algorithm skips a line with text
before its only occurrence) and its section by walking up to the vendor
line: independent of the index the resolver uses."""

from __future__ import annotations

import bisect
import itertools
import re

import pytest

import pciname
from pciname.naming.algorithms import WHOLE_FILE_ANCHORED
from pciname.naming.checks import NAME_FROM_ANOTHER_VENDOR
from pciname.naming.gotext import trim_space
from pciname.naming.profiles import load_registry
from pciname.resolution.resolver import Resolver

VENDOR = re.compile(r"([0-9a-f]{4})\s+(.*)")


class Scan:
    """The Go loop over a file, one id at a time: the first trimmed line
    holding the id (found in the joined text), the anchored algorithm going
    on past a line with text before its only occurrence."""

    def __init__(self, lines: list[str]) -> None:
        trimmed = [trim_space(line) for line in lines]
        self.text = "\n".join(trimmed)
        self.starts = list(itertools.accumulate((len(line) + 1 for line in trimmed), initial=0))
        self.trimmed = trimmed

    def deciding_line(self, device_id: str, anchored: bool) -> int | None:
        at = self.text.find(device_id)
        while at >= 0:
            number = bisect.bisect_right(self.starts, at) - 1
            parts = self.trimmed[number].split(device_id)
            if not (anchored and len(parts) == 2 and parts[0]):
                return number
            at = self.text.find(device_id, self.starts[number + 1])
        return None


def section(lines: list[str], number: int) -> tuple[str, str] | None:
    for line in reversed(lines[: number + 1]):  # up to the section's head
        if line.startswith("C "):
            return None
        if (vendor := VENDOR.match(line)) and not line.startswith(("\t", " ")):
            return vendor.group(1), vendor.group(2)
    return None


def test_the_h100_under_old_gpu_operators_says_where_its_name_comes_from():
    """The two cases the issue names: the names are kept (that is what those
    releases advertised), each with the warning naming the line."""
    zywall = pciname.resolve("10de:2330", "gpu-operator@v22.9.0")
    wireless = pciname.resolve("10de:2330", "gpu-operator@v1.11.0")
    assert (zywall.resource_name, wireless.resource_name) == (
        "nvidia.com/ZYWALL_TURBO_CARD",
        "nvidia.com/802_11BG_WIRELESS_CARDBUS_ADAPTER",
    )
    (warning,) = zywall.warnings
    assert warning.code == NAME_FROM_ANOTHER_VENDOR
    assert "vendor 19ba (ZyXEL Communications Corp.): '2330  ZyWALL Turbo Card'" in warning.message
    assert "v1.2.1 names a device from the first line holding its id anywhere" in warning.message
    (warning,) = wireless.warnings
    assert "vendor 168c (Qualcomm Atheros)" in warning.message
    assert NAME_FROM_ANOTHER_VENDOR not in pciname.resolve("10de:2330", "latest").warning_codes


def distinct_whole_file_profiles() -> list[str]:
    """One plugin release per (algorithm, pci.ids file): the others give the same answers."""
    resolver, seen = Resolver(), {}
    for profile in load_registry().plugin_releases():
        if profile.algorithm.startswith("whole-file"):
            seen.setdefault((profile.algorithm, resolver.view(profile.name).catalog.sha256), profile.name)
    return list(seen.values())


@pytest.mark.parametrize("profile", distinct_whole_file_profiles())
def test_the_warning_is_given_exactly_where_the_line_is_another_vendors(profile):
    """Every NVIDIA id of the profile's universe: the warning iff the plain scan's line lies in
    another vendor's section, naming that line's number."""
    resolver = Resolver()
    view = resolver.view(profile)
    lines = view.catalog.lines()
    scan = Scan(lines)
    anchored = view.profile.algorithm == WHOLE_FILE_ANCHORED
    for result in resolver.devices(profile):
        device_id = result.device.partition(":")[2]
        number = scan.deciding_line(device_id, anchored)
        owner = section(lines, number) if number is not None and result.name else None
        expected = owner is not None and owner[0] != "10de"
        assert (NAME_FROM_ANOTHER_VENDOR in result.warning_codes) == expected, result.device
        if expected:
            (message,) = [w.message for w in result.warnings if w.code == NAME_FROM_ANOTHER_VENDOR]
            assert f" line {number + 1}, in the section of vendor {owner[0]} " in message
