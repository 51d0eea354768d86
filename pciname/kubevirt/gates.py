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


class Failure(NamedTuple):
    """What a KubeVirt release fails a VM's GPU with, past the admitter: its
    message (a Go format where it has a ``%s``) and where the code says it."""

    release: str
    message: str
    where: str


def _failure(release: str | None, key: str, kind: str | None = None) -> Failure | None:
    tag = known_release(release) if release is not None else releases()[-1]
    row = facts(tag)
    fact = row[key] if kind is None else row[key][kind]
    if fact is None:
        return None
    return Failure(tag, fact["message"], f"{REPOSITORY}@{row['commit'][:12]} {fact['path']}:{fact['line']}")


def not_permitted(kind: str, release: str | None = None) -> Failure | None:
    """How ``release`` rejects a ``gpus[]`` (``kind`` ``GPU``) or
    ``hostDevices[]`` (``HostDevice``) name no permittedHostDevices entry
    permits: the VMI admitter (v0.38 to v0.44) or virt-controller's pod
    rendering (None: v0.36.x and v0.37.x check no such thing)."""
    return _failure(release, "not_permitted", kind)


def gpu_mismatch(release: str | None = None) -> Failure | None:
    """virt-launcher's error for a ``gpus[]`` name whose device plugin left
    no ``PCI_RESOURCE_``/``MDEV_PCI_RESOURCE_`` variable (a name of NVIDIA's
    container plugin); None before v0.45.0, whose code the facts do not cover."""
    return _failure(release, "gpu_mismatch")


def gate_names() -> tuple[str, ...]:
    """The gates the facts cover."""
    return tuple(NEEDED_BY.values())


__all__ = ["NEEDED_BY", "Failure", "Gate", "gate", "gate_names", "gpu_mismatch", "not_permitted"]
