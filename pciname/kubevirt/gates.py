"""The feature gates a VM's GPUs need, per KubeVirt release: ``GPU`` for
``domain.devices.gpus[]``, ``HostDevices`` for ``domain.devices.hostDevices[]``.
The facts are :mod:`tools.kubevirt_extract`'s (``data/kubevirt/releases.json``,
each with its file, line and commit): whether the VMI admitter rejects a VM
when the gate is off (with its own message), and, for a gate registered as GA
(``GPU`` from v1.4.0), the warning listing it earns. With a gate off,
virt-handler still starts the device plugins; only the VMs are rejected.
"""

from __future__ import annotations

from typing import NamedTuple

from pciname.kubevirt.selectors import REPOSITORY, facts, known_release, releases

#: A VM's device list -> the gate it needs.
NEEDED_BY = {"gpus": "GPU", "hostDevices": "HostDevices"}


class Gate(NamedTuple):
    """One gate in one release: whether a VM that needs it is rejected
    without it (``required``, with the admitter's ``message``), the warning a
    GA gate's listing earns, and where the code says so
    (``kubevirt/kubevirt@COMMIT PATH:LINE``)."""

    name: str
    release: str
    required: bool
    message: str | None
    warning: str | None
    where: str


def gate(name: str, release: str | None = None) -> Gate:
    """Gate ``name`` (``GPU``, ``HostDevices``) in ``release`` (None: the newest known)."""
    tag = known_release(release) if release is not None else releases()[-1]
    row = facts(tag)
    fact = row["gates"][name]
    at = fact["admitter"] or fact["state"] or fact["constant"]
    where = f"{REPOSITORY}@{row['commit'][:12]} {at['path']}:{at['line']}"
    message = fact["admitter"]["message"] if fact["admitter"] else None
    return Gate(name, tag, fact["required"], message, fact["warning"], where)


def gate_names() -> tuple[str, ...]:
    """The gates the facts cover."""
    return tuple(NEEDED_BY.values())


__all__ = ["NEEDED_BY", "Gate", "gate", "gate_names"]
