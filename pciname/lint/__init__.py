"""Lint: the GPU resource names in KubeVirt and Cozystack YAML, with line
numbers. :mod:`~pciname.lint.linter` takes the inputs and runs the rules,
:mod:`~pciname.lint.rules` is their registry (the rules themselves are in
:mod:`~pciname.lint.kinds`, one module per kind of object),
:mod:`~pciname.lint.compose` reads YAML as its consumers do,
:mod:`~pciname.lint.document` holds the findings and the places rules
check, :mod:`~pciname.lint.codes` is the one registry of finding codes,
:mod:`~pciname.lint.hints` the budgeted close-name hints (the admission
policy's too), :mod:`~pciname.lint.inputs` reads the files (or stdin)."""
