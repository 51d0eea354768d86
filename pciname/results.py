"""Results: what pciname answers, as typed values (a leaf: the engine and the
API both build them, and they import nothing above the naming rules).

* :class:`Resolution`: one device under one profile;
* :class:`DiffEntry`: one device whose resource differs between profiles;
* :class:`ProfileInfo`: one profile, its release and its pci.ids file.

Each has ``to_dict()``, the plain-data form that JSON, YAML and the gRPC
service carry; a *record* (:data:`Record`) is a Resolution in that form.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from .naming import checks
from .naming.checks import NameWarning

#: One device's resolution as plain data: :meth:`Resolution.to_dict`'s shape.
Record = dict[str, Any]

__all__ = ["DiffEntry", "ProfileInfo", "Record", "Resolution"]


@dataclass(frozen=True, slots=True)
class Resolution:
    """What a profile makes of one PCI device.

    ``resource_name`` is what the plugin registers with kubelet (None: it
    advertises nothing for this device); ``name`` is the name the plugin
    derived from pci.ids (``""``: none, so v1.0.1+ fall back to the id).
    ``advertised`` is False also when kubelet would refuse the name.
    """

    device: str
    profile: str
    algorithm: str
    plugin_release: str | None
    name: str
    resource_name: str | None
    vendor_name: str | None
    device_name: str | None
    pci_ids_version: str | None
    pci_ids_sha256: str | None
    env_var: str | None
    socket_path: str | None
    warnings: tuple[NameWarning, ...] = field(default=())

    @classmethod
    def from_record(cls, record: Record) -> Resolution:
        """From the engine's plain-data form (:meth:`to_dict`'s shape)."""
        fields = {k: v for k, v in record.items() if k not in ("advertised", "warnings")}
        return cls(**fields, warnings=tuple(NameWarning(w["code"], w["message"]) for w in record["warnings"]))

    @property
    def advertised(self) -> bool:
        return checks.is_advertised(self.resource_name, self.warning_codes)

    @property
    def warning_codes(self) -> tuple[str, ...]:
        return tuple(w.code for w in self.warnings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "device": self.device,
            "profile": self.profile,
            "algorithm": self.algorithm,
            "plugin_release": self.plugin_release,
            "name": self.name,
            "resource_name": self.resource_name,
            "advertised": self.advertised,
            "vendor_name": self.vendor_name,
            "device_name": self.device_name,
            "pci_ids_version": self.pci_ids_version,
            "pci_ids_sha256": self.pci_ids_sha256,
            "env_var": self.env_var,
            "socket_path": self.socket_path,
            "warnings": [w.to_dict() for w in self.warnings],
        }


@dataclass(frozen=True, slots=True)
class DiffEntry:
    """One device whose resource differs between two profiles."""

    device: str
    old: str | None
    new: str | None

    @property
    def change(self) -> str:
        if self.old is None:
            return "appears"
        if self.new is None:
            return "vanishes"
        return "renamed"

    def to_dict(self) -> dict[str, Any]:
        return {"device": self.device, "change": self.change, "old": self.old, "new": self.new}


@dataclass(frozen=True, slots=True)
class ProfileInfo:
    name: str
    kind: str
    released: str | None
    algorithm: str
    plugin_release: str | None
    pci_ids_version: str | None
    pci_ids_sha256: str | None
    installed: bool
    path: str | None
    aliases: tuple[str, ...]
    note: str

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "released": self.released,
            "algorithm": self.algorithm,
            "plugin_release": self.plugin_release,
            "pci_ids_version": self.pci_ids_version,
            "pci_ids_sha256": self.pci_ids_sha256,
            "installed": self.installed,
            "path": self.path,
            "aliases": list(self.aliases),
            "note": self.note,
        }
