"""The ``Lint`` RPC: the request of :mod:`pciname.capabilities.lint` built
from the message (the files sent, all together, as ``pciname lint`` lints
the same files) and answered, its cost bounded (files, bytes, YAML nodes,
concurrent runs, the caller's deadline) before anything is composed."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import TYPE_CHECKING

import grpc

from pciname.capabilities.lint import LintRequest
from pciname.capabilities.spelling import Spelling
from pciname.server._proto import pciname_pb2 as pb
from pciname.server.budget import RELEASE_AFTER_NODES, CheckedText, check_alive, count_nodes, release_memory
from pciname.server.data import DataSet, served_profile
from pciname.server.rpc.shared import INVALID, answer, check, declared, no_auto, request_from
from pciname.server.rpc.wire import (
    LINT_INPUT,
    RpcFailure,
    failure,
    lint_input_failure,
    lint_response,
    shown,
)

if TYPE_CHECKING:
    from pciname.server.service import PciNameService

#: The limits of a Lint request beyond its files, in the order they are checked.
RULES = (
    declared(LintRequest, "profile", "upgrade_to"),
    no_auto("profile", "upgrade_to"),
    declared(LintRequest, "cozystack", "dra_driver", "kubevirt", "nvidia_plugin"),
)

# -- Lint --------------------------------------------------------------------------------


def _file_name(file: pb.LintFile, index: int, count: int) -> str:
    if file.name:
        return file.name
    return "<input>" if count == 1 else f"<input {index}>"


def lint(
    request: pb.LintRequest, context: grpc.ServicerContext, data: DataSet, service: PciNameService
) -> tuple[pb.LintResponse, int]:
    """The Lint answer. Its cost is bounded before the linter composes
    anything: files, bytes, YAML nodes (:func:`~pciname.server.budget.count_nodes`),
    and the service's slots (how many run at once); the caller's
    cancellation and deadline are checked while counting and between steps."""
    with service.lint_slots.take():
        nodes: list[int] = []
        try:
            response = _lint(
                request,
                context,
                data,
                max_files=service.max_lint_files,
                max_bytes=service.max_lint_bytes,
                max_nodes=service.max_lint_nodes,
                counted=nodes,
            )
            return response, 0
        finally:
            if nodes and nodes[0] > RELEASE_AFTER_NODES:
                release_memory()


def _lint_inputs(files: Sequence[pb.LintFile], *, max_files: int, max_bytes: int) -> list[tuple[str, str | bytes, int]]:
    """(name, content, bytes) of each file of a Lint request, within --max-lint-files and --max-lint-bytes."""
    if not files:
        raise RpcFailure(INVALID, "empty request: no files given")
    if len(files) > max_files:
        raise RpcFailure(
            INVALID,
            f"{len(files)} files in one request, more than this server's maximum of {max_files} "
            "(--max-lint-files); split the request",
        )
    inputs: list[tuple[str, str | bytes, int]] = []
    for index, file in enumerate(files, 1):
        content: str | bytes = file.data if file.WhichOneof("content") == "data" else file.text
        size = len(content) if isinstance(content, bytes) else len(content.encode("utf-8", "surrogatepass"))
        inputs.append((_file_name(file, index, len(files)), content, size))
    total = sum(size for _, _, size in inputs)
    if total > max_bytes:
        name, _, size = max(inputs, key=lambda i: i[2])
        raise RpcFailure(
            INVALID,
            f"{total} bytes of YAML in one request, more than this server's maximum of {max_bytes} "
            f"(--max-lint-bytes); the largest file is {shown(name, quote=False)} ({size} bytes)",
        )
    return inputs


def _lint(
    request: pb.LintRequest,
    context: grpc.ServicerContext,
    data: DataSet,
    *,
    max_files: int,
    max_bytes: int,
    max_nodes: int,
    counted: list[int],
) -> pb.LintResponse:
    """The answer once the request's limits are checked here and its rules by
    :class:`~pciname.capabilities.lint.LintRequest`."""
    inputs = _lint_inputs(request.files, max_files=max_files, max_bytes=max_bytes)
    check(request, RULES)
    files = tuple((name, content) for name, content, _ in inputs)
    asked = request_from("Lint", request, files=files).validated()
    profile = served_profile(data, str(asked.chosen_profile or ""))
    upgrade = served_profile(data, request.upgrade_to, "upgrade_to") if request.upgrade_to.strip() else None

    nodes = 0
    for name, content, _ in inputs:
        nodes = count_nodes(content, name, max_nodes, context, already=nodes, flag="--max-lint-nodes")
    counted.append(nodes)
    try:
        result = answer(
            "Lint",
            asked,
            profile.key,
            upgrade.key if upgrade is not None else None,
            resolver=data.resolver,
            check=functools.partial(check_alive, context),
            # A stream the composer reads in steps, each checking the caller is still there.
            stream=functools.partial(CheckedText, context=context),
            refuse=lint_input_failure,
            spelling=Spelling.RPC,
        )
    except RecursionError:
        raise failure(INVALID, "the YAML is nested too deeply to check", LINT_INPUT) from None
    return lint_response(
        result.findings,
        profile=profile.name,
        upgrade_to=upgrade.name if upgrade is not None else None,
        documents=result.documents,
        notes=result.notes,
    )


__all__ = ["lint"]
