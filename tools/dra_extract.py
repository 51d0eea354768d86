"""Maintainer script: extract the release facts of GPUs for KubeVirt VMs through
Kubernetes DRA (``data/dra/releases.json``) from the git history of
``kubernetes-sigs/dra-driver-nvidia-gpu`` (every final tag ``vX.Y.Z``, then the
head of ``main`` as the unreleased release ``main``), ``kubevirt/kubevirt``
(every final tag from v1.6.0) and ``NVIDIA/gpu-operator`` (every final tag);
of the driver's first home, ``NVIDIA/k8s-dra-driver-gpu``, only the tags (the
releases it tagged at the same commits say so in ``tagged_in``).

    python -m tools.dra_extract --driver-git DIR --kubevirt-git DIR --operator-git DIR --old-driver-git DIR [--inputs tests/data/dra-inputs]
    python -m tools.dra_extract --from-inputs tests/data/dra-inputs [--check]

The git directories may be bare. ``--inputs PREFIX`` also writes the upstream
files read, each distinct blob once, as ``PREFIX.tar.xz`` with the sidecar
``PREFIX.json`` (per repository and tag: commit, date, the blob of each path
read); go-nvlib's embedded pci.ids is kept as facts (sha256, Version, size),
not as a blob. ``--from-inputs`` extracts from those instead of git and
``--check`` compares with the shipped facts (exit 1 when they differ).

Every fact is read from an exact code shape; text the script does not
recognise is an error of one line naming repository, release and file. What
the mirrored tags cannot establish is listed in ``missing``, never guessed.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Any

from tools import upstream
from tools.upstream import (
    At,
    ExtractError,
    GitSource,
    Recording,
    Source,
    VendoredSource,
    add_extractor_options,
    publish,
    version_key,
)

DRIVER_REPOSITORY = "kubernetes-sigs/dra-driver-nvidia-gpu"
#: The driver's first home: its tags up to v0.4.0 name the same commits as the new home's.
OLD_DRIVER_REPOSITORY = "NVIDIA/k8s-dra-driver-gpu"
#: The driver's main branch, modelled as the release it most likely becomes.
UNRELEASED = "main"
KUBEVIRT_REPOSITORY = "kubevirt/kubevirt"
OPERATOR_REPOSITORY = "NVIDIA/gpu-operator"
LICENSES = {
    DRIVER_REPOSITORY: "Apache-2.0",
    OLD_DRIVER_REPOSITORY: "Apache-2.0",
    KUBEVIRT_REPOSITORY: "Apache-2.0",
    OPERATOR_REPOSITORY: "Apache-2.0",
}
KUBEVIRT_FIRST = "v1.6.0"

# -- the driver's files --------------------------------------------------------------
PLUGIN = "cmd/gpu-kubelet-plugin"
MAIN = f"{PLUGIN}/main.go"
TYPES = f"{PLUGIN}/types.go"
NVLIB = f"{PLUGIN}/nvlib.go"
DEVICEINFO = f"{PLUGIN}/deviceinfo.go"
VFIO_DEVICE = f"{PLUGIN}/vfio-device.go"
VFIO_CDI = f"{PLUGIN}/vfio-cdi.go"
DRIVER_GO = f"{PLUGIN}/driver.go"
DEVICE_STATE = f"{PLUGIN}/device_state.go"
FEATUREGATES = "pkg/featuregates/featuregates.go"
CONFIG_API = "api/nvidia.com/resource/v1beta1"
VFIO_CONFIG = f"{CONFIG_API}/vfiodeviceconfig.go"
IOMMU_CONFIG = f"{CONFIG_API}/iommu.go"
CONFIG_API_GO = f"{CONFIG_API}/api.go"
GO_MOD = "go.mod"
VERSION_FILE = "VERSION"
CHARTS = ("deployments/helm/nvidia-dra-driver-gpu", "deployments/helm/dra-driver-nvidia-gpu")
NVPCI = "vendor/github.com/NVIDIA/go-nvlib/pkg/nvpci/nvpci.go"
PCIIDS_GO = "vendor/github.com/NVIDIA/go-nvlib/pkg/pciids/pciids.go"
EMBEDDED_PCI_IDS = "vendor/github.com/NVIDIA/go-nvlib/pkg/pciids/default_pci.ids"
DRA_LIB = "vendor/k8s.io/dynamic-resource-allocation"
DEVICEATTRIBUTE = f"{DRA_LIB}/deviceattribute/attribute.go"
PCI_LINUX = f"{DRA_LIB}/deviceattribute/pci_linux.go"
DRA_CLIENT = f"{DRA_LIB}/client/client.go"
METADATA_TYPES = f"{DRA_LIB}/api/metadata/types.go"
METADATA_V1ALPHA1 = f"{DRA_LIB}/api/metadata/v1alpha1/register.go"

# -- KubeVirt's files ----------------------------------------------------------------
KV_TYPES = "staging/src/kubevirt.io/api/core/v1/types.go"
KV_SCHEMA = "staging/src/kubevirt.io/api/core/v1/schema.go"
KV_ACTIVE = "pkg/virt-config/featuregate/active.go"
KV_FG = "pkg/virt-config/featuregate/feature-gates.go"
KV_CONFIG_FG = "pkg/virt-config/feature-gates.go"
KV_STATUS = "pkg/virt-controller/watch/dra/dra.go"
KV_UTILS = "pkg/dra/utils.go"
KV_METADATA = "pkg/dra/metadata/types.go"
KV_GPU_HOSTDEV = "pkg/virt-launcher/virtwrap/device/hostdevice/dra/gpu_hostdev.go"
KV_PCI_ADDRESS = "pkg/virt-launcher/virtwrap/device/pciaddress.go"
KV_HW = "pkg/util/hardware/hw_utils.go"
KV_GATES = ("GPUsWithDRA", "HostDevicesWithDRA")

# -- the operator's files ------------------------------------------------------------
VALUES = "deployments/gpu-operator/values.yaml"
GPUCLUSTER_TYPES = "api/nvidia/v1alpha1/gpucluster_types.go"
GPUCLUSTER_CONTROLLER = "controllers/gpucluster_controller.go"
CLUSTERPOLICY_CONTROLLER = "controllers/clusterpolicy_controller.go"
OP_DEVICECLASS = "manifests/state-dra-driver/0430_deviceclass-vfio-gpu.yaml"
OP_CHART_GPUCLUSTER = "deployments/gpu-operator/templates/gpucluster.yaml"
OP_CLUSTERINFO = "controllers/clusterinfo/clusterinfo.go"

_SEMVER = re.compile(r"^v\d+\.\d+\.\d+$")


def _need(at: At, path: str, text: str, pattern: str, what: str) -> re.Match[str]:
    return at.find(path, text, pattern, what)


def _struct(at: At, path: str, text: str, name: str) -> list[tuple[str, str, str]]:
    """(field, Go type, json tag) of a Go struct (embedded fields: name = type)."""
    m = _need(at, path, text, r"^type " + re.escape(name) + r" struct \{\n((?:.*\n)*?)\}$", f"type {name} struct")
    fields = []
    for line in m.group(1).split("\n"):
        line = re.sub(r"^\s*//.*$", "", line).strip()
        if not line:
            continue
        f = re.fullmatch(r"(?:(\w+)\s+)?(\*?[\w.\[\]*]+)\s*(?:`json:\"([^\"]*)\"`)?", line)
        if f is None:
            raise at.fail(path, f"a field of {name} is not in a shape this script knows: {line!r}")
        fields.append((f.group(1) or f.group(2).lstrip("*"), f.group(2), f.group(3) or ""))
    return fields


# -- the driver ----------------------------------------------------------------------


class DriverGit(GitSource):
    """The driver's release tags and, last, the head of its main branch as ``main``."""

    def tags(self) -> list[tuple[str, str, str]]:
        rows = super().tags()
        done = self._git("log", "-1", "--format=%H %cs", "refs/heads/main", check=False)
        if done.returncode == 0:
            commit, date = done.stdout.decode().split()
            rows.append((UNRELEASED, commit, date))
        return rows


def _feature_gates(at: At) -> dict[str, Any]:
    text = at.maybe(FEATUREGATES)
    if text is None:
        return {"file": None, "gates": {}, "emulation_version": None, "rules": []}
    block = _need(
        at,
        FEATUREGATES,
        text,
        r"^var defaultFeatureGates = map\[featuregate\.Feature\]featuregate\.VersionedSpecs\{\n((?:.*\n)*?)\}$",
        "defaultFeatureGates",
    ).group(1)
    gates = {}
    for m in re.finditer(
        r"^\t(\w+): \{\n\t\t\{\n\t\t\tDefault:\s+(true|false),\n\t\t\tPreRelease:\s+featuregate\.(\w+),\n"
        r"\t\t\tVersion:\s+version\.MajorMinor\((\d+), (\d+)\),\n\t\t\},\n\t\},$",
        block,
        re.M,
    ):
        name = re.search(r"^\s*" + m.group(1) + r' featuregate\.Feature = "(\w+)"$', text, re.M)
        if name is None:
            raise at.fail(FEATUREGATES, f"no constant for {m.group(1)}")
        gates[name.group(1)] = {
            "default": m.group(2) == "true",
            "prerelease": m.group(3),
            "since": f"{m.group(4)}.{m.group(5)}",
        }
    if len(gates) != block.count("PreRelease:"):
        raise at.fail(FEATUREGATES, "a defaultFeatureGates entry is not in a shape this script knows")
    if re.search(r"^\s*(?:f|F)eatureGates = newFeatureGates\(parseProjectVersion\(\)\)$", text, re.M):
        emulation = "the driver's own version (parseProjectVersion: major.minor of internal/info's version)"
    else:
        fixed = _need(
            at,
            FEATUREGATES,
            text,
            r"^var featureGateEmulationVersion = version\.MajorMinor\((\d+), (\d+)\)$",
            "emulation",
        )
        _need(at, FEATUREGATES, text, r"featureGates = newFeatureGates\(featureGateEmulationVersion\)", "emulation use")
        emulation = f"fixed {fixed.group(1)}.{fixed.group(2)} (featureGateEmulationVersion)"
    rules: list[str] = []
    if "func ValidateFeatureGates()" not in text:
        return {"file": FEATUREGATES, "gates": gates, "emulation_version": emulation, "rules": rules}
    validate = at.func(FEATUREGATES, text, "ValidateFeatureGates")
    for m in re.finditer(r'^return fmt\.Errorf\("feature gate %s (.*?)", (\w+), (\w+)\)$', validate, re.M):
        if "PassthroughSupport" in (m.group(2), m.group(3)) or "DeviceMetadata" in (m.group(2), m.group(3)):
            rules.append(f"{m.group(2)} {m.group(1).replace('%s', m.group(3))}")
    return {"file": FEATUREGATES, "gates": gates, "emulation_version": emulation, "rules": rules}


def _chart(at: At) -> str:
    for chart in CHARTS:
        if at.maybe(f"{chart}/Chart.yaml") is not None:
            return chart
    raise at.fail(CHARTS[-1], "no Helm chart at a known path")


def _api_versions(at: At, chart: str) -> dict[str, Any]:
    info = at.text(DEVICEINFO)
    imported = _need(at, DEVICEINFO, info, r'^\s*resourceapi "k8s\.io/api/(resource/\w+)"$', "resourceapi import")
    client = at.text(DRA_CLIENT)
    served = re.findall(r"c\.clientSet\.Resource(V\w+)\(\)\.ResourceClaims\(namespace\)", client)
    if not served:
        raise at.fail(DRA_CLIENT, "no ResourceClaims clients")
    helpers = at.text(f"{chart}/templates/_helpers.tpl")
    order = re.findall(r'\.Capabilities\.APIVersions\.Has "(resource\.k8s\.io/\w+)"', helpers)
    override = ".Values.resourceApiVersion" in helpers
    go_mod = at.text(GO_MOD)
    k8s = _need(at, GO_MOD, go_mod, r"^\s*k8s\.io/api (v\S+)$", "k8s.io/api")
    return {
        "driver_types": f"k8s.io/{imported.group(1).replace('resource/', 'api/resource/')}",
        "k8s_io_api": k8s.group(1),
        "driver_client_versions": [f"resource.k8s.io/{v[0].lower()}{v[1:].lower()}" for v in served],
        "chart_device_class": (
            ("Values.resourceApiVersion if set, else " if override else "")
            + "the first the cluster serves of "
            + ", ".join(order)
        ),
        "sources": {
            "driver_types": f"{DEVICEINFO} resourceapi import",
            "k8s_io_api": GO_MOD,
            "driver_client_versions": f"{DRA_CLIENT} ResourceClaims clients (the dynamic-resource-allocation client "
            "uses the first version the API server serves)",
            "chart_device_class": f"{chart}/templates/_helpers.tpl resourceApiVersion",
        },
    }


def _device_class(at: At, chart: str) -> dict[str, Any]:
    path = f"{chart}/templates/deviceclass-vfio-gpu.yaml"
    text = at.maybe(path)
    if text is None:
        return {"name": None, "source": f"{path} absent"}
    cond = _need(at, path, text, r"^\{\{- if (.*) \}\}$", "the template's condition")
    name = _need(at, path, text, r"^  name: (\S+)$", "metadata.name")
    expr = _need(at, path, text, r'^\s*expression: "(.*)"$', "the CEL expression")
    api = _need(at, path, text, r"^apiVersion: \{\{ (.*) \}\}$", "apiVersion")
    return {
        "name": name.group(1),
        "selector": expr.group(1),
        "rendered_when": cond.group(1),
        "api_version": api.group(1),
        "source": path,
    }


def _pci_ids(at: At) -> dict[str, Any]:
    text = at.text(PCIIDS_GO)
    block = _need(at, PCIIDS_GO, text, r"^var defaultPCIdbPaths = \[\]string\{\n((?:\s*\"[^\"]+\",.*\n)+)\}$", "paths")
    _need(at, PCIIDS_GO, text, r"^//go:embed default_pci\.ids\nvar defaultPCIdb \[\]byte$", "the embedded copy")
    nvpci = at.text(NVPCI)
    _need(at, NVPCI, nvpci, r"^\s*pciDB := pciids\.NewDB\(\)$", "pciids.NewDB()")
    _need(
        at,
        NVPCI,
        nvpci,
        r"^\s*deviceName, err := pciDB\.GetDeviceName\(uint16\(vendorID\), uint16\(deviceID\)\)\n"
        r"\s*if err != nil \{\n.*\n\s*deviceName = UnknownDeviceString$",
        "the device name",
    )
    unknown = _need(at, NVPCI, nvpci, r'^\s*UnknownDeviceString = "([^"]+)"$', "UnknownDeviceString")
    nvlib = _need(at, GO_MOD, at.text(GO_MOD), r"^\s*github\.com/NVIDIA/go-nvlib (v\S+)$", "go-nvlib")
    embedded = at.pci_ids(EMBEDDED_PCI_IDS)
    return {
        "go_nvlib": nvlib.group(1),
        "system_paths": re.findall(r"\"([^\"]+)\"", block.group(1)),
        "embedded": {"path": EMBEDDED_PCI_IDS, "sha256": embedded["sha256"], "version": embedded["version"]},
        "unknown": unknown.group(1),
        "rule": "productName is go-nvlib nvpci's DeviceName: the device line of the first of system_paths that "
        "exists in the plugin's container, else of the embedded copy, unformatted; unknown when no line",
        "source": f"{NVPCI} pciids.NewDB(), GetDeviceName, UnknownDeviceString; {PCIIDS_GO} defaultPCIdbPaths, "
        f"//go:embed; {GO_MOD} go-nvlib",
    }


#: How getVfioDeviceInfo computes each VfioDeviceInfo field (Go expression -> description).
_COMPUTED = {
    "uuid.NewSHA1(uuid.NameSpaceDNS, []byte(device.Address)).String()": "UUID v5 (SHA-1, DNS namespace) of the PCI "
    "address string: not a GPU- UUID, host-dependent",
    "deviceUUID": "UUID v5 (SHA-1, DNS namespace) of the PCI address string: not a GPU- UUID, host-dependent",
    'fmt.Sprintf("0x%04x", device.Device)': 'sysfs device id as "0x%04x" (lower-case hex, 0x prefix)',
    'fmt.Sprintf("0x%04x", device.Vendor)': 'sysfs vendor id as "0x%04x" ("0x10de")',
    "device.NumaNode": "sysfs numa_node (int, -1 when none)",
    "device.DeviceName": "go-nvlib nvpci DeviceName (see product_name)",
    "device.Address": "PCI address DDDD:BB:DD.F from sysfs",
    "iommuFDEnabled": "checkIommuFDEnabled() of vfio-device.go (host iommufd support)",
}


def _vfio_attributes(at: At, info: str, nvlib: str, tag: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    m = _need(
        at,
        DEVICEINFO,
        info,
        r"^func \(d \*VfioDeviceInfo\) GetDevice\(\) resourceapi\.Device \{\n((?:.*\n)*?)\}$",
        "VfioDeviceInfo.GetDevice",
    )
    body = m.group(1)
    fill = at.func(NVLIB, nvlib, "getVfioDeviceInfo")
    assigned = dict(re.findall(r"^(\w+):\s+(.+),$", fill, re.M))
    attrs = []
    for key, kind, value in re.findall(
        r"^\t\t\t(\"\w+\"|pciBusIDAttrName): \{\n\t\t\t\t(\w+Value): (.+),\n\t\t\t\},$", body, re.M
    ):
        if key == "pciBusIDAttrName":
            name_src = _need(
                at,
                DEVICEINFO,
                body,
                r'^\tpciBusIDAttrName := resourceapi\.QualifiedName\(deviceattribute\.StandardDeviceAttributePrefix \+ "(\w+)"\)$',
                "pciBusIDAttrName",
            )
            name = "resource.kubernetes.io/" + name_src.group(1)
        else:
            name = "gpu.nvidia.com/" + key.strip('"')
        field = re.fullmatch(r"(?:&d\.|ptr\.To\(d\.|ptr\.To\(int64\(d\.)(\w+)\)*", value)
        if value == "ptr.To(VfioDeviceType)":
            vtype = _need(at, TYPES, at.text(TYPES), r'^\s*VfioDeviceType\s+= "(\w+)"$', "VfioDeviceType")
            how = f'the constant "{vtype.group(1)}" (VfioDeviceType)'
        elif field is None:
            raise at.fail(DEVICEINFO, f"attribute {name} = {value} is not in a shape this script knows")
        else:
            go = {"pcieBusID": "pcieBusID", "PciBusID": "PciBusID"}.get(field.group(1), field.group(1))
            expr = assigned.get(go)
            if expr is None or expr not in _COMPUTED:
                raise at.fail(NVLIB, f"getVfioDeviceInfo computes {go} as {expr!r}, which this script does not know")
            how = _COMPUTED[expr]
        attrs.append(
            {
                "name": name,
                "type": {"StringValue": "string", "IntValue": "int", "BoolValue": "bool", "VersionValue": "version"}[
                    kind
                ],
                "computed": how,
            }
        )
    if "device.Attributes[d.pciBusIDAttr.Name] = d.pciBusIDAttr.Value" in body:
        _need(at, NVLIB, fill, r"^attr, err := deviceattribute\.GetPCIBusIDAttribute\(device\.Address\)$", "bus id")
        attrs.append(
            {
                "name": "resource.kubernetes.io/pciBusID",
                "type": "string",
                "computed": "PCI address DDDD:BB:DD.F (deviceattribute.GetPCIBusIDAttribute; an error fails discovery)",
            }
        )
    if "device.Attributes[d.pcieRootAttr.Name] = d.pcieRootAttr.Value" in body:
        _need(at, NVLIB, fill, r"deviceattribute\.GetPCIeRootAttributeByPCIBusID\(device\.Address\)", "pcie root")
        attrs.append(
            {
                "name": "resource.kubernetes.io/pcieRoot",
                "type": "string",
                "computed": "first path element under /sys/devices of the device's sysfs link, e.g. "
                '"pci0000:00" (deviceattribute.GetPCIeRootAttributeByPCIBusID); omitted when it cannot be '
                "resolved",
            }
        )
    attrs += _numa_node(at, info, body) + _fabric_manager(at, info, body)
    caps = []
    for key, value in re.findall(r'^\t\t\t"(\w+)": \{\n\t\t\t\tValue: (.+),\n\t\t\t\},$', body, re.M):
        if value != "*resource.NewQuantity(int64(d.addressableMemoryBytes), resource.BinarySI)":
            raise at.fail(DEVICEINFO, f"capacity {key} = {value} is not in a shape this script knows")
        _need(at, NVLIB, fill, r"^_, memoryBytes := device\.Resources\.GetTotalAddressableMemory\(true\)$", "memory")
        caps.append(
            {
                "name": f"gpu.nvidia.com/{key}",
                "type": "quantity (BinarySI)",
                "computed": "go-nvlib Resources.GetTotalAddressableMemory(true): the sizes of the BARs of "
                "the sysfs resource file (host-dependent)",
            }
        )
    attrs.sort(key=lambda a: a["name"])
    return attrs, caps


#: The partition sizes named in the facts: Fabric Manager's, not the driver's (it names each size FM reports).
_PARTITION_SIZES = (1, 2, 4, 8)


def _numa_node(at: At, info: str, body: str) -> list[dict[str, Any]]:
    """``resource.kubernetes.io/numaNode`` (main): added by addNumaNodeAttribute when the node has one."""
    if "addNumaNodeAttribute(device.Attributes, &d.numaNode)" not in body:
        if "addNumaNodeAttribute" in body:
            raise at.fail(DEVICEINFO, "addNumaNodeAttribute is called in a shape this script does not know")
        return []
    name = _need(
        at, DEVICEINFO, info, r'^const standardNumaNodeAttribute resourceapi\.QualifiedName = "(\S+)"$', "the name"
    ).group(1)
    func = at.func(DEVICEINFO, info, "addNumaNodeAttribute")
    _need(at, DEVICEINFO, func, r"^if numaNode == nil \|\| \*numaNode < 0 \{\nreturn\n\}$", "the omission")
    _need(at, DEVICEINFO, func, r"^IntValue: ptr\.To\(int64\(\*numaNode\)\),$", "the int value")
    listed = re.search(r"^if featuregates\.Enabled\(featuregates\.(\w+)\) \{\n(?:.*\n){0,6}IntValues: ", func, re.M)
    return [
        {
            "name": name,
            "type": "int",
            "computed": "sysfs numa_node; omitted when negative (the node has none)"
            + (
                f"; with gate {listed.group(1)} a list of that one int (IntValues) instead"
                if listed is not None
                else ""
            ),
        }
    ]


def _fabric_manager(at: At, info: str, body: str) -> list[dict[str, Any]]:
    """Fabric Manager's ``gpuModuleID`` and ``partition<size>`` (main), behind their gate."""
    gate = re.search(
        r"^\tif featuregates\.Enabled\(featuregates\.(\w+)\) \{\n(?:.*\n){0,3}"
        r"\t\t\td\.parent\.addFabricManagerAttributes\(device\.Attributes\)$",
        body,
        re.M,
    )
    if gate is None:
        if "addFabricManagerAttributes" in body or "featuregates." in body:
            raise at.fail(DEVICEINFO, "VfioDeviceInfo.GetDevice checks a gate in a shape this script does not know")
        return []
    func = at.func(DEVICEINFO, info, "addFabricManagerAttributes")
    _need(at, DEVICEINFO, func, r'^attrs\["gpuModuleID"\] = resourceapi\.DeviceAttribute\{\nIntValue: ', "gpuModuleID")
    fmt = _need(at, DEVICEINFO, func, r'^key := resourceapi\.QualifiedName\(fmt\.Sprintf\("(\w+%d)", size\)\)$', "key")
    when = (
        f"only with gate {gate.group(1)} (default off), on a GPU NVML saw at discovery (a parent GpuInfo: not one "
        "already bound to vfio-pci) that Fabric Manager gives a module id; omitted otherwise"
    )
    out = [{"name": "gpu.nvidia.com/gpuModuleID", "type": "int", "computed": f"NVML's GPU module id, {when}"}]
    for size in _PARTITION_SIZES:
        out.append(
            {
                "name": "gpu.nvidia.com/" + fmt.group(1) % size,
                "type": "int",
                "computed": f"the id of the Fabric Manager partition of {size} GPU{'s' if size > 1 else ''} holding the GPU's module, {when} "
                f"(the driver publishes {fmt.group(1)} for every partition size FM reports; {_PARTITION_SIZES} are "
                "those of an 8-GPU NVSwitch board)",
            }
        )
    return out


def _enumeration(at: At, nvlib: str) -> dict[str, Any]:
    """Which GPUs get a vfio device, and the bug of the first release."""
    total = at.func(NVLIB, nvlib, "enumerateAllPossibleDevices")
    _need(at, NVLIB, total, r"^if featuregates\.Enabled\(featuregates\.PassthroughSupport\) \{$", "the gate")
    if "func (l deviceLib) enumerateGpuPciDevices(devs PerGPUMinorAllocatableDevices)" in nvlib:
        body = at.func(NVLIB, nvlib, "enumerateGpuPciDevices")
        bug = re.search(
            r"^perGPUAllocatable := make\(PerGPUMinorAllocatableDevices\)\nall := make\(AllocatableDevices\)\n"
            r"for _, devices := range perGPUAllocatable \{\nmaps\.Copy\(all, devices\)\n\}$",
            body,
            re.M,
        )
        _need(
            at,
            NVLIB,
            body,
            r"^parent := all\.GetGPUByPCIeBusID\(pci\.Address\)\n"
            r"if parent == nil \|\| !parent\.Gpu\.vfioEnabled \{\ncontinue\n\}$",
            "the parent check",
        )
        if bug is None:
            raise at.fail(NVLIB, "enumerateGpuPciDevices is in a shape this script does not know")
        return {
            "publishes": False,
            "function": "enumerateGpuPciDevices",
            "bug": "enumerateGpuPciDevices flattens its own new empty map (ranges over perGPUAllocatable, not over "
            "its argument devs) into `all`, so all.GetGPUByPCIeBusID finds no parent for any GPU and every GPU "
            "is skipped: the release carries the vfio code but publishes no vfio device even with "
            "PassthroughSupport",
            "parent_required": True,
            "source": f"{NVLIB} enumerateGpuPciDevices",
        }
    body = at.func(NVLIB, nvlib, "enumerateGpuVfioDevices")
    _need(
        at,
        NVLIB,
        body,
        r"^parent := perGPUAllocatable\.GetGPUDeviceByPCIBusID\(pci\.Address\)\n"
        r"if parent != nil && !parent\.Gpu\.vfioEnabled \{$",
        "the parent check",
    )
    _need(at, NVLIB, body, r"^err = perGPUAllocatable\.AddAllocatableDevice\(allocatableDevice\)$", "the insert")
    return {
        "publishes": True,
        "function": "enumerateGpuVfioDevices",
        "bug": None,
        "parent_required": False,
        "which": "every NVIDIA GPU PF nvpci.GetGPUs() finds (class 0x0300/0x0302, any driver: nvidia or "
        "vfio-pci), except a GPU NVML sees whose vfioEnabled is false (MIG devices present)",
        "source": f"{NVLIB} enumerateGpuVfioDevices, GetPerGpuAllocatableDevices",
    }


def _prepare_without_sriov(at: At) -> dict[str, Any]:
    """Whether preparing a vfio claim for a GPU without SR-IOV crashes the plugin
    (verifyDisabledVFs dereferencing go-nvlib's nil SriovInfo.PhysicalFunction)."""
    vfio = at.text(VFIO_DEVICE)
    verify = at.func(VFIO_DEVICE, vfio, "verifyDisabledVFs")
    configure = at.func(VFIO_DEVICE, vfio, "Configure")
    _need(
        at,
        VFIO_DEVICE,
        configure,
        r"^if driver == (?:vm\.driver|vfioDriver) \{\nreturn nil\n\}$",
        "Configure's early return",
    )
    _need(at, VFIO_DEVICE, configure, r"^err = vm\.verifyDisabledVFs\(info\.(?:PciBusID|pcieBusID)\)$", "the check")
    _need(at, VFIO_DEVICE, verify, r"^numVFs := gpu\.SriovInfo\.PhysicalFunction\.NumVFs$", "NumVFs")
    nvpci = at.text(NVPCI)
    _need(
        at,
        NVPCI,
        at.func(NVPCI, nvpci, "getSriovInfoForPhysicalFunction"),
        r"^_, err = os\.Stat\((?:totalVfsPath|filepath\.Join\(devicePath, \"sriov_totalvfs\"\))\)\n"
        r"if err != nil && os\.IsNotExist\(err\) \{\nreturn sriovInfo, nil\n\}$",
        "no sriov_totalvfs: no PhysicalFunction",
    )
    source = f"{VFIO_DEVICE} Configure, verifyDisabledVFs; {NVPCI} getSriovInfoForPhysicalFunction"
    guarded = re.search(r"^if gpu\.SriovInfo\.PhysicalFunction == nil \{\nreturn nil\n\}$", verify, re.M)
    if guarded is not None:
        return {"crashes": False, "source": source}
    return {
        "crashes": True,
        "gpus": "GPUs whose sysfs function has no sriov_totalvfs (no SR-IOV capability: go-nvlib leaves "
        "SriovInfo.PhysicalFunction nil), bound to the nvidia driver when the claim is prepared",
        "what": "NodePrepareResources binds the GPU to vfio-pci through Configure, whose verifyDisabledVFs reads "
        "gpu.SriovInfo.PhysicalFunction.NumVFs without a nil check: a nil-pointer panic of the kubelet plugin; "
        "a GPU already bound to vfio-pci skips the check",
        "source": source,
    }


def _vfio_config(at: At) -> dict[str, Any]:
    text = at.text(VFIO_CONFIG)
    fields = [f for f in _struct(at, VFIO_CONFIG, text, "VfioDeviceConfig") if not f[1].endswith("TypeMeta")]
    api = at.text(CONFIG_API_GO)
    group = _need(at, CONFIG_API_GO, api, r'^\s*GroupName = "([\w.]+)"$', "GroupName").group(1)
    version = _need(at, CONFIG_API_GO, api, r'^\s*Version\s+= "(\w+)"$', "Version").group(1)
    kind = _need(at, CONFIG_API_GO, api, r'^\s*VfioDeviceConfigKind\s+= "(\w+)"$', "VfioDeviceConfigKind").group(1)
    out: dict[str, Any] = {
        "api_version": f"{group}/{version}",
        "kind": kind,
        "fields": {},
        "sources": [VFIO_CONFIG, CONFIG_API_GO],
    }
    for name, gotype, tag in fields:
        if gotype != "*IOMMUConfig":
            raise at.fail(VFIO_CONFIG, f"VfioDeviceConfig field {name} {gotype} is not known to this script")
        iommu = at.text(IOMMU_CONFIG)
        sub = {t.split(",")[0]: g for _, g, t in _struct(at, IOMMU_CONFIG, iommu, "IOMMUConfig")}
        policies = re.findall(r'^\s*IOMMUBackendPolicy\w+\s+IOMMUBackendPolicy = "(\w+)"$', iommu, re.M)
        default = _need(
            at,
            VFIO_CONFIG,
            text,
            r"^\s*BackendPolicy:\s+IOMMUBackendPolicy(\w+),\n\s*EnableAPIDevice: ptr\.To\((true|false)\),$",
            "defaults",
        )
        out["fields"][tag.split(",")[0]] = {
            "backendPolicy": {"type": sub.get("backendPolicy"), "values": policies, "default": default.group(1)},
            "enableAPIDevice": {"type": sub.get("enableAPIDevice"), "default": default.group(2) == "true"},
        }
        out["sources"].append(IOMMU_CONFIG)
    cdi = at.maybe(VFIO_CDI)
    if cdi is None:
        vfio = at.text(VFIO_DEVICE)
        common = at.func(VFIO_DEVICE, vfio, "GetVfioCommonCDIContainerEdits")
        _need(at, VFIO_DEVICE, common, r'Path: filepath\.Join\(vfioDevicesRoot, "vfio"\),', "/dev/vfio/vfio")
        out["dev_vfio_vfio"] = "always: GetVfioCommonCDIContainerEdits adds /dev/vfio/vfio to every vfio claim"
        out["sources"].append(f"{VFIO_DEVICE} GetVfioCommonCDIContainerEdits")
    else:
        common = at.func(VFIO_CDI, cdi, "GetCommonEdits")
        _need(at, VFIO_CDI, common, r"^if !enableAPIDevice \{\nreturn edits, nil\n\}$", "the API device switch")
        _need(at, VFIO_CDI, common, r'Path: filepath\.Join\(vfioDevicesRoot, "vfio"\),', "/dev/vfio/vfio")
        _need(at, VFIO_CDI, common, r"Path: iommuDevicePath,", "/dev/iommu")
        _need(
            at,
            DEVICE_STATE,
            at.text(DEVICE_STATE),
            r"GetCommonEdits\(config\.Iommu\.ShouldEnableAPIDevice\(\), config\.Iommu\.ShouldPreferIommuFD\(\)\)",
            "use",
        )
        out["dev_vfio_vfio"] = (
            "only with iommu.enableAPIDevice: true (default false): then /dev/iommu when backendPolicy is "
            "PreferIommuFD and the host has iommufd, else /dev/vfio/vfio; without it the claim's CDI edits hold "
            "only the group (or iommufd cdev) node"
        )
        out["sources"].append(f"{VFIO_CDI} GetCommonEdits; {DEVICE_STATE} GetCommonEdits call")
    return out


def _device_metadata(at: At, gates: dict[str, Any]) -> dict[str, Any] | None:
    if "DeviceMetadata" not in gates:
        return None
    driver = at.text(DRIVER_GO)
    _need(
        at,
        DRIVER_GO,
        driver,
        r"^\s*if featuregates\.Enabled\(featuregates\.DeviceMetadata\) \{\n"
        r"\s*opts = append\(opts, kubeletplugin\.EnableDeviceMetadata\(true\)\)\n"
        r"\s*opts = append\(opts, kubeletplugin\.MetadataVersions\(drametadatav1alpha1\.SchemeGroupVersion\)\)$",
        "opts",
    )
    state = at.text(DEVICE_STATE)
    _need(
        at,
        DEVICE_STATE,
        state,
        r"^\s*if featuregates\.Enabled\(featuregates\.DeviceMetadata\) \{\n"
        r"\s*if allocatableDevice\.Type\(\) == VfioDeviceType \{\n(?:.*\n){0,2}"
        r"\s*for k, v := range allocatableDevice\.Vfio\.GetDevice\(\)\.Attributes \{$",
        "vfio metadata",
    )
    types = at.text(METADATA_TYPES)
    base = _need(at, METADATA_TYPES, types, r'^\s*ContainerDir = "(\S+)"$', "ContainerDir").group(1)
    claims = _need(at, METADATA_TYPES, types, r'^\s*ResourceClaimsSubDir = "(\S+)"$', "claims").group(1)
    templates = _need(at, METADATA_TYPES, types, r'^\s*ResourceClaimTemplatesSubDir = "(\S+)"$', "templates").group(1)
    suffix = _need(at, METADATA_TYPES, types, r'^\s*MetadataFileSuffix = "(\S+)"$', "suffix").group(1)
    reg = at.text(METADATA_V1ALPHA1)
    group = _need(at, METADATA_V1ALPHA1, reg, r'^const GroupName = "(\S+)"$', "GroupName").group(1)
    return {
        "gate": "DeviceMetadata",
        "devices": "vfio devices only: every attribute of the vfio device (GetDevice().Attributes)",
        "api_version": f"{group}/v1alpha1",
        "claim_path": f"{base}/{claims}/<claimName>/<requestName>/<driver>{suffix}",
        "template_path": f"{base}/{templates}/<podClaimName>/<requestName>/<driver>{suffix}",
        "sources": [
            f"{DRIVER_GO} EnableDeviceMetadata",
            f"{DEVICE_STATE} KEP-5304 metadata",
            METADATA_TYPES,
            METADATA_V1ALPHA1,
        ],
    }


def driver_release(at: At, date: str) -> dict[str, Any]:
    main = at.text(MAIN)
    name = _need(at, MAIN, main, r'^\s*DriverName\s+= "(\S+)"$', "DriverName").group(1)
    gates = _feature_gates(at)
    chart = _chart(at)
    release: dict[str, Any] = {
        "date": date,
        "commit": at.commit,
        "driver_name": name,
        "chart": chart,
        "feature_gates": gates,
    }
    vfio = at.maybe(VFIO_DEVICE)
    if vfio is None:
        release["vfio"] = {
            "code": False,
            "publishes": False,
            "note": f"no {VFIO_DEVICE} and no PassthroughSupport gate: no vfio devices",
        }
        release["sources"] = {"driver_name": MAIN, "vfio": f"{VFIO_DEVICE} absent"}
        return release
    if "PassthroughSupport" not in gates["gates"]:
        raise at.fail(FEATUREGATES, "vfio code without a PassthroughSupport gate")
    info, nvlib = at.text(DEVICEINFO), at.text(NVLIB)
    canonical = _need(
        at,
        DEVICEINFO,
        info,
        r"^func \(d \*VfioDeviceInfo\) CanonicalName\(\) string \{\n"
        r'\treturn fmt\.Sprintf\("([^"%]*%d[^"%]*)", d\.index\)\n\}$',
        "VfioDeviceInfo.CanonicalName",
    )
    _need(at, NVLIB, at.func(NVLIB, nvlib, "getVfioDeviceInfo"), r"^index:\s+idx,$", "the index")
    nvpci = at.text(NVPCI)
    _need(at, NVPCI, nvpci, r"^\s*sort\.Slice\(nvdevices, func\(i, j int\) bool \{$", "GetAllDevices' sort")
    _need(at, NVPCI, nvpci, r"^\s*if d\.IsGPU\(\) && !d\.SriovInfo\.IsVF\(\) \{$", "GetGPUs' filter")
    _need(
        at,
        NVPCI,
        nvpci,
        r"^func \(d \*NvidiaPCIDevice\) IsGPU\(\) bool \{\n\treturn d\.IsVGAController\(\) \|\| "
        r"d\.Is3DController\(\)\n\}$",
        "IsGPU",
    )
    attrs, caps = _vfio_attributes(at, info, nvlib, at.tag)
    enum = _enumeration(at, nvlib)
    release["vfio"] = {
        "code": True,
        "publishes": enum["publishes"],
        "gate": "PassthroughSupport",
        "enumeration": enum,
        "device_name": {
            "format": canonical.group(1),
            "index": "position of the GPU in go-nvlib nvpci.GetGPUs() (NVIDIA GPU PFs sorted by PCI address), "
            "host-dependent",
            "source": f"{DEVICEINFO} VfioDeviceInfo.CanonicalName; {NVLIB} getVfioDeviceInfo index; {NVPCI} GetGPUs",
        },
        "attributes": attrs,
        "capacity": caps,
        "attributes_source": f"{DEVICEINFO} VfioDeviceInfo.GetDevice; {NVLIB} getVfioDeviceInfo",
        "product_name": _pci_ids(at),
        "device_class": _device_class(at, chart),
        "config": _vfio_config(at),
        "prepare_without_sriov": _prepare_without_sriov(at),
        "device_metadata": _device_metadata(at, gates["gates"]),
    }
    release["api"] = _api_versions(at, chart)
    release["sources"] = {"driver_name": MAIN, "vfio": VFIO_DEVICE, "feature_gates": FEATUREGATES}
    return release


# -- KubeVirt --------------------------------------------------------------------------


def _kv_gates(at: At) -> dict[str, Any]:
    active = at.text(KV_ACTIVE)
    states = {}
    for gate in KV_GATES:
        const = _need(at, KV_ACTIVE, active, r'^\s*(\w+) = "' + gate + '"$', gate).group(1)
        states[gate] = _need(
            at,
            KV_ACTIVE,
            active,
            r"RegisterFeatureGate\(FeatureGate\{Name: " + const + r", State: (\w+)\}\)",
            f"{gate} registration",
        ).group(1)
    config = at.text(KV_CONFIG_FG)
    enabled = at.func(KV_CONFIG_FG, config, "isFeatureGateEnabled")
    if "featuregate.IsEnabled(" in enabled:
        fg = at.text(KV_FG)
        beta_on = "return fg.State == Beta" in at.func(KV_FG, fg, "IsEnabled")
        source = f"{KV_CONFIG_FG} isFeatureGateEnabled -> {KV_FG} IsEnabled"
    else:
        _need(at, KV_CONFIG_FG, enabled, r"\nreturn false$", "the default")
        beta_on = False
        source = f"{KV_CONFIG_FG} isFeatureGateEnabled (only GA or listed gates are on)"
    return {
        gate: {
            "state": state,
            "default": state == "GA" or (state == "Beta" and beta_on),
            "source": f"{KV_ACTIVE} RegisterFeatureGate; {source}",
        }
        for gate, state in states.items()
    }


def _kv_api(at: At) -> dict[str, Any]:
    types, schema = at.text(KV_TYPES), at.text(KV_SCHEMA)
    claims = re.search(r'^\s*ResourceClaims \[\](\S+) `json:"resourceClaims,omitempty"`$', types, re.M)
    request = (
        {f: (g, t) for f, g, t in _struct(at, KV_SCHEMA, schema, "ClaimRequest")}
        if "type ClaimRequest struct" in schema
        else {}
    )
    embeds = {
        s: any(f == "ClaimRequest" and g == "*ClaimRequest" for f, g, _ in _struct(at, KV_SCHEMA, schema, s))
        for s in ("GPU", "HostDevice")
    }
    return {
        "resourceClaims": None if claims is None else claims.group(1),
        "claimRequest": {t.split(",")[0]: g for _, (g, t) in request.items()},
        "gpus_claim": embeds["GPU"] and bool(request),
        "hostDevices_claim": embeds["HostDevice"] and bool(request),
        "sources": {
            "resourceClaims": f"{KV_TYPES} VirtualMachineInstanceSpec.ResourceClaims",
            "claim": f"{KV_SCHEMA} ClaimRequest inlined in GPU and HostDevice",
        },
    }


def _kv_pci(at: At) -> dict[str, Any]:
    utils = at.maybe(KV_UTILS)
    status = at.maybe(KV_STATUS)
    if utils is not None and "func GetPCIAddressForClaim(" in utils:
        base = _need(at, KV_UTILS, utils, r'^\s*DefaultMetadataBasePath\s+= "(\S+)"$', "DefaultMetadataBasePath").group(
            1
        )
        md = at.text(KV_METADATA)
        attr = _need(
            at, KV_METADATA, md, r'^\s*PCIBusIDAttribute = resourcev1\.QualifiedName\("(\S+)"\)$', "attr"
        ).group(1)
        versions = re.findall(r'^const APIVersion\w+ = "(\S+)"$', md, re.M)
        if "resourceClaimsSubdir" in utils:
            sub = _need(at, KV_UTILS, utils, r'^\s*resourceClaimsSubdir\s+= "(\S+)"$', "claims").group(1)
            tsub = _need(at, KV_UTILS, utils, r'^\s*resourceClaimTemplatesSubdir\s+= "(\S+)"$', "templates").group(1)
            claim_path = f"{base}/{sub}/<claimName>/<requestName>/*-metadata.json"
            template_path = f"{base}/{tsub}/<podClaimName>/<requestName>/*-metadata.json"
        else:
            _need(
                at,
                KV_UTILS,
                utils,
                r'pattern := filepath\.Join\(basePath, claimName, requestName, "\*-metadata\.json"\)',
                "path",
            )
            claim_path = f"{base}/<claimName>/<requestName>/*-metadata.json"
            template_path = f"{base}/*/<requestName>/*-metadata.json (the one whose podClaimName matches)"
        return {
            "mechanism": "metadata-file",
            "reader": "virt-launcher",
            "attribute": attr,
            "claim_path": claim_path,
            "template_path": template_path,
            "metadata_api_versions": versions or None,
            "source": f"{KV_UTILS} GetPCIAddressForClaim, DefaultMetadataBasePath; {KV_METADATA}",
        }
    if status is None:
        raise at.fail(KV_UTILS, f"neither GetPCIAddressForClaim nor {KV_STATUS}")
    key = _need(at, KV_STATUS, status, r'^\s*PCIAddressDeviceAttributeKey = "(\S+)"$', "PCIAddressDeviceAttributeKey")
    api = _need(at, KV_STATUS, status, r'^\s*resource(\w+) "k8s\.io/api/resource/(\w+)"$', "the ResourceSlice API")
    _need(
        at,
        KV_STATUS,
        status,
        r"if string\(key\) == PCIAddressDeviceAttributeKey \{\n\s*pciAddress = \*value\.StringValue",
        "use",
    )
    hostdev = at.text(KV_GPU_HOSTDEV)
    _need(
        at,
        KV_GPU_HOSTDEV,
        hostdev,
        r"device\.NewPciAddressField\(\*gpu\.DeviceResourceClaimStatus\.Attributes\.PCIAddress\)",
        "parse",
    )
    pattern = _need(at, KV_HW, at.text(KV_HW), r"^\s*PCI_ADDRESS_PATTERN = `(\S+)`$", "PCI_ADDRESS_PATTERN").group(1)
    return {
        "mechanism": "resourceslice-attribute",
        "reader": "virt-controller DRA status controller -> vmi.status.deviceStatus -> virt-launcher",
        "attribute": key.group(1),
        "resource_slice_api": f"resource.k8s.io/{api.group(2)}",
        "address_pattern": pattern,
        "source": f"{KV_STATUS} PCIAddressDeviceAttributeKey, getDeviceAttributes; {KV_GPU_HOSTDEV} "
        f"NewPciAddressField; {KV_HW} PCI_ADDRESS_PATTERN",
    }


def kubevirt_release(at: At, date: str) -> dict[str, Any]:
    return {
        "date": date,
        "commit": at.commit,
        "vm_api": _kv_api(at),
        "feature_gates": _kv_gates(at),
        "pci_address": _kv_pci(at),
    }


# -- GPU Operator ------------------------------------------------------------------------


def _top_block(text: str, key: str) -> dict[str, str] | None:
    """The scalar children of a top-level YAML mapping (values.yaml), comments dropped."""
    m = re.search(r"^" + re.escape(key) + r":\s*\n((?:(?:[ \t].*|\s*)\n)*)", text, re.M)
    if m is None:
        return None
    out = {}
    for line in m.group(1).split("\n"):
        kv = re.fullmatch(r"  (\w+):\s*(.*?)\s*(?:#.*)?", line)
        if kv and not line.startswith("   "):
            out[kv.group(1)] = kv.group(2).strip('"')
    return out


def operator_release(at: At, date: str, driver_tags: list[str]) -> dict[str, Any] | None:
    values = at.text(VALUES)
    dra = _top_block(values, "draDriver")
    if dra is None:
        return None
    gpu_cluster, cluster_policy = _top_block(values, "gpuCluster") or {}, _top_block(values, "clusterPolicy") or {}
    for k in ("repository", "image", "version"):
        if k not in dra:
            raise at.fail(VALUES, f"draDriver has no {k}")
    types = at.text(GPUCLUSTER_TYPES)
    _need(at, GPUCLUSTER_TYPES, types, r"^// or the device-plugin;", "GPUClusterSpec: no device plugin")
    refuse = _need(
        at,
        GPUCLUSTER_CONTROLLER,
        at.text(GPUCLUSTER_CONTROLLER),
        r'return fmt\.Sprintf\("(A ClusterPolicy CR %q exists; [^"]+)"',
        "validatePrerequisites",
    ).group(1)
    conflict = _need(
        at,
        CLUSTERPOLICY_CONTROLLER,
        at.text(CLUSTERPOLICY_CONTROLLER),
        r'fmt\.Errorf\("(conflicting GPUCluster resource %q detected; [^"]+)"',
        "the conflict",
    ).group(1)
    dc = at.text(OP_DEVICECLASS)
    chart = at.text(OP_CHART_GPUCLUSTER)
    _need(at, OP_CHART_GPUCLUSTER, chart, r"^\{\{- if \.Values\.gpuCluster\.deployCR \}\}$", "the condition")
    order = _need(
        at,
        OP_CLUSTERINFO,
        at.text(OP_CLUSTERINFO),
        r"preferred version to use \((v1 over v1beta2\n?//? ?over v1beta1)\)",
        "order",
    )
    version = dra["version"]
    return {
        "date": date,
        "commit": at.commit,
        "dra_driver": {
            "image": f"{dra['repository']}/{dra['image']}",
            "version": version,
            "version_in_mirror": version in driver_tags,
            "feature_gates": {} if dra.get("featureGates") == "{}" else dra.get("featureGates"),
        },
        "deployed_when": f"gpuCluster.deployCR (default {gpu_cluster.get('deployCR')}) renders a GPUCluster CR; "
        f"clusterPolicy.deployCR defaults to {cluster_policy.get('deployCR')}",
        "excludes_sandbox_device_plugin": True,
        "exclusion": "the GPUCluster spec has no device plugin (sandbox, Kata or other: those are ClusterPolicy's); "
        f'GPUCluster refuses to reconcile while a ClusterPolicy exists ("{refuse}") and ClusterPolicy while a '
        f'GPUCluster exists ("{conflict}")',
        "device_class": {
            "name": _need(at, OP_DEVICECLASS, dc, r"^  name: (\S+)$", "name").group(1),
            "selector": _need(at, OP_DEVICECLASS, dc, r'^\s*expression: "(.*)"$', "expression").group(1),
            "api_version": "discovered: " + re.sub(r"\s*//\s*", " ", order.group(1)),
        },
        "sources": {
            "dra_driver": f"{VALUES} draDriver",
            "deployed_when": f"{VALUES} gpuCluster.deployCR, clusterPolicy.deployCR; {OP_CHART_GPUCLUSTER}",
            "exclusion": f"{GPUCLUSTER_TYPES} GPUClusterSpec; {GPUCLUSTER_CONTROLLER} validatePrerequisites; "
            f"{CLUSTERPOLICY_CONTROLLER}",
            "device_class": f"{OP_DEVICECLASS}; {OP_CLUSTERINFO} getDRAResourceGVR",
        },
    }


# -- combinations ----------------------------------------------------------------------


def _combination(driver: dict[str, Any], kv: dict[str, Any]) -> tuple[bool, str]:
    vfio = driver["vfio"]
    if not vfio["publishes"]:
        return False, "the driver publishes no vfio device" + (
            " (bug: see vfio.enumeration.bug)" if vfio["code"] else ""
        )
    pci = kv["pci_address"]
    names = {a["name"] for a in vfio["attributes"]}
    if pci["mechanism"] == "resourceslice-attribute":
        if pci["attribute"] not in names:
            return (
                False,
                f"KubeVirt reads the PCI address from slice attribute {pci['attribute']}, which the driver does not publish",
            )
        if pci["attribute"] == "resource.kubernetes.io/pcieRoot":
            return False, (
                "KubeVirt takes the PCI address from resource.kubernetes.io/pcieRoot, whose value is a root complex "
                f'("pci0000:00"), not an address: virt-launcher\'s NewPciAddressField ({pci["address_pattern"]}) refuses it'
            )
        return True, f"KubeVirt reads {pci['attribute']} from the ResourceSlice"
    metadata = vfio["device_metadata"]
    if metadata is None:
        return (
            False,
            "KubeVirt reads the PCI address from a KEP-5304 metadata file; this driver writes none (no DeviceMetadata gate)",
        )
    if pci["claim_path"] != metadata["claim_path"].replace("<driver>-metadata.json", "*-metadata.json"):
        return False, f"KubeVirt reads {pci['claim_path']}, the driver writes {metadata['claim_path']}"
    if pci["attribute"] not in names:
        return False, f"the metadata file has no {pci['attribute']}"
    if pci["metadata_api_versions"] and metadata["api_version"] not in pci["metadata_api_versions"]:
        return False, f"KubeVirt decodes {pci['metadata_api_versions']}, the driver writes {metadata['api_version']}"
    config = vfio["config"]["dev_vfio_vfio"]
    needs = (
        "; the claim needs an opaque VfioDeviceConfig with iommu.enableAPIDevice: true, since without it the "
        "driver puts no /dev/vfio/vfio (nor /dev/iommu) in the claim's CDI edits and KubeVirt's DRA path adds none "
        "(inferred: QEMU's legacy VFIO opens /dev/vfio/vfio; only KubeVirt's device plugins add it)"
        if config.startswith("only with")
        else ""
    )
    return True, (
        f"KubeVirt reads {pci['attribute']} from {pci['claim_path']}, which the driver writes with gates "
        f"PassthroughSupport and DeviceMetadata enabled (both default off){needs}"
    )


def _drivers(driver: Source, old: Source | None) -> dict[str, Any]:
    """Every release of the driver, then main; each names the repositories that tag its commit."""
    rows = driver.tags()
    driver_tags = sorted((r for r in rows if r[0] != UNRELEASED), key=lambda row: (row[2], version_key(row[0])))
    if not driver_tags:
        raise ExtractError(f"{DRIVER_REPOSITORY}: no release tags")
    old_tags = {tag: commit for tag, commit, _ in (old.tags() if old is not None else [])}
    drivers = {}
    for tag, commit, date in [*driver_tags, *(r for r in rows if r[0] == UNRELEASED)]:
        at = At(DRIVER_REPOSITORY, tag, commit, driver)
        release = {"repository": DRIVER_REPOSITORY, **driver_release(at, date)}
        if old_tags.get(tag) == commit:
            release["tagged_in"] = [OLD_DRIVER_REPOSITORY, DRIVER_REPOSITORY]
        if tag == UNRELEASED:
            version = at.text(VERSION_FILE).strip()
            release["unreleased"] = {
                "branch": "main",
                "version": version,
                "certainty": f"unreleased main ({DRIVER_REPOSITORY} commit {commit}, {date}, {VERSION_FILE} {version}): "
                f"what {version.removesuffix('-dev')} most likely publishes, not a release",
                "source": VERSION_FILE,
            }
        drivers[tag] = release
    return drivers


def extract(driver: Source, kubevirt: Source, operator: Source, old: Source | None = None) -> dict[str, Any]:
    drivers = _drivers(driver, old)
    kubevirts = {
        tag: kubevirt_release(At(KUBEVIRT_REPOSITORY, tag, c, kubevirt), d)
        for tag, c, d in kubevirt.tags()
        if version_key(tag) >= version_key(KUBEVIRT_FIRST)
    }
    operators, skipped = {}, []
    for tag, c, d in operator.tags():
        release = operator_release(At(OPERATOR_REPOSITORY, tag, c, operator), d, list(drivers))
        if release is None:
            skipped.append(tag)
        else:
            operators[tag] = release
    missing = []
    main = drivers.get(UNRELEASED, {}).get("unreleased")
    newest = [t for t in drivers if t != UNRELEASED][-1]
    for tag, op in operators.items():
        v = op["dra_driver"]["version"]
        if op["dra_driver"]["version_in_mirror"]:
            continue
        if main is not None and main["version"] == f"{v}-dev":
            op["dra_driver"]["modelled_by"] = UNRELEASED
            missing.append(
                f"GPU Operator {tag} deploys DRA driver {v}, which is no tag of the {DRIVER_REPOSITORY} mirror "
                f"(newest: {newest}): modelled by {main['certainty']}"
            )
        else:
            missing.append(
                f"GPU Operator {tag} deploys DRA driver {v}, which is no tag of the {DRIVER_REPOSITORY} mirror "
                f"(newest: {newest}): what {v} publishes is not established"
            )
    combos: dict[str, Any] = {}
    for dtag, drel in drivers.items():
        combos[dtag] = {}
        for ktag, krel in kubevirts.items():
            works, why = _combination(drel, krel)
            combos[dtag][ktag] = {"works": works, "reason": why}
    about = (
        f"Facts about GPUs for KubeVirt VMs through DRA: NVIDIA's DRA driver ({DRIVER_REPOSITORY}, every final tag "
        f"vX.Y.Z, in release order: the project moved from calendar versions to v0.4.0 after v25.12.0, and from "
        f"{OLD_DRIVER_REPOSITORY} to {DRIVER_REPOSITORY} after v0.4.0, whose tags up to v0.4.0 name the same "
        f"commits: tagged_in; then the head of its main branch as release {UNRELEASED}, labelled unreleased), KubeVirt "
        f"({KUBEVIRT_REPOSITORY}, every final tag from {KUBEVIRT_FIRST}) and the GPU Operator ({OPERATOR_REPOSITORY}, "
        "every final tag whose values.yaml has draDriver; the others are in operator_tags_without_dra_driver), "
        "extracted from their git history by `python -m tools.dra_extract` (do not edit by hand). Each fact names "
        "its source path at the release's commit. compatibility is derived from those facts by the script; "
        "missing lists what the mirrored tags cannot establish."
    )
    return {
        "about": about,
        "repositories": {
            "driver": DRIVER_REPOSITORY,
            "driver_before": OLD_DRIVER_REPOSITORY,
            "kubevirt": KUBEVIRT_REPOSITORY,
            "operator": OPERATOR_REPOSITORY,
        },
        "driver_releases": drivers,
        "kubevirt_releases": kubevirts,
        "operator_releases": operators,
        "operator_tags_without_dra_driver": skipped,
        "compatibility": combos,
        "missing": missing,
    }


# -- inputs ------------------------------------------------------------------------------


def _sidecar(recording: Recording, repository: str) -> dict[str, Any]:
    return {
        "repository": repository,
        "license": LICENSES[repository],
        "tags": {
            tag: {"commit": commit, "date": date, "files": dict(sorted(recording.files.get(commit, {}).items()))}
            for tag, commit, date in recording.tags()
            if commit in recording.files or repository == OLD_DRIVER_REPOSITORY
        },
    }


def write_inputs(prefix: Path, recordings: dict[str, Recording]) -> None:
    sidecar = {
        "about": (
            "Upstream files the DRA facts (data/dra/releases.json) are extracted from, each blob once in the "
            ".tar.xz beside this file, named by its git blob id; per repository and release tag its commit, "
            "date and the blob of each path read (null: absent); of the driver's first home only its tags. "
            "go-nvlib's embedded pci.ids is not in the tarball: pci_ids holds its sha256, Version header and size "
            "by blob id. All the repositories are Apache-2.0; the files keep their licence headers."
        ),
        "repositories": {repo: _sidecar(rec, repo) for repo, rec in recordings.items()},
        "pci_ids": dict(sorted({k: v for rec in recordings.values() for k, v in rec.pci_ids_files.items()}.items())),
    }
    upstream.write_inputs(prefix, sidecar, {k: v for rec in recordings.values() for k, v in rec.blobs.items()})


def load_inputs(prefix: str | Path) -> tuple[VendoredSource, VendoredSource, VendoredSource, VendoredSource]:
    """The driver, KubeVirt, operator and the driver's first home (tags only) as the inputs hold them."""

    def build(sidecar: dict[str, Any], blobs: dict[str, bytes]) -> list[VendoredSource]:
        repos, pci_ids = sidecar["repositories"], sidecar["pci_ids"]
        return [
            VendoredSource({tag: {**row, "trees": {}} for tag, row in repos[repo]["tags"].items()}, blobs, pci_ids)
            for repo in (DRIVER_REPOSITORY, KUBEVIRT_REPOSITORY, OPERATOR_REPOSITORY, OLD_DRIVER_REPOSITORY)
        ]

    sources = upstream.load_inputs(prefix, build)
    return sources[0], sources[1], sources[2], sources[3]


def shipped_dir() -> Path:
    return upstream.shipped_dir("dra")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.dra_extract", description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--driver-git", help=f"a {DRIVER_REPOSITORY} git repository (bare is fine)")
    parser.add_argument("--kubevirt-git", help=f"a {KUBEVIRT_REPOSITORY} git repository (bare is fine)")
    parser.add_argument("--operator-git", help=f"a {OPERATOR_REPOSITORY} git repository (bare is fine)")
    parser.add_argument("--old-driver-git", help=f"a {OLD_DRIVER_REPOSITORY} git repository (its tags are read)")
    add_extractor_options(parser, "dra")
    args = parser.parse_args(argv)
    gits = [args.driver_git, args.kubevirt_git, args.operator_git, args.old_driver_git]
    from_git = all(g is not None for g in gits)
    if from_git == (args.from_inputs is not None) or (any(gits) and not from_git):
        parser.error(
            "give --driver-git DIR --kubevirt-git DIR --operator-git DIR --old-driver-git DIR, or --from-inputs PREFIX"
        )
    recordings = None
    try:
        if from_git:
            repos = (DRIVER_REPOSITORY, KUBEVIRT_REPOSITORY, OPERATOR_REPOSITORY, OLD_DRIVER_REPOSITORY)
            recordings = {
                repo: Recording(DriverGit(git) if repo == DRIVER_REPOSITORY else GitSource(git))
                for repo, git in zip(repos, gits, strict=True)
            }
            document = extract(*recordings.values())
        else:
            document = extract(*load_inputs(args.from_inputs))
    except ExtractError as error:
        print(f"dra_extract: error: {error}", file=sys.stderr)
        return 2
    out = args.out or shipped_dir()
    checked = publish(out, document, check=args.check)
    if checked is not None:
        return checked
    if recordings is not None and args.inputs is not None:
        write_inputs(args.inputs, recordings)
    print(
        f"{out / 'releases.json'}: {len(document['driver_releases'])} driver, {len(document['kubevirt_releases'])} "
        f"KubeVirt, {len(document['operator_releases'])} operator releases"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
