"""A command that talks to a cluster, given none (no kubeconfig, not in a
pod), says so in one plain line naming the two ways to give one, not the
Kubernetes client's own wording (``Service host/port is not set.``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_run import pciname

NO_CLUSTER = (
    "pciname: error: no cluster configuration found: give a kubeconfig (--kubeconfig FILE, $KUBECONFIG or "
    "~/.kube/config), or run in a pod, where its service account is used (in-cluster)\n"
)


@pytest.mark.parametrize("command", [("audit",), ("gpu-options",)])
def test_no_kubeconfig_and_not_in_a_pod_is_one_plain_line(command: tuple[str, ...], tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path), "KUBECONFIG": None, "KUBERNETES_SERVICE_HOST": None, "KUBERNETES_SERVICE_PORT": None}
    ran = pciname(*command, env=env)
    assert (ran.returncode, ran.stdout, ran.stderr) == (2, "", NO_CLUSTER)
