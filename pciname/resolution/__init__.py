"""Resolution: a device id and a profile in, the resource name that release
advertises out. :mod:`~pciname.resolution.snapshots` finds each profile's
pci.ids file (packaged or installed, by sha256; :mod:`~pciname.resolution.download`
fetches them), :mod:`~pciname.resolution.catalog` holds what resolution needs
of one file, :mod:`~pciname.resolution.resolver` is the engine,
:mod:`~pciname.resolution.results` its typed results, and
:mod:`~pciname.resolution.answers` the packaged answers the fast path reads."""
