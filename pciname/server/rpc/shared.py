"""What the RPC groups share: profile ``auto`` refused where there is no
cluster to infer from, and the (YAML, JSON) texts of an answer exactly as
the CLI's ``-o yaml|json`` prints them. (The profile a Cozystack release
serves is each request's ``chosen_profile``: :mod:`pciname.capabilities`.)"""

from __future__ import annotations

import io
from typing import Any

import grpc

from pciname.base.render import dump_json, dump_yaml
from pciname.capabilities.spelling import Spelling

AUTO = "auto"

INVALID = grpc.StatusCode.INVALID_ARGUMENT
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION


def no_auto(profile: str, what: str = "profile") -> None:
    """INVALID_ARGUMENT for profile ``auto`` where there is no cluster to infer from."""
    if profile.strip().lower() == AUTO:
        raise Spelling.RPC.auto_refused(what)


def texts(data: Any) -> tuple[str, str]:
    """(YAML, JSON) of ``data`` exactly as the CLI's ``-o yaml|json`` prints it."""
    yaml_text, json_text = io.StringIO(), io.StringIO()
    dump_yaml(data, yaml_text)
    dump_json(data, json_text)
    return yaml_text.getvalue(), json_text.getvalue()


__all__ = ["AUTO", "INVALID", "PRECONDITION", "no_auto", "texts"]
