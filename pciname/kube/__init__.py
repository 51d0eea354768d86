"""Where resource names are used: KubeVirt and Cozystack configuration.

Pure (plain data in, plain data out):

* :mod:`pciname.kube.resources`: which kind of resource a name is (PCI,
  vGPU, container, not NVIDIA's), for the modules below;
* :mod:`pciname.kube.generate`: permittedHostDevices blocks, Cozystack values,
  VM and node-pool snippets;
* :mod:`pciname.kube.cozystack`: facts about each Cozystack release (its GPU
  Operator and plugin release, its node-group and KubernetesNodes schemas,
  required fields and defaults, its GPU wiring; where a cluster says which
  release it runs) and checks of node-group field values;
* :mod:`pciname.kube.cozystack_defaults`: what a release's iaas bundle does
  with ``gpu.permittedHostDevices`` (variants, default tables, clashes);
* :mod:`pciname.kube.lint`: checks the resource names in YAML manifests and
  values files, with line numbers;
* :mod:`pciname.kube.objects`: the KubeVirt CR and Nodes as plain dicts:
  what is permitted, what is advertised, who manages the CR, the apply object;
* :mod:`pciname.kube.audit`: audit, GPU options for tenant node pools, which
  plugin release the nodes run (``--profile auto``);
* :mod:`pciname.kube.shapes`: whether objects and API answers have the
  shapes the modules above read (and counts are Kubernetes quantities).

I/O:

* :mod:`pciname.kube.inputs`: the files (or stdin) to lint;
* :mod:`pciname.kube.kubeconfig`: the kubeconfig as pciname loads it
  (bounded reads of every file, credential plugins within a timeout);
* :mod:`pciname.kube.cluster`: a live cluster through the ``kubernetes``
  client: connect, read, server-side apply. The only module that imports
  ``kubernetes``;
* :mod:`tools.cozystack_extract`: the maintainer script that writes
  the Cozystack release facts from a ``cozystack/cozystack`` git repository.

Nothing here imports ``kubernetes`` or ``yaml`` at module level except
where the module is about them.
"""
