"""The node side: what the device plugin finds in sysfs.

:mod:`pciname.host.sysfs` scans a node (:func:`~pciname.host.sysfs.scan`);
:mod:`pciname.host.rootfs` reads its tree as if its directory were ``/``;
:mod:`pciname.host.diagnoses` holds the scan's diagnosis codes and what they mean.
"""
