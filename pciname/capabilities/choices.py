"""The choices and defaults the surfaces offer for requests' fields (the
CLI's help and ``choices``), each read from the one room that defines it,
and only when it is asked for: building the CLI's parser imports no
answer's machinery (a function here imports just the module that holds its
facts, as the command modules did before they asked the registry)."""

from __future__ import annotations

from typing import Any


def nvidia_plugin() -> tuple[list[str], str]:
    """``lint --nvidia-plugin``'s choices and default (:mod:`pciname.lint.plugin`)."""
    from pciname.lint.plugin import DEFAULT_NVIDIA_PLUGIN, NvidiaPlugin

    return [p.value for p in NvidiaPlugin], DEFAULT_NVIDIA_PLUGIN.value


def kata_pod() -> dict[str, Any]:
    """``kata-pod``'s defaults: ``image``, ``image_source``, ``name``, the ``kinds`` (the first the default)
    and the ``profile`` its request answers with when none is given."""
    from pciname.capabilities.kata_pod import KataPodRequest
    from pciname.kata.pod import DEFAULT_IMAGE, DEFAULT_IMAGE_SOURCE, DEFAULT_NAME, KINDS

    return {
        "image": DEFAULT_IMAGE,
        "image_source": DEFAULT_IMAGE_SOURCE,
        "name": DEFAULT_NAME,
        "kinds": KINDS,
        "profile": KataPodRequest().default_profile,
    }


def admission() -> tuple[tuple[str, ...], tuple[str, ...], str]:
    """``admission-policy``'s actions, its default actions and its default name."""
    from pciname.policy.admission import ACTIONS, DEFAULT_ACTIONS, DEFAULT_NAME

    return tuple(ACTIONS), tuple(DEFAULT_ACTIONS), DEFAULT_NAME


def permitted() -> dict[str, Any]:
    """``permitted-host-devices``' formats (``formats``, ``default``) and
    Cozystack variants (``variants``, ``mdev_variants``, ``default_variant``)."""
    from pciname.cozystack.defaults import DEFAULT_VARIANT, MDEV_VARIANTS, VARIANTS
    from pciname.kubevirt.generate import DEFAULT_FORMAT, FORMATS

    return {
        "formats": FORMATS,
        "default": DEFAULT_FORMAT,
        "variants": VARIANTS,
        "mdev_variants": MDEV_VARIANTS,
        "default_variant": DEFAULT_VARIANT,
    }


def node_pool() -> dict[str, Any]:
    """``node-pool``'s formats (``formats``, ``default``), the resource its
    patch is for (``resource``) and the newest Cozystack release's group
    defaults (``defaults``)."""
    from pciname.cozystack.node_pool import DEFAULT_POOL_FORMAT, POOL_FORMATS
    from pciname.cozystack.releases import RESOURCE, newest

    return {
        "formats": POOL_FORMATS,
        "default": DEFAULT_POOL_FORMAT,
        "resource": RESOURCE,
        "defaults": newest().defaults(),
    }


__all__ = ["admission", "kata_pod", "node_pool", "nvidia_plugin", "permitted"]
