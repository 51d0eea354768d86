"""``pciname audit --hami RELEASE``: HAMi in a tenant cluster, its Nodes and
Pods read by the real kubernetes client from the fake API server (paged, the
Pods not done asked for by field selector) and judged by
:func:`pciname.hami.audit.audit_hami`, whose report the command prints. The
plugin pods' labels are HAMi's chart's and the GPU Operator's (named in
:mod:`pciname.hami.audit`); docs/hami.md's transcript is replayed here."""

from __future__ import annotations

import json
import shlex

import pytest

from pciname.cluster import kube
from pciname.hami.audit import audit_hami
from pciname.hami.releases import release
from tests.cli_run import pciname as run
from tests.conftest import REPO
from tests.fake_kube import FakeKube, node, pod
from tests.hami_util import NEW_GLIBC, compile_library, docker_save, tar

HAMI = {"app.kubernetes.io/component": "hami-device-plugin"}
NVIDIA = {"app": "nvidia-device-plugin-daemonset"}
GPU_MEM = {"nvidia.com/gpu": "1", "nvidia.com/gpumem": "4096"}
TRAIN = "pytorch/pytorch:2.5.1-cuda12.4-cudnn9-runtime"


#: What HAMi v2.8.1's device plugin writes on a node of two GPUs (MarshalNodeDevices' JSON).
REGISTERED = json.dumps(
    [
        {
            "id": f"GPU-{i}",
            "count": 10,
            "devmem": 23028,
            "devcore": 100,
            "type": "NVIDIA-NVIDIA A10",
            "numa": 0,
            "mode": "hami-core",
            "health": True,
            "index": i,
        }
        for i in range(2)
    ]
)


def nodes() -> list[dict]:
    served = node("gpu-1", {"nvidia.com/gpu": "20"}, labels={"gpu": "on"})
    served["metadata"]["annotations"] = {"hami.io/node-nvidia-register": REGISTERED}
    return [
        served,
        node("gpu-2", {"nvidia.com/gpu": "4"}),
        node("cpu-1", {}),
    ]


def pods() -> list[dict]:
    return [
        pod("hami-device-plugin-x", "gpu-1", HAMI, image="docker.io/projecthami/hami:v2.8.1", namespace="cozy-hami"),
        pod("nvidia-device-plugin-daemonset-y", "gpu-1", NVIDIA, image="nvcr.io/nvidia/k8s-device-plugin:v0.17.0"),
        pod("train", "gpu-2", image=TRAIN, limits=GPU_MEM),
        pod("fine", "gpu-1", image=TRAIN, limits=GPU_MEM),
        pod("web", "cpu-1"),
        pod("big", "", image=TRAIN, limits={"nvidia.com/gpu": "4"}),
    ]


@pytest.fixture(scope="module")
def fake():
    server = FakeKube(nodes=nodes(), pods=pods()).start()
    yield server
    server.stop()


def audit(fake, tmp_path, *argv):
    return run("audit", "--hami", *argv, "--timeout", "900", "--kubeconfig", fake.kubeconfig(tmp_path))


def test_the_report_is_the_models_on_the_objects_the_cluster_holds(fake, tmp_path):
    code, out, err = audit(fake, tmp_path, "hami@v2.8.1", "-o", "json")
    assert (code, err) == (1, "")
    assert json.loads(out) == audit_hami(release("v2.8.1"), nodes(), pods())
    asked = [r for r in fake.requests if r.path == "/api/v1/pods"][-1]
    assert asked.query["fieldSelector"] == ["status.phase!=Succeeded,status.phase!=Failed"]
    assert asked.query["limit"] == [str(kube.POD_PAGE)]


def test_pods_are_read_a_page_at_a_time(fake, tmp_path, monkeypatch):
    monkeypatch.setattr(kube, "POD_PAGE", 2)
    before = len([r for r in fake.requests if r.path == "/api/v1/pods"])
    code, out, _ = audit(fake, tmp_path, "v2.8.1", "-o", "json")
    assert code == 1
    assert len([r for r in fake.requests if r.path == "/api/v1/pods"]) - before == 3  # 6 pods, 2 a page
    assert [p["code"] for p in json.loads(out)["problems"]] == [
        "both-device-plugins",
        "gpu-node-not-served",
        "hami-pod-not-served",
        "hami-count-unfit",
    ]


def test_a_cluster_hami_serves_cleanly(tmp_path):
    clean = FakeKube(nodes=nodes()[:1], pods=[pods()[0], pods()[3]]).start()
    try:
        code, out, err = audit(clean, tmp_path, "v2.8.1")
    finally:
        clean.stop()
    assert (code, err) == (0, "")
    assert out.splitlines() == [
        "HAMi v2.8.1: its device plugin runs on nodes with gpu=on",
        "served: gpu-1 (2 GPUs)",
        "HAMi images running: v2.8.1",
        "",
        "no findings",
        "",
        "IMAGE                                          PODS           LIMITS (image-check)",
        f"{TRAIN}  tenant-a/fine  - (no --image)",
    ]


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["v2.8.1", "--profile", "latest"],
            "audit --hami takes no --profile, no --kubevirt and no --dra: HAMi's names are its chart's",
        ),
        (
            ["v2.8.1", "--dra"],
            "audit --hami takes no --profile, no --kubevirt and no --dra: HAMi's names are its chart's",
        ),
        (["v9.9.9"], "HAMi 'v9.9.9' is not a release pciname knows (final tags v2.4.0 to v2.10.0)"),
        ([""], "no HAMi release given (--hami RELEASE)"),
    ],
)
def test_what_audit_hami_refuses_before_reading(fake, tmp_path, argv, line):
    before = len(fake.requests)
    code, out, err = audit(fake, tmp_path, *argv)
    assert (code, out, err) == (2, "", f"pciname: error: {line}\n")
    assert len(fake.requests) == before


def test_a_pod_without_the_shape_read_is_one_line(tmp_path):
    bad = pod("train", "gpu-1", limits=GPU_MEM)
    bad["spec"]["containers"] = "main"
    broken = FakeKube(nodes=nodes(), pods=[bad]).start()
    try:
        code, out, err = audit(broken, tmp_path, "v2.8.1")
    finally:
        broken.stop()
    assert (code, out) == (2, "")
    assert err == (
        "pciname: error: cannot list pods: the API server sent PodList items (from 0)[0].spec.containers: "
        "expected a list, got a string\n"
    )


def test_docs_transcript_replays(fake, tmp_path, glibc_236):
    """docs/hami.md's ``audit --hami`` transcript, against the cluster above, with its app.tar."""
    text = (REPO / "docs" / "hami.md").read_text(encoding="utf-8")
    block = text.split("```\n$ pciname audit --hami", 1)[1].split("```", 1)[0]
    command, *shown = ("$ pciname audit --hami" + block).rstrip("\n").split("\n")
    argv = shlex.split(command[2:].removesuffix("; echo $?"))
    (tmp_path / "app.tar").write_bytes(glibc_236.read_bytes())
    kubeconfig = fake.kubeconfig(tmp_path)
    code, out, err = run(*argv[1:], "--timeout", "900", "--kubeconfig", kubeconfig, cwd=tmp_path)
    assert err == ""
    assert [*out.splitlines(), str(code)] == shown


@pytest.fixture(scope="module")
def glibc_236(tmp_path_factory):
    """A docker save tarball whose glibc 2.36 stand-in exports no _dl_sym (tests/hami_util.py)."""
    where = tmp_path_factory.mktemp("image")
    libc = compile_library(where, "libc.so.6", version="2.36", dl_sym=False, script=NEW_GLIBC)
    return docker_save(where / "app.tar", [tar([("lib/x86_64-linux-gnu/libc.so.6", libc)])])


@pytest.mark.parametrize(("hami", "holds"), [("v2.7.1", False), ("v2.8.1", True)])
def test_an_image_given_gets_the_image_checks_verdict_on_its_pods(fake, tmp_path, glibc_236, hami, holds):
    code, out, err = audit(
        fake, tmp_path, hami, "--image", f"{TRAIN}={glibc_236}", "--image", f"other:1={glibc_236}", "-o", "json"
    )
    assert (code, err) == (1, "")
    report = json.loads(out)
    images = {row["image"]: row for row in report["images"]}
    assert images[TRAIN]["pods"] == ["tenant-a/train", "tenant-a/fine", "tenant-a/big"]
    assert images[TRAIN]["verdict"]["holds"] is holds
    assert images[TRAIN]["verdict"]["library"]["version"] == "2.36"
    assert images["other:1"]["pods"] == [] and images["other:1"]["verdict"]["holds"] is holds
    unisolated = [p["message"] for p in report["problems"] if p["code"] == "hami-image-unisolated"]
    assert unisolated == (
        []
        if holds
        else [
            f"{TRAIN} (tenant-a/train, tenant-a/fine, tenant-a/big): the limits do not hold: the process dies: symbol "
            "lookup error: libvgpu.so: undefined symbol: _dl_sym (when preInit() runs before the dlsym hook)"
        ]
    )  # an image no pod runs is no problem


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--hami", "v2.8.1", "--image", "app.tar"],
            "--image takes IMAGE=PATH (an image and its tarball or root filesystem)",
        ),
        (["--image", "a=b"], "--image needs --hami RELEASE: it is the image-check of HAMi's workloads"),
    ],
)
def test_an_image_option_without_its_parts_is_one_line(fake, tmp_path, argv, line):
    code, out, err = run("audit", *argv, "--kubeconfig", fake.kubeconfig(tmp_path))
    assert (code, out, err) == (2, "", f"pciname: error: {line}\n")


def test_an_image_that_cannot_be_read_is_one_line(fake, tmp_path):
    code, out, err = audit(fake, tmp_path, "v2.8.1", "--image", f"{TRAIN}={tmp_path / 'missing.tar'}")
    assert (code, out) == (2, "") and err.startswith("pciname: error: ") and err.count("\n") == 1


def test_more_images_than_the_request_takes_is_one_line_before_any_read(fake, tmp_path):
    before = len(fake.requests)
    many = [arg for i in range(65) for arg in ("--image", f"a{i}=b")]
    code, out, err = audit(fake, tmp_path, "v2.8.1", *many)
    assert (code, out, err) == (2, "", "pciname: error: 65 --image given: at most 64\n")
    assert len(fake.requests) == before
