"""``permitted-host-devices`` as a request: the KubeVirt permittedHostDevices
block for devices and vGPU types under a profile, placed as its format
says (a KubeVirt CR, Cozystack values, a patch), checked against what the
Cozystack release does with it for ``cozystack``.

:class:`PermittedHostDevicesRequest` validates itself (which fields go with
``format cozystack``, the release and its variant, the defaults table) and
:func:`answer` answers it; ``pciname permitted-host-devices`` and the
``PermittedHostDevices`` RPC build the request and print or send the answer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from pciname.capabilities.spelling import Spelling
from pciname.cozystack.choice import profile_for, release_for
from pciname.errors import PcinameError

if TYPE_CHECKING:
    from pciname.cozystack.defaults import DefaultsTable
    from pciname.kubevirt.generate import Skipped, Snippet
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: What permitted-host-devices and apply permitted-host-devices say when given nothing to permit.
NO_DEVICES = "no devices given: name at least one DEVICE or --mdev TYPE"

#: The fields that go only with ``format cozystack``, in the order their errors are reported.
COZYSTACK_ONLY = ("replace_defaults", "variant", "vgpu_device_manager", "cozystack_defaults", "cozystack")


@dataclass(frozen=True)
class PermittedHostDevicesRequest:
    """What to permit and how to place it. ``profile``: a profile spelling
    or object (None: the default, or the ``cozystack`` release's);
    ``cozystack_defaults``: a defaults table's text (or what reads it, once
    the fields are known to go together) and its name (for its errors), to
    compare with instead of the built-in one."""

    devices: tuple[str, ...] = ()
    mdev_types: tuple[str, ...] = ()
    profile: ProfileLike | None = None
    include_broken: bool = False
    format: str = "kubevirt"
    cozystack: str | None = None
    variant: str | None = None
    replace_defaults: bool = False
    vgpu_device_manager: bool = False
    cozystack_defaults: tuple[str | bytes | Callable[[], str | bytes], str] | None = None
    spelling: Spelling = Spelling.CLI
    #: Set by :meth:`validated`: the Cozystack release (format cozystack only) and the defaults table.
    release: str | None = field(default=None, compare=False)
    defaults: DefaultsTable | None = field(default=None, compare=False)

    def validated(self) -> PermittedHostDevicesRequest:
        """The request with its release and defaults table chosen; a
        :class:`~pciname.errors.PcinameError` for fields that do not go together."""
        from dataclasses import replace

        from pciname.kubevirt.generate import FORMATS

        say = self.spelling
        fmt = self.format.strip().lower() or FORMATS[0]
        if fmt not in FORMATS:
            raise PcinameError(f"unknown format {self.format!r}: use one of {', '.join(FORMATS)}")
        if fmt != "cozystack":
            for name in COZYSTACK_ONLY:
                if getattr(self, name):
                    raise PcinameError(f"{say(name)} goes with {say('format')} cozystack")
            return replace(self, format=fmt)
        from pciname.cozystack.defaults import DEFAULT_VARIANT, check_variant, parse_defaults, wiring

        release = release_for(self.cozystack, self.profile).version
        wiring(release)  # CozystackNotWired for a release whose bundle wires no GPUs
        variant = check_variant(self.variant or DEFAULT_VARIANT, release)
        if self.vgpu_device_manager and variant != "vgpu":
            raise PcinameError(f"{say('vgpu_device_manager')} goes with {say('variant')} vgpu")
        defaults = None
        if self.cozystack_defaults is not None:
            if self.replace_defaults:
                raise PcinameError(
                    f"{say('cozystack_defaults')} has nothing to compare with: {say('replace_defaults')} drops the defaults"
                )
            if self.vgpu_device_manager:
                raise PcinameError(
                    f"{say('vgpu_device_manager')} picks a built-in table; {say('cozystack_defaults')} replaces it"
                )
            text, name = self.cozystack_defaults
            defaults = parse_defaults(text() if callable(text) else text, name)
        return replace(self, format=fmt, variant=variant, release=release, defaults=defaults)

    @property
    def chosen_profile(self) -> ProfileLike | None:
        """The profile to answer with (:func:`~pciname.cozystack.choice.profile_for`)."""
        return profile_for(self.cozystack, self.profile)


@dataclass(frozen=True)
class PermittedHostDevices:
    """The block (``snippet``), the clashes with Cozystack's defaults, the
    variant it was checked for ("" unless format cozystack)."""

    snippet: Snippet
    clashes: tuple[Skipped, ...] = ()
    variant: str = ""


def answer(
    request: PermittedHostDevicesRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None
) -> PermittedHostDevices:
    """The answer to a :meth:`~PermittedHostDevicesRequest.validated` request
    under ``profile`` (its :attr:`~PermittedHostDevicesRequest.chosen_profile`,
    as the surface resolves it)."""
    from pciname.kubevirt.generate import permitted_host_devices

    snippet = permitted_host_devices(
        request.devices, request.mdev_types, profile, request.include_broken, resolver=resolver
    )
    if request.format != "cozystack":
        return PermittedHostDevices(snippet)
    from pciname.cozystack.defaults import DEFAULT_VARIANT, for_cozystack

    checked = for_cozystack(
        snippet,
        variant=request.variant or DEFAULT_VARIANT,
        replace_defaults=request.replace_defaults,
        defaults=request.defaults,
        vgpu_device_manager=request.vgpu_device_manager,
        release=request.release,
    )
    return PermittedHostDevices(checked.snippet, tuple(checked.clashes), checked.variant)


__all__ = ["COZYSTACK_ONLY", "NO_DEVICES", "PermittedHostDevices", "PermittedHostDevicesRequest", "answer"]
