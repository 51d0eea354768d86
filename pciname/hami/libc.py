"""What a C library's own ELF file says about it (pyelftools reads it): its
machine, the dynamic symbols it defines with their versions (``.dynsym``,
``.gnu.version``, ``.gnu.version_d``), and whether it is glibc (it defines
``GLIBC_*`` versions; its release from the library's banner, "release version
X.Y") or musl (soname ``libc.so``, no symbol versions). Input that is not an
ELF shared library is a :class:`~pciname.errors.PcinameError` in one line."""

from __future__ import annotations

import io
import re

from elftools.common.exceptions import ELFError
from elftools.elf.dynamic import DynamicSection
from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerDefSection, GNUVerSymSection
from elftools.elf.sections import SymbolTableSection

from pciname.errors import PcinameError
from pciname.hami.isolation import CLibrary

MACHINES = {"EM_X86_64": "x86_64", "EM_AARCH64": "aarch64"}
#: glibc's banner (csu/version.c): "GNU C Library (...) release version 2.36."
_BANNER = re.compile(rb"GNU C Library [^\n]*?release version (\d+\.\d+(?:\.\d+)?)")
#: A string in musl's libc.so, which is also its dynamic linker (the start of
#: the loader's usage message; observed in Debian's musl 1.2.3-1 libc.so,
#: tests/data/debian-libc.tar.xz). Debian's musl sets no soname, so this tells it.
_MUSL_BANNER = b"musl libc ("
_HIDDEN = 0x8000


def _version_names(elf: ELFFile) -> dict[int, str]:
    section = elf.get_section_by_name(".gnu.version_d")
    if not isinstance(section, GNUVerDefSection):
        return {}
    return {int(verdef["vd_ndx"]): next(aux).name for verdef, aux in section.iter_versions()}


def _soname(elf: ELFFile) -> str | None:
    for section in elf.iter_sections():
        if isinstance(section, DynamicSection):
            for tag in section.iter_tags():
                if tag.entry.d_tag == "DT_SONAME":
                    return str(getattr(tag, "soname", ""))
    return None


def defined_symbols(elf: ELFFile) -> dict[str, frozenset[str]]:
    """Each defined dynamic symbol and the versions it is defined with ("" unversioned)."""
    table = elf.get_section_by_name(".dynsym")
    if not isinstance(table, SymbolTableSection):
        return {}
    versym = elf.get_section_by_name(".gnu.version")
    names = _version_names(elf)
    found: dict[str, set[str]] = {}
    for index, symbol in enumerate(table.iter_symbols()):
        if not symbol.name or symbol["st_shndx"] == "SHN_UNDEF":
            continue
        version = ""
        if isinstance(versym, GNUVerSymSection):
            ndx = versym.get_symbol(index).entry["ndx"]
            version = names.get(ndx & ~_HIDDEN, "") if isinstance(ndx, int) else ""
        found.setdefault(symbol.name, set()).add(version)
    return {name: frozenset(versions) for name, versions in found.items()}


def defined_symbols_of(data: bytes) -> dict[str, frozenset[str]]:
    """:func:`defined_symbols` of an ELF file's bytes ({} when it is not ELF)."""
    try:
        return defined_symbols(ELFFile(io.BytesIO(data)))
    except (ELFError, ValueError, KeyError, OSError):
        return {}


def read_library(path: str, data: bytes, extra: dict[str, frozenset[str]] | None = None) -> CLibrary:
    """The :class:`CLibrary` of ``data``, the file at ``path`` in an image;
    ``extra`` adds another library's symbols (glibc's libdl before 2.34)."""
    try:
        elf = ELFFile(io.BytesIO(data))
        machine = MACHINES.get(str(elf["e_machine"]), str(elf["e_machine"]))
        symbols = defined_symbols(elf)
        soname = _soname(elf)
    except (ELFError, ValueError, KeyError, OSError) as error:
        raise PcinameError(f"{path}: not an ELF shared library pciname can read ({error})") from None
    for name, versions in (extra or {}).items():
        symbols[name] = symbols.get(name, frozenset()) | versions
    glibc = any(v.startswith("GLIBC_2.") for versions in symbols.values() for v in versions)
    if glibc:
        banner = _BANNER.search(data)
        return CLibrary(path, "glibc", banner.group(1).decode() if banner else None, machine, symbols)
    kind = "musl" if soname == "libc.so" or _MUSL_BANNER in data else "unknown"
    return CLibrary(path, kind, None, machine, symbols)
