"""How a surface names a request's fields in its one-line errors: the CLI
by its flags (``--replace-defaults``), gRPC by the message's fields
(``replace_defaults``). A rule is written once, with the field's name, in
a :class:`RequestError`; the surface that reports it spells its words
(``str(error)``: the CLI's, ``error.spelled(Spelling.RPC)``: gRPC's). No
request carries its surface."""

from __future__ import annotations

import enum
from collections.abc import Callable, Mapping
from typing import TypeVar

from pciname.errors import PcinameError

#: The CLI flags not spelled as ``--`` + the field with ``-`` for ``_``.
CLI_FLAGS = {"roles": "--role", "images": "--image"}


class Spelling(enum.Enum):
    CLI = "cli"
    RPC = "rpc"

    def __call__(self, field: str) -> str:
        """``field`` (a request attribute) as this surface spells it."""
        if self is Spelling.RPC:
            return field
        return CLI_FLAGS.get(field) or "--" + field.replace("_", "-")

    def auto_refused(self, field: str = "profile") -> PcinameError:
        """Profile ``auto`` where there is no cluster to infer it from, in
        this surface's words (each names the requests that read a cluster)."""
        return auto_refused(field).as_spelled(self)


#: A field's words in one surface: the field as the surface spells it.
Words = Callable[[str], str]


class RequestError(PcinameError):
    """A request refused by its own rules, in every surface's words: the
    rule is written once (``words``: the line, given how a surface spells a
    field); ``str()`` is the CLI's line, :meth:`spelled` any surface's.
    ``cli_words`` names the fields the CLI spells otherwise than as its flag
    (a positional ``DEVICE``)."""

    def __init__(self, words: Callable[[Words], str], cli_words: Mapping[str, str] | None = None) -> None:
        self.words = words
        self.cli_words = dict(cli_words or {})
        super().__init__(self.spelled(Spelling.CLI))

    def spelled(self, spelling: Spelling) -> str:
        """The one line in ``spelling``'s words."""
        if spelling is Spelling.CLI:
            return self.words(lambda field: self.cli_words.get(field) or spelling(field))
        return self.words(spelling)

    def as_spelled(self, spelling: Spelling) -> PcinameError:
        """A plain :class:`~pciname.errors.PcinameError` of :meth:`spelled`'s line."""
        return PcinameError(self.spelled(spelling))

    @classmethod
    def about(cls, template: str, *fields: str, **values: object) -> RequestError:
        """A rule naming ``fields`` (``{}`` in ``template``, in order) beside
        ``values`` (``{name}``, e.g. what was given)."""
        return cls(lambda say: template.format(*(say(f) for f in fields), **values))

    @classmethod
    def saying(cls, cli: str, rpc: str) -> RequestError:
        """A rule each surface says in its own words (``rpc``: gRPC's)."""
        return cls(lambda say: rpc if say is Spelling.RPC else cli)


def is_auto(profile: object) -> bool:
    """Whether ``profile`` is ``auto`` (:func:`pciname.policy.audit.is_auto`):
    the profile only a request that reads a cluster infers."""
    from pciname.policy.audit import is_auto as auto  # the rule's room loads only when a profile is asked about

    return auto(profile)


def auto_refused(field: str = "profile") -> RequestError:
    """Profile ``auto`` where there is no cluster to infer it from (each
    surface names the requests that read a cluster)."""

    def words(say: Words) -> str:
        where = "GpuOptions; name a profile" if say is Spelling.RPC else "audit, gpu-options and apply"
        return f"{say(field)} auto needs a cluster to infer from: it works with {where}"

    return RequestError(words)


T = TypeVar("T")

#: What marks a field's word in a line the lower rooms write (:func:`reworded`).
_MARK = "\x00"


def reworded(call: Callable[[str], T], field: str) -> T:
    """``call(word)`` for a lower room's check that names ``field`` in its
    error; its :class:`~pciname.errors.PcinameError` becomes a
    :class:`RequestError` naming the field in every surface's words."""
    marker = f"{_MARK}{field}{_MARK}"
    try:
        return call(marker)
    except RequestError:
        raise
    except PcinameError as error:
        line = str(error)
        if marker not in line:
            raise
        raise RequestError(lambda say: line.replace(marker, say(field))) from None


def respelled(error: PcinameError, *fields: str) -> RequestError:
    """``error``, a lower room's line that names ``fields`` by the CLI's
    flags (``--dra-driver``), as a :class:`RequestError` naming them in
    every surface's words."""
    line = str(error)

    def words(say: Words) -> str:
        text = line
        for field in fields:
            text = text.replace(Spelling.CLI(field), say(field))
        return text

    return RequestError(words)


__all__ = ["RequestError", "Spelling", "Words", "auto_refused", "is_auto", "respelled", "reworded"]
