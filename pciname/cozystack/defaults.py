"""What Cozystack does with a ``gpu.permittedHostDevices`` block, per
release: its iaas bundle's wiring and default tables (facts of
``data/cozystack/releases.json``, see :mod:`pciname.cozystack.releases`, each
with its source path) and the checks of ``pciname permitted-host-devices
--format cozystack``. Releases before v1.5.0 do not wire GPUs at all
(:class:`~pciname.errors.CozystackNotWired`).

Pure: a :class:`~pciname.kubevirt.generate.Snippet` (or defaults YAML text) in,
plain data out.

How Cozystack's iaas bundle (``packages/core/platform/templates/bundles/iaas.yaml``)
builds the KubeVirt CR's ``permittedHostDevices`` when ``cozystack.gpu-operator``
is enabled, by ``bundles.iaas.gpuOperatorVariant`` (default ``default``), in
v1.5.0 to v1.6.2 (the extracted facts say which lists each variant reads
and which table it puts in front, so a new variant is a script run):

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

from pciname.errors import CozystackNotWired, PcinameError
from pciname.kubevirt.generate import Skipped, Snippet
from pciname.naming.checks import NameWarning

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

#: The lists of gpu.permittedHostDevices, and the selector field of their entries.
LISTS = {"pciHostDevices": "pciVendorSelector", "mediatedDevices": "mdevNameSelector"}
_KIND = {"pciHostDevices": "pci", "mediatedDevices": "mdev"}


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


@dataclass(frozen=True, slots=True)
class VariantWiring:
    """What one ``gpuOperatorVariant`` does: the lists of ours it reads, and
    the tables it puts in front (each with whether it needs
    ``gpu.vgpuDeviceManager.enabled``)."""

    name: str
    reads: tuple[str, ...]
    tables: tuple[tuple[DefaultsTable, bool], ...]


@dataclass(frozen=True, slots=True)
class Wiring:
    """A release's iaas-bundle GPU wiring."""

    release: str
    default_variant: str
    variants: dict[str, VariantWiring]
    source: str

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(self.variants)

    def readers(self, key: str) -> tuple[str, ...]:
        """The variants that read list ``key`` of ours."""
        return tuple(v.name for v in self.variants.values() if key in v.reads)


def _table(table_id: str, release: str) -> DefaultsTable:
    from pciname.cozystack.releases import tables

    facts = tables()[table_id]
    kind = _KIND[facts["list"]]
    entries = tuple(
        DefaultEntry(kind, e["selector"], e["resourceName"], bool(e["externalResourceProvider"]))
        for e in facts["entries"]
    )
    source = f"{REPOSITORY}, {facts['path']} ({facts['field']}), blob {facts['blob'][:10]}, as of Cozystack {release}"
    # Named by file and blob, as the releases that share it ship it (what messages show).
    return DefaultsTable(table_id, source, entries)


def wiring(release: object = None) -> Wiring:
    """The GPU wiring of Cozystack ``release`` (a version, a
    :class:`~pciname.cozystack.releases.Release`; None: the newest). A release
    whose bundle wires nothing is :class:`~pciname.errors.CozystackNotWired`."""
    from pciname.cozystack.releases import Release, get_release, releases

    chosen = release if isinstance(release, Release) else get_release(release if isinstance(release, str) else None)
    facts = chosen.gpu_wiring
    if facts is None:
        first = next((r.version for r in releases().values() if r.gpu_wiring is not None), None)
        raise CozystackNotWired(
            f"Cozystack {chosen.version} does not wire gpu.permittedHostDevices into the KubeVirt CR (its iaas bundle "
            f"has no GPU wiring; from {first or 'no known release'} it does): use --format kubevirt or --format patch "
            "and set the KubeVirt CR's spec.configuration.permittedHostDevices yourself"
        )
    variants = {
        name: VariantWiring(
            name,
            tuple(v["reads"]),
            tuple((_table(d["table"], chosen.version), bool(d["needs_vgpu_device_manager"])) for d in v["defaults"]),
        )
        for name, v in facts["variants"].items()
    }
    return Wiring(chosen.version, facts["default_variant"], variants, facts["source"])


_NEWEST = wiring()

#: bundles.iaas.gpuOperatorVariant values the newest release's iaas bundle
#: accepts; DEFAULT_VARIANT is what it takes when the value is unset.
VARIANTS = _NEWEST.names
DEFAULT_VARIANT = _NEWEST.default_variant
#: Variants of the newest release whose bundle reads gpu.permittedHostDevices.mediatedDevices.
MDEV_VARIANTS = _NEWEST.readers("mediatedDevices")
#: Variants of the newest release whose bundle adds a pciHostDevices table.
PCI_DEFAULTS_VARIANTS = tuple(
    v.name for v in _NEWEST.variants.values() if any(t.entries and t.entries[0].kind == "pci" for t, _ in v.tables)
)


def _newest_table(kind: str) -> DefaultsTable:
    for variant in _NEWEST.variants.values():
        for table, _ in variant.tables:
            if table.entries and table.entries[0].kind == kind:
                return table
    raise LookupError(kind)  # pragma: no cover - the facts test pins both


#: The newest release's passthrough table (variant "default").
PASSTHROUGH_DEFAULTS = _newest_table("pci")
#: The newest release's vGPU table (variant "vgpu" with gpu.vgpuDeviceManager.enabled).
VGPU_DEFAULTS = _newest_table("mdev")


def check_variant(variant: str, release: object = None) -> str:
    """``variant`` normalised; a PcinameError for one the release's bundle refuses."""
    wired = wiring(release)
    value = variant.strip().lower() if isinstance(variant, str) else ""
    if value not in wired.names:
        raise PcinameError(
            f"unknown Cozystack GPU variant {variant!r}: use one of {', '.join(wired.names)} "
            f"(what Cozystack {wired.release} accepts)"
        )
    return value


def built_in_defaults(variant: str, vgpu_device_manager: bool = False, release: object = None) -> DefaultsTable | None:
    """The table the release's bundle puts in front of ours for this variant (None: none)."""
    found = [t for t, needs in wiring(release).variants[variant].tables if vgpu_device_manager or not needs]
    if not found:
        return None
    if len(found) == 1:
        return found[0]
    entries = tuple(e for t in found for e in t.entries)
    return DefaultsTable(found[0].version, "; ".join(t.source for t in found), entries)


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
    raise PcinameError(
        f"{name}: no defaults table in it (pciHostDevices / mediatedDevices, or a permittedHostDevices mapping)"
    )


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
    for key, kind, field in (
        ("pciHostDevices", "pci", "pciVendorSelector"),
        ("mediatedDevices", "mdev", "mdevNameSelector"),
    ):
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
    release: object = None,
) -> CozystackSnippet:
    """Check ``snippet`` (from :func:`~pciname.kubevirt.generate.permitted_host_devices`)
    against what Cozystack ``release`` (a version; None: the newest) does
    with it. ``defaults``: a table to compare with instead of the built-in
    one for the variant (every entry counts). With ``replace_defaults``
    nothing is compared."""
    wired = wiring(release)
    variant = check_variant(variant, release)
    left_out = list(snippet.left_out)
    notes = list(snippet.notes)
    data: dict[str, Any] = {}
    lists: dict[str, list[dict[str, Any]]] = {key: list(snippet.data.get(key, ())) for key in LISTS}
    for key, field in LISTS.items():
        if lists[key] and key not in wired.variants[variant].reads:
            readers = wired.readers(key)
            only = (
                f"only {', '.join(readers)} {'does' if len(readers) == 1 else 'do'}" if readers else "no variant does"
            )
            for e in lists[key]:
                message = f"Cozystack's GPU variant {variant} does not read gpu.permittedHostDevices.{key} ({only})"
                left_out.append(
                    Skipped(e[field], _KIND[key], e["resourceName"], (NameWarning(IGNORED_BY_VARIANT, message),))
                )
            lists[key] = []
    pci, mdev = lists["pciHostDevices"], lists["mediatedDevices"]

    table = (
        None
        if replace_defaults
        else (defaults if defaults is not None else built_in_defaults(variant, vgpu_device_manager, release))
    )
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
                Skipped(
                    ours.selector,
                    kind,
                    name,
                    (
                        NameWarning(
                            ALREADY_A_DEFAULT,
                            f"Cozystack's defaults ({table.version}) hold this very entry: left out, "
                            "the CR would list it twice",
                        ),
                    ),
                )
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
            reasons.append(
                NameWarning(
                    DUPLICATE_OF_DEFAULT,
                    f"Cozystack's defaults ({table.version}) permit {name} for {selectors} too: "
                    "a VM asking for it may be given either device",
                )
            )
        if reasons:
            clashes.append(Skipped(ours.selector, kind, name, tuple(reasons)))
        yield e


def table_dict(table: DefaultsTable) -> dict[str, Any]:
    """A table as Cozystack's files write it: ``{"pciHostDevices": [...],
    "mediatedDevices": [...]}`` (a list only when it has entries)."""
    out: dict[str, Any] = {}
    for kind, key, field in (
        ("pci", "pciHostDevices", "pciVendorSelector"),
        ("mdev", "mediatedDevices", "mdevNameSelector"),
    ):
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
