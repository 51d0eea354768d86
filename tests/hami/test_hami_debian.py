"""image-check on Debian's own C libraries (libc6 2.36 and musl 1.2.3 from
bookworm's packages, tests/data/debian-libc.tar.xz): as a root filesystem,
a docker save tarball with several layers and whiteouts, and an OCI layout
tarball and directory."""

from __future__ import annotations

import json

import pytest

from pciname.hami.image import c_library, open_image
from tests.cli_run import pciname
from tests.hami_util import debian_libraries, docker_save, oci_layout, tar

LIBC = "lib/x86_64-linux-gnu/libc.so.6"
LIBDL = "lib/x86_64-linux-gnu/libdl.so.2"
MUSL = "lib/x86_64-linux-musl/libc.so"
LOADER = "lib/ld-musl-x86_64.so.1"


@pytest.fixture(scope="module")
def debian():
    return debian_libraries()


def _glibc_layer(debian):
    return tar([(LIBC, debian["libc6/" + LIBC]), (LIBDL, debian["libc6/" + LIBDL])])


def _musl_layer(debian):
    # musl's loader is a link to its libc.so, as the package installs it.
    return tar([(MUSL, debian["musl/" + MUSL]), (LOADER, ("link", "x86_64-linux-musl/libc.so"))])


@pytest.fixture(scope="module")
def images(tmp_path_factory, debian):
    where = tmp_path_factory.mktemp("debian")
    glibc, musl = _glibc_layer(debian), _musl_layer(debian)
    rootfs = where / "glibc-rootfs"
    (rootfs / LIBC).parent.mkdir(parents=True)
    (rootfs / LIBC).write_bytes(debian["libc6/" + LIBC])
    (where / "oci-dir").mkdir()
    return {
        "glibc-rootfs": rootfs,
        "glibc-docker": docker_save(where / "glibc.tar", [tar([("etc/debian_version", b"12.13\n")]), glibc]),
        "glibc-oci-tar": oci_layout(where / "glibc-oci.tar", [glibc]),
        "glibc-oci-dir": oci_layout(where / "oci-dir", [glibc], directory=True),
        "musl": docker_save(where / "musl.tar", [tar([("etc/alpine-release", b"3.20\n")]), musl]),
        # musl, glibc, then a layer whose whiteout removes musl's loader: the image is glibc's.
        "glibc-over-musl": docker_save(where / "both.tar", [musl, glibc, tar([("lib/.wh.ld-musl-x86_64.so.1", b"")])]),
    }


@pytest.mark.parametrize("form", ["glibc-rootfs", "glibc-docker", "glibc-oci-tar", "glibc-oci-dir", "glibc-over-musl"])
def test_debian_glibc_2_36_in_every_form(images, form):
    library = c_library(open_image(images[form]))
    assert (library.kind, library.version, library.machine, library.path) == ("glibc", "2.36", "x86_64", "/" + LIBC)
    assert not library.defines("_dl_sym")  # glibc 2.34 and later do not export it
    ran = pciname("image-check", str(images[form]), "--hami", "v2.7.1", "-o", "json")
    assert (ran.code, ran.err) == (1, "")
    assert json.loads(ran.out)["sees"].startswith("the process dies: symbol lookup error: libvgpu.so: undefined symbol")


@pytest.mark.parametrize(("hami", "code"), [("v2.4.0", 1), ("v2.8.1", 0), ("v2.9.0", 0), ("v2.10.0", 1)])
def test_debian_glibc_2_36_under_each_release_line(images, hami, code):
    ran = pciname("image-check", str(images["glibc-docker"]), "--hami", hami, "-o", "json")
    assert (ran.code, ran.err) == (code, "")
    assert json.loads(ran.out)["holds"] is {"v2.10.0": None}.get(hami, code == 0)


def test_debian_musl_behind_its_loader_link(images):
    library = c_library(open_image(images["musl"]))
    assert (library.kind, library.path) == ("musl", "/" + LOADER)
    assert not library.defines("dlvsym")
    ran = pciname("image-check", str(images["musl"]), "--hami", "v2.9.0")
    assert ran.code == 1
    assert ran.out.splitlines()[1] == f"C library: musl (x86_64, /{LOADER})"
    assert ran.out.splitlines()[-1] == (
        "the workload sees: libvgpu.so cannot be bound: the workload does not run under HAMi-core's limits"
    )


def test_the_archive_says_where_its_files_come_from(debian):
    provenance = json.loads(debian["PROVENANCE.json"])
    assert [(p["package"], p["version"]) for p in provenance["packages"]] == [
        ("libc6", "2.36-9+deb12u14"),
        ("musl", "1.2.3-1"),
    ]
