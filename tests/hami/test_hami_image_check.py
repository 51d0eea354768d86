"""``pciname image-check`` and the ImageCheck RPC (pciname.capabilities.image_check):
the verdict on images built here from compiled C libraries, as a root
filesystem, a docker save tarball, an OCI layout tarball and directory; exit
0 / 1 / 2 on the CLI, the same verdict and INVALID_ARGUMENT over a loopback
gRPC server."""

from __future__ import annotations

import json

import grpc
import pytest

from pciname.capabilities.image_check import ImageCheckRequest, answer
from pciname.client import RemoteInvalidArgument
from pciname.requests.spelling import RequestError, Spelling
from tests.cli_run import pciname
from tests.hami_util import docker_save, libraries as compile_libraries, oci_layout, tar

LIBC = "lib/x86_64-linux-gnu/libc.so.6"
DIES = "the process dies: symbol lookup error: libvgpu.so: undefined symbol: _dl_sym"


@pytest.fixture(scope="module")
def libraries(tmp_path_factory):
    return compile_libraries(tmp_path_factory.mktemp("libc"))


@pytest.fixture(scope="module")
def images(tmp_path_factory, libraries):
    """An image of each C library in each form pciname reads, by (library, form)."""
    where = tmp_path_factory.mktemp("images")
    made = {}
    for name, data in libraries.items():
        place = "lib/ld-musl-x86_64.so.1" if name == "musl" else LIBC
        rootfs = where / f"{name}-rootfs"
        (rootfs / place).parent.mkdir(parents=True)
        (rootfs / place).write_bytes(data)
        layers = [tar([("etc/hostname", b"x\n")]), tar([(place, data)])]
        (where / f"{name}-oci").mkdir()
        made[name, "rootfs"] = rootfs
        made[name, "docker"] = docker_save(where / f"{name}-docker.tar", layers)
        made[name, "oci-tar"] = oci_layout(where / f"{name}-oci.tar", layers)
        made[name, "oci-dir"] = oci_layout(where / f"{name}-oci", layers, directory=True)
    return made


FORMS = ("rootfs", "docker", "oci-tar", "oci-dir")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    ("library", "hami", "code"),
    [
        ("old", "v2.7.1", 0),  # glibc 2.31 exports _dl_sym: the fallback resolves
        ("new", "v2.7.1", 1),  # glibc 2.36 without _dl_sym under HAMi-core 8be6d90
        ("new", "v2.8.1", 0),  # 7fa7c0d + 85c9055: dlvsym GLIBC_2.2.5 first on x86-64
        ("musl", "v2.9.0", 1),  # no dlvsym: libvgpu.so cannot be bound
    ],
)
def test_the_verdict_in_every_form_of_image(images, library, hami, code, form):
    result = pciname("image-check", str(images[library, form]), "--hami", hami, "-o", "json")
    assert (result.code, result.err) == (code, "")
    verdict = json.loads(result.out)
    assert verdict["holds"] is (code == 0) and verdict["hami"] == hami
    assert verdict["library"]["kind"] == ("musl" if library == "musl" else "glibc")
    if library == "new" and code == 1:
        assert verdict["sees"].startswith(DIES)


def test_the_text_says_the_verdict_why_and_what_the_workload_sees(images):
    code, out, err = pciname("image-check", str(images["new", "docker"]), "--hami", "hami@v2.4.0")
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == f"{images['new', 'docker']}: the limits do not hold under HAMi v2.4.0 (HAMi-core fb11ec3)"
    assert lines[1] == f"C library: glibc 2.36 (x86_64, /{LIBC})"
    assert lines[-1].startswith(f"the workload sees: {DIES}")
    assert any(line.startswith("because: ") and "_dl_sym" in line for line in lines)


def test_a_release_whose_hami_core_is_not_known_is_not_clean(images):
    code, out, _ = pciname("image-check", str(images["new", "rootfs"]), "--hami", "v2.10.0")
    assert code == 1 and "not judged under HAMi v2.10.0" in out.splitlines()[0]


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (["/no/such/image", "--hami", "v2.8.1"], "pciname: error: /no/such/image: no such image file or directory"),
        (["{new}", "--hami", "v1.0.0"], "pciname: error: HAMi 'v1.0.0' is not a release pciname knows"),
        (["{bad}", "--hami", "v2.8.1"], "pciname: error: {bad}: layer0/layer.tar: member '../../etc/passwd' leaves"),
        (["{loop}", "--hami", "v2.8.1"], "pciname: error: lib/x86_64-linux-gnu/libc.so.6: more than 40 symlinks"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, images, argv, line):
    paths = {
        "new": str(images["new", "rootfs"]),
        "bad": str(docker_save(tmp_path / "bad.tar", [tar([("../../etc/passwd", b"x")])])),
        "loop": str(
            docker_save(tmp_path / "loop.tar", [tar([(LIBC, ("link", "/lib/a")), ("lib/a", ("link", "/" + LIBC))])])
        ),
    }
    code, out, err = pciname("image-check", *[a.format(**paths) for a in argv])
    assert (code, out) == (2, "")
    assert err.startswith(line.format(**paths)) and err.count("\n") == 1, err


def test_a_link_out_of_an_oci_layout_directory_is_not_followed(tmp_path, images):
    layout = oci_layout(tmp_path / "oci", [tar([("etc/x", b"x")])], directory=True)
    index = json.loads((layout / "index.json").read_text())
    manifest = layout / "blobs" / index["manifests"][0]["digest"].replace(":", "/")
    outside = tmp_path / "outside.json"
    outside.write_bytes(manifest.read_bytes())
    manifest.unlink()
    manifest.symlink_to(outside)
    code, out, err = pciname("image-check", str(layout), "--hami", "v2.8.1")
    assert (code, out) == (2, "") and "a manifest pciname cannot read" in err


def test_the_request_takes_an_image_and_a_known_release():
    with pytest.raises(RequestError) as caught:
        ImageCheckRequest(hami="v2.8.1").validated()
    assert caught.value.spelled(Spelling.RPC) == "empty request: no tarball given"
    assert str(caught.value) == "no image given (IMAGE)"
    assert ImageCheckRequest("/x", "hami@2.8.1").validated().hami == "v2.8.1"


def test_the_rpc_answers_what_the_cli_prints(client, images):
    tarball = images["new", "oci-tar"].read_bytes()
    for hami in ("v2.7.1", "v2.8.1"):
        remote = client.image_check(tarball, hami)
        local = answer(ImageCheckRequest(tarball, hami).validated())
        assert (remote.holds, remote.reasons, remote.sees, remote.library) == (
            local.holds,
            list(local.reasons),
            local.sees,
            local.library,
        )
    assert client.image_check(tarball, "v2.7.1").holds is False
    assert client.image_check(images["musl", "docker"].read_bytes(), "v2.9.0").library["kind"] == "musl"


@pytest.mark.parametrize(
    ("fields", "details"),
    [
        ({"hami": "v2.8.1"}, "empty request: no tarball given"),
        ({"tarball": b"\x00not a tar" * 64, "hami": "v2.8.1"}, "the image tarball: not a tar"),
        ({"tarball": b"x", "hami": "v3"}, "HAMi 'v3' is not a release pciname knows"),
    ],
)
def test_the_rpc_refuses_bad_input_with_invalid_argument(stub, fields, details):
    from pciname.server._proto import pciname_pb2 as pb

    with pytest.raises(grpc.RpcError) as caught:
        stub.ImageCheck(pb.ImageCheckRequest(**fields), timeout=30)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert caught.value.details().startswith(details)


def test_the_client_raises_its_invalid_argument(client):
    with pytest.raises(RemoteInvalidArgument, match="not a tar"):
        client.image_check(b"junk" * 100, "v2.8.1")
