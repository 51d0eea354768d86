"""The registry of capabilities (pciname.capabilities.registry) against the
surfaces: every CLI command that answers a question is one entry's, each
entry's formats are its command's -o choices, its RPCs are the service's,
its request validates itself and carries no surface, and a rule a request
states is spelled per surface by its RequestError."""

from __future__ import annotations

import argparse
import ast
import dataclasses
import inspect

import pytest

from pciname.capabilities import registry
from pciname.capabilities.mdev_name import MdevNameRequest, answer as mdev_answer
from pciname.capabilities.registry import CAPABILITIES, NOT_QUESTIONS, ask, capability
from pciname.capabilities.vm_gpus import NO_GPUS_CLI, NO_GPUS_RPC, VmGpusRequest
from pciname.cli import build_parser
from pciname.errors import PcinameError
from pciname.requests.spelling import RequestError, Spelling, reworded
from pciname.server._proto import pciname_pb2 as pb
from tests.conftest import LATEST, REPO


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    return {}


def commands() -> dict[str, argparse.ArgumentParser]:
    """Every command of ``pciname`` by its words (``snapshots list``), its parser."""
    found = {}
    for name, parser in _subparsers(build_parser()).items():
        actions = _subparsers(parser)
        found.update({f"{name} {action}": sub for action, sub in actions.items()} if actions else {name: parser})
    return found


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


def test_every_question_is_one_entry():
    """Each command but completion, serve and health is an entry's; an entry
    whose words add a flag (vm-gpus --dra) is its command's with that flag."""
    asked = set(commands()) - set(NOT_QUESTIONS)
    plain = {c.command for c in CAPABILITIES if "--" not in c.command}
    assert plain == asked
    for entry in CAPABILITIES:
        command, _, flag = entry.command.partition(" --")
        if flag:
            assert _option(commands()[command], f"--{flag}") is not None, entry.command
    assert len({c.command for c in CAPABILITIES}) == len(CAPABILITIES)


@pytest.mark.parametrize("entry", CAPABILITIES, ids=lambda c: c.command)
def test_an_entrys_formats_are_its_commands_output_choices(entry):
    parser = commands()[entry.command.partition(" --")[0]]
    output = _option(parser, "--output")
    if not entry.formats:
        assert output is None
        return
    assert output is not None and output.choices is not None
    if entry.command.endswith("--dra") and entry.command.startswith("vm-gpus"):
        assert set(entry.formats) < set(output.choices)  # -o table is refused with --dra
    else:
        assert tuple(output.choices) == entry.formats
        assert output.default == entry.default


def test_an_entrys_rpcs_are_the_services():
    methods = set(pb.DESCRIPTOR.services_by_name["PciName"].methods_by_name)
    named = [rpc for c in CAPABILITIES for rpc in c.rpcs]
    assert set(named) <= methods and len(named) == len(set(named))
    # what no capability answers is the streaming listing of the loaded devices alone
    assert methods - set(named) == {"ListDevices"}


@pytest.mark.parametrize("entry", CAPABILITIES, ids=lambda c: c.command)
def test_an_entrys_request_validates_itself_and_carries_no_surface(entry):
    request_type = entry.request_type()
    assert dataclasses.is_dataclass(request_type) and request_type.__dataclass_params__.frozen
    assert callable(request_type.validated)
    for field in dataclasses.fields(request_type):
        assert "spelling" not in field.name and "Spelling" not in str(field.type), field.name
    assert inspect.signature(entry.answer_function()).parameters  # it answers a request
    assert entry.module_name == request_type.__module__


def test_reading_the_registry_imports_no_capability():
    """The CLI's parser reads it for every command: it names its requests and answers, it does not import them."""
    tree = ast.parse((REPO / "pciname/capabilities/registry.py").read_text(encoding="utf-8"))
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    imported += [a.name for node in ast.walk(tree) if isinstance(node, ast.Import) for a in node.names]
    assert [m for m in imported if m and m.startswith("pciname")] == []


def test_ask_answers_a_validated_request_with_the_entrys_answer():
    request = MdevNameRequest(("GRID T4-1Q", "NVIDIA A10-24Q"), LATEST).validated()
    assert ask("mdev-name", request, LATEST) == mdev_answer(request, LATEST)
    with pytest.raises(TypeError, match="mdev-name answers a MdevNameRequest, not a VmGpusRequest"):
        ask("mdev-name", VmGpusRequest(("10de:2236",)), LATEST)
    with pytest.raises(KeyError):
        capability("completion")
    assert registry.formats("mdev-name") == ("name", "yaml", "json", "table")


def test_a_request_error_spells_its_rule_for_each_surface():
    refused = RequestError(lambda say: f"{say('replace_defaults')} goes with {say('format')} cozystack")
    assert str(refused) == refused.spelled(Spelling.CLI) == "--replace-defaults goes with --format cozystack"
    assert refused.spelled(Spelling.RPC) == "replace_defaults goes with format cozystack"
    assert isinstance(refused, PcinameError)
    named = RequestError(lambda say: f"{say('devices')} or {say('roles')}", {"devices": "DEVICE"})
    assert (str(named), named.spelled(Spelling.RPC)) == ("DEVICE or --role", "devices or roles")
    with pytest.raises(RequestError) as empty:
        VmGpusRequest().validated()
    assert (str(empty.value), empty.value.spelled(Spelling.RPC)) == (NO_GPUS_CLI, NO_GPUS_RPC)


def test_a_lower_rooms_error_naming_a_field_is_spelled_too():
    def check(word: str) -> str:
        raise PcinameError(f"unknown release: the newest is {word} v1")

    with pytest.raises(RequestError) as refused:
        reworded(check, "dra_driver")
    assert (str(refused.value), refused.value.spelled(Spelling.RPC)) == (
        "unknown release: the newest is --dra-driver v1",
        "unknown release: the newest is dra_driver v1",
    )
    assert reworded(lambda word: word.upper(), "x") == "\x00X\x00"  # no error: the call's own answer

    def other(word: str) -> str:
        raise PcinameError("no field named")

    with pytest.raises(PcinameError, match="no field named") as kept:
        reworded(other, "dra_driver")
    assert not isinstance(kept.value, RequestError)


def test_the_limits_are_declared_on_the_requests_fields():
    """Every surface reads one declaration: the service's text bounds are the requests' own."""
    from pciname.base.requests import MAX_GPUS
    from pciname.requests.limits import PROFILE_CHARS, limits
    from pciname.server.rpc import wire

    assert not any(name.startswith("MAX_") and name.endswith("_CHARS") for name in vars(wire)), "a second copy"
    vm = limits(VmGpusRequest)
    assert set(vm) == {"devices", "mdev_types", "vgpus", "profile", "prefix"}
    assert vm["devices"].count == MAX_GPUS and vm["devices"].batch and vm["profile"].chars == PROFILE_CHARS
    for entry in CAPABILITIES:
        declared = limits(entry.request_type())
        if entry.rpcs and entry.command not in ("gpu-options", "profiles"):
            # image-check's profile is a HAMi release (hami@v2.8.1), bounded as "hami"; gfd-labels' a
            # k8s-device-plugin release, as "release".
            named = {"image-check": "hami", "gfd-labels": "release"}.get(entry.command, "profile")
            assert named in declared or "old" in declared or entry.command in ("vm-gpus --dra", "scan --variant"), (
                entry.command
            )
    with pytest.raises(PcinameError, match="more than the 1024 GPUs"):
        ask("vm-gpus", VmGpusRequest(("10de:2236=1025",)).validated(), LATEST)
