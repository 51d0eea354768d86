"""Documents the kube tests share: KubeVirt / Cozystack YAML to lint (with
the names of the default profile) and a cluster's nodes and permitted
devices (for the fake API server of tests/fake_kube.py)."""

from __future__ import annotations

import textwrap

from tests.conftest import TEST_DATA
from tests.fake_kube import node


def y(text: str) -> str:
    return textwrap.dedent(text).lstrip("\n")


#: A KubeVirt CR with one right name (10DE:2236) and one wrong one (10DE:20B5).
ONE_WRONG_NAME_CR = """apiVersion: kubevirt.io/v1
kind: KubeVirt
metadata: {name: kubevirt, namespace: kubevirt}
spec:
  configuration:
    permittedHostDevices:
      pciHostDevices:
      - {pciVendorSelector: "10DE:2236", resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}
      - {pciVendorSelector: "10DE:20B5", resourceName: nvidia.com/WRONG_NAME, externalResourceProvider: true}
"""


#: kubevirt/kubevirt@79d34c1762169e5b0370ec491cef5ca12e6b504c (v1.9.0) examples/vmi-gpu.yaml, its kind, name and devices.
VMI_GPU = y(
    """
    apiVersion: kubevirt.io/v1
    kind: VirtualMachineInstance
    metadata:
      name: vmi-gpu
    spec:
      domain:
        devices:
          gpus:
          - deviceName: nvidia.com/GP102GL_Tesla_P40
            name: gpu1
    """
)

#: The passthrough KubeVirt CR of NVIDIA's "GPU Operator with KubeVirt" page
#: (tests/data/lint-corpus/nvidia-gpu-operator-kubevirt.yaml, lines 21-35), as written:
#: it lists the GPU gate but not HostDevices.
NVIDIA_CR = y(
    """
    apiVersion: kubevirt.io/v1
    kind: KubeVirt
    metadata:
      name: kubevirt
      namespace: kubevirt
    spec:
      configuration:
        developerConfiguration:
          featureGates:
          - GPU
          - DisableMDEVConfiguration
        permittedHostDevices:
          pciHostDevices:
          - externalResourceProvider: true
            pciVendorSelector: 10DE:1B38
            resourceName: nvidia.com/GP102GL_TESLA_P40
    """
)

CLEAN = y(
    """
    apiVersion: kubevirt.io/v1
    kind: KubeVirt
    metadata:
      name: kubevirt
      namespace: kubevirt
    spec:
      configuration:
        developerConfiguration:
          featureGates: [GPU, HostDevices]
        permittedHostDevices:
          pciHostDevices:
          - pciVendorSelector: "10DE:2236"
            resourceName: nvidia.com/GA102GL_A10
            externalResourceProvider: true
          - pciVendorSelector: 10de:27b8
            resourceName: "nvidia.com/AD104GL_L4"
            externalResourceProvider: true
          - pciVendorSelector: "8086:0D58"
            resourceName: intel.com/qat
          mediatedDevices:
          - mdevNameSelector: GRID T4-1Q
            resourceName: nvidia.com/GRID_T4-1Q
            externalResourceProvider: true
    ---
    apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata:
      name: ubuntu-a10
      namespace: tenant-root
    spec:
      runStrategy: Always
      template:
        spec:
          domain:
            devices:
              gpus:
              - name: gpu1
                deviceName: nvidia.com/GA102GL_A10
              - name: vgpu1
                deviceName: nvidia.com/GRID_T4-1Q
              hostDevices:
              - name: qat
                deviceName: intel.com/qat
            resources:
              requests:
                memory: 16Gi
    """
)


KUBEVIRT_CR = y(
    """
    # KubeVirt CR as an operator left it
    apiVersion: kubevirt.io/v1
    kind: KubeVirt
    metadata:
      name: kubevirt
      namespace: kubevirt
    spec:
      configuration:
        permittedHostDevices:
          pciHostDevices:
          - pciVendorSelector: "10DE:1EB8"
            resourceName: "nvidia.com/TU104GL_Tesla_T4"
            externalResourceProvider: true
          - pciVendorSelector: "10DE:2236"
            resourceName: nvidia.com/GA102GL_A10
          - pciVendorSelector: "10de:2236"
            resourceName: nvidia.com/GA102GL_A10
            externalResourceProvider: "true"
          - pciDeviceSelector: "10DE:27B8"
            resourceName: nvidia.com/AD104GL_L4
            externalResourceProvider: true
          - pciVendorSelector: "10DE:ZZZZ"
            resourceName: nvidia.com/SOMETHING
            externalResourceProvider: true
          - pciVendorSelector: "15B3:101E"
            resourceName: nvidia.com/CX7
            externalResourceProvider: true
          mediatedDevices:
          - mdevNameSelector: NVIDIA L40S-24Q
            resourceName: nvidia.com/L40S-24Q
            externalResourceProvider: true
          - mdevNameSelector: "GRID T4-1Q "
            resourceName: "nvidia.com/GRID_T4-1Q_"
            externalResourceProvider: true
    """
)


HYPERCONVERGED = y(
    """
    apiVersion: hco.kubevirt.io/v1beta1
    kind: HyperConverged
    metadata:
      name: kubevirt-hyperconverged
      namespace: openshift-cnv
    spec:
      permittedHostDevices:
        pciHostDevices:
        - pciDeviceSelector: "10DE:1EB8"
          resourceName: nvidia.com/TU104GL_TESLA_T4
          externalResourceProvider: true
        - pciVendorSelector: "10DE:2236"
          resourceName: nvidia.com/GA102GL_A10
          externalResourceProvider: true
        - pciDeviceSelector: "10DE:1DB6"
          resourceName: nvidia.com/GV100GL_Tesla_V100
          disabled: true
        mediatedDevices:
        - mdevNameSelector: NVIDIA A10-24Q
          resourceName: nvidia.com/NVIDIA_A10-24Q
          externalResourceProvider: true
    """
)


COZYSTACK_VALUES = y(
    """
    # Cozystack platform values
    bundle-name: paas-full
    ipv4-pod-cidr: 10.244.0.0/16
    gpu:
      replaceDefaults: false
      permittedHostDevices:
        pciHostDevices:
        - pciVendorSelector: "10DE:2335"
          resourceName: nvidia.com/GH100_H200_SXM_141GB
          externalResourceProvider: true
        - pciVendorSelector: "10DE:26B9"
          resourceName: nvidia.com/AD102GL_L40S
          externalResourceProvider: true
        - pciVendorSelector: "10DE:20B5"
          resourceName: nvidia.com/GA100_A100_PCIe_80GB
          externalResourceProvider: true
        mediatedDevices:
        - mdevNameSelector: NVIDIA L40S-24Q
          resourceName: nvidia.com/NVIDIA_L40S-24Q
          externalResourceProvider: true
    """
)


def vm(*device_names: str, name: str = "vm") -> str:
    """A KubeVirt VirtualMachine asking for one GPU per ``device_names``
    (``gpus[]`` entries named g1, g2, ...): its first GPU on line 10."""
    gpus = "".join(f"          - {{name: g{i}, deviceName: {d}}}\n" for i, d in enumerate(device_names, 1))
    return (
        f"apiVersion: kubevirt.io/v1\nkind: VirtualMachine\nmetadata: {{name: {name}}}\nspec:\n  template:\n"
        f"    spec:\n      domain:\n        devices:\n          gpus:\n{gpus}"
    )


VMS = y(
    """
    apiVersion: kubevirt.io/v1
    kind: VirtualMachine
    metadata: {name: vm-a, namespace: tenant-dev}
    spec:
      template:
        spec:
          domain:
            devices:
              gpus:
              - name: gpu1
                deviceName: nvidia.com/GA102GL_A1O
              - name: gpu2
                deviceName: nvidia.com/TU104GL_Tesla_T4
              hostDevices:
              - name: hd1
                deviceName: nvidia.com/GA104_RTX_A4500_EMBEDDED_GPU_
              - name: nic
                deviceName: devices.kubevirt.io/sriov
    ---
    apiVersion: kubevirt.io/v1
    kind: VirtualMachineInstance
    metadata: {name: vmi-b}
    spec:
      domain:
        devices:
          gpus:
          - name: gpu1
            deviceName: nvidia.com/AD104GL_L4
          - name: gpu2
            deviceName: nvidia.com/NOTHING_LIKE_IT_AT_ALL_QQQQ
    """
)


TENANT = y(
    """
    # Cozystack tenant Kubernetes values
    host: ""
    controlPlane:
      replicas: 2
    nodeGroups:
      md0:
        minReplicas: 0
        maxReplicas: 10
        instanceType: u1.medium
        roles: [ingress-nginx]
        resources: {}
      gpu:
        minReplicas: 1
        maxReplicas: 2
        instanceType: u1.2xlarge
        gpus:
        - name: nvidia.com/GA102GL_A10
        - name: nvidia.com/AD102GL_L40
        - name: nvidia.com/2335
    ---
    apiVersion: apps.cozystack.io/v1alpha1
    kind: Kubernetes
    metadata: {name: dev, namespace: tenant-team}
    spec:
      nodeGroups:
        gpu-pool:
          gpus:
          - name: nvidia.com/GH100H100_SXM5_80GB
    """
)


SRIOV_DOC = (TEST_DATA / "cozystack-gpu-vgpu-sriov.yaml").read_text()


A10 = {"pciVendorSelector": "10DE:2236", "resourceName": "nvidia.com/GA102GL_A10", "externalResourceProvider": True}
T4_OLD = {
    "pciVendorSelector": "10DE:1EB8",
    "resourceName": "nvidia.com/TU104GL_Tesla_T4",
    "externalResourceProvider": True,
}
GRID = {"mdevNameSelector": "GRID T4-1Q", "resourceName": "nvidia.com/GRID_T4-1Q", "externalResourceProvider": True}


def cluster_nodes():
    return [
        node("gpu-a10-1", {"nvidia.com/GA102GL_A10": "2"}),
        node("gpu-a10-2", {"nvidia.com/GA102GL_A10": "4"}, allocatable={"nvidia.com/GA102GL_A10": "3"}),
        node(
            "gpu-t4-1",
            {"nvidia.com/TU104GL_TESLA_T4": "1", "nvidia.com/GRID_T4-1Q": "16"},
            labels={"nvidia.com/gpu.workload.config": "vm-vgpu"},
        ),
        node(
            "cpu-1",
            {"nvidia.com/gpu": "8", "nvidia.com/mig-1g.10gb": "7"},
            labels={"nvidia.com/gpu.workload.config": "container"},
        ),
        node("old-1", {"nvidia.com/AD104GL_L4": "0"}),
    ]


#: The node labels of NVIDIA/k8s-device-plugin@1b826acc (v0.20.0)
#: docs/gpu-feature-discovery/README.md lines 136-147 (an A100 node), as written.
GFD_NODE_LABELS = {
    "nvidia.com/cuda.driver.major": "455",
    "nvidia.com/cuda.driver.minor": "06",
    "nvidia.com/cuda.driver.rev": "",
    "nvidia.com/cuda.runtime.major": "11",
    "nvidia.com/cuda.runtime.minor": "1",
    "nvidia.com/gpu.compute.major": "8",
    "nvidia.com/gpu.compute.minor": "0",
    "nvidia.com/gfd.timestamp": "1594644571",
    "nvidia.com/gpu.count": "1",
    "nvidia.com/gpu.family": "ampere",
    "nvidia.com/gpu.machine": "NVIDIA DGX-2H",
    "nvidia.com/gpu.memory": "39538",
    "nvidia.com/gpu.product": "A100-SXM4-40GB",
}


def pod(limits: dict[str, int] | None = None, node_selector: dict[str, str] | None = None, name: str = "pod") -> str:
    """A Pod with one container asking for ``limits``, placed by ``node_selector``."""
    import json

    spec = {"containers": [{"name": "c", "image": "cuda", "resources": {"limits": limits or {}}}]}
    if node_selector is not None:
        spec["nodeSelector"] = node_selector  # type: ignore[assignment]
    return json.dumps({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}, indent=1) + "\n"
