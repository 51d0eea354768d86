"""The Cozystack release facts pciname ships (data/cozystack/) are exactly
what the maintainer script writes from the vendored upstream files
(tests/data/cozystack-inputs.*), and those files are what the sidecar says
(their git blob ids); the facts the issue names hold for every release;
every release is a profile that names GPUs as its GPU Operator's plugin."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from pciname.cozystack import releases as cozystack
from pciname.naming.profiles import load_registry
from tests import cozystack_util as upstream
from tests.conftest import REPO
from tools import cozystack_extract as extract, upstream as upstream_tools

SHIPPED = REPO / "data" / "cozystack"


def test_shipped_facts_are_what_the_script_writes_from_the_vendored_inputs():
    releases, schemas = extract.extract(upstream.source())
    assert (SHIPPED / "releases.json").read_text(encoding="utf-8") == extract.dumps(releases)
    assert (SHIPPED / "schemas.json").read_text(encoding="utf-8") == extract.dumps(schemas)


def test_the_script_checks_the_shipped_facts(tmp_path):
    args = [sys.executable, "-m", "tools.cozystack_extract", "--from-inputs", str(upstream.INPUTS)]
    done = subprocess.run([*args, "--check"], capture_output=True, text=True, cwd=REPO)
    assert (done.returncode, done.stdout.strip().endswith("up to date")) == (0, True), done.stderr
    (tmp_path / "releases.json").write_text("{}")
    done = subprocess.run([*args, "--check", "--out", str(tmp_path)], capture_output=True, text=True, cwd=REPO)
    assert done.returncode == 1 and "STALE: releases.json, schemas.json" in done.stdout


def test_the_inputs_name_their_source_and_hold_every_blob():
    sidecar = upstream.sidecar()
    assert sidecar["repository"] == "cozystack/cozystack" and sidecar["license"] == "Apache-2.0"
    for tag, row in sidecar["tags"].items():
        assert len(row["commit"]) == 40 and row["date"][:2] == "20"
        for path in (
            extract.CHART,
            extract.CHART_VALUES,
            extract.KUBERNETES_SCHEMA,
            extract.NODES_SCHEMA,
            extract.IAAS,
        ):
            assert path in row["files"], (tag, path)
        for path, blob in row["files"].items():
            assert blob is None or blob in upstream.source().blobs, (tag, path)
    # Every final release from v1.0.0, in order, none skipped between the first and the last.
    tags = upstream.tags()
    assert tags[0] == "v1.0.0" and tags == sorted(tags, key=upstream_tools.version_key)
    assert list(sidecar["tags"]) == tags


def test_every_fact_names_its_source():
    document = json.loads((SHIPPED / "releases.json").read_text())
    for tag, entry in document["releases"].items():
        for key in ("gpu_operator", "sandbox_device_plugin", "node_group"):
            assert entry[key]["source"].startswith(("packages/", "api/")), (tag, key)
        if entry["kubernetes_nodes"]:
            assert entry["kubernetes_nodes"]["source"] and entry["kubernetes_nodes"]["kind_source"]
        if entry["gpu_wiring"]:
            assert entry["gpu_wiring"]["source"] == extract.IAAS
    for table in document["tables"].values():
        assert table["path"].startswith("packages/core/platform/files/") and len(table["blob"]) == 40


def test_the_facts_of_the_issue():
    """GPU Operator v25.3.0 (plugin v1.3.1) up to v1.3.x, v26.3.1 (plugin
    v1.5.0) from v1.4.0; GPU wiring from v1.5.0; KubernetesNodes from v1.6.0,
    which the iaas bundle installs in v1.6.0 only (upstream commit 042c69cb3
    took it out of the release-1.6 line's bundle)."""
    known = {t: r for t, r in cozystack.releases().items() if cozystack._key(t) <= (1, 6, 2)}  # as of the issue
    assert len(known) == 44
    for tag, release in known.items():
        old = cozystack._key(tag) < (1, 4, 0)
        assert (release.gpu_operator, release.plugin_release) == (
            ("v25.3.0", "v1.3.1") if old else ("v26.3.1", "v1.5.0")
        )
        assert (release.gpu_wiring is not None) == (cozystack._key(tag) >= (1, 5, 0))
        assert (release.kubernetes_nodes is not None) == (cozystack._key(tag) >= (1, 6, 0))
        if release.kubernetes_nodes:
            assert release.kubernetes_nodes.installed_by_iaas_bundle == (tag == "v1.6.0")
        wiring = release.gpu_wiring
        if wiring:
            assert wiring["default_variant"] == "default" and list(wiring["variants"]) == ["default", "vgpu"]
            assert wiring["variants"]["default"]["reads"] == ["pciHostDevices"]
            assert wiring["variants"]["vgpu"]["reads"] == ["mediatedDevices", "pciHostDevices"]
    # resources: required up to v1.4.4, not in v1.4.5/v1.4.6, again in v1.5.0/v1.5.1, not from v1.5.2.
    not_required = [t for t, r in known.items() if "resources" not in r.required]
    assert not_required == ["v1.4.5", "v1.4.6", "v1.5.2", "v1.5.3", "v1.5.4", "v1.6.0", "v1.6.1", "v1.6.2"]


def test_every_release_is_a_profile_of_the_plugin_its_gpu_operator_deploys():
    registry = load_registry()
    for tag, release in cozystack.releases().items():
        profile = registry.get(f"cozystack@{tag}")
        plugin = registry.get(f"kubevirt-gpu-device-plugin@{release.plugin_release}")
        assert (profile.kind, profile.plugin_release, profile.snapshot, profile.algorithm) == (
            "cozystack",
            plugin.plugin_release,
            plugin.snapshot,
            plugin.algorithm,
        )
        assert profile.released == release.date and release.gpu_operator in profile.note
    assert registry.get("cozystack@latest").name == f"cozystack@{upstream.tags()[-1]}"


def test_a_release_whose_plugin_has_no_profile_is_said_so():
    from pciname.errors import UnknownProfileError
    from pciname.naming.profiles import build_registry

    facts = json.loads((REPO / "data" / "profiles.json").read_text())
    document = json.loads((SHIPPED / "releases.json").read_text())
    entry = json.loads(json.dumps(document["releases"]["v1.6.2"]))
    entry["sandbox_device_plugin"]["version"] = "v9.9.9"
    registry = build_registry(facts, {"releases": {"v9.0.0": entry}})
    with pytest.raises(UnknownProfileError, match="Cozystack v9.0.0 deploys kubevirt-gpu-device-plugin@v9.9.9, which"):
        registry.get("cozystack@v9.0.0")
    with pytest.raises(UnknownProfileError, match="no facts for"):
        registry.get("cozystack@latest")


def test_readme_table_of_releases_is_the_data():
    readme = (REPO / "docs" / "passthrough.md").read_text(encoding="utf-8")
    section = readme.split("### Cozystack releases", 1)[1].split("### Tenant node groups", 1)[0]
    table = "\n".join(line for line in section.splitlines() if line.startswith("| ")) + "\n"
    assert table == cozystack.release_table()
    assert table.count("\n") == len(upstream.tags()) + 2


def test_setup_ships_the_cozystack_facts():
    import ast
    import fnmatch

    tree = ast.parse((REPO / "setup.py").read_text())
    (patterns,) = [
        ast.literal_eval(k.value)["pciname.data"]
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        for k in node.keywords
        if k.arg == "package_data"
    ]
    files = [f"cozystack/{p.name}" for p in SHIPPED.iterdir()]
    assert sorted(files) == ["cozystack/releases.json", "cozystack/schemas.json"]
    assert [f for f in files if not any(fnmatch.fnmatchcase(f, pat) for pat in patterns)] == []


def test_lookup_of_every_release_equals_its_plugin_release(capsys):
    """`lookup -p cozystack@vX.Y.Z` prints what `lookup -p
    kubevirt-gpu-device-plugin@<its GPU Operator's plugin>` prints, for every
    NVIDIA id pciname knows, every release; and the packaged answer tables
    answer the cozystack@ spellings (the fast path)."""
    import pciname
    from pciname.cli import main
    from pciname.resolution import answers

    ids = [r.device for r in pciname.devices("preview")]
    assert len(ids) > 1900

    def lookup(profile):
        code = main(["lookup", *ids, "-p", profile])
        out = capsys.readouterr().out
        return code, out

    plugins = {}
    for tag, release in cozystack.releases().items():
        plugin = f"kubevirt-gpu-device-plugin@{release.plugin_release}"
        if plugin not in plugins:
            plugins[plugin] = lookup(plugin)
            assert plugins[plugin][1].count("nvidia.com/") > 1900
        assert lookup(f"cozystack@{tag}") == plugins[plugin], tag
        assert answers.table(f"cozystack@{tag}") is not None, tag
    assert answers.table("cozystack@latest") is not None


def test_the_script_rewrites_the_readme_table(tmp_path):
    readme = tmp_path / "README.md"
    readme.write_text(
        "# x\n\n### Cozystack releases\n\ntext\n\n| old | table |\n| --- | --- |\n| v0 | - |\n\n### Next\n"
    )
    assert extract.update_readme(readme)
    text = readme.read_text()
    assert "| old |" not in text and cozystack.release_table() in text and text.endswith("\n### Next\n")
    assert not extract.update_readme(readme)  # already current


def test_grpc_names_and_lists_cozystack_profiles(tmp_path):
    from pciname.server._proto import pciname_pb2 as pb
    from tests.server_util import packaged_stub

    with packaged_stub(tmp_path / "cache") as stub:
        old = stub.Resolve(pb.ResolveRequest(device="10de:2941", profile="cozystack@v1.3.0"), timeout=20)
        new = stub.Resolve(pb.ResolveRequest(device="10de:2941", profile="cozystack@latest"), timeout=20)
        listed = stub.ListProfiles(pb.ListProfilesRequest(), timeout=20)
    assert (old.resource_name, old.profile, old.plugin_release) == (
        "nvidia.com/GB100_GB200_SKU",
        "cozystack@v1.3.0",
        "v1.3.1",
    )
    assert (new.resource_name, new.profile) == ("nvidia.com/GB100_HGX_GB200", f"cozystack@{upstream.tags()[-1]}")
    cozy = [p for p in listed.profiles if p.kind == "cozystack"]
    assert [p.name for p in cozy] == [f"cozystack@{t}" for t in upstream.tags()]
    assert all(p.plugin_release == cozystack.get_release(p.name).plugin_release for p in cozy)
