"""The feed RPCs on a loopback server: Lint, GpuOptions and the formats of
PermittedHostDevices give what the library and the CLI give for the same
input; every error has its status code and pciname-error reason; GpuOptions
reads a (fake) cluster only on a server started with --kube."""

from __future__ import annotations

import json
import socket
import time
from types import SimpleNamespace

import grpc
import pytest
import yaml
from hypothesis import HealthCheck, given, settings, strategies as st

from pciname.client import RemoteClusterError, RemoteInvalidArgument, RemoteLintInputError, RemoteUnknownProfile
from pciname.cluster.kube import connect, read_cluster
from pciname.cozystack.defaults import for_cozystack
from pciname.kubevirt.generate import permitted_host_devices, render
from pciname.lint.linter import Linter, LintInputError
from pciname.policy.audit import gpu_options
from pciname.server import NameServer, ServeConfig, ServeError
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.rpc.cluster import ClusterAccess
from tests.cli_run import pciname as cli
from tests.conftest import LATEST, ServerSpec, package_only
from tests.fake_kube import FakeKube, kubevirt, node
from tests.kube_documents import (
    A10,
    CLEAN,
    COZYSTACK_VALUES,
    GRID,
    HYPERCONVERGED,
    KUBEVIRT_CR,
    SRIOV_DOC,
    T4_OLD,
    TENANT,
    VMS,
    cluster_nodes,
)
from tests.server_util import ALL_BUT_2019, metric, scrape, snapshot_dir

OK = grpc.StatusCode.OK
INVALID = grpc.StatusCode.INVALID_ARGUMENT
NOT_FOUND = grpc.StatusCode.NOT_FOUND
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION
UNAVAILABLE = grpc.StatusCode.UNAVAILABLE
MAX_LINT_FILES = 8
MAX_LINT_BYTES = 64 * 1024

LINT_FILES = {
    "kubevirt.yaml": KUBEVIRT_CR,
    "hco.yaml": HYPERCONVERGED,
    "values.yaml": COZYSTACK_VALUES,
    "vms.yaml": VMS,
    "tenant.yaml": TENANT,
    "clean.yaml": CLEAN,
}
KV = kubevirt({"pciHostDevices": [A10, T4_OLD], "mediatedDevices": [GRID]})


@pytest.fixture(scope="module")
def fake():
    server = FakeKube(nodes=cluster_nodes(), kubevirts=[KV]).start()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def setup(tmp_path_factory, session_cache, fake):
    """A package with every snapshot but 2019-08-14's (v1.0.0/v1.0.1 known,
    not installed), and a kubeconfig pointing at the fake API server."""
    root = tmp_path_factory.mktemp("feeds")
    snapshots = snapshot_dir(root / "snapshots", [])
    with pytest.MonkeyPatch.context() as mp:
        package_only(mp, ALL_BUT_2019)
        yield SimpleNamespace(root=root, snapshots=snapshots, cache=session_cache, kubeconfig=fake.kubeconfig(root))


@pytest.fixture(scope="module")
def server_spec(setup):
    """Lint limits of MAX_LINT_FILES and MAX_LINT_BYTES, metrics, and
    ``--kube`` against the fake API server."""
    config = {
        "metrics_listen": "127.0.0.1:0",
        "max_lint_files": MAX_LINT_FILES,
        "max_lint_bytes": MAX_LINT_BYTES,
        "kube": True,
        "kubeconfig": str(setup.kubeconfig),
        "kube_timeout": 60,  # never reached: the tests of the timeout set their own
    }
    return ServerSpec(config=config, cache=setup.cache, env={"PCINAME_SNAPSHOTS": str(setup.snapshots)})


@pytest.fixture(autouse=True)
def server_env(setup, monkeypatch):
    monkeypatch.setenv("PCINAME_CACHE_DIR", str(setup.cache))
    monkeypatch.setenv("PCINAME_SNAPSHOTS", str(setup.snapshots))
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy", "KUBECONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1")
    return setup


def call(fn, request, timeout=120):
    """(code, details, trailing metadata as a dict)."""
    try:
        fn(request, timeout=timeout)
        return OK, "", {}
    except grpc.RpcError as error:
        return error.code(), error.details(), dict(error.trailing_metadata() or ())


def files_request(files: dict, **kwargs) -> pb.LintRequest:
    return pb.LintRequest(files=[pb.LintFile(name=n, text=t) for n, t in files.items()], **kwargs)


# -- Lint: the library's and the CLI's findings -----------------------------------------


@pytest.mark.parametrize(
    ("profile", "upgrade"),
    [
        ("preview", ""),
        ("latest", ""),
        ("kubevirt-gpu-device-plugin@v1.2.2", "latest"),
        ("v1.1.2", "gpu-operator@v25.3.0"),
    ],
)
def test_lint_is_the_library_answer(client, profile, upgrade):
    linter = Linter(profile, upgrade or None)
    for name, text in LINT_FILES.items():
        linter.add_text(text, name)
    want = linter.run()
    got = client.lint(LINT_FILES, profile, upgrade)
    assert got.findings == want
    assert {f.code for f in want} >= {"wrong-resource-name", "unknown-resource-name"}
    assert got.profile == linter.profile_name and got.upgrade_to == linter.upgrade_name
    assert got.documents == sum(len(list(yaml.compose_all(t))) for t in LINT_FILES.values())
    assert got.text == "".join(f.format() + "\n" for f in want)


def test_lint_value_and_expected_keep_their_types(client):
    text = "permittedHostDevices:\n  pciHostDevices:\n  - {pciVendorSelector: '10DE:2236', resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: 0}\n"
    (finding,) = client.lint({"d.yaml": text}).findings
    assert finding.code == "invalid-external-resource-provider"
    assert finding.value == 0 and type(finding.value) is int and finding.expected is True
    vms = client.lint({"vms.yaml": VMS}, "latest").findings
    assert vms[3].expected == [] and isinstance(vms[0].expected, list)  # lists, even empty ones
    assert vms[2].expected is None  # nothing to suggest: unset


def test_lint_rpc_takes_kubevirt_advertised_sriov_entries(client):
    """Cozystack's SR-IOV vGPU example: KubeVirt advertises the VFs itself."""
    clean = client.lint({"gpu-vgpu.yaml": SRIOV_DOC}, "latest")
    assert (clean.findings, clean.text, clean.documents) == ([], "", 2)
    conflict = SRIOV_DOC.replace("resourceName: nvidia.com/L40S-24Q", "resourceName: nvidia.com/GA102GL_A10")
    got = client.lint({"c.yaml": conflict}, "latest", nvidia_plugin="yes").findings
    want = Linter("latest", nvidia_plugin="yes", option="nvidia_plugin")  # as gRPC spells it
    want.add_text(conflict, "c.yaml")
    assert got == want.run()
    # ... and the VM's nvidia.com/L40S-24Q is no longer permitted by it.
    assert [f.code for f in got] == ["resource-name-conflict", "not-permitted"]
    # Without NVIDIA's plugin said to run there, KubeVirt's own serves the name: a note, no conflict.
    alone = client.lint({"c.yaml": conflict}, "latest")
    assert [f.code for f in alone.findings] == ["not-permitted"]
    assert any("--nvidia-plugin" not in note and "nvidia_plugin yes" in note for note in alone.notes)


def test_lint_matches_the_cli(client, tmp_path, capsys):
    paths = []
    for name, text in LINT_FILES.items():
        path = tmp_path / name
        path.write_text(text)
        paths.append(path)
    files = {str(p): p.read_bytes() for p in paths}  # as bytes, named as the CLI names them
    code, out, _ = cli("lint", *paths, "-p", "latest", "--upgrade-to", "gpu-operator@v25.3.0")
    got = client.lint(files, "latest", "gpu-operator@v25.3.0")
    assert code == 1 and got.text == out
    code, out, _ = cli("lint", *paths, "-p", "latest", "-o", "json")
    assert json.loads(out) == [f.to_dict() for f in client.lint(files, "latest").findings]


def test_lint_bytes_in_other_encodings_and_unnamed_files(stub):
    utf16 = KUBEVIRT_CR.encode("utf-16")  # with a byte order mark, as a file on disk may be
    as_bytes = stub.Lint(pb.LintRequest(files=[pb.LintFile(name="kv.yaml", data=utf16)]), timeout=20)
    as_text = stub.Lint(pb.LintRequest(files=[pb.LintFile(name="kv.yaml", text=KUBEVIRT_CR)]), timeout=20)
    assert as_bytes == as_text and as_text.findings
    one = stub.Lint(pb.LintRequest(files=[pb.LintFile(text=KUBEVIRT_CR)]), timeout=20)
    assert {f.file for f in one.findings} == {"<input>"}
    two = stub.Lint(pb.LintRequest(files=[pb.LintFile(text=CLEAN), pb.LintFile(text=KUBEVIRT_CR)]), timeout=20)
    assert {f.file for f in two.findings} == {"<input 2>"}
    empty = stub.Lint(pb.LintRequest(files=[pb.LintFile(name="empty.yaml")]), timeout=20)
    assert (empty.findings, empty.documents, empty.text, empty.profile) == ([], 0, "", LATEST)
    assert not empty.HasField("upgrade_to")


def test_lint_yaml_errors_name_every_file_and_line(client, stub):
    files = {"ok.yaml": KUBEVIRT_CR, "broken.yaml": "a: [\n", "also broken ü.yaml": "x:\n  - a\n - b\n"}
    code, details, meta = call(stub.Lint, files_request(files))
    assert code == INVALID
    assert details.startswith("broken.yaml:2:1: YAML syntax error: ")
    assert "; also broken ü.yaml:3:2: YAML syntax error: " in details
    assert meta == {"pciname-error": "lint-input", "pciname-file": "broken.yaml", "pciname-line": "2"}
    with pytest.raises(RemoteLintInputError) as caught:
        client.lint({"also broken ü.yaml": "x:\n  - a\n - b\n"})
    error = caught.value
    assert isinstance(error, LintInputError) and isinstance(error, RemoteInvalidArgument)
    assert (error.file, error.line, error.code) == ("also broken ü.yaml", 3, "INVALID_ARGUMENT")
    code, details, meta = call(stub.Lint, pb.LintRequest(files=[pb.LintFile(name="bin", data=b"\xff\xfe\x00\xd8bad")]))
    assert code == INVALID and "bin: not readable as YAML" in details and meta["pciname-error"] == "lint-input"


@pytest.mark.parametrize(
    "text", ["[" * 5000, "- " * 3000 + "x\n", "[" * 5000 + "]" * 5000], ids=["flow", "block", "closed"]
)
def test_deep_nesting_is_invalid_input_not_a_crash(server, stub, text):
    code, details, meta = call(stub.Lint, files_request({"deep.yaml": text}))
    assert code == INVALID and meta["pciname-error"] == "lint-input"
    assert "deep.yaml" in details and ("nested too deeply" in details or "YAML syntax error" in details)
    for request in (
        pb.GpuOptionsRequest(kubevirt=text),
        pb.GpuOptionsRequest(kubevirt=json.dumps(KV), nodes="[" * 200_000 + "]" * 200_000),
    ):
        code, details, meta = call(stub.GpuOptions, request)
        assert (code, meta.get("pciname-error")) == (INVALID, "objects-input"), details
    assert call(stub.GpuOptions, pb.GpuOptionsRequest(kubevirt=json.dumps(KV)))[0] == OK  # still up


def test_lint_limits(stub):
    at_limit = pb.LintRequest(files=[pb.LintFile(name=f"f{i}", text="a: 1\n") for i in range(MAX_LINT_FILES)])
    assert call(stub.Lint, at_limit)[0] == OK
    at_limit.files.add(name="one-more", text="a: 1\n")
    code, details, _ = call(stub.Lint, at_limit)
    assert code == INVALID and f"maximum of {MAX_LINT_FILES} (--max-lint-files)" in details
    filler = "# " + "x" * 97 + "\n"  # 100 bytes
    exact = pb.LintRequest(
        files=[pb.LintFile(name="a", text="é" * 10), pb.LintFile(name="b", data=b"#" * (MAX_LINT_BYTES - 20))]
    )
    assert call(stub.Lint, exact)[0] == OK  # 20 bytes of UTF-8 + the rest: exactly the limit
    big = filler * (MAX_LINT_BYTES // 100)  # under the limit alone, over it with the small file
    code, details, _ = call(stub.Lint, files_request({"small": "a: 1\n" * 10, "big": big}))
    assert code == INVALID
    assert details == (
        f"{len(big) + 50} bytes of YAML in one request, more than this server's maximum of {MAX_LINT_BYTES} "
        f"(--max-lint-bytes); the largest file is big ({len(big)} bytes)"
    )
    code, _, _ = call(stub.Lint, files_request({"huge": "#" * (5 * 1024 * 1024)}))
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED  # over --max-recv-message-bytes: gRPC refuses it


LINT_ERRORS = [
    (pb.LintRequest(), INVALID, "empty request"),
    (files_request({"a": "x: 1"}, profile="auto"), INVALID, "profile auto needs a cluster"),
    (files_request({"a": "x: 1"}, upgrade_to=" AUTO "), INVALID, "upgrade_to auto"),
    (files_request({"a": "x: 1"}, profile="nope"), NOT_FOUND, "unknown profile"),
    (files_request({"a": "x: 1"}, upgrade_to="v9.9.9"), NOT_FOUND, "unknown profile"),
    (files_request({"a": "x: 1"}, profile="v1.0.1"), PRECONDITION, "2019-08-14"),
    (files_request({"a": "x: 1"}, upgrade_to="kubevirt-gpu-device-plugin@v1.0.0"), PRECONDITION, "2019-08-14"),
]


@pytest.mark.parametrize(
    ("request_message", "code", "needle"), LINT_ERRORS, ids=[f"{c[1].name}-{i}" for i, c in enumerate(LINT_ERRORS)]
)
def test_lint_errors(stub, request_message, code, needle):
    got, details, _ = call(stub.Lint, request_message)
    assert (got, needle in details) == (code, True), details


# -- PermittedHostDevices: every format, as the CLI prints it --------------------------------

DEVICES = ["10de:2236", "10DE:1EB8", "10de:05be", "8086:1234"]
MDEVS = ["GRID T4-1Q", "bad name "]


@pytest.mark.parametrize(
    ("fmt", "flags"),
    [
        ("kubevirt", ()),
        ("cozystack", ()),
        ("cozystack", ("--replace-defaults",)),
        ("patch", ()),
        ("kubevirt", ("--include-broken",)),
    ],
)
def test_permitted_host_devices_formats_match_the_cli(client, capsys, fmt, flags):
    mdev_args = [a for m in MDEVS for a in ("--mdev", m)]
    got = client.permitted_host_devices(
        DEVICES,
        MDEVS,
        "latest",
        format=fmt,
        replace_defaults="--replace-defaults" in flags,
        include_broken="--include-broken" in flags,
    )
    base = ("permitted-host-devices", *DEVICES, *mdev_args, "--format", fmt, "-p", "latest", *flags)
    code, out_yaml, err = cli(*base, "-o", "yaml")
    assert code == 1 and ("left out 10de:05be: invalid-resource-name" in err or "broken 10de:05be" in err)
    _, out_json, _ = cli(*base, "-o", "json")
    assert (got.yaml, got.json, got.format) == (out_yaml, out_json, fmt)
    snippet = permitted_host_devices(DEVICES, MDEVS, "latest", "--include-broken" in flags)
    if fmt == "cozystack":  # as Cozystack takes it: no mdev entries in its default variant, no default twice
        snippet = for_cozystack(snippet, replace_defaults="--replace-defaults" in flags).snippet
    assert json.loads(got.json) == render(
        snippet.data, fmt, replace_defaults=True if flags == ("--replace-defaults",) else None
    )
    assert got.to_dict() == render(snippet.data, "kubevirt")  # the structured entries do not depend on the format
    assert [s.item for s in got.left_out] == [s.item for s in snippet.left_out]


def test_permitted_host_devices_patch_is_a_merge_patch(client):
    got = client.permitted_host_devices(["10de:2236"], format="patch")
    assert json.loads(got.json) == {"spec": {"configuration": {"permittedHostDevices": {"pciHostDevices": [A10]}}}}
    default = client.permitted_host_devices(["10de:2236"])
    assert default.format == "kubevirt" and yaml.safe_load(default.yaml) == {
        "permittedHostDevices": {"pciHostDevices": [A10]}
    }


@pytest.mark.parametrize(
    ("request_message", "code", "needle"),
    [
        (pb.PermittedHostDevicesRequest(devices=["10de:2236"], format="helm"), INVALID, "unknown format 'helm'"),
        (
            pb.PermittedHostDevicesRequest(devices=["10de:2236"], replace_defaults=True),
            INVALID,
            "goes with format cozystack",
        ),
        (pb.PermittedHostDevicesRequest(devices=["10de:2236"], profile="auto"), INVALID, "profile auto"),
    ],
)
def test_permitted_host_devices_format_errors(stub, request_message, code, needle):
    got, details, _ = call(stub.PermittedHostDevices, request_message)
    assert got == code and needle in details


# -- GpuOptions: objects the caller sends ---------------------------------------------------


@pytest.mark.parametrize("profile", ["", "latest", "v1.1.2", "auto"])
def test_gpu_options_is_the_library_answer(client, profile):
    got = client.gpu_options(KV, cluster_nodes(), profile)
    want = gpu_options(KV, cluster_nodes(), profile or "latest")
    assert got.options == want
    assert got.options[0] == {
        "resource_name": "nvidia.com/GA102GL_A10",
        "kind": "pci",
        "selectors": ["10DE:2236"],
        "devices": ["10de:2236"],
        "models": ["NVIDIA GA102GL [A10]"],
        "allocatable": 5,
        "nodes": [{"name": "gpu-a10-1", "allocatable": 2}, {"name": "gpu-a10-2", "allocatable": 3}],
    }
    assert got.kubevirt == "kubevirt/kubevirt"
    if profile == "auto":
        assert (got.profile, got.profile_source) == (LATEST, "inferred")
    else:
        assert got.profile_source == "given"


def test_gpu_options_auto_without_names_uses_the_default(client):
    got = client.gpu_options(KV, [node("cpu", {"nvidia.com/gpu": "8"})], "auto")
    assert (got.profile, got.profile_source) == (LATEST, "default (nothing to infer from)")


def test_gpu_options_takes_kubectl_json_and_yaml(client, stub):
    nodes = cluster_nodes()
    want = client.gpu_options(KV, nodes).options
    node_list = json.dumps({"apiVersion": "v1", "kind": "NodeList", "items": nodes})
    kv_list = json.dumps({"apiVersion": "kubevirt.io/v1", "kind": "KubeVirtList", "items": [KV]})
    assert client.gpu_options(kv_list, node_list).options == want
    as_yaml = yaml.safe_dump(KV), yaml.safe_dump_all(nodes)  # YAML documents of Nodes
    assert client.gpu_options(*as_yaml).options == want
    assert client.gpu_options(KV, nodes[0]).options[0]["allocatable"] == 2  # a single Node
    assert client.gpu_options(KV).options[0]["allocatable"] == 0  # no nodes at all
    other = kubevirt({"pciHostDevices": [A10]}, namespace="kv2", name="second")
    both = json.dumps({"kind": "List", "items": [KV, other]})
    picked = client.gpu_options(both, nodes, kubevirt_name="kv2/second")
    assert (picked.kubevirt, [o["resource_name"] for o in picked.options]) == ("kv2/second", ["nvidia.com/GA102GL_A10"])


OBJECT_ERRORS = [
    (pb.GpuOptionsRequest(), INVALID, "empty request", None),
    (pb.GpuOptionsRequest(kubevirt=json.dumps(KV), from_cluster=True), INVALID, "leave kubevirt and nodes empty", None),
    (pb.GpuOptionsRequest(kubevirt="a: [\n"), INVALID, "kubevirt:2:1: neither JSON nor YAML", "objects-input"),
    (
        pb.GpuOptionsRequest(kubevirt=json.dumps(KV), nodes="- 1\n- 2\n"),
        INVALID,
        "expected Kubernetes objects",
        "objects-input",
    ),
    (
        pb.GpuOptionsRequest(kubevirt=json.dumps(cluster_nodes()[0])),
        INVALID,
        "kubevirt: expected a KubeVirt, got Node",
        "objects-input",
    ),
    (
        pb.GpuOptionsRequest(kubevirt=json.dumps(KV), nodes=json.dumps([KV])),
        INVALID,
        "nodes[0]: expected a Node, got KubeVirt",
        "objects-input",
    ),
    (
        pb.GpuOptionsRequest(kubevirt=json.dumps(kubevirt({"pciHostDevices": {"a": 1}}))),
        INVALID,
        "kubevirt.spec.configuration.permittedHostDevices.pciHostDevices: expected a list",
        "objects-input",
    ),
    (
        pb.GpuOptionsRequest(
            kubevirt=json.dumps(kubevirt({"pciHostDevices": [{"pciVendorSelector": 4318, "resourceName": "x"}]}))
        ),
        INVALID,
        "pciHostDevices[0].pciVendorSelector: expected a string, got a number",
        "objects-input",
    ),
    (
        pb.GpuOptionsRequest(
            kubevirt=json.dumps(KV), nodes=json.dumps({"kind": "Node", "status": {"allocatable": ["x"]}})
        ),
        INVALID,
        "nodes[0].status.allocatable: expected a mapping, got a list",
        "objects-input",
    ),
    (
        pb.GpuOptionsRequest(kubevirt=json.dumps({"kind": "List", "items": [KV, KV]})),
        INVALID,
        "several KubeVirt CRs (kubevirt/kubevirt, kubevirt/kubevirt): choose one with kubevirt_name",
        "kubevirt-ambiguous",
    ),
    (
        pb.GpuOptionsRequest(kubevirt=json.dumps(KV), kubevirt_name="other/kv"),
        INVALID,
        "no KubeVirt CR other/kv",
        "objects-input",
    ),
    (pb.GpuOptionsRequest(kubevirt=json.dumps(KV), profile="nope"), NOT_FOUND, "unknown profile", None),
    (pb.GpuOptionsRequest(kubevirt=json.dumps(KV), profile="v1.0.1"), PRECONDITION, "2019-08-14", None),
]


@pytest.mark.parametrize(
    ("request_message", "code", "needle", "reason"),
    OBJECT_ERRORS,
    ids=[f"{c[1].name}-{i}" for i, c in enumerate(OBJECT_ERRORS)],
)
def test_gpu_options_object_errors(stub, request_message, code, needle, reason):
    got, details, meta = call(stub.GpuOptions, request_message)
    assert (got, meta.get("pciname-error")) == (code, reason), details
    assert needle in details and "\n" not in details


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=12),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "kind",
                    "metadata",
                    "name",
                    "namespace",
                    "spec",
                    "configuration",
                    "permittedHostDevices",
                    "pciHostDevices",
                    "mediatedDevices",
                    "pciVendorSelector",
                    "mdevNameSelector",
                    "resourceName",
                    "status",
                    "allocatable",
                    "capacity",
                    "nvidia.com/GA102GL_A10",
                    "items",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(kv=json_values, nodes=json_values, wrap=st.booleans())
def test_gpu_options_never_fails_badly_on_odd_objects(stub, kv, nodes, wrap):
    if wrap:  # odd values deep inside an otherwise well-formed CR and Node
        kv = kubevirt(
            {"pciHostDevices": [{"pciVendorSelector": "10DE:2236", "resourceName": kv}], "mediatedDevices": kv}
        )
        nodes = [
            {"kind": "Node", "metadata": {"name": "n"}, "status": {"allocatable": {"nvidia.com/GA102GL_A10": nodes}}}
        ]
    request = pb.GpuOptionsRequest(kubevirt=json.dumps(kv), nodes=json.dumps(nodes))
    code, details, _ = call(stub.GpuOptions, request)
    assert code in (OK, INVALID), (code, details)


# -- GpuOptions from the cluster (--kube) ------------------------------------------------------


@pytest.mark.parametrize("profile", ["", "auto", "kubevirt-gpu-device-plugin@v1.1.2"])
def test_gpu_options_from_the_cluster_match_the_cli(client, fake, setup, capsys, profile):
    before = len(fake.requests)
    got = client.gpu_options(from_cluster=True, profile=profile)
    requests = fake.requests[before:]
    assert [(r.method, r.path) for r in requests] == [
        ("GET", "/apis/kubevirt.io/v1/kubevirts"),
        ("GET", "/api/v1/nodes"),
    ]
    state = read_cluster(connect(str(setup.kubeconfig)))
    assert got.options == gpu_options(state.kubevirt, state.nodes, profile or "latest")
    code, out, err = cli("gpu-options", "--kubeconfig", setup.kubeconfig, "-p", profile or "latest", "-o", "json")
    assert code == 0, err
    assert got.options == json.loads(out)
    assert got.kubevirt == "kubevirt/kubevirt"
    assert [o["resource_name"] for o in got.options] == [
        "nvidia.com/GA102GL_A10",
        "nvidia.com/TU104GL_Tesla_T4",
        "nvidia.com/GRID_T4-1Q",
    ]


def _kubeconfig_with(path, setup, **user):
    config = json.loads(setup.kubeconfig.read_text())
    config["users"][0]["user"] = user
    path.write_text(json.dumps(config))
    return str(path)


def test_gpu_options_cluster_errors(server, stub, client, fake, setup, tmp_path, monkeypatch, caplog):
    def from_cluster(**kwargs):
        return call(stub.GpuOptions, pb.GpuOptionsRequest(from_cluster=True, **kwargs))

    # Several KubeVirt CRs: the caller chooses.
    second = kubevirt({"pciHostDevices": [A10]}, namespace="kv2", name="second")
    monkeypatch.setattr(fake, "kubevirts", [KV, second])
    code, details, meta = from_cluster()
    assert (code, meta["pciname-error"]) == (INVALID, "kubevirt-ambiguous")
    assert "choose one with kubevirt_name NAMESPACE/NAME" in details and "--kubevirt" not in details
    assert from_cluster(kubevirt_name="kv2/second")[0] == OK
    code, details, meta = from_cluster(kubevirt_name="kv3/third")
    assert (code, meta["pciname-error"], details) == (
        NOT_FOUND,
        "kubevirt-not-found",
        "no KubeVirt CR kv3/third in the cluster",
    )
    with pytest.raises(RemoteClusterError) as caught:
        client.gpu_options(from_cluster=True, kubevirt_name="kv3/third")
    assert not isinstance(caught.value, RemoteUnknownProfile) and caught.value.reason == "kubevirt-not-found"
    monkeypatch.setattr(fake, "kubevirts", [KV])

    # No KubeVirt at all.
    monkeypatch.setattr(fake, "kubevirt_crd", False)
    code, details, meta = from_cluster()
    assert (code, meta["pciname-error"]) == (PRECONDITION, "no-kubevirt") and "no KubeVirt CR" in details
    monkeypatch.setattr(fake, "kubevirt_crd", True)

    # The API server refuses the credentials, is overloaded, is not there.
    with caplog.at_level("WARNING", logger="pciname.server"):
        monkeypatch.setattr(
            server.service, "cluster", ClusterAccess(_kubeconfig_with(tmp_path / "bad", setup, token="wrong"))
        )
        code, details, meta = from_cluster()
    assert (code, meta["pciname-error"]) == (PRECONDITION, "cluster-refused")
    assert details.startswith("cannot list KubeVirt CRs: 401 Unauthorized") and "get and list on nodes" in details
    assert any(
        r.getMessage() == "cannot read the cluster" and r.fields["code"] == "FAILED_PRECONDITION"
        for r in caplog.records
    )
    monkeypatch.setattr(server.service, "cluster", ClusterAccess(str(setup.kubeconfig)))
    real_answer = fake.answer
    monkeypatch.setattr(
        fake,
        "answer",
        lambda r: (503, {"kind": "Status", "message": "etcd is down"}) if "nodes" in r.path else real_answer(r),
    )
    code, details, meta = from_cluster()
    assert (code, meta["pciname-error"], details) == (
        UNAVAILABLE,
        "cluster-refused",
        "cannot list nodes: 503 etcd is down",
    )
    monkeypatch.setattr(fake, "answer", real_answer)

    # The kubeconfig went away after start-up; a server without --kube.
    gone = tmp_path / "gone"
    gone.write_text(setup.kubeconfig.read_text())
    monkeypatch.setattr(server.service, "cluster", ClusterAccess(str(gone)))
    gone.unlink()
    code, details, meta = from_cluster()
    assert (code, meta["pciname-error"]) == (PRECONDITION, "cluster-config")
    assert details.startswith("this server cannot read the cluster: ")
    monkeypatch.setattr(server.service, "cluster", None)
    code, details, meta = from_cluster()
    assert (code, meta["pciname-error"]) == (PRECONDITION, "cluster-disabled") and "--kube" in details
    with pytest.raises(RemoteClusterError) as caught:
        client.gpu_options(from_cluster=True)
    assert caught.value.code == "FAILED_PRECONDITION" and caught.value.reason == "cluster-disabled"


def _kubeconfig_at(path, setup, port: int) -> str:
    config = json.loads(setup.kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = f"http://127.0.0.1:{port}"
    path.write_text(json.dumps(config))
    return str(path)


def test_gpu_options_unreachable_and_silent_cluster(server, stub, setup, tmp_path, monkeypatch):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        closed = s.getsockname()[1]
    monkeypatch.setattr(server.service, "cluster", ClusterAccess(_kubeconfig_at(tmp_path / "closed", setup, closed)))
    code, details, meta = call(stub.GpuOptions, pb.GpuOptionsRequest(from_cluster=True))
    assert (code, meta["pciname-error"]) == (UNAVAILABLE, "cluster-unreachable")
    assert details.startswith("cannot list KubeVirt CRs: cannot reach the API server")
    with socket.socket() as silent:  # takes connections, never answers
        silent.bind(("127.0.0.1", 0))
        silent.listen(8)
        path = _kubeconfig_at(tmp_path / "silent", setup, silent.getsockname()[1])
        monkeypatch.setattr(server.service, "cluster", ClusterAccess(path, timeout=0.2))
        started = time.monotonic()
        code, details, meta = call(stub.GpuOptions, pb.GpuOptionsRequest(from_cluster=True))
        assert (code, meta["pciname-error"]) == (UNAVAILABLE, "cluster-unreachable")
        assert (
            "did not answer within 0.2 seconds" in details and time.monotonic() - started < 60
        )  # --kube-timeout, not the RPC's deadline (120 s)
        # The RPC's deadline is nearer than --kube-timeout: it bounds the API calls too.
        monkeypatch.setattr(server.service, "cluster", ClusterAccess(path, timeout=30))
        started = time.monotonic()
        code, _, _ = call(stub.GpuOptions, pb.GpuOptionsRequest(from_cluster=True), timeout=0.5)
        assert code == grpc.StatusCode.DEADLINE_EXCEEDED
        assert time.monotonic() - started < 25  # the RPC's deadline, not --kube-timeout's 30 s


# -- flags, metrics ------------------------------------------------------------------------------


def test_serve_flags(setup, tmp_path):
    from pciname.cli import build_parser
    from pciname.server.app import ServeConfig as Config

    args = build_parser("serve").parse_args(
        [
            "serve",
            "--insecure",
            "--kube",
            "--kubeconfig",
            str(setup.kubeconfig),
            "--kube-context",
            "fake",
            "--kube-timeout",
            "3",
            "--max-lint-files",
            "5",
            "--max-lint-bytes",
            "1000",
        ]
    )
    config = Config(**{name: getattr(args, name) for name in Config.__dataclass_fields__})
    config.validate()
    assert (config.kube, config.kubeconfig, config.kube_context, config.kube_timeout) == (
        True,
        str(setup.kubeconfig),
        "fake",
        3.0,
    )
    assert (config.max_lint_files, config.max_lint_bytes) == (5, 1000)
    defaults = build_parser("serve").parse_args(["serve", "--insecure"])
    assert (defaults.kube, defaults.max_lint_files, defaults.max_lint_bytes) == (False, 100, 1024 * 1024)
    # One option given "goes with --kube", both "go" (main named both whichever was given)
    with pytest.raises(ServeError, match=r"^--kubeconfig goes with --kube \(reading the cluster is off without it\)$"):
        ServeConfig(insecure=True, kubeconfig=str(setup.kubeconfig)).validate()
    with pytest.raises(ServeError, match=r"^--kube-context goes with --kube \("):
        ServeConfig(insecure=True, kube_context="fake").validate()
    with pytest.raises(ServeError, match=r"^--kubeconfig, --kube-context go with --kube \("):
        ServeConfig(insecure=True, kubeconfig=str(setup.kubeconfig), kube_context="fake").validate()
    with pytest.raises(ServeError, match="--kube-timeout"):
        ServeConfig(insecure=True, kube=True, kube_timeout=0).validate()
    with pytest.raises(ServeError, match="--max-lint-files"):
        ServeConfig(insecure=True, max_lint_files=0).validate()
    broken = NameServer(ServeConfig(listen="127.0.0.1:0", insecure=True, kube=True, kubeconfig=str(tmp_path / "nope")))
    with pytest.raises(ServeError, match=r"^--kube: cannot read kubeconfig .*nope: No such file"):
        broken.start()


def test_metrics_count_the_feed_rpcs(server, stub):
    before = scrape(server.metrics_port)
    stub.Lint(files_request({"a.yaml": KUBEVIRT_CR}), timeout=20)
    call(stub.Lint, pb.LintRequest())
    stub.GpuOptions(pb.GpuOptionsRequest(kubevirt=json.dumps(KV)), timeout=20)
    call(stub.GpuOptions, pb.GpuOptionsRequest(kubevirt=json.dumps(KV), profile="nope"))
    after = scrape(server.metrics_port)

    def delta(name, **labels):
        return metric(after, name, **labels) - metric(before, name, **labels)

    assert delta("pciname_rpc_requests_total", method="Lint", code="OK") == 1
    assert delta("pciname_rpc_errors_total", method="Lint", code="INVALID_ARGUMENT") == 1
    assert delta("pciname_rpc_requests_total", method="GpuOptions", code="OK") == 1
    assert delta("pciname_rpc_errors_total", method="GpuOptions", code="NOT_FOUND") == 1
    assert delta("pciname_rpc_duration_seconds_count", method="GpuOptions") == 2
    assert metric(after, "pciname_rpc_in_flight") == 0


# -- hostile input ---------------------------------------------------------------------------

YAML_VALUES_REFUSED = [
    "0x_",
    "0b_",
    "!!float x",
    "!!timestamp 2020-13-45",
    "!!int x",
    "!!timestamp 2020-01-01 25:00:00",
]


@pytest.mark.parametrize("value", YAML_VALUES_REFUSED)
def test_yaml_values_the_constructors_refuse_are_invalid_argument(client, stub, value):
    """PyYAML resolves these as int, float or timestamp and its constructors
    raise ValueError: the caller's YAML is at fault, not the server."""
    kv = f"apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {{name: kv, namespace: ns}}\nspec:\n  x: {value}\n"
    code, details, meta = call(stub.GpuOptions, pb.GpuOptionsRequest(kubevirt=kv))
    assert (code, meta.get("pciname-error")) == (INVALID, "objects-input"), details
    assert details.startswith("kubevirt:5:6: neither JSON nor YAML: ") and "is not a valid" in details
    assert value.split()[-1] in details
    nodes = f"- kind: Node\n  metadata:\n    name: {value}\n"
    code, details, meta = call(stub.GpuOptions, pb.GpuOptionsRequest(kubevirt=json.dumps(KV), nodes=nodes))
    assert (code, meta.get("pciname-error")) == (INVALID, "objects-input"), details
    assert details.startswith("nodes:3:11: neither JSON nor YAML: ")
    with pytest.raises(RemoteInvalidArgument):
        client.gpu_options(kv)
    # Lint reads YAML nodes, not Python values: the same text is no error there.
    assert call(stub.Lint, files_request({"kv.yaml": kv}))[0] == OK


OVERSIZED_FEEDS = [
    ("Lint", files_request({"a": "x: 1"}, profile="latest" + " " * 100_000), "profile is too long"),
    ("Lint", files_request({"a": "x: 1"}, upgrade_to="v" * 100_000), "upgrade_to is too long"),
    (
        "GpuOptions",
        pb.GpuOptionsRequest(kubevirt=json.dumps(KV), profile="auto" + " " * 100_000),
        "profile is too long",
    ),
    (
        "GpuOptions",
        pb.GpuOptionsRequest(kubevirt=json.dumps(KV), kubevirt_name="n" * 100_000),
        "kubevirt_name is too long",
    ),
]


@pytest.mark.parametrize(
    ("method", "request_message", "needle"), OVERSIZED_FEEDS, ids=[f"{c[0]}-{i}" for i, c in enumerate(OVERSIZED_FEEDS)]
)
def test_oversized_profile_fields_are_invalid_argument(stub, method, request_message, needle):
    code, details, _ = call(getattr(stub, method), request_message)
    assert (code, needle in details) == (INVALID, True), details[:300]
    assert "…(" in details and len(details) < 300


def test_long_echoes_are_cut_so_the_client_sees_the_real_error(client, stub):
    fits = 2048  # bytes of details: far below a client's 8-16 KB of metadata, even percent-encoded
    big = "K" * 100_000
    code, details, meta = call(stub.GpuOptions, pb.GpuOptionsRequest(kubevirt=json.dumps({"kind": big})))
    assert (code, meta["pciname-error"]) == (INVALID, "objects-input")
    assert details == "kubevirt: expected a KubeVirt, got " + "K" * 64 + "…(100000 bytes)"
    named = json.dumps({"kind": "List", "items": [kubevirt({}, name=big), kubevirt({}, name=big)]})
    code, details, meta = call(stub.GpuOptions, pb.GpuOptionsRequest(kubevirt=named))
    assert (code, meta["pciname-error"]) == (INVALID, "kubevirt-ambiguous") and len(details) < 400

    # A file name of 100 KB in a Lint error: in the details and in pciname-file.
    name = "ü" * 50_000 + ".yaml"
    code, details, meta = call(stub.Lint, files_request({name: "a: [\n"}))
    assert (code, meta["pciname-error"], meta["pciname-line"]) == (INVALID, "lint-input", "2")
    assert len(details.encode()) <= fits and "bytes)" in details
    assert len(meta["pciname-file"]) < 4096
    with pytest.raises(RemoteLintInputError) as caught:
        client.lint({name: "a: [\n"})
    assert caught.value.file.startswith("üüü") and caught.value.line == 2

    # Many broken files: the details are cut as a whole.
    files = {f"{i:03d}-" + "n" * 4000: "a: [\n" for i in range(MAX_LINT_FILES)}
    code, details, meta = call(stub.Lint, files_request(files))
    assert (code, meta["pciname-error"]) == (INVALID, "lint-input")
    assert details.startswith("000-nnn") and len(details.encode()) <= fits
