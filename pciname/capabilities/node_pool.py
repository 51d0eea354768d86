"""``node-pool`` as a request: a Cozystack tenant node group (or a
``KubernetesNodes`` pool) with these GPUs, for a Cozystack release.

:class:`NodePoolRequest` validates itself (which fields go together, spelled
as the surface names them) and :func:`answer` answers it with
:func:`pciname.cozystack.node_pool.node_pool`; ``pciname node-pool`` and the
``NodePool`` RPC build the request and print or send the answer, and
:func:`gpu_names` reads the GPUs back out of it for both.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pciname.capabilities.limits import DEVICES, NAME, PROFILE, checked
from pciname.capabilities.spelling import RequestError
from pciname.capabilities.vm_gpus import no_gpus
from pciname.cozystack.choice import profile_for
from pciname.cozystack.node_pool import DEFAULT_POOL_FORMAT, POOL_FORMATS
from pciname.cozystack.releases import RESOURCE, newest
from pciname.errors import PcinameError
from pciname.kubevirt.vgpu import vgpu_gpus, with_vgpus

if TYPE_CHECKING:
    from pciname.kubevirt.generate import Snippet
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: The group's fields: what ``fragment`` (gpus only) takes none of.
GROUP_FIELDS = ("instance_type", "min_replicas", "max_replicas", "disk_size", "roles", "cpu", "memory")


@dataclass(frozen=True)
class NodePoolRequest:
    """A node group ``group``: GPUs as ``DEVICE[=COUNT]`` (or resource names)
    and vGPU types as ``TYPE[=COUNT]`` (``mdev_types``: their
    ``mdev_type/name``; ``vgpus``: as NVIDIA names them, for the GPUs
    ``devices`` names), ``format`` values, patch or
    kubernetes-nodes (with ``cluster``), ``fragment`` (gpus only), and the
    group's fields (None: the release's default)."""

    group: str = field(metadata=NAME)
    devices: tuple[str, ...] = field(default=(), metadata=DEVICES)
    mdev_types: tuple[str, ...] = field(default=(), metadata=DEVICES)
    vgpus: tuple[str, ...] = field(default=(), metadata=DEVICES)
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    include_broken: bool = False
    fragment: bool = False
    format: str = field(default="values", metadata=NAME)
    cozystack: str | None = field(default=None, metadata=NAME)
    cluster: str | None = field(default=None, metadata=NAME)
    fields: dict[str, Any] = field(default_factory=dict)

    def validated(self) -> NodePoolRequest:
        """The request, its format known; a
        :class:`~pciname.capabilities.spelling.RequestError` without GPUs or
        for fields that do not go together."""
        checked(self)
        from pciname.cozystack.node_pool import pool_format

        if not self.devices and not self.mdev_types:
            raise no_gpus()
        if self.vgpus:
            vgpu_gpus(self.devices, counts=True)  # a DEVICE=COUNT is refused before the profile is looked at
        fmt = pool_format(self.format.strip().lower() or DEFAULT_POOL_FORMAT)
        unknown = set(self.fields) - set(GROUP_FIELDS) - {"ephemeral_storage"}
        if unknown:
            raise PcinameError(f"no such node group field: {', '.join(sorted(unknown))}")
        fields = {name: value for name, value in self.fields.items() if value is not None}
        if self.fragment and fields:
            named = [name for name in GROUP_FIELDS + ("ephemeral_storage",) if name in fields]
            raise RequestError(
                lambda say: f"{say('fragment')} emits gpus only: it takes no {', '.join(say(n) for n in named)}"
            )
        if self.cluster is not None and fmt == "values":
            raise RequestError(lambda say: f"{say('cluster')} goes with {say('format')} kubernetes-nodes or patch")
        if fmt == "kubernetes-nodes" and self.cluster is None:
            raise RequestError(
                lambda say: (
                    f"{say('format')} kubernetes-nodes needs {say('cluster')} NAME: the object is named CLUSTER-GROUP"
                )
            )
        return replace(
            self,
            devices=tuple(self.devices),
            mdev_types=tuple(self.mdev_types),
            vgpus=tuple(self.vgpus),
            format=fmt,
            fields=fields,
        )

    @property
    def chosen_profile(self) -> ProfileLike | None:
        """The profile to answer with (:func:`~pciname.cozystack.choice.profile_for`)."""
        return profile_for(self.cozystack, self.profile)


def answer(request: NodePoolRequest, profile: ProfileLike, *, resolver: ResolverLike | None = None) -> Snippet:
    """The group (or pool) of a :meth:`~NodePoolRequest.validated` request under
    ``profile`` (its :attr:`~NodePoolRequest.chosen_profile`, as the surface resolves it)."""
    from pciname.base.requests import parse_request
    from pciname.cozystack.node_pool import node_pool

    devices, mdevs = with_vgpus(
        request.devices, request.mdev_types, request.vgpus, profile, counts=True, resolver=resolver
    )
    chosen = request.chosen_profile
    implied = chosen if isinstance(chosen, str) and chosen.strip().lower().startswith("cozystack@") else None
    return node_pool(
        request.group,
        [parse_request(d) for d in devices],
        profile,
        request.include_broken,
        mdevs=[parse_request(m) for m in mdevs],
        resolver=resolver,
        fragment=request.fragment,
        format=request.format,
        cozystack=request.cozystack or implied,
        cluster=request.cluster,
        **request.fields,
    )


def gpu_names(snippet: Snippet, group: str) -> list[str]:
    """The GPU resource names of the group in a node-pool answer, whatever its format."""
    spec = snippet.data.get("spec", snippet.data)
    gpus = spec["nodeGroups"][group]["gpus"] if "nodeGroups" in spec else spec["gpus"]
    return [g["name"] for g in gpus]


__all__ = [
    "DEFAULT_POOL_FORMAT",
    "GROUP_FIELDS",
    "POOL_FORMATS",
    "RESOURCE",
    "NodePoolRequest",
    "answer",
    "gpu_names",
    "newest",
]
