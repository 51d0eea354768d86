"""The image check: whether HAMi-core's limits will hold in a workload
built on an image, read offline (:mod:`pciname.hami.image`), judged against
one HAMi release's HAMi-core (:mod:`pciname.hami.isolation`). What
``pciname image-check`` and the ``ImageCheck`` RPC answer
(:mod:`pciname.capabilities.image_check`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pciname.errors import PcinameError
from pciname.hami.image import c_library, image_from_bytes, open_image
from pciname.hami.isolation import judge
from pciname.hami.releases import cozystack, cozystack_range, release

#: A path to an image ("/var/tmp/app.tar"): PATH_MAX.
IMAGE_CHARS = 4096
#: A HAMi release ("hami@v2.8.1").
HAMI_CHARS = 64
#: The prefix a HAMi release may carry, as a profile family.
FAMILY = "hami@"
#: The prefix of the HAMi a Cozystack release ships.
COZYSTACK = "cozystack@"
#: How the answer names an image sent as bytes.
TARBALL = "the image tarball"


def release_tag(text: str) -> str:
    """``text`` (``v2.8.1``, ``2.8.1``, ``hami@v2.8.1``, or ``cozystack@v1.6.2``:
    the HAMi that Cozystack release ships) as HAMi tags it, or a
    :class:`~pciname.errors.PcinameError` naming the releases covered."""
    spelled = text.strip()
    if spelled.lower().startswith(COZYSTACK):
        version = spelled[len(COZYSTACK) :]
        shipped = cozystack(version)
        if shipped is None:
            raise PcinameError(f"{spelled!r}: no Cozystack release pciname has HAMi facts for ({cozystack_range()})")
        if shipped.hami is None:
            raise PcinameError(f"Cozystack {version} ships no HAMi ({shipped.where})")
        return shipped.hami
    spelled = spelled[len(FAMILY) :] if spelled.lower().startswith(FAMILY) else spelled
    return release(spelled).release


@dataclass(frozen=True)
class ImageCheck:
    """The answer: the image, the release and its HAMi-core commit, the C
    library found (path, kind, version, machine), whether the limits hold
    (None: the release's HAMi-core is not known), why, and what the
    workload sees when they do not."""

    image: str
    hami: str
    libvgpu_commit: str
    library: dict[str, Any]
    holds: bool | None
    reasons: tuple[str, ...]
    sees: str | None

    def as_dict(self) -> dict[str, Any]:
        """What ``-o json`` prints."""
        fields = ("image", "hami", "libvgpu_commit", "library", "holds", "reasons", "sees")
        plain = {name: getattr(self, name) for name in fields}
        return plain | {"library": dict(self.library), "reasons": list(self.reasons)}


def check_image(tag: str, image: str | bytes) -> ImageCheck:
    """The verdict on ``image`` (a path, or a tarball's bytes) under HAMi
    ``tag`` (an :class:`~pciname.hami.image.ImageError` for an image pciname
    will not read)."""
    facts = release(tag)
    where = TARBALL if isinstance(image, bytes) else image
    tree = image_from_bytes(image, where) if isinstance(image, bytes) else open_image(where)
    library = c_library(tree)
    verdict = judge(facts, library)
    found = {"path": library.path, "kind": library.kind, "version": library.version, "machine": library.machine}
    return ImageCheck(where, facts.release, facts.libvgpu_commit, found, verdict.holds, verdict.reasons, verdict.sees)


__all__ = ["FAMILY", "HAMI_CHARS", "IMAGE_CHARS", "ImageCheck", "check_image", "release_tag"]
