"""Kubernetes I/O, all of it: a live cluster through the ``kubernetes``
client (:mod:`~pciname.cluster.kube`, the only module that imports it:
connect, read, server-side apply), the kubeconfig as pciname loads it
(:mod:`~pciname.cluster.kubeconfig`). Whether objects and API answers have
the shapes pciname reads is :mod:`~pciname.kubevirt.shapes`, in the room below."""
