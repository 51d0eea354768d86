"""What the RPC handlers share: a message's limits declared as rules
(:func:`check`: :func:`needs`, :func:`batch`, :func:`declared` (the bounds
its capability's request declares, :mod:`pciname.capabilities.limits`), :func:`chars`, :func:`no_auto`,
run in the order given, the first broken one answers), the capability's
request built from the message by field name (:func:`request_from`), and
the registry's answer to it (:func:`answer`: :mod:`pciname.capabilities.registry`)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

import grpc
from google.protobuf.message import Message

from pciname.capabilities.limits import limits
from pciname.capabilities.registry import CAPABILITIES, ask
from pciname.capabilities.spelling import auto_refused
from pciname.server.rpc.mapping import plain
from pciname.server.rpc.wire import RpcFailure, check_batch, check_length

INVALID = grpc.StatusCode.INVALID_ARGUMENT
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION

#: One limit of a message: (message, --max-batch) -> None, or an RpcFailure raised.
Rule = Callable[[Any, int], None]


def _given(value: Any) -> bool:
    return bool(value.strip()) if isinstance(value, str) else bool(value)


def needs(refusal: str | Callable[[], Exception], *fields: str) -> Rule:
    """Unless one of ``fields`` is given: ``refusal()``, or INVALID_ARGUMENT
    "empty request: no ``refusal`` given"."""

    def rule(message: Any, max_batch: int) -> None:
        if not any(_given(getattr(message, name)) for name in fields):
            if callable(refusal):
                raise refusal()
            raise RpcFailure(INVALID, f"empty request: no {refusal} given")

    return rule


def batch(what: str, *fields: str) -> Rule:
    """At most ``--max-batch`` items in ``fields`` together."""

    def rule(message: Any, max_batch: int) -> None:
        check_batch(sum(len(getattr(message, name)) for name in fields), what, max_batch)

    return rule


def chars(limit: int, *fields: str) -> Rule:
    """At most ``limit`` characters in each of ``fields`` (each item of a repeated one)."""

    def rule(message: Any, max_batch: int) -> None:
        for name in fields:
            value = getattr(message, name)
            if isinstance(value, str):
                check_length(value, name, limit)
            else:
                for i, item in enumerate(value):
                    check_length(item, f"{name}[{i}]", limit)

    return rule


def declared(request_type: type[Any], *fields: str, **renamed: str) -> Rule:
    """:func:`chars` of each of ``fields`` (the message's, in order) by the
    bound ``request_type`` declares on its field of the same name (or the one
    ``renamed`` names for it); a KeyError, at import, for a field it does not bound."""
    bounds = {name: limits(request_type)[renamed.get(name, name)].chars for name in fields}
    if missing := [name for name, bound in bounds.items() if bound is None]:
        raise KeyError(f"{request_type.__name__} declares no length for {', '.join(missing)}")
    return _all(*(chars(bound, name) for name, bound in bounds.items() if bound is not None))


def _all(*rules: Rule) -> Rule:
    return lambda message, max_batch: check(message, rules, max_batch)


def no_auto(*fields: str) -> Rule:
    """INVALID_ARGUMENT for profile ``auto`` where there is no cluster to infer from."""

    def rule(message: Any, max_batch: int) -> None:
        for name in fields:
            if getattr(message, name).strip().lower() == "auto":
                raise auto_refused(name)

    return rule


def check(message: Message, rules: tuple[Rule, ...], max_batch: int = 0) -> None:
    """Every rule of ``rules`` on ``message``, in order."""
    for rule in rules:
        rule(message, max_batch)


#: The registry's capability of each RPC, by method name.
ENTRIES = {rpc: entry for entry in CAPABILITIES for rpc in entry.rpcs}


def answer(method: str, request: Any, *args: Any, **kwargs: Any) -> Any:
    """The registry's answer to ``request``, of the capability ``method`` asks."""
    return ask(ENTRIES[method].command, request, *args, **kwargs)


def request_from(
    request_type: Callable[..., Any] | str, message: Message, renames: Mapping[str, str] | None = None, **values: Any
) -> Any:
    """``request_type`` (a capability's request; an RPC's name: its capability's,
    from the registry) from ``message``'s fields of the same names (or as
    ``renames`` says): a repeated field as a tuple, a blank text as not given
    (None where the request's default is None, else the default, if it has one);
    ``values`` win."""
    if isinstance(request_type, str):
        request_type = ENTRIES[request_type].request_type()
    taken = {f.name: f for f in dataclasses.fields(request_type)}  # type: ignore[arg-type]
    given: dict[str, Any] = {}
    for field, value in plain(message).items():
        name = (renames or {}).get(field, field)
        if name not in taken or name in values:
            continue
        if isinstance(value, list):
            value = tuple(value)
        elif value == "" and taken[name].default is None:
            value = None
        elif value == "" and taken[name].default is not dataclasses.MISSING:
            continue
        given[name] = value
    return request_type(**given, **values)


__all__ = [
    "INVALID",
    "PRECONDITION",
    "answer",
    "batch",
    "chars",
    "check",
    "declared",
    "needs",
    "no_auto",
    "request_from",
]
