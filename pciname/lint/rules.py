"""Lint's rules in one registry: each rule is a function of the run's
:class:`Context` (the profile, the releases, the options and the helpers a
rule reports with) and its :class:`~pciname.lint.document.RunState` (the
sites the walker collected in each document, the findings so far and what
earlier rules learned), registered with :func:`rule` under its
:class:`~pciname.lint.codes.RuleName` in the module of the kind it checks
(:mod:`pciname.lint.kinds`, each imported by :mod:`pciname.lint.linter`). :func:`ordered` gives them in
:class:`RuleName` order, the order :meth:`pciname.lint.linter.Linter.run`
runs them in; the codes a rule may report are those whose ``rules`` name it
(:data:`pciname.lint.codes.CODES`).

Adding a rule: a :class:`RuleName`, a function ``@rule(RuleName.X)`` in its
kind's module that appends ``ctx.finding(...)`` results to
``state.findings``, its code in :data:`~pciname.lint.codes.CODES` naming
the rule, and a test (docs/architecture.md, "Adding a lint rule")."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Any, NamedTuple

from yaml.nodes import Node

from pciname.kubevirt.resources import is_nvidia
from pciname.lint import codes as lint_codes
from pciname.lint.codes import INVALID_RESOURCE_NAME, SOCKET_PATH_TOO_LONG, RuleName
from pciname.lint.compose import Duplicates
from pciname.lint.document import Doc, Finding, RunState, format_path, node_value
from pciname.lint.hints import Candidates, HintBudget
from pciname.lint.nodes import YamlPath
from pciname.lint.plugin import DEFAULT_NVIDIA_PLUGIN, NvidiaPlugin, Presence, parse as parse_nvidia_plugin
from pciname.naming.checks import NameWarning
from pciname.naming.profiles import DEFAULT_PROFILE

if TYPE_CHECKING:
    from pciname.dra.facts import Combination
    from pciname.hami.releases import Release
    from pciname.resolution.resolver import ProfileLike, ResolverLike
    from pciname.resolution.results import Resolution

__all__ = ["Context", "Rule", "ordered", "rule"]


def _nothing() -> None:
    pass


def _hami_release(hami: str | None) -> Release | None:
    from pciname.hami.check import release_tag
    from pciname.hami.releases import release

    return release(release_tag(hami)) if hami is not None and hami.strip() else None


class Context:
    """What a lint run's rules read: the options of the run (profile,
    upgrade, releases, ``--nvidia-plugin``), its documents, and the helpers
    they report with (:meth:`finding`, the profile's names). :class:`~pciname.lint.linter.Linter`
    is one, with its inputs and its walker."""

    def __init__(
        self,
        profile: ProfileLike = DEFAULT_PROFILE,
        upgrade_to: ProfileLike | None = None,
        *,
        resolver: ResolverLike | None = None,
        cozystack: str | None = None,
        notes: bool = True,
        check: Callable[[], None] | None = None,
        dra: Combination | None = None,
        nvidia_plugin: NvidiaPlugin | str | None = DEFAULT_NVIDIA_PLUGIN,
        kubevirt: str | None = None,
        option: str = "--nvidia-plugin",
        dra_refusal: str | None = None,
        hami: str | None = None,
    ) -> None:
        from pciname.cozystack.choice import release_for
        from pciname.resolution.resolver import resolver_or_default

        self.resolver: ResolverLike = resolver_or_default(resolver)
        #: The Cozystack release node groups are checked against: ``cozystack``,
        #: else the one a cozystack@ profile names, else the newest.
        self.cozystack = release_for(cozystack, profile)
        self.profile = profile
        self.upgrade_to = upgrade_to
        self.profile_name = self.resolver.view(profile).profile.name
        self.upgrade_name = self.resolver.view(upgrade_to).profile.name if upgrade_to is not None else None
        self._docs: list[Doc] = []
        self._duplicates: Duplicates = {}
        self._name_index: dict[str, list[Resolution]] | None = None
        #: ``FILE:LINE: PATH: message`` lines that deserve a word but are no
        #: finding (a vGPU type string the evidence cannot check), set by
        #: :meth:`run` (unless ``notes`` is False: a caller that shows none
        #: saves their cost, a comparison with every vGPU type per selector).
        self.notes: list[str] = []
        self.want_notes = notes
        #: Called before each entry, each reference and each hint :meth:`run`
        #: checks: a deadline or a cancellation raises there, so no input outlasts it.
        self.check = check or _nothing
        #: After :meth:`run`: the input's permittedHostDevices entries that
        #: permit an nvidia.com name with no finding (they work), in input
        #: order, as ("pciHostDevices" or "mediatedDevices", the entry's scalar fields).
        self.working_entries: list[tuple[str, dict[str, Any]]] = []
        #: After :meth:`run`: how many permittedHostDevices blocks the input has.
        self.blocks = 0
        self.budget = HintBudget()
        self._advertised: Candidates | None = None
        #: The DRA driver and KubeVirt releases claims are checked for (None: the newest that work).
        self.dra = dra
        #: Why the KubeVirt release asked for cannot run DRA claims (None: it can).
        self.dra_refusal = dra_refusal
        #: ``--nvidia-plugin`` (:mod:`pciname.lint.plugin`), as its surface
        #: spells it (``option``), and what :meth:`run` takes of it.
        self.nvidia_plugin = parse_nvidia_plugin(nvidia_plugin)
        self.option = option
        self.presence = Presence(None)
        #: The KubeVirt release whose own plugin serves the entries without
        #: externalResourceProvider (None: the newest known).
        self.kubevirt = kubevirt
        #: ``--hami``: the HAMi release pods are checked against (None: not checked;
        #: an unknown release is a PcinameError naming the known ones).
        self.hami = _hami_release(hami)
        #: ``--hami`` as asked; :attr:`hami` is, from rule ``hami-pods`` on, the release
        #: in effect (a Cozystack tenant's ``addons.hami.enabled`` implies its release's).
        self.hami_asked = self.hami

    @property
    def docs(self) -> list[Doc]:
        """The run's documents, in input order."""
        return self._docs

    @property
    def duplicates(self) -> Duplicates:
        """The keys written twice in the run's mappings (mapping node id -> pairs)."""
        return self._duplicates

    def finding(
        self, doc: Doc, node: Node, path: YamlPath, code: str, expected: Any = None, value: Any = None, **facts: Any
    ) -> Finding:
        """A finding of ``code`` at ``node``; its message is the registry's
        (:data:`~pciname.lint.codes.CODES`) made of ``facts``."""
        mark = node.start_mark
        return Finding(
            file=doc.file,
            line=mark.line + 1,
            column=mark.column + 1,
            document=doc.index,
            path=format_path(path),
            value=node_value(node) if value is None else value,
            code=code,
            message=lint_codes.CODES[code].message(**facts),  # the registry as it is at the call
            expected=expected,
        )

    def names(self) -> dict[str, list[Resolution]]:
        """resource name -> resolutions of the devices with that name."""
        if self._name_index is None:
            names: dict[str, list[Resolution]] = {}
            for r in self.resolver.devices(self.profile):
                if r.resource_name is not None:
                    names.setdefault(r.resource_name, []).append(r)
            self._name_index = names
        return self._name_index

    def suggest(self, name: str) -> list[str]:
        """Up to three advertised names close to ``name`` (none when the run's hint budget is spent)."""
        if self._advertised is None:
            self._advertised = Candidates(
                n for n, rs in self.names().items() if is_nvidia(n) and any(r.advertised for r in rs)
            )
        return self._advertised.closest(name, self.budget) or []

    def name_problems(self, doc: Doc, node: Node, path: YamlPath, warnings: Iterable[NameWarning]) -> list[Finding]:
        return [
            self.finding(doc, node, path, w.code, warning=w.message)
            for w in warnings
            if w.code in (INVALID_RESOURCE_NAME, SOCKET_PATH_TOO_LONG)
        ]


class Rule(NamedTuple):
    """A rule of a lint run: its name (the ``rules`` of the codes it
    reports, :data:`pciname.lint.codes.CODES`) and its check, which reads
    and adds to the run's state."""

    name: RuleName
    check: Callable[[Context, RunState], None]


_REGISTRY: dict[RuleName, Rule] = {}


def rule(name: RuleName) -> Callable[[Callable[[Context, RunState], None]], Callable[[Context, RunState], None]]:
    """Register the decorated function as the check of rule ``name`` (once)."""

    def register(check: Callable[[Context, RunState], None]) -> Callable[[Context, RunState], None]:
        if name in _REGISTRY:
            raise ValueError(f"lint rule {name} is registered twice")
        _REGISTRY[name] = Rule(name, check)
        return check

    return register


def ordered() -> tuple[Rule, ...]:
    """Every registered rule in :class:`RuleName` order, the order a run
    applies them in (an entry's verdicts are what later rules check
    against), once :mod:`pciname.lint.linter` has imported the kinds'
    modules, which register them."""
    missing = [name for name in RuleName if name not in _REGISTRY]
    if missing:
        raise LookupError(f"lint rules without a check: {', '.join(missing)}")
    return tuple(_REGISTRY[name] for name in RuleName)
