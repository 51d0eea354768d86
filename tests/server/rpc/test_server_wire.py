"""pciname.server.rpc.wire and pciname.client, where library values
become pciname.v1 messages (through pciname.server.rpc.mapping) and back: every conversion round-trips (through the
bytes on the wire), errors come back as the classes they left as, the
servicer implements exactly the .proto's methods, and ServeConfig, the one
source of ``pciname serve``'s defaults, refuses what the command line
refuses, in the same words."""

from __future__ import annotations

import ast
import logging
import math
import subprocess
import sys
from dataclasses import fields
from pathlib import Path

import grpc
import pytest
from hypothesis import example, given, settings, strategies as st

from pciname import client as remote
from pciname.client import GpuOptions, LintResult, PermittedHostDevices, SkippedItem
from pciname.errors import (
    InvalidDeviceError,
    PciIdsError,
    RemoteClusterError,
    RemoteInvalidArgument,
    RemoteLintInputError,
    RemoteSnapshotMissing,
    RemoteUnknownProfile,
    ServeError,
    ServiceError,
    SnapshotMissingError,
    UnknownAlgorithmError,
    UnknownProfileError,
)
from pciname.kubevirt.generate import Skipped
from pciname.lint.linter import Finding
from pciname.naming.checks import NameWarning
from pciname.resolution.results import DiffEntry, ProfileInfo, Resolution
from pciname.server import config
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.config import ServeConfig
from pciname.server.metrics import Metrics
from pciname.server.rpc import wire
from pciname.server.rpc.mapping import to_message
from pciname.server.service import PciNameService
from tests.conftest import REPO

ROUND_TRIPS = settings(max_examples=50, deadline=None)

# -- strategies: library values, edge values included ----------------------------------------

# Any text a protobuf string carries (hypothesis leaves out lone surrogates),
# and the texts the server really sends: U+FFFD for undecodable pci.ids bytes.
text = st.one_of(
    st.text(max_size=40),
    st.sampled_from(["", "\ufffd", "GA102GL \ufffd\ufffd [A10]", "ünïcödé ✓ 名前", "nvidia.com/GA102GL_A10"]),
)
optional_text = st.none() | text
warnings = st.lists(st.builds(NameWarning, text, text), max_size=3).map(tuple)
uint32 = st.integers(0, 2**32 - 1)
int64 = st.integers(-(2**63), 2**63 - 1)

resolutions = st.builds(
    Resolution,
    device=text,
    profile=text,
    algorithm=text,
    plugin_release=optional_text,
    name=text,
    resource_name=optional_text,
    vendor_name=optional_text,
    device_name=optional_text,
    pci_ids_version=optional_text,
    pci_ids_sha256=optional_text,
    env_var=optional_text,
    socket_path=optional_text,
    warnings=warnings,
)
diff_entries = st.builds(DiffEntry, device=text, old=optional_text, new=optional_text)
profile_infos = st.builds(
    ProfileInfo,
    name=text,
    kind=text,
    released=optional_text,
    algorithm=text,
    plugin_release=optional_text,
    pci_ids_version=optional_text,
    pci_ids_sha256=optional_text,
    installed=st.booleans(),
    path=st.none(),  # stays on the server
    aliases=st.lists(text, max_size=3).map(tuple),
    note=text,
)
skipped_items = st.builds(SkippedItem, item=text, kind=text, resource_name=optional_text, reasons=warnings)
pci_entries = st.fixed_dictionaries(
    {"pciVendorSelector": text, "resourceName": text, "externalResourceProvider": st.booleans()}
)
mdev_entries = st.fixed_dictionaries(
    {"mdevNameSelector": text, "resourceName": text, "externalResourceProvider": st.booleans()}
)
permitted = st.builds(
    PermittedHostDevices,
    profile=text,
    pci_host_devices=st.lists(pci_entries, max_size=3),
    mediated_devices=st.lists(mdev_entries, max_size=3),
    yaml=text,
    left_out=st.lists(skipped_items, max_size=2),
    notes=st.lists(skipped_items, max_size=2),
    json=text,
    format=st.sampled_from(["kubevirt", "cozystack", "patch"]),
    clashes=st.lists(skipped_items, max_size=2),
    variant=st.sampled_from(["", "default", "vgpu"]),
)
# What a finding's value and expected value are: plain scalars, a list of
# them (the closest names), or nothing. Whole floats come back as int (equal).
numbers = st.integers(-(2**53), 2**53) | st.floats(allow_nan=False)
scalars = st.booleans() | numbers | text
plain_values = st.none() | scalars | st.lists(st.none() | scalars, max_size=4)
findings = st.builds(
    Finding,
    file=text,
    line=uint32,
    column=uint32,
    document=uint32,
    path=text,
    value=plain_values,
    code=text,
    message=text,
    expected=plain_values,
)
nodes = st.fixed_dictionaries({"name": text, "allocatable": int64})
options = st.fixed_dictionaries(
    {
        "resource_name": text,
        "kind": st.sampled_from(["pci", "mdev"]),
        "selectors": st.lists(text, max_size=3),
        "devices": st.lists(text, max_size=3),
        "models": st.lists(text, max_size=3),
        "allocatable": int64,
        "nodes": st.lists(nodes, max_size=3),
    }
)


def over_the_wire(message):
    """The message as the other side parses it."""
    return type(message).FromString(message.SerializeToString())


# -- round trips ---------------------------------------------------------------------------------


@ROUND_TRIPS
@given(st.lists(resolutions, max_size=4))
def test_resolutions_round_trip_alone_and_framed_in_a_batch(values):
    for r in values:
        assert remote.resolution_from_message(over_the_wire(wire.resolution_message(r))) == r
    # ResolveBatch's answer is its elements' encodings, framed and concatenated.
    batch = b"".join(wire.framed(wire.resolution_message(r).SerializeToString()) for r in values)
    response = pb.ResolveBatchResponse.FromString(batch)
    assert [remote.resolution_from_message(m) for m in response.results] == values


def test_a_resolution_sends_what_it_derives():
    r = Resolution(
        "10de:2236",
        "latest",
        "vendor-section",
        "v1.6.0",
        "GA102GL_A10",
        "nvidia.com/GA102GL_A10",
        "NVIDIA Corporation",
        "GA102GL [A10]",
        "2025.07.11",
        "ab" * 32,
        "PCI_RESOURCE_X",
        "/s.sock",
    )
    message = wire.resolution_message(r)
    assert message.advertised is True and r.advertised is True
    unset = wire.resolution_message(
        Resolution("10de:0001", "p", "a", None, "", None, None, None, None, None, None, None)
    )
    assert not unset.HasField("resource_name") and not unset.advertised


@ROUND_TRIPS
@given(text, text, st.lists(diff_entries, max_size=4))
def test_diff_entries_round_trip(old, new, entries):
    response = over_the_wire(wire.diff_response(old, new, entries))
    assert (response.from_profile, response.to_profile) == (old, new)
    assert remote.diff_from_response(response) == entries
    changes = {"renamed": pb.DiffEntry.RENAMED, "appears": pb.DiffEntry.APPEARS, "vanishes": pb.DiffEntry.VANISHES}
    assert [m.change for m in response.changes] == [changes[e.change] for e in entries]


@ROUND_TRIPS
@given(st.lists(profile_infos, max_size=4), st.integers(0, 2**64 - 1), st.data())
def test_profile_infos_round_trip(infos, generation, data):
    default = data.draw(st.sampled_from([i.name for i in infos] or ["latest"]))
    response = over_the_wire(wire.profiles_response(infos, default, generation))
    assert remote.profiles_from_response(response) == infos
    assert response.data_generation == generation
    assert [p.is_default for p in response.profiles] == [i.name == default for i in infos]


def test_profile_info_leaves_its_path_home_and_sends_valid_text():
    undecodable = b"2024 \xff".decode("utf-8", "surrogateescape")
    info = ProfileInfo(
        "custom",
        "custom",
        None,
        "vendor-section",
        None,
        undecodable,
        "ab" * 32,
        True,
        "/srv/pci.ids",
        (),
        f"over {undecodable}",
    )
    back = remote.profile_info_from_message(over_the_wire(wire.profile_info_message(info)))
    assert back.path is None
    assert (back.pci_ids_version, back.note) == ("2024 \ufffd", "over 2024 \ufffd")


@ROUND_TRIPS
@given(permitted)
def test_permitted_host_devices_round_trip(value):
    response = to_message(
        pb.PermittedHostDevicesResponse,
        value.to_dict()["permittedHostDevices"],
        profile=value.profile,
        yaml=value.yaml,
        json=value.json,
        format=value.format,
        left_out=value.left_out,
        notes=value.notes,
        clashes=value.clashes,
        variant=value.variant,
    )
    assert remote.permitted_from_response(over_the_wire(response)) == value


@ROUND_TRIPS
@given(
    st.lists(
        st.builds(
            Skipped, item=text, kind=st.sampled_from(["pci", "mdev"]), resource_name=optional_text, reasons=warnings
        ),
        max_size=3,
    )
)
def test_the_librarys_skipped_entries_come_back_as_skipped_items(entries):
    sent = to_message(pb.PermittedHostDevicesResponse, left_out=entries)
    back = remote.permitted_from_response(over_the_wire(sent)).left_out
    assert back == [SkippedItem(s.item, s.kind, s.resource_name, s.reasons) for s in entries]


@ROUND_TRIPS
@given(st.lists(findings, max_size=4), text, optional_text, uint32)
@example([], "", None, 0)
@example([Finding("a.yaml", 1, 2, 1, "spec", [], "wrong-resource-name", "\ufffd", None)], "latest", None, 1)
def test_lint_results_round_trip(found, profile, upgrade_to, documents):
    response = wire.lint_response(found, profile=profile, upgrade_to=upgrade_to, documents=documents)
    expected = LintResult(found, profile, upgrade_to, documents, "".join(f.format() + "\n" for f in found))
    assert remote.lint_from_response(over_the_wire(response)) == expected


def finding_message(finding):
    return to_message(pb.Finding, finding)


def finding_back(message):
    response = pb.LintResponse()
    response.findings.append(message)
    return remote.lint_from_response(over_the_wire(response)).findings[0]


def test_finding_values_keep_their_kind():
    for value in (None, "", [], ["a", None, True, 3], True, False, 0, 7, -1.5, "\ufffd"):
        finding = Finding("f", 1, 1, 1, "p", value, "c", "m", value)
        message = over_the_wire(finding_message(finding))
        assert message.HasField("value") is (value is not None)
        back = finding_back(message)
        assert (back.value, back.expected) == (value, value)
        assert type(back.value) is type(value)
    assert finding_back(finding_message(Finding("f", 1, 1, 1, "p", 2.0, "c", "m"))).value == 2
    assert finding_back(finding_message(Finding("f", 1, 1, 1, "p", {"a": 1}, "c", "m"))).value == "{'a': 1}"


@ROUND_TRIPS
@given(st.lists(options, max_size=3), text, text, text)
def test_gpu_options_round_trip(values, profile, source, kubevirt):
    response = to_message(
        pb.GpuOptionsResponse, options=values, profile=profile, profile_source=source, kubevirt=kubevirt
    )
    assert remote.gpu_options_from_response(over_the_wire(response)) == GpuOptions(values, profile, source, kubevirt)


def test_gpu_option_counts_beyond_int64_are_clamped():
    option = {
        "resource_name": "r",
        "kind": "pci",
        "selectors": [],
        "devices": [],
        "models": [],
        "allocatable": 2**70,
        "nodes": [{"name": 7, "allocatable": -(2**70)}],
    }
    sent = to_message(pb.GpuOptionsResponse, options=[option])
    back = remote.gpu_options_from_response(over_the_wire(sent)).options[0]
    assert back["allocatable"] == 2**63 - 1 and back["nodes"] == [{"name": "7", "allocatable": -(2**63)}]


# -- errors: out as a status, back as the class they left as ----------------------------------


TARGET = "127.0.0.1:50051"


def come_back(error: BaseException):
    code, details = wire.status_of(error)
    return remote.remote_error(code, details, dict(wire.trailing_metadata(error)), TARGET)


@pytest.mark.parametrize(
    ("error", "expected", "code"),
    [
        (InvalidDeviceError("malformed device '10de:zz'"), RemoteInvalidArgument, "INVALID_ARGUMENT"),
        (UnknownAlgorithmError("unknown algorithm 'x'"), RemoteInvalidArgument, "INVALID_ARGUMENT"),
        (UnknownProfileError("unknown profile 'nope'"), RemoteUnknownProfile, "NOT_FOUND"),
        (PciIdsError("/srv/pci.ids: changed"), RemoteSnapshotMissing, "FAILED_PRECONDITION"),
        (
            wire.failure(grpc.StatusCode.INVALID_ARGUMENT, "kubevirt: not YAML", wire.OBJECTS_INPUT),
            RemoteInvalidArgument,
            "INVALID_ARGUMENT",
        ),
        *[
            (
                wire.failure(grpc.StatusCode.FAILED_PRECONDITION, f"cluster trouble {reason}", reason),
                RemoteClusterError,
                "FAILED_PRECONDITION",
            )
            for reason in remote.CLUSTER_REASONS
        ],
    ],
)
def test_errors_come_back_as_the_classes_they_left_as(error, expected, code):
    remote = come_back(error)
    assert type(remote) is expected and remote.code == code
    assert str(remote) == str(error)
    if isinstance(remote, RemoteClusterError):
        assert remote.reason == error.metadata[0][1]


def test_a_missing_snapshot_comes_back_with_its_file():
    error = SnapshotMissingError("needs 2019-08-14", snapshot="plugin-2019-08-14", sha256="ab" * 32, url="https://x/y")
    remote = come_back(error)
    assert isinstance(remote, RemoteSnapshotMissing) and isinstance(remote, SnapshotMissingError)
    assert (remote.snapshot, remote.sha256, remote.url) == (error.snapshot, error.sha256, error.url)


@ROUND_TRIPS
@given(st.text(min_size=1, max_size=300), st.none() | st.integers(1, 10**6))
@example("dir/ünï cödé\ufffd.yaml", 3)
@example("%41 100%", None)
def test_a_lint_input_error_comes_back_with_its_file_and_line(name, line):
    extra = [(wire.FILE_KEY, wire.metadata_text(name))]
    if line is not None:
        extra.append((wire.LINE_KEY, str(line)))
    remote = come_back(wire.failure(grpc.StatusCode.INVALID_ARGUMENT, f"{name}: not YAML", wire.LINT_INPUT, *extra))
    assert isinstance(remote, RemoteLintInputError) and remote.line == line
    assert remote.file == wire.shown(name, wire.METADATA_CHARS, quote=False)  # cut when long
    assert all(0x20 <= ord(c) < 0x7F for c in wire.metadata_text(name))  # what metadata carries


@pytest.mark.parametrize(
    ("error", "message"),
    [
        (
            wire.RpcFailure(grpc.StatusCode.UNAVAILABLE, "still loading"),
            f"pciname server {TARGET} is unavailable: still loading",
        ),
        (
            wire.RpcFailure(grpc.StatusCode.DEADLINE_EXCEEDED, "too late"),
            f"pciname server {TARGET} did not answer in time (too late)",
        ),
        (KeyError("x"), f"pciname server {TARGET}: INTERNAL: internal error: KeyError: 'x'"),
    ],
)
def test_other_statuses_come_back_as_service_errors(error, message):
    remote = come_back(error)
    assert type(remote) is ServiceError and str(remote) == message


def test_details_are_one_bounded_line():
    code, details = wire.status_of(InvalidDeviceError("a\nb\r\n" + "é" * 2000))
    assert code is grpc.StatusCode.INVALID_ARGUMENT and "\n" not in details and "\r" not in details
    assert details.startswith("a b ") and details.endswith("(4004 bytes)")
    assert len(details.encode()) <= wire.MAX_DETAILS_BYTES + len("…(4004 bytes)".encode())


def test_the_reasons_and_metadata_keys_are_defined_in_wire_only():
    """The client reads them from wire: no other module spells them."""
    spelled = {
        wire.ERROR_KEY,
        wire.FILE_KEY,
        wire.LINE_KEY,
        wire.SNAPSHOT_KEY,
        wire.SHA256_KEY,
        wire.URL_KEY,
        wire.LINT_INPUT,
        wire.OBJECTS_INPUT,
        *remote.CLUSTER_REASONS,
    }
    assert {"pciname-error", "lint-input", "cluster-disabled", "kubevirt-ambiguous"} <= spelled
    package = REPO / "pciname"
    for path in package.rglob("*.py"):
        if path == package / "server" / "rpc" / "wire.py" or "_proto" in path.parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        docstrings = {
            id(node.body[0].value)
            for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef))
            and node.body
            and isinstance(node.body[0], ast.Expr)
            and isinstance(node.body[0].value, ast.Constant)
        }
        found = {
            node.value
            for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and node.value in spelled and id(node) not in docstrings
        }
        assert not found, f"{path.relative_to(REPO)} spells {sorted(found)}: import them from pciname.server.rpc.wire"


# -- the servicer implements the .proto ----------------------------------------------------------

PROTO_SERVICE = pb.DESCRIPTOR.services_by_name["PciName"]


def servicer() -> PciNameService:
    return PciNameService(lambda: None, Metrics(), logging.getLogger("test-wire"))


def test_the_servicer_implements_exactly_the_protos_methods():
    in_proto = {method.name: method for method in PROTO_SERVICE.methods}
    handlers = servicer().method_handlers()
    assert sorted(handlers) == sorted(in_proto), "methods missing or extra"
    for name, handler in handlers.items():
        method = in_proto[name]
        assert (handler.request_streaming, handler.response_streaming) == (
            method.client_streaming,
            method.server_streaming,
        ), name
    for name, (_, request_type) in servicer().rpcs().items():
        assert request_type.DESCRIPTOR.full_name == in_proto[name].input_type.full_name, name
    assert tuple(in_proto) == wire.METHODS and wire.SERVICE_NAME == "pciname.v1.PciName"


def test_a_running_server_answers_every_method_of_the_proto_and_no_other():
    """Registered as gRPC serves it: every .proto method is handled (no data
    loaded yet: UNAVAILABLE), anything else is UNIMPLEMENTED."""
    from pciname.server import NameServer

    server = NameServer(ServeConfig(listen="127.0.0.1:0", insecure=True, watch_interval=0))
    server.start()
    try:
        with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
            for method in PROTO_SERVICE.methods:
                path = f"/{PROTO_SERVICE.full_name}/{method.name}"
                call = channel.unary_stream(path) if method.server_streaming else channel.unary_unary(path)
                with pytest.raises(grpc.RpcError) as caught:
                    result = call(b"", timeout=30)
                    if method.server_streaming:
                        list(result)
                assert caught.value.code() is grpc.StatusCode.UNAVAILABLE, method.name
            with pytest.raises(grpc.RpcError) as caught:
                channel.unary_unary(f"/{PROTO_SERVICE.full_name}/NoSuchMethod")(b"", timeout=30)
            assert caught.value.code() is grpc.StatusCode.UNIMPLEMENTED
    finally:
        server.stop()


def test_metrics_count_every_method_of_the_proto():
    from pciname.server import metrics

    assert tuple(method.name for method in PROTO_SERVICE.methods) == metrics.METHODS


# -- ServeConfig: the one source of serve's defaults and checks --------------------------------


def test_serves_defaults_are_serveconfigs():
    from pciname.cli import build_parser

    args = build_parser("serve").parse_args(["serve"])
    assert {f.name: getattr(args, f.name) for f in fields(ServeConfig)} == vars(ServeConfig())
    assert (args.log_format, args.log_level) == (config.DEFAULT_LOG_FORMAT, config.DEFAULT_LOG_LEVEL)
    assert args.listen == config.DEFAULT_LISTEN == f"[::]:{config.DEFAULT_PORT}"


def test_serves_help_shows_serveconfigs_defaults(capsys):
    from pciname.cli import build_parser

    with pytest.raises(SystemExit):
        build_parser("serve").parse_args(["serve", "--help"])
    shown = " ".join(capsys.readouterr().out.split()).replace("- ", "-")  # lines break after hyphens
    for needle in (
        f"(default {config.DEFAULT_LISTEN};",
        "(default 16)",
        "(default 256)",
        "(default 10000)",
        "(default 4 MiB)",
        "(default 64 MiB)",
        "(default 1 MiB)",
        "(default 100)",
        "(default 10)",
        "(default 2)",
        "(default vendor-section)",
        "(default text)",
        "0: never (default 0)",
    ):
        assert needle in shown, needle
    assert f"(default {ServeConfig.max_workers})" in shown and f"(default {ServeConfig.max_batch})" in shown


def test_the_log_choices_and_healths_port_are_serveconfigs():
    from pciname.cli import build_parser, service

    serve = build_parser("serve")._subparsers._group_actions[0].choices["serve"]
    choices = {a.dest: tuple(a.choices or ()) for a in serve._actions if a.dest in ("log_format", "log_level")}
    assert choices == {"log_format": config.LOG_FORMATS, "log_level": config.LOG_LEVELS}
    assert f"localhost:{config.DEFAULT_PORT}" == service.DEFAULT_SERVER
    assert config.DEFAULT_LOG_FORMAT in config.LOG_FORMATS and config.DEFAULT_LOG_LEVEL in config.LOG_LEVELS


BAD_VALUES = [
    *[
        (name, value)
        for name in config.COUNT_FIELDS
        for value in (0, -1, config.MAX_INT + 1, math.inf, math.nan, 1.5, "16", True)
    ],
    *[
        (name, value)
        for name in config.SECONDS_FIELDS
        for value in (math.inf, -math.inf, math.nan, -1, -0.5, config.MAX_SECONDS + 1, "2", None)
    ],
]


@pytest.mark.parametrize(("name", "value"), BAD_VALUES)
def test_serveconfig_refuses_values_out_of_range(name, value):
    with pytest.raises(ServeError) as caught:
        ServeConfig(insecure=True, **{name: value}).validate()
    message = str(caught.value)
    assert message.startswith(f"{config.flag(name)}: ") and "\n" not in message


@pytest.mark.parametrize(
    ("flag", "text", "value"),
    [
        ("--max-batch", "0", 0),
        ("--max-batch", "99999999999", 99999999999),
        ("--max-recv-message-bytes", "3000000000", 3_000_000_000),
        ("--grace", "nan", math.nan),
        ("--watch-interval", "inf", math.inf),
        ("--shutdown-delay", "-1", -1.0),
        ("--max-connection-age", "1e10", 1e10),
        ("--kube-timeout", "-3", -3.0),
    ],
)
def test_serveconfig_refuses_in_the_words_of_the_command_line(capsys, flag, text, value):
    from pciname.cli import build_parser

    with pytest.raises(SystemExit) as exited:
        build_parser("serve").parse_args(["serve", "--insecure", flag, text])
    assert exited.value.code == 2
    cli = capsys.readouterr().err
    assert cli.startswith(f"pciname serve: error: argument {flag}: ")
    problem = cli.removeprefix(f"pciname serve: error: argument {flag}: ").removesuffix(f": {text!r}\n")
    with pytest.raises(ServeError) as caught:
        ServeConfig(insecure=True, **{flag[2:].replace("-", "_"): value}).validate()
    assert str(caught.value) == f"{flag}: {problem}: {value!r}"


def test_serveconfig_refuses_what_else_the_command_line_refuses():
    with pytest.raises(ServeError, match=r"^--pciids: empty file name$"):
        ServeConfig(insecure=True, pciids="").validate()
    with pytest.raises(ServeError, match=r"^--algorithm: invalid choice: 'nope' \(choose from 'whole-file-2019', "):
        ServeConfig(insecure=True, algorithm="nope").validate()
    with pytest.raises(ServeError, match=r"^bad address 'nope': expected HOST:PORT"):
        ServeConfig(insecure=True, listen="nope").validate()
    with pytest.raises(ServeError, match=r"^--kube-timeout must be more than 0$"):
        ServeConfig(insecure=True, kube=True, kube_timeout=0.0).validate()
    ServeConfig(insecure=True).validate()
    ServeConfig(insecure=True, max_batch=config.MAX_INT, grace=config.MAX_SECONDS, shutdown_delay=0).validate()


def test_the_config_and_the_wire_load_without_the_server():
    """The command line checks flag values with pciname.server.config, and
    the client reads answers with pciname.server.rpc.wire (and its mapping): neither loads the
    server (nor does config load grpc)."""
    code = (
        "import sys\n"
        "import pciname.server.config\n"
        "assert 'grpc' not in sys.modules, 'config loaded grpc'\n"
        "import pciname.client\n"
        "server = sorted(m for m in sys.modules if m.startswith('pciname.server.'))\n"
        "print(server)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(
        sorted(
            [
                "pciname.server._proto",
                "pciname.server._proto.pciname_pb2",
                "pciname.server._proto.pciname_pb2_grpc",
                "pciname.server.config",
                "pciname.server.rpc",  # a docstring only
                "pciname.server.rpc.mapping",
                "pciname.server.rpc.wire",
            ]
        )
    )


def test_every_server_module_names_its_job():
    for path in sorted((REPO / "pciname" / "server").glob("*.py")) + [REPO / "pciname" / "client.py"]:
        docstring = ast.get_docstring(ast.parse(Path(path).read_text(encoding="utf-8")))
        assert docstring and docstring.split("\n")[0].strip(), f"{path.name} has no docstring"
