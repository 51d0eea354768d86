"""Core commands: lookup, reverse, diff, profiles, snapshots. Each builds
its request of :mod:`pciname.capabilities` (names, catalog), asks the
registry (:func:`pciname.capabilities.registry.ask`) and prints the answer."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any, NoReturn

from pciname.base.render import emit, table, write_line
from pciname.cli.fast import LIST_WARNINGS_UP_TO, listed, print_names
from pciname.cli.output import add_output_option
from pciname.cli.translate import request_of
from pciname.naming.algorithms import ALL_ALGORITHMS

if TYPE_CHECKING:
    from pciname.cli.output import Subcommands
    from pciname.naming.profiles import Profile
    from pciname.resolution.resolver import ProfileLike


def add_profile_options(
    parser: argparse.ArgumentParser,
    *,
    custom: bool = True,
    kata: bool = True,
    kata_only: bool = False,
    default: str | None = None,
) -> None:
    """``--profile P`` or ``--pciids FILE [--algorithm A]`` (shared by commands);
    with ``kata`` (a command that takes Kata profiles) the Kata forms in its
    help and ``--alias``/``--nvswitch-alias``, with ``kata_only`` only the
    Kata forms; ``default``: how help names the profile the command answers
    with when none is given (None: latest)."""
    from pciname.naming.profiles import CUSTOM_ALGORITHM, PREVIEW, default_profile_help

    kinds = (
        f"kubevirt-gpu-device-plugin@vX.Y.Z, gpu-operator@vX.Y.Z, cozystack@vX.Y.Z (or cozystack@latest), or {PREVIEW} "
        "(Debian's newest pci.ids: names no release advertises yet)"
    )
    if kata_only:
        kinds = "sandbox-device-plugin@vX.Y.Z (or @latest) or gpu-operator@vX.Y.Z+kata"
    elif kata:
        kinds += "; for Kata: sandbox-device-plugin@vX.Y.Z (or @latest) or gpu-operator@vX.Y.Z+kata"
    parser.add_argument(
        "-p", "--profile", help=f"naming profile (default {default or default_profile_help()}): {kinds}"
    )
    if kata:
        parser.add_argument(
            "--alias",
            metavar="VALUE",
            help="Kata profiles: the plugin's P_GPU_ALIAS (absent: unset, the release's default, pgpu since "
            'v0.0.2; --alias "": set to empty, each GPU model its own name; else every GPU is nvidia.com/VALUE)',
        )
        parser.add_argument(
            "--nvswitch-alias",
            metavar="VALUE",
            help="Kata profiles: the plugin's NVSWITCH_ALIAS, likewise (unset: nvswitch)",
        )
    if custom:
        parser.add_argument("--pciids", metavar="FILE", help="use this pci.ids file instead of a profile's")
        parser.add_argument(
            "--algorithm",
            choices=ALL_ALGORITHMS,
            help=f"name algorithm to run on --pciids (default: {CUSTOM_ALGORITHM})",
        )


def profile_from_args(args: argparse.Namespace, default: ProfileLike | None = None) -> ProfileLike:
    """The profile the options select (a name or a custom Profile; with
    ``--alias``/``--nvswitch-alias``, the Kata Profile run with them);
    without ``--profile``, ``default`` (None: the default profile)."""
    from pciname.base.paths import embedded_pciids_path
    from pciname.naming.profiles import CUSTOM_ALGORITHM, DEFAULT_PROFILE, custom_profile, get_profile, with_aliases

    pciids = getattr(args, "pciids", None)
    algorithm = getattr(args, "algorithm", None)
    alias, nvswitch_alias = aliases_from_args(args)
    if pciids == "":
        raise _usage("--pciids needs a file name (it was given an empty one)")
    if pciids or algorithm:
        if args.profile:
            raise _usage("--profile cannot be combined with --pciids/--algorithm")
        custom = custom_profile(pciids or embedded_pciids_path(), algorithm or CUSTOM_ALGORITHM)
        return with_aliases(custom, alias, nvswitch_alias)
    profile = args.profile or default or DEFAULT_PROFILE
    if alias is None and nvswitch_alias is None:
        return profile
    return with_aliases(get_profile(profile) if isinstance(profile, str) else profile, alias, nvswitch_alias)


def aliases_from_args(args: argparse.Namespace) -> tuple[str | None, str | None]:
    """``--alias`` and ``--nvswitch-alias`` as given (None: not given, the variable unset)."""
    return getattr(args, "alias", None), getattr(args, "nvswitch_alias", None)


def _usage(message: str) -> Exception:
    from pciname.errors import PcinameError

    return PcinameError(message)


# -- lookup -----------------------------------------------------------------


def register(sub: Subcommands) -> None:
    _add_lookup(sub)
    _add_reverse(sub)
    _add_diff(sub)
    prof = sub.add_parser("profiles", help="known profiles and whether their pci.ids is installed")
    add_output_option(prof)
    prof.set_defaults(func=run_profiles)
    _add_snapshots(sub)


def _add_lookup(sub: Subcommands) -> None:
    lookup = sub.add_parser(
        "lookup",
        help="resource names of devices",
        description="Print the resource name the plugin advertises for each device (input order). "
        "-o name prints one line per device, an empty line for a device that is not advertised (also when "
        "kubelet refuses its name: -o json, yaml and table still show that name, with advertised false). "
        "Exit 0 when every device is advertised, 1 when some are not, 2 on bad input.",
    )
    lookup.add_argument("devices", nargs="*", metavar="DEVICE", help="10de:2236, 10DE:2236 or 0x10de:0x2236")
    lookup.add_argument("--stdin", action="store_true", help="also read devices (white-space separated) from stdin")
    add_profile_options(lookup)
    add_output_option(lookup, ("name", "json", "yaml", "table"), default="name")
    lookup.add_argument(
        "--warnings",
        choices=("auto", "all"),
        default="auto",
        help=f"-o name: warnings on stderr, one line each for up to {LIST_WARNINGS_UP_TO} devices, else one "
        "summary line (auto, the default); all: one line each, always",
    )
    from pciname.cli.service import add_client_tls_options, add_server_option

    add_server_option(lookup, help="ask a pciname gRPC service instead of computing locally")
    add_client_tls_options(lookup)
    lookup.set_defaults(func=run_lookup)


def _add_reverse(sub: Subcommands) -> None:
    rev = sub.add_parser("reverse", help="device ids advertised under a resource name")
    rev.add_argument("resource", help="nvidia.com/GA102GL_A10 (or GA102GL_A10)")
    add_profile_options(rev)
    add_output_option(rev, ("name", "json", "yaml"), default="name")
    rev.set_defaults(func=run_reverse)


def _add_diff(sub: Subcommands) -> None:
    dif = sub.add_parser(
        "diff",
        help="resource names an upgrade changes",
        description="Every NVIDIA device id whose resource name differs between two profiles "
        "(renamed, appears or vanishes). Exit 0 either way.",
    )
    dif.add_argument(
        "--from", dest="old", required=True, metavar="PROFILE", help="the profile upgraded from (e.g. v1.2.2)"
    )
    dif.add_argument("--to", dest="new", required=True, metavar="PROFILE", help="the profile upgraded to (e.g. latest)")
    dif.add_argument("--alias", metavar="VALUE", help="P_GPU_ALIAS of the Kata profile(s) compared (see lookup)")
    dif.add_argument("--nvswitch-alias", metavar="VALUE", help="NVSWITCH_ALIAS likewise")
    add_output_option(dif)
    dif.set_defaults(func=run_diff)


def _add_snapshots(sub: Subcommands) -> None:
    snaps = sub.add_parser("snapshots", help="the plugin releases' pci.ids files (by sha256)")
    snap_sub = snaps.add_subparsers(dest="snapshots_command", metavar="ACTION", parser_class=sub._parser_class)
    snap_sub.required = True
    snap_list = snap_sub.add_parser("list", help="which snapshots are installed, and which profiles they serve")
    add_output_option(snap_list)
    snap_list.set_defaults(func=run_snapshots_list)
    snap_import = snap_sub.add_parser("import", help="copy verified pci.ids files into the cache")
    snap_import.add_argument("files", nargs="+", metavar="FILE")
    snap_import.set_defaults(func=run_snapshots_import)
    _add_snapshots_fetch(snap_sub)
    _add_snapshots_pack(snap_sub)


def _add_snapshots_fetch(snap_sub: Subcommands) -> None:
    from pciname.capabilities.catalog import FETCH_DEADLINE, FETCH_TIMEOUT

    snap_fetch = snap_sub.add_parser(
        "fetch",
        help="download every missing snapshot and verify its sha256",
        description="Download every snapshot that is not installed into the cache, verify its sha256 and keep "
        "only good files. A download that fails is reported and the others are still tried. "
        "Exit 0 when every snapshot is installed, 1 when some download failed, 2 when the cache cannot be written.",
    )
    snap_fetch.add_argument("--base-url", metavar="URL", help="fetch URL/<sha256> instead of the upstream URLs")
    snap_fetch.add_argument(
        "--timeout",
        type=_seconds,
        default=FETCH_TIMEOUT,
        metavar="SECONDS",
        help="give up on a download when connecting, or waiting for any data, takes this long (default 60)",
    )
    snap_fetch.add_argument(
        "--deadline",
        type=_seconds,
        default=FETCH_DEADLINE,
        metavar="SECONDS",
        help="give up on a download that has not finished after this long in all, redirects included, "
        "however slowly data keeps coming (default 300)",
    )
    snap_fetch.set_defaults(func=run_snapshots_fetch)


def _add_snapshots_pack(snap_sub: Subcommands) -> None:
    snap_pack = snap_sub.add_parser(
        "pack",
        help="(maintainers) build the package's snapshots.tar.xz from the snapshot files",
        description="Write snapshots.tar.xz and snapshots.sha256 into --into (default: the package's data "
        "directory) from FILEs or directories holding every snapshot profiles.json names, verified by sha256.",
    )
    snap_pack.add_argument("files", nargs="+", metavar="FILE_OR_DIR")
    snap_pack.add_argument("--into", metavar="DIR", help="where to write (default: the package's data directory)")
    snap_pack.set_defaults(func=run_snapshots_pack)


def _read_stdin() -> bytes:
    """What ``--stdin`` holds, up to one byte past MAX_LOOKUP_STDIN_BYTES (the
    request refuses more than that)."""
    from pciname.base.files import MAX_LOOKUP_STDIN_BYTES

    if sys.stdin is None:
        raise _usage("--stdin: standard input is closed")
    return sys.stdin.buffer.read(MAX_LOOKUP_STDIN_BYTES + 1)


def run_lookup(args: argparse.Namespace) -> int:
    from pciname.capabilities.registry import ask
    from pciname.cli.service import client_options, client_tls_asked

    asked = request_of("lookup", args, stdin=_read_stdin() if args.stdin else None)
    if args.server:
        from pciname.client import lookup_via_server

        if args.pciids is not None or args.algorithm:
            raise _usage("--server cannot be combined with --pciids/--algorithm (the server's files are its own)")
        options = client_options(args)
        # "": the server's default profile
        alias, nvswitch_alias = aliases_from_args(args)
        found = lookup_via_server(
            args.server, list(asked.devices), args.profile or "", alias=alias, nvswitch_alias=nvswitch_alias, **options
        )
        records = [r.to_dict() for r in found]
    elif client_tls_asked(args):
        raise _usage("the --tls options go with --server")
    else:
        records = ask("lookup", asked, profile_from_args(args))
    print_records(records, args.output, list_warnings=_list_warnings(args, records))
    return 0 if all(r["advertised"] for r in records) else 1


def _list_warnings(args: argparse.Namespace, records: list[dict[str, Any]]) -> bool:
    return listed(args.warnings, len(records))


def print_records(records: list[dict[str, Any]], fmt: str, *, list_warnings: bool = True) -> None:
    """Resolutions in their plain-data form (``Resolution.to_dict()``);
    ``-o name`` through the one lookup printer (:func:`pciname.cli.fast.print_names`,
    which the fast path prints with too)."""
    if fmt == "name":
        print_names(records, list_warnings)
    elif fmt == "table":
        table(
            [
                (
                    r["device"],
                    r["resource_name"],
                    r["device_name"],
                    ",".join(w["code"] for w in r["warnings"]) or None,
                    r["profile"],
                )
                for r in records
            ],
            ("DEVICE", "RESOURCE", "PCI.IDS NAME", "WARNINGS", "PROFILE"),
        )
    else:
        emit(records, fmt)


def run_reverse(args: argparse.Namespace) -> int:
    from pciname.base.render import PROGRAM
    from pciname.capabilities.names import reverse_miss
    from pciname.capabilities.registry import ask

    asked = request_of("reverse", args)
    profile = profile_from_args(args)
    devices = ask("reverse", asked, profile)
    if args.output == "name":
        for device in devices:
            print(device)
    else:
        emit({"resource_name": asked.resource_name, "devices": devices}, args.output)
    if not devices:
        write_line(f"{PROGRAM}: {reverse_miss(asked, profile)}", sys.stderr)
    return 0 if devices else 1


def run_diff(args: argparse.Namespace) -> int:
    from pciname.capabilities.registry import ask
    from pciname.naming.profiles import canonical_name

    asked = request_of("diff", args)
    old, new = _diff_sides(args)
    entries = ask("diff", asked, old, new)
    if args.output == "table":
        if entries:
            table([(e.device, e.change, e.old, e.new) for e in entries], ("DEVICE", "CHANGE", "OLD", "NEW"))
        else:
            print(f"no resource name differs between {canonical_name(args.old)} and {canonical_name(args.new)}")
    else:
        emit(
            {
                "from": canonical_name(args.old),
                "to": canonical_name(args.new),
                "changes": [e.to_dict() for e in entries],
            },
            args.output,
        )
    return 0


def _diff_sides(args: argparse.Namespace) -> tuple[str | Profile, str | Profile]:
    """``--from`` and ``--to``, each Kata one run with the aliases given."""
    from pciname.naming.profiles import get_profile, with_aliases

    alias, nvswitch_alias = aliases_from_args(args)
    if alias is None and nvswitch_alias is None:
        return args.old, args.new
    sides = [get_profile(spelling) for spelling in (args.old, args.new)]
    if not any(side.is_kata for side in sides):
        with_aliases(sides[1], alias, nvswitch_alias)  # the one-line refusal
    old, new = (with_aliases(side, alias, nvswitch_alias) if side.is_kata else side for side in sides)
    return old, new


def run_profiles(args: argparse.Namespace) -> int:
    from pciname.capabilities.registry import ask

    infos = ask("profiles", request_of("profiles", args))
    if args.output == "table":
        table(
            [
                (
                    p.name + (f" ({', '.join(p.aliases)})" if p.aliases else ""),
                    p.released,
                    p.algorithm,
                    p.plugin_release,
                    p.pci_ids_version,
                    "yes" if p.installed else "no",
                )
                for p in infos
            ],
            ("PROFILE", "RELEASED", "ALGORITHM", "PLUGIN", "PCI.IDS", "INSTALLED"),
        )
    else:
        emit([p.to_dict() for p in infos], args.output)
    return 0


# -- snapshots ----------------------------------------------------------------


def run_snapshots_list(args: argparse.Namespace) -> int:
    from pciname.capabilities.registry import ask

    rows = ask("snapshots list", request_of("snapshots list", args))
    if args.output == "table":
        table(
            [
                (
                    r["snapshot"],
                    r["sha256"][:12],
                    r["path"] or "not installed",
                    ",".join(r["plugin_releases"]),
                    ",".join(r["gpu_operator_releases"]) or None,
                    ",".join(r["kata_plugin_releases"]) or None,
                )
                for r in rows
            ],
            ("SNAPSHOT", "SHA256", "FILE", "PLUGIN RELEASES", "GPU OPERATOR RELEASES", "KATA PLUGIN RELEASES"),
        )
    else:
        emit(rows, args.output)
    return 0


def _seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = float("nan")
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"not a positive number of seconds: {text!r}")
    return value


class _SigtermCleanup:
    """While writing the cache: SIGTERM raises SystemExit(143), so that the
    temporaries' clean-up (finally blocks) runs as it does on Ctrl-C."""

    def __enter__(self) -> None:
        import signal
        import threading

        self._installed = threading.current_thread() is threading.main_thread()
        if self._installed:
            self._previous = signal.signal(signal.SIGTERM, self._terminate)

    @staticmethod
    def _terminate(signum: int, frame: object) -> NoReturn:
        raise SystemExit(128 + signum)

    def __exit__(self, *exc: object) -> None:
        import signal

        if self._installed:
            signal.signal(signal.SIGTERM, self._previous if self._previous is not None else signal.SIG_DFL)


def run_snapshots_import(args: argparse.Namespace) -> int:
    with _SigtermCleanup():
        return _import(args)


def _import(args: argparse.Namespace) -> int:
    from pciname.capabilities.registry import ask

    failed = 0
    for result in ask("snapshots import", request_of("snapshots import", args)):
        if result.snapshot is None:
            write_line(
                f"{result.source}: not a known snapshot (its sha256 matches no profile's pci.ids); not imported",
                sys.stderr,
            )
            failed += 1
        else:
            write_line(f"{result.source}: snapshot {result.snapshot.key} -> {result.stored}")
    return 1 if failed else 0


def run_snapshots_fetch(args: argparse.Namespace) -> int:
    from pciname.capabilities.registry import ask

    request = request_of("snapshots fetch", args)
    failed = 0
    with _SigtermCleanup():
        for result in ask("snapshots fetch", request):
            if result.status == "failed":
                failed += 1
                write_line(f"{result.snapshot.key}: failed to fetch {result.url}: {result.error}", sys.stderr)
                sys.stderr.flush()
            else:
                write_line(f"{result.snapshot.key}: {result.status} {result.path}")
                sys.stdout.flush()
    return 1 if failed else 0


def run_snapshots_pack(args: argparse.Namespace) -> int:
    from pciname.capabilities.registry import ask

    request = request_of("snapshots pack", args)
    into = request.directory
    for snapshot in ask("snapshots pack", request):
        print(f"{snapshot.key}: packed ({snapshot.size} bytes, sha256 {snapshot.sha256})")
    print(f"wrote {into / 'snapshots.tar.xz'} ({(into / 'snapshots.tar.xz').stat().st_size} bytes)")
    return 0
