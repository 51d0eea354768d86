"""Lint's checkers of one kind of object each, beside the KubeVirt CR checks
of :mod:`pciname.lint.linter`: pods with a Kata runtime class
(:mod:`.kata`) and DRA claims with the VMs that use them (:mod:`.dra`)."""
