"""The limits declared on the requests' fields (pciname.requests.limits)
are the ones every surface enforces: for every request type of the registry
and every length it declares, the CLI and the RPC both refuse a text one
character over it, in their own words (the CLI: one line, exit 2; gRPC:
INVALID_ARGUMENT), and both accept one at it (whatever else they then say
of it). A declared limit this module has no case for is a failure, so a new
one is tested as it is declared. The GPUs one ``DEVICE=COUNT`` may ask for
likewise."""

from __future__ import annotations

import grpc
import pytest

from pciname.base.echo import shown
from pciname.base.requests import MAX_GPUS
from pciname.capabilities.registry import CAPABILITIES
from pciname.requests.limits import CLI_ARGUMENTS, DEVICE_CHARS, limits
from pciname.requests.spelling import Spelling
from pciname.server._proto import pciname_pb2 as pb
from tests.cli_run import pciname as run

GPU = "10de:2236"
LINT_FILE = pb.LintFile(name="vm.yaml", text="apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n")

#: (command, field) -> (the CLI's argv, "{}" where the value goes; the RPC:
#: (method, message fields beside it, the message's field) or None where the
#: capability has no RPC or its message no such field).
CASES: dict[tuple[str, str], tuple[list[str], tuple[str, dict, str] | None]] = {
    ("lookup", "devices"): (["lookup", "{}"], ("ResolveBatch", {}, "devices")),
    ("lookup", "profile"): (["lookup", GPU, "--profile", "{}"], ("ResolveBatch", {"devices": [GPU]}, "profile")),
    ("reverse", "resource"): (["reverse", "{}"], ("Reverse", {}, "resource_name")),
    ("reverse", "profile"): (["reverse", "nvidia.com/x", "--profile", "{}"], None),
    ("diff", "old"): (["diff", "--from", "{}", "--to", "p"], ("Diff", {}, "from_profile")),
    ("diff", "new"): (["diff", "--from", "p", "--to", "{}"], ("Diff", {}, "to_profile")),
    **{
        ("permitted-host-devices", field): (
            ["permitted-host-devices", *argv],
            rpc and ("PermittedHostDevices", {"devices": [GPU]}, rpc),
        )
        for field, argv, rpc in (
            ("devices", ["{}"], "devices"),
            ("mdev_types", [GPU, "--mdev", "{}"], "mdev_types"),
            ("vgpus", [GPU, "--vgpu", "{}"], None),
            ("profile", [GPU, "--profile", "{}"], "profile"),
            ("cozystack", [GPU, "--cozystack", "{}"], "cozystack"),
            ("variant", [GPU, "--variant", "{}"], "variant"),
        )
    },
    **{
        ("node-pool", field): (["node-pool", *argv], rpc and ("NodePool", {"group": "g", "devices": [GPU]}, rpc))
        for field, argv, rpc in (
            ("group", ["{}", GPU], "group"),
            ("devices", ["g", "{}"], "devices"),
            ("mdev_types", ["g", GPU, "--mdev", "{}"], "mdev_types"),
            ("vgpus", ["g", GPU, "--vgpu", "{}"], None),
            ("profile", ["g", GPU, "--profile", "{}"], "profile"),
            ("format", ["g", GPU, "--format", "{}"], "format"),
            ("cozystack", ["g", GPU, "--cozystack", "{}"], "cozystack"),
            ("cluster", ["g", GPU, "--cluster", "{}"], "cluster"),
        )
    },
    ("vm-gpus", "devices"): (["vm-gpus", "{}"], None),
    ("vm-gpus", "mdev_types"): (["vm-gpus", "--mdev", "{}"], None),
    ("vm-gpus", "vgpus"): (["vm-gpus", GPU, "--vgpu", "{}"], None),
    ("vm-gpus", "profile"): (["vm-gpus", GPU, "--profile", "{}"], None),
    ("vm-gpus", "prefix"): (["vm-gpus", GPU, "--prefix", "{}"], None),
    **{
        ("vm-gpus --dra", field): (["vm-gpus", "--dra", *argv], ("DraClaims", {"devices": [GPU]}, field))
        for field, argv in (
            ("devices", ["{}"]),
            ("dra_driver", [GPU, "--dra-driver", "{}"]),
            ("kubevirt", [GPU, "--kubevirt", "{}"]),
            ("resource_api", [GPU, "--resource-api", "{}"]),
            ("name", [GPU, "--name", "{}"]),
            ("prefix", [GPU, "--prefix", "{}"]),
        )
    },
    ("scan --variant", "root"): (["scan", "--variant", "all", "--sysfs-root", "{}"], None),
    ("scan --variant", "variant"): (["scan", "--variant", "{}"], None),
    ("mdev-name", "types"): (["mdev-name", "{}"], None),
    ("mdev-name", "profile"): (["mdev-name", "nvidia-1", "--profile", "{}"], None),
    ("kata-pod", "devices"): (["kata-pod", "{}"], None),
    ("kata-pod", "profile"): (["kata-pod", GPU, "--profile", "{}"], None),
    ("vgpu-types", "device"): (["vgpu-types", "{}"], ("VgpuTypes", {}, "device")),
    ("vgpu-types", "profile"): (["vgpu-types", GPU, "--profile", "{}"], ("VgpuTypes", {"device": GPU}, "profile")),
    **{
        ("lint", field): (
            ["lint", "--" + field.replace("_", "-"), "{}", "{file}"],
            ("Lint", {"files": [LINT_FILE]}, field),
        )
        for field in ("profile", "upgrade_to", "cozystack", "dra_driver", "kubevirt", "nvidia_plugin", "hami")
    },
    **{
        (command, field): ([*command.split(), flag, "{}"], None)
        for command in ("audit", "audit --dra")
        for field, flag in (("profile", "--profile"), ("cozystack", "--cozystack"), ("kubevirt_name", "--kubevirt"))
    },
    **{
        ("audit --hami", field): (["audit", "--hami", *argv], None)
        for field, argv in (
            ("hami", ["{}"]),
            ("images", ["v2.8.1", "--image", "{}"]),
            ("profile", ["v2.8.1", "--profile", "{}"]),
            ("cozystack", ["v2.8.1", "--cozystack", "{}"]),
            ("kubevirt_name", ["v2.8.1", "--kubevirt", "{}"]),
        )
    },
    **{
        ("gpu-options", field): (["gpu-options", flag, "{}"], ("GpuOptions", {}, field))
        for field, flag in (("profile", "--profile"), ("cozystack", "--cozystack"), ("kubevirt_name", "--kubevirt"))
    },
    **{
        ("apply permitted-host-devices", field): (["apply", "permitted-host-devices", *argv], None)
        for field, argv in (
            ("devices", ["{}"]),
            ("mdev_types", [GPU, "--mdev", "{}"]),
            ("vgpus", [GPU, "--vgpu", "{}"]),
            ("profile", [GPU, "--profile", "{}"]),
            ("kubevirt_name", [GPU, "--kubevirt", "{}"]),
        )
    },
    **{
        ("admission-policy", field): (["admission-policy", *argv], rpc and ("AdmissionPolicy", {"devices": [GPU]}, rpc))
        for field, argv, rpc in (
            ("devices", ["{}"], "devices"),
            ("mdev_types", [GPU, "--mdev", "{}"], "mdev_types"),
            ("vgpus", [GPU, "--vgpu", "{}"], None),
            ("kubevirt_name", ["--from-cluster", "--kubevirt", "{}"], "kubevirt_name"),
            ("actions", [GPU, "--action", "{}"], "actions"),
            ("name", [GPU, "--name", "{}"], "name"),
            ("profile", [GPU, "--profile", "{}"], "profile"),
            ("dra_driver", [GPU, "--dra", "--dra-driver", "{}"], "dra_driver"),
        )
    },
    ("gfd-labels", "product"): (["gfd-labels", "{}"], ("GfdLabels", {}, "product")),
    ("gfd-labels", "release"): (["gfd-labels", "x", "--release", "{}"], ("GfdLabels", {"product": "x"}, "release")),
    ("gfd-labels", "compute"): (["gfd-labels", "x", "--compute", "{}"], ("GfdLabels", {"product": "x"}, "compute")),
    ("image-check", "image"): (["image-check", "{}", "--hami", "v2.8.1"], None),
    ("image-check", "hami"): (["image-check", "{file}", "--hami", "{}"], ("ImageCheck", {"tarball": b"x"}, "hami")),
}


#: Where the CLI takes only its choices (argparse refuses any other text before a request is built).
CHOICES_FIRST = {
    ("admission-policy", "actions"),
    ("node-pool", "format"),
    ("lint", "nvidia_plugin"),
    ("scan --variant", "variant"),
}


def declared() -> list[tuple[str, str, int]]:
    """(command, field, length) for every length a registry's request declares."""
    return [
        (entry.command, field, bound.chars)
        for entry in CAPABILITIES
        for field, bound in limits(entry.request_type()).items()
        if bound.chars is not None
    ]


def test_every_declared_length_has_a_case_here():
    assert sorted(set(CASES) - {(c, f) for c, f, _ in declared()}) == []
    assert sorted({(c, f) for c, f, _ in declared()} - set(CASES)) == []


def _argv(template: list[str], value: str, tmp_path) -> list[str]:
    file = tmp_path / "vm.yaml"
    file.write_text(LINT_FILE.text)
    return [value if arg == "{}" else str(file) if arg == "{file}" else arg for arg in template]


def _word(template: list[str], field: str) -> str:
    """How the CLI's line names the argument the value went to."""
    word = CLI_ARGUMENTS.get(field, "")
    if word and not word.startswith("--"):
        return word  # a positional argument: DEVICE, TYPE, ...
    before = template[template.index("{}") - 1]
    return before if before.startswith("--") else word or Spelling.CLI(field)


@pytest.mark.parametrize(("command", "field", "length"), declared(), ids=lambda v: str(v).replace(" ", "_"))
def test_the_cli_refuses_one_over_the_declared_length_and_takes_one_at_it(command, field, length, tmp_path):
    template, _ = CASES[command, field]
    over = "x" * (length + 1)
    code, out, err = run(*_argv(template, over, tmp_path))
    if (command, field) in CHOICES_FIRST:
        assert (code, out) == (2, "") and f"argument {template[template.index('{}') - 1]}: invalid choice" in err
        return
    word = _word(template, field)
    assert (code, out, err) == (
        2,
        "",
        f"pciname: error: {word} is too long ({length + 1} characters, at most {length}): {shown(over)}\n",
    )
    code, out, err = run(*_argv(template, "x" * length, tmp_path))
    assert "is too long" not in err


def _call(stub, method: str, fields: dict) -> grpc.RpcError | None:
    message = getattr(pb, f"{method}Request")(**fields)
    try:
        getattr(stub, method)(message, timeout=60)
    except grpc.RpcError as error:
        return error
    return None


def _rpc_cases() -> list[tuple[str, str, int]]:
    return [(c, f, n) for c, f, n in declared() if CASES[c, f][1] is not None]


@pytest.mark.parametrize(("command", "field", "length"), _rpc_cases(), ids=lambda v: str(v).replace(" ", "_"))
def test_the_rpc_refuses_one_over_the_declared_length_and_takes_one_at_it(stub, command, field, length):
    method, beside, name = CASES[command, field][1]  # type: ignore[misc]
    repeated = isinstance(getattr(getattr(pb, f"{method}Request")(), name), str) is False
    over = "x" * (length + 1)
    error = _call(stub, method, {**beside, name: [over] if repeated else over})
    assert error is not None
    named = f"{name}[0]" if repeated else name
    assert (error.code(), error.details()) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        f"{named} is too long ({length + 1} characters, at most {length}): {shown(over)}",
    )
    error = _call(stub, method, {**beside, name: ["x" * length] if repeated else "x" * length})
    assert error is None or "is too long" not in error.details()


def test_the_permitted_devices_are_bounded_as_the_rpc_always_bounded_them():
    """PermittedHostDevicesRequest.devices was declared at 320 characters
    while the RPC held it to 64: the declaration is the RPC's."""
    from pciname.capabilities.permitted import PermittedHostDevicesRequest

    assert limits(PermittedHostDevicesRequest)["devices"].chars == DEVICE_CHARS == 64


@pytest.mark.parametrize(
    "argv",
    [
        ["vm-gpus", "{}"],
        ["vm-gpus", "--dra", "{}"],
        ["kata-pod", "{}"],
        ["node-pool", "g", "{}"],
    ],
    ids=lambda v: "_".join(v[:-1]),
)
def test_the_cli_refuses_one_gpu_over_the_count_and_takes_the_count(argv, tmp_path):
    over = f"{GPU}={MAX_GPUS + 1}"
    code, out, err = run(*_argv(argv, over, tmp_path))
    assert (code, err) == (2, f"pciname: error: count in {over!r} is more than the {MAX_GPUS} GPUs a node may have\n")
    code, out, err = run(*_argv(argv, f"{GPU}={MAX_GPUS}", tmp_path))
    assert "more than the" not in err


@pytest.mark.parametrize(
    ("method", "beside"),
    [("DraClaims", {}), ("NodePool", {"group": "g"})],
)
def test_the_rpc_refuses_one_gpu_over_the_count_and_takes_the_count(stub, method, beside):
    over = f"{GPU}={MAX_GPUS + 1}"
    error = _call(stub, method, {**beside, "devices": [over]})
    assert error is not None
    assert (error.code(), error.details()) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        f"count in {over!r} is more than the {MAX_GPUS} GPUs a node may have",
    )
    error = _call(stub, method, {**beside, "devices": [f"{GPU}={MAX_GPUS}"]})
    assert error is None or "more than the" not in error.details()
