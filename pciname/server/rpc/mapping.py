"""One mapping between ``pciname.v1`` messages and plain values, read from
the messages' descriptors instead of written per message.

* :func:`to_message` fills a message from an object's attributes or a
  mapping's keys, field by field: a field is found under its name
  (``resource_name``) or its JSON name (``resourceName``, as KubeVirt's
  entries spell it); keyword overrides win. ``None`` leaves a field unset
  (an ``optional`` field stays absent, a plain one keeps its default), a
  message field is filled the same way from its value, a repeated one from
  each item, a ``google.protobuf.Value`` from plain data (:func:`set_value`),
  a ``map<string, scalar>`` from a dict (read back as one), and an int64 is clamped to its range (counts summed over a cluster).
* :func:`plain` reads a message back as a dict by field name: an unset
  ``optional`` field is None, a repeated field a list, a message a dict, a
  ``Value`` plain data (whole numbers as int).

``google.protobuf.json_format`` is not used: it writes int64 as strings,
bytes as base64 and drops every default, so what came back would not be
the value that went out (``tests/server/rpc/test_server_mapping.py``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from google.protobuf.descriptor import FieldDescriptor
from google.protobuf.message import Message
from google.protobuf.struct_pb2 import Value

M = TypeVar("M", bound=Message)

_INT64 = (-(2**63), 2**63 - 1)
_VALUE = Value.DESCRIPTOR.full_name


def _source_value(source: Any, field: Any) -> Any:
    if isinstance(source, Mapping):
        return source.get(field.name, source.get(field.json_name))
    return getattr(source, field.name, None)


def _is_message(field: Any) -> bool:
    return bool(field.type == FieldDescriptor.TYPE_MESSAGE)


def _is_repeated(field: Any) -> bool:
    return bool(field.is_repeated)


def to_message(message_type: type[M], source: Any = None, **overrides: Any) -> M:
    """A ``message_type`` filled from ``source`` and ``overrides`` (see the module;
    a TypeError for an override the message has no field for)."""
    message = message_type()
    if unknown := sorted(set(overrides) - {f.name for f in message.DESCRIPTOR.fields}):
        raise TypeError(f"{message.DESCRIPTOR.full_name} has no field {', '.join(unknown)}")
    fill(message, source, overrides)
    return message


def fill(message: Message, source: Any, overrides: Mapping[str, Any] | None = None) -> None:
    """Set ``message``'s fields from ``source`` (``overrides`` by field name win)."""
    fields: Any = message.DESCRIPTOR.fields
    for field in fields:
        if overrides and field.name in overrides:
            value = overrides[field.name]
        elif source is None:
            continue
        else:
            value = _source_value(source, field)
        if value is not None:
            _set(message, field, value)


def _is_map(field: Any) -> bool:
    """A ``map<string, scalar>`` field (filled from and read back as a dict)."""
    return _is_message(field) and bool(field.message_type.GetOptions().map_entry)


def _set(message: Message, field: Any, value: Any) -> None:
    if _is_map(field):
        getattr(message, field.name).update(value)
    elif _is_message(field) and field.message_type.full_name == _VALUE:
        set_value(getattr(message, field.name), value)
    elif _is_message(field):
        for item, target in _targets(message, field, value):
            if isinstance(item, Message):
                target.CopyFrom(item)
            else:
                fill(target, item)
                target.SetInParent()
    elif _is_repeated(field):
        getattr(message, field.name).extend(value)
    elif field.type == FieldDescriptor.TYPE_STRING and not isinstance(value, str):
        setattr(message, field.name, str(value))  # e.g. a node's name YAML read as a number
    elif field.type in (FieldDescriptor.TYPE_INT64, FieldDescriptor.TYPE_SINT64, FieldDescriptor.TYPE_SFIXED64):
        setattr(message, field.name, min(max(value, _INT64[0]), _INT64[1]))
    else:
        setattr(message, field.name, value)


def _targets(message: Message, field: Any, value: Any) -> Any:
    """(item, the message it fills) for a message field's ``value``."""
    if _is_repeated(field):
        return ((item, getattr(message, field.name).add()) for item in value)
    return ((value, getattr(message, field.name)),)


def plain(message: Message, readers: Mapping[str, Callable[[dict[str, Any]], Any]] | None = None) -> dict[str, Any]:
    """Every field of ``message`` by name as plain data (see the module); a
    nested message whose type ``readers`` names (by full name) is what its
    reader makes of its plain data."""

    def read(item: Message) -> Any:
        values = plain(item, readers)
        reader = readers.get(item.DESCRIPTOR.full_name) if readers else None
        return reader(values) if reader is not None else values

    out: dict[str, Any] = {}
    fields: Any = message.DESCRIPTOR.fields
    for field in fields:
        value = getattr(message, field.name)
        if _is_map(field):
            out[field.name] = dict(value)
        elif _is_message(field) and field.message_type.full_name == _VALUE:
            out[field.name] = plain_value(value) if message.HasField(field.name) else None
        elif _is_message(field):
            if _is_repeated(field):
                out[field.name] = [read(item) for item in value]
            else:
                out[field.name] = read(value) if message.HasField(field.name) else None
        elif _is_repeated(field):
            out[field.name] = list(value)
        elif field.has_presence and not message.HasField(field.name):
            out[field.name] = None
        else:
            out[field.name] = value
    return out


def set_value(target: Value, value: Any) -> None:
    """Set a google.protobuf.Value from plain data (None leaves it unset;
    list items that are not plain become their ``str``)."""
    if value is None:
        return
    if isinstance(value, bool):
        target.bool_value = value
    elif isinstance(value, (int, float)):
        target.number_value = value
    elif isinstance(value, str):
        target.string_value = value
    elif isinstance(value, (list, tuple)):
        target.list_value.extend([v if isinstance(v, (str, bool, int, float)) or v is None else str(v) for v in value])
        if not value:
            target.list_value.SetInParent()
    else:
        target.string_value = str(value)


def plain_value(value: Value) -> Any:
    """A google.protobuf.Value as plain data (None when unset); whole numbers as int."""
    kind = value.WhichOneof("kind")
    if kind is None or kind == "null_value":
        return None
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() else number
    if kind == "list_value":
        return [plain_value(v) for v in value.list_value.values]
    if kind == "struct_value":
        return {k: plain_value(v) for k, v in value.struct_value.fields.items()}
    return getattr(value, kind)


__all__ = ["fill", "plain", "plain_value", "set_value", "to_message"]
