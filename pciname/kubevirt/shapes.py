"""Whether decoded Kubernetes objects have the shapes pciname reads: the
KubeVirt CR, Nodes and List answers, and the counts of ``nvidia.com/*``
resources, as the API server or a caller sent them.

Every field :mod:`pciname.kubevirt.objects` and :mod:`pciname.policy.audit` read
is checked for its type before they read it, so what a misbehaving API
server or a hostile caller sends (``items: "abc"``, a list under
``status.allocatable``, ``name: null``, an integer label value, ``1e400``,
``.inf`` or a 5000-digit count) is a :class:`ShapeError` naming the place,
never a crash or a wrong count. :func:`decode_json` reads an API answer's
JSON bounded the same way (no NaN or infinite numbers, no 5000-digit
integers, no nesting past what JSON objects of Kubernetes need).

Used by :mod:`pciname.cluster.kube` (what the API server answers) and the
GpuOptions RPC (what its caller sends). A KubeVirt CR with more than
:data:`MAX_PERMITTED_ENTRIES` permittedHostDevices entries is a ShapeError
too, found before any entry is read: what is done per entry stays bounded.
"""

from __future__ import annotations

import json
import re
from decimal import Decimal, InvalidOperation
from typing import Any

from pciname.errors import PcinameError

#: The largest count a resource may have (Kubernetes' quantities are int64).
MAX_COUNT = 2**63 - 1
#: The longest number text read (a count, a JSON number): int64 is 19 digits.
MAX_NUMBER_CHARS = 64
#: permittedHostDevices entries read of one KubeVirt CR (pciHostDevices and
#: mediatedDevices together). A real CR has tens; every NVIDIA device and
#: vGPU type is about 4,000, and etcd keeps objects of at most 1.5 MiB
#: (about 15,000 entries).
MAX_PERMITTED_ENTRIES = 10_000

# Kubernetes' quantity grammar (k8s.io/apimachinery/pkg/api/resource).
_QUANTITY = re.compile(
    r"(?P<number>[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+))"
    r"(?:(?P<binary>Ki|Mi|Gi|Ti|Pi|Ei)|(?P<exponent>[eE][+-]?[0-9]+)|(?P<decimal>[numkMGTPE]?))"
)
_BINARY = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
_DECIMAL = {
    "n": Decimal("1e-9"),
    "u": Decimal("1e-6"),
    "m": Decimal("1e-3"),
    "": Decimal(1),
    "k": Decimal("1e3"),
    "M": Decimal("1e6"),
    "G": Decimal("1e9"),
    "T": Decimal("1e12"),
    "P": Decimal("1e15"),
    "E": Decimal("1e18"),
}


class ShapeError(PcinameError):
    """An object or answer that does not have the shape pciname reads (one line, naming the place)."""


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {
        dict: "a mapping",
        list: "a list",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
    }.get(type(value), type(value).__name__)


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


# -- JSON ---------------------------------------------------------------------------


def _number(text: str) -> str:
    if len(text) > MAX_NUMBER_CHARS:
        raise ValueError(f"a number of {len(text)} characters")
    return text


def _float(text: str) -> float:
    value = float(_number(text))
    if value in (float("inf"), float("-inf")):
        raise ValueError(f"a number out of range: {_shown(text)}")
    return value


def _constant(text: str) -> Any:
    raise ValueError(f"{text} is not JSON")


#: A JSON ``\\uXXXX`` escape of a UTF-16 surrogate (``\\ud800``..``\\udfff``).
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_SURROGATE = re.compile("[\ud800-\udfff]")


def go_strings(value: Any, text: str | bytes) -> Any:
    """``value``, decoded from the JSON ``text``, with every lone surrogate
    (an escape such as ``\\ud800`` that is not half of a pair) replaced by
    U+FFFD, as Go's encoding/json decodes it (the API server, kubectl): the
    strings are then valid UTF-8 wherever they go. A text with no such
    escape is returned as it is, unwalked."""
    raw = text.decode("utf-8", "replace") if isinstance(text, bytes) else text
    if "\\u" not in raw or not _SURROGATE_ESCAPE.search(raw):
        return value
    return _replace_surrogates(value)


def _replace_surrogates(value: Any) -> Any:
    if isinstance(value, str):
        return _SURROGATE.sub("\ufffd", value)
    if isinstance(value, list):
        return [_replace_surrogates(v) for v in value]
    if isinstance(value, dict):
        return {_replace_surrogates(k): _replace_surrogates(v) for k, v in value.items()}
    return value


def decode_json(data: bytes | str, what: str) -> Any:
    """The JSON ``data`` (an API answer), or ShapeError: not JSON, NaN or
    infinite numbers, numbers longer than :data:`MAX_NUMBER_CHARS`, or
    nesting deeper than Python can decode. Lone surrogates are U+FFFD
    (:func:`go_strings`)."""
    try:
        value = json.loads(data, parse_float=_float, parse_int=lambda t: int(_number(t)), parse_constant=_constant)
        return go_strings(value, data)
    except RecursionError:
        raise ShapeError(f"{what}: the JSON is nested too deeply") from None
    except (TypeError, ValueError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ShapeError(f"{what}: not valid JSON: {' '.join(str(error).split())[:200]}") from None


# -- counts -------------------------------------------------------------------------


def quantity(value: Any, where: str) -> int:
    """A resource count (``"4"``, ``4``, ``"1k"``) as a whole number, as
    Kubernetes reads quantities (a fraction is cut off: an extended resource
    counts whole devices); ShapeError for anything else, a negative count,
    or one past :data:`MAX_COUNT`."""
    if isinstance(value, bool) or not isinstance(value, (str, int, float)):
        raise ShapeError(f"{where}: expected a quantity, got {type_name(value)}")
    if isinstance(value, int):
        number = Decimal(value)
    elif isinstance(value, float):
        if value != value or value in (float("inf"), float("-inf")):
            raise ShapeError(f"{where}: not a finite quantity: {_shown(value)}")
        number = Decimal(value)
    else:
        number = _quantity_text(value, where)
    if number < 0:
        raise ShapeError(f"{where}: a negative quantity: {_shown(value)}")
    if number > MAX_COUNT:
        raise ShapeError(f"{where}: a quantity out of range: {_shown(value)}")
    return int(number)


def _quantity_text(value: str, where: str) -> Decimal:
    """A quantity written as text (``"4"``, ``"1k"``, ``"2Ki"``, ``"1e3"``) as a number."""
    text = value.strip()
    match = _QUANTITY.fullmatch(text) if len(text) <= MAX_NUMBER_CHARS else None
    if match is None:
        raise ShapeError(f"{where}: not a Kubernetes quantity: {_shown(value)}")
    try:
        number = Decimal(match["number"])
        if match["binary"]:
            number *= _BINARY[match["binary"]]
        elif match["exponent"]:
            exponent = int(match["exponent"][1:])
            if abs(exponent) > 30:
                raise ShapeError(f"{where}: a quantity out of range: {_shown(value)}")
            number = number.scaleb(exponent)
        else:
            number *= _DECIMAL[match["decimal"] or ""]
    except InvalidOperation:
        raise ShapeError(f"{where}: not a Kubernetes quantity: {_shown(value)}") from None
    return number


# -- objects ------------------------------------------------------------------------


def mapping(value: Any, where: str) -> dict[Any, Any]:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ShapeError(f"{where}: expected a mapping, got {type_name(value)}")
    return value


def mappings(value: Any, where: str) -> list[dict[Any, Any]]:
    """A list of mappings (None: none), each checked as :func:`mapping` checks it."""
    if value is None:
        return []
    if not isinstance(value, list):
        raise ShapeError(f"{where}: expected a list, got {type_name(value)}")
    return [mapping(entry, f"{where}[{i}]") for i, entry in enumerate(value)]


def text(value: Any, where: str) -> None:
    if value is not None and not isinstance(value, str):
        raise ShapeError(f"{where}: expected a string, got {type_name(value)}")


def check_kind(obj: dict[str, Any], kind: str, where: str) -> None:
    found = obj.get("kind")
    if found is not None and found != kind:
        got = _kind_shown(found) if isinstance(found, str) else type_name(found)
        raise ShapeError(f"{where}: expected a {kind}, got {got}")


def _kind_shown(kind: str, limit: int = 64) -> str:
    """As the service's error details show an input (pciname.server.rpc.wire.shown):
    past ``limit`` characters cut, with its size."""
    if len(kind) <= limit:
        return kind
    return f"{kind[:limit]}…({len(kind.encode('utf-8', 'surrogatepass'))} bytes)"


def check_metadata(obj: dict[str, Any], where: str) -> dict[Any, Any]:
    meta = mapping(obj.get("metadata"), f"{where}.metadata")
    for key in ("name", "namespace"):
        text(meta.get(key), f"{where}.metadata.{key}")
    for key in ("labels", "annotations"):
        values = mapping(meta.get(key), f"{where}.metadata.{key}")
        for name, value in values.items():
            if not isinstance(name, str) or not isinstance(value, str):
                bad = name if not isinstance(name, str) else value
                raise ShapeError(f"{where}.metadata.{key}: keys and values must be strings, got {type_name(bad)}")
    for key in ("managedFields", "ownerReferences"):
        for i, entry in enumerate(mappings(meta.get(key), f"{where}.metadata.{key}")):
            for field in ("manager", "kind", "name"):
                text(entry.get(field), f"{where}.metadata.{key}[{i}].{field}")
            mapping(entry.get("fieldsV1"), f"{where}.metadata.{key}[{i}].fieldsV1")
    return meta


def check_kubevirt(obj: dict[str, Any], where: str = "kubevirt") -> None:
    """The fields gpu_options, audit and apply read have the types they expect."""
    check_kind(obj, "KubeVirt", where)
    check_metadata(obj, where)
    spec = mapping(obj.get("spec"), f"{where}.spec")
    configuration = mapping(spec.get("configuration"), f"{where}.spec.configuration")
    path = f"{where}.spec.configuration.permittedHostDevices"
    block = mapping(configuration.get("permittedHostDevices"), path)
    lists = (("pciHostDevices", "pciVendorSelector"), ("mediatedDevices", "mdevNameSelector"))
    count = sum(len(block[key]) for key, _ in lists if isinstance(block.get(key), list))
    if count > MAX_PERMITTED_ENTRIES:
        raise ShapeError(f"{path}: {count} entries, more than the {MAX_PERMITTED_ENTRIES} read")
    for list_key, selector in lists:
        for i, entry in enumerate(mappings(block.get(list_key), f"{path}.{list_key}")):
            for key in (selector, "resourceName"):
                text(entry.get(key), f"{path}.{list_key}[{i}].{key}")


def check_node(obj: dict[str, Any], where: str) -> None:
    """The fields gpu_options and audit read of a Node have the types they
    expect, and its ``nvidia.com/*`` counts are quantities."""
    check_kind(obj, "Node", where)
    meta = check_metadata(obj, where)
    if "name" in meta and meta["name"] is None:
        raise ShapeError(f"{where}.metadata.name: expected a Node's name, got null")
    status = mapping(obj.get("status"), f"{where}.status")
    for key in ("capacity", "allocatable"):
        resources = mapping(status.get(key), f"{where}.status.{key}")
        for name, value in resources.items():
            if not isinstance(name, str):
                raise ShapeError(f"{where}.status.{key}: resource names must be strings, got {type_name(name)}")
            if name.startswith("nvidia.com/"):
                quantity(value, f"{where}.status.{key}[{name}]")


def check_pod(obj: dict[str, Any], where: str) -> None:
    """The fields ``audit --hami`` reads of a Pod have the types it expects:
    ``spec.nodeName``, and each container's ``image`` and resources (names are strings)."""
    check_kind(obj, "Pod", where)
    check_metadata(obj, where)
    spec = mapping(obj.get("spec"), f"{where}.spec")
    text(spec.get("nodeName"), f"{where}.spec.nodeName")
    for i, container in enumerate(mappings(spec.get("containers"), f"{where}.spec.containers")):
        at = f"{where}.spec.containers[{i}]"
        text(container.get("image"), f"{at}.image")
        resources = mapping(container.get("resources"), f"{at}.resources")
        for key in ("limits", "requests"):
            if any(not isinstance(name, str) for name in mapping(resources.get(key), f"{at}.resources.{key}")):
                raise ShapeError(f"{at}.resources.{key}: resource names must be strings")


def list_items(answer: Any, kind: str, what: str) -> list[dict[str, Any]]:
    """The ``items`` of a ``*List`` answer (``kind`` e.g. ``NodeList``), each a mapping."""
    if not isinstance(answer, dict):
        raise ShapeError(f"{what}: expected a {kind}, got {type_name(answer)}")
    found = answer.get("kind")
    if found is not None and found != kind:
        raise ShapeError(
            f"{what}: expected a {kind}, got {_kind_shown(found) if isinstance(found, str) else type_name(found)}"
        )
    items = answer.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise ShapeError(f"{what}: {kind} items: expected a list, got {type_name(items)}")
    for i, item in enumerate(items):
        if not isinstance(item, dict):
            raise ShapeError(f"{what}: {kind} items[{i}]: expected an object, got {type_name(item)}")
    return items


__all__ = [
    "MAX_COUNT",
    "MAX_PERMITTED_ENTRIES",
    "ShapeError",
    "check_kubevirt",
    "check_node",
    "check_pod",
    "decode_json",
    "list_items",
    "quantity",
    "type_name",
]
