"""HAMi (Project-HAMi/HAMi), the GPU-sharing scheduler and device plugin a
Cozystack tenant cluster may run: its per-release facts (``releases``: resource
names, the device plugin's node selector, split count, defaults and the
HAMi-core commit, read from ``data/hami/releases.json``, which
:mod:`tools.hami_extract` writes from HAMi's tags)."""
