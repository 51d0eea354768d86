"""A tiny Kubernetes API server for tests: serves Node and KubeVirt objects
over plain HTTP on 127.0.0.1 (an ephemeral port, in a thread), records
every request, and answers server-side apply PATCHes of the KubeVirt CR the
way the API server does for the fields it is sent (or with a scripted
status, e.g. 409). The real ``kubernetes`` client talks to it through a
kubeconfig file that points at it.
"""

from __future__ import annotations

import copy
import json
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

TOKEN = "test-token-0123456789"


@dataclass
class Request:
    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]  # lower-case names
    body: bytes

    def json(self):
        return json.loads(self.body)


def node(name: str, resources: dict[str, str], *, allocatable: dict[str, str] | None = None, labels=None) -> dict:
    """A Node as the API server returns it, with GPU resources in capacity
    and allocatable next to the usual ones."""
    base = {
        "cpu": "64",
        "memory": "527946884Ki",
        "pods": "110",
        "ephemeral-storage": "936513244Ki",
        "devices.kubevirt.io/kvm": "1k",
        "devices.kubevirt.io/tun": "1k",
        "devices.kubevirt.io/vhost-net": "1k",
    }
    capacity = dict(base, **resources)
    alloc = dict(base, cpu="63500m", **(allocatable if allocatable is not None else resources))
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": f"uid-{name}",
            "resourceVersion": "81234",
            "creationTimestamp": "2026-01-12T09:14:03Z",
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "nvidia.com/gpu.workload.config": "vm-passthrough",
                **(labels or {}),
            },
        },
        "spec": {"podCIDR": "10.244.1.0/24"},
        "status": {
            "capacity": capacity,
            "allocatable": alloc,
            "conditions": [{"type": "Ready", "status": "True", "reason": "KubeletReady"}],
            "nodeInfo": {"kubeletVersion": "v1.33.4", "containerRuntimeVersion": "containerd://2.0.5"},
        },
    }


def pod(name: str, node_name: str, labels=(), image="busybox:1", limits=None, namespace="tenant-a") -> dict:
    """A Pod of one container as the API server returns it, bound to ``node_name``."""
    container = {"name": "c", "image": image, "resources": {"limits": dict(limits or {})}}
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels)},
        "spec": {"nodeName": node_name, "containers": [container]},
        "status": {"phase": "Running"},
    }


def kubevirt(
    permitted: dict | None,
    *,
    namespace="kubevirt",
    name="kubevirt",
    labels=None,
    annotations=None,
    managed_fields=None,
    owner_references=None,
) -> dict:
    """A KubeVirt CR as the API server returns it."""
    meta = {
        "name": name,
        "namespace": namespace,
        "uid": "5f2b7f0e-3f39-4c3c-9d7a-0c7f54c1b1aa",
        "resourceVersion": "99120",
        "generation": 4,
        "creationTimestamp": "2026-01-12T09:20:11Z",
        "finalizers": ["foregroundDeleteKubeVirt"],
    }
    if labels:
        meta["labels"] = labels
    if annotations:
        meta["annotations"] = annotations
    if managed_fields:
        meta["managedFields"] = managed_fields
    if owner_references:
        meta["ownerReferences"] = owner_references
    configuration = {"developerConfiguration": {"featureGates": ["GPU", "HostDevices", "LiveMigration"]}}
    if permitted is not None:
        configuration["permittedHostDevices"] = permitted
    return {
        "apiVersion": "kubevirt.io/v1",
        "kind": "KubeVirt",
        "metadata": meta,
        "spec": {
            "certificateRotateStrategy": {},
            "configuration": configuration,
            "imagePullPolicy": "IfNotPresent",
            "workloadUpdateStrategy": {"workloadUpdateMethods": ["LiveMigrate"]},
        },
        "status": {"phase": "Deployed", "observedKubeVirtVersion": "v1.6.2"},
    }


@dataclass
class FakeKube:
    nodes: list[dict] = field(default_factory=list)
    kubevirts: list[dict] = field(default_factory=list)
    patch_status: int | None = None  # answer PATCHes with this status instead
    patch_status_body: dict | None = None
    requests: list[Request] = field(default_factory=list)
    kubevirt_crd: bool = True
    #: Deployments by (namespace, name), e.g. Cozystack's operator (see cozystack_operator()).
    deployments: dict = field(default_factory=dict)
    # A misbehaving API server: called with the handler and the request
    # before anything else; returns True when it has answered (or not) itself.
    misbehave: object = None
    #: (list kind, objects) by (group, version, plural), listed cluster-wide
    #: (all namespaces) and paged as Nodes are: ResourceSlices, DeviceClasses,
    #: ResourceClaimTemplates, ResourceClaims, VirtualMachines (dra_objects()).
    listed: dict = field(default_factory=dict)
    #: core/v1 Events by (namespace, name): created (POST, 409 when the name is taken),
    #: read (GET) and merge-patched (PATCH, application/merge-patch+json) as the API server does.
    events: dict = field(default_factory=dict)
    #: Pods, listed cluster-wide and paged as Nodes are (the field selector is not applied).
    pods: list[dict] = field(default_factory=list)

    def start(self) -> FakeKube:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):  # quiet
                pass

            def _serve(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else b""
                parts = urlsplit(self.path)
                headers = {k.lower(): v for k, v in self.headers.items()}
                request = Request(self.command, parts.path, parse_qs(parts.query), headers, body)
                fake.requests.append(request)
                if fake.misbehave is not None and fake.misbehave(self, request):
                    return
                if self.headers.get("Authorization") != f"Bearer {TOKEN}":
                    return self._send(401, _status(401, "Unauthorized", "Unauthorized"))
                events = request.path.startswith("/api/v1/namespaces/") and "/events" in request.path
                status, payload = fake._event(request) if events else fake.answer(request)
                self._send(status, payload)

            do_GET = do_PATCH = do_POST = do_PUT = do_DELETE = _serve

            def _send(self, status: int, payload: dict):
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # A client that hangs up (as one refusing a huge answer does) is no error to print.
        self.server.handle_error = lambda request, client_address: None
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        host, port = self.server.server_address[:2]
        return f"http://{host}:{port}"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, request: Request) -> tuple[int, dict]:
        path = request.path
        core = {"/api/v1/nodes": ("NodeList", self.nodes), "/api/v1/pods": ("PodList", self.pods)}
        if request.method == "GET" and path in core:
            # Pages as the API server does: limit, and a continue token (the offset here).
            return 200, {"apiVersion": "v1", **_page(request, core[path][1], core[path][0])}
        found = self.listed.get(tuple(path.split("/")[2:])) if path.startswith("/apis/") else None
        if request.method == "GET" and found is not None:
            return 200, _page(request, found[1], found[0])
        if request.method == "GET" and path == "/apis/kubevirt.io/v1/kubevirts":
            if not self.kubevirt_crd:
                return 404, _status(404, "NotFound", "the server could not find the requested resource")
            return 200, {
                "apiVersion": "kubevirt.io/v1",
                "kind": "KubeVirtList",
                "metadata": {"resourceVersion": "99121"},
                "items": self.kubevirts,
            }
        deployments = "/apis/apps/v1/namespaces/"
        if request.method == "GET" and path.startswith(deployments) and "/deployments/" in path:
            namespace, _, name = path[len(deployments) :].partition("/deployments/")
            found = self.deployments.get((namespace, name))
            if found is None:
                return 404, _status(404, "NotFound", f'deployments.apps "{name}" not found')
            return 200, found
        prefix = "/apis/kubevirt.io/v1/namespaces/"
        if request.method == "PATCH" and path.startswith(prefix):
            namespace, _, rest = path[len(prefix) :].partition("/kubevirts/")
            if self.patch_status is not None:
                return self.patch_status, self.patch_status_body or _status(self.patch_status, "Conflict", "conflict")
            for obj in self.kubevirts:
                if obj["metadata"]["namespace"] == namespace and obj["metadata"]["name"] == rest:
                    applied = request.json()
                    updated = copy.deepcopy(obj)
                    configuration = updated["spec"].setdefault("configuration", {})
                    configuration["permittedHostDevices"] = applied["spec"]["configuration"]["permittedHostDevices"]
                    updated["metadata"]["generation"] += 1
                    if "dryRun" not in request.query:
                        obj.clear()
                        obj.update(updated)
                    return 200, updated
            return 404, _status(404, "NotFound", f'kubevirts.kubevirt.io "{rest}" not found')
        return 404, _status(404, "NotFound", "the server could not find the requested resource")

    def _event(self, request: Request) -> tuple[int, dict]:
        namespace, _, name = request.path[len("/api/v1/namespaces/") :].partition("/events")
        name = name.strip("/")
        if request.method == "POST" and not name:
            event = request.json()
            key = (namespace, event["metadata"]["name"])
            if key in self.events:
                return 409, _status(409, "AlreadyExists", f'events "{key[1]}" already exists')
            self.events[key] = event
            return 201, event
        if request.method == "GET" and not name:  # a list: fieldSelector involvedObject.kind=KIND only
            wanted = dict(p.split("=", 1) for p in request.query.get("fieldSelector", [""])[0].split(",") if p)
            assert set(wanted) <= {"involvedObject.kind"}, wanted
            kind = wanted.get("involvedObject.kind")
            items = [
                e
                for (ns, _), e in self.events.items()
                if ns == namespace and kind in (None, e["involvedObject"]["kind"])
            ]
            return 200, {"apiVersion": "v1", **_page(request, items, "EventList")}
        found = self.events.get((namespace, name))
        if found is None:
            return 404, _status(404, "NotFound", f'events "{name}" not found')
        if request.method == "PATCH":
            assert request.headers["content-type"] == "application/merge-patch+json"
            found.update(request.json())  # the doctor's patches set top-level fields only
        return 200, found

    def kubeconfig(self, directory: Path, *, extra_context_server: str | None = None) -> Path:
        """A kubeconfig whose current context is this server (``fake``); with
        ``extra_context_server``, a second context ``other`` pointing there."""
        clusters = [{"name": "fake", "cluster": {"server": self.url}}]
        contexts = [{"name": "fake", "context": {"cluster": "fake", "user": "tester"}}]
        current = "fake"
        if extra_context_server:
            clusters.append({"name": "other", "cluster": {"server": extra_context_server}})
            contexts.append({"name": "other", "context": {"cluster": "other", "user": "tester"}})
            current = "other"
        config = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": clusters,
            "contexts": contexts,
            "current-context": current,
            "users": [{"name": "tester", "user": {"token": TOKEN}}],
        }
        path = Path(directory) / "kubeconfig"
        path.write_text(json.dumps(config))
        return path


def _page(request: Request, items: list, kind: str) -> dict:
    """A List page: ``limit`` and a ``continue`` token (the offset here)."""
    limit = int(request.query.get("limit", ["0"])[0]) or len(items)
    start = int(request.query.get("continue", ["0"])[0])
    meta = {"resourceVersion": "81300"}
    if start + limit < len(items):
        meta["continue"] = str(start + limit)
    return {"kind": kind, "metadata": meta, "items": items[start : start + limit]}


def _status(code: int, reason: str, message: str, causes=None) -> dict:
    status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if causes:
        status["details"] = {"causes": causes}
    return status


def conflict_status() -> dict:
    """What the API server answers an apply that conflicts with another manager."""
    return _status(
        409,
        "Conflict",
        'Apply failed with 1 conflict: conflict with "kubectl-client-side-apply" using kubevirt.io/v1: '
        ".spec.configuration.permittedHostDevices",
        causes=[
            {
                "type": "FieldManagerConflict",
                "message": 'conflict with "kubectl-client-side-apply" using kubevirt.io/v1',
                "field": ".spec.configuration.permittedHostDevices",
            }
        ],
    )


def cozystack_operator(image: str, env: list | None = None) -> dict:
    """Cozystack's operator Deployment as its installer chart renders it
    (packages/core/installer/templates/cozystack-operator.yaml): the image
    from cozystackOperator.image, COZYSTACK_VERSION from platformVersion."""
    container = {"name": "cozystack-operator", "image": image, "args": ["--leader-elect=true"]}
    if env is not None:
        container["env"] = env
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "cozystack-operator", "namespace": "cozy-system"},
        "spec": {
            "replicas": 1,
            "selector": {"matchLabels": {"app": "cozystack-operator"}},
            "template": {
                "metadata": {"labels": {"app": "cozystack-operator"}},
                "spec": {"serviceAccountName": "cozystack", "containers": [container]},
            },
        },
    }


def dra_objects(api: str, slices: list, classes: list, templates: list, claims: list, vms: list) -> dict:
    """FakeKube.listed for the DRA kinds of ``resource.k8s.io/<api>`` and KubeVirt's VMs."""
    kinds = {
        "resourceslices": ("ResourceSliceList", slices),
        "deviceclasses": ("DeviceClassList", classes),
        "resourceclaimtemplates": ("ResourceClaimTemplateList", templates),
        "resourceclaims": ("ResourceClaimList", claims),
    }
    listed = {("resource.k8s.io", api, plural): found for plural, found in kinds.items()}
    listed[("kubevirt.io", "v1", "virtualmachines")] = ("VirtualMachineList", vms)
    return listed
