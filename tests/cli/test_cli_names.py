"""``pciname lookup``, ``reverse`` and ``diff`` through argparse (the full
path, :func:`pciname.cli.full`): each builds its request
(pciname.capabilities.names) from its arguments and nothing else, leaves
the arguments as parsed, and refuses bad input in the words it always used."""

from __future__ import annotations

import io
import sys

import pytest

import pciname
from pciname.base.files import MAX_LOOKUP_DEVICES
from pciname.capabilities.names import DiffRequest, LookupRequest, ReverseRequest
from pciname.cli import build_parser, full
from tests.cli_run import call


def stdin_of(monkeypatch, data: bytes | None) -> None:
    monkeypatch.setattr(sys, "stdin", None if data is None else io.TextIOWrapper(io.BytesIO(data)))


@pytest.mark.parametrize(
    ("argv", "stdin"),
    [
        (["lookup", "10de:2236", "1eb8", "-o", "table"], None),
        (["lookup", "--stdin", "10de:2236", "-o", "yaml", "-p", "latest"], b"1eb8 2236\n"),
        (["reverse", " GA102GL_A10 ", "-o", "json", "-p", "latest"], None),
        (["diff", "--from", "kubevirt-gpu-device-plugin@v1.2.1", "--to", "latest", "-o", "json"], None),
    ],
)
def test_the_arguments_stay_as_parsed(argv, stdin, monkeypatch, capsys):
    """No decision travels back into the Namespace: the request carries it."""
    stdin_of(monkeypatch, stdin)
    args = build_parser(argv[0]).parse_args(argv)
    parsed = dict(vars(args))
    assert args.func(args) == 0
    assert vars(args) == parsed
    assert capsys.readouterr().out


def spy(monkeypatch, request_type: type) -> list[object]:
    """The requests the CLI validates (and then answers as usual)."""
    seen: list[object] = []
    real = request_type.validated

    def validated(self):
        seen.append(real(self))
        return seen[-1]

    monkeypatch.setattr(request_type, "validated", validated)
    return seen


def test_lookup_builds_its_request(monkeypatch, capsys):
    seen = spy(monkeypatch, LookupRequest)
    stdin_of(monkeypatch, b"1eb8\n\n2236 ")
    assert full(["lookup", "10de:2236", "--stdin", "-o", "json", "-p", "latest"]) == 0
    assert seen == [LookupRequest(("10de:2236", "1eb8", "2236"), profile="latest", output="json")]
    printed = capsys.readouterr().out
    assert '"resource_name": "nvidia.com/TU104GL_TESLA_T4"' in printed


def test_reverse_builds_its_request(monkeypatch, capsys):
    seen = spy(monkeypatch, ReverseRequest)
    assert full(["reverse", "\tGA102GL_A10", "-p", "latest"]) == 0
    assert seen == [ReverseRequest("\tGA102GL_A10", profile="latest")]
    assert seen[0].resource_name == "nvidia.com/GA102GL_A10"
    assert capsys.readouterr().out.splitlines() == pciname.reverse("GA102GL_A10", "latest")


def test_diff_builds_its_request(monkeypatch, capsys):
    seen = spy(monkeypatch, DiffRequest)
    assert full(["diff", "--from", "", "--to", "latest", "-o", "json"]) == 0
    assert seen == [DiffRequest("", "latest")]  # "" is the default profile, as ever
    assert '"changes": []' in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "stdin", "line"),
    [
        (["lookup"], None, "no devices given: name at least one DEVICE or use --stdin"),
        (["lookup", "--stdin"], b" \n", "no devices given: name at least one DEVICE or use --stdin"),
        (["lookup", "--stdin", "-o", "table"], None, "--stdin: standard input is closed"),
        (
            ["lookup", "10de:2236", "--stdin", "-o", "table"],
            b"2236 " * MAX_LOOKUP_DEVICES,
            f"{MAX_LOOKUP_DEVICES + 1} devices given; a lookup takes at most {MAX_LOOKUP_DEVICES}: split the input",
        ),
        # the request's rules come first, then the CLI's own about --server, --tls-* and --pciids
        (["lookup", "--pciids", ""], None, "no devices given: name at least one DEVICE or use --stdin"),
        (["lookup", "10de:2236", "--pciids", ""], None, "--pciids needs a file name (it was given an empty one)"),
        (["lookup", "10de:2236", "--tls-ca", "ca.pem"], None, "the --tls options go with --server"),
        (["reverse", " \n"], None, "no resource name given (e.g. nvidia.com/GA102GL_A10)"),
        (["reverse", " ", "--pciids", ""], None, "no resource name given (e.g. nvidia.com/GA102GL_A10)"),
        (["reverse", "GA102GL_A10", "--pciids", ""], None, "--pciids needs a file name (it was given an empty one)"),
    ],
)
def test_refusals_word_for_word(argv, stdin, line, monkeypatch):
    stdin_of(monkeypatch, stdin)
    assert call(full, argv) == (2, "", f"pciname: error: {line}\n")
