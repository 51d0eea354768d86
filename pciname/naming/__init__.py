"""The naming rules: the plugin's algorithms, Go's text semantics, the
release profiles and the checks a name must pass (docs/naming.md)."""

#: The profile a lookup uses when none is named. Defined here only (here, so
#: that the fast path of :mod:`pciname.resolution.answers` imports it for nothing).
LATEST = DEFAULT_PROFILE = "latest"
