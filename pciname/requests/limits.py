"""The limits of requests' fields, declared on the fields themselves
(``field(metadata=...)``) so that every surface reads the same ones: how
long one text may be (``chars``), how many items a field may hold
(``items``; ``batch``: as many as the surface's batch size, a server's
``--max-batch``), and the most GPUs one ``DEVICE=COUNT`` may ask for
(``count``, :data:`~pciname.base.requests.MAX_GPUS`), and how deep a
request's YAML may nest (:data:`MAX_YAML_DEPTH`, lint's text on every surface).

:func:`limits` reads a request type's. The count is enforced on every
surface as a request's ``DEVICE=COUNT`` is read
(:func:`~pciname.base.requests.parse_request`); the text bounds by every
request's ``validated()`` (:func:`checked`: a
:class:`~pciname.requests.spelling.RequestError`, the CLI's line naming
the argument, gRPC's the message field as ``check_length`` always has); the
gRPC service's rules read the same declarations
(:func:`pciname.server.rpc.shared.declared`) and hold a message to them
before anything is built from it, in the order they always have. The batch
is a surface's size (the CLI's lookup: ``MAX_LOOKUP_DEVICES``; a server's
``--max-batch``).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, TypeVar

from pciname.base.echo import shown
from pciname.base.requests import MAX_GPUS, MAX_YAML_DEPTH
from pciname.requests.spelling import RequestError, Spelling, Words

T = TypeVar("T")

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
    """The declared limits of a request type's fields, by field name (read
    once per type: every request of the service checks them; not to be changed)."""
    declared = _DECLARED.get(request_type)
    if declared is None:
        declared = {f.name: f.metadata["limit"] for f in dataclasses.fields(request_type) if "limit" in f.metadata}
        _DECLARED[request_type] = declared
    return declared


_DECLARED: dict[type[Any], dict[str, Limit]] = {}


#: How the CLI names one value of a field it takes otherwise than as ``--`` + the field.
CLI_ARGUMENTS = {
    "device": "DEVICE",
    "devices": "DEVICE",
    "types": "TYPE",
    "resource": "RESOURCE",
    "group": "GROUP",
    "mdev_types": "--mdev",
    "vgpus": "--vgpu",
    "actions": "--action",
    "old": "--from",
    "new": "--to",
    "kubevirt_name": "--kubevirt",
    "root": "--sysfs-root",
    "image": "IMAGE",
}


def too_long(field: str, value: str, bound: int, index: int | None = None) -> RequestError:
    """A text over its field's bound: gRPC's line names the message field
    (``devices[0]``, as ``check_length`` always has), the CLI's the argument
    (``DEVICE``, :data:`CLI_ARGUMENTS`); both show the value."""
    at = "" if index is None else f"[{index}]"

    def words(say: Words) -> str:
        named = say(field) + (at if say is Spelling.RPC else "")
        return f"{named} is too long ({len(value)} characters, at most {bound}): {shown(value)}"

    return RequestError(words, CLI_ARGUMENTS)


def checked(request: T) -> T:
    """``request`` if every text of its fields keeps its declared bound
    (``chars``; each item of a sequence), in the order of the fields; else
    :func:`too_long`'s :class:`~pciname.requests.spelling.RequestError`."""
    for name, bound in limits(type(request)).items():
        if bound.chars is None:
            continue
        value = getattr(request, name)
        if isinstance(value, str):
            if len(value) > bound.chars:
                raise too_long(name, value, bound.chars)
        elif isinstance(value, (tuple, list)):
            for i, item in enumerate(value):
                if isinstance(item, str) and len(item) > bound.chars:
                    raise too_long(name, item, bound.chars, i)
    return request


#: The usual declarations.
DEVICES = limit(chars=NAME_CHARS, batch=True, count=MAX_GPUS)
#: Devices named by their ids alone, no count ("0x10de:0x2236"): as the service has always bounded them.
DEVICE_IDS = limit(chars=DEVICE_CHARS, batch=True)
PROFILE = limit(chars=PROFILE_CHARS)
NAME = limit(chars=NAME_CHARS)


__all__ = [
    "CLI_ARGUMENTS",
    "DEVICES",
    "DEVICE_CHARS",
    "DEVICE_IDS",
    "MAX_YAML_DEPTH",
    "NAME",
    "NAME_CHARS",
    "PROFILE",
    "PROFILE_CHARS",
    "Limit",
    "checked",
    "limit",
    "limits",
    "too_long",
]
