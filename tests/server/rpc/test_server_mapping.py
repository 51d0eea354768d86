"""pciname.server.rpc.mapping, the one mapping between pciname.v1 messages
and plain values (read from the descriptors), and what the handlers build on
it (pciname.server.rpc.shared): a capability's request from a message by
field name, and a message's limits as rules checked in order."""

from __future__ import annotations

from dataclasses import dataclass

import grpc
import pytest
from google.protobuf import json_format

from pciname.capabilities.dra_claims import DraClaimsRequest
from pciname.capabilities.lint import LintRequest
from pciname.lint.linter import Finding
from pciname.naming.checks import NameWarning
from pciname.requests.spelling import RequestError, Spelling
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.rpc.mapping import plain, to_message
from pciname.server.rpc.shared import batch, chars, check, needs, no_auto, request_from
from pciname.server.rpc.wire import RpcFailure


def test_json_format_would_not_bring_the_values_back():
    """Why the mapping reads the descriptors itself: json_format writes an
    int64 as a string and leaves out what is at its default."""
    message = pb.NodeAllocatable(name="", allocatable=5)
    assert json_format.MessageToDict(message, preserving_proto_field_name=True) == {"allocatable": "5"}
    assert plain(message) == {"name": "", "allocatable": 5}


def test_fields_are_found_by_name_or_json_name_and_overrides_win():
    entry = {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/A10", "externalResourceProvider": True}
    assert to_message(pb.PciHostDevice, entry) == pb.PciHostDevice(
        pci_vendor_selector="10DE:2236", resource_name="nvidia.com/A10", external_resource_provider=True
    )
    assert to_message(pb.Warning, NameWarning("c", "m"), message="over") == pb.Warning(code="c", message="over")
    with pytest.raises(TypeError, match="^pciname.v1.Warning has no field mesage$"):
        to_message(pb.Warning, mesage="a typo is not left out unseen")


def test_none_leaves_a_field_unset_and_a_message_item_is_copied_as_it_is():
    entry = pb.DiffEntry(device="10de:2236", change=pb.DiffEntry.APPEARS, new_resource_name="nvidia.com/A10")
    response = to_message(pb.DiffResponse, from_profile="a", to_profile=None, changes=[entry])
    assert response.to_profile == "" and response.changes[0] == entry
    assert not response.changes[0].HasField("old_resource_name")  # not set to "" by reading its attribute
    assert plain(response.changes[0])["old_resource_name"] is None


def test_values_counts_and_texts():
    finding = Finding("f.yaml", 1, 2, 1, "spec", ["a", None, 3], "code", "message", None)
    message = to_message(pb.Finding, finding)
    assert message.HasField("value") and not message.HasField("expected")
    assert plain(message)["value"] == ["a", None, 3] and plain(message)["expected"] is None
    option = to_message(pb.GpuOption, {"allocatable": 2**70, "nodes": [{"name": 7, "allocatable": -(2**70)}]})
    assert (option.allocatable, option.nodes[0].allocatable, option.nodes[0].name) == (2**63 - 1, -(2**63), "7")


def test_a_scalar_map_is_filled_from_a_dict_and_read_back_as_one():
    values = {"Package cozystack.gpu-operator spec.variant": "container", "b": ""}
    message = to_message(pb.DoctorFinding, {"code": "c", "way_back": ["one", "two"], "cozystack": values})
    assert dict(message.cozystack) == values and list(message.way_back) == ["one", "two"]
    assert plain(message)["cozystack"] == values
    assert plain(pb.DoctorFinding())["cozystack"] == {}


def test_readers_make_library_values_of_nested_messages():
    message = pb.SkippedEntry(item="x", kind="pci", reasons=[pb.Warning(code="c", message="m")])
    values = plain(message, {"pciname.v1.Warning": lambda w: NameWarning(**w)})
    assert values == {"item": "x", "kind": "pci", "resource_name": None, "reasons": [NameWarning("c", "m")]}


# -- requests from messages ---------------------------------------------------------------------


def test_a_request_is_built_by_field_name():
    message = pb.DraClaimsRequest(devices=["10de:2236"], dra_driver="", kubevirt="v1.6.0", name="", prefix="p")
    asked = request_from(DraClaimsRequest, message)
    # blank: None where the request's default is None, else the request's default
    assert asked == DraClaimsRequest(("10de:2236",), kubevirt="v1.6.0", prefix="p")
    assert (asked.dra_driver, asked.name) == (None, "vm-gpus")


def test_values_given_win_and_fields_may_be_renamed():
    @dataclass(frozen=True)
    class Asked:
        resource: str
        profile: str | None = None

    message = pb.ReverseRequest(resource_name="nvidia.com/A10", profile="")
    assert request_from(Asked, message, {"resource_name": "resource"}) == Asked("nvidia.com/A10", None)
    assert request_from(Asked, message, {"resource_name": "resource"}, profile="") == Asked("nvidia.com/A10", "")
    lint = request_from(LintRequest, pb.LintRequest(profile="latest"), files=(("a", "x: 1\n"),))
    assert (lint.files, lint.profile, lint.upgrade_to) == ((("a", "x: 1\n"),), "latest", None)


def _refused(message, rules, max_batch=10):
    with pytest.raises(RpcFailure) as caught:
        check(message, rules, max_batch)
    assert caught.value.code == grpc.StatusCode.INVALID_ARGUMENT
    return caught.value.details


def test_the_first_broken_rule_answers():
    rules = (needs("devices", "devices"), batch("devices", "devices"), chars(5, "devices"), no_auto("profile"))
    assert _refused(pb.DraClaimsRequest(), rules) == "empty request: no devices given"
    assert _refused(pb.DraClaimsRequest(devices=["a"] * 11), rules).startswith("11 devices in one request")
    assert _refused(pb.DraClaimsRequest(devices=["a", "toolong"]), rules) == (
        "devices[1] is too long (7 characters, at most 5): 'toolong'"
    )
    with pytest.raises(RequestError) as auto:
        check(pb.VgpuTypesRequest(device="x", profile=" Auto "), rules[3:])
    assert auto.value.spelled(Spelling.RPC).startswith("profile auto needs a cluster to infer from")
    check(pb.DraClaimsRequest(devices=["a"]), rules[:3], 10)  # none broken
