"""The version of pciname, defined here only (pyproject.toml reads it)."""

__version__ = "0.3.0"
