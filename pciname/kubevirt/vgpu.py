"""vGPU types for KubeVirt configuration: what a GPU supports, under a
profile's plugin release (``pciname vgpu-types``, the ``VgpuTypes`` RPC),
and ``--vgpu TYPE[=COUNT]`` turned into the exact ``mdev_type/name``
strings the generators take (:func:`with_vgpus`).

The catalogue and the prefix facts are :mod:`pciname.naming.vgpu`; this
module adds the profile (its mdev naming rule) and the device ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from pciname.base.requests import parse_request
from pciname.errors import PcinameError
from pciname.kubevirt.generate import mdev_rule
from pciname.naming import vgpu
from pciname.naming.profiles import DEFAULT_PROFILE
from pciname.naming.vgpu_prefixes import READ_ON_HOST
from pciname.pciids.ids import NVIDIA_VENDOR_ID

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike


def _nvidia_device(text: str) -> str:
    from pciname.resolution.resolver import parse_device

    parsed = parse_device(text)
    if parsed.vendor != NVIDIA_VENDOR_ID:
        raise PcinameError(f"{parsed} is not an NVIDIA device: only 10de devices run NVIDIA vGPUs")
    return str(parsed.device)


def vgpu_types(
    device: str, profile: ProfileLike = DEFAULT_PROFILE, *, resolver: ResolverLike | None = None
) -> dict[str, Any]:
    """Every vGPU type the catalogue lists for ``device``, with its
    ``mdev_type/name`` (or None: no observed string), how certain that is,
    the resource the profile's plugin makes of it and the
    ``nvidia.com/vgpu.config`` label value. PcinameError (one line, saying
    where the catalogue stops) when the catalogue does not cover the device."""
    from pciname.resolution.resolver import resolver_or_default

    resolver = resolver_or_default(resolver)
    rule = mdev_rule(profile, resolver)
    dev = _nvidia_device(device)
    types = vgpu.device_types(dev, rule)
    cat = vgpu.catalogue()
    return {
        "device": f"{NVIDIA_VENDOR_ID}:{dev}",
        "profile": resolver.view(profile).profile.name,
        "mdev_name_rule": rule,
        "families": list(cat.devices[dev]),
        "catalogue": dict(cat.source),
        "read_on_host": READ_ON_HOST,
        "types": [t.to_dict() for t in types],
    }


def vgpu_mdevs(
    devices: Sequence[str],
    vgpus: Sequence[str],
    profile: ProfileLike = DEFAULT_PROFILE,
    *,
    counts: bool = True,
    resolver: ResolverLike | None = None,
) -> list[tuple[str, int]]:
    """``--vgpu TYPE[=COUNT]`` of the GPUs ``devices`` -> (exact
    ``mdev_type/name``, count) in order. PcinameError when no GPU is given,
    a type belongs to none of them, or its exact string is not known."""
    if not devices:
        raise PcinameError("--vgpu needs the GPUs it is for: name at least one DEVICE (e.g. 10de:2236 --vgpu A10-24Q)")
    ids = [_nvidia_device(d) for d in devices]
    rule = mdev_rule(profile, resolver)
    out, found = [], []
    for item in vgpus:
        wanted, count = parse_request(item) if counts else (item.strip(), 1)
        if not counts and "=" in item:
            raise PcinameError(f"--vgpu {item!r}: this command takes no COUNT")
        found.append(vgpu.find_type(ids, wanted, rule))
        out.append((str(found[-1].mdev_name), count))
    _every_gpu_used(ids, found)
    return out


def _every_gpu_used(ids: Sequence[str], found: Sequence[vgpu.VgpuType]) -> None:
    """PcinameError naming the first GPU of ``ids`` none of the ``found``
    types is for: with ``--vgpu``, every DEVICE given is used, never dropped."""
    cat = vgpu.catalogue()
    for dev in ids:
        if not any(t.family in cat.devices.get(dev, ()) for t in found):
            types = "; ".join(
                dict.fromkeys(
                    f"{t.vgpu_config} is for {', '.join('10de:' + d for d in cat.family_devices[t.family])}"
                    for t in found
                )
            )
            raise PcinameError(
                f"10de:{dev}: none of the --vgpu types is for this GPU ({types}); "
                "with --vgpu, name only the GPUs the types are for"
            )


def vgpu_gpus(devices: Sequence[str], *, counts: bool) -> list[str]:
    """The GPUs ``--vgpu`` types are for: the DEVICEs, each without a COUNT
    (with ``counts`` the count goes to the type: PcinameError for one)."""
    gpus = []
    for item in devices:
        device, _count = parse_request(item) if counts else (item, 1)
        if counts and "=" in item:
            raise PcinameError(f"{item}: with --vgpu, DEVICE names a GPU model; give the count to --vgpu TYPE=COUNT")
        gpus.append(device)
    return gpus


def with_vgpus(
    devices: Sequence[str],
    mdevs: Sequence[str],
    vgpus: Sequence[str],
    profile: ProfileLike = DEFAULT_PROFILE,
    *,
    counts: bool,
    resolver: ResolverLike | None = None,
) -> tuple[list[str], list[str]]:
    """(devices, mdev requests) after ``--vgpu TYPE[=COUNT]``: the types'
    exact strings join ``mdevs`` (as ``NAME`` or ``NAME=COUNT``), and the
    DEVICEs, only the GPUs they are for, are requested no more. Without
    ``vgpus``: the two as they are."""
    if not vgpus:
        return list(devices), list(mdevs)
    found = vgpu_mdevs(vgpu_gpus(devices, counts=counts), vgpus, profile, counts=counts, resolver=resolver)
    return [], [*mdevs, *(f"{name}={count}" if counts else name for name, count in found)]


def kubevirt_selector_key(selector: str) -> str:
    """What KubeVirt compares a ``mdevNameSelector`` as (and a type's
    ``mdev_type/name``): every space to ``_``, then white space trimmed
    (virt-handler ``removeSelectorSpaces``, ``getMdevTypeName``)."""
    return selector.replace(" ", "_").strip()


def selector_problem(selector: str) -> dict[str, Any] | None:
    """Why ``selector`` is certainly not a vGPU type string the driver
    shows, as the facts of an ``unknown-vgpu-type`` finding (``expected``:
    the real strings it was meant as; the message is the lint registry's);
    None when it is one, or when the catalogue and the prefix evidence cannot
    tell (a type the catalogue does not list, a family without a certain
    observed prefix)."""
    cat = vgpu.catalogue()
    token = vgpu.type_token(selector)
    families = cat.type_families.get(token)
    if not families:
        return None
    real: dict[str, vgpu.VgpuType] = {}
    for family in families:
        for device in cat.family_devices[family]:
            for t in vgpu.device_types(device, cat=cat):
                if t.type == token and t.mdev_name is not None and t.certainty in vgpu.CERTAIN:
                    real.setdefault(t.mdev_name, t)
    if not real:
        return None
    key = kubevirt_selector_key(selector)
    if any(kubevirt_selector_key(name) == key for name in real):
        return None
    expected = list(real)
    first = real[expected[0]]
    evidence = first.evidence
    assert evidence is not None
    return {
        "selector": selector,
        "token": token,
        "family": first.family,
        "devices": tuple("10de:" + d for d in cat.family_devices[first.family]),
        "strings": expected,
        "prefix": evidence.prefix,
        "kind": evidence.kind,
        "observed": evidence.observed,
    }


def selector_note(selector: str) -> str | None:
    """What deserves a word about ``selector`` although it is no finding: a
    catalogue type whose family's prefix is only inferred (and the selector
    differs from it) or not known at all. None otherwise (including when
    :func:`selector_problem` reports it)."""
    from pciname.naming.vgpu_prefixes import READ_MDEV

    cat = vgpu.catalogue()
    token = vgpu.type_token(selector)
    families = cat.type_families.get(token)
    family = vgpu.family_of(token)
    if not families and family in cat.families:
        import difflib

        close = difflib.get_close_matches(token, list(cat.type_families), n=3, cutoff=0.6)
        near = f"; the closest are {', '.join(close)}" if close else ""
        return (
            f"{selector!r}: {token} is not among the {len(cat.families[family])} {family} types of {cat.where}"
            f"{near} (a newer driver may add types: check `{READ_MDEV}`)"
        )
    if not families or selector_problem(selector) is not None:
        return None
    strings: dict[str, vgpu.VgpuType] = {}
    for family in families:
        for device in cat.family_devices[family]:
            for t in vgpu.device_types(device, cat=cat):
                if t.type == token:
                    if t.mdev_name is not None and t.certainty in vgpu.CERTAIN:
                        return None  # checked, and it is a real string
                    if t.mdev_name is not None:
                        strings.setdefault(t.mdev_name, t)
    key = kubevirt_selector_key(selector)
    if any(kubevirt_selector_key(name) == key for name in strings):
        return None
    shown = ", ".join(families)
    if strings:
        first = next(iter(strings.values()))
        assert first.evidence is not None
        return (
            f"{selector!r}: the driver's string for {token} ({shown}) is not known for certain; inferred "
            f"{' or '.join(repr(n) for n in strings)} ({first.evidence.kind} evidence); check `{READ_MDEV}`"
        )
    return f"{selector!r}: no {shown} type string has been observed, so it is not checked; check `{READ_MDEV}`"
