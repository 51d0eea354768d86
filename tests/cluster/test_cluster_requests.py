"""``audit``, ``gpu-options`` and ``apply permitted-host-devices`` as
requests (:mod:`pciname.capabilities.audit`, :mod:`pciname.capabilities.apply`):
their rules in each surface's words, one profile and Cozystack release
choice for ``pciname gpu-options`` and the ``GpuOptions`` RPC (so they answer
alike, and refuse alike before any cluster read), commands that leave their
parsed arguments as they were, and an apply answered with the client it is
given (the real kubernetes client against the fake API server)."""

from __future__ import annotations

import json
import time

import grpc
import pytest

from pciname.capabilities.apply import NO_DEVICES, NOTHING_TO_APPLY, ApplyRequest, answer as apply_answer
from pciname.capabilities.audit import (
    AuditRequest,
    Deadline,
    GpuOptionsRequest,
    answer_audit,
    answer_gpu_options,
    choose,
)
from pciname.capabilities.spelling import RequestError, Spelling
from pciname.cli import build_parser
from pciname.cluster.kube import ClusterState, connect, read_cluster
from pciname.cozystack.releases import get_release, release_in_cluster
from pciname.errors import PcinameError, UnknownCozystackRelease
from pciname.policy.audit import audit, gpu_options
from pciname.server._proto import pciname_pb2 as pb
from tests.cli_run import pciname as run
from tests.cluster.conftest import A10
from tests.conftest import ServerSpec
from tests.fake_kube import FakeKube, cozystack_operator, kubevirt, node

INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
KV = kubevirt({"pciHostDevices": [A10]})
NODES = [node("gpu-1", {"nvidia.com/GA102GL_A10": "2"})]
MISMATCH = "profile cozystack@v1.3.6 is Cozystack v1.3.6, but Cozystack v1.4.0 was asked for: give one"


@pytest.fixture(scope="module")
def server_spec(tmp_path_factory, fake):
    """A ``--kube`` server reading conftest's fake API server (one Node with two A10s)."""
    root = tmp_path_factory.mktemp("cluster-requests")
    no_proxies = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "KUBECONFIG")
    return ServerSpec(
        config={"kube": True, "kubeconfig": str(fake.kubeconfig(root)), "kube_timeout": 5},
        env={**dict.fromkeys(no_proxies), "NO_PROXY": "127.0.0.1"},
    )


def rpc(stub, **fields):
    """(code, details) of a GpuOptions call."""
    try:
        stub.GpuOptions(pb.GpuOptionsRequest(**fields), timeout=20)
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as error:
        return error.code(), error.details()


# -- the one profile and release choice ---------------------------------------------------------


def test_the_choice_before_any_cluster_is_read():
    assert choose(None, None) == (None, "given", None)
    assert choose("auto", None) == ("auto", "given", None)
    release = get_release("v1.3.0")
    assert choose(None, "v1.3.0") == ("cozystack@v1.3.0", "cozystack", release)
    assert choose("  ", "v1.3.0") == ("cozystack@v1.3.0", "cozystack", release)  # blank: none given
    assert choose("v1.6.0", "v1.3.0") == ("v1.6.0", "given", release)  # a profile given wins
    assert choose("cozystack@v1.3.0", "1.3.0") == ("cozystack@v1.3.0", "given", release)
    with pytest.raises(PcinameError, match=f"^{MISMATCH}$"):
        choose("cozystack@v1.3.6", "v1.4.0")
    with pytest.raises(PcinameError, match="malformed Cozystack version 'v2'"):
        choose(None, "v2")
    with pytest.raises(UnknownCozystackRelease, match="unknown Cozystack release 'v9.9.9'"):
        choose(None, "v9.9.9")


@pytest.mark.parametrize("kind", [AuditRequest, GpuOptionsRequest])
def test_validated_keeps_the_choice(kind):
    asked = kind(cozystack="v1.3.0").validated()
    assert (asked.chosen_profile, asked.profile_source, asked.release.version) == (
        "cozystack@v1.3.0",
        "cozystack",
        "v1.3.0",
    )
    assert asked.implied and not asked.auto and type(asked) is kind
    auto = kind("AUTO", "v1.3.0").validated()
    assert auto.auto and not auto.implied and auto.profile_source == "given"
    assert kind().validated().seconds == 30 and kind(timeout=2.5).seconds == 2.5


SOURCES = [
    (
        {"from_cluster": True, "kubevirt": "{}"},
        {
            Spelling.RPC: "from_cluster reads the KubeVirt CR and the Nodes from the cluster: leave kubevirt and nodes empty",
            Spelling.CLI: "--from-cluster reads the KubeVirt CR and the Nodes from the cluster: leave --kubevirt and --nodes empty",
        },
    ),
    (
        {"from_cluster": True, "nodes": "[]"},
        {
            Spelling.RPC: "from_cluster reads the KubeVirt CR and the Nodes from the cluster: leave kubevirt and nodes empty",
            Spelling.CLI: "--from-cluster reads the KubeVirt CR and the Nodes from the cluster: leave --kubevirt and --nodes empty",
        },
    ),
    (
        {"from_cluster": False, "nodes": "[]"},
        {
            Spelling.RPC: "empty request: send the KubeVirt CR in kubevirt (JSON or YAML), or set from_cluster",
            Spelling.CLI: "empty request: send the KubeVirt CR in --kubevirt (JSON or YAML), or set --from-cluster",
        },
    ),
]


@pytest.mark.parametrize("spelling", [Spelling.RPC, Spelling.CLI])
@pytest.mark.parametrize(("fields", "words"), SOURCES)
def test_a_source_that_is_both_or_neither_is_refused(spelling, fields, words):
    with pytest.raises(RequestError) as refused:
        GpuOptionsRequest(**fields).validated()
    assert refused.value.spelled(spelling) == words[spelling]


def test_the_profile_and_release_fail_before_the_source():
    with pytest.raises(PcinameError, match="malformed Cozystack version"):
        GpuOptionsRequest(cozystack="v2", from_cluster=False).validated()
    assert GpuOptionsRequest(from_cluster=False, kubevirt=json.dumps(KV)).validated().profile_source == "given"


def test_the_rpc_refuses_in_the_requests_words(stub, fake):
    before = len(fake.requests)
    assert rpc(stub, from_cluster=True, kubevirt=json.dumps(KV)) == (INVALID, SOURCES[0][1][Spelling.RPC])
    assert rpc(stub, from_cluster=True, nodes=json.dumps(NODES)) == (INVALID, SOURCES[1][1][Spelling.RPC])
    assert rpc(stub, nodes=json.dumps(NODES)) == (INVALID, SOURCES[2][1][Spelling.RPC])
    assert len(fake.requests) == before


# -- the cluster's own release ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelling", "unknown", "differs"),
    [
        (
            Spelling.CLI,
            "the cluster runs Cozystack v9.1.0 (Deployment cozy-system/cozystack-operator, image tag of "
            "ghcr.io/cozystack/cozystack/cozystack-operator:v9.1.0), which this pciname has no facts for: "
            "use a newer pciname, or give --cozystack or --profile",
            "--cozystack v1.3.0 given; the cluster says Cozystack v1.4.0 (Deployment cozy-system/cozystack-operator, "
            "image tag of ghcr.io/cozystack/cozystack/cozystack-operator:v1.4.0)",
        ),
        (
            Spelling.RPC,
            "the cluster runs Cozystack v9.1.0 (Deployment cozy-system/cozystack-operator, image tag of "
            "ghcr.io/cozystack/cozystack/cozystack-operator:v9.1.0), which this pciname has no facts for: "
            "use a newer pciname, or give cozystack or profile",
            "cozystack v1.3.0 given; the cluster says Cozystack v1.4.0 (Deployment cozy-system/cozystack-operator, "
            "image tag of ghcr.io/cozystack/cozystack/cozystack-operator:v1.4.0)",
        ),
    ],
)
def test_the_clusters_release_and_its_notes(spelling, unknown, differs):
    def found(version):
        return release_in_cluster(cozystack_operator(f"ghcr.io/cozystack/cozystack/cozystack-operator:{version}"))

    notes: list[str] = []
    seen = AuditRequest().validated().with_cluster_release(found("v1.4.0"), notes.append, spelling)
    assert (seen.chosen_profile, seen.implied, notes) == ("cozystack@v1.4.0", True, [])
    assert seen.cozystack_report["source"].startswith("Deployment cozy-system/cozystack-operator, image tag")
    given = AuditRequest(cozystack="v1.3.0").validated()
    kept = given.with_cluster_release(found("v1.4.0"), notes.append, spelling)
    assert (kept.chosen_profile, notes) == ("cozystack@v1.3.0", [differs])
    assert kept.cozystack_report == {"version": "v1.3.0", "source": f"given ({spelling('cozystack')})", "known": True}
    notes.clear()
    none = AuditRequest().validated().with_cluster_release(found("v9.1.0"), notes.append, spelling)
    assert (none.chosen_profile, none.implied, notes) == (None, False, [unknown])
    assert none.cozystack_report["known"] is False
    profile = AuditRequest("v1.6.0").validated().with_cluster_release(found("v1.4.0"), notes.append, spelling)
    assert (profile.chosen_profile, profile.implied) == ("v1.6.0", False)  # a profile given wins


def test_the_audit_report_says_where_the_profile_came_from():
    notes: list[str] = []
    asked = (
        AuditRequest()
        .validated()
        .with_cluster_release(
            release_in_cluster(cozystack_operator("ghcr.io/cozystack/cozystack/cozystack-operator:v1.3.2")),
            notes.append,
        )
    )
    assert notes == []
    report = answer_audit(asked, KV, NODES)
    assert report["profile"] == "cozystack@v1.3.2"
    assert report["profile_source"] == f"Cozystack v1.3.2 ({asked.cozystack_report['source']})"
    assert report["cozystack"] == asked.cozystack_report
    plain = answer_audit(AuditRequest().validated(), KV, NODES)
    assert plain == {**audit(KV, NODES), "cozystack": None}


@pytest.mark.parametrize(("spelling", "flag"), [(Spelling.CLI, "--timeout"), (Spelling.RPC, "timeout")])
def test_the_deadline_counts_from_the_start(spelling, flag):
    deadline = Deadline(AuditRequest(timeout=5), "audit", spelling)
    deadline.check()  # not yet
    deadline.sized(ClusterState(KV, NODES))
    deadline.at = time.monotonic() - 1  # as if five seconds had passed
    with pytest.raises(PcinameError) as late:
        deadline.check()
    assert str(late.value) == (
        f"audit: not done within {flag} (5 seconds) with the 1 permittedHostDevices entries and 1 Nodes the cluster sent"
    )


# -- gpu-options: the CLI and the RPC answer alike ----------------------------------------------


@pytest.mark.parametrize("cozystack", ["", "v1.3.0"])
@pytest.mark.parametrize("profile", ["", "auto", "kubevirt-gpu-device-plugin@v1.1.2", "cozystack@v1.3.0"])
def test_gpu_options_answer_alike(client, fake, tmp_path, capsys, profile, cozystack):
    kubeconfig = fake.kubeconfig(tmp_path)
    argv = ["gpu-options", "--kubeconfig", kubeconfig, "-o", "json"]
    argv += (["-p", profile] if profile else []) + (["--cozystack", cozystack] if cozystack else [])
    code, out, err = run(*argv)
    assert code == 0, err
    state = read_cluster(connect(str(kubeconfig)))
    asked = GpuOptionsRequest(profile or None, cozystack or None).validated()
    answered = answer_gpu_options(asked, state.kubevirt, state.nodes)
    assert json.loads(out) == answered.options
    for got in (
        client.gpu_options(from_cluster=True, profile=profile, cozystack=cozystack),
        client.gpu_options(KV, NODES, profile, cozystack=cozystack),
    ):
        assert (got.options, got.profile_source) == (answered.options, answered.profile_source)
    expected = "cozystack" if cozystack and not profile else "inferred" if profile == "auto" else "given"
    assert answered.profile_source == expected
    assert answered.options == gpu_options(state.kubevirt, state.nodes, answered.profile)


@pytest.mark.parametrize(
    ("cozystack", "profile", "code", "words"),
    [
        ("v1.4.0", "cozystack@v1.3.6", INVALID, MISMATCH),
        ("v2", "", INVALID, "malformed Cozystack version 'v2'"),
        ("v0.1.0", "", NOT_FOUND, "unknown Cozystack release 'v0.1.0'"),
    ],
)
def test_a_bad_choice_is_refused_alike_before_any_cluster_read(
    stub, fake, tmp_path, capsys, cozystack, profile, code, words
):
    kubeconfig = fake.kubeconfig(tmp_path)
    before = len(fake.requests)
    for command in ("audit", "gpu-options"):
        argv = [command, "--kubeconfig", kubeconfig, "--cozystack", cozystack] + (["-p", profile] if profile else [])
        status, out, err = run(*argv)
        assert (status, out) == (2, "") and err.startswith(f"pciname: error: {words}") and err.count("\n") == 1
    status, details = rpc(stub, from_cluster=True, profile=profile, cozystack=cozystack)
    assert status == code and details.startswith(words)
    assert len(fake.requests) == before  # neither surface read the cluster


# -- the commands translate: their arguments stay as parsed ------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["audit", "--cozystack", "v1.3.0"],
        ["gpu-options", "--cozystack", "v1.3.0"],
        ["audit", "-p", "auto"],
        ["apply", "permitted-host-devices", "10de:2236", "--dry-run"],
    ],
)
def test_the_commands_leave_their_arguments_as_parsed(fake, tmp_path, capsys, argv):
    args = build_parser().parse_args([*argv, "--kubeconfig", str(fake.kubeconfig(tmp_path)), "-o", "json"])
    parsed = dict(vars(args))
    assert args.func(args) in (0, 1)
    capsys.readouterr()
    assert vars(args) == parsed


# -- apply ------------------------------------------------------------------------------------


def test_apply_needs_something_to_apply(capsys):
    with pytest.raises(PcinameError, match=f"^{NO_DEVICES}$"):
        ApplyRequest(vgpus=("A10-24Q",)).validated()
    request = ApplyRequest(mdev_types=("NVIDIA A10-24Q",))
    assert request.validated() == request and request.seconds == 30
    code, out, err = run("apply", "permitted-host-devices", "--kubeconfig", "/nonexistent")
    assert (code, out, err) == (2, "", f"pciname: error: {NO_DEVICES}\n")  # before the kubeconfig is read


@pytest.fixture
def cluster(tmp_path):
    """A fake API server of its own (an apply changes it) and a client of it."""
    server = FakeKube(nodes=list(NODES), kubevirts=[kubevirt({})]).start()
    try:
        yield server, connect(str(server.kubeconfig(tmp_path)))
    finally:
        server.stop()


def test_apply_reports_the_block_before_it_applies_it(cluster, tmp_path, capsys):
    server, client = cluster
    seen = []
    applied = apply_answer(
        ApplyRequest(("10de:2236", "10de:05be")).validated(),
        client,
        report=lambda snippet: seen.append((snippet, [r.method for r in server.requests])),
    )
    ((snippet, methods),) = seen
    assert methods == ["GET", "GET"]  # the CR and the Nodes read, nothing applied yet
    assert [r.method for r in server.requests] == ["GET", "GET", "PATCH"]
    assert applied.permitted == snippet.data == {"pciHostDevices": [A10]}
    assert [s.item for s in applied.left_out] == ["10de:05be"]
    assert (applied.kubevirt, applied.profile_source, applied.force, applied.dry_run) == (
        "kubevirt/kubevirt",
        "given",
        False,
        False,
    )
    code, out, _ = run(
        "apply",
        "permitted-host-devices",
        "10de:2236",
        "10de:05be",
        "--kubeconfig",
        server.kubeconfig(tmp_path),
        "-o",
        "json",
    )
    assert (code, json.loads(out)) == (1, applied.to_dict())


def test_nothing_to_apply_is_said_after_the_report_and_nothing_is_sent(cluster):
    server, client = cluster
    seen = []
    with pytest.raises(PcinameError, match=f"^{NOTHING_TO_APPLY}$"):
        apply_answer(ApplyRequest(("10de:05be",)).validated(), client, report=seen.append)
    assert [s.item for s in seen[0].left_out] == ["10de:05be"]
    assert "PATCH" not in [r.method for r in server.requests]


def test_apply_takes_vgpu_types_as_permitted_host_devices_does(cluster, capsys):
    _server, client = cluster
    applied = apply_answer(
        ApplyRequest(("10de:2236",), vgpus=("A10-24Q",), dry_run=True).validated(), client, report=lambda _: None
    )
    code, out, _ = run("permitted-host-devices", "10de:2236", "--vgpu", "A10-24Q", "-o", "json")
    assert code == 0
    assert applied.permitted == json.loads(out)["permittedHostDevices"]
    assert [e["mdevNameSelector"] for e in applied.permitted["mediatedDevices"]] == ["NVIDIA A10-24Q"]
