"""Images read offline (pciname.hami.image): root filesystems, docker-save
tarballs with several layers and whiteouts, an OCI layout tarball, each with a
C library compiled here (glibc stand-ins with and without _dl_sym, a musl
stand-in), and hostile tarballs: one line each, nothing written."""

from __future__ import annotations

import os

import pytest

from pciname.hami.image import ImageError, c_library, open_image
from pciname.hami.isolation import judge
from pciname.hami.releases import release
from tests.hami_util import NEW_GLIBC, OLD_GLIBC, compile_library, docker_save, oci_layout, tar as _tar

LIBC = "lib/x86_64-linux-gnu/libc.so.6"


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    where = tmp_path_factory.mktemp("libc")
    return {
        "old": compile_library(where, "old.so", version="2.31", dl_sym=True, script=OLD_GLIBC),
        "new": compile_library(where, "new.so", version="2.36", dl_sym=False, script=NEW_GLIBC),
        "musl": compile_library(
            where, "musl.so", version="0", dl_sym=False, script=None, soname="libc.so", dlvsym=False
        ),
    }


def test_a_root_filesystem_with_the_library_behind_symlinks(tmp_path, libraries):
    (tmp_path / "opt").mkdir()
    (tmp_path / "opt" / "libc-2.36.so").write_bytes(libraries["new"])
    (tmp_path / "lib" / "x86_64-linux-gnu").mkdir(parents=True)
    # An absolute link resolves inside the image, never on the host.
    os.symlink("/opt/libc-2.36.so", tmp_path / LIBC)
    library = c_library(open_image(tmp_path))
    assert (library.kind, library.version, library.path) == ("glibc", "2.36", "/" + LIBC)
    assert judge(release("v2.7.1"), library).holds is False
    assert judge(release("v2.9.0"), library).holds is True


def test_a_docker_save_whose_later_layer_whites_out_glibc_for_musl(tmp_path, libraries):
    first = _tar([("lib/", ("dir",)), ("lib/x86_64-linux-gnu/", ("dir",)), (LIBC, libraries["old"])])
    assert c_library(open_image(docker_save(tmp_path / "one.tar", [first]))).version == "2.31"
    second = _tar([("lib/x86_64-linux-gnu/.wh.libc.so.6", b""), ("lib/ld-musl-x86_64.so.1", libraries["musl"])])
    library = c_library(open_image(docker_save(tmp_path / "two.tar", [first, second])))
    assert library.kind == "musl" and judge(release("v2.9.0"), library).holds is False


def test_an_opaque_whiteout_then_a_new_glibc(tmp_path, libraries):
    first = _tar([(LIBC, libraries["old"]), ("lib/x86_64-linux-gnu/libdl.so.2", libraries["old"])])
    second = _tar([("lib/x86_64-linux-gnu/.wh..wh..opq", b""), (LIBC, libraries["new"])])
    tree = open_image(docker_save(tmp_path / "img.tar", [first, second]))
    assert tree.read("lib/x86_64-linux-gnu/libdl.so.2") is None
    assert c_library(tree).version == "2.36"


def test_an_oci_layout_tarball(tmp_path, libraries):
    layer = _tar([(LIBC, libraries["new"])])
    library = c_library(open_image(oci_layout(tmp_path / "oci.tar", [layer])))
    assert library.version == "2.36" and judge(release("v2.8.1"), library).holds is True


@pytest.mark.parametrize(
    ("members", "message"),
    [
        ([("../../etc/passwd", b"x")], "leaves the image's root"),
        ([("dev/sda", ("chr",))], "is a device or FIFO"),
    ],
)
def test_hostile_layers_are_one_line(tmp_path, members, message):
    with pytest.raises(ImageError, match=message):
        open_image(docker_save(tmp_path / "bad.tar", [_tar(members)]))


def test_a_link_loop_and_a_layer_that_is_not_a_tar(tmp_path):
    loop = _tar([(LIBC, ("link", "/lib/a")), ("lib/a", ("link", "/" + LIBC))])
    tree = open_image(docker_save(tmp_path / "loop.tar", [loop]))
    with pytest.raises(ImageError, match="more than 40 symlinks"):
        c_library(tree)
    with pytest.raises(ImageError, match="a layer that is not a tar"):
        open_image(docker_save(tmp_path / "junk.tar", [b"\x00not a tar" * 100]))
    (tmp_path / "plain.tar").write_bytes(_tar([("a", b"b")]))
    with pytest.raises(ImageError, match="neither a docker save tarball"):
        open_image(tmp_path / "plain.tar")
