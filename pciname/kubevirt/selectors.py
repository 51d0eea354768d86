"""How KubeVirt's own device plugin (virt-handler) matches a
``pciHostDevices`` entry's ``pciVendorSelector`` with the node's devices, per
KubeVirt release: the facts :mod:`tools.kubevirt_extract` reads from
KubeVirt's code (``data/kubevirt/releases.json``), each with its file, line
and commit. From v0.39.0 both sides are lowered (any case matches); v0.36.0
to v0.38.x compare the selector as written with the kernel's upper-case
``PCI_ID``, so a selector with lower-case hex selects nothing.
"""

from __future__ import annotations

import functools
import json
from typing import Any, NamedTuple

from pciname.base.paths import kubevirt_releases_path
from pciname.errors import PcinameError

REPOSITORY = "kubevirt/kubevirt"


class CaseSensitive(NamedTuple):
    """A release whose plugin compares PCI selectors case-sensitively, and
    where (``kubevirt/kubevirt@COMMIT PATH:LINE (CODE)``)."""

    release: str
    where: str


@functools.cache
def _facts() -> dict[str, dict[str, Any]]:
    with open(kubevirt_releases_path(), encoding="utf-8") as handle:
        document = json.load(handle)
    return {row["release"]: row for row in document["releases"]}


def releases() -> list[str]:
    """Every KubeVirt release the facts cover, oldest first."""
    return list(_facts())


def known_release(tag: str) -> str:
    """``tag`` (``v1.8.4``; ``1.8.4`` too) as the facts name it, or a
    :class:`~pciname.errors.PcinameError` naming the range covered."""
    spelled = tag.strip()
    spelled = spelled if spelled.startswith("v") else "v" + spelled
    if spelled not in _facts():
        known = releases()
        raise PcinameError(
            f"KubeVirt {tag.strip()!r} is not a release pciname knows (final tags {known[0]} to {known[-1]}: "
            "the releases with permittedHostDevices)"
        )
    return spelled


def facts(release: str) -> dict[str, Any]:
    """The extracted facts of ``release`` as the facts name it (:func:`known_release`)."""
    return _facts()[release]


def case_sensitive(release: str | None) -> CaseSensitive | None:
    """The release's case-sensitive comparison of PCI selectors, or None
    (any case matches: every release from v0.39.0, and the default, the
    newest)."""
    if release is None:
        return None
    row = _facts()[known_release(release)]
    pci = row["pci"]
    if pci["case_insensitive"]:
        return None
    selector, device = pci["selector"], pci["device"]
    where = (
        f"{REPOSITORY}@{row['commit'][:12]} {selector['path']}:{selector['line']} keys by {selector['key']}, "
        f"{device['path']}:{device['line']} returns {device['returns']}"
    )
    return CaseSensitive(row["release"], where)


__all__ = ["CaseSensitive", "case_sensitive", "facts", "known_release", "releases"]
