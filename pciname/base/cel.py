"""CEL text pciname writes: string literals (the admission policy's
expressions and the DRA claims' selectors alike)."""

from __future__ import annotations

import json


def cel_string(text: str) -> str:
    """A CEL string literal (JSON escapes are CEL escapes for what we write)."""
    return json.dumps(text, ensure_ascii=False)
