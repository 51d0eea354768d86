"""The node side: what the device plugin finds in sysfs (:mod:`pciname.host.sysfs`)."""
