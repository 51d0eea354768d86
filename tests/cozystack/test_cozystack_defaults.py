"""What Cozystack does with `permitted-host-devices --format cozystack`: its
default tables (facts, checked against the vendored upstream files), the GPU
variant that ignores mediatedDevices, clashes with the defaults (the
examples of issue 10), a defaults table from a file, usage errors, and the
same over gRPC on a loopback server."""

from __future__ import annotations

import grpc
import pytest
import yaml
from hypothesis import given, settings, strategies as st

from pciname.cozystack import releases as cozystack
from pciname.cozystack.defaults import (
    ALREADY_A_DEFAULT,
    DEFAULT_VARIANT,
    DUPLICATE_OF_DEFAULT,
    IGNORED_BY_VARIANT,
    MDEV_VARIANTS,
    PASSTHROUGH_DEFAULTS,
    SHADOWED_BY_DEFAULT,
    SUGGESTION,
    VARIANTS,
    VGPU_DEFAULTS,
    DefaultEntry,
    built_in_defaults,
    for_cozystack,
    parse_defaults,
    table_dict,
    wiring,
)
from pciname.errors import CozystackNotWired, PcinameError
from pciname.kubevirt.generate import Snippet, permitted_host_devices, render
from pciname.server._proto import pciname_pb2 as pb
from tests import cozystack_util as upstream
from tests.cli_run import pciname as run
from tests.conftest import REPO, ServerSpec

DATA = REPO / "tests" / "data"

OLD = "gpu-operator@v23.9.2"
L40S_CLASH = (
    "pciname: clash 10DE:26B9: shadowed-by-default: Cozystack's defaults (gpu-passthrough-defaults.yaml@22b682c3a1) permit it as "
    "nvidia.com/AD102GL_L40S: the CR gets both, the plugin advertises only nvidia.com/26b9, and a VM asking for "
    "nvidia.com/AD102GL_L40S is admitted but never scheduled"
)
H100_CLASH = (
    "pciname: clash 10DE:2330: shadowed-by-default: Cozystack's defaults (gpu-passthrough-defaults.yaml@22b682c3a1) permit it as "
    "nvidia.com/GH100_H100_SXM5_80GB: the CR gets both, the plugin advertises only nvidia.com/GH100H100_SXM5_80GB, "
    "and a VM asking for nvidia.com/GH100_H100_SXM5_80GB is admitted but never scheduled"
)
L40S_NOTE = (
    "pciname: note: 10de:26b9: unnamed-device: pci.ids 2023.05.23 gives no name for 10de:26b9; the plugin falls "
    "back to the device id: nvidia.com/26b9"
)
HINT = f"pciname: hint: {SUGGESTION}"


def entry(selector, name):
    key = "mdevNameSelector" if " " in selector else "pciVendorSelector"
    return {key: selector, "resourceName": name, "externalResourceProvider": True}


# -- the facts --------------------------------------------------------------------------------


def _upstream_table(tag, path, field):
    data = upstream.source().read(upstream.commit(tag), path)
    node = yaml.safe_load(data)
    for key in field.split("."):
        node = node[key]
    return data, node


@pytest.mark.parametrize("tag", upstream.tags())
def test_each_release_wiring_and_tables_are_its_upstream_files(tag):
    """The tables a release's bundle reads are its own files (from the
    vendored inputs), entry for entry; releases before v1.5.0 wire nothing,
    and say what to do instead."""
    release = cozystack.get_release(tag)
    if release.gpu_wiring is None:
        with pytest.raises(
            CozystackNotWired, match=f"Cozystack {tag} does not wire gpu.permittedHostDevices.*--format kubevirt"
        ):
            wiring(tag)
        return
    wired = wiring(tag)
    assert wired.names[:2] == ("default", "vgpu") and wired.default_variant == "default"
    for variant, path, field, kind in (
        ("default", "packages/core/platform/files/gpu-passthrough-defaults.yaml", "pciHostDevices", "pci"),
        ("vgpu", "packages/core/platform/files/gpu-vgpu-defaults.yaml", "permittedHostDevices.mediatedDevices", "mdev"),
    ):
        data, entries = _upstream_table(tag, path, field)
        table = built_in_defaults(variant, vgpu_device_manager=True, release=tag)
        assert table_dict(table)[field.rpartition(".")[2]] == entries
        assert parse_defaults(data, path).entries == table.entries
        assert (
            all(e.kind == kind for e in table.entries) and path in table.source and f"Cozystack {tag}" in table.source
        )
        assert table.version == f"{path.rpartition('/')[2]}@{upstream.sidecar()['tags'][tag]['files'][path][:10]}"


def test_variant_facts():
    newest = wiring()
    assert (newest.names, newest.default_variant, newest.readers("mediatedDevices")) == (
        VARIANTS,
        DEFAULT_VARIANT,
        MDEV_VARIANTS,
    )
    assert wiring("v1.6.2").names == ("default", "vgpu") and wiring("v1.6.2").readers("mediatedDevices") == ("vgpu",)
    assert DEFAULT_VARIANT == "default"
    assert built_in_defaults("default") == PASSTHROUGH_DEFAULTS
    assert built_in_defaults("default", vgpu_device_manager=True) == PASSTHROUGH_DEFAULTS
    assert built_in_defaults("vgpu") is None  # a stock vgpu cluster ships no mdev table, and no PCI one
    assert built_in_defaults("vgpu", vgpu_device_manager=True) == VGPU_DEFAULTS
    assert (len(PASSTHROUGH_DEFAULTS.entries), len(VGPU_DEFAULTS.entries)) == (19, 8)


def test_release_before_the_wiring_is_one_line_exit_2(capsys):
    code, out, err = run("permitted-host-devices", "10de:2236", "--format", "cozystack", "--cozystack", "v1.4.6")
    assert (code, out) == (2, "") and err.count("\n") == 1
    assert "Cozystack v1.4.6 does not wire gpu.permittedHostDevices into the KubeVirt CR" in err
    assert "from v1.5.0 it does" in err and "--format kubevirt or --format patch" in err
    code, _, err = run("permitted-host-devices", "10de:2236", "--format", "cozystack", "-p", "cozystack@v1.0.0")
    assert code == 2 and "Cozystack v1.0.0 does not wire" in err


def test_cozystack_release_flag_rules(capsys):
    code, out, err = run("permitted-host-devices", "10de:2236", "--cozystack", "v1.5.0")
    assert (code, err) == (2, "pciname: error: --cozystack goes with --format cozystack\n")
    code, _, err = run(
        "permitted-host-devices",
        "10de:2236",
        "--format",
        "cozystack",
        "--cozystack",
        "v1.6.0",
        "-p",
        "cozystack@v1.5.0",
    )
    assert (
        code == 2
        and "profile cozystack@v1.5.0 is Cozystack v1.5.0, but Cozystack v1.6.0 was asked for: give one" in err
    )
    code, _, err = run("permitted-host-devices", "10de:2236", "--format", "cozystack", "--cozystack", "v7.0.0")
    assert code == 2 and "unknown Cozystack release 'v7.0.0': pciname knows v1.0.0 to v1.6.2" in err
    code, _out, err = run("permitted-host-devices", "10de:2236", "--format", "cozystack", "--cozystack", "v1.5.0")
    assert code == 0 and "Cozystack's defaults (gpu-passthrough-defaults.yaml@22b682c3a1) hold this very entry" in err


# -- the examples of the issue -------------------------------------------------------------------


def test_older_profile_clashes_with_the_defaults(capsys):
    code, out, err = run("permitted-host-devices", "10de:26b9", "10de:2330", "--format", "cozystack", "-p", OLD)
    assert code == 1
    assert err.splitlines() == [L40S_NOTE, L40S_CLASH, H100_CLASH, HINT]
    assert yaml.safe_load(out) == {
        "gpu": {
            "permittedHostDevices": {
                "pciHostDevices": [
                    entry("10DE:26B9", "nvidia.com/26b9"),
                    entry("10DE:2330", "nvidia.com/GH100H100_SXM5_80GB"),
                ]
            }
        }
    }


def test_replace_defaults_reports_no_clash(capsys):
    argv = ("permitted-host-devices", "10de:26b9", "10de:2330", "10de:2236", "--format", "cozystack", "-p", OLD)
    code, out, err = run(*argv, "--replace-defaults")
    assert (code, err.splitlines()) == (0, [L40S_NOTE])
    gpu = yaml.safe_load(out)["gpu"]
    assert gpu["replaceDefaults"] is True
    assert [e["pciVendorSelector"] for e in gpu["permittedHostDevices"]["pciHostDevices"]] == [
        "10DE:26B9",
        "10DE:2330",
        "10DE:2236",
    ]


def test_an_entry_the_defaults_hold_is_left_out_with_a_note(capsys):
    code, out, err = run("permitted-host-devices", "10de:2236", "10de:2237", "--format", "cozystack")
    assert code == 0
    assert err.splitlines() == [
        "pciname: note: 10DE:2236: already-a-default: Cozystack's defaults (gpu-passthrough-defaults.yaml@22b682c3a1) hold this very "
        "entry: left out, the CR would list it twice"
    ]
    assert yaml.safe_load(out) == {
        "gpu": {"permittedHostDevices": {"pciHostDevices": [entry("10DE:2237", "nvidia.com/GA102GL_A10G")]}}
    }


# -- the variant ---------------------------------------------------------------------------------


def test_default_variant_leaves_mdev_entries_out(capsys):
    argv = ("permitted-host-devices", "10de:2237", "--mdev", "NVIDIA A10-24Q", "--format", "cozystack")
    for variant in ((), ("--variant", "default")):
        code, out, err = run(*argv, *variant)
        assert code == 1
        assert err.splitlines() == [
            "pciname: left out NVIDIA A10-24Q: ignored-by-variant: Cozystack's GPU variant default does not read "
            "gpu.permittedHostDevices.mediatedDevices (only vgpu does)"
        ]
        assert yaml.safe_load(out) == {
            "gpu": {"permittedHostDevices": {"pciHostDevices": [entry("10DE:2237", "nvidia.com/GA102GL_A10G")]}}
        }
    code, out, err = run(*argv, "-o", "table")
    assert out.splitlines()[1:] == [
        "10DE:2237       nvidia.com/GA102GL_A10G    permitted",
        "NVIDIA A10-24Q  nvidia.com/NVIDIA_A10-24Q  left out: ignored-by-variant",
    ]


def test_vgpu_variant_keeps_mdev_and_pci_entries(capsys):
    argv = (
        "permitted-host-devices",
        "10de:26b9",
        "--mdev",
        "NVIDIA A100-40C",
        "--format",
        "cozystack",
        "--variant",
        "vgpu",
    )
    code, out, err = run(*argv)
    assert (code, err) == (0, "")  # no passthrough table in vgpu, and no mdev table without the device manager
    assert yaml.safe_load(out) == {
        "gpu": {
            "permittedHostDevices": {
                "pciHostDevices": [entry("10DE:26B9", "nvidia.com/AD102GL_L40S")],
                "mediatedDevices": [entry("NVIDIA A100-40C", "nvidia.com/NVIDIA_A100-40C")],
            }
        }
    }
    code, out, err = run(*argv, "--vgpu-device-manager")
    assert code == 1
    assert err.splitlines() == [
        "pciname: clash NVIDIA A100-40C: shadowed-by-default: Cozystack's defaults (gpu-vgpu-defaults.yaml@fe5ac1fbd3) permit it as "
        "nvidia.com/A100-40C: the CR gets both, the plugin advertises only nvidia.com/NVIDIA_A100-40C, and a VM "
        "asking for nvidia.com/A100-40C is admitted but never scheduled",
        HINT,
    ]
    code, _, err = run(*argv, "--vgpu-device-manager", "--replace-defaults")
    assert (code, err) == (0, "")


# -- a defaults table from a file -----------------------------------------------------------------

CUSTOM = """\
# Cozystack platform values, as an operator keeps them
gpu:
  permittedHostDevices:
    pciHostDevices:
    - pciVendorSelector: "10de:2236"
      resourceName: nvidia.com/A10
      externalResourceProvider: true
    - pciVendorSelector: "10DE:1EB8"
      resourceName: nvidia.com/GA102GL_A10
      externalResourceProvider: true
    - pciVendorSelector: "10DE:2237"
      resourceName: nvidia.com/A10G
"""


def test_cozystack_defaults_file(tmp_path, capsys):
    custom = tmp_path / "values.yaml"
    custom.write_text(CUSTOM, encoding="utf-8")
    argv = ("permitted-host-devices", "10de:2236", "10de:2237", "10de:26b9", "--format", "cozystack")
    code, out, err = run(*argv, "--cozystack-defaults", custom)
    assert code == 1
    shown = str(custom)
    assert err.splitlines() == [
        f"pciname: clash 10DE:2236: shadowed-by-default: Cozystack's defaults ({shown}) permit it as nvidia.com/A10: "
        "the CR gets both, the plugin advertises only nvidia.com/GA102GL_A10, and a VM asking for nvidia.com/A10 is "
        "admitted but never scheduled",
        f"pciname: clash 10DE:2236: duplicate-of-default: Cozystack's defaults ({shown}) permit nvidia.com/GA102GL_A10 "
        "for 10DE:1EB8 too: a VM asking for it may be given either device",
        f"pciname: clash 10DE:2237: shadowed-by-default: Cozystack's defaults ({shown}) have KubeVirt's own device "
        "plugin advertise it as nvidia.com/A10G: two plugins hand out the same devices",
        HINT,
    ]  # 10DE:26B9, in the built-in table, is not in this one
    assert len(yaml.safe_load(out)["gpu"]["permittedHostDevices"]["pciHostDevices"]) == 3
    vgpu_fixture = tmp_path / "gpu-vgpu-defaults.yaml"  # Cozystack's own file, from the vendored inputs
    vgpu_fixture.write_bytes(
        upstream.source().read(upstream.commit("v1.6.2"), "packages/core/platform/files/gpu-vgpu-defaults.yaml")
    )
    code, _, err = run(*argv, "--cozystack-defaults", vgpu_fixture)  # an mdev-only table: no clash
    assert (code, err) == (0, "")
    code, _, err = run(
        "permitted-host-devices",
        "--mdev",
        "NVIDIA T4-16Q",
        "--format",
        "cozystack",
        "--variant",
        "vgpu",
        "--cozystack-defaults",
        vgpu_fixture,
    )
    assert code == 1 and "clash NVIDIA T4-16Q: shadowed-by-default:" in err and "as nvidia.com/T4-16Q:" in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("gpu: [\n", "not YAML (line 2): expected the node content"),
        ("gpu:\n  replaceDefaults: true\n", "no defaults table in it"),
        ("x: &a\n  - *a\n", "no defaults table in it"),  # a YAML loop ends
        ("pciHostDevices: {a: 1}\n", "pciHostDevices is not a list"),
        ("pciHostDevices: [x]\n", "pciHostDevices[0] is not a mapping"),
        ("pciHostDevices:\n- resourceName: nvidia.com/A10\n", "pciHostDevices[0] has no pciVendorSelector"),
        (
            "mediatedDevices:\n- mdevNameSelector: GRID T4-1Q\n  resourceName: 7\n",
            "mediatedDevices[0] has no resourceName",
        ),
        (b"pciHostDevices: []\n\xff", "not UTF-8 text"),
        # Values the YAML loader itself refuses (issue 16: a traceback, exit 1).
        ("a: !!timestamp 2020-13-45\n", "not valid YAML: month must be in 1..12"),
        ("a: 0x_\n", "not valid YAML: invalid literal for int()"),
        ("a: !!float x\n", "not valid YAML: could not convert string to float"),
        ("a: " + "9" * 5000 + "\n", "not valid YAML: Exceeds the limit"),
        ("a: " + "[" * 5000 + "]" * 5000 + "\n", "nested too deeply to read as YAML"),
    ],
)
def test_bad_defaults_file_is_a_one_line_error(tmp_path, capsys, text, message):
    path = tmp_path / "defaults.yaml"
    path.write_bytes(text if isinstance(text, bytes) else text.encode())
    code, out, err = run("permitted-host-devices", "10de:2236", "--format", "cozystack", "--cozystack-defaults", path)
    assert (code, out) == (2, "")
    assert err.startswith(f"pciname: error: {path}: ") and message in err and err.count("\n") == 1
    with pytest.raises(PcinameError, match="^x.yaml: "):
        parse_defaults(text, "x.yaml")


def test_missing_defaults_file(tmp_path, capsys):
    missing = tmp_path / "nope.yaml"
    code, _, err = run("permitted-host-devices", "10de:2236", "--format", "cozystack", "--cozystack-defaults", missing)
    assert (code, err) == (2, f"pciname: error: {missing}: cannot read: No such file or directory\n")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--variant", "vgpu"], "--variant goes with --format cozystack"),
        (["--format", "patch", "--vgpu-device-manager"], "--vgpu-device-manager goes with --format cozystack"),
        (
            ["--format", "kubevirt", "--cozystack-defaults", "x.yaml"],
            "--cozystack-defaults goes with --format cozystack",
        ),
        (["--format", "cozystack", "--vgpu-device-manager"], "--vgpu-device-manager goes with --variant vgpu"),
        (["--format", "cozystack", "--replace-defaults", "--cozystack-defaults", "x.yaml"], "nothing to compare with"),
        (
            ["--format", "cozystack", "--variant", "vgpu", "--vgpu-device-manager", "--cozystack-defaults", "x.yaml"],
            "--cozystack-defaults replaces it",
        ),
        (
            ["--format", "cozystack", "--variant", "passthrough"],
            "unknown Cozystack GPU variant 'passthrough': use one of default, vgpu (what Cozystack v",
        ),
    ],
)
def test_usage_errors(capsys, argv, message):
    code, out, err = run("permitted-host-devices", "10de:2236", *argv)
    assert (code, out) == (2, "") and message in err and err.count("\n") == 1


# -- the rules, whatever the entries -----------------------------------------------------------


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from(PASSTHROUGH_DEFAULTS.entries), st.booleans(), st.booleans()),
        max_size=8,
        unique_by=lambda t: t[0],
    )
)
def test_every_default_selector_is_compared(picks):
    """Our entry with a default's selector (in either case): left out with a
    note when its name is the default's, else kept and reported as shadowed."""
    ours = []
    for d, same_name, lower in picks:
        name = d.resource_name if same_name else d.resource_name + "_X"
        ours.append(entry(d.selector.lower() if lower else d.selector, name))
    checked = for_cozystack(Snippet({"pciHostDevices": ours} if ours else {}, "latest"))
    kept = [e for e, (_, same, _) in zip(ours, picks) if not same]
    assert checked.snippet.data.get("pciHostDevices", []) == kept
    assert [c.codes for c in checked.clashes] == [(SHADOWED_BY_DEFAULT,)] * len(kept)
    assert [n.codes for n in checked.snippet.notes] == [(ALREADY_A_DEFAULT,)] * (len(ours) - len(kept))
    replaced = for_cozystack(Snippet({"pciHostDevices": ours} if ours else {}, "latest"), replace_defaults=True)
    assert replaced.clashes == () and replaced.snippet.data.get("pciHostDevices", []) == ours


def test_duplicate_name_and_key_rules():
    assert DefaultEntry("pci", " 10de:26b9", "x").key() == ("pci", "10DE:26B9")
    assert DefaultEntry("mdev", "NVIDIA T4-16Q", "x").key() != DefaultEntry("mdev", "nvidia t4-16q", "x").key()
    snippet = Snippet({"pciHostDevices": [entry("10DE:9999", "nvidia.com/GA102GL_A10")]}, "latest")
    checked = for_cozystack(snippet)
    assert [c.codes for c in checked.clashes] == [(DUPLICATE_OF_DEFAULT,)]
    assert "10DE:2236" in checked.clashes[0].reasons[0].message
    mdev = Snippet({"mediatedDevices": [entry("NVIDIA A10-24Q", "nvidia.com/A10-24Q")]}, "latest")
    assert [s.codes for s in for_cozystack(mdev).snippet.left_out] == [(IGNORED_BY_VARIANT,)]
    assert for_cozystack(mdev, variant="vgpu").snippet.data == mdev.data
    with pytest.raises(PcinameError, match="unknown Cozystack GPU variant 'container'"):
        for_cozystack(mdev, variant="container")


# -- over gRPC ----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_spec(session_cache):
    return ServerSpec(cache=session_cache)


def lines(entries, prefix):
    """The CLI's stderr lines for these SkippedEntry messages."""
    return [f"pciname: {prefix}{e.item}: {w.code}: {w.message}" for e in entries for w in e.reasons]


def test_grpc_answers_what_the_cli_prints(stub, capsys):
    request = pb.PermittedHostDevicesRequest(
        devices=["10de:26b9", "10de:2330", "10de:2236"], mdev_types=["NVIDIA A10-24Q"], profile=OLD, format="cozystack"
    )
    got = stub.PermittedHostDevices(request, timeout=20)
    code, out, err = run(
        "permitted-host-devices",
        "10de:26b9",
        "10de:2330",
        "10de:2236",
        "--mdev",
        "NVIDIA A10-24Q",
        "--format",
        "cozystack",
        "-p",
        OLD,
    )
    assert code == 1 and got.yaml == out and got.variant == "default"
    assert (
        lines(got.left_out, "left out ") + lines(got.notes, "note: ") + lines(got.clashes, "clash ") + [HINT]
        == err.splitlines()
    )
    assert [c.item for c in got.clashes] == ["10DE:26B9", "10DE:2330"]
    assert [e.pci_vendor_selector for e in got.pci_host_devices] == ["10DE:26B9", "10DE:2330"]
    assert not got.mediated_devices
    replaced = stub.PermittedHostDevices(
        pb.PermittedHostDevicesRequest(devices=["10de:26b9"], profile=OLD, format="cozystack", replace_defaults=True),
        timeout=20,
    )
    assert not replaced.clashes and yaml.safe_load(replaced.yaml)["gpu"]["replaceDefaults"] is True


def test_grpc_variant_and_defaults_text(stub):
    vgpu = stub.PermittedHostDevices(
        pb.PermittedHostDevicesRequest(
            mdev_types=["NVIDIA A100-40C"], format="cozystack", variant="vgpu", vgpu_device_manager=True
        ),
        timeout=20,
    )
    assert vgpu.variant == "vgpu" and [m.mdev_name_selector for m in vgpu.mediated_devices] == ["NVIDIA A100-40C"]
    assert [(c.item, [w.code for w in c.reasons]) for c in vgpu.clashes] == [("NVIDIA A100-40C", [SHADOWED_BY_DEFAULT])]
    custom = stub.PermittedHostDevices(
        pb.PermittedHostDevicesRequest(devices=["10de:2236"], format="cozystack", cozystack_defaults=CUSTOM),
        timeout=20,
    )
    assert [[w.code for w in c.reasons] for c in custom.clashes] == [[SHADOWED_BY_DEFAULT, DUPLICATE_OF_DEFAULT]]
    assert "(cozystack_defaults)" in custom.clashes[0].reasons[0].message
    plain = stub.PermittedHostDevices(pb.PermittedHostDevicesRequest(devices=["10de:2236"]), timeout=20)
    assert (plain.variant, list(plain.clashes)) == ("", [])  # other formats: no Cozystack checks
    assert yaml.safe_load(plain.yaml) == render(permitted_host_devices(["10de:2236"]).data, "kubevirt")


@pytest.mark.parametrize(
    ("fields", "needle"),
    [
        ({"variant": "vgpu"}, "variant goes with format cozystack"),
        (
            {"format": "patch", "cozystack_defaults": "pciHostDevices: []"},
            "cozystack_defaults goes with format cozystack",
        ),
        ({"format": "kubevirt", "vgpu_device_manager": True}, "vgpu_device_manager goes with format cozystack"),
        ({"format": "cozystack", "variant": "container"}, "unknown Cozystack GPU variant 'container'"),
        ({"format": "cozystack", "variant": "x" * 5000}, "variant is too long"),
        ({"format": "cozystack", "vgpu_device_manager": True}, "vgpu_device_manager goes with variant vgpu"),
        ({"format": "cozystack", "cozystack_defaults": "a: ["}, "cozystack_defaults: not YAML"),
        ({"format": "cozystack", "cozystack_defaults": "a: 1"}, "cozystack_defaults: no defaults table"),
        (
            {"format": "cozystack", "cozystack_defaults": "a: !!timestamp 2020-13-45"},
            "cozystack_defaults: not valid YAML",
        ),
        ({"format": "cozystack", "cozystack_defaults": "a: 0x_"}, "cozystack_defaults: not valid YAML"),
        ({"format": "cozystack", "cozystack_defaults": "a: " + "9" * 5000}, "cozystack_defaults: not valid YAML"),
        ({"format": "cozystack", "cozystack_defaults": "a: " + "[" * 5000}, "cozystack_defaults: nested too deeply"),
        (
            {"format": "cozystack", "cozystack_defaults": "pciHostDevices: []", "replace_defaults": True},
            "nothing to compare",
        ),
        ({"format": "cozystack", "cozystack_defaults": "#" * (2 << 20)}, "cozystack_defaults is too large"),
    ],
)
def test_grpc_invalid_arguments(stub, fields, needle):
    with pytest.raises(grpc.RpcError) as caught:
        stub.PermittedHostDevices(pb.PermittedHostDevicesRequest(devices=["10de:2236"], **fields), timeout=20)
    assert caught.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    assert needle in caught.value.details() and len(caught.value.details()) < 400


def test_readme_names_every_code_and_flag():
    from pciname.cozystack.defaults import CODES

    readme = (REPO / "docs" / "passthrough.md").read_text(encoding="utf-8")
    section = readme.split("`--format cozystack` writes", 1)[1].split("vGPU (mdev) names depend", 1)[0]
    for word in (*CODES, "--variant", "--vgpu-device-manager", "--cozystack-defaults", "--replace-defaults"):
        assert f"`{word}`" in section or f" {word} " in section, word
    assert f"{len(PASSTHROUGH_DEFAULTS.entries)} PCI entries" in section
    assert f"{len(VGPU_DEFAULTS.entries)} mdev entries" in section


@pytest.mark.parametrize(
    ("fields", "code", "needle"),
    [
        ({"cozystack": "v1.5.0"}, grpc.StatusCode.INVALID_ARGUMENT, "cozystack goes with format cozystack"),
        (
            {"format": "cozystack", "cozystack": "v1.4.0"},
            grpc.StatusCode.FAILED_PRECONDITION,
            "Cozystack v1.4.0 does not wire gpu.permittedHostDevices",
        ),
        (
            {"format": "cozystack", "cozystack": "v0.5.0"},
            grpc.StatusCode.NOT_FOUND,
            "unknown Cozystack release 'v0.5.0'",
        ),
        (
            {"format": "cozystack", "cozystack": "1.5"},
            grpc.StatusCode.INVALID_ARGUMENT,
            "malformed Cozystack version '1.5'",
        ),
        (
            {"format": "cozystack", "cozystack": "v1.6.0", "profile": "cozystack@v1.5.0"},
            grpc.StatusCode.INVALID_ARGUMENT,
            "is Cozystack v1.5.0, but Cozystack v1.6.0 was asked for: give one",
        ),
    ],
)
def test_grpc_cozystack_release_errors(stub, fields, code, needle):
    with pytest.raises(grpc.RpcError) as caught:
        stub.PermittedHostDevices(pb.PermittedHostDevicesRequest(devices=["10de:2236"], **fields), timeout=20)
    assert caught.value.code() == code and needle in caught.value.details()


def test_grpc_cozystack_release_is_what_the_cli_prints(stub, capsys):
    got = stub.PermittedHostDevices(
        pb.PermittedHostDevicesRequest(devices=["10de:2330"], format="cozystack", cozystack="v1.5.0", profile=OLD),
        timeout=20,
    )
    code, out, _err = run(
        "permitted-host-devices", "10de:2330", "--format", "cozystack", "--cozystack", "v1.5.0", "-p", OLD
    )
    assert (
        code == 1
        and got.yaml == out
        and "Cozystack's defaults (gpu-passthrough-defaults.yaml@22b682c3a1)" in got.clashes[0].reasons[0].message
    )
