"""The host doctor: why a node serves no GPU for the variant it is meant to
serve (Cozystack's and the GPU Operator's ``default`` passthrough, ``vgpu``
and ``container``), read from the node's own files under a root
(:mod:`.facts`), judged per variant with the way back (:mod:`.rules`); its
codes (:mod:`.codes`) are in :data:`pciname.host.diagnoses.CODES`.

This package's ``__init__`` imports nothing: :mod:`pciname.host.diagnoses`
imports :mod:`.codes` alone.
"""
