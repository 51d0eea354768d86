"""``lint`` as a request: the GPU resource names (and the Cozystack
node-group fields) of YAML files, checked under a profile, all files
together, as ``pciname lint`` and the ``Lint`` RPC check them.

:class:`LintRequest` validates itself (the Cozystack release node groups are
checked against, and the profile that goes with it) and :func:`answer`
answers it with :class:`pciname.lint.linter.Linter`: the findings, the notes
and the files that could not be read. ``pciname lint`` and the ``Lint`` RPC
build the request (the files as (name, YAML) pairs, or what reads them) and
print or send the answer; what one request may cost (files, bytes, YAML
nodes) is the server's to bound, before it asks.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from pciname.cozystack.choice import profile_for, release_for
from pciname.dra.facts import Combination, DraCombinationError, choose
from pciname.errors import LintInputError, PcinameError
from pciname.kubevirt.selectors import known_release
from pciname.lint.compose import collector_paused
from pciname.lint.inputs import STDIN, read_input
from pciname.lint.linter import Finding, Linter
from pciname.lint.plugin import parse as parse_nvidia_plugin
from pciname.requests.limits import NAME, PROFILE, checked
from pciname.requests.spelling import RequestError, Spelling, respelled

if TYPE_CHECKING:
    from pciname.resolution.resolver import ProfileLike, ResolverLike

#: A file to lint: its name and YAML (text or bytes), or what reads them when
#: its turn comes (``pciname lint FILE``: a file that cannot be read is
#: reported in its place among the others, which are linted all the same).
LintFile = tuple[str, str | bytes] | Callable[[], tuple[str, str | bytes]]


def file_reader(path: str) -> Callable[[], tuple[str, bytes]]:
    """``pciname lint``'s ``FILE`` (``-``: standard input): what reads it
    (bounded, :func:`pciname.lint.inputs.read_input`) and names it."""

    def read() -> tuple[str, bytes]:
        data, name = read_input(path)
        return name, data

    return read


@dataclass(frozen=True)
class LintRequest:
    """The files, the profile their names are checked under (None: the
    default, or the ``cozystack`` release's), the profile an upgrade goes to
    (``renamed-by-upgrade``), and the Cozystack release node groups are
    checked against (None: the one a ``cozystack@`` profile names, else the
    newest); whether NVIDIA's device plugin runs on the nodes beside
    KubeVirt's own (``nvidia_plugin``: yes, no or auto, :mod:`pciname.lint.plugin`);
    the KubeVirt release tag (``kubevirt``; None: the newest known) whose own
    plugin serves the entries without ``externalResourceProvider: true`` and
    whose VMs' DRA claims are checked, and the NVIDIA DRA driver release
    (``dra_driver``; None: the newest that works with that KubeVirt)."""

    files: tuple[LintFile, ...] = ()
    profile: ProfileLike | None = field(default=None, metadata=PROFILE)
    upgrade_to: ProfileLike | None = field(default=None, metadata=PROFILE)
    cozystack: str | None = field(default=None, metadata=NAME)
    dra_driver: str | None = field(default=None, metadata=NAME)
    kubevirt: str | None = field(default=None, metadata=NAME)
    nvidia_plugin: str | None = field(default=None, metadata=NAME)
    hami: str | None = field(default=None, metadata=NAME)  # --hami: pods checked under this HAMi release
    #: Set by :meth:`validated`: the Cozystack release asked for, as ``vX.Y.Z`` (None: none asked for).
    release: str | None = field(default=None, compare=False)
    #: Set by :meth:`validated`: the DRA releases asked for (None: none asked for; the linter takes the newest).
    dra: Combination | None = field(default=None, compare=False)
    #: Set by :meth:`validated`: why the KubeVirt release asked for runs no DRA claims (None: it does).
    dra_refusal: str | None = field(default=None, compare=False)

    def validated(self) -> LintRequest:
        """The request with its Cozystack release chosen
        (:func:`~pciname.cozystack.choice.release_for`): a
        :class:`~pciname.errors.PcinameError` for a malformed release, an
        unknown one, or one a ``cozystack@`` profile contradicts; a
        :class:`~pciname.dra.facts.DraCombinationError` for a DRA driver or
        KubeVirt release that is unknown or works with no other
        (:func:`~pciname.dra.facts.choose`: one line, with the nearest that works)."""
        checked(self)
        asked = self.cozystack is not None and bool(self.cozystack.strip())
        release = release_for(self.cozystack, self.profile).version if asked else None
        try:
            plugin = parse_nvidia_plugin(self.nvidia_plugin).value
        except ValueError as error:
            message = str(error)
            raise RequestError(lambda say: f"{say('nvidia_plugin')}: {message}") from None
        kubevirt = self.kubevirt.strip() if self.kubevirt is not None and self.kubevirt.strip() else None
        if kubevirt is not None:
            try:
                kubevirt = known_release(kubevirt)
            except PcinameError as error:
                message = str(error)
                raise RequestError(lambda say: f"{say('kubevirt')}: {message}") from None
        driver = self.dra_driver.strip() if self.dra_driver is not None and self.dra_driver.strip() else None
        try:
            dra, refusal = _dra_releases(driver, kubevirt)
        except DraCombinationError as error:  # its line names the releases by the CLI's flags
            raise respelled(error, "dra_driver", "kubevirt") from None
        return replace(
            self,
            files=tuple(self.files),
            release=release,
            nvidia_plugin=plugin,
            kubevirt=kubevirt,
            dra=dra,
            dra_refusal=refusal,
        )

    @property
    def chosen_profile(self) -> ProfileLike | None:
        """The profile to answer with (:func:`~pciname.cozystack.choice.profile_for`)."""
        return profile_for(self.cozystack, self.profile)


@dataclass(frozen=True)
class LintAnswer:
    """The findings (in ``pciname lint``'s order), the notes, how many YAML
    documents were read, and the files that could not be (unreadable, not
    YAML), in the order they were given."""

    findings: list[Finding]
    notes: list[str]
    documents: int = 0
    errors: tuple[LintInputError, ...] = ()


@collector_paused
def answer(
    request: LintRequest,
    profile: ProfileLike,
    upgrade_to: ProfileLike | None = None,
    *,
    resolver: ResolverLike | None = None,
    check: Callable[[], None] | None = None,
    stream: Callable[[str | bytes], Any] | None = None,
    refuse: Callable[[Sequence[LintInputError]], Exception] | None = None,
    spelling: Spelling = Spelling.CLI,
) -> LintAnswer:
    """The answer to a :meth:`~LintRequest.validated` request under
    ``profile`` (its :attr:`~LintRequest.chosen_profile`) and ``upgrade_to``,
    as the surface resolves them. ``check`` is asked before each file and
    step and while the linter works (it raises to stop: a caller's
    deadline); ``stream`` is what the linter reads a file's YAML through (a
    stream that asks ``check`` as it is read); with ``refuse``, files that
    cannot be read raise what it makes of their errors before anything is
    linted, instead of being answered beside the findings. ``spelling``:
    the surface whose words a note names the ``nvidia_plugin`` option in."""
    linter = Linter(
        profile,
        upgrade_to,
        resolver=resolver,
        cozystack=request.release,
        check=check,
        nvidia_plugin=request.nvidia_plugin,
        kubevirt=request.kubevirt,
        hami=request.hami,
        option=spelling("nvidia_plugin"),
        dra=request.dra,
        dra_refusal=request.dra_refusal,
    )
    documents = 0
    errors: list[LintInputError] = []
    for file in request.files:
        if check is not None:
            check()
        try:
            name, text = file() if callable(file) else file
            documents += linter.add_text(stream(text) if stream is not None else text, name)
        except LintInputError as error:
            errors.append(error)
    if errors and refuse is not None:
        raise refuse(errors)
    if check is not None:
        check()
    findings = linter.run()
    if check is not None:
        check()
    return LintAnswer(findings, list(linter.notes), documents, tuple(errors))


__all__ = [
    "STDIN",
    "LintAnswer",
    "LintFile",
    "LintRequest",
    "answer",
    "file_reader",
]


def _dra_releases(driver: str | None, kubevirt: str | None) -> tuple[Combination | None, str | None]:
    """The DRA releases claims are checked for (None: the newest), and why
    none can be (None: they can). A driver given must work with the KubeVirt
    given (:class:`~pciname.dra.facts.DraCombinationError` otherwise); a
    KubeVirt given alone may be one without DRA (its other checks still
    apply): an input with DRA claims is then refused with that reason."""
    if driver is not None:
        return choose(driver, kubevirt), None
    if kubevirt is None:
        return None, None
    try:
        return choose(None, kubevirt), None
    except DraCombinationError as error:
        return None, str(error)
