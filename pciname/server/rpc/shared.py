"""What the RPC groups share: profile ``auto`` refused where there is no
cluster to infer from, the profile a Cozystack release serves, and the
(YAML, JSON) texts of an answer exactly as the CLI's ``-o yaml|json``
prints them."""

from __future__ import annotations

import io
from typing import Any

import grpc

from pciname.base.render import dump_json, dump_yaml
from pciname.cozystack.choice import profile_for
from pciname.server.rpc.wire import RpcFailure

AUTO = "auto"

INVALID = grpc.StatusCode.INVALID_ARGUMENT
PRECONDITION = grpc.StatusCode.FAILED_PRECONDITION


def no_auto(profile: str, what: str = "profile") -> None:
    """INVALID_ARGUMENT for profile ``auto`` where there is no cluster to infer from."""
    if profile.strip().lower() == AUTO:
        raise RpcFailure(
            INVALID, f"{what} auto needs a cluster to infer from: it works with GpuOptions; name a profile"
        )


def cozystack_profile(cozystack: str, profile: str) -> str:
    """The profile to serve (:func:`pciname.cozystack.choice.profile_for`):
    ``profile``, or with none given and a Cozystack release asked for, that
    release's. A malformed release is INVALID_ARGUMENT, an unknown one
    NOT_FOUND (status_of)."""
    return str(profile_for(cozystack, profile) or "")


def texts(data: Any) -> tuple[str, str]:
    """(YAML, JSON) of ``data`` exactly as the CLI's ``-o yaml|json`` prints it."""
    yaml_text, json_text = io.StringIO(), io.StringIO()
    dump_yaml(data, yaml_text)
    dump_json(data, json_text)
    return yaml_text.getvalue(), json_text.getvalue()


__all__ = ["AUTO", "INVALID", "PRECONDITION", "cozystack_profile", "no_auto", "texts"]
