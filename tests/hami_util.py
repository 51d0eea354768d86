"""C libraries the HAMi tests compile: glibc stand-ins whose version script
exports or lacks ``_dl_sym@GLIBC_PRIVATE`` (glibc before and from 2.34) and
a stand-in with musl's soname and no symbol versions; images of them
(a tar's bytes, a docker save tarball, an OCI layout tarball or directory)."""

from __future__ import annotations

import hashlib
import io
import json
import subprocess
import tarfile
from pathlib import Path

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


def libraries(where):
    """The three stand-ins by name: "old" (glibc 2.31, _dl_sym exported), "new" (2.36, none), "musl"."""
    return {
        "old": compile_library(where, "old.so", version="2.31", dl_sym=True, script=OLD_GLIBC),
        "new": compile_library(where, "new.so", version="2.36", dl_sym=False, script=NEW_GLIBC),
        "musl": compile_library(
            where, "musl.so", version="0", dl_sym=False, script=None, soname="libc.so", dlvsym=False
        ),
    }


def tar(members):
    """A tar's bytes from (name, bytes | ("link", target) | ("dir",) | ("chr",))."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, body in members:
            info = tarfile.TarInfo(name)
            if isinstance(body, bytes):
                info.size = len(body)
                archive.addfile(info, io.BytesIO(body))
                continue
            info.type = {"link": tarfile.SYMTYPE, "dir": tarfile.DIRTYPE, "chr": tarfile.CHRTYPE}[body[0]]
            info.linkname = body[1] if body[0] == "link" else ""
            archive.addfile(info)
    return buffer.getvalue()


def docker_save(path, layers):
    names = [f"layer{i}/layer.tar" for i in range(len(layers))]
    manifest = json.dumps([{"Config": "config.json", "RepoTags": ["t:1"], "Layers": names}]).encode()
    path.write_bytes(tar([("manifest.json", manifest), *zip(names, layers)]))
    return path


def oci_layout(path, layers, *, directory=False):
    """An OCI image layout of ``layers``: a tarball at ``path``, or with ``directory`` the directory itself."""
    blobs = {}

    def blob(data):
        digest = hashlib.sha256(data).hexdigest()
        blobs[f"blobs/sha256/{digest}"] = data
        return f"sha256:{digest}"

    manifest = json.dumps({"layers": [{"digest": blob(layer)} for layer in layers]}).encode()
    index = json.dumps({"manifests": [{"digest": blob(manifest)}]}).encode()
    files = [("oci-layout", b'{"imageLayoutVersion":"1.0.0"}'), ("index.json", index), *blobs.items()]
    if not directory:
        path.write_bytes(tar(files))
        return path
    for name, data in files:
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_bytes(data)
    return path


#: Debian bookworm's own C libraries (libc6 2.36-9+deb12u14, musl 1.2.3-1;
#: tests/data/debian-libc.tar.xz's PROVENANCE.json says where from).
DEBIAN_LIBC = Path(__file__).parent / "data" / "debian-libc.tar.xz"


def debian_libraries():
    """Member path -> bytes (a symlink as ("link", target)), read from the archive in memory."""
    found = {}
    with tarfile.open(DEBIAN_LIBC, "r:xz") as archive:
        for member in archive:
            if member.issym():
                found[member.name] = ("link", member.linkname)
            elif member.isfile():
                found[member.name] = archive.extractfile(member).read()
    return found
