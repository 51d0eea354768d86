"""Where resource names are used: KubeVirt objects. Pure (plain data in,
plain data out):

* :mod:`~pciname.kubevirt.resources`: which kind of resource a name is (PCI,
  vGPU, container, not NVIDIA's);
* :mod:`~pciname.kubevirt.generate`: permittedHostDevices blocks, Cozystack
  values, VM and node-pool snippets; :mod:`~pciname.kubevirt.vgpu`: vGPU
  types for them;
* :mod:`~pciname.kubevirt.admission`: the ValidatingAdmissionPolicy;
* :mod:`~pciname.kubevirt.objects`: the KubeVirt CR and Nodes as plain dicts;
* :mod:`~pciname.kubevirt.audit`: audit, GPU options for tenant node pools,
  which plugin release the nodes run (``--profile auto``).
"""
