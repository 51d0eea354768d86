"""go-nvlib's ``nvpci`` as the Kata sandbox device plugin and NVIDIA's DRA
driver vendor it: what :mod:`pciname.host.kata_scan` and
:mod:`pciname.host.dra_scan` share (:mod:`pciname.host.gonvlib.nvpci`)."""
