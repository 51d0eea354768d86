"""``lookup``, ``reverse`` and ``diff`` as requests: the capabilities over the
names themselves (a device's resource name, the devices under a name, the
names an upgrade changes).

Each request validates itself (:meth:`LookupRequest.validated`: the devices,
at least one and at most a limit, and what ``--stdin`` read;
:meth:`ReverseRequest.validated`: the resource name asked for;
:meth:`DiffRequest.validated`: both profiles) and has one answer
(:func:`answer_lookup`, :func:`answer_reverse`, :func:`answer_diff`).
``pciname lookup|reverse|diff`` build them from their arguments, the
``Resolve``/``ResolveBatch``, ``Reverse`` and ``Diff`` RPCs from the message;
a rule's words are each surface's own (:data:`EMPTY`: gRPC's "empty
request"). The RPCs' length limits are the wire's
(:mod:`pciname.server.rpc.wire`), checked by the servicer: the CLI has none.

The server answers ``Resolve``/``ResolveBatch`` from its per-generation
cache of encoded resolutions (:mod:`pciname.server.data`), each the
encoding of the resolver's answer for one device, rather than through
:func:`answer_lookup`'s records: that is its hot path.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from pciname.base.files import MAX_LOOKUP_DEVICES, MAX_LOOKUP_STDIN_BYTES
from pciname.naming.checks import reverse_query
from pciname.requests.limits import DEVICE_CHARS, NAME, PROFILE, checked, limit
from pciname.requests.spelling import RequestError
from pciname.resolution.resolver import resolver_or_default

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike
    from pciname.resolution.results import DiffEntry, Record

#: How gRPC's errors for a request with nothing to answer begin.
EMPTY = "empty request: "


def _empty(rpc: str, cli: str | None = None) -> RequestError:
    """Nothing to answer: gRPC's words (``empty request: ...``), and the CLI's
    (``cli``, when it says it otherwise)."""
    return RequestError.saying(cli or rpc, EMPTY + rpc)


# -- lookup -----------------------------------------------------------------


@dataclass(frozen=True)
class LookupRequest:
    """Devices to look up, in order (repeats allowed), under ``profile`` (a
    spelling or a custom Profile; None or "": the default). ``stdin``: what
    ``--stdin`` read, at most :data:`~pciname.base.files.MAX_LOOKUP_STDIN_BYTES`
    and one byte (its devices, white-space separated, follow ``devices``);
    ``max_devices``: how many one request may hold (the CLI's
    :data:`~pciname.base.files.MAX_LOOKUP_DEVICES`, a server's ``--max-batch``);
    ``single``: the ``Resolve`` RPC's one device; ``output``: the CLI's
    format (YAML gets a record per device, never a shared one)."""

    devices: Sequence[str] = field(default=(), metadata=limit(chars=DEVICE_CHARS, batch=True))
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    output: str = "name"
    stdin: bytes | None = field(default=None, metadata=limit(items=MAX_LOOKUP_STDIN_BYTES))
    max_devices: int = MAX_LOOKUP_DEVICES
    single: bool = False

    def validated(self) -> LookupRequest:
        """The request with what ``stdin`` read among its devices; a
        :class:`~pciname.requests.spelling.RequestError` for too much input
        or none, then for a text over its declared length (the service's order)."""
        devices = self.devices
        if self.stdin is not None:
            if len(self.stdin) > MAX_LOOKUP_STDIN_BYTES:
                raise RequestError(
                    lambda say: (
                        f"{say('stdin')}: more than {MAX_LOOKUP_STDIN_BYTES} bytes; a lookup takes at most "
                        f"{MAX_LOOKUP_DEVICES} devices: split the input"
                    )
                )
            devices = (*devices, *self.stdin.decode("utf-8", "replace").split())
        if not devices:
            if self.single:
                raise _empty("no device given (e.g. 10de:2236)")
            raise _empty("no devices given", "no devices given: name at least one DEVICE or use --stdin")
        count = len(devices)
        if count > self.max_devices:
            raise RequestError.saying(
                f"{count} devices given; a lookup takes at most {self.max_devices}: split the input",
                # pciname.server.rpc.wire.check_batch's words, as every RPC's count limit (tests/capabilities pins them)
                f"{count} devices in one request, more than this server's maximum of {self.max_devices} "
                "(--max-batch); split the request",
            )
        if devices is self.devices:
            return checked(self)  # the server's Resolve and ResolveBatch: nothing to copy
        return checked(replace(self, devices=devices, stdin=None))


def answer_lookup(
    request: LookupRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None
) -> list[Record]:
    """The records (``Resolution.to_dict()``) of a :meth:`~LookupRequest.validated`
    request's devices under ``profile`` (as the surface resolves the request's),
    in order. Each distinct spelling is resolved once; repeats share its record
    (copied for YAML, which would print shared objects as aliases)."""
    devices = request.devices
    unique = list(dict.fromkeys(devices))
    resolved = dict(zip(unique, resolver_or_default(resolver).records(unique, profile)))
    records = [resolved[device] for device in devices]
    if request.output == "yaml" and len(unique) < len(devices):
        records = [dict(r, warnings=[dict(w) for w in r["warnings"]]) for r in records]
    return records


# -- reverse ----------------------------------------------------------------


@dataclass(frozen=True)
class ReverseRequest:
    """The device ids advertised as ``resource`` (``nvidia.com/GA102GL_A10``
    or ``GA102GL_A10``, blanks around it allowed) under ``profile``."""

    resource: str = field(metadata=NAME)
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    #: Set by :meth:`validated`: the name asked for (:func:`~pciname.naming.checks.reverse_query`).
    resource_name: str = field(default="", compare=False)

    def validated(self) -> ReverseRequest:
        """The request with its :attr:`resource_name`; a
        :class:`~pciname.requests.spelling.RequestError` when none is given."""
        checked(self)
        wanted = reverse_query(self.resource)  # the rule the library, the CLI and the service use
        if not wanted:
            raise _empty(
                "no resource_name given (e.g. nvidia.com/GA102GL_A10)",
                "no resource name given (e.g. nvidia.com/GA102GL_A10)",
            )
        return replace(self, resource_name=wanted)


def answer_reverse(request: ReverseRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None) -> list[str]:
    """The device ids (``10de:xxxx``, sorted) a :meth:`~ReverseRequest.validated`
    request's name is advertised for under ``profile``."""
    return resolver_or_default(resolver).reverse(request.resource, profile)


#: How many of the closest names :func:`reverse_miss` offers.
CLOSEST = 3


def reverse_miss(request: ReverseRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None) -> str:
    """Why a :meth:`~ReverseRequest.validated` request's answer is empty, in
    one line: no device of ``profile`` has the name, and the profile's
    closest names, if any are close: ranked as lint ranks its hints
    (:class:`pciname.lint.hints.Candidates`: the part after the domain,
    letter case ignored, a model token such as ``A10`` in ``GA102GL_A10``
    counting as much as the whole name)."""
    from pciname.lint.hints import Candidates

    view = resolver_or_default(resolver).view(profile)
    close = Candidates(view.by_resource()).closest(request.resource_name, None, n=CLOSEST) or []
    near = f"; the closest: {', '.join(close)}" if close else "; none of its names is close"
    return f"no device of {view.profile.name} has the resource name {request.resource_name}{near}"


# -- diff -------------------------------------------------------------------


@dataclass(frozen=True)
class DiffRequest:
    """The resource names that differ from profile ``old`` to ``new``
    (spellings, or custom Profiles; "" is the default profile). None: not
    given (a gRPC field left blank)."""

    old: ProfileLike | None = field(metadata=PROFILE)
    new: ProfileLike | None = field(metadata=PROFILE)

    def validated(self) -> DiffRequest:
        """The request; a :class:`~pciname.requests.spelling.RequestError` unless both
        profiles are given."""
        checked(self)
        if self.old is None or self.new is None:
            raise _empty("both from_profile and to_profile are required", "both --from and --to are required")
        return self


def answer_diff(
    request: DiffRequest, old: ProfileLike, new: ProfileLike, *, resolver: ResolverLike | None = None
) -> list[DiffEntry]:
    """Every NVIDIA device id whose resource name differs from ``old`` to
    ``new`` (a :meth:`~DiffRequest.validated` request's profiles, as the surface
    resolves them): renamed, appears or vanishes."""
    return resolver_or_default(resolver).diff(old, new)


__all__ = [
    "EMPTY",
    "DiffRequest",
    "LookupRequest",
    "ReverseRequest",
    "answer_diff",
    "answer_lookup",
    "answer_reverse",
    "reverse_miss",
]
