"""Where resource names are used: KubeVirt and Cozystack configuration.

* :mod:`pciname.kube.generate`: permittedHostDevices blocks, Cozystack values,
  VM and node-pool snippets (pure functions, plain data).
* :mod:`pciname.kube.lint`: checks the resource names in YAML manifests and
  values files, with line numbers.
* :mod:`pciname.kube.cluster`: a live cluster through the ``kubernetes``
  client: audit, GPU options for tenant node pools, server-side apply.

Nothing here imports ``kubernetes`` or ``yaml`` at module level except
where the module is about them.
"""
