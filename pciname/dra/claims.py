"""What NVIDIA's DRA driver publishes for a vfio GPU, and the claims that match it.

:func:`predicted_device` is the slice entry the driver's code computes for an
NVIDIA id (``VfioDeviceInfo.GetDevice``): the stable attributes (``type``,
``vendorID``, ``deviceID``, ``productName``) exactly, and the host-dependent
ones (device name index, ``uuid``, ``pciBusID``, ``numa``, ``pcieRoot``,
``addressableMemory``) named as such, never guessed. ``productName`` is
go-nvlib's raw device name from the pci.ids its container reads: its
embedded copy unless the image has a system pci.ids, which git cannot
establish (the facts say so, and so does :attr:`PredictedDevice.inferred`).

:func:`dra_objects` writes, for GPUs given as ``(device id, count)``, the
ResourceClaimTemplate (one request per GPU, selecting by vendor and device id
and, on request, the exact product name: never by a host-dependent value),
the VirtualMachine fragment (``spec.template.spec.resourceClaims`` and
``gpus[]`` with ``claimName``/``requestName``), the DeviceClass the selector
assumes (to check with ``kubectl diff``); notes say what the driver facts
rest on (a tagged release, or unreleased main), which feature gates must be
on (the driver's, and KubeVirt's ``GPUsWithDRA`` where the release leaves it
off) and what crashes the release's plugin when it prepares the claim (v0.4.0
on a GPU without SR-IOV).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

from pciname.base.cel import cel_string
from pciname.dra.facts import EXACTLY_APIS, Combination
from pciname.errors import PcinameError
from pciname.naming import kata
from pciname.naming.algorithms import GO_NVLIB
from pciname.pciids.ids import NVIDIA_VENDOR_ID

#: The attributes a selector may use: they are the same on every host.
STABLE_ATTRIBUTES = ("type", "vendorID", "deviceID", "productName")
REQUEST_PREFIX = "gpu"


@dataclass(frozen=True)
class PredictedDevice:
    """One vfio GPU as the driver publishes it: ``attributes`` by name
    (unqualified names are the driver's domain), and what varies per host."""

    device: str
    driver: str
    attributes: dict[str, Any]
    host_dependent: tuple[str, ...]
    inferred: tuple[str, ...] = field(default=())

    def cel_device(self) -> dict[str, Any]:
        """The device as a DRA CEL expression sees it (``device.driver``,
        ``device.attributes[domain][name]``), stable attributes only."""
        return {"driver": self.driver, "attributes": {self.driver: dict(self.attributes)}}


@lru_cache(maxsize=4)
def _product_names(sha256: str) -> dict[str, str]:
    """NVIDIA device id -> go-nvlib's raw name, from the snapshot with ``sha256``."""
    from pciname.naming.profiles import load_registry
    from pciname.resolution.resolver import profile_catalog

    profile = next(
        (p for p in load_registry().profiles.values() if p.snapshot and p.snapshot.sha256 == sha256),
        None,
    )
    if profile is None:  # pragma: no cover - the facts name a shipped snapshot (a test holds it)
        raise PcinameError(f"the DRA driver's pci.ids (sha256 {sha256}) is no snapshot this pciname ships")
    return kata.go_nvlib_devices(profile_catalog(profile).lines_for(GO_NVLIB))


def predicted_device(device_id: str, combination: Combination) -> PredictedDevice:
    """The slice entry of a vfio-bound NVIDIA GPU ``device_id`` (4 hex digits)."""
    vfio = combination.vfio
    product = vfio["product_name"]
    names = _product_names(product["embedded"]["sha256"])
    attributes = {
        "type": "vfio",
        "vendorID": f"0x{NVIDIA_VENDOR_ID}",
        "deviceID": f"0x{device_id.lower()}",
        "productName": names.get(device_id.lower(), product["unknown"]),
    }
    host = tuple(a["name"] for a in vfio["attributes"] if a["name"].rpartition("/")[2] not in STABLE_ATTRIBUTES)
    capacity = tuple(c["name"] for c in vfio["capacity"])
    inferred = (
        f"productName is go-nvlib's name from its embedded pci.ids {product['embedded']['version']}: the driver "
        f"reads the first of {', '.join(product['system_paths'])} that exists in its container instead, which "
        "the repositories do not establish",
    )
    return PredictedDevice(
        device=f"{NVIDIA_VENDOR_ID}:{device_id.lower()}",
        driver=combination.driver_facts["driver_name"],
        attributes=attributes,
        host_dependent=(vfio["device_name"]["format"], *host, *capacity),
        inferred=inferred,
    )


def selector(device: PredictedDevice, *, product_name: bool = False) -> str:
    """The CEL selector of one GPU model: vendor and device id (and the exact
    product name), attributes of the driver's domain."""
    domain = f"device.attributes[{cel_string(device.driver)}]"
    names = ["vendorID", "deviceID", *(["productName"] if product_name else [])]
    return " && ".join(f"{domain}.{name} == {cel_string(str(device.attributes[name]))}" for name in names)


def _request(name: str, device_class: str, expression: str, api: str) -> dict[str, Any]:
    one = {
        "deviceClassName": device_class,
        "selectors": [{"cel": {"expression": expression}}],
        "allocationMode": "ExactCount",
        "count": 1,
    }
    return {"name": name, "exactly": one} if api in EXACTLY_APIS else {"name": name, **one}


def _vfio_config(combination: Combination, requests: list[str]) -> list[dict[str, Any]]:
    """The opaque VfioDeviceConfig a VM's claim needs: with an ``iommu``
    block (v0.4.0 and later), ``enableAPIDevice: true`` so that the claim's
    CDI edits hold the container node (``/dev/vfio/vfio``) QEMU opens."""
    config = combination.vfio["config"]
    fields = config.get("fields") or {}
    if "iommu" not in fields:
        return []
    parameters = {"apiVersion": config["api_version"], "kind": config["kind"], "iommu": {"enableAPIDevice": True}}
    return [
        {"requests": requests, "opaque": {"driver": combination.driver_facts["driver_name"], "parameters": parameters}}
    ]


@dataclass(frozen=True)
class DraObjects:
    """The generated documents, in order, and the notes to show beside them."""

    documents: tuple[dict[str, Any], ...]
    devices: tuple[PredictedDevice, ...]
    notes: tuple[str, ...]
    combination: Combination


def dra_objects(
    gpus: list[tuple[str, int]],
    combination: Combination,
    *,
    name: str,
    prefix: str = REQUEST_PREFIX,
    product_name: bool = False,
) -> DraObjects:
    """The documents for ``gpus`` (NVIDIA device id, count), in order: the
    ResourceClaimTemplate ``name`` (the capability's default:
    :data:`pciname.capabilities.vm_gpus.DEFAULT_NAME`), the VirtualMachine fragment, the
    DeviceClass."""
    api = f"resource.k8s.io/{combination.resource_api}"
    device_class = combination.vfio["device_class"]
    requests: list[dict[str, Any]] = []
    entries: list[dict[str, str]] = []
    devices: list[PredictedDevice] = []
    for device_id, count in gpus:
        device = predicted_device(device_id, combination)
        devices.append(device)
        expression = selector(device, product_name=product_name)
        for _ in range(count):
            request = f"{prefix}{len(requests) + 1}"
            requests.append(_request(request, device_class["name"], expression, combination.resource_api))
            entries.append({"name": request, "claimName": name, "requestName": request})
    spec: dict[str, Any] = {"devices": {"requests": requests}}
    config = _vfio_config(combination, [r["name"] for r in requests])
    if config:
        spec["devices"]["config"] = config
    template = {"apiVersion": api, "kind": "ResourceClaimTemplate", "metadata": {"name": name}, "spec": {"spec": spec}}
    vm = {
        "apiVersion": "kubevirt.io/v1",
        "kind": "VirtualMachine",
        "metadata": {"name": name},
        "spec": {
            "template": {
                "spec": {
                    "resourceClaims": [{"name": name, "resourceClaimTemplateName": name}],
                    "domain": {"devices": {"gpus": entries}},
                }
            }
        },
    }
    deviceclass = {
        "apiVersion": api,
        "kind": "DeviceClass",
        "metadata": {"name": device_class["name"]},
        "spec": {"selectors": [{"cel": {"expression": device_class["selector"]}}]},
    }
    documents: list[dict[str, Any]] = [template, vm, deviceclass]
    gates = combination.gates_off_by_default()
    notes = [
        f"DRA driver {combination.driver} is {combination.certainty}",
        f"DRA driver {combination.driver} publishes vfio GPUs only with its feature gates "
        f"{', '.join(f'{g}=true' for g in combination.driver_gates())} (Helm value featureGates)",
        *(f"inferred: {text}" for text in devices[0].inferred[:1]),
    ]
    if config:
        notes.append(
            "inferred: the claim asks the driver for iommu.enableAPIDevice: true, since without it the claim's "
            "CDI edits hold no /dev/vfio/vfio (the driver's default) and KubeVirt's DRA path adds none"
        )
    crash = combination.prepare_crash()
    if crash is not None:
        notes.append(crash)
    if gates:
        notes.append(
            f"KubeVirt {combination.kubevirt} leaves {', '.join(gates)} off by default: add it to the KubeVirt CR's "
            "spec.configuration.developerConfiguration.featureGates"
        )
    return DraObjects(tuple(documents), tuple(devices), tuple(notes), combination)


__all__ = ["STABLE_ATTRIBUTES", "DraObjects", "PredictedDevice", "dra_objects", "predicted_device", "selector"]
