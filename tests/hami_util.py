"""C libraries the HAMi tests compile: glibc stand-ins whose version script
exports or lacks ``_dl_sym@GLIBC_PRIVATE`` (glibc before and from 2.34) and
a stand-in with musl's soname and no symbol versions."""

from __future__ import annotations

import subprocess

SOURCE = """
const char banner[] = "GNU C Library (stand-in) release version %s.\\n";
void *dlsym(void *handle, const char *name) { return (void *)banner; }
%s
"""
OLD_GLIBC = """GLIBC_2.2.5 { global: dlsym; dlvsym; local: *; };
GLIBC_PRIVATE { global: _dl_sym; } GLIBC_2.2.5;
"""
NEW_GLIBC = "GLIBC_2.2.5 { global: dlsym; dlvsym; local: *; };\n"


def compile_library(tmp_path, name, *, version, dl_sym, script, soname="libc.so.6", dlvsym=True):
    source = tmp_path / f"{name}.c"
    body = "void *dlvsym(void *h, const char *n, const char *v) { return 0; }\n" if dlvsym else ""
    body += "void *_dl_sym(void *h, const char *n, void *w) { return 0; }" if dl_sym else ""
    source.write_text(SOURCE % (version, body))
    command = ["gcc", "-shared", "-fPIC", "-nostdlib", f"-Wl,-soname,{soname}", "-o", str(tmp_path / name), str(source)]
    if script is not None:
        (tmp_path / f"{name}.map").write_text(script)
        command.insert(-1, f"-Wl,--version-script={tmp_path / f'{name}.map'}")
    subprocess.run(command, check=True, capture_output=True)
    return (tmp_path / name).read_bytes()
