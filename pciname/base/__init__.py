"""What every room uses: bounded file reads
and atomic writes (:mod:`~pciname.base.files`), where the package's data and
the cache are (:mod:`~pciname.base.paths`), and text out: JSON, YAML and
tables (:mod:`~pciname.base.render`) through the one YAML Dumper
(:mod:`~pciname.base.yaml_out`), and the one grammar of a device request with
the most GPUs a node may ask for (:mod:`~pciname.base.requests`)."""
