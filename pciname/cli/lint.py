"""The lint command: check the GPU resource names in YAML files.

Prints ``FILE:LINE: code: PATH: message`` (or ``-o`` yaml/json/table).
Exit codes: 0 clean, 1 findings, 2 bad usage or unreadable input. The
command builds the request of :mod:`pciname.capabilities.lint` (what reads
the files too), asks the registry and prints the answer.
"""

from __future__ import annotations

import argparse

from pciname.base.render import emit, table
from pciname.capabilities.registry import ask, formats
from pciname.cli.core import add_profile_options
from pciname.cli.output import add_output_option
from pciname.cli.shared import add_cozystack_option, profile_arg, say
from pciname.cli.translate import request_of
from pciname.errors import PcinameError

LINT_FORMATS = formats("lint")


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from pciname.capabilities.choices import nvidia_plugin

    plugins, default_plugin = nvidia_plugin()
    lint = sub.add_parser(
        "lint",
        help="check GPU resource names in YAML",
        description="Check every GPU resource name in KubeVirt CRs, HyperConverged CRs, Cozystack platform "
        "values, defaults tables, VMs/VMIs, Cozystack tenant Kubernetes values and KubernetesNodes pools "
        "(multi-document YAML; - reads stdin), DRA ResourceClaims, ResourceClaimTemplates and the VMs' "
        "claimName/requestName against what NVIDIA's DRA driver publishes, and node-group fields the Cozystack release does not have. Prints FILE:LINE: code: PATH: message. Exit 0 clean, 1 findings, 2 unreadable input.",
    )
    lint.add_argument("files", nargs="+", metavar="FILE")
    lint.add_argument(
        "--upgrade-to", metavar="PROFILE", help="also report names this profile renames (renamed-by-upgrade)"
    )
    add_cozystack_option(lint, "whose node-group and KubernetesNodes fields are checked (field-not-in-release)")
    lint.add_argument(
        "--dra-driver",
        metavar="VERSION",
        help="the NVIDIA DRA driver release DRA claims are checked for (default: the newest tagged release that "
        "works; main or v0.5.0: its unreleased main branch)",
    )
    lint.add_argument(
        "--nvidia-plugin",
        choices=plugins,
        default=default_plugin,
        help="whether NVIDIA's device plugin runs on the nodes beside KubeVirt's own (default auto: only where the "
        "input shows it, a Cozystack platform or a GPU Operator with sandboxWorkloads enabled; otherwise a note)",
    )
    lint.add_argument(
        "--kubevirt",
        metavar="VERSION",
        help="the KubeVirt release: whose own device plugin serves entries without externalResourceProvider "
        "(v0.36.0 to v0.38.x match PCI selectors case-sensitively) and VMs with DRA claims are checked for "
        "(default: the newest known; for DRA, the newest that works)",
    )
    lint.add_argument(
        "--hami",
        metavar="RELEASE",
        help="the HAMi release (v2.8.1, hami@v2.8.1; cozystack@v1.6.2: the one it ships): check pods' nvidia.com/gpu, gpumem, gpumem-percentage and gpucores as it "
        "reads them, and HAMi names in KubeVirt VMs (default: not checked)",
    )
    add_profile_options(lint)
    add_output_option(lint, LINT_FORMATS, default="text")
    lint.set_defaults(func=run_lint)


def run_lint(args: argparse.Namespace) -> int:
    from pciname.capabilities.lint import STDIN, file_reader
    from pciname.requests.spelling import is_auto

    if args.files.count(STDIN) > 1:
        raise PcinameError("standard input (-) can be linted only once")
    upgrade = args.upgrade_to
    if upgrade is not None and is_auto(upgrade):
        raise PcinameError("--upgrade-to auto is not a profile: name the release you upgrade to")
    request = request_of(
        "lint",
        args,
        files=tuple(file_reader(path) for path in args.files),
        upgrade_to=upgrade,
        cozystack=_cozystack(args.cozystack),
    )
    result = ask("lint", request, profile_arg(args, chosen=request.chosen_profile), upgrade)
    findings = result.findings
    if args.output == "text":
        for f in findings:
            print(f.format())
    elif args.output == "table":
        if findings:
            table(
                [(f"{f.file}:{f.line}", f.code, f.path, f.value, _show(f.expected)) for f in findings],
                ("WHERE", "CODE", "PATH", "VALUE", "EXPECTED"),
            )
    else:
        emit([f.to_dict() for f in findings], args.output)
    for note in result.notes:
        say(f"note: {note}")
    for error in result.errors:
        say(str(error))
    if result.errors:
        return 2
    return 1 if findings else 0


def _cozystack(version: str | None) -> str | None:
    """``--cozystack VERSION``; a blank one, given, has always meant the
    newest release here (its profile too), where the request reads a blank
    release as none asked for."""
    return "latest" if version is not None and not version.strip() else version


def _show(value: object) -> str | None:
    """An expected value in a table cell: a list joined, a bool as YAML spells it."""
    if value is None:
        return None
    if isinstance(value, list):
        return ", ".join(str(v) for v in value) or None
    return str(value).lower() if isinstance(value, bool) else str(value)
