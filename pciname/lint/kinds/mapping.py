"""Any mapping of any document, for lint (rule ``duplicate-keys``): a key
written twice, which PyYAML and Helm read as its last value and kubectl's
strict decoding refuses (the composer records them,
:mod:`pciname.lint.compose`)."""

from __future__ import annotations

from yaml.nodes import MappingNode, ScalarNode

from pciname.lint.codes import DUPLICATE_KEY, RuleName
from pciname.lint.document import RunState
from pciname.lint.nodes import walk
from pciname.lint.rules import Context, rule


@rule(RuleName.DUPLICATE_KEYS)
def duplicate_keys(ctx: Context, state: RunState) -> None:
    """A key written twice in one mapping: PyYAML and Helm use the last
    value (the one the other rules check), kubectl's strict decoding refuses it."""
    if not ctx.duplicates:
        return  # nothing written twice: no walk
    for doc in ctx.docs:
        for node, path in walk(doc.root):
            if isinstance(node, MappingNode):
                for kept, earlier in ctx.duplicates.get(id(node), ()):
                    key = str(kept.value) if isinstance(kept, ScalarNode) else "?"
                    line = earlier.start_mark.line + 1
                    finding = ctx.finding(doc, kept, path + (key,), DUPLICATE_KEY, value=key, key=key, first_line=line)
                    state.findings.append(finding)
