"""Cozystack: facts about each release (:mod:`~pciname.cozystack.releases`:
its GPU Operator and plugin release, node-group and KubernetesNodes schemas,
GPU wiring; written by ``python -m tools.cozystack_extract``) and what its
iaas bundle does with ``gpu.permittedHostDevices``
(:mod:`~pciname.cozystack.defaults`)."""
