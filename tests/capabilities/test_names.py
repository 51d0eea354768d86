"""The requests of lookup, reverse and diff (pciname.capabilities.names):
each rule in both spellings, word for word as the CLI and gRPC said it
before there was one request, and the answers against the library's."""

from __future__ import annotations

import grpc
import pytest

import pciname
from pciname.base.files import MAX_LOOKUP_DEVICES, MAX_LOOKUP_STDIN_BYTES
from pciname.capabilities.names import (
    EMPTY,
    DiffRequest,
    LookupRequest,
    ReverseRequest,
    answer_diff,
    answer_lookup,
    answer_reverse,
)
from pciname.errors import PcinameError
from pciname.naming.checks import reverse_query
from pciname.requests.spelling import RequestError, Spelling
from pciname.server.rpc.wire import RpcFailure, check_batch, status_of

CLI, RPC = Spelling.CLI, Spelling.RPC


def refusal(request, spelling: Spelling = CLI) -> str:
    """The line ``request.validated()`` refuses it with, in ``spelling``'s
    words (a RequestError spells itself; ``str()`` is the CLI's)."""
    with pytest.raises(RequestError) as raised:
        request.validated()
    assert str(raised.value) == raised.value.spelled(CLI)
    return raised.value.spelled(spelling)


# -- lookup -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("request_", "spelling", "words"),
    [
        (LookupRequest(), CLI, "no devices given: name at least one DEVICE or use --stdin"),
        (LookupRequest(stdin=b" \n\t"), CLI, "no devices given: name at least one DEVICE or use --stdin"),
        (LookupRequest(), RPC, "empty request: no devices given"),
        (LookupRequest(single=True), RPC, "empty request: no device given (e.g. 10de:2236)"),
        (
            LookupRequest(("2236",) * 3, max_devices=2),
            CLI,
            "3 devices given; a lookup takes at most 2: split the input",
        ),
        (
            LookupRequest(("2236",) * 3, max_devices=2),
            RPC,
            "3 devices in one request, more than this server's maximum of 2 (--max-batch); split the request",
        ),
        (
            LookupRequest(stdin=b" " * (MAX_LOOKUP_STDIN_BYTES + 1)),
            CLI,
            f"--stdin: more than {MAX_LOOKUP_STDIN_BYTES} bytes; a lookup takes at most {MAX_LOOKUP_DEVICES} "
            "devices: split the input",
        ),
    ],
)
def test_lookup_refusals_in_each_spelling(request_, spelling, words):
    assert refusal(request_, spelling) == words


def test_lookup_counts_arguments_and_stdin_together():
    request = LookupRequest(("10de:2236",), stdin=b"1eb8\n2236 ", max_devices=3).validated()
    assert request.devices == ("10de:2236", "1eb8", "2236") and request.stdin is None
    assert refusal(LookupRequest(("10de:2236",), stdin=b"1eb8\n2236 ", max_devices=2)) == (
        "3 devices given; a lookup takes at most 2: split the input"
    )
    # exactly the limit of bytes is fine; what is not UTF-8 becomes U+FFFD, refused as a device later
    assert LookupRequest(stdin=b"2236" + b" " * (MAX_LOOKUP_STDIN_BYTES - 4)).validated().devices == ("2236",)
    assert LookupRequest(stdin=b"\xff 2236").validated().devices == ("\ufffd", "2236")


def test_a_request_with_nothing_to_read_is_itself():
    """The server's Resolve and ResolveBatch build one per call: without
    stdin, validating it copies nothing (the devices are the message's)."""
    devices = ["10de:2236"] * 5
    request = LookupRequest(devices, max_devices=5)
    assert request.validated() is request and request.validated().devices is devices


def test_the_rpc_count_limit_says_what_every_rpc_count_limit_says():
    """gRPC's words for too many devices are wire.check_batch's, and the
    status the servicer makes of the request's error is the same as of check_batch's."""
    with pytest.raises(RpcFailure) as wire:
        check_batch(7, "devices", 6)
    with pytest.raises(PcinameError) as request:
        LookupRequest(["2236"] * 7, max_devices=6).validated()
    assert status_of(request.value) == status_of(wire.value) == (grpc.StatusCode.INVALID_ARGUMENT, wire.value.details)


def test_every_empty_rpc_request_says_so():
    for request in (
        LookupRequest(),
        LookupRequest(single=True),
        ReverseRequest(" "),
        DiffRequest(None, "latest"),
    ):
        assert refusal(request, RPC).startswith(EMPTY)
        assert not refusal(request, CLI).startswith(EMPTY)


@pytest.mark.parametrize("output", ["name", "json", "yaml", "table"])
def test_lookup_answer_is_the_library_answer(output):
    devices = ("10de:2236", "10DE:2236", "10de:ffff", "10de:2236", "1eb8")
    request = LookupRequest(devices, output=output).validated()
    records = answer_lookup(request, "latest")
    assert records == [pciname.resolve(d, "latest").to_dict() for d in devices]
    shared = records[0] is records[3]  # one spelling resolved once: its repeats share the record
    assert shared is (output != "yaml")  # but YAML would print a shared record as an alias


# -- reverse ------------------------------------------------------------------------


def test_reverse_refusal_in_each_spelling():
    assert refusal(ReverseRequest(" \t")) == "no resource name given (e.g. nvidia.com/GA102GL_A10)"
    assert refusal(ReverseRequest(""), RPC) == ("empty request: no resource_name given (e.g. nvidia.com/GA102GL_A10)")


@pytest.mark.parametrize("resource", ["GA102GL_A10", " nvidia.com/GA102GL_A10\n", "nvidia.com/NOPE"])
def test_reverse_answer_is_the_library_answer(resource):
    request = ReverseRequest(resource, profile="latest").validated()
    assert request.resource_name == reverse_query(resource)
    assert answer_reverse(request, "latest") == pciname.reverse(resource, "latest")


# -- diff ---------------------------------------------------------------------------


def test_diff_refusal_in_each_spelling():
    assert refusal(DiffRequest("latest", None)) == "both --from and --to are required"
    assert refusal(DiffRequest(None, None), RPC) == "empty request: both from_profile and to_profile are required"
    # "" is given: the default profile (the CLI's --from ""); only gRPC's blank fields are None
    assert DiffRequest("", "latest").validated() == DiffRequest("", "latest")


def test_diff_answer_is_the_library_answer():
    old, new = "kubevirt-gpu-device-plugin@v1.2.1", "latest"
    request = DiffRequest(old, new).validated()
    entries = answer_diff(request, old, new)
    assert entries and entries == pciname.diff(old, new)
