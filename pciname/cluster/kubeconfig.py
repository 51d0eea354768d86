"""The kubeconfig as pciname loads it, before the ``kubernetes`` client
sees it: every file read bounded, and a credential plugin bounded in time.

* Every path of ``$KUBECONFIG`` (or ``--kubeconfig FILE``, or
  ``~/.kube/config``) is read with :func:`pciname.base.files.read_bounded`: a
  regular file of at most ``MAX_KUBECONFIG_BYTES``; a FIFO or device is
  refused at once, whichever place it has in the list. Several paths merge
  as kubectl merges them: the first file that names a cluster, context or
  user wins it, and the first ``current-context`` set wins. Paths that do
  not exist are skipped, as kubectl skips them.
* The files the chosen context names (``certificate-authority``,
  ``client-certificate``, ``client-key``, ``tokenFile``; relative to the
  kubeconfig file that names them) are read the same way, at most
  ``MAX_CREDENTIAL_FILE_BYTES`` each, and inlined (``*-data``, ``token``),
  so the client never opens them itself.
* A credential plugin (``users[].user.exec``) runs as kubectl runs it
  (``KUBERNETES_EXEC_INFO``, its ``env``, never interactive), but within the
  caller's timeout (its process group is killed then) and with at most
  :data:`MAX_EXEC_OUTPUT_BYTES` of output; its token or certificate is
  inlined, and its ``expirationTimestamp`` says when to run it again.

:func:`load` returns the merged configuration, ready for
``kubernetes.config.new_client_from_config_dict``, with when it expires and
which files it came from (:class:`Loaded`), so a long-lived caller (the
server's ``--kube``) loads it once and again only when it must.
"""

from __future__ import annotations

import base64
import datetime
import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from pciname.errors import PcinameError

if TYPE_CHECKING:
    import subprocess

#: Output a credential plugin may write (an ExecCredential is a few KB).
MAX_EXEC_OUTPUT_BYTES = 1 << 20
#: Credentials are renewed this long before they expire (the kubernetes client's skew).
EXPIRY_SKEW = datetime.timedelta(minutes=5)

_CLUSTER_FILES = (("certificate-authority", "certificate-authority-data"),)
_USER_FILES = (("client-certificate", "client-certificate-data"), ("client-key", "client-key-data"))


@dataclass
class Loaded:
    """A kubeconfig as loaded: ``config`` (None: none exists, use the
    in-cluster service account), when its credentials expire, and the files
    read (their state, to see a change)."""

    config: dict[str, Any] | None
    expiry: datetime.datetime | None = None
    files: dict[str, tuple[int, int, int] | None] = field(default_factory=dict)

    def stale(self) -> bool:
        """The credentials expire within :data:`EXPIRY_SKEW`, or a file read changed."""
        if self.expiry is not None and datetime.datetime.now(datetime.UTC) >= self.expiry - EXPIRY_SKEW:
            return True
        return any(_state(path) != state for path, state in self.files.items())


def _state(path: str) -> tuple[int, int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_ino, st.st_size, st.st_mtime_ns)


def paths(kubeconfig: str | None) -> list[str]:
    """The kubeconfig files to merge: ``kubeconfig``, else every path of
    ``$KUBECONFIG``, else ``~/.kube/config``."""
    if kubeconfig is not None:
        return [kubeconfig]
    listed = os.environ.get("KUBECONFIG")
    if listed:
        return [os.path.expanduser(p) for p in listed.split(os.pathsep) if p]
    return [os.path.expanduser("~/.kube/config")]


def _read(path: str, limit: int, what: str) -> bytes:
    from pciname.base.files import read_bounded

    try:
        return read_bounded(path, limit)
    except OSError as error:
        raise PcinameError(f"cannot read {what} {path}: {error.strerror or error}") from None


def _parse(data: bytes, path: str) -> dict[str, Any]:
    import yaml

    try:
        loaded = yaml.safe_load(data)
    except (yaml.YAMLError, ValueError, TypeError, ArithmeticError, LookupError, RecursionError) as error:
        detail = " ".join(str(error).split())[:200] if not isinstance(error, RecursionError) else "nested too deeply"
        raise PcinameError(f"cannot load kubeconfig {path}: not a valid kubeconfig: {detail}") from None
    if loaded is None:
        return {}
    if not isinstance(loaded, dict):
        raise PcinameError(f"cannot load kubeconfig {path}: not a valid kubeconfig: not a mapping")
    return loaded


def _entries(config: dict[str, Any], key: str, inner: str, path: str) -> list[tuple[str, dict[str, Any]]]:
    found = config.get(key)
    if found is None:
        return []
    if not isinstance(found, list):
        raise PcinameError(f"cannot load kubeconfig {path}: not a valid kubeconfig: {key} is not a list")
    entries = []
    for i, entry in enumerate(found):
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            raise PcinameError(f"cannot load kubeconfig {path}: not a valid kubeconfig: {key}[{i}] has no name")
        value = entry.get(inner) or {}
        if not isinstance(value, dict):
            raise PcinameError(
                f"cannot load kubeconfig {path}: not a valid kubeconfig: {key}[{i}].{inner} is not a mapping"
            )
        entries.append((entry["name"], value))
    return entries


def exists(kubeconfig: str | None) -> bool:
    """Some kubeconfig file exists (else: in-cluster)."""
    return any(os.path.lexists(p) for p in paths(kubeconfig))


def load(kubeconfig: str | None, context: str | None, timeout: float | None) -> Loaded:
    """The merged kubeconfig with the chosen context's files and plugin
    output inlined (:class:`Loaded`; ``config`` None when no kubeconfig
    exists and no context is asked for). PcinameError, one line, for a file
    that cannot be read or is not a kubeconfig, or a plugin that fails."""
    files: dict[str, tuple[int, int, int] | None] = {}
    origin: dict[tuple[str, str], str] = {}  # (key, name) -> the file that named it
    merged, current = _merge(kubeconfig, files, origin)
    if merged is None:
        if context is not None:
            raise PcinameError(f"cannot load the cluster configuration: no kubeconfig file for context {context}")
        return Loaded(None)
    chosen = context or current
    if not chosen:
        raise PcinameError("cannot load the cluster configuration: the kubeconfig sets no current-context")
    merged["current-context"] = chosen
    by_name = {(key, e["name"]): e for key in ("clusters", "contexts", "users") for e in merged[key]}
    ctx = by_name.get(("contexts", chosen))
    if ctx is None:
        raise PcinameError(f"cannot load the cluster configuration: no context {chosen} in the kubeconfig")
    expiry = None
    cluster_name, user_name = ctx["context"].get("cluster"), ctx["context"].get("user")
    cluster = by_name.get(("clusters", cluster_name)) if isinstance(cluster_name, str) else None
    if cluster is not None:
        base = os.path.dirname(os.path.abspath(origin[("clusters", cluster_name)]))
        _inline(cluster["cluster"], _CLUSTER_FILES, base, files)
    user = by_name.get(("users", user_name)) if isinstance(user_name, str) else None
    if user is not None:
        base = os.path.dirname(os.path.abspath(origin[("users", user_name)]))
        expiry = _inline_user(user["user"], base, files, cluster["cluster"] if cluster else None, timeout)
    return Loaded(merged, expiry, files)


def _merge(
    kubeconfig: str | None, files: dict[str, tuple[int, int, int] | None], origin: dict[tuple[str, str], str]
) -> tuple[dict[str, Any] | None, str | None]:
    """The kubeconfig files merged as kubectl merges them (the first file
    naming a cluster, context or user wins; ``origin`` says which), and the
    first current-context; None when no file exists."""
    from pciname.base.files import MAX_KUBECONFIG_BYTES

    merged: dict[str, Any] = {"apiVersion": "v1", "kind": "Config", "clusters": [], "contexts": [], "users": []}
    current: str | None = None
    found = False
    for path in paths(kubeconfig):
        if kubeconfig is None and not os.path.lexists(path):
            continue  # as kubectl: a listed file that does not exist is skipped
        found = True
        files[path] = _state(path)
        config = _parse(_read(path, MAX_KUBECONFIG_BYTES, "kubeconfig"), path)
        for key, inner in (("clusters", "cluster"), ("contexts", "context"), ("users", "user")):
            for name, value in _entries(config, key, inner, path):
                if (key, name) not in origin:
                    origin[(key, name)] = path
                    merged[key].append({"name": name, inner: dict(value)})
        if current is None and isinstance(config.get("current-context"), str) and config["current-context"]:
            current = config["current-context"]
    return (merged if found else None), current


def _inline_user(
    values: dict[str, Any],
    base: str,
    files: dict[str, tuple[int, int, int] | None],
    cluster: dict[str, Any] | None,
    timeout: float | None,
) -> datetime.datetime | None:
    """The user's files, token file and credential plugin's answer inlined; the credential's expiry."""
    _inline(values, _USER_FILES, base, files)
    token_file = values.pop("tokenFile", None)
    if token_file is not None:
        values["token"] = _file(token_file, base, "tokenFile", files).decode("utf-8", "replace").strip()
    plugin = values.pop("exec", None)
    if plugin is None:
        return None
    return _exec(plugin, base, values, cluster, timeout)


def _file(name: Any, base: str, what: str, files: dict[str, tuple[int, int, int] | None]) -> bytes:
    from pciname.base.files import MAX_CREDENTIAL_FILE_BYTES

    if not isinstance(name, str) or not name:
        raise PcinameError(f"cannot load the cluster configuration: {what} is not a file name")
    path = os.path.join(base, os.path.expanduser(name))
    files[path] = _state(path)
    return _read(path, MAX_CREDENTIAL_FILE_BYTES, f"the kubeconfig's {what}")


def _inline(
    values: dict[str, Any], keys: tuple[tuple[str, str], ...], base: str, files: dict[str, tuple[int, int, int] | None]
) -> None:
    for key, data_key in keys:
        name = values.pop(key, None)
        if name is not None and not values.get(data_key):
            values[data_key] = base64.b64encode(_file(name, base, key, files)).decode("ascii")


# -- credential plugins ------------------------------------------------------------------


def _exec(
    plugin: Any, base: str, user: dict[str, Any], cluster: dict[str, Any] | None, timeout: float | None
) -> datetime.datetime | None:
    """Run ``users[].user.exec`` and put its credential in ``user``; its expiry."""
    from pciname.kubevirt.shapes import ShapeError, decode_json

    command, args, api_version = _plugin_command(plugin, base)
    env = _plugin_env(plugin, api_version, cluster)
    code, out, err = run_bounded([command, *args], env, timeout)
    what = f"the kubeconfig's credential plugin {plugin['command']}"
    if code != 0:
        detail = " ".join(err.decode("utf-8", "replace").split())[:200]
        raise PcinameError(
            f"cannot load the cluster configuration: {what} exited {code}" + (f": {detail}" if detail else "")
        )
    try:
        answer = decode_json(out, what)
    except ShapeError as error:
        raise PcinameError(f"cannot load the cluster configuration: {error}") from None
    status = answer.get("status") if isinstance(answer, dict) else None
    if not isinstance(answer, dict) or answer.get("kind") != "ExecCredential" or not isinstance(status, dict):
        raise PcinameError(f"cannot load the cluster configuration: {what} did not answer an ExecCredential")
    if answer.get("apiVersion") != api_version:
        raise PcinameError(
            f"cannot load the cluster configuration: {what} answered apiVersion "
            f"{str(answer.get('apiVersion'))[:64]}, not {api_version[:64]}"
        )
    _credential(status, user, what)
    return _expiry(status, what)


def _plugin_command(plugin: Any, base: str) -> tuple[str, list[str], str]:
    """The plugin's command (relative to the kubeconfig, as kubectl runs
    it), its arguments and the ExecCredential apiVersion it speaks."""
    if not isinstance(plugin, dict) or not isinstance(plugin.get("command"), str) or not plugin["command"]:
        raise PcinameError("cannot load the cluster configuration: users[].user.exec has no command")
    api_version = plugin.get("apiVersion")
    if not isinstance(api_version, str):
        raise PcinameError("cannot load the cluster configuration: users[].user.exec has no apiVersion")
    command = os.path.expanduser(plugin["command"])
    if os.sep in command and not os.path.isabs(command):
        command = os.path.join(base, command)  # as kubectl: relative to the kubeconfig
    args = plugin.get("args") or []
    if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
        raise PcinameError("cannot load the cluster configuration: users[].user.exec.args is not a list of strings")
    return command, args, api_version


def _plugin_env(plugin: dict[str, Any], api_version: str, cluster: dict[str, Any] | None) -> dict[str, str]:
    """The plugin's environment: ours, its ``env`` entries and KUBERNETES_EXEC_INFO."""
    import json

    env = dict(os.environ)
    for entry in plugin.get("env") or []:
        if (
            not isinstance(entry, dict)
            or not isinstance(entry.get("name"), str)
            or not isinstance(entry.get("value"), str)
        ):
            raise PcinameError(
                "cannot load the cluster configuration: users[].user.exec.env holds an entry without name and value"
            )
        env[entry["name"]] = entry["value"]
    info: dict[str, Any] = {"apiVersion": api_version, "kind": "ExecCredential", "spec": {"interactive": False}}
    if plugin.get("provideClusterInfo") and cluster is not None:
        info["spec"]["cluster"] = {
            k: v
            for k, v in cluster.items()
            if k in ("server", "certificate-authority-data", "tls-server-name", "proxy-url")
        }
    env["KUBERNETES_EXEC_INFO"] = json.dumps(info)
    return env


def _credential(status: dict[str, Any], user: dict[str, Any], what: str) -> None:
    """The ExecCredential's token, else its client certificate, into ``user``."""
    token, cert, key = status.get("token"), status.get("clientCertificateData"), status.get("clientKeyData")
    if isinstance(token, str) and token:
        user["token"] = token
    elif isinstance(cert, str) and isinstance(key, str):
        user["client-certificate-data"] = base64.b64encode(cert.encode()).decode("ascii")
        user["client-key-data"] = base64.b64encode(key.encode()).decode("ascii")
    else:
        raise PcinameError(
            f"cannot load the cluster configuration: {what} answered neither a token nor a client certificate"
        )


def _expiry(status: dict[str, Any], what: str) -> datetime.datetime | None:
    expires = status.get("expirationTimestamp")
    if expires is None:
        return None
    try:
        when = datetime.datetime.fromisoformat(str(expires).replace("Z", "+00:00"))
    except ValueError:
        raise PcinameError(
            f"cannot load the cluster configuration: {what} answered an expirationTimestamp that is not RFC 3339"
        ) from None
    return when if when.tzinfo is not None else when.replace(tzinfo=datetime.UTC)


def run_bounded(argv: list[str], env: dict[str, str], timeout: float | None) -> tuple[int, bytes, bytes]:
    """Run ``argv`` without a terminal: (exit code, stdout, stderr), at most
    :data:`MAX_EXEC_OUTPUT_BYTES` of each, within ``timeout`` seconds (its
    whole process group is killed past it, or past the output limit)."""
    import subprocess
    import time

    try:
        process = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,
        )
    except OSError as error:
        raise PcinameError(
            f"cannot run the kubeconfig's credential plugin {argv[0]}: {error.strerror or error}"
        ) from None
    assert process.stdout is not None and process.stderr is not None
    deadline = None if timeout is None else time.monotonic() + timeout
    output, problem = _read_bounded(process, deadline, timeout)
    if problem:
        _kill(process)
    try:
        left = None if deadline is None else max(deadline - time.monotonic(), 0.1)
        code = process.wait(left if not problem else 5)
    except subprocess.TimeoutExpired:
        _kill(process)
        code = process.wait(5)
        problem = problem or f"did not finish within {timeout:g} seconds"
    finally:
        process.stdout.close()
        process.stderr.close()
    if problem:
        raise PcinameError(
            f"cannot load the cluster configuration: the kubeconfig's credential plugin {argv[0]} {problem}"
        )
    return code, b"".join(output[1]), b"".join(output[2])


def _kill(process: subprocess.Popen[bytes]) -> None:
    """Kill the process's whole group."""
    import signal

    try:
        os.killpg(process.pid, signal.SIGKILL)
    except OSError:
        pass


def _read_bounded(
    process: subprocess.Popen[bytes], deadline: float | None, timeout: float | None
) -> tuple[dict[int, list[bytes]], str | None]:
    """The process's stdout (1) and stderr (2) chunks until both end, and
    what went wrong: the deadline passed, or an output passed its limit."""
    import selectors
    import time

    output: dict[int, list[bytes]] = {1: [], 2: []}
    sizes = {1: 0, 2: 0}
    problem = None
    with selectors.DefaultSelector() as selector:
        assert process.stdout is not None and process.stderr is not None
        selector.register(process.stdout, selectors.EVENT_READ, 1)
        selector.register(process.stderr, selectors.EVENT_READ, 2)
        while selector.get_map():
            left = None if deadline is None else deadline - time.monotonic()
            if left is not None and left <= 0:
                problem = f"did not finish within {timeout:g} seconds"
                break
            for key, _ in selector.select(left):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fileobj)
                    continue
                sizes[key.data] += len(chunk)
                if sizes[key.data] > MAX_EXEC_OUTPUT_BYTES:
                    problem = f"wrote more than {MAX_EXEC_OUTPUT_BYTES} bytes"
                    break
                output[key.data].append(chunk)
            if problem:
                break
    return output, problem


__all__ = ["EXPIRY_SKEW", "MAX_EXEC_OUTPUT_BYTES", "Loaded", "exists", "load", "paths", "run_bounded"]
