"""What a cluster is held to, built on the linter (so above it):

* :mod:`~pciname.policy.admission`: the ValidatingAdmissionPolicy for the
  KubeVirt CR; :mod:`~pciname.policy.admission_dra`: the one for VMs' DRA
  claims;
* :mod:`~pciname.policy.audit`: audit of a cluster's KubeVirt CR and Nodes,
  GPU options for tenant node pools, which plugin release the nodes run
  (``--profile auto``).
"""
