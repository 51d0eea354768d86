"""The isolation verdict (pciname.hami.isolation) from the releases' HAMi-core
code and a C library's dynamic symbols: what glibc before and after 2.34 and
musl define, on x86-64 and arm64."""

from __future__ import annotations

from pciname.hami.isolation import CLibrary, judge
from pciname.hami.releases import release, releases


def _glibc(version: str, machine: str) -> CLibrary:
    base = {"x86_64": "GLIBC_2.2.5", "aarch64": "GLIBC_2.17"}[machine]
    old = tuple(int(part) for part in version.split(".")) < (2, 34)
    symbols = {"dlvsym": frozenset({base}), "dlsym": frozenset({base} if old else {base, "GLIBC_2.34"})}
    if old:
        symbols["_dl_sym"] = frozenset({"GLIBC_PRIVATE"})
    return CLibrary("/lib/libc.so.6", "glibc", version, machine, symbols)


MUSL = CLibrary("/lib/ld-musl-x86_64.so.1", "musl", "1.2.5", "x86_64", {"dlsym": frozenset({""})})


def test_glibc_before_2_34_exports_dl_sym_and_every_known_release_holds():
    for tag in releases()[:-1]:
        for machine in ("x86_64", "aarch64"):
            verdict = judge(release(tag), _glibc("2.31", machine))
            assert verdict.holds is True and "exports _dl_sym" in verdict.reasons[0], (tag, machine)


def test_musl_defines_no_dlvsym_and_no_release_holds():
    for tag in releases()[:-1]:
        verdict = judge(release(tag), MUSL)
        assert verdict.holds is False and "defines no dlvsym" in verdict.reasons[0], tag


def test_glibc_2_34_on_x86_64_fails_in_pre_init_until_v2_8_0():
    new = _glibc("2.35", "x86_64")
    verdict = judge(release("v2.7.1"), new)
    assert verdict.holds is False and verdict.sees is not None
    assert "undefined symbol: _dl_sym" in verdict.sees and "when preInit() runs before the dlsym hook" in verdict.sees
    assert len(verdict.reasons) == 1 and verdict.reasons[0].startswith("src/libvgpu.c:")
    assert "preInit() calls _dl_sym without trying dlvsym" in verdict.reasons[0]
    assert judge(release("v2.8.0"), new).holds is True
    assert judge(release("v2.8.1"), new).holds is True


def test_glibc_2_34_on_arm64_fails_in_the_dlsym_hook_until_v2_8_0_then_in_pre_init_until_v2_8_3():
    new = _glibc("2.35", "aarch64")
    every = judge(release("v2.7.1"), new)
    assert (
        every.holds is False
        and every.sees == "the process dies: symbol lookup error: libvgpu.so: undefined symbol: _dl_sym"
    )
    partial = judge(release("v2.8.1"), new)
    assert partial.holds is False and partial.sees is not None
    assert "when preInit(), load_nvml_libraries() runs before the dlsym hook" in partial.sees
    assert judge(release("v2.8.3"), new).holds is True
    assert "calls no _dl_sym" in judge(release("v2.9.0"), new).reasons[0]


def test_a_release_whose_hami_core_commit_is_unknown_is_not_judged():
    verdict = judge(release("v2.10.0"), _glibc("2.35", "x86_64"))
    assert verdict.holds is None and "not judged" in verdict.reasons[0]


def test_a_release_whose_hami_core_was_not_read_is_not_judged_and_says_the_inference():
    from pciname.hami.isolation import CLibrary, judge
    from pciname.hami.releases import release

    library = CLibrary("/lib/libc.so.6", "glibc", "2.36", "aarch64", {"dlvsym": frozenset({"GLIBC_2.17"})})
    verdict = judge(release("v2.10.0"), library)
    assert verdict.holds is None and verdict.sees is None
    assert verdict.reasons[0].endswith("the commit is not in the HAMi-core history pciname read; not judged")
    assert verdict.reasons[1].startswith("inferred (b216ba1 is not in Project-HAMi/HAMi-core as read;")
    assert "): the limits would hold: " in verdict.reasons[1]
