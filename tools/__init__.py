"""Maintainer tools: the extractors and generators that write what the
package ships (Cozystack release facts, the vGPU catalogue, the packaged
answers, the gRPC stubs, the lint code tables), run from a source checkout
as ``python -m tools.NAME``. They import :mod:`pciname`; nothing in
:mod:`pciname` imports them, and the wheel does not carry them.
"""
