"""vGPU types for KubeVirt configuration: what a GPU supports, under a
profile's plugin release (``pciname vgpu-types``, the ``VgpuTypes`` RPC),
and ``--vgpu TYPE[=COUNT]`` turned into the exact ``mdev_type/name``
strings the generators take.

The catalogue and the prefix facts are :mod:`pciname.naming.vgpu`; this
module adds the profile (its mdev naming rule) and the device ids.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from ..errors import PcinameError
from ..naming import vgpu
from ..naming.profiles import DEFAULT_PROFILE
from ..naming.vgpu_prefixes import READ_ON_HOST
from ..pciids.ids import NVIDIA_VENDOR_ID
from .generate import mdev_rule, parse_request

if TYPE_CHECKING:
    from ..resolver import ProfileLike, ResolverLike


def _nvidia_device(text: str) -> str:
    from ..resolver import parse_device

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
    from ..resolver import resolver_or_default

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
    out = []
    for item in vgpus:
        wanted, count = parse_request(item) if counts else (item.strip(), 1)
        if not counts and "=" in item:
            raise PcinameError(f"--vgpu {item!r}: this command takes no COUNT")
        out.append((str(vgpu.find_type(ids, wanted, rule).mdev_name), count))
    return out
