"""Capabilities as requests: each is a typed request that validates itself
(its profile and Cozystack release, which fields go together) and one
function that answers it. The CLI builds a request from its arguments, the
gRPC servicer from the protobuf message; both surfaces only translate, so
they answer alike by construction.

* :mod:`~pciname.capabilities.spelling`: how a surface names a request's
  fields in its one-line errors (``--replace-defaults`` / ``replace_defaults``);
* the one choice of a Cozystack release and its profile is
  :mod:`pciname.cozystack.choice` (lint and the generators use it too);
* :mod:`~pciname.capabilities.permitted`: ``permitted-host-devices``;
* :mod:`~pciname.capabilities.node_pool`: ``node-pool``;
* :mod:`~pciname.capabilities.names`: ``lookup``, ``reverse`` and ``diff``
  (the ``Resolve``/``ResolveBatch``, ``Reverse`` and ``Diff`` RPCs);
* :mod:`~pciname.capabilities.scan`: ``scan`` (a node's sysfs);
* :mod:`~pciname.capabilities.audit`: ``audit`` and ``gpu-options`` (a cluster's objects);
* :mod:`~pciname.capabilities.apply`: ``apply permitted-host-devices`` (with a cluster client);
* :mod:`~pciname.capabilities.vm_gpus`: ``vm-gpus`` (the CLI only);
* :mod:`~pciname.capabilities.vgpu_types`: ``vgpu-types``;
* :mod:`~pciname.capabilities.lint`: ``lint``;
* :mod:`~pciname.capabilities.admission`: ``admission-policy``.
"""
