"""The Kata release facts (data/kata/releases.json) are exactly what the
maintainer script writes from the vendored upstream files
(tests/data/kata-inputs.*: NVIDIA/sandbox-device-plugin and NVIDIA/gpu-operator
blobs, without their pci.ids files); the facts the issue names hold; every
fact names a file the script read at that release; a changed upstream
function is an error of one line naming release and file, never a guess;
and formatDeviceName, built with Go from each release's own source, does
what the facts say."""

from __future__ import annotations

import io
import json
import re
import tarfile
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import DEBIAN_SID, NEEDS_GO, PROFILES_JSON
from tests.extract_util import Extracted
from tests.go_oracles import ask, build
from tools import kata_extract as extract, upstream

FAMILY = Extracted("kata", "kata_extract")
SHIPPED, INPUTS = FAMILY.shipped_path, FAMILY.inputs
shipped, sidecar, tarball, run = FAMILY.shipped, FAMILY.sidecar, FAMILY.tarball, FAMILY.run
PLUGIN, OPERATOR = extract.PLUGIN_REPOSITORY, extract.OPERATOR_REPOSITORY


# -- the shipped facts are the script's ---------------------------------------------


def test_shipped_facts_are_what_the_script_writes_from_the_vendored_inputs():
    document = extract.extract(*extract.load_inputs(INPUTS))
    assert SHIPPED.read_text(encoding="utf-8") == upstream.dumps(document)


def test_the_script_checks_the_shipped_facts(tmp_path):
    done = run("--from-inputs", str(INPUTS), "--check")
    assert (done.returncode, done.stdout.strip().endswith("up to date")) == (0, True), done.stderr
    stale = shipped()
    stale["operator_releases"]["v26.7.0"]["plugin"] = "v0.0.4"
    (tmp_path / "releases.json").write_text(json.dumps(stale))
    done = run("--from-inputs", str(INPUTS), "--check", "--out", str(tmp_path))
    assert done.returncode == 1
    assert done.stdout.splitlines() == [
        f"{tmp_path}/releases.json: STALE: 1 facts differ: operator_releases.v26.7.0.plugin"
    ]


def test_the_inputs_name_their_sources_hold_every_blob_and_no_pci_ids():
    side, blobs = sidecar(), tarball()
    assert {repo: row["license"] for repo, row in side["repositories"].items()} == extract.LICENSES
    held = {name.rpartition("/")[2] for name in blobs}
    assert all(upstream.blob_id(data) == name.rpartition("/")[2] for name, data in blobs.items())
    for repo, row in side["repositories"].items():
        for tag, at in row["tags"].items():
            assert len(at["commit"]) == 40 and re.fullmatch(r"20\d\d-\d\d-\d\d", at["date"]), (repo, tag)
            for path, blob in at["files"].items():
                assert blob is None or blob in held or blob in side["pci_ids"], (repo, tag, path)
    # The pci.ids files are facts in the sidecar, not blobs in the tarball, which stays small.
    assert side["pci_ids"] and not held & set(side["pci_ids"])
    assert all(not data.startswith(b"#\n#\tList of PCI ID's") for data in blobs.values())
    assert INPUTS.with_suffix(".tar.xz").stat().st_size < 150_000
    plugin_tags = list(side["repositories"][PLUGIN]["tags"])
    assert plugin_tags == ["v0.0.1", "v0.0.2", "v0.0.3", "v0.0.4", "v0.0.5"]
    operator_tags = list(side["repositories"][OPERATOR]["tags"])
    assert operator_tags == sorted(operator_tags, key=upstream.version_key)
    assert all(re.fullmatch(r"v\d+\.\d+\.\d+", tag) for tag in operator_tags)  # no release candidates


# -- the facts ------------------------------------------------------------------------


def test_the_facts_of_the_issue():
    document = shipped()
    plugins, operators = document["plugin_releases"], document["operator_releases"]
    snapshot = json.loads(PROFILES_JSON.read_text(encoding="utf-8"))["snapshots"]["2025.07.11"]["sha256"]
    assert snapshot == "a96cd22db83c10d9141ecd7b14325ed9c936de5ef01d78e7e7e43f070184270b"
    assert plugins["v0.0.1"]["algorithm"] == "vendor-section" and plugins["v0.0.1"]["classes"] is None
    assert plugins["v0.0.1"]["aliases"] == {
        "P_GPU_ALIAS": {"read": "Getenv", "unset": ""},
        "NVSWITCH_ALIAS": None,
        "source": "cmd/main.go",
    }
    assert (plugins["v0.0.1"]["pci_ids"]["path"], plugins["v0.0.1"]["unnamed"]["advertised_as"]) == (
        "/usr/pci.ids",
        "device-id",
    )
    for tag in ("v0.0.2", "v0.0.3", "v0.0.4", "v0.0.5"):
        release = plugins[tag]
        assert release["algorithm"] == "go-nvlib" and release["format_filter"] == "[^a-zA-Z0-9_-]+", tag
        assert release["aliases"]["P_GPU_ALIAS"] == {"read": "LookupEnv", "unset": "pgpu"}, tag
        assert release["aliases"]["NVSWITCH_ALIAS"] == {"read": "LookupEnv", "unset": "nvswitch"}, tag
        assert (release["pci_ids"]["sha256"], release["pci_ids"]["version"]) == (snapshot, "2025.07.11"), tag
        assert release["classes"] == ["0x030000", "0x030200", "0x068000"] and release["vendors"] == ["10de", "15b3"]
        assert (
            release["unnamed"]["advertised_as"] == "UNKNOWN_DEVICE"
            and release["pci_ids"]["image_copy"]["read"] is False
        )
    for release in plugins.values():
        assert (release["driver"], release["unit"], release["socket"], release["resource"]) == (
            "vfio-pci",
            "iommu-group",
            "sandbox-%s.sock",
            "nvidia.com/%s",
        )
        assert release["allocate_env"] is False and "PCI_RESOURCE_NVIDIA_COM" in release["note"]
    assert {tag: r["plugin"] for tag, r in operators.items()} == {
        "v26.3.0": "v0.0.2",
        "v26.3.1": "v0.0.3",
        "v26.3.2": "v0.0.3",
        "v26.3.3": "v0.0.3",
        "v26.7.0": "v0.0.5",
    }
    for tag, release in operators.items():
        assert (release["mode"]["default"], release["mode"]["accepted"]) == ("kubevirt", ["kubevirt", "kata"]), tag
        assert not release["daemonset"]["sets_p_gpu_alias"] and not release["daemonset"]["sets_nvswitch_alias"], tag
        assert release["runtime_classes"]["created"] == [] and "kata-deploy" in release["runtime_classes"]["note"], tag
    assert "permanently switched off" in operators["v26.7.0"]["runtime_classes"]["note"]
    # The operator creates no Kata RuntimeClass; the plugin's own GPU pod (createGFDPod) names one.
    assert plugins["v0.0.1"]["gpu_pod_runtime_classes"] is None
    assert "no gfd.go" in plugins["v0.0.1"]["sources"]["gpu_pod_runtime_classes"]
    for tag in ("v0.0.2", "v0.0.3", "v0.0.4", "v0.0.5"):
        classes = plugins[tag]["gpu_pod_runtime_classes"]
        assert classes["default"] == "kata-qemu-nvidia-gpu", tag
        assert classes["by_node_labels"] == [
            {
                "labels": {"nvidia.com/cc.ready.state": "true", "amd.feature.node.kubernetes.io/snp": "true"},
                "runtime_class": "kata-qemu-nvidia-gpu-snp",
            },
            {
                "labels": {"nvidia.com/cc.ready.state": "true", "intel.feature.node.kubernetes.io/tdx": "true"},
                "runtime_class": "kata-qemu-nvidia-gpu-tdx",
            },
        ], tag
        assert plugins[tag]["sources"]["gpu_pod_runtime_classes"].startswith("pkg/device_plugin/gfd.go createGFDPod")
        assert classes["launched"] == ("always" if tag == "v0.0.2" else "ENABLE_GFD"), tag
    assert document["operator_tags_skipped"][-1] == "v25.10.1"


def _paths(text: str) -> list[str]:
    return re.findall(r"(?<![\w./])(?:[\w.-]+/)+[\w.-]+\.(?:go|yaml|mk|ids|mod)\b|\b(?:go\.mod|versions\.mk)\b", text)


def test_every_fact_names_a_file_the_script_read_at_that_release():
    document, side = shipped(), sidecar()
    for repo, key in ((PLUGIN, "plugin_releases"), (OPERATOR, "operator_releases")):
        for tag, release in document[key].items():
            read = {p for p, blob in side["repositories"][repo]["tags"][tag]["files"].items() if blob}
            assert set(release) - {"date", "commit", "sources"} <= set(release["sources"]), (tag, key)
            texts = [s for s in release["sources"].values() if not s.startswith("see ")]
            if key == "operator_releases":
                texts += [
                    release["mode"]["source"],
                    release["daemonset"]["source"],
                    *release["runtime_classes"]["sources"],
                ]
            for text in texts:
                assert _paths(text), (tag, text)
                assert set(_paths(text)) <= read, (tag, text, set(_paths(text)) - read)


# -- what the script does not recognise is an error -----------------------------------


def tampered_inputs(tmp_path: Path, repo: str, tag: str, path: str, old: bytes, new: bytes) -> Path:
    """Inputs as the vendored ones, but ``path`` at ``tag`` with ``old`` replaced by ``new``."""
    side, blobs = sidecar(), tarball()
    files = side["repositories"][repo]["tags"][tag]["files"]
    data = blobs[f"blobs/{files[path]}"]
    assert data.count(old) == 1, (path, old)
    data = data.replace(old, new)
    files[path] = upstream.blob_id(data)
    blobs[f"blobs/{files[path]}"] = data
    prefix = tmp_path / "kata-inputs"
    prefix.with_suffix(".json").write_text(json.dumps(side))
    with tarfile.open(prefix.with_suffix(".tar.xz"), "w:xz") as tar:
        for name, content in blobs.items():
            info = tarfile.TarInfo(name)
            info.size = len(content)
            tar.addfile(info, io.BytesIO(content))
    return prefix


@pytest.mark.parametrize(
    ("repo", "tag", "path", "old", "new", "message"),
    [
        (
            PLUGIN,
            "v0.0.3",
            extract.DEVICE_PLUGIN,
            b"regexp.MustCompile(`[^a-zA-Z0-9_-]+`)",
            b"regexp.MustCompile(`[^a-zA-Z0-9_]+`)",
            "sandbox-device-plugin v0.0.3: pkg/device_plugin/device_plugin.go: formatDeviceName deletes "
            "'[^a-zA-Z0-9_]+', not the known '[^a-zA-Z0-9_-]+'",
        ),
        (
            PLUGIN,
            "v0.0.2",
            extract.MAIN,
            b'\tdevice_plugin.PGPUAlias, ok = os.LookupEnv("P_GPU_ALIAS")\n',
            b"",
            "sandbox-device-plugin v0.0.2: cmd/main.go: P_GPU_ALIAS is not read into device_plugin.PGPUAlias in a "
            "way this script knows",
        ),
        (
            PLUGIN,
            "v0.0.1",
            extract.DEVICE_PLUGIN,
            b'deviceName = strings.Replace(deviceName, ".", "_", -1)',
            b'deviceName = strings.Replace(deviceName, ".", "", -1)',
            "sandbox-device-plugin v0.0.1: pkg/device_plugin/device_plugin.go: getDeviceName's name steps: "
            '\'deviceName = strings.Replace(deviceName, ".", "", -1)\' is not the known shape',
        ),
        (
            PLUGIN,
            "v0.0.5",
            extract.NVPCI,
            b"return d.Class == PCI3dControllerClass",
            b"return d.Class>>8 == PCI3dControllerClass>>8",
            "sandbox-device-plugin v0.0.5: vendor/github.com/NVIDIA/go-nvlib/pkg/nvpci/nvpci.go: Is3DController is "
            "not an exact comparison of Class with known constants",
        ),
        (
            PLUGIN,
            "v0.0.4",
            extract.GFD,
            b'runtimeClassName = "kata-qemu-nvidia-gpu-tdx"\n\t\t\t}\n',
            b'runtimeClassName = "kata-qemu-nvidia-gpu-tdx"\n\t\t\t} else {\n\t\t\t\truntimeClassName = "kata"\n\t\t\t}\n',
            "sandbox-device-plugin v0.0.4: pkg/device_plugin/gfd.go: createGFDPod's runtime class: '} else {' is "
            "not the known shape",
        ),
        (
            OPERATOR,
            "v26.7.0",
            extract.STATE_MANAGER,
            b'case "state-kata-manager":\n\t\t// always return false for kata manager as it stands deprecated\n',
            b'case "state-kata-manager":\n\t\treturn clusterPolicySpec.KataManager.IsEnabled()\n',
            'gpu-operator v26.7.0: controllers/state_manager.go: isStateEnabled("state-kata-manager") returns '
            "clusterPolicySpec.KataManager.IsEnabled(), not false as the deleting transformKataRuntimeClasses of "
            "controllers/object_controls.go goes with",
        ),
        (
            OPERATOR,
            "v26.3.2",
            extract.OBJECT_CONTROLS,
            b"\t\t\terr := n.client.Delete(ctx, &rc)\n\t\t\tif err != nil {\n\t\t\t\treturn gpuv1.NotReady, "
            b"fmt.Errorf(\"error deleting kata RuntimeClass '%s': %v\", rc.Name, err)\n\t\t\t}\n\t\t}\n\t\treturn",
            b"\t\t}\n\t\treturn",
            "gpu-operator v26.3.2: controllers/object_controls.go: transformKataRuntimeClasses is in a shape this "
            "script does not know",
        ),
    ],
)
def test_a_changed_upstream_function_is_one_line_naming_release_and_file(tmp_path, repo, tag, path, old, new, message):
    done = run("--from-inputs", str(tampered_inputs(tmp_path, repo, tag, path, old, new)), "--check")
    assert (done.returncode, done.stdout, done.stderr) == (2, "", f"kata_extract: error: {message}\n")


class Tampered:
    """A source whose file ``path`` at every commit has ``old`` replaced by ``new``."""

    def __init__(self, source: Any, path: str, old: bytes, new: bytes) -> None:
        self.source, self.path, self.old, self.new = source, path, old, new

    def __getattr__(self, name: str) -> Any:
        return getattr(self.source, name)

    def read(self, commit: str, path: str) -> bytes | None:
        data = self.source.read(commit, path)
        return data.replace(self.old, self.new) if data is not None and path == self.path else data


def test_the_facts_follow_the_code_not_the_script():
    """A default alias or a DaemonSet env the code changes is a changed fact."""
    plugin, operator = extract.load_inputs(INPUTS)
    document = extract.extract(
        Tampered(plugin, extract.MAIN, b'device_plugin.PGPUAlias = "pgpu"', b'device_plugin.PGPUAlias = "gpu"'),
        Tampered(operator, extract.KATA_DAEMONSET, b"- name: NODE_NAME", b"- name: P_GPU_ALIAS"),
    )
    for tag in ("v0.0.2", "v0.0.3", "v0.0.4", "v0.0.5"):
        assert document["plugin_releases"][tag]["aliases"]["P_GPU_ALIAS"] == {"read": "LookupEnv", "unset": "gpu"}
    assert all(r["daemonset"]["sets_p_gpu_alias"] for r in document["operator_releases"].values())


def test_the_gpu_pod_runtime_class_is_read_from_create_gfd_pod():
    plugin, operator = extract.load_inputs(INPUTS)
    document = extract.extract(
        Tampered(plugin, extract.GFD, b'string = "kata-qemu-nvidia-gpu"', b'string = "kata-clh-gpu"'), operator
    )
    releases = document["plugin_releases"]
    assert [r["gpu_pod_runtime_classes"] and r["gpu_pod_runtime_classes"]["default"] for r in releases.values()] == [
        None,
        *["kata-clh-gpu"] * 4,
    ]


def test_inputs_that_are_not_the_scripts_are_one_line(tmp_path):
    (tmp_path / "x.json").write_text("{}")
    done = run("--from-inputs", str(tmp_path / "x"))
    assert done.returncode == 2 and done.stdout == "" and done.stderr.count("\n") == 1
    assert done.stderr.startswith(f"kata_extract: error: {tmp_path / 'x'}: not inputs this script wrote")


# -- formatDeviceName as built by Go ---------------------------------------------------

_GO_MAIN = """package main

import (
\t"bufio"
\t"fmt"
\t"os"
\t"regexp"
\t"strings"
)

var _ = strings.ToUpper
var _ = regexp.MustCompile

%s

func main() {
\tscanner := bufio.NewScanner(os.Stdin)
\tfor scanner.Scan() {
\t\tfmt.Println(formatDeviceName(strings.ReplaceAll(scanner.Text(), "\\\\t", "\\t")))
\t}
}
"""


def _format_as_the_facts_say(name: str, deleted: str) -> str:
    """formatDeviceName as the facts describe it: upper-case, / and . to _, whitespace runs to _, then delete."""
    if not name:
        return ""
    name = name.upper().replace("/", "_").replace(".", "_")
    return re.sub(deleted, "", re.sub(r"[\t\n\f\r ]+", "_", name))


@NEEDS_GO
def test_format_device_name_built_from_each_release_does_what_the_facts_say(tmp_path):
    plugin, _ = extract.load_inputs(INPUTS)
    nvidia = re.search(r"^10de .*\n((?:\t.*\n|#.*\n)+)", DEBIAN_SID.read_text(encoding="utf-8"), re.M)
    assert nvidia is not None
    names = [line[6:].strip() for line in nvidia.group(1).splitlines() if re.match(r"\t[0-9a-f]{4}  ", line)]
    names = [n for n in names if n.isascii()] + ["", "UNKNOWN_DEVICE", "a/b.c  d\\te", "***", "GH100 [H100 SXM5 80GB]"]
    assert len(names) > 1000
    releases = shipped()["plugin_releases"]
    built: dict[str, list[str]] = {}
    for tag, commit, _date in plugin.tags():
        if releases[tag]["algorithm"] != "go-nvlib":
            continue
        device = (plugin.read(commit, extract.DEVICE_PLUGIN) or b"").decode()
        function = re.search(r"^func formatDeviceName\(.*?^\}$", device, re.M | re.S)
        assert function is not None, tag
        if function.group(0) not in built:
            source = tmp_path / f"{tag}.go"
            source.write_text(_GO_MAIN % function.group(0))
            answer = ask(build(source), stdin="\n".join(names) + "\n").decode()
            built[function.group(0)] = answer.split("\n")[:-1]
        expected = [_format_as_the_facts_say(n.replace("\\t", "\t"), releases[tag]["format_filter"]) for n in names]
        assert built[function.group(0)] == expected, tag
    assert len(built) == 1  # v0.0.2 .. v0.0.5 share one formatDeviceName
