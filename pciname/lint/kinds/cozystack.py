"""Cozystack node groups and KubernetesNodes pools for lint (rule
``node-group-fields``): a field the chosen Cozystack release's schema does
not have is ``field-not-in-release``. Their GPU names are references
(:mod:`.vm`)."""

from __future__ import annotations

from yaml.nodes import MappingNode

from pciname.lint.codes import FIELD_NOT_IN_RELEASE, RuleName
from pciname.lint.document import KUBERNETES_NODES, Doc, Finding, RunState
from pciname.lint.nodes import YamlPath, items as _items
from pciname.lint.rules import Context, rule


@rule(RuleName.NODE_GROUP_FIELDS)
def node_group_fields(ctx: Context, state: RunState) -> None:
    for doc, pool, path, is_nodes in state.sites.pools:
        state.findings.extend(_check_pool_fields(ctx, doc, pool, path, is_nodes))


def _check_pool_fields(ctx: Context, doc: Doc, pool: MappingNode, path: YamlPath, is_nodes: bool) -> list[Finding]:
    """``field-not-in-release`` for each field of a node group (or a
    KubernetesNodes spec) that the chosen Cozystack release lacks."""
    from pciname.cozystack.releases import DISK_FIELDS

    release = ctx.cozystack
    if is_nodes:
        app = release.kubernetes_nodes
        if app is None:
            return []  # no such app in this release: nothing to compare with (the API refuses the kind)
        fields = tuple(app.schema.get("properties", {}))
        what = f"{release.label}'s {KUBERNETES_NODES} has no field"
    else:
        fields = release.fields
        what = f"{release.label}'s node groups have no field"
    disk = next((f for f in DISK_FIELDS if f in fields), None)
    found: list[Finding] = []
    for key, key_node, _ in _items(pool):
        if key in fields:
            continue
        expected = disk if key in DISK_FIELDS else None
        found.append(
            ctx.finding(
                doc, key_node, path + (key,), FIELD_NOT_IN_RELEASE, expected, key, what=what, key=key, disk=expected
            )
        )
    return found
