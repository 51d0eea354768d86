"""The vGPU types a node offers, read from sysfs: exact by construction.

* mdev GPUs (Maxwell to Ampere, and SR-IOV VFs of older drivers): each
  function's ``mdev_supported_types/<id>/{name,available_instances,device_api}``,
  ``<id>`` being the node's ``nvidia-NNN`` (it differs per SKU and driver;
  no portable table exists);
* SR-IOV GPUs without mdev (Ada and later on vGPU 17+): each virtual
  function's ``nvidia/creatable_vgpu_types`` (a header ``ID : vGPU Name``,
  then one ``ID : NAME`` line per type it can still create) and
  ``nvidia/current_vgpu_type`` (the ID of the type it carries, ``0``: none),
  the layout Harvester's ``pcidevices`` reads and tests with. NVIDIA's
  plugin reads only ``/sys/bus/mdev/devices`` (through v1.6.0), so such a
  type has no NVIDIA resource name: KubeVirt's own plugin takes the VFs.

Every path is resolved inside the root and read bounded, as the scan does
(:mod:`pciname.host.rootfs`); an attribute that cannot be read is left
``None``. KubeVirt's own plugin (v1.9+, no ``externalResourceProvider``)
selects SR-IOV VFs by ``pciVendorSelector``, and the VFs share their PF's
device id, so every VF of one model lands in one resource whatever vGPU
type it carries: :func:`mixed_sriov_types` finds a node where a VM may get
any of several types.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pciname.host import rootfs
from pciname.host.diagnoses import SRIOV_VGPU_TYPES_MIXED, Diagnosis
from pciname.naming import mdev, vgpu
from pciname.pciids.ids import NVIDIA_VENDOR_ID

MDEV = "mdev"
SRIOV = "sriov"
_PCI_DEVICES = "sys/bus/pci/devices"


@dataclass(frozen=True, slots=True)
class OfferedType:
    """One vGPU type a function offers (or, SR-IOV, carries)."""

    address: str  # the function offering it (a PF, or an SR-IOV VF)
    physfn: str | None  # an SR-IOV VF's PF
    device: str | None  # the function's device id ("10de:26b9")
    kind: str  # "mdev" or "sriov"
    type_id: str  # "nvidia-746" (mdev) or "1155" (SR-IOV)
    name: str  # mdev_type/name or the creatable_vgpu_types name, exact
    available_instances: int | None  # mdev only
    device_api: str | None  # mdev only
    current: bool  # SR-IOV: the type the VF carries now
    # What the profile's plugin makes of the name once a vGPU of it exists
    # (mdev only: NVIDIA's plugin reads /sys/bus/mdev/devices and nothing of
    # an SR-IOV VF's nvidia/ files, through v1.6.0).
    resource_name: str | None
    catalogue_max: int | None  # the catalogue's most per GPU, if it lists the type

    @property
    def type(self) -> str:
        return vgpu.type_token(self.name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "address": self.address,
            "physfn": self.physfn,
            "device": self.device,
            "kind": self.kind,
            "type_id": self.type_id,
            "name": self.name,
            "type": self.type,
            "available_instances": self.available_instances,
            "device_api": self.device_api,
            "current": self.current,
            "resource_name": self.resource_name,
            "catalogue_max_instances": self.catalogue_max,
        }


def _text(root: Path, path: str) -> str | None:
    try:
        return rootfs.read_attr(root, path).decode("utf-8", "surrogateescape")
    except OSError:
        return None


def _int(text: str | None) -> int | None:
    try:
        return int(text.strip()) if text is not None else None
    except ValueError:
        return None


def parse_creatable(text: str) -> list[tuple[str, str]]:
    """``creatable_vgpu_types`` -> [(ID, name)]: lines ``ID : NAME`` after
    the ``ID : vGPU Name`` header; other lines are skipped."""
    out = []
    for line in text.splitlines():
        ident, sep, name = line.partition(":")
        ident, name = ident.strip(), name.strip()
        if sep and ident.isdigit() and name:
            out.append((ident, name))
    return out


def _catalogue_max(device: str | None, name: str) -> int | None:
    if device is None:
        return None
    cat = vgpu.catalogue()
    token = vgpu.type_token(name)
    for family in cat.devices.get(device.partition(":")[2], ()):
        for _config, vgpu_type, count, _since in cat.families[family]:
            if vgpu_type == token:
                return count
    return None


def offered_types(root: str | os.PathLike[str], rule: str = mdev.DEFAULT_MDEV_NAME) -> list[OfferedType]:
    """Every vGPU type each NVIDIA function under ``root`` offers, in the
    order of ``sys/bus/pci/devices`` and of each type directory."""
    base = Path(root)
    try:
        real = rootfs.directory(base, _PCI_DEVICES)
        listed = rootfs.entries(base, real)
    except OSError:
        return []
    out: list[OfferedType] = []
    for entry in listed:
        try:
            dev = rootfs.resolved(base, f"{real}/{entry.name}")
            vendor = rootfs.read_id(base, f"{dev}/vendor")
        except (OSError, rootfs.ShortFile):
            continue
        if vendor != NVIDIA_VENDOR_ID:
            continue
        try:
            device: str | None = f"{vendor}:{rootfs.read_id(base, f'{dev}/device')}"
        except (OSError, rootfs.ShortFile):
            device = None
        try:
            physfn: str | None = rootfs.link_base(base, f"{dev}/physfn")
        except OSError:
            physfn = None
        out.extend(_mdev_types(base, dev, entry.name, physfn, device, rule))
        out.extend(_sriov_types(base, dev, entry.name, physfn, device, rule))
    return out


def _mdev_types(
    base: Path, dev: str, address: str, physfn: str | None, device: str | None, rule: str
) -> list[OfferedType]:
    try:
        types_dir = rootfs.directory(base, f"{dev}/mdev_supported_types")
        listed = rootfs.entries(base, types_dir)
    except OSError:
        return []
    out = []
    for t in listed:
        raw = _text(base, f"{types_dir}/{t.name}/name")
        if raw is None:
            continue
        name = raw.strip("\n")
        api = _text(base, f"{types_dir}/{t.name}/device_api")
        out.append(
            OfferedType(
                address=address,
                physfn=physfn,
                device=device,
                kind=MDEV,
                type_id=t.name,
                name=name,
                available_instances=_int(_text(base, f"{types_dir}/{t.name}/available_instances")),
                device_api=None if api is None else api.strip(),
                current=False,
                resource_name=mdev.mdev_resource(name, rule),
                catalogue_max=_catalogue_max(device, name),
            )
        )
    return out


def _sriov_types(
    base: Path, dev: str, address: str, physfn: str | None, device: str | None, rule: str
) -> list[OfferedType]:
    creatable = _text(base, f"{dev}/nvidia/creatable_vgpu_types")
    current = (_text(base, f"{dev}/nvidia/current_vgpu_type") or "").strip()
    if creatable is None:
        return []
    out = []
    for ident, name in parse_creatable(creatable):
        out.append(
            OfferedType(
                address=address,
                physfn=physfn,
                device=device,
                kind=SRIOV,
                type_id=ident,
                name=name,
                available_instances=None,
                device_api=None,
                current=ident == current,
                resource_name=None,
                catalogue_max=_catalogue_max(device, name),
            )
        )
    return out


def mixed_sriov_types(offered: list[OfferedType]) -> list[Diagnosis]:
    """One diagnosis per device id whose SR-IOV VFs carry different vGPU
    types: KubeVirt's own plugin selects them all by that id into one
    resource, so a VM asking for it may get any of the types."""
    carried: dict[str, dict[str, list[str]]] = {}
    for o in offered:
        if o.kind == SRIOV and o.current and o.device is not None:
            carried.setdefault(o.device, {}).setdefault(o.name, []).append(o.address)
    found = []
    for device, types in carried.items():
        if len(types) > 1:
            listed = "; ".join(f"{name} on {', '.join(vfs)}" for name, vfs in types.items())
            found.append(
                Diagnosis.of(
                    SRIOV_VGPU_TYPES_MIXED,
                    device,
                    f"the SR-IOV VFs of {device} carry {len(types)} vGPU types ({listed}); they share the PF's device "
                    f"id, so KubeVirt's own plugin (pciVendorSelector {device.upper()}) puts all of them in one "
                    "resource and a VM asking for it may get any of these types: give all VFs of a model one type",
                )
            )
    return found


def mdev_config(offered: list[OfferedType], wanted: list[str]) -> dict[str, Any]:
    """KubeVirt's ``mediatedDevicesConfiguration`` creating ``wanted`` (a
    type such as ``A10-24Q`` or its exact name) with the node's own
    ``nvidia-NNN`` ids; PcinameError when the node offers one not as mdev."""
    from pciname.errors import PcinameError

    ids: list[str] = []
    for item in wanted:
        matches = [o for o in offered if o.kind == MDEV and item in (o.name, o.type)]
        if not matches:
            sriov = [o for o in offered if o.kind == SRIOV and item in (o.name, o.type)]
            why = (
                f"it is offered only by SR-IOV VFs ({sriov[0].address}: nvidia/creatable_vgpu_types), which "
                "KubeVirt's mediated device configuration does not create"
                if sriov
                else "no mdev_supported_types/*/name on the node reads it"
            )
            raise PcinameError(f"--mdev-config {item}: the node offers no mdev type {item!r}: {why}")
        for o in matches:
            if o.type_id not in ids:
                ids.append(o.type_id)
    return {"mediatedDevicesConfiguration": {"mediatedDeviceTypes": ids}}
