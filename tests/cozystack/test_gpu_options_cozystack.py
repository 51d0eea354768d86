"""GpuOptions takes ``cozystack`` as ``pciname gpu-options --cozystack``
does, on a real loopback server (packaged snapshots, ``--kube`` against a
fake API server): with no profile given, that release's profile names the
GPUs, for every release known (so across every family boundary, where the
GPU Operator's plugin release changes); a profile given wins; a malformed
release is INVALID_ARGUMENT, an unknown one NOT_FOUND, a cozystack@ profile
of another release INVALID_ARGUMENT, each one line and before any cluster
read."""

from __future__ import annotations

import itertools

import grpc
import pytest

from pciname.capabilities.limits import NAME_CHARS as MAX_NAME_CHARS
from pciname.client import RemoteInvalidArgument, RemoteUnknownProfile
from pciname.cozystack import releases as cozystack
from pciname.policy.audit import gpu_options
from pciname.server._proto import pciname_pb2 as pb
from tests import cozystack_util as upstream
from tests.conftest import ServerSpec
from tests.fake_kube import FakeKube, kubevirt, node

INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
PLUGIN = "kubevirt-gpu-device-plugin@"

#: 10de:2941 is "GB200 SKU" to plugin v1.3.1 (Cozystack v1.0.0 to v1.3.x) and
#: "HGX GB200" to v1.5.0 (from v1.4.0): the answer changes at the boundary.
KV = kubevirt(
    {
        "pciHostDevices": [
            {
                "pciVendorSelector": "10DE:2941",
                "resourceName": "nvidia.com/GB100_HGX_GB200",
                "externalResourceProvider": True,
            },
            {
                "pciVendorSelector": "10DE:2236",
                "resourceName": "nvidia.com/GA102GL_A10",
                "externalResourceProvider": True,
            },
        ]
    }
)
NODES = [node("gb200-1", {"nvidia.com/GB100_HGX_GB200": "4"}), node("a10-1", {"nvidia.com/GA102GL_A10": "2"})]


@pytest.fixture(scope="module")
def fake():
    server = FakeKube(nodes=NODES, kubevirts=[KV]).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def server_spec(tmp_path_factory, fake):
    """A ``--kube`` server reading the fake API server, with no proxy between."""
    root = tmp_path_factory.mktemp("gpu-options-cozystack")
    no_proxies = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "KUBECONFIG")
    return ServerSpec(
        config={"kube": True, "kubeconfig": str(fake.kubeconfig(root)), "kube_timeout": 5},
        env={**dict.fromkeys(no_proxies), "NO_PROXY": "127.0.0.1"},
    )


TAGS = upstream.tags()


def test_every_release_of_the_vendored_history_is_known():
    assert list(cozystack.releases()) == TAGS


def _families() -> list[tuple[str, str]]:
    """(last release of a plugin-release family, first of the next)."""
    releases = list(cozystack.releases().values())
    return [(a.version, b.version) for a, b in itertools.pairwise(releases) if a.plugin_release != b.plugin_release]


def test_there_is_a_family_boundary_where_the_gpu_operator_changes():
    assert ("v1.3.6", "v1.4.0") in _families()


@pytest.mark.parametrize("tag", [*TAGS, "latest"])
def test_the_release_names_gpus_as_its_gpu_operator_deploys_them(client, tag):
    """Every release, so every family boundary: the answer is the library's
    under the plugin release that release's GPU Operator deploys."""
    release = cozystack.get_release(tag)
    got = client.gpu_options(KV, NODES, cozystack=tag)
    assert (got.profile, got.profile_source, got.kubevirt) == (release.profile, "cozystack", "kubevirt/kubevirt")
    assert got.options == gpu_options(KV, NODES, PLUGIN + release.plugin_release)
    # and from the cluster, the same
    assert client.gpu_options(from_cluster=True, cozystack=tag).options == got.options


@pytest.mark.parametrize(("last", "first"), _families())
def test_each_side_of_a_boundary_is_its_own_family(client, last, first):
    before = client.gpu_options(KV, NODES, cozystack=last)
    after = client.gpu_options(KV, NODES, cozystack=first)
    for got, tag in ((before, last), (after, first)):
        plugin = cozystack.get_release(tag).plugin_release
        assert got.options == gpu_options(KV, NODES, PLUGIN + plugin)
        given = client.gpu_options(KV, NODES, f"cozystack@{tag}")
        assert (given.options, given.profile) == (got.options, got.profile)
    assert cozystack.get_release(last).plugin_release != cozystack.get_release(first).plugin_release


def test_the_gb200_changes_name_from_v1_4_0(client):
    """GPU Operator v25.3.0 (plugin v1.3.1) up to v1.3.6, v26.3.1 (v1.5.0) from v1.4.0."""
    before = client.gpu_options(KV, NODES, cozystack="v1.3.6").options
    after = client.gpu_options(KV, NODES, cozystack="v1.4.0").options
    assert before[0]["models"] == ["NVIDIA GB100 [GB200 SKU]"] and after[0]["models"] == ["NVIDIA GB100 [HGX GB200]"]
    assert before[1] == after[1]  # the A10 is the A10 in both


def test_a_profile_given_wins(client):
    got = client.gpu_options(KV, NODES, "v1.6.0", cozystack="v1.3.0")
    assert (got.profile, got.profile_source) == (PLUGIN + "v1.6.0", "given")
    assert got.options == gpu_options(KV, NODES, PLUGIN + "v1.6.0")
    auto = client.gpu_options(KV, NODES, "auto", cozystack="v1.3.0")
    assert auto.profile_source == "inferred"
    same = client.gpu_options(KV, NODES, "cozystack@v1.3.0", cozystack="v1.3.0")
    assert (same.profile, same.profile_source) == ("cozystack@v1.3.0", "given")
    plain = client.gpu_options(KV, NODES)
    assert plain.profile_source == "given" and plain.profile == PLUGIN + "v1.6.0"


BAD = [
    ("v2", "", INVALID, "malformed Cozystack version 'v2'"),
    ("1.x", "", INVALID, "malformed Cozystack version '1.x'"),
    ("v0.0.1", "", NOT_FOUND, "v0.0.1"),
    ("v9.9.9", "", NOT_FOUND, "v9.9.9"),
    (
        "v1.4.0",
        "cozystack@v1.3.6",
        INVALID,
        "profile cozystack@v1.3.6 is Cozystack v1.3.6, but Cozystack v1.4.0 was asked for: give one",
    ),
    ("v" + "1" * MAX_NAME_CHARS, "", INVALID, "cozystack"),
]


@pytest.mark.parametrize(("version", "profile", "code", "words"), BAD)
@pytest.mark.parametrize("from_cluster", [False, True])
def test_bad_releases_are_one_line_before_any_cluster_read(stub, fake, version, profile, code, words, from_cluster):
    import json

    request = pb.GpuOptionsRequest(profile=profile, cozystack=version, from_cluster=from_cluster)
    if not from_cluster:
        request.kubevirt = json.dumps(KV)
    before = len(fake.requests)
    with pytest.raises(grpc.RpcError) as caught:
        stub.GpuOptions(request, timeout=20)
    details = caught.value.details()
    assert caught.value.code() == code and words in details, details
    assert "\n" not in details and "Traceback" not in details
    if "malformed" in words or code == NOT_FOUND:
        assert f"{TAGS[0]} to {TAGS[-1]}" in details  # the known range
    assert len(fake.requests) == before  # refused before the cluster is read


def test_the_client_raises_the_remote_errors(client):
    with pytest.raises(RemoteInvalidArgument, match="malformed Cozystack version"):
        client.gpu_options(KV, NODES, cozystack="v1")
    with pytest.raises(RemoteUnknownProfile, match="v0.0.1"):
        client.gpu_options(KV, NODES, cozystack="v0.0.1")
