"""What Cozystack does with a ``gpu.permittedHostDevices`` block: its default
tables (facts, each with the Cozystack source it comes from) and the checks
of ``pciname permitted-host-devices --format cozystack``.

Pure: a :class:`~pciname.kube.generate.Snippet` (or defaults YAML text) in,
plain data out.

How Cozystack's iaas bundle (``packages/core/platform/templates/bundles/iaas.yaml``)
builds the KubeVirt CR's ``permittedHostDevices`` when ``cozystack.gpu-operator``
is enabled, by ``bundles.iaas.gpuOperatorVariant`` (default ``default``):

* ``default`` (passthrough): Cozystack's passthrough table
  (``files/gpu-passthrough-defaults.yaml``, ``pciHostDevices`` only) unless
  ``gpu.replaceDefaults``, then ``gpu.permittedHostDevices.pciHostDevices``
  appended. ``gpu.permittedHostDevices.mediatedDevices`` is not read at all.
* ``vgpu``: no passthrough table. Cozystack's vGPU table
  (``files/gpu-vgpu-defaults.yaml``, ``mediatedDevices`` only) only when
  ``gpu.vgpuDeviceManager.enabled`` and not ``gpu.replaceDefaults``; then
  both of ``gpu.permittedHostDevices``' lists appended.

Appended, not merged: an entry of ours for a selector the defaults already
permit under another name leaves both in the CR. All our entries carry
``externalResourceProvider: true``, so KubeVirt only admits VMs asking for
the names; the GPU Operator's plugin advertises one name per device, so a VM
asking for the other one is admitted and never scheduled.

Codes (stable):

``ignored-by-variant``
    a ``mediatedDevices`` entry the chosen variant does not read: left out;
``shadowed-by-default``
    Cozystack's defaults permit the same selector under another name;
``duplicate-of-default``
    Cozystack's defaults permit the same name for another selector;
``already-a-default``
    the defaults hold the very same entry: left out of ours (a note; the CR
    would otherwise list it twice, which ``pciname lint`` reports).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, replace
from typing import Any

import yaml

from ..errors import PcinameError
from ..naming.checks import NameWarning
from .generate import Skipped, Snippet

#: bundles.iaas.gpuOperatorVariant values the iaas bundle accepts; the first
#: is what it takes when the value is unset.
VARIANTS = ("default", "vgpu")
DEFAULT_VARIANT = VARIANTS[0]
#: Variants whose bundle reads gpu.permittedHostDevices.mediatedDevices.
MDEV_VARIANTS = ("vgpu",)
#: Variants whose bundle adds the passthrough (pciHostDevices) table.
PCI_DEFAULTS_VARIANTS = ("default",)

IGNORED_BY_VARIANT = "ignored-by-variant"
SHADOWED_BY_DEFAULT = "shadowed-by-default"
DUPLICATE_OF_DEFAULT = "duplicate-of-default"
ALREADY_A_DEFAULT = "already-a-default"
CODES = (IGNORED_BY_VARIANT, SHADOWED_BY_DEFAULT, DUPLICATE_OF_DEFAULT, ALREADY_A_DEFAULT)

#: What the CLI prints after clashes (and the gRPC answer's clashes mean).
SUGGESTION = (
    "--replace-defaults sets gpu.replaceDefaults: true: Cozystack then drops its default table "
    "and permits only the entries given here"
)

#: Cozystack source the built-in tables come from.
REPOSITORY = "github.com/cozystack/cozystack"
BUNDLE_PATH = "packages/core/platform/templates/bundles/iaas.yaml"
BUNDLE_COMMIT = "0034da0181e27f096bcc11b7a2a31447ab20bdf8"


@dataclass(frozen=True, slots=True)
class DefaultEntry:
    """One entry of a defaults table: a PCI selector (``10DE:2236``) or an
    mdev type name, and the resource name it permits."""

    kind: str  # "pci" or "mdev"
    selector: str
    resource_name: str
    external: bool = True

    def key(self) -> tuple[str, str]:
        """What KubeVirt compares: PCI selectors in any case, mdev names exactly."""
        return (self.kind, self.selector.strip().upper() if self.kind == "pci" else self.selector)


@dataclass(frozen=True, slots=True)
class DefaultsTable:
    """Entries Cozystack adds in front of ours, and where they come from
    (``version``: what messages name the table by)."""

    version: str
    source: str
    entries: tuple[DefaultEntry, ...]


def _pci(selector: str, name: str) -> DefaultEntry:
    return DefaultEntry("pci", selector, "nvidia.com/" + name)


def _mdev(selector: str, name: str) -> DefaultEntry:
    return DefaultEntry("mdev", selector, "nvidia.com/" + name)


#: files/gpu-passthrough-defaults.yaml: added in variant "default".
PASSTHROUGH_DEFAULTS = DefaultsTable(
    "cozystack@9190736",
    f"{REPOSITORY}, packages/core/platform/files/gpu-passthrough-defaults.yaml, "
    "commit 919073601da19a7c3f4a4ab541b5f9847f4ad5f1",
    (
        _pci("10DE:2335", "GH100_H200_SXM_141GB"),
        _pci("10DE:2330", "GH100_H100_SXM5_80GB"),
        _pci("10DE:2331", "GH100_H100_PCIE"),
        _pci("10DE:2321", "GH100_H100L_94GB"),
        _pci("10DE:26B9", "AD102GL_L40S"),
        _pci("10DE:26B5", "AD102GL_L40"),
        _pci("10DE:27B8", "AD104GL_L4"),
        _pci("10DE:20B2", "GA100_A100_SXM4_80GB"),
        _pci("10DE:20B0", "GA100_A100_SXM4_40GB"),
        _pci("10DE:20B5", "GA100_A100_PCIE_80GB"),
        _pci("10DE:20F1", "GA100_A100_PCIE_40GB"),
        _pci("10DE:20B7", "GA100GL_A30_PCIE"),
        _pci("10DE:2235", "GA102GL_A40"),
        _pci("10DE:2236", "GA102GL_A10"),
        _pci("10DE:1EB8", "TU104GL_TESLA_T4"),
        _pci("10DE:1DB1", "GV100GL_TESLA_V100_SXM2_16GB"),
        _pci("10DE:1DB5", "GV100GL_TESLA_V100_SXM2_32GB"),
        _pci("10DE:1DB4", "GV100GL_TESLA_V100_PCIE_16GB"),
        _pci("10DE:1DF6", "GV100GL_TESLA_V100S_PCIE_32GB"),
    ),
)

#: files/gpu-vgpu-defaults.yaml: added in variant "vgpu" with gpu.vgpuDeviceManager.enabled.
VGPU_DEFAULTS = DefaultsTable(
    "cozystack@117d317",
    f"{REPOSITORY}, packages/core/platform/files/gpu-vgpu-defaults.yaml, "
    "commit 117d317fd8eb3cbd9e40a7d80108120a90fc307f",
    (
        _mdev("NVIDIA A100-40C", "A100-40C"),
        _mdev("NVIDIA A100-80C", "A100-80C"),
        _mdev("NVIDIA A40-48Q", "A40-48Q"),
        _mdev("NVIDIA A40-24Q", "A40-24Q"),
        _mdev("NVIDIA A30-24C", "A30-24C"),
        _mdev("NVIDIA A10-24Q", "A10-24Q"),
        _mdev("NVIDIA V100D-32C", "V100D-32C"),
        _mdev("NVIDIA T4-16Q", "T4-16Q"),
    ),
)


def check_variant(variant: str) -> str:
    """``variant`` normalised; a PcinameError for one the bundle refuses."""
    value = variant.strip().lower() if isinstance(variant, str) else ""
    if value not in VARIANTS:
        raise PcinameError(f"unknown Cozystack GPU variant {variant!r}: use one of {', '.join(VARIANTS)}")
    return value


def built_in_defaults(variant: str, vgpu_device_manager: bool = False) -> DefaultsTable | None:
    """The table Cozystack puts in front of ours for this variant (None: none)."""
    if variant in PCI_DEFAULTS_VARIANTS:
        return PASSTHROUGH_DEFAULTS
    if vgpu_device_manager:
        return VGPU_DEFAULTS
    return None


# -- a defaults table from a file ------------------------------------------------


def parse_defaults(text: str | bytes, name: str = "<defaults>") -> DefaultsTable:
    """The defaults table in YAML (or JSON) ``text``: a bare table (top-level
    ``pciHostDevices`` / ``mediatedDevices``, as Cozystack's
    ``gpu-passthrough-defaults.yaml``), or the first ``permittedHostDevices``
    mapping at any depth (``gpu-vgpu-defaults.yaml``, Cozystack values'
    ``gpu.permittedHostDevices``, a KubeVirt CR). Every entry in it counts.
    A PcinameError (one line, naming ``name``) for anything else."""
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8-sig")
        except UnicodeDecodeError:
            raise PcinameError(f"{name}: not UTF-8 text") from None
    try:
        documents = list(yaml.safe_load_all(text))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" (line {mark.line + 1})" if mark is not None else ""
        problem = getattr(error, "problem", None) or "cannot parse"
        raise PcinameError(f"{name}: not YAML{where}: {problem}") from None
    except (ValueError, TypeError, ArithmeticError, LookupError) as error:
        # Values PyYAML's constructors refuse with Python's own errors
        # (!!timestamp 2020-13-45, 0x_, ints past Python's digit limit).
        raise PcinameError(f"{name}: not valid YAML: {' '.join(str(error).split())[:200]}") from None
    except RecursionError:
        raise PcinameError(f"{name}: nested too deeply to read as YAML") from None
    for document in documents:
        block = _find_block(document)
        if block is not None:
            return DefaultsTable(name, name, tuple(_table_entries(block, name)))
    raise PcinameError(f"{name}: no defaults table in it (pciHostDevices / mediatedDevices, or a permittedHostDevices mapping)")


def _find_block(document: Any) -> dict[str, Any] | None:
    if isinstance(document, dict) and ("pciHostDevices" in document or "mediatedDevices" in document):
        return document
    seen: set[int] = set()
    todo = [document]
    while todo:
        node = todo.pop(0)
        if id(node) in seen:  # YAML aliases: visit each node once
            continue
        seen.add(id(node))
        if isinstance(node, dict):
            block = node.get("permittedHostDevices")
            if isinstance(block, dict):
                return block
            todo.extend(node.values())
        elif isinstance(node, list):
            todo.extend(node)
    return None


def _table_entries(block: dict[str, Any], name: str) -> Iterator[DefaultEntry]:
    for key, kind, field in (("pciHostDevices", "pci", "pciVendorSelector"), ("mediatedDevices", "mdev", "mdevNameSelector")):
        items = block.get(key)
        if items is None:
            continue
        if not isinstance(items, list):
            raise PcinameError(f"{name}: {key} is not a list")
        for i, item in enumerate(items):
            where = f"{name}: {key}[{i}]"
            if not isinstance(item, dict):
                raise PcinameError(f"{where} is not a mapping")
            selector, resource = item.get(field), item.get("resourceName")
            if not isinstance(selector, str) or not selector.strip():
                raise PcinameError(f"{where} has no {field}")
            if not isinstance(resource, str) or not resource.strip():
                raise PcinameError(f"{where} has no resourceName")
            yield DefaultEntry(kind, selector, resource, item.get("externalResourceProvider") is True)


# -- the checks -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class CozystackSnippet:
    """A snippet as Cozystack will take it: ``snippet`` without what the
    variant ignores (in ``left_out``) or the defaults already hold (in
    ``notes``), and the entries that clash with the defaults (kept)."""

    snippet: Snippet
    clashes: tuple[Skipped, ...]
    variant: str
    defaults: DefaultsTable | None


def for_cozystack(
    snippet: Snippet,
    *,
    variant: str = DEFAULT_VARIANT,
    replace_defaults: bool = False,
    defaults: DefaultsTable | None = None,
    vgpu_device_manager: bool = False,
) -> CozystackSnippet:
    """Check ``snippet`` (from :func:`~pciname.kube.generate.permitted_host_devices`)
    against what Cozystack does with it. ``defaults``: a table to compare
    with instead of the built-in one for the variant (every entry counts).
    With ``replace_defaults`` nothing is compared."""
    variant = check_variant(variant)
    left_out = list(snippet.left_out)
    notes = list(snippet.notes)
    data: dict[str, Any] = {}
    pci = list(snippet.data.get("pciHostDevices", ()))
    mdev = list(snippet.data.get("mediatedDevices", ()))
    if mdev and variant not in MDEV_VARIANTS:
        readers = ", ".join(MDEV_VARIANTS)
        for e in mdev:
            message = (
                f"Cozystack's GPU variant {variant} does not read gpu.permittedHostDevices.mediatedDevices "
                f"(only {readers} does)"
            )
            left_out.append(Skipped(e["mdevNameSelector"], "mdev", e["resourceName"], (NameWarning(IGNORED_BY_VARIANT, message),)))
        mdev = []

    table = None if replace_defaults else (defaults if defaults is not None else built_in_defaults(variant, vgpu_device_manager))
    clashes: list[Skipped] = []
    if table is not None:
        by_key: dict[tuple[str, str], DefaultEntry] = {}
        by_name: dict[str, list[DefaultEntry]] = {}
        for d in table.entries:
            by_key.setdefault(d.key(), d)
            by_name.setdefault(d.resource_name, []).append(d)
        pci = list(_compare(pci, "pci", "pciVendorSelector", table, by_key, by_name, notes, clashes))
        mdev = list(_compare(mdev, "mdev", "mdevNameSelector", table, by_key, by_name, notes, clashes))
    if pci:
        data["pciHostDevices"] = pci
    if mdev:
        data["mediatedDevices"] = mdev
    checked = replace(snippet, data=data, left_out=tuple(left_out), notes=tuple(notes))
    return CozystackSnippet(checked, tuple(clashes), variant, table)


def _compare(
    entries: Iterable[dict[str, Any]],
    kind: str,
    field: str,
    table: DefaultsTable,
    by_key: dict[tuple[str, str], DefaultEntry],
    by_name: dict[str, list[DefaultEntry]],
    notes: list[Skipped],
    clashes: list[Skipped],
) -> Iterator[dict[str, Any]]:
    """Our entries, less those the table already holds; clashes and notes appended."""
    for e in entries:
        ours = DefaultEntry(kind, e[field], e["resourceName"])
        name = ours.resource_name
        default = by_key.get(ours.key())
        if default is not None and default.resource_name == name and default.external:
            notes.append(
                Skipped(ours.selector, kind, name, (NameWarning(
                    ALREADY_A_DEFAULT,
                    f"Cozystack's defaults ({table.version}) hold this very entry: left out, "
                    "the CR would list it twice",
                ),))
            )
            continue
        reasons: list[NameWarning] = []
        if default is not None:
            if default.external:  # then the names differ
                message = (
                    f"Cozystack's defaults ({table.version}) permit it as {default.resource_name}: the CR gets both, "
                    f"the plugin advertises only {name}, and a VM asking for {default.resource_name} is admitted "
                    "but never scheduled"
                )
            else:
                message = (
                    f"Cozystack's defaults ({table.version}) have KubeVirt's own device plugin advertise it as "
                    f"{default.resource_name}: two plugins hand out the same devices"
                )
            reasons.append(NameWarning(SHADOWED_BY_DEFAULT, message))
        others = [d for d in by_name.get(name, ()) if d.key() != ours.key()]
        if others:
            selectors = ", ".join(d.selector for d in others)
            reasons.append(NameWarning(
                DUPLICATE_OF_DEFAULT,
                f"Cozystack's defaults ({table.version}) permit {name} for {selectors} too: "
                "a VM asking for it may be given either device",
            ))
        if reasons:
            clashes.append(Skipped(ours.selector, kind, name, tuple(reasons)))
        yield e


def table_dict(table: DefaultsTable) -> dict[str, Any]:
    """A table as Cozystack's files write it: ``{"pciHostDevices": [...],
    "mediatedDevices": [...]}`` (a list only when it has entries)."""
    out: dict[str, Any] = {}
    for kind, key, field in (("pci", "pciHostDevices", "pciVendorSelector"), ("mdev", "mediatedDevices", "mdevNameSelector")):
        rows = [
            {field: d.selector, "resourceName": d.resource_name, "externalResourceProvider": True}
            if d.external
            else {field: d.selector, "resourceName": d.resource_name}
            for d in table.entries
            if d.kind == kind
        ]
        if rows:
            out[key] = rows
    return out
