"""GPUs for KubeVirt VMs through Kubernetes DRA: what NVIDIA's DRA driver
publishes for a vfio-bound GPU, and the ResourceClaimTemplate, VM fragment and
DeviceClass check that match it, exact for a driver, KubeVirt and
``resource.k8s.io`` release (the facts: ``data/dra/releases.json``, written
by ``tools/dra_extract.py`` from the repositories' tags).

* :mod:`pciname.dra.facts`: the release facts and which combinations work;
* :mod:`pciname.dra.claims`: the predicted devices and the generated objects.
"""
