"""The Kata domain: NVIDIA's Kata sandbox device plugin (the GPU Operator in
``sandboxWorkloads.mode: kata``) as pods see it.

* :mod:`pciname.kata.runtime`: which runtime class a GPU pod runs with (the
  release facts' ``gpu_pod_runtime_classes``) and which pods are Kata pods;
  the Kata profile a Kata pod is checked under.
* :mod:`pciname.kata.pod`: a Pod (or Deployment) asking for GPUs under the
  name the Kata plugin advertises for them.

The names themselves are :mod:`pciname.naming.kata` (docs/naming.md,
section 8), resolved by :mod:`pciname.resolution.resolver`.
"""
