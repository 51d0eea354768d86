"""``audit`` and ``gpu-options`` as requests: a cluster's KubeVirt CR and
Nodes compared with a profile, and what a tenant node pool may ask for.

:class:`AuditRequest` validates itself (the profile, ``auto`` included, and
the Cozystack release asked for: they must agree) and
:class:`GpuOptionsRequest` also its source (the cluster, or the objects as
text); :func:`answer_audit` and :func:`answer_gpu_options` answer them from
the objects read (:mod:`pciname.policy.audit` says what they mean).
``pciname audit`` and ``pciname gpu-options`` read their cluster with
:func:`read` (its I/O is :mod:`pciname.cluster.kube`), and the
``GpuOptions`` RPC reads the server's cluster or the objects it was sent;
both answer through :func:`answer_gpu_options`.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Self, TypeVar

from pciname.cluster.kube import (
    DEFAULT_TIMEOUT,
    EVENTS_NAMESPACE,
    ClusterState,
    connect,
    read_cluster,
    read_cozystack_operator,
    read_doctor_events,
    read_dra,
    read_hami,
)
from pciname.cozystack.choice import release_for
from pciname.cozystack.releases import ClusterRelease, Release, get_release, release_in_cluster
from pciname.dra.audit import audit_dra
from pciname.errors import PcinameError
from pciname.hami.audit import audit_hami
from pciname.hami.check import HAMI_CHARS, IMAGE_CHARS, check_image, release_tag
from pciname.hami.releases import release as hami_release
from pciname.kubevirt.objects import KubeObject, permitted_entries
from pciname.naming.profiles import DEFAULT_PROFILE
from pciname.policy.audit import AUTO, Check, audit, choose_profile, gpu_options, is_auto
from pciname.requests.limits import NAME, PROFILE, checked, limit
from pciname.requests.spelling import RequestError, Spelling

if TYPE_CHECKING:
    from pciname.cluster.kube import ApiClient
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: What a request does with a note beside its answer (the CLI: a ``pciname:`` line on stderr).
Note = Callable[[str], None]
#: The one line for a cluster without a KubeVirt CR where one is needed.
NO_KUBEVIRT_CR = "the cluster has no KubeVirt CR (kubevirt.io/v1 kubevirts)"


def given(profile: ProfileLike | None) -> bool:
    """Whether a profile was given (a custom one, or a spelling that is not blank)."""
    return profile is not None and (not isinstance(profile, str) or bool(profile.strip()))


def _or_default(profile: ProfileLike | None, default: ProfileLike) -> ProfileLike:
    return profile if profile is not None and given(profile) else default


def choose(profile: ProfileLike | None, cozystack: str | None) -> tuple[ProfileLike | None, str, Release | None]:
    """The one profile choice of a cluster request, before any cluster is
    read: (the profile, how it was chosen, the Cozystack release asked for).
    ``profile`` ("given"; ``auto`` too), or with none given and a release
    asked for, that release's ("cozystack"). A ``cozystack@`` profile of
    another release, a malformed release: :class:`~pciname.errors.PcinameError`;
    an unknown one :class:`~pciname.errors.UnknownCozystackRelease`."""
    if cozystack is None:
        return profile, "given", None
    release = get_release(cozystack)
    release_for(release.version, profile)  # the two must agree
    if given(profile):
        return profile, "given", release
    return release.profile, "cozystack", release


@dataclass(frozen=True)
class AuditRequest:
    """A cluster compared with a profile. ``profile``: a spelling or a custom
    profile (``auto``: inferred from the names the nodes advertise; None: none
    given); ``cozystack``: the release asked for (None: not asked for; the
    cluster's operator Deployment may say); ``kubevirt_name``: which KubeVirt
    CR ([NAMESPACE/]NAME) when there are several; ``timeout``: seconds for
    the API requests, and for the work on what they read (None: the default)."""

    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    cozystack: str | None = field(default=None, metadata=NAME)
    kubevirt_name: str | None = field(default=None, metadata=NAME)
    timeout: float | None = None
    #: Set by :meth:`validated` (and :meth:`with_cluster_release`): the
    #: profile to answer with (None: the default), how it was chosen, and
    #: the Cozystack release.
    chosen_profile: ProfileLike | None = field(default=None, compare=False)
    profile_source: str = field(default="given", compare=False)
    release: Release | None = field(default=None, compare=False)
    #: Set by :meth:`with_cluster_release`: what the report says of the cluster's Cozystack release.
    cozystack_report: dict[str, Any] | None = field(default=None, compare=False)
    #: The DRA audit instead (:func:`answer_audit_dra`): no profile, no Cozystack release.
    dra: bool = False

    def validated(self) -> Self:
        """The request with its profile and release chosen (:func:`choose`);
        with :attr:`dra`, a profile or a Cozystack release given is refused
        (the DRA driver names no resources)."""
        checked(self)
        if self.dra and (given(self.profile) or self.cozystack is not None):
            raise RequestError(
                lambda say: (
                    f"audit --dra takes no {say('profile')} and no {say('cozystack')}: "
                    "the DRA driver names no resources"
                )
            )
        profile, source, release = choose(self.profile, self.cozystack)
        return replace(self, chosen_profile=profile, profile_source=source, release=release)

    @property
    def seconds(self) -> float:
        """:attr:`timeout`, or :data:`pciname.cluster.kube.DEFAULT_TIMEOUT`."""
        return float(self.timeout) if self.timeout is not None else DEFAULT_TIMEOUT

    @property
    def auto(self) -> bool:
        """Whether the profile is to be inferred from the nodes."""
        return is_auto(self.chosen_profile)

    @property
    def implied(self) -> bool:
        """Whether the profile is the Cozystack release's (no profile was given)."""
        return self.release is not None and not given(self.profile)

    def with_cluster_release(self, found: ClusterRelease | None, note: Note, spelling: Spelling = Spelling.CLI) -> Self:
        """The request once the cluster said which Cozystack release it runs
        (``found``, from its operator Deployment): the release asked for wins,
        else the cluster's; without a profile given, that release's profile.
        Notes say when the two differ, or the cluster's is one pciname has no
        facts for, naming the options as ``spelling``'s surface spells them."""
        say, asked = spelling, self.release
        if found is not None and found.release is None and asked is None:
            note(
                f"the cluster runs Cozystack {found.version} ({found.evidence}), which this pciname has no facts for: "
                f"use a newer pciname, or give {say('cozystack')} or {say('profile')}"
            )
        if found is not None and asked is not None and found.version != asked.version:
            note(
                f"{say('cozystack')} {asked.version} given; the cluster says Cozystack {found.version} ({found.evidence})"
            )
        release = asked or (found.release if found is not None else None)
        if release is None:
            return replace(self, cozystack_report=found.to_dict() if found is not None else None)
        source = f"given ({say('cozystack')})" if asked is not None else found.evidence if found is not None else ""
        told = {"version": release.version, "source": source, "known": True}
        if given(self.profile):
            return replace(self, release=release, cozystack_report=told)
        return replace(
            self, chosen_profile=release.profile, profile_source="cozystack", release=release, cozystack_report=told
        )


@dataclass(frozen=True)
class GpuOptionsRequest(AuditRequest):
    """What a tenant node pool may ask for: an :class:`AuditRequest` of the
    cluster (``from_cluster``) or of the objects given as text (``kubevirt``:
    the KubeVirt CR, ``nodes``: the Nodes, as JSON or YAML)."""

    from_cluster: bool = True
    kubevirt: str = ""
    nodes: str = ""

    def validated(self) -> Self:
        """The request with its profile and release chosen (first: they fail
        before anything else); a :class:`~pciname.errors.PcinameError` for a
        source that is both, or neither."""
        asked = super().validated()
        if self.from_cluster and (self.kubevirt.strip() or self.nodes.strip()):
            raise RequestError(
                lambda say: (
                    f"{say('from_cluster')} reads the KubeVirt CR and the Nodes from the cluster: "
                    f"leave {say('kubevirt')} and {say('nodes')} empty"
                )
            )
        if not self.from_cluster and not self.kubevirt.strip():
            raise RequestError(
                lambda say: (
                    f"empty request: send the KubeVirt CR in {say('kubevirt')} (JSON or YAML), "
                    f"or set {say('from_cluster')}"
                )
            )
        return asked


#: ``audit --hami --image IMAGE=PATH``: how long one may be (an image reference of
#: at most 255 characters, as the distribution spec's regexp allows a name, and a path), and how many.
IMAGES_CHARS = 256 + IMAGE_CHARS
MAX_IMAGES = 64


@dataclass(frozen=True)
class HamiAuditRequest(AuditRequest):
    """``audit --hami``: HAMi in a tenant cluster, from its Nodes and Pods
    (:func:`pciname.hami.audit.audit_hami`), for ``hami`` (``v2.8.1``,
    ``hami@v2.8.1``); no profile, KubeVirt CR or DRA (HAMi's names are its chart's).
    ``images``: ``IMAGE=PATH``, an image's tarball or root filesystem for the
    image-check verdict on the pods running IMAGE."""

    hami: str = field(default="", metadata=limit(chars=HAMI_CHARS))
    images: tuple[str, ...] = field(default=(), metadata=limit(chars=IMAGES_CHARS, items=MAX_IMAGES))

    def validated(self) -> Self:
        """The request, its release as HAMi tags it (a PcinameError naming the releases known)."""
        checked(self)
        if given(self.profile) or self.kubevirt_name is not None or self.dra:
            raise RequestError(
                lambda say: (
                    f"audit --hami takes no {say('profile')}, no {say('kubevirt_name')} and no {say('dra')}: "
                    "HAMi's names are its chart's"
                ),
                {"kubevirt_name": "--kubevirt"},
            )
        if not self.hami.strip():
            raise RequestError(lambda say: f"no HAMi release given ({say('hami')} RELEASE)")
        if len(self.images) > MAX_IMAGES:
            raise RequestError(lambda say: f"{len(self.images)} {say('images')} given: at most {MAX_IMAGES}")
        for given_image in self.images:
            image, _, path = given_image.partition("=")
            if not image.strip() or not path.strip():
                raise RequestError(
                    lambda say: f"{say('images')} takes IMAGE=PATH (an image and its tarball or root filesystem)"
                )
        return replace(self, hami=release_tag(self.hami))

    @property
    def image_paths(self) -> dict[str, str]:
        """IMAGE -> PATH of :attr:`images` (the last one given wins)."""
        return dict(given.partition("=")[::2] for given in self.images)


class Deadline:
    """A request's :attr:`~AuditRequest.timeout` counted from its start (the
    CLI's: the command's): :meth:`check`, what the work calls as it goes,
    raises one line once it has passed (naming the timeout as ``spelling``'s
    surface does)."""

    def __init__(self, request: AuditRequest, command: str, spelling: Spelling = Spelling.CLI) -> None:
        self.timeout = request.seconds
        self.at = time.monotonic() + self.timeout
        self.command = command
        self.flag = spelling("timeout")
        self.sizes = "what the cluster sent"

    def sized(self, state: ClusterState) -> None:
        """Say how much the cluster sent, in the message."""
        entries = len(permitted_entries(state.kubevirt))
        self.sizes = f"the {entries} permittedHostDevices entries and {len(state.nodes)} Nodes the cluster sent"

    def check(self) -> None:
        if time.monotonic() > self.at:
            raise PcinameError(
                f"{self.command}: not done within {self.flag} ({self.timeout:g} seconds) with {self.sizes}"
            )


Asked = TypeVar("Asked", bound=AuditRequest)


def read(
    request: Asked,
    client: ApiClient,
    *,
    deadline: Deadline,
    note: Note,
    needs_kubevirt: bool = False,
    doctor_events: bool = False,
) -> tuple[Asked, ClusterState]:
    """The cluster's KubeVirt CR and Nodes (and with ``doctor_events`` the
    Events the host doctor posted on them), and the request with the
    Cozystack release its operator Deployment says
    (:meth:`~AuditRequest.with_cluster_release`); each read within
    :attr:`~AuditRequest.seconds`. :data:`NO_KUBEVIRT_CR` when
    ``needs_kubevirt`` and the cluster has none."""
    state = read_cluster(client, request.kubevirt_name, timeout=request.seconds)
    if needs_kubevirt and state.kubevirt is None:
        raise PcinameError(NO_KUBEVIRT_CR)
    if doctor_events:
        state.doctor_events = read_doctor_events(client, timeout=request.seconds)
        if state.doctor_events is None:
            note(f"cannot list Events in {EVENTS_NAMESPACE} (403): the fleet report leaves out what the doctor posted")
    deadline.sized(state)
    found = release_in_cluster(read_cozystack_operator(client, timeout=request.seconds))
    return request.with_cluster_release(found, note), state


def answer_audit(
    request: AuditRequest,
    kubevirt: KubeObject | None,
    nodes: list[KubeObject],
    *,
    resolver: ResolverLike | None = None,
    check: Check | None = None,
    doctor_events: list[KubeObject] | None = None,
) -> dict[str, Any]:
    """The audit report (:func:`pciname.policy.audit.audit`) of a
    :meth:`~AuditRequest.validated` request, with what the cluster said of
    its Cozystack release (:attr:`~AuditRequest.cozystack_report`) and the
    fleet's lines with what the doctor posted (``doctor_events``)."""
    profile = _or_default(request.chosen_profile, DEFAULT_PROFILE)
    result = audit(kubevirt, nodes, profile, resolver=resolver, check=check, doctor_events=doctor_events)
    told = request.cozystack_report
    if told is not None and request.implied:
        result["profile_source"] = f"Cozystack {told['version']} ({told['source']})"
    result["cozystack"] = told
    return result


def answer_audit_dra(request: AuditRequest, client: ApiClient, *, check: Check | None = None) -> dict[str, Any]:
    """The DRA audit (:func:`pciname.dra.audit.audit_dra`) of the
    cluster ``client`` reaches, read within :attr:`~AuditRequest.seconds`;
    ``check``: the caller's deadline, checked as the audit goes."""
    state = read_dra(client, timeout=request.seconds)
    return audit_dra(state.resource_api, state.objects, state.vms, check=check)


def answer_audit_hami(request: HamiAuditRequest, client: ApiClient, *, check: Check | None = None) -> dict[str, Any]:
    """HAMi's audit (:func:`pciname.hami.audit.audit_hami`) of the Nodes and
    Pods of the cluster ``client`` reaches, read within :attr:`~AuditRequest.seconds`;
    ``check``: the caller's deadline, checked as the audit goes."""
    state = read_hami(client, timeout=request.seconds)
    report = audit_hami(hami_release(request.hami), state.nodes, state.pods, check=check)
    return with_verdicts(report, request.hami, request.image_paths)


def with_verdicts(report: dict[str, Any], hami: str, paths: dict[str, str]) -> dict[str, Any]:
    """``report`` with the image-check verdict on each image given a path
    (:func:`pciname.hami.check.check_image`); an image whose limits do not
    hold, among the pods', is a problem (``hami-image-unisolated``)."""
    listed = {row["image"]: row for row in report["images"]}
    for image in paths:
        listed.setdefault(image, {"image": image, "pods": [], "verdict": None})
    for image, path in paths.items():
        checked = check_image(hami, path)
        listed[image]["verdict"] = {k: v for k, v in checked.as_dict().items() if k not in ("hami", "libvgpu_commit")}
        if checked.holds is False and listed[image]["pods"]:
            message = f"{image} ({', '.join(listed[image]['pods'])}): the limits do not hold: {checked.sees}"
            report["problems"].append({"code": "hami-image-unisolated", "node": "-", "message": message})
    report["images"] = [listed[image] for image in sorted(listed)]
    return report


@dataclass(frozen=True)
class GpuOptions:
    """The options (:func:`pciname.policy.audit.gpu_options`), the profile
    that named them (as the surface passed it, or the one inferred) and how
    it was chosen ("given", "cozystack", "inferred", "default (nothing to infer from)")."""

    options: list[dict[str, Any]]
    profile: ProfileLike
    profile_source: str


def answer_gpu_options(
    request: AuditRequest,
    kubevirt: KubeObject | None,
    nodes: list[KubeObject],
    *,
    served: ProfileLike | None = None,
    default: ProfileLike = DEFAULT_PROFILE,
    resolver: ResolverLike | None = None,
    check: Check | None = None,
) -> GpuOptions:
    """The GPU options of a :meth:`~AuditRequest.validated` request: under
    its profile (``served``: the surface's own form of it, e.g. the server's
    loaded profile), or with ``auto`` the one the nodes' names infer, else
    ``default`` (the surface's default profile)."""
    if request.auto:
        chosen, how, _ = choose_profile(AUTO, nodes, resolver=resolver, check=check)
        profile = chosen if how == "inferred" else default
    else:
        profile = served if served is not None else _or_default(request.chosen_profile, default)
        how = request.profile_source
    return GpuOptions(gpu_options(kubevirt, nodes, profile, resolver=resolver, check=check), profile, how)


__all__ = [
    "NO_KUBEVIRT_CR",
    "AuditRequest",
    "Deadline",
    "GpuOptions",
    "GpuOptionsRequest",
    "HamiAuditRequest",
    "answer_audit",
    "answer_audit_dra",
    "answer_audit_hami",
    "answer_gpu_options",
    "choose",
    "connect",
    "given",
    "read",
]
