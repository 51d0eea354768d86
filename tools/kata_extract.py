"""Maintainer script: extract the release facts of NVIDIA's Kata sandbox
device plugin and of the GPU Operator's Kata mode (``data/kata/releases.json``)
from the git history of ``NVIDIA/sandbox-device-plugin`` (every release tag
``vX.Y.Z``) and ``NVIDIA/gpu-operator`` (every final tag ``vX.Y.Z`` whose Helm
values have a ``kataSandboxDevicePlugin`` section).

    python -m tools.kata_extract --plugin-git DIR --operator-git DIR [--inputs tests/data/kata-inputs]
    python -m tools.kata_extract --from-inputs tests/data/kata-inputs [--check]

The git directories may be bare (files are read with ``git cat-file``).
``--inputs PREFIX`` also writes the upstream files the facts come from, each
distinct blob once, as ``PREFIX.tar.xz`` with the sidecar ``PREFIX.json``
(per repository and tag its commit, date, the blob of each path read and the
directory listings read). The pci.ids files (1.5 MB each) are not in the
tarball: the sidecar holds their sha256, Version header and size instead.
``--from-inputs`` extracts from those instead of git, and ``--check``
compares with the shipped facts (exit 1 with a one-line summary when they
differ). A test does the same, so shipped facts are always what this script
writes.

Per plugin release: how it names devices (``vendor-section``: it reads
pci.ids itself; ``go-nvlib``: go-nvlib's nvpci names them and
``formatDeviceName`` formats the name), the pci.ids it reads, how it reads
``P_GPU_ALIAS`` / ``NVSWITCH_ALIAS``, which PCI functions it advertises and
how, its socket and resource name, what it does with a device it has no
name for, and the RuntimeClass of the GPU pod it launches itself
(``createGFDPod`` of ``pkg/device_plugin/gfd.go``; null in a release without
that file). Per GPU Operator release: the plugin it deploys, the DaemonSet's
environment and host paths, the sandbox mode, and which Kata RuntimeClasses
the operator itself creates or deletes.

Each fact is read from exact code shapes (regular expressions over the Go
source, YAML of the manifests). Anything the script does not recognise is
an error naming the release and file: a changed function is never guessed at.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import yaml

from tools import upstream
from tools.upstream import (
    TAG,
    At,
    ExtractError,
    GitSource,
    Recording,
    Source,
    VendoredSource,
    add_extractor_options,
    publish,
    statements as _statements,
)

PLUGIN_REPOSITORY = "NVIDIA/sandbox-device-plugin"
OPERATOR_REPOSITORY = "NVIDIA/gpu-operator"
LICENSES = {PLUGIN_REPOSITORY: "BSD-3-Clause", OPERATOR_REPOSITORY: "Apache-2.0"}

# -- the plugin's files --------------------------------------------------------------
MAIN = "cmd/main.go"
PACKAGE = "pkg/device_plugin"
DEVICE_PLUGIN = f"{PACKAGE}/device_plugin.go"
GENERIC = f"{PACKAGE}/generic_device_plugin.go"
CONSTANTS = f"{PACKAGE}/constants.go"
GFD = f"{PACKAGE}/gfd.go"
DOCKERFILE = "deployments/container/Dockerfile.distroless"
CONTAINER_MAKEFILE = "deployments/container/Makefile"
VERSIONS_MK = "versions.mk"
GO_MOD = "go.mod"
NVLIB = "vendor/github.com/NVIDIA/go-nvlib/pkg"
NVPCI = f"{NVLIB}/nvpci/nvpci.go"
MLXPCI = f"{NVLIB}/nvpci/mlxpci.go"
PCIIDS_GO = f"{NVLIB}/pciids/pciids.go"
EMBEDDED_PCI_IDS = f"{NVLIB}/pciids/default_pci.ids"

# -- the operator's files ------------------------------------------------------------
VALUES = "deployments/gpu-operator/values.yaml"
TYPES = "api/nvidia/v1/clusterpolicy_types.go"
KATA_DAEMONSET = "assets/state-kata-device-plugin/0500_daemonset.yaml"
KATA_RUNTIME_CLASS = "assets/state-kata-manager/0700_runtime_class.yaml"
OBJECT_CONTROLS = "controllers/object_controls.go"
STATE_MANAGER = "controllers/state_manager.go"

VENDOR_SECTION = "vendor-section"
GO_NVLIB = "go-nvlib"
#: The characters each algorithm's last step deletes (anything else is an error).
FILTERS = {VENDOR_SECTION: "[^a-zA-Z0-9_.]+", GO_NVLIB: "[^a-zA-Z0-9_-]+"}
#: Go variable of the plugin -> the environment variable cmd/main.go reads into it.
ALIASES = {"PGPUAlias": "P_GPU_ALIAS", "NVSwitchAlias": "NVSWITCH_ALIAS"}
KATA_LABEL = "nvidia.com/kata-runtime-class"

_GO_STRING = r'"(?:[^"\\]|\\.)*"|`[^`]*`'


# -- sources ----------------------------------------------------------------------


def load_inputs(prefix: str | Path) -> tuple[VendoredSource, VendoredSource]:
    """(plugin source, operator source) from ``PREFIX.json`` and ``PREFIX.tar.xz``."""

    def build(sidecar: dict[str, Any], blobs: dict[str, bytes]) -> tuple[VendoredSource, VendoredSource]:
        repositories, pci_ids = sidecar["repositories"], sidecar["pci_ids"]
        return (
            VendoredSource(repositories[PLUGIN_REPOSITORY]["tags"], blobs, pci_ids),
            VendoredSource(repositories[OPERATOR_REPOSITORY]["tags"], blobs, pci_ids),
        )

    return upstream.load_inputs(prefix, build)


# -- reading one release ----------------------------------------------------------


def _go_string(literal: str) -> str:
    """The value of a Go string literal ("..." or `...`)."""
    return literal[1:-1] if literal.startswith("`") else str(json.loads(literal))


def _shape(at: At, path: str, lines: list[str], shape: tuple[str, ...], what: str) -> list[str]:
    """Match ``lines`` one to one with the regexes of ``shape``; the groups, in order."""
    if len(lines) < len(shape):
        raise at.fail(path, f"{what} is shorter than the known shape")
    groups: list[str] = []
    for line, pattern in zip(lines, shape):
        m = re.fullmatch(pattern, line)
        if m is None:
            raise at.fail(path, f"{what}: {line!r} is not the known shape")
        groups.extend(m.groups())
    return groups


def _constants(text: str) -> dict[str, str]:
    """Go constants and variables ``name [type] = value`` of ``text`` (value as written)."""
    found = re.findall(r"^\s*(\w+)(?:\s+u?int\d*)?\s*=\s*(0x[0-9a-fA-F]+|\"[^\"\n]*\")\s*$", text, re.M)
    return {name: value.strip('"') for name, value in found}


def _yaml(at: At, path: str) -> Any:
    try:
        return yaml.safe_load(at.text(path))
    except yaml.YAMLError as error:
        raise at.fail(path, f"not YAML: {str(error).splitlines()[0]}") from None


# -- plugin: name derivation --------------------------------------------------------

_VENDOR_NAME = (
    r"deviceName = strings\.TrimPrefix\(line, prefix\)",
    r"deviceName = strings\.TrimSpace\(deviceName\)",
    r"deviceName = strings\.ToUpper\(deviceName\)",
    r'deviceName = strings\.Replace\(deviceName, "/", "_", -1\)',
    r'deviceName = strings\.Replace\(deviceName, "\.", "_", -1\)',
    r"reg, _ := regexp\.Compile\((" + _GO_STRING + r")\)",
    r'deviceName = reg\.ReplaceAllString\(deviceName, "_"\)',
    r"reg, _ = regexp\.Compile\((" + _GO_STRING + r")\)",
    r'deviceName = reg\.ReplaceAllString\(deviceName, ""\)',
    r"break",
)
_VENDOR_SCAN = (
    'prefix := fmt.Sprintf("\\t%s", deviceID)',
    'if strings.HasPrefix(line, "#") {',
    'if !strings.HasPrefix(line, "\\t") {',
    "if !strings.HasPrefix(line, prefix) {",
)
_FORMAT_NAME = (
    r'if name == "" \{',
    r'return ""',
    r"\}",
    r"name = strings\.ToUpper\(name\)",
    r'name = strings\.ReplaceAll\(name, "/", "_"\)',
    r'name = strings\.ReplaceAll\(name, "\.", "_"\)',
    r"reg := regexp\.MustCompile\((" + _GO_STRING + r")\)",
    r'name = reg\.ReplaceAllString\(name, "_"\)',
    r"reg = regexp\.MustCompile\((" + _GO_STRING + r")\)",
    r'name = reg\.ReplaceAllString\(name, ""\)',
    r"return name",
)


def _algorithm(at: At, device: str) -> str:
    vendor = "func getDeviceName(" in device and "func locateVendor(" in device
    nvlib = '"github.com/NVIDIA/go-nvlib/pkg/nvpci"' in device and "func formatDeviceName(" in device
    if vendor == nvlib:
        raise at.fail(
            DEVICE_PLUGIN, "neither (or both) getDeviceName+locateVendor and go-nvlib's nvpci+formatDeviceName"
        )
    return VENDOR_SECTION if vendor else GO_NVLIB


def _filters(at: At, path: str, whitespace: str, deleted: str, algorithm: str, func: str) -> str:
    """Check the two regexes of a name formatter: whitespace runs to "_", then ``FILTERS[algorithm]`` deleted."""
    whitespace, deleted = _go_string(whitespace), _go_string(deleted)
    if whitespace != r"\s+":
        raise at.fail(path, f"{func} replaces {whitespace!r}, not \\s+, with _")
    if deleted != FILTERS[algorithm]:
        raise at.fail(path, f"{func} deletes {deleted!r}, not the known {FILTERS[algorithm]!r}")
    return deleted


def _vendor_section_name(at: At, device: str) -> dict[str, Any]:
    """v0.0.1's getDeviceName: the 10de section of the pci.ids at pciIdsFilePath."""
    body = at.func(DEVICE_PLUGIN, device, "getDeviceName").split("\n")
    at.find(DEVICE_PLUGIN, "\n".join(body), r"^file, err := os\.Open\(pciIdsFilePath\)$", "getDeviceName's os.Open")
    at.find(DEVICE_PLUGIN, "\n".join(body), r"^scanner, err := locateVendor\(file, nvidiaVendorID\)$", "locateVendor")
    for line in _VENDOR_SCAN:
        if line not in body:
            raise at.fail(DEVICE_PLUGIN, f"getDeviceName has no {line!r}")
    start = next((i for i, line in enumerate(body) if line.startswith("deviceName = strings.TrimPrefix")), len(body))
    whitespace, deleted = _shape(at, DEVICE_PLUGIN, body[start:], _VENDOR_NAME, "getDeviceName's name steps")
    locate = at.func(DEVICE_PLUGIN, device, "locateVendor")
    at.find(DEVICE_PLUGIN, locate, r"^if strings\.HasPrefix\(line, vendorID\) \{\nreturn scanner, nil$", "locateVendor")
    vendor = _constants(device).get("nvidiaVendorID")
    if vendor != "10de":
        raise at.fail(DEVICE_PLUGIN, f"nvidiaVendorID is {vendor!r}, not 10de")
    return {
        "algorithm": VENDOR_SECTION,
        "format_filter": _filters(at, DEVICE_PLUGIN, whitespace, deleted, VENDOR_SECTION, "getDeviceName"),
        "sources": {
            "algorithm": f"{DEVICE_PLUGIN} getDeviceName, locateVendor (nvidiaVendorID)",
            "format_filter": f"{DEVICE_PLUGIN} getDeviceName",
        },
    }


def _go_nvlib_name(at: At, device: str) -> dict[str, Any]:
    """v0.0.2 on: nvpci's DeviceName through formatDeviceName."""
    at.find(DEVICE_PLUGIN, device, r"^\s*nvpciLib = nvpci\.New\(\)$", "nvpci.New() (without options)")
    lookup = at.func(DEVICE_PLUGIN, device, "getDeviceNameForID")
    at.find(DEVICE_PLUGIN, lookup, r"^return formatDeviceName\(dev\.DeviceName\)$", "getDeviceNameForID")
    lines = at.func(DEVICE_PLUGIN, device, "formatDeviceName").split("\n")
    if len(lines) != len(_FORMAT_NAME):
        raise at.fail(DEVICE_PLUGIN, "formatDeviceName is not the known shape (statements added or removed)")
    whitespace, deleted = _shape(at, DEVICE_PLUGIN, lines, _FORMAT_NAME, "formatDeviceName")
    return {
        "algorithm": GO_NVLIB,
        "format_filter": _filters(at, DEVICE_PLUGIN, whitespace, deleted, GO_NVLIB, "formatDeviceName"),
        "sources": {
            "algorithm": f"{DEVICE_PLUGIN} formatDeviceName, getDeviceNameForID (nvpci DeviceName)",
            "format_filter": f"{DEVICE_PLUGIN} formatDeviceName",
        },
    }


# -- plugin: the pci.ids it reads ---------------------------------------------------


def _final_stage(at: At) -> tuple[str, str]:
    """(the final FROM's image, the final stage's text) of the image's Dockerfile."""
    dockerfile = at.text(DOCKERFILE)
    froms = list(re.finditer(r"^FROM\s+(\S+)(?:\s+(?:AS|as)\s+\w+)?\s*$", dockerfile, re.M))
    if not froms:
        raise at.fail(DOCKERFILE, "no FROM")
    return froms[-1].group(1), dockerfile[froms[-1].end() :]


def _image_copy(at: At, dest: str) -> str:
    """The repository path the image's final stage COPYs to ``dest``."""
    _, stage = _final_stage(at)
    copies = re.findall(r"^COPY --from=builder /go/src/sandbox-device-plugin/(\S+) (\S+)$", stage, re.M)
    sources = [src for src, to in copies if to == dest]
    if len(sources) != 1:
        raise at.fail(DOCKERFILE, f"the final stage does not COPY one file from the builder to {dest}")
    return str(sources[0])


def _vendor_section_pci_ids(at: At) -> dict[str, Any]:
    path = _constants(at.text(CONSTANTS)).get("pciIdsFilePath")
    if path is None or not path.startswith("/"):
        raise at.fail(CONSTANTS, "no pciIdsFilePath")
    copied = _image_copy(at, path)
    facts = at.pci_ids(copied)
    return {
        "path": path,
        "sha256": facts["sha256"],
        "version": facts["version"],
        "source": f"{CONSTANTS} pciIdsFilePath; {DOCKERFILE} COPY {copied} {path}; sha256 and Version of {copied}",
    }


def _image_base(at: At) -> dict[str, Any]:
    """The final stage's base image: the Dockerfile's ARG default and what the Makefile passes."""
    image, _ = _final_stage(at)
    if image != "${DISTROLESS_BASE_IMAGE}":
        raise at.fail(DOCKERFILE, f"the final stage is FROM {image}, not ${{DISTROLESS_BASE_IMAGE}}")
    default = at.find(
        DOCKERFILE, at.text(DOCKERFILE), r"^ARG DISTROLESS_BASE_IMAGE=(\S+)$", "ARG DISTROLESS_BASE_IMAGE"
    )
    makefile = at.text(CONTAINER_MAKEFILE)
    for line in (
        r"^include \$\(CURDIR\)/versions\.mk$",
        r"^DISTRIBUTIONS := distroless$",
        r'^\s*--build-arg DISTROLESS_BASE_IMAGE="\$\(DISTROLESS_BASE_IMAGE\)" \\$',
    ):
        at.find(CONTAINER_MAKEFILE, makefile, line, line)
    build = at.find(VERSIONS_MK, at.text(VERSIONS_MK), r"^DISTROLESS_BASE_IMAGE \?= (\S+)$", "DISTROLESS_BASE_IMAGE")
    return {
        "dockerfile_default": default.group(1),
        "make_build_arg": build.group(1),
        "source": (
            f"{DOCKERFILE} ARG DISTROLESS_BASE_IMAGE (the file {CONTAINER_MAKEFILE} builds, DISTRIBUTIONS := "
            f"distroless); {VERSIONS_MK} DISTROLESS_BASE_IMAGE, which that Makefile passes as --build-arg"
        ),
    }


def _nvlib_reads(at: At) -> list[str]:
    """go-nvlib's pciids: the files NewDB tries in order (then its embedded copy)."""
    text = at.text(PCIIDS_GO)
    block = at.find(PCIIDS_GO, text, r"^var defaultPCIdbPaths = \[\]string\{\n((?:\s*\"[^\"]+\",.*\n)+)\}$", "paths")
    paths = re.findall(r"\"([^\"]+)\"", block.group(1))
    for pattern in (
        r"^//go:embed default_pci\.ids\nvar defaultPCIdb \[\]byte$",
        r"^\s*pcidbs := defaultPCIdbPaths$",
        r"^\s*for _, db := range pcidbs \{\n\s*file, err := os\.ReadFile\(db\)\n\s*if err != nil \{\n\s*continue$",
        r"^\s*return newParserFromReader\(bufio\.NewReader\(bytes\.NewReader\(defaultPCIdb\)\)\)$",
    ):
        at.find(PCIIDS_GO, text, pattern, "NewDB / newParser")
    return paths


def _go_nvlib_pci_ids(at: At) -> dict[str, Any]:
    paths = _nvlib_reads(at)
    at.find(NVPCI, at.text(NVPCI), r"^\s*pciDB := pciids\.NewDB\(\)$", "pciids.NewDB() (without options)")
    go_mod = at.text(GO_MOD)
    if re.search(r"^\s*(?:replace\s+)?github\.com/NVIDIA/go-nvlib\b.*=>", go_mod, re.M):
        raise at.fail(GO_MOD, "go-nvlib is replaced")
    nvlib = at.find(GO_MOD, go_mod, r"^\s*github\.com/NVIDIA/go-nvlib (v\S+)$", "the go-nvlib requirement")
    embedded = at.pci_ids(EMBEDDED_PCI_IDS)
    copied = _image_copy(at, "/usr/pci.ids")
    copy = at.pci_ids(copied)
    return {
        **embedded,
        "source": f"{PCIIDS_GO} //go:embed default_pci.ids (newParser's fallback); {NVPCI} pciids.NewDB()",
        "system_paths": paths,
        "go_nvlib": nvlib.group(1),
        "image_base": _image_base(at),
        "image_copy": {
            "path": "/usr/pci.ids",
            "from": copied,
            "sha256": copy["sha256"],
            "version": copy["version"],
            "read": "/usr/pci.ids" in paths,
            "note": (
                f"{DOCKERFILE} still COPYs {copied} to /usr/pci.ids, but "
                + (
                    "go-nvlib reads it"
                    if "/usr/pci.ids" in paths
                    else "nothing reads it: it is not one of go-nvlib's defaultPCIdbPaths, and nvpci.New() and "
                    "pciids.NewDB() are called without a path"
                )
            ),
        },
        "established": None,  # filled in from the GPU Operator releases that deploy this one
    }


# -- plugin: what it advertises -----------------------------------------------------


def _vendor_section_devices(at: At, device: str) -> dict[str, Any]:
    walk = at.func(DEVICE_PLUGIN, device, "createIommuDeviceMap")
    vendor = at.find(DEVICE_PLUGIN, walk, r'^if vendorID == "([0-9a-f]{4})" \{$', "the vendor check")
    driver = at.find(DEVICE_PLUGIN, walk, r'^if driver == "([\w-]+)" \{$', "the driver check")
    at.find(
        DEVICE_PLUGIN,
        walk,
        r"^iommuKey := iommuGroup\n(?:.*\n)*?iommuKey = iommufd\n(?:.*\n)*?_, exists := iommuMap\[iommuKey\]\n"
        r"if !exists \{\n(?:.*\n)*?deviceMap\[deviceID\] = append\(deviceMap\[deviceID\], iommuKey\)\n\}\n"
        r"iommuMap\[iommuKey\] = append\(iommuMap\[iommuKey\], NvidiaGpuDevice\{info\.Name\(\)\}\)$",
        "the IOMMU group map",
    )
    plugins = at.func(DEVICE_PLUGIN, device, "createDevicePlugins")
    at.find(DEVICE_PLUGIN, plugins, r"^for k, v := range deviceMap \{$", "the loop over deviceMap")
    at.find(
        DEVICE_PLUGIN,
        plugins,
        r'^deviceName = getDeviceName\(k\)\nif deviceName == "" \{\n.*\ndeviceName = k\n\}$',
        "the unnamed fallback",
    )
    return {
        "classes": None,
        "vendors": [vendor.group(1)],
        "driver": driver.group(1),
        "unit": "iommu-group",
        "unnamed": {
            "advertised_as": "device-id",
            "note": 'getDeviceName returns "" when pci.ids has no line for the id (or cannot be read); the '
            "plugin then names the resource by the device id (4 hex digits)",
        },
        "sources": {
            "classes": f"{DEVICE_PLUGIN} createIommuDeviceMap (no class check: every vendor {vendor.group(1)} function)",
            "vendors": f"{DEVICE_PLUGIN} createIommuDeviceMap vendorID ==",
            "driver": f"{DEVICE_PLUGIN} createIommuDeviceMap driver ==",
            "unit": f"{DEVICE_PLUGIN} createIommuDeviceMap iommuMap[iommuKey] exists (first function of a group)",
            "unnamed": f"{DEVICE_PLUGIN} createDevicePlugins",
        },
    }


def _class_of(at: At, nvpci: str, method: str, consts: dict[str, str], depth: int = 0) -> list[str]:
    """The class constants (as 0x hex) a go-nvlib NvidiaPCIDevice method compares Class to, exactly."""
    body = at.func(NVPCI, nvpci, method)
    one = re.fullmatch(r"return d\.Class == (\w+)", body)
    both = re.fullmatch(r"return d\.(\w+)\(\) \|\| d\.(\w+)\(\)", body)
    if one and one.group(1) in consts:
        return [f"0x{int(consts[one.group(1)], 16):06x}"]
    if both and depth < 2:
        return _class_of(at, nvpci, both.group(1), consts, depth + 1) + _class_of(
            at, nvpci, both.group(2), consts, depth + 1
        )
    raise at.fail(NVPCI, f"{method} is not an exact comparison of Class with known constants")


#: nvpci reads the sysfs class file whole (0xCCSSPP: class, subclass, prog-if), in one of two shapes.
_CLASS_READ = (
    r'^\s*class, err := os\.ReadFile\(path\.Join\(devicePath, "class"\)\)\n(?:.*\n){3}'
    r"\s*classStr := strings\.TrimSpace\(string\(class\)\)\n\s*classID, err := strconv\.ParseUint\(classStr, 0, 32\)$",
    r'^\s*classID, err := readPCIField\(devicePath, "class", 32\)$',
)
_READ_FIELD = (
    r"^func readPCIField\(devicePath, field string, bitSize int\) \(uint64, error\) \{\n"
    r"\s*str, err := readPCIFieldString\(devicePath, field\)\n(?:.*\n){3}\s*val, err := strconv\.ParseUint\(str, 0, bitSize\)$"
)


def _nvpci_checks(at: At, nvpci: str, consts: dict[str, str]) -> list[str]:
    """Vendor ids nvpci's GetAllDevices keeps; checks the 24-bit class and the device name it records."""
    vendors = at.find(
        NVPCI, nvpci, r"^\s*if uint16\(vendorID\) != (\w+)((?: && uint16\(vendorID\) != \w+)*) \{$", "vendors"
    )
    names = [vendors.group(1), *re.findall(r"!= (\w+)", vendors.group(2))]
    if any(name not in consts for name in names):
        raise at.fail(NVPCI, f"vendor constants {names} are not all defined in nvpci.go / mlxpci.go")
    if not re.search(_CLASS_READ[0], nvpci, re.M):
        at.find(NVPCI, nvpci, _CLASS_READ[1], "the read of the sysfs class")
        at.find(NVPCI, nvpci, _READ_FIELD, "readPCIField")
    for pattern in (
        r"^\s*Class:\s+uint32\(classID\),$",
        r"^\s*deviceName, err := pciDB\.GetDeviceName\(uint16\(vendorID\), uint16\(deviceID\)\)\n"
        r"\s*if err != nil \{\n.*\n\s*deviceName = UnknownDeviceString$",
        r"^\s*DeviceName:\s+deviceName,$",
    ):
        at.find(NVPCI, nvpci, pattern, "the class or device name nvpci records")
    return [f"{int(consts[name], 16):04x}" for name in names]


def _go_nvlib_devices(at: At, device: str) -> dict[str, Any]:
    nvpci = at.text(NVPCI)
    consts = {**_constants(nvpci), **_constants(at.maybe(MLXPCI) or "")}
    walk = at.func(DEVICE_PLUGIN, device, "createIommuDeviceMap")
    at.find(DEVICE_PLUGIN, walk, r"^devices, err := nvpciLib\.GetAllDevices\(\)$", "GetAllDevices")
    keep = at.find(DEVICE_PLUGIN, walk, r"^if !dev\.(\w+)\(\) && !dev\.(\w+)\(\) \{\ncontinue\n\}$", "the class check")
    driver = at.find(DEVICE_PLUGIN, walk, r'^if dev\.Driver != "([\w-]+)" \{\n(?:.*\n){1,2}continue\n\}$', "driver")
    at.find(
        DEVICE_PLUGIN,
        walk,
        r"^iommuKey := strconv\.Itoa\(dev\.IommuGroup\)\n(?:.*\n)*?"
        r'iommuKey = strings\.TrimPrefix\(dev\.IommuFD, "vfio"\)\n(?:.*\n)*?'
        r"if _, exists := iommuMap\[iommuKey\]; !exists \{\n"
        r"deviceMap\[deviceID\] = append\(deviceMap\[deviceID\], iommuKey\)\n\}$",
        "the IOMMU group map",
    )
    plugins = at.func(DEVICE_PLUGIN, device, "createDevicePlugins")
    at.find(DEVICE_PLUGIN, plugins, r"^for deviceID, iommuKeys := range deviceMap \{$", "the loop over deviceMap")
    at.find(DEVICE_PLUGIN, plugins, r'^if deviceName == "" \{\n.*\ndeviceName = deviceID\n\}$', "the unnamed fallback")
    unknown = consts.get("UnknownDeviceString")
    if not unknown:
        raise at.fail(NVPCI, "no UnknownDeviceString")
    classes = _class_of(at, nvpci, keep.group(1), consts) + _class_of(at, nvpci, keep.group(2), consts)
    return {
        "classes": classes,
        "vendors": _nvpci_checks(at, nvpci, consts),
        "driver": driver.group(1),
        "unit": "iommu-group",
        "unnamed": {
            "advertised_as": unknown,
            "device_id_when": 'formatDeviceName returns "" (a name made only of deleted characters)',
            "note": f'nvpci sets DeviceName to UnknownDeviceString "{unknown}" when its pci.ids has no line for '
            "the id; formatDeviceName keeps it, so the resource is that; the plugin falls back to the device id "
            'only when formatDeviceName returns ""',
        },
        "sources": {
            "classes": f"{DEVICE_PLUGIN} createIommuDeviceMap dev.{keep.group(1)}() / dev.{keep.group(2)}(); {NVPCI}",
            "vendors": f"{NVPCI} getNvidiaDeviceByPciBusID vendor check; {MLXPCI}",
            "driver": f"{DEVICE_PLUGIN} createIommuDeviceMap dev.Driver !=",
            "unit": f"{DEVICE_PLUGIN} createIommuDeviceMap iommuMap[iommuKey] exists (first function of a group)",
            "unnamed": f"{NVPCI} UnknownDeviceString; {DEVICE_PLUGIN} createDevicePlugins",
        },
    }


# -- plugin: aliases, socket, resource, Allocate ------------------------------------

_GETENV = r'^device_plugin\.{var} = os\.Getenv\("(\w+)"\)$'
_LOOKUP = r'^device_plugin\.{var}, ok = os\.LookupEnv\("(\w+)"\)\nif !ok \{{\ndevice_plugin\.{var} = "([^"]*)"\n\}}$'


def _alias(at: At, main: str, device: str, var: str) -> dict[str, str] | None:
    """How cmd/main.go reads the alias variable ``var`` (None: the release has no such variable)."""
    uses = len(re.findall(r"\bdevice_plugin\." + var + r"\b", main))
    if not re.search(r"^var " + var + r" string$", device, re.M):
        if uses:
            raise at.fail(MAIN, f"sets device_plugin.{var}, which {DEVICE_PLUGIN} does not declare")
        return None
    getenv = re.search(_GETENV.format(var=var), main, re.M)
    lookup = re.search(_LOOKUP.format(var=var), main, re.M)
    if getenv and uses == 1:
        env, read, unset = getenv.group(1), "Getenv", ""
    elif lookup and uses == 2:
        env, read, unset = lookup.group(1), "LookupEnv", lookup.group(2)
    else:
        raise at.fail(MAIN, f"{ALIASES[var]} is not read into device_plugin.{var} in a way this script knows")
    if env != ALIASES[var]:
        raise at.fail(MAIN, f"device_plugin.{var} is read from {env}, not {ALIASES[var]}")
    if not re.search(r"\bif " + var + r' != "" \{\ndeviceName = ' + var + "$", device, re.M):
        raise at.fail(DEVICE_PLUGIN, f'{var} is not used as "name every device {var}, unless empty"')
    return {"read": read, "unset": unset}


def _aliases(at: At, device: str) -> dict[str, Any]:
    main = "\n".join(_statements(at.text(MAIN)))
    body = "\n".join(_statements(device))
    found: dict[str, Any] = {env: _alias(at, main, body, var) for var, env in ALIASES.items()}
    if found["P_GPU_ALIAS"] is None:
        raise at.fail(DEVICE_PLUGIN, "no PGPUAlias")
    return {**found, "source": MAIN}


def _gpu_prefix_note(at: At, constants: str) -> str:
    """Whether gpuPrefix (constants.go) is used by any non-test Go file of the plugin."""
    prefix = _constants(constants).get("gpuPrefix")
    if prefix is None:
        return "constants.go defines no gpuPrefix"
    users = []
    for folder in (PACKAGE, "cmd"):
        names = at.source.listdir(at.commit, folder)
        if names is None:
            raise at.fail(folder, "missing")
        for name in names:
            if name.endswith(".go") and not name.endswith("_test.go"):
                text = "\n".join(_statements(at.text(f"{folder}/{name}")))
                if len(re.findall(r"\bgpuPrefix\b", text)) > (1 if f"{folder}/{name}" == CONSTANTS else 0):
                    users.append(f"{folder}/{name}")
    if users:
        return f"gpuPrefix {prefix} ({CONSTANTS}) is used by {', '.join(users)}"
    return f"gpuPrefix {prefix} is defined in {CONSTANTS} but no non-test Go file of {PACKAGE} or cmd uses it"


def _serving(at: At) -> dict[str, Any]:
    generic = at.text(GENERIC)
    constants = at.text(CONSTANTS)
    new = at.func(GENERIC, generic, "NewGenericDevicePlugin")
    sock = at.find(
        GENERIC, new, r'^serverSock := fmt\.Sprintf\(pluginapi\.DevicePluginPath\+"([^"]+)", deviceName\)$', "socket"
    )
    register = at.func(GENERIC, generic, "Register")
    resource = at.find(
        GENERIC, register, r'^ResourceName: fmt\.Sprintf\("%s/%s", (\w+), dpi\.deviceName\),$', "resource"
    )
    namespace = _constants(constants).get(resource.group(1))
    if namespace is None:
        raise at.fail(CONSTANTS, f"no {resource.group(1)}")
    allocate = at.func(GENERIC, generic, "Allocate")
    return {
        "socket": sock.group(1),
        "resource": f"{namespace}/%s",
        "allocate_env": "Envs" in allocate,
        "note": _gpu_prefix_note(at, constants),
        "sources": {
            "socket": f"{GENERIC} NewGenericDevicePlugin (under pluginapi.DevicePluginPath)",
            "resource": f"{GENERIC} Register ResourceName; {CONSTANTS} {resource.group(1)}",
            "allocate_env": f"{GENERIC} Allocate (Envs)",
            "note": f"{CONSTANTS} gpuPrefix; every non-test .go file of {PACKAGE} and cmd",
        },
    }


# -- plugin: the runtime class of its own GPU pod -----------------------------------

#: createGFDPod's choice of runtimeClassName (statements of Go code): a default, then two node-label branches.
_LABEL_IF = r"exists, value :?= getNodeLabel\(clientset, nodeName, (" + _GO_STRING + r")\)"
_TRUE_IF = r'if exists && strings\.EqualFold\(value, "true"\) \{'
_GFD_CLASSES = (
    r"var runtimeClassName string = (" + _GO_STRING + r")",
    _LABEL_IF,
    _TRUE_IF,
    _LABEL_IF,
    _TRUE_IF,
    r"runtimeClassName = (" + _GO_STRING + r")",
    r"\} else \{",
    _LABEL_IF,
    _TRUE_IF,
    r"runtimeClassName = (" + _GO_STRING + r")",
    r"\}",
    r"\}",
    r"\}",
    r'log\.Printf\("Runtime class for GFD pod: %s", runtimeClassName\)',
)


def _gpu_pod_launch(at: At, device: str) -> str:
    """When createDevicePlugins starts runGFD: "always" or "ENABLE_GFD" (cmd/main.go; EnableGFD false by default)."""
    body = at.func(DEVICE_PLUGIN, device, "createDevicePlugins")
    if body.count("go runGFD()") != 1 or "go runGFD()" in "\n".join(_statements(device)).replace(body, ""):
        raise at.fail(DEVICE_PLUGIN, "runGFD is not started once, by createDevicePlugins")
    if re.search(r"^if EnableGFD \{\ngo runGFD\(\)\n\}$", body, re.M):
        main = "\n".join(_statements(at.text(MAIN)))
        at.find(MAIN, main, r'^enableGFDFlag, ok = os\.LookupEnv\("ENABLE_GFD"\)\nif ok \{$', "ENABLE_GFD")
        at.find(CONSTANTS, at.text(CONSTANTS), r"^\s*EnableGFD = false$", "EnableGFD = false")
        return "ENABLE_GFD"
    if _unconditional(body, r"go runGFD\(\)$"):
        return "always"
    raise at.fail(DEVICE_PLUGIN, "runGFD is started in a way this script does not know")


def _gpu_pod_runtime_classes(at: At, device: str) -> tuple[dict[str, Any] | None, str]:
    """(the runtime classes createGFDPod gives the plugin's own GPU pod, its source); (None, reason) without gfd.go."""
    names = at.source.listdir(at.commit, PACKAGE) or []
    users = [
        f"{folder}/{name}"
        for folder in (PACKAGE, "cmd")
        for name in at.source.listdir(at.commit, folder) or []
        if name.endswith(".go") and not name.endswith("_test.go") and f"{folder}/{name}" != GFD
        if "RuntimeClassName" in at.text(f"{folder}/{name}")
    ]
    if users:
        raise at.fail(users[0], "sets a RuntimeClassName outside gfd.go")
    if "gfd.go" not in names:
        if "runGFD" in device:
            raise at.fail(DEVICE_PLUGIN, "calls runGFD but the package has no gfd.go")
        return None, (
            f"{DEVICE_PLUGIN} and every non-test .go file of {PACKAGE} and cmd: the package has no gfd.go and no file "
            "sets a RuntimeClassName, so this release launches no GPU pod of its own"
        )
    text = at.text(GFD)
    lines = at.func(GFD, text, "createGFDPod").split("\n")
    start = next((i for i, line in enumerate(lines) if line.startswith("var runtimeClassName")), len(lines))
    groups = [_go_string(g) for g in _shape(at, GFD, lines[start:], _GFD_CLASSES, "createGFDPod's runtime class")]
    default, cc, snp_label, snp, tdx_label, tdx = groups
    if "RuntimeClassName:   &runtimeClassName," not in lines and "RuntimeClassName: &runtimeClassName," not in lines:
        raise at.fail(GFD, "createGFDPod does not set the pod's RuntimeClassName to runtimeClassName")
    resource = 'resourceName := fmt.Sprintf("%s/%s", DeviceNamespace, getGPUDeviceName())'
    if resource not in lines:
        raise at.fail(GFD, "createGFDPod does not ask for DeviceNamespace/getGPUDeviceName()")
    label = at.func(GFD, text, "getNodeLabel")
    at.find(GFD, label, r"^val, exists := node\.Labels\[labelKey\]\nif exists \{$", "getNodeLabel")
    launched = _gpu_pod_launch(at, device)
    when = {
        "always": "createDevicePlugins always starts runGFD",
        "ENABLE_GFD": "createDevicePlugins starts runGFD only when ENABLE_GFD parses as true (default false)",
    }[launched]
    fact = {
        "default": default,
        "by_node_labels": [
            {"labels": {cc: "true", snp_label: "true"}, "runtime_class": snp},
            {"labels": {cc: "true", tdx_label: "true"}, "runtime_class": tdx},
        ],
        "launched": launched,
        "note": (
            f"createGFDPod gives the plugin's own GPU pod (gpu-feature-discovery, asking for one "
            f"nvidia.com/<first GPU name>) runtimeClassName {default}; on a node labelled {cc}=true it is {snp} "
            f"when {snp_label}=true, else {tdx} when {tdx_label}=true (values compared case-insensitively, "
            f"strings.EqualFold); {when}. The class itself is not installed by the plugin"
        ),
    }
    return fact, f"{GFD} createGFDPod, getNodeLabel; {DEVICE_PLUGIN} createDevicePlugins (go runGFD)"


def plugin_release(at: At, date: str) -> dict[str, Any]:
    """The facts of one plugin release."""
    device = at.text(DEVICE_PLUGIN)
    if _algorithm(at, device) == VENDOR_SECTION:
        name, devices, pci_ids = (
            _vendor_section_name(at, device),
            _vendor_section_devices(at, device),
            _vendor_section_pci_ids(at),
        )
    else:
        name, devices, pci_ids = _go_nvlib_name(at, device), _go_nvlib_devices(at, device), _go_nvlib_pci_ids(at)
    serving = _serving(at)
    gpu_pod, gpu_pod_source = _gpu_pod_runtime_classes(at, device)
    sources = {
        **name.pop("sources"),
        "pci_ids": pci_ids["source"],
        "aliases": MAIN,
        **devices.pop("sources"),
        **serving.pop("sources"),
        "gpu_pod_runtime_classes": gpu_pod_source,
    }
    return {
        "date": date,
        "commit": at.commit,
        **name,
        "pci_ids": pci_ids,
        "aliases": _aliases(at, device),
        **devices,
        **serving,
        "gpu_pod_runtime_classes": gpu_pod,
        "sources": sources,
    }


# -- operator -----------------------------------------------------------------------


def _mode(at: At, values: dict[str, Any]) -> dict[str, Any]:
    workloads = values.get("sandboxWorkloads")
    if not isinstance(workloads, dict) or not isinstance(workloads.get("mode"), str):
        raise at.fail(VALUES, "no sandboxWorkloads.mode")
    types = at.maybe(TYPES)
    field = None
    if types is not None:
        spec = at.find(TYPES, types, r"^type SandboxWorkloadsSpec struct \{\n((?:.*\n)*?)\}$", "SandboxWorkloadsSpec")
        field = re.search(r"((?:\s*//.*\n)+)\s*Mode string `json:\"mode,omitempty\"`", spec.group(1))
        if field is None:
            raise at.fail(TYPES, "SandboxWorkloadsSpec has no commented Mode field")
    if field is not None:
        enum = re.search(r"\+kubebuilder:validation:Enum=(\S+)", field.group(1))
        default = re.search(r"\+kubebuilder:default=(\S+)", field.group(1))
        if enum is None:
            raise at.fail(TYPES, "SandboxWorkloadsSpec.Mode has no +kubebuilder:validation:Enum")
        accepted = enum.group(1).split(";")
        source = f"{TYPES} SandboxWorkloadsSpec.Mode +kubebuilder:validation:Enum, +kubebuilder:default"
        crd_default = default.group(1) if default else None
    else:
        comment = at.find(
            VALUES, at.text(VALUES), r"^  # Sandbox mode: (.*)\n  mode: ", "the sandboxWorkloads.mode comment"
        )
        accepted, source, crd_default = (
            re.findall(r'"(\w+)"', comment.group(1)),
            f"{VALUES} sandboxWorkloads.mode comment",
            None,
        )
    return {
        "default": workloads["mode"],
        "crd_default": crd_default,
        "accepted": accepted,
        "sandbox_workloads_enabled": workloads.get("enabled"),
        "source": f"{VALUES} sandboxWorkloads.mode, sandboxWorkloads.enabled; {source}",
    }


def _operator_env(at: At) -> list[str]:
    """Environment variables TransformKataDevicePlugin itself sets on the plugin container."""
    body = at.func(OBJECT_CONTROLS, at.text(OBJECT_CONTROLS), "TransformKataDevicePlugin")
    user_env = (
        "for _, env := range config.KataSandboxDevicePlugin.Env {\n"
        "setContainerEnv(&(obj.Spec.Template.Spec.Containers[0]), env.Name, env.Value)"
    )
    if user_env not in body:
        raise at.fail(OBJECT_CONTROLS, "TransformKataDevicePlugin does not set kataSandboxDevicePlugin.env as known")
    literal = re.findall(r'setContainerEnv\(&\(obj\.Spec\.Template\.Spec\.Containers\[0\]\), "(\w+)",', body)
    if body.count("setContainerEnv(") != 1 + len(literal) or "Env = " in body:
        raise at.fail(
            OBJECT_CONTROLS, "TransformKataDevicePlugin sets environment variables in a way this script does not know"
        )
    return sorted(literal)


def _daemonset(at: At, values_env: list[Any]) -> dict[str, Any]:
    doc = _yaml(at, KATA_DAEMONSET)
    try:
        pod = doc["spec"]["template"]["spec"]
        container = pod["containers"][0]
        env = [e["name"] for e in container.get("env") or []]
        mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts") or []}
        host_paths = [
            {"name": v["name"], "path": v["hostPath"]["path"], "mounted_at": mounts.get(v["name"])}
            for v in pod.get("volumes") or []
            if "hostPath" in v
        ]
    except (KeyError, TypeError, IndexError):
        raise at.fail(KATA_DAEMONSET, "not a DaemonSet with a container, env and volumes as known") from None
    operator_env = _operator_env(at)
    names = set(env) | set(operator_env) | {e.get("name") for e in values_env if isinstance(e, dict)}
    return {
        "env": env,
        "operator_env": operator_env,
        "sets_p_gpu_alias": "P_GPU_ALIAS" in names,
        "sets_nvswitch_alias": "NVSWITCH_ALIAS" in names,
        "host_paths": host_paths,
        "source": f"{KATA_DAEMONSET} (container 0); {OBJECT_CONTROLS} TransformKataDevicePlugin; "
        f"{VALUES} kataSandboxDevicePlugin.env",
    }


#: A loop that deletes every RuntimeClass listed (statements of Go code), and what ends the branch it is in.
_DELETE_ALL = (
    r"for _, rc := range list\.Items \{\n(?:rc := rc\n)?(?:n\.logger\..*\n)*err := n\.client\.Delete\(ctx, &rc\)\n"
)
_THEN_READY = r"if err != nil \{\nreturn .*\n\}\n\}\nreturn gpuv1\.Ready, nil\n\}$"


def _unconditional(body: str, pattern: str) -> bool:
    """Whether ``pattern`` matches at a line of ``body`` (statements) that no block encloses."""
    for m in re.finditer("^" + pattern, body, re.M):
        before = body[: m.start()]
        if before.count("{") == before.count("}"):
            return True
    return False


def _kata_runtime_class_code(at: At) -> str:
    """Which of the two known shapes the operator's Kata RuntimeClass code is: "managed" or "deleted"."""
    controls = at.text(OBJECT_CONTROLS)
    dispatch = at.func(OBJECT_CONTROLS, controls, "RuntimeClasses")
    if 'if n.stateNames[state] == "state-kata-manager" {\nreturn transformKataRuntimeClasses(n)' not in dispatch:
        raise at.fail(OBJECT_CONTROLS, "RuntimeClasses does not hand state-kata-manager to transformKataRuntimeClasses")
    body = at.func(OBJECT_CONTROLS, controls, "transformKataRuntimeClasses")
    if f'client.MatchingLabels{{"{KATA_LABEL}": "true"}}' not in body or "n.client.Delete(ctx, &rc)" not in body:
        raise at.fail(
            OBJECT_CONTROLS, f"transformKataRuntimeClasses does not delete RuntimeClasses labelled {KATA_LABEL}"
        )
    managed = (
        re.search(
            r"^if !config\.KataManager\.IsEnabled\(\) \{\n(?:n\.logger\..*\n)*" + _DELETE_ALL + _THEN_READY, body, re.M
        )
        and "for _, rc := range config.KataManager.Config.RuntimeClasses {" in body
        and "obj.Name = rc.Name" in body
        and "n.client.Create(ctx, &obj)" in body
    )
    deleted = "Create(" not in body and "KataManager" not in body and _unconditional(body, _DELETE_ALL)
    if bool(managed) == deleted:
        raise at.fail(OBJECT_CONTROLS, "transformKataRuntimeClasses is in a shape this script does not know")
    state = at.func(STATE_MANAGER, at.text(STATE_MANAGER), "isStateEnabled")
    enabled = at.find(STATE_MANAGER, state, r'^case "state-kata-manager":\nreturn (.*)$', "state-kata-manager")
    expected = "n.sandboxEnabled && clusterPolicySpec.KataManager.IsEnabled()" if managed else "false"
    if enabled.group(1) != expected:
        raise at.fail(
            STATE_MANAGER,
            f'isStateEnabled("state-kata-manager") returns {enabled.group(1)}, not {expected} as the '
            f"{'managing' if managed else 'deleting'} transformKataRuntimeClasses of {OBJECT_CONTROLS} goes with",
        )
    return "managed" if managed else "deleted"


def _runtime_classes(at: At, values: dict[str, Any]) -> dict[str, Any]:
    manager = values.get("kataManager")
    if not isinstance(manager, dict) or not isinstance(manager.get("enabled"), bool):
        raise at.fail(VALUES, "no kataManager.enabled")
    config = manager.get("config") or {}
    listed = (config.get("runtimeClasses") or []) if isinstance(config, dict) else None
    if not isinstance(listed, list) or any(not isinstance(rc, dict) or "name" not in rc for rc in listed):
        raise at.fail(VALUES, "kataManager.config.runtimeClasses is not a list of named entries")
    template = _yaml(at, KATA_RUNTIME_CLASS)
    if (template.get("metadata") or {}).get("name") != "FILLED_BY_OPERATOR" or (
        (template.get("metadata") or {}).get("labels") or {}
    ).get(KATA_LABEL) != "true":
        raise at.fail(KATA_RUNTIME_CLASS, f"not a RuntimeClass template named FILLED_BY_OPERATOR labelled {KATA_LABEL}")
    code = _kata_runtime_class_code(at)
    created = [rc["name"] for rc in listed] if code == "managed" and manager["enabled"] else []
    kata_deploy = "the Kata GPU RuntimeClass comes from the Kata installation itself (kata-deploy), not the operator"
    if code == "deleted":
        note = (
            f"transformKataRuntimeClasses deletes every RuntimeClass labelled {KATA_LABEL}=true whatever kataManager "
            'says ("Kata manager is permanently switched off"; isStateEnabled("state-kata-manager") returns false) '
            f"and creates none, so {kata_deploy}"
        )
    elif not created:
        note = (
            f"kataManager.enabled is {str(manager['enabled']).lower()} by default, so transformKataRuntimeClasses deletes "
            f"every RuntimeClass labelled {KATA_LABEL}=true and creates none (with kataManager.enabled it would create "
            f"one per kataManager.config.runtimeClasses entry from {KATA_RUNTIME_CLASS}), so {kata_deploy}"
        )
    else:
        note = (
            "kataManager is enabled by default: transformKataRuntimeClasses creates one RuntimeClass per "
            f"kataManager.config.runtimeClasses entry from {KATA_RUNTIME_CLASS} and deletes other labelled ones"
        )
    return {
        "created": created,
        "deleted_by_operator": True,
        "note": note,
        "sources": [
            f"{VALUES} kataManager.enabled, kataManager.config",
            KATA_RUNTIME_CLASS,
            f"{OBJECT_CONTROLS} RuntimeClasses, transformKataRuntimeClasses",
            f"{STATE_MANAGER} isStateEnabled",
        ],
    }


def _plugin_values(at: At, kata: Any, plugin_tags: list[str]) -> dict[str, Any]:
    if not isinstance(kata, dict):
        raise at.fail(VALUES, "kataSandboxDevicePlugin is not a mapping")
    version, env, args = kata.get("version"), kata.get("env", []), kata.get("args", [])
    if not isinstance(version, str) or not TAG.match(version):
        raise at.fail(VALUES, f"kataSandboxDevicePlugin.version {version!r} is not vX.Y.Z")
    if version not in plugin_tags:
        raise at.fail(
            VALUES, f"kataSandboxDevicePlugin.version {version} is no tag of {PLUGIN_REPOSITORY} (fetch it again)"
        )
    if not isinstance(env, list) or not isinstance(args, list) or not isinstance(kata.get("enabled"), bool):
        raise at.fail(VALUES, "kataSandboxDevicePlugin.enabled, env or args is not a bool / list")
    if not isinstance(kata.get("repository"), str) or not isinstance(kata.get("image"), str):
        raise at.fail(VALUES, "kataSandboxDevicePlugin has no repository and image")
    return {
        "plugin": version,
        "image": f"{kata['repository']}/{kata['image']}",
        "env": env,
        "args": args,
        "enabled": kata["enabled"],
    }


def operator_release(at: At, date: str, plugin_tags: list[str]) -> dict[str, Any] | None:
    """The facts of one GPU Operator release (None: its values have no kataSandboxDevicePlugin)."""
    values = _yaml(at, VALUES)
    if not isinstance(values, dict):
        raise at.fail(VALUES, "not a mapping")
    if "kataSandboxDevicePlugin" not in values:
        return None
    plugin = _plugin_values(at, values["kataSandboxDevicePlugin"], plugin_tags)
    state = at.func(STATE_MANAGER, at.text(STATE_MANAGER), "isStateEnabled")
    when = at.find(STATE_MANAGER, state, r'^case "state-kata-device-plugin":\nreturn (.*)$', "state-kata-device-plugin")
    kata_values = f"{VALUES} kataSandboxDevicePlugin"
    return {
        "date": date,
        "commit": at.commit,
        **plugin,
        "mode": _mode(at, values),
        "deployed_when": when.group(1),
        "daemonset": _daemonset(at, plugin["env"]),
        "runtime_classes": _runtime_classes(at, values),
        "sources": {
            "plugin": f"{kata_values}.version",
            "image": f"{kata_values}.repository, .image",
            "env": f"{kata_values}.env",
            "args": f"{kata_values}.args",
            "enabled": f"{kata_values}.enabled",
            "mode": "see mode.source",
            "deployed_when": f'{STATE_MANAGER} isStateEnabled case "state-kata-device-plugin"',
            "daemonset": "see daemonset.source",
            "runtime_classes": "see runtime_classes.sources",
        },
    }


# -- the document ---------------------------------------------------------------------


def _established(tag: str, pci_ids: dict[str, Any], operators: dict[str, Any]) -> str:
    """What git cannot tell about the pci.ids a go-nvlib release reads, and what the DaemonSets show."""
    paths = pci_ids["system_paths"]
    head = (
        "Which file the container reads cannot be established from git: go-nvlib reads the first of system_paths "
        "that exists in the container, else its embedded copy, and whether the base image (image_base) has a file "
        "at one of those paths is in neither repository"
    )
    deploying = [op for op, release in operators.items() if release["plugin"] == tag]
    if not deploying:
        return f"{head}; no GPU Operator release in the mirror deploys {tag}, so there is no DaemonSet to check."
    covering = []
    for op in deploying:
        for volume in operators[op]["daemonset"]["host_paths"]:
            mount = volume["mounted_at"]
            if mount and any(p == mount or p.startswith(mount.rstrip("/") + "/") for p in paths):
                covering.append(f"{op} mounts host {volume['path']} at {mount}")
    mounts = sorted(
        {v["mounted_at"] for op in deploying for v in operators[op]["daemonset"]["host_paths"] if v["mounted_at"]}
    )
    where = f"{KATA_DAEMONSET} at {', '.join(deploying)}"
    if covering:
        return f"{head}; the GPU Operator's DaemonSet ({where}) does cover one: {'; '.join(covering)}."
    return (
        f"{head}; the GPU Operator's DaemonSet ({where}) mounts no host /usr nor any host path at or above them "
        f"(its plugin container mounts only {', '.join(mounts)})."
    )


def extract(plugin: Source, operator: Source) -> dict[str, Any]:
    """The releases document from the two repositories."""
    plugin_releases = {
        tag: plugin_release(At(PLUGIN_REPOSITORY, tag, commit, plugin), date) for tag, commit, date in plugin.tags()
    }
    if not plugin_releases:
        raise ExtractError(f"{PLUGIN_REPOSITORY}: no release tags")
    operator_releases: dict[str, Any] = {}
    skipped = []
    for tag, commit, date in operator.tags():
        release = operator_release(At(OPERATOR_REPOSITORY, tag, commit, operator), date, list(plugin_releases))
        if release is None:
            skipped.append(tag)
        else:
            operator_releases[tag] = release
    for tag, release in plugin_releases.items():
        if release["algorithm"] == GO_NVLIB:
            release["pci_ids"]["established"] = _established(tag, release["pci_ids"], operator_releases)
    about = (
        f"Facts about NVIDIA's Kata sandbox device plugin ({PLUGIN_REPOSITORY}, every release tag vX.Y.Z) and the "
        f"GPU Operator releases that deploy it ({OPERATOR_REPOSITORY}, every final tag vX.Y.Z whose {VALUES} has a "
        "kataSandboxDevicePlugin section; final tags without it, listed in operator_tags_skipped, and tags that "
        "are not vX.Y.Z (release candidates, betas, the unprefixed 1.x tags) are skipped), extracted from their git "
        "history by `python -m tools.kata_extract` (do not edit by hand). Each fact names its source path at the "
        "release's commit."
    )
    return {
        "about": about,
        "plugin_repository": PLUGIN_REPOSITORY,
        "operator_repository": OPERATOR_REPOSITORY,
        "operator_tags_skipped": skipped,
        "plugin_releases": plugin_releases,
        "operator_releases": operator_releases,
    }


def write_inputs(prefix: Path, plugin: Recording, operator: Recording) -> None:
    sidecar = {
        "about": (
            "Upstream files the Kata facts (data/kata/releases.json) are extracted from, each blob once in the "
            ".tar.xz beside this file, named by its git blob id; per repository and release tag its commit, date, "
            "the blob of each path read (null: absent) and the directory listings read. pci.ids files are not in "
            "the tarball: pci_ids holds the sha256, Version header and size of each by blob id."
        ),
        "repositories": {
            PLUGIN_REPOSITORY: plugin.sidecar(PLUGIN_REPOSITORY, LICENSES[PLUGIN_REPOSITORY]),
            OPERATOR_REPOSITORY: operator.sidecar(OPERATOR_REPOSITORY, LICENSES[OPERATOR_REPOSITORY]),
        },
        "pci_ids": dict(sorted({**plugin.pci_ids_files, **operator.pci_ids_files}.items())),
    }
    upstream.write_inputs(prefix, sidecar, {**plugin.blobs, **operator.blobs})


def shipped_dir() -> Path:
    return upstream.shipped_dir("kata")


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(prog="python -m tools.kata_extract", description=__doc__.split("\n\n")[0])
    parser.add_argument("--plugin-git", help=f"a {PLUGIN_REPOSITORY} git repository (bare is fine)")
    parser.add_argument("--operator-git", help=f"a {OPERATOR_REPOSITORY} git repository (bare is fine)")
    add_extractor_options(parser, "kata")
    args = parser.parse_args(argv)
    from_git = args.plugin_git is not None and args.operator_git is not None
    if from_git == (args.from_inputs is not None) or (args.plugin_git is None) != (args.operator_git is None):
        parser.error("give --plugin-git DIR --operator-git DIR, or --from-inputs PREFIX")
    try:
        recordings = None
        if from_git:
            recordings = Recording(GitSource(args.plugin_git)), Recording(GitSource(args.operator_git))
            document = extract(*recordings)
        else:
            document = extract(*load_inputs(args.from_inputs))
    except ExtractError as error:
        print(f"kata_extract: error: {error}", file=sys.stderr)
        return 2
    out = args.out or shipped_dir()
    checked = publish(out, document, check=args.check)
    if checked is not None:
        return checked
    if recordings is not None and args.inputs is not None:
        write_inputs(args.inputs, *recordings)
    print(
        f"{out / 'releases.json'}: {len(document['plugin_releases'])} plugin, {len(document['operator_releases'])} operator releases"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
