"""Whether HAMi-core's limits hold in a workload, judged from the C library
the workload's image would load and the HAMi release's HAMi-core code
(:mod:`pciname.hami.releases`).

HAMi-core (``libvgpu.so``, preloaded into the workload) replaces ``dlsym``
and must find the real one. Each function that looks it up
(``DlsymLookup``) tries ``dlvsym(RTLD_NEXT, "dlsym", VERSION)`` for its
versions, in order, and, before HAMi-core 70fdbc1, then calls glibc's
private ``_dl_sym``. So, from the code and the library's own dynamic symbol
table alone:

* a library that defines no ``dlvsym`` (musl) cannot bind HAMi-core at all;
* a library that exports ``_dl_sym`` (glibc before 2.34) satisfies the
  fallback: the limits hold;
* otherwise a lookup none of whose versions the library defines ``dlsym``
  with reaches the missing ``_dl_sym``. ``libvgpu.so`` is linked lazily
  (no ``-z now`` in HAMi-core's CMakeLists.txt), so the process dies at that
  call with glibc's "symbol lookup error: ... undefined symbol: _dl_sym".
  The ``dlsym`` hook's lookup runs in every workload that calls ``dlsym``
  (the CUDA runtime does, to load the driver); ``preInit`` and
  ``load_nvml_libraries`` run their own only when they run before it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from pciname.hami.releases import DlsymLookup, Release

#: The HAMi-core commit that replaced the _dl_sym fallback (with dlopen("libc.so.6")).
DL_SYM_REMOVED = "70fdbc1fe28598b1ea8746b26d87ff26b68c7e31"
#: The lookup that runs whenever the workload calls dlsym.
DLSYM_HOOK = "dlsym"


@dataclass(frozen=True)
class CLibrary:
    """The C library an image's programs load, as its dynamic symbol table says.

    ``symbols`` maps each defined dynamic symbol to the versions it is
    defined with ("" for an unversioned one); for glibc before 2.34 it holds
    ``libdl.so.2``'s too, where ``dlsym`` and ``dlvsym`` lived."""

    path: str
    kind: str  # "glibc", "musl" or "unknown"
    version: str | None
    machine: str
    symbols: Mapping[str, frozenset[str]]

    def defines(self, name: str, version: str | None = None) -> bool:
        versions = self.symbols.get(name)
        return versions is not None and (version is None or version in versions)

    def describe(self) -> str:
        spelled = {"glibc": "glibc", "musl": "musl"}.get(self.kind, "an unknown C library")
        return f"{spelled}{' ' + self.version if self.version else ''} ({self.machine}, {self.path})"


@dataclass(frozen=True)
class Verdict:
    """Whether the limits hold (None: the release's HAMi-core code is not known),
    why, and what the workload sees when they do not."""

    holds: bool | None
    reasons: tuple[str, ...]
    sees: str | None = None


def _reaches_dl_sym(lookup: DlsymLookup, library: CLibrary) -> bool:
    return lookup.falls_back_to_dl_sym and not any(library.defines("dlsym", v) for v in lookup.versions)


def _why(lookup: DlsymLookup, library: CLibrary) -> str:
    where = f"{lookup.path}:{lookup.line} {lookup.function}()"
    if not lookup.versions:
        return f"{where} calls _dl_sym without trying dlvsym, and {library.describe()} does not export _dl_sym"
    return (
        f"{where} tries dlvsym with {', '.join(lookup.versions)}, none a version {library.describe()} defines dlsym "
        "with, then calls _dl_sym, which it does not export"
    )


def judge(release: Release, library: CLibrary) -> Verdict:
    """The verdict for a workload on ``library`` under HAMi ``release``."""
    core = f"HAMi {release.release}'s HAMi-core ({release.libvgpu_commit[:7]})"
    if release.dlsym_lookups is None:
        not_read = f"{core}: the commit is not in the HAMi-core history pciname read; not judged"
        if release.inferred is None:
            return Verdict(None, (not_read,))
        inferred = judge(replace(release, dlsym_lookups=release.inferred.lookups, inferred=None), library)
        said = {True: "the limits would hold", False: "the limits would not hold", None: "not judged"}[inferred.holds]
        return Verdict(
            None, (not_read, f"inferred ({release.inferred.evidence}): {said}: {'; '.join(inferred.reasons)}")
        )
    if not library.defines("dlvsym"):
        return Verdict(
            False,
            (f"{library.describe()} defines no dlvsym, which {core} calls to find the real dlsym",),
            "libvgpu.so cannot be bound: the workload does not run under HAMi-core's limits",
        )
    if library.defines("_dl_sym"):
        return Verdict(True, (f"{library.describe()} exports _dl_sym: {core}'s fallback resolves",))
    reached = [lookup for lookup in release.dlsym_lookups if _reaches_dl_sym(lookup, library)]
    if not reached:
        why = (
            "calls no _dl_sym"
            if not any(x.falls_back_to_dl_sym for x in release.dlsym_lookups)
            else ("finds dlsym by dlvsym before any _dl_sym fallback")
        )
        return Verdict(True, (f"{core} {why} on {library.describe()}",))
    reasons = tuple(_why(lookup, library) for lookup in reached)
    every = any(lookup.function == DLSYM_HOOK for lookup in reached)
    sees = "the process dies: symbol lookup error: libvgpu.so: undefined symbol: _dl_sym" + (
        "" if every else f" (when {', '.join(x.function + '()' for x in reached)} runs before the dlsym hook)"
    )
    return Verdict(False, reasons, sees)
