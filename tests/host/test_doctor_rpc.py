"""The ``Doctor`` RPC on a real loopback server started with ``--host-root``
(the DaemonSet's read-only host mount): the same checkup as ``pciname scan
--variant VARIANT -o json`` on the same node, through the stub and the
client; a server without a host root, or whose root holds no sysfs, is
FAILED_PRECONDITION (pciname-error host-not-read); a variant the doctor
does not know is INVALID_ARGUMENT."""

from __future__ import annotations

import json

import grpc
import pytest

from pciname.client import DoctorCheckup, RemoteInvalidArgument
from pciname.server._proto import pciname_pb2 as pb
from tests.cli_run import pciname as cli
from tests.conftest import ServerSpec
from tests.host.doctor_nodes import preinstalled_node


@pytest.fixture(scope="module")
def node(tmp_path_factory):
    root = tmp_path_factory.mktemp("node")
    preinstalled_node(root)
    return root


@pytest.fixture(scope="module")
def server_spec(session_cache, node):
    return ServerSpec(config={"host_root": str(node)}, cache=session_cache)


def _cli(node, variant: str) -> dict:
    code, out, err = cli("scan", "--sysfs-root", str(node), "--variant", variant, "-o", "json")
    assert err == "" and code in (0, 1)
    return json.loads(out)


@pytest.mark.parametrize("variant", ["default", "vgpu", "container"])
def test_the_rpc_answers_what_the_cli_answers_on_the_same_node(client, node, variant):
    expected = _cli(node, variant)
    assert client.doctor(variant) == DoctorCheckup(
        variant=variant,
        workload=expected["workload"],
        servable=expected["servable"],
        findings=expected["findings"],
    )


def test_every_variant_and_the_ones_the_node_could_serve(client, node):
    expected = _cli(node, "all")
    got = client.doctor()
    assert (got.variant, got.workload, got.servable) == ("", "", ["container"])
    assert got.findings == expected["findings"]
    assert {f["code"] for f in got.findings} >= {"host-driver-preinstalled"}
    preinstalled = next(f for f in got.findings if f["code"] == "host-driver-preinstalled")
    assert preinstalled["cozystack"] == {"Package cozystack.gpu-operator spec.variant": "container"}


def test_a_variant_the_doctor_does_not_know(stub, client):
    with pytest.raises(grpc.RpcError) as caught:
        stub.Doctor(pb.DoctorRequest(variant="passthrough"), timeout=60)
    assert (caught.value.code(), caught.value.details()) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "variant 'passthrough': not one of default, vgpu, container",
    )
    with pytest.raises(RemoteInvalidArgument):
        client.doctor("passthrough")


def _refusal(stub) -> tuple[grpc.StatusCode, str, str]:
    with pytest.raises(grpc.RpcError) as caught:
        stub.Doctor(pb.DoctorRequest(variant="default"), timeout=60)
    meta = dict(caught.value.trailing_metadata())
    return caught.value.code(), caught.value.details(), meta["pciname-error"]


def test_a_server_without_a_host_root_reads_no_node(server, stub, monkeypatch):
    monkeypatch.setattr(server.service, "host_root", None)
    assert _refusal(stub) == (
        grpc.StatusCode.FAILED_PRECONDITION,
        "this server reads no node (it was started without --host-root DIR)",
        "host-not-read",
    )


def test_a_host_root_without_sysfs_is_the_servers_setup(server, stub, monkeypatch, tmp_path):
    monkeypatch.setattr(server.service, "host_root", str(tmp_path))
    code, details, reason = _refusal(stub)
    assert (code, reason) == (grpc.StatusCode.FAILED_PRECONDITION, "host-not-read")
    assert details.startswith("--host-root: ") and str(tmp_path) in details


def test_the_serve_flag_offers_the_doctors_variants():
    """``serve --host-variant`` writes the variants out (building the parser loads no host module)."""
    from pciname.host.doctor.rules import VARIANTS
    from pciname.server.config import HOST_VARIANTS

    assert HOST_VARIANTS == VARIANTS
