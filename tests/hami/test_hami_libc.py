"""A C library's ELF facts (pciname.hami.libc, read with pyelftools): stand-ins
compiled here with a version script that exports or lacks
``_dl_sym@GLIBC_PRIVATE`` (glibc before and from 2.34), one with musl's soname
and no versions, and input that is not ELF."""

from __future__ import annotations

import pytest

from pciname.errors import PcinameError
from pciname.hami.isolation import judge
from pciname.hami.libc import read_library
from pciname.hami.releases import release
from tests.hami_util import NEW_GLIBC, OLD_GLIBC, compile_library


def test_a_glibc_before_2_34_stand_in_exports_dl_sym_and_holds(tmp_path):
    data = compile_library(tmp_path, "old.so", version="2.31", dl_sym=True, script=OLD_GLIBC)
    library = read_library("/lib/x86_64-linux-gnu/libc.so.6", data)
    assert (library.kind, library.version, library.machine) == ("glibc", "2.31", "x86_64")
    assert library.symbols["_dl_sym"] == {"GLIBC_PRIVATE"} and library.symbols["dlsym"] == {"GLIBC_2.2.5"}
    assert judge(release("v2.4.0"), library).holds is True


def test_a_glibc_stand_in_without_dl_sym_breaks_v2_7_1_and_holds_under_v2_8_1(tmp_path):
    data = compile_library(tmp_path, "new.so", version="2.36", dl_sym=False, script=NEW_GLIBC)
    library = read_library("/lib/x86_64-linux-gnu/libc.so.6", data)
    assert library.version == "2.36" and not library.defines("_dl_sym")
    broken = judge(release("v2.7.1"), library)
    assert broken.holds is False and broken.sees is not None and "undefined symbol: _dl_sym" in broken.sees
    assert judge(release("v2.8.1"), library).holds is True


def test_a_library_with_musls_soname_and_no_dlvsym_is_musl_and_not_bound(tmp_path):
    data = compile_library(tmp_path, "musl.so", version="0", dl_sym=False, script=None, soname="libc.so", dlvsym=False)
    musl = read_library("/lib/ld-musl-x86_64.so.1", data)
    assert musl.kind == "musl" and musl.symbols["dlsym"] == {""} and not musl.defines("dlvsym")
    for tag in ("v2.4.0", "v2.8.1", "v2.9.0"):
        verdict = judge(release(tag), musl)
        assert verdict.holds is False and "defines no dlvsym" in verdict.reasons[0], tag


def test_input_that_is_not_elf_is_one_line():
    with pytest.raises(PcinameError, match=r"^/lib/libc.so.6: not an ELF shared library pciname can read \("):
        read_library("/lib/libc.so.6", b"#!/bin/sh\necho not a library\n")
