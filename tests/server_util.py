"""Helpers of the server tests: certificates, a server subprocess, an
in-process server on loopback, metrics, small pci.ids files and snapshot
directories."""

from __future__ import annotations

import datetime
import ipaddress
import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import PLUGIN_PCIIDS, REPO, ServerSpec, serving

# -- an in-process server ----------------------------------------------------------


@contextmanager
def packaged_server(cache: Path, **config: Any) -> Iterator:
    """A started NameServer on a loopback port, serving the packaged
    snapshots with ``cache`` as its cache dir (``config``: more ServeConfig
    fields); stopped on exit. (A test module's own server is conftest's
    ``server`` fixture.)"""
    with serving(ServerSpec(config=config), cache) as server:
        yield server


@contextmanager
def packaged_stub(cache: Path) -> Iterator:
    """A PciName stub on :func:`packaged_server`."""
    import grpc

    from pciname.server._proto import pciname_pb2_grpc as pb_grpc

    with packaged_server(cache) as server, grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        yield pb_grpc.PciNameStub(channel)


# -- pci.ids files ----------------------------------------------------------------


def pciids_text(a10_name: str, *, version: str = "2030.01.01") -> str:
    """A small pci.ids: NVIDIA with 10de:2236 named ``a10_name`` and a few others."""
    return (
        f"# Version: {version}\n"
        "10de  NVIDIA Corporation\n"
        f"\t2236  {a10_name}\n"
        "\t1eb8  TU104GL [Tesla T4]\n"
        "\t20b5  GA100 [A100 PCIe 80GB]\n"
        "8086  Intel Corporation\n"
        "\t1234  Some Intel device\n"
    )


BROKEN_PCIIDS = "10de  NVIDIA Corporation\n\t2236  GA102GL [A10]\nthis line is not pci.ids\n"


def write_atomically(path: Path, text: str) -> None:
    """Write like a careful deployer (temp file + rename), with a fresh mtime."""
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)


def snapshot_dir(root: Path, keep: list[str]) -> Path:
    """A snapshot directory with symlinks to the snapshot files named in
    ``keep`` (e.g. ``["2025.07.11.ids"]``)."""
    root.mkdir(parents=True, exist_ok=True)
    for name in keep:
        link = root / name
        if not link.exists():
            link.symlink_to(PLUGIN_PCIIDS / name)
    return root


ALL_BUT_2019 = sorted(p.name for p in PLUGIN_PCIIDS.glob("*.ids") if not p.name.startswith("2019"))

# -- certificates -----------------------------------------------------------------------


@dataclass
class Pki:
    ca: Path
    server_cert: Path
    server_key: Path
    client_cert: Path
    client_key: Path
    other_ca: Path  # an unrelated CA
    other_client_cert: Path  # signed by other_ca
    other_client_key: Path


def _key():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _name(common: str):
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common)])


def _cert(subject: str, key, issuer_name, issuer_key, *, ca: bool, server: bool = False, client: bool = False):
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import ExtendedKeyUsageOID

    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(_name(subject))
        .issuer_name(issuer_name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if ca:
        builder = builder.add_extension(
            x509.KeyUsage(False, False, False, False, False, True, True, False, False), critical=True
        )
    if server:
        builder = builder.add_extension(
            x509.SubjectAlternativeName([x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        ).add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
    if client:
        builder = builder.add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _write(path: Path, cert=None, key=None) -> Path:
    from cryptography.hazmat.primitives import serialization

    if cert is not None:
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    else:
        path.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
            )
        )
    return path


def make_ca(directory: Path, name: str):
    key = _key()
    cert = _cert(name, key, _name(name), key, ca=True)
    return cert, key, _write(directory / f"{name}.pem", cert=cert)


def make_leaf(directory: Path, name: str, ca_cert, ca_key, *, server: bool = False, client: bool = False):
    key = _key()
    cert = _cert(name, key, ca_cert.subject, ca_key, ca=False, server=server, client=client)
    return _write(directory / f"{name}.pem", cert=cert), _write(directory / f"{name}-key.pem", key=key)


def make_pki(directory: Path) -> Pki:
    directory.mkdir(parents=True, exist_ok=True)
    ca_cert, ca_key, ca = make_ca(directory, "test-ca")
    server_cert, server_key = make_leaf(directory, "server", ca_cert, ca_key, server=True)
    client_cert, client_key = make_leaf(directory, "client", ca_cert, ca_key, client=True)
    other_cert, other_key, other_ca = make_ca(directory, "other-ca")
    other_client_cert, other_client_key = make_leaf(directory, "intruder", other_cert, other_key, client=True)
    return Pki(ca, server_cert, server_key, client_cert, client_key, other_ca, other_client_cert, other_client_key)


# -- metrics ------------------------------------------------------------------------------


def scrape(port: int) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """``/metrics`` as {(sample name, sorted labels): value}."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return samples


def metric(samples: dict, name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


# -- a server in a subprocess -----------------------------------------------------------------


def peak_rss(pid: int) -> int:
    """A process's peak resident set size so far (VmHWM), in bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    raise AssertionError("no VmHWM")


class ServerProcess:
    """``python -m pciname serve ... --log-format json`` with its log lines
    collected; ``port`` is the bound port (from the "listening" line).

    ``prelude``: Python code run in the server process before ``serve``
    (``python -c``), e.g. to make a read block as a slow file system would.
    """

    def __init__(self, args: list[str], env: dict[str, str], cwd: Path = REPO, prelude: str | None = None) -> None:
        serve = ["--log-format", "json", *args]
        if prelude is None:
            self.args = [sys.executable, "-m", "pciname", "serve", *serve]
        else:
            code = f"{prelude}\nimport sys\nfrom pciname.cli import main\nsys.exit(main(['serve', *sys.argv[1:]]))\n"
            self.args = [sys.executable, "-c", code, *serve]
        self.proc = subprocess.Popen(
            self.args, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.lines: list[str] = []
        self.logs: list[dict] = []
        self._new: queue.Queue = queue.Queue()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.port: int | None = None
        self.metrics_port: int | None = None

    def _read(self) -> None:
        for line in self.proc.stderr:
            self.lines.append(line)
            try:
                entry = json.loads(line)
            except ValueError:
                entry = {"msg": "<not json>", "line": line}
            self.logs.append(entry)
            self._new.put(entry)

    def wait_log(self, msg: str, timeout: float = 30.0, **match) -> dict:
        deadline = time.monotonic() + timeout
        seen = 0
        while True:
            for entry in self.logs[seen:]:
                seen += 1
                if entry.get("msg") == msg and all(entry.get(k) == v for k, v in match.items()):
                    return entry
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no log {msg!r} {match} within {timeout}s; got:\n{''.join(self.lines)}")
            if self.proc.poll() is not None and seen == len(self.logs):
                self._reader.join(1)
                if seen == len(self.logs):
                    raise AssertionError(f"server exited {self.proc.returncode} before {msg!r}:\n{''.join(self.lines)}")
            try:
                self._new.get(timeout=min(remaining, 0.2))
            except queue.Empty:
                pass

    def ready(self, timeout: float = 30.0) -> ServerProcess:
        listening = self.wait_log("listening", timeout)
        self.port = listening["port"]
        self.metrics_port = listening.get("metrics_port")
        self.wait_log("data loaded", timeout)
        return self

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def signal(self, signum: int = signal.SIGTERM) -> None:
        self.proc.send_signal(signum)

    def wait(self, timeout: float = 30.0) -> int:
        code = self.proc.wait(timeout)
        self._reader.join(5)
        return code

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
        self._reader.join(5)
        for stream in (self.proc.stdout, self.proc.stderr):
            if stream:
                stream.close()


def server_env(cache: Path, snapshots: Path | str) -> dict[str, str]:
    env = dict(os.environ)
    env["PCINAME_CACHE_DIR"] = str(cache)
    env["PCINAME_SNAPSHOTS"] = str(snapshots)
    env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env
