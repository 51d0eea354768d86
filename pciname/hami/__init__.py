"""HAMi (Project-HAMi/HAMi), the GPU-sharing scheduler and device plugin a
Cozystack tenant cluster may run. ``releases``: its per-release facts (resource
names, the device plugin's node selector, split count, defaults and the
HAMi-core commit with how its code finds the real dlsym, from
``data/hami/releases.json``, which :mod:`tools.hami_extract` writes from HAMi's
tags); ``libc``: a C library's facts from its own ELF file; ``isolation``:
whether HAMi-core's limits hold on that library; ``image``: an image read
offline, its layers in memory; ``check``: the image check (``pciname
image-check``); ``pods``: what HAMi makes of a container's GPU resources
(``lint --hami``); ``audit``: HAMi in a cluster from its Nodes and Pods."""
