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

from pciname.capabilities.limits import DEVICE_IDS, DEVICES, NAME, PROFILE, checked
from pciname.capabilities.spelling import RequestError
from pciname.capabilities.vm_gpus import NO_GPUS_RPC
from pciname.cozystack.choice import profile_for, release_for
from pciname.cozystack.defaults import DEFAULT_VARIANT, MDEV_VARIANTS, SUGGESTION, VARIANTS
from pciname.errors import PcinameError
from pciname.kubevirt.generate import DEFAULT_FORMAT, FORMATS, render
from pciname.kubevirt.vgpu import with_vgpus

if TYPE_CHECKING:
    from pciname.cozystack.defaults import DefaultsTable
    from pciname.kubevirt.generate import Skipped, Snippet
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: What permitted-host-devices and apply permitted-host-devices say when given nothing to permit.
NO_DEVICES = "no devices given: name at least one DEVICE or --mdev TYPE"


def no_devices() -> RequestError:
    """A request that names nothing to permit, in each surface's words."""
    return RequestError.saying(NO_DEVICES, NO_GPUS_RPC)


#: The fields that go only with ``format cozystack``, in the order their errors are reported.
COZYSTACK_ONLY = ("replace_defaults", "variant", "vgpu_device_manager", "cozystack_defaults", "cozystack")


@dataclass(frozen=True)
class PermittedHostDevicesRequest:
    """What to permit and how to place it. ``profile``: a profile spelling
    or object (None: the default, or the ``cozystack`` release's);
    ``cozystack_defaults``: a defaults table's text (or what reads it, once
    the fields are known to go together) and its name (for its errors), to
    compare with instead of the built-in one; ``vgpus``: vGPU types as
    NVIDIA names them, for the GPUs ``devices`` names (which are then not
    permitted for passthrough); ``from_scan``: a sysfs root whose devices
    and vGPU types the profile's plugin advertises are permitted too
    (``offered``: and every type its GPUs offer)."""

    devices: tuple[str, ...] = field(default=(), metadata=DEVICE_IDS)
    mdev_types: tuple[str, ...] = field(default=(), metadata=DEVICES)
    vgpus: tuple[str, ...] = field(default=(), metadata=DEVICES)
    from_scan: str | None = None
    offered: bool = False
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    include_broken: bool = False
    format: str = "kubevirt"
    cozystack: str | None = field(default=None, metadata=NAME)
    variant: str | None = field(default=None, metadata=NAME)
    replace_defaults: bool = False
    vgpu_device_manager: bool = False
    cozystack_defaults: tuple[str | bytes | Callable[[], str | bytes], str] | None = None
    #: Set by :meth:`validated`: the Cozystack release (format cozystack only) and the defaults table.
    release: str | None = field(default=None, compare=False)
    defaults: DefaultsTable | None = field(default=None, compare=False)

    def validated(self) -> PermittedHostDevicesRequest:
        """The request with its release and defaults table chosen; a
        :class:`~pciname.capabilities.spelling.RequestError` for fields that
        do not go together, then for nothing to permit (no device, type or
        node to scan)."""
        checked(self)
        asked = self._checked()
        if asked.from_scan is None and not asked.vgpus and not asked.devices and not asked.mdev_types:
            raise no_devices()
        return asked

    def _checked(self) -> PermittedHostDevicesRequest:
        from dataclasses import replace

        if self.offered and self.from_scan is None:
            raise RequestError(
                lambda say: f"{say('offered')} goes with {say('from_scan')}", {"from_scan": "--from-scan DIR"}
            )
        fmt = self.format.strip().lower() or FORMATS[0]
        if fmt not in FORMATS:
            raise PcinameError(f"unknown format {self.format!r}: use one of {', '.join(FORMATS)}")
        asked = replace(self, devices=tuple(self.devices), mdev_types=tuple(self.mdev_types), vgpus=tuple(self.vgpus))
        if fmt != "cozystack":
            for name in COZYSTACK_ONLY:
                if getattr(self, name):
                    raise RequestError.about("{} goes with {} cozystack", name, "format")
            return replace(asked, format=fmt)
        from pciname.cozystack.defaults import check_variant, parse_defaults, wiring

        release = release_for(self.cozystack, self.profile).version
        wiring(release)  # CozystackNotWired for a release whose bundle wires no GPUs
        variant = check_variant(self.variant or DEFAULT_VARIANT, release)
        if self.vgpu_device_manager and variant != "vgpu":
            raise RequestError(lambda say: f"{say('vgpu_device_manager')} goes with {say('variant')} vgpu")
        defaults = None
        if self.cozystack_defaults is not None:
            if self.replace_defaults:
                raise RequestError(
                    lambda say: (
                        f"{say('cozystack_defaults')} has nothing to compare with: "
                        f"{say('replace_defaults')} drops the defaults"
                    )
                )
            if self.vgpu_device_manager:
                raise RequestError(
                    lambda say: (
                        f"{say('vgpu_device_manager')} picks a built-in table; {say('cozystack_defaults')} replaces it"
                    )
                )
            text, name = self.cozystack_defaults
            defaults = parse_defaults(text() if callable(text) else text, name)
        return replace(asked, format=fmt, variant=variant, release=release, defaults=defaults)

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
    request: PermittedHostDevicesRequest,
    profile: ProfileLike,
    *,
    resolver: ResolverLike | None = None,
    note: Callable[[str], None] | None = None,
) -> PermittedHostDevices:
    """The answer to a :meth:`~PermittedHostDevicesRequest.validated` request
    under ``profile`` (its :attr:`~PermittedHostDevicesRequest.chosen_profile`,
    as the surface resolves it): its ``vgpus`` expanded to their exact
    strings, the ``from_scan`` node's devices and types added (``note`` is
    told each one the scan leaves out, as it is found); a
    :class:`~pciname.capabilities.spelling.RequestError` when that leaves
    nothing to permit."""
    from pciname.kubevirt.generate import permitted_host_devices

    devices, mdevs = with_vgpus(
        request.devices, request.mdev_types, request.vgpus, profile, counts=False, resolver=resolver
    )
    if request.from_scan is not None:
        from pciname.host.sysfs import scan, scan_requests

        found = scan_requests(scan(request.from_scan, profile, resolver=resolver), offered=request.offered)
        for line in found.skipped:
            if note is not None:
                note(line)
        devices += found.devices
        mdevs += found.mdev_types
    if not devices and not mdevs:
        root = request.from_scan
        if root is None:
            raise no_devices()
        raise RequestError(lambda say: f"{say('from_scan')} {root}: nothing to permit")
    snippet = permitted_host_devices(devices, mdevs, profile, request.include_broken, resolver=resolver)
    if request.format != "cozystack":
        return PermittedHostDevices(snippet)
    from pciname.cozystack.defaults import for_cozystack

    checked = for_cozystack(
        snippet,
        variant=request.variant or DEFAULT_VARIANT,
        replace_defaults=request.replace_defaults,
        defaults=request.defaults,
        vgpu_device_manager=request.vgpu_device_manager,
        release=request.release,
    )
    return PermittedHostDevices(checked.snippet, tuple(checked.clashes), checked.variant)


__all__ = [
    "COZYSTACK_ONLY",
    "DEFAULT_FORMAT",
    "DEFAULT_VARIANT",
    "FORMATS",
    "MDEV_VARIANTS",
    "NO_DEVICES",
    "SUGGESTION",
    "VARIANTS",
    "PermittedHostDevices",
    "PermittedHostDevicesRequest",
    "answer",
    "no_devices",
    "render",
]
