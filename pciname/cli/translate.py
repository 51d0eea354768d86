"""Options to requests: a command's arguments become its capability's
request by one rule (:func:`request_of`), so no command builds a request
field by field.

Module-level imports stay light: the request types load inside the function.
"""

from __future__ import annotations

import argparse
import dataclasses
from collections.abc import Mapping
from typing import Any

#: Request fields read from options of another name: the device request
#: options :func:`add_request_options` adds.
REQUEST_OPTIONS = {"mdev_types": "mdev", "vgpus": "vgpu"}


def request_of(
    command: str, args: argparse.Namespace, renames: Mapping[str, str | None] | None = None, **values: Any
) -> Any:
    """The validated request of ``command`` (its type from the registry),
    each field from the option of the same name (or as ``renames`` and
    :data:`REQUEST_OPTIONS` say; renamed to None: no option gives it): a
    list as a tuple, an option not given (None) as the field's default.
    ``values`` win: what the command reads first (a file, standard input)."""
    from pciname.capabilities.registry import capability

    request_type = capability(command).request_type()
    names: dict[str, str | None] = {**REQUEST_OPTIONS, **(renames or {})}
    given: dict[str, Any] = {}
    for field in dataclasses.fields(request_type):
        option = names.get(field.name, field.name)
        if option is None or not field.init or field.name in values or not hasattr(args, option):
            continue
        value = getattr(args, option)
        if value is None and field.default is not None and field.default is not dataclasses.MISSING:
            continue
        if value is None and field.default_factory is not dataclasses.MISSING:
            continue
        given[field.name] = tuple(value) if isinstance(value, list) else value
    return request_type(**given, **values).validated()
