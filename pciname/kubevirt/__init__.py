"""Where resource names are used: KubeVirt objects. Pure (plain data in,
plain data out):

* :mod:`~pciname.kubevirt.resources`: which kind of resource a name is (PCI,
  vGPU, container, not NVIDIA's);
* :mod:`~pciname.kubevirt.generate`: permittedHostDevices blocks, Cozystack
  values, VM snippets; :mod:`~pciname.kubevirt.vgpu`: vGPU
  types for them;
* :mod:`~pciname.kubevirt.objects`: the KubeVirt CR and Nodes as plain dicts;
  :mod:`~pciname.kubevirt.shapes`: whether they (and API answers) have the
  shapes pciname reads;
* :mod:`~pciname.kubevirt.selectors`: KubeVirt's selector matching per release;
  :mod:`~pciname.kubevirt.gates`: the feature gates a VM's GPUs need per release.

The admission policies and the audit, built on the linter, are
:mod:`pciname.policy`; Cozystack's node pools are :mod:`pciname.cozystack`.
"""
