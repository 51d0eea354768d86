"""Kubernetes I/O, all of it: a live cluster through the ``kubernetes``
client (:mod:`~pciname.cluster.kube`, the only module that imports it:
connect, read, server-side apply), the kubeconfig as pciname loads it
(:mod:`~pciname.cluster.kubeconfig`), and whether objects and API answers
have the shapes the rooms above read (:mod:`~pciname.cluster.shapes`)."""
