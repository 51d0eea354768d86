"""The limits of requests' fields, declared on the fields themselves
(``field(metadata=...)``) so that every surface reads the same ones: how
long one text may be (``chars``), how many items a field may hold
(``items``; ``batch``: as many as the surface's batch size, a server's
``--max-batch``), and the most GPUs one ``DEVICE=COUNT`` may ask for
(``count``, :data:`~pciname.base.requests.MAX_GPUS`).

:func:`limits` reads a request type's. The count is enforced on every
surface as a request's ``DEVICE=COUNT`` is read
(:func:`~pciname.base.requests.parse_request`); the text bounds and the
batch are what the gRPC service holds a message to before anything is
built from it (the command line's arguments are bounded by the system).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from pciname.base.requests import MAX_GPUS

#: A device or vendor id: "0x10de:0x2236", with room for white space.
DEVICE_CHARS = 64
#: A profile name: "kubevirt-gpu-device-plugin@v1.6.0".
PROFILE_CHARS = 128
#: A resource name, mdev type name or [NAMESPACE/]NAME (63 + 1 + 253).
NAME_CHARS = 320


@dataclass(frozen=True)
class Limit:
    """One field's bounds (None: none of that kind)."""

    chars: int | None = None
    items: int | None = None
    batch: bool = False
    count: int | None = None


def limit(**bounds: Any) -> dict[str, Limit]:
    """A field's metadata declaring its :class:`Limit`."""
    return {"limit": Limit(**bounds)}


def limits(request_type: type[Any]) -> dict[str, Limit]:
    """The declared limits of a request type's fields, by field name."""
    return {f.name: f.metadata["limit"] for f in dataclasses.fields(request_type) if "limit" in f.metadata}


#: The usual declarations.
DEVICES = limit(chars=NAME_CHARS, batch=True, count=MAX_GPUS)
PROFILE = limit(chars=PROFILE_CHARS)
NAME = limit(chars=NAME_CHARS)


__all__ = ["DEVICES", "DEVICE_CHARS", "NAME", "NAME_CHARS", "PROFILE", "PROFILE_CHARS", "Limit", "limit", "limits"]
