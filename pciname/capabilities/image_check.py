"""``image-check`` as a request; :func:`answer` is :func:`pciname.hami.check.check_image`."""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from pciname.hami.check import HAMI_CHARS, IMAGE_CHARS, ImageCheck, check_image, release_tag
from pciname.requests.limits import checked, limit
from pciname.requests.spelling import RequestError


@dataclass(frozen=True)
class ImageCheckRequest:
    """``image``: a path, or a tarball's bytes (the RPC's); ``hami``: ``v2.8.1``, ``hami@v2.8.1``."""

    image: str | bytes = field(default="", metadata=limit(chars=IMAGE_CHARS))
    hami: str = field(default="", metadata=limit(chars=HAMI_CHARS))

    def validated(self) -> ImageCheckRequest:
        """The request, its release as HAMi tags it (``v2.8.1``)."""
        if not checked(self).image:
            raise RequestError.saying("no image given (IMAGE)", "empty request: no tarball given")
        return replace(self, hami=release_tag(self.hami))  # a PcinameError naming the releases known


def answer(request: ImageCheckRequest) -> ImageCheck:
    return check_image(request.hami, request.image)
