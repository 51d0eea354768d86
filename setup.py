"""Packaging glue that pyproject.toml cannot express on its own.

The embedded data lives in the top-level ``data/`` directory (the project's
layout) but is installed as the ``pciname.data`` package so that
``pip install .`` carries ``pci.ids`` and ``profiles.json`` with the code.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(include=["pciname", "pciname.*"]) + ["pciname.data"],
    package_dir={"pciname.data": "data"},
    package_data={
        "pciname": ["packaged/*"],
        "pciname.data": [
            "pci.ids",
            "profiles.json",
            "vgpu-types.json",
            "snapshots.tar.xz",
            "snapshots.sha256",
            "cozystack/releases.json",
            "cozystack/schemas.json",
            "kata/releases.json",
            "dra/releases.json",
            "kubevirt/releases.json",
            "hami/releases.json",
            "k8s-device-plugin/releases.json",
        ],
    },
)
