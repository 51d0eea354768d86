"""The one choice of a Cozystack release and of the profile that goes with
it, for every capability on every surface: a release asked for, or the one
a ``cozystack@`` profile names (they must agree), else the newest; and the
profile: the one given, else with a release asked for, that release's (its
GPU Operator's names). A malformed release is a
:class:`~pciname.errors.PcinameError`, an unknown one
:class:`~pciname.errors.UnknownCozystackRelease` (whether its bundle wires
GPUs is :func:`pciname.cozystack.defaults.wiring`'s to say)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from pciname.cozystack.releases import Release, get_release, release_of_profile
from pciname.errors import PcinameError

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike


def release_for(cozystack: str | None, profile: object = None) -> Release:
    """The release ``cozystack`` names, or the one a ``cozystack@`` profile
    names (both given: they must agree), else the newest."""
    chosen = get_release(cozystack) if cozystack and cozystack.strip() else None
    implied = release_of_profile(profile)
    if chosen is not None and implied is not None and chosen.version != implied.version:
        raise PcinameError(
            f"profile {profile} is Cozystack {implied.version}, but Cozystack {chosen.version} was asked for: give one"
        )
    return chosen or implied or get_release(None)


def profile_for(cozystack: str | None, profile: ProfileLike | None) -> ProfileLike | None:
    """The profile to answer with: ``profile`` when one is given (a
    spelling, or a custom profile as it is), else with a release asked for,
    that release's (``cozystack@vX.Y.Z``); None: the default profile."""
    if profile is not None and str(profile).strip():
        return profile
    if cozystack and cozystack.strip():
        return get_release(cozystack).profile
    return profile


__all__ = ["profile_for", "release_for"]
