"""Capabilities as requests: each is a typed request that validates itself
(its profile and Cozystack release, which fields go together, its
defaults, expansions and limits) and one function that answers it. The CLI
builds a request from its arguments, the gRPC servicer from the protobuf
message; both ask the registry and only translate, so they answer alike by
construction.

* :mod:`~pciname.capabilities.registry`: the one registry, an entry per
  question (command, RPCs, request type, answer, output formats);
* :mod:`~pciname.requests.spelling`: :class:`~pciname.requests.spelling.RequestError`,
  a request's rule in every surface's words (``--replace-defaults`` /
  ``replace_defaults``); no request carries its surface;
* :mod:`~pciname.requests.limits`: the limits declared on the requests' fields;
* :mod:`~pciname.capabilities.choices`: the choices and defaults the parser offers;
* the one choice of a Cozystack release and its profile is
  :mod:`pciname.cozystack.choice` (lint and the generators use it too);
* :mod:`~pciname.capabilities.permitted`: ``permitted-host-devices``;
* :mod:`~pciname.capabilities.node_pool`: ``node-pool``;
* :mod:`~pciname.capabilities.names`: ``lookup``, ``reverse`` and ``diff``
  (the ``Resolve``/``ResolveBatch``, ``Reverse`` and ``Diff`` RPCs);
* :mod:`~pciname.capabilities.catalog`: ``profiles`` and ``snapshots``;
* :mod:`~pciname.capabilities.pciids`: ``check`` and ``describe``;
* :mod:`~pciname.capabilities.scan`: ``scan`` (a node's sysfs);
* :mod:`~pciname.capabilities.audit`: ``audit`` and ``gpu-options`` (a cluster's objects);
* :mod:`~pciname.capabilities.apply`: ``apply permitted-host-devices`` (with a cluster client);
* :mod:`~pciname.capabilities.vm_gpus`: ``vm-gpus``; :mod:`~pciname.capabilities.dra_claims`: ``vm-gpus --dra``;
* :mod:`~pciname.capabilities.mdev_name`: ``mdev-name``;
* :mod:`~pciname.capabilities.kata_pod`: ``kata-pod``;
* :mod:`~pciname.capabilities.vgpu_types`: ``vgpu-types``;
* :mod:`~pciname.capabilities.lint`: ``lint``;
* :mod:`~pciname.capabilities.admission`: ``admission-policy``; :mod:`~pciname.capabilities.image_check`: ``image-check``.
"""
