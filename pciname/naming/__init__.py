"""The naming rules: the plugin's algorithms, Go's text semantics, the
release profiles and the checks a name must pass (docs/naming.md)."""
