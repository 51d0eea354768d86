"""Every stable warning code of a resolution (``pciname.naming.checks``)
has its row in the warnings table of docs/limits-and-security.md, and the
table names no other."""

from __future__ import annotations

import re

from pciname.naming import checks
from tests.conftest import REPO


def test_the_warnings_table_is_the_codes():
    text = (REPO / "docs" / "limits-and-security.md").read_text()
    table = text[text.index("### Warnings") :].split("\n\n")[2]
    rows = re.findall(r"^\| `([a-z-]+)` \|", table, re.MULTILINE)
    codes = [
        v
        for k, v in vars(checks).items()
        if k.isupper() and isinstance(v, str) and re.fullmatch(r"[a-z]+(-[a-z]+)+", v)
    ]
    codes = [c for c in codes if c not in (checks.KUBEVIRT_PLUGIN,)]
    assert sorted(rows) == sorted(codes)
