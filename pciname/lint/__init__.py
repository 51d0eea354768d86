"""Lint: the GPU resource names in KubeVirt and Cozystack YAML, with line
numbers. :mod:`~pciname.lint.linter` composes and checks,
:mod:`~pciname.lint.codes` is the one registry of finding codes,
:mod:`~pciname.lint.hints` the budgeted close-name hints (the admission
policy's too), :mod:`~pciname.lint.inputs` reads the files (or stdin)."""
