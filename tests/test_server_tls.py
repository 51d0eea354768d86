"""TLS and mutual TLS, with certificates made here (cryptography), and the
rule that plaintext needs --insecure."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from pciname.client import Client, ServiceError
from pciname.server import NameServer, ServeConfig, ServeError

from .conftest import REPO
from .server_util import make_ca, make_leaf, make_pki


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    return make_pki(tmp_path_factory.mktemp("pki"))


def start(config: ServeConfig) -> NameServer:
    server = NameServer(config)
    server.start()
    assert server.reload()
    return server


def works(client: Client) -> bool:
    try:
        return client.resolve("10de:2236").resource_name == "nvidia.com/GA102GL_A10"
    except ServiceError as error:
        assert error.code == "UNAVAILABLE", error
        return False


def test_tls(pki):
    server = start(ServeConfig(listen="127.0.0.1:0", tls_cert=str(pki.server_cert), tls_key=str(pki.server_key),
                               watch_interval=0))
    target = f"localhost:{server.port}"
    try:
        with Client(target, root_certificates=pki.ca, timeout=5) as trusted:
            assert works(trusted)
            assert trusted.health() == "SERVING"
        with Client(f"127.0.0.1:{server.port}", root_certificates=pki.ca.read_bytes(), timeout=5) as by_ip:
            assert works(by_ip)  # the certificate names 127.0.0.1 too
        with Client(target, timeout=3) as plaintext:
            assert not works(plaintext)
        with Client(target, root_certificates=pki.other_ca, timeout=3) as wrong_ca:
            assert not works(wrong_ca)
    finally:
        server.stop()


def test_mutual_tls(pki):
    server = start(ServeConfig(listen="127.0.0.1:0", tls_cert=str(pki.server_cert), tls_key=str(pki.server_key),
                               tls_client_ca=str(pki.ca), watch_interval=0))
    target = f"localhost:{server.port}"
    try:
        with Client(target, root_certificates=pki.ca, certificate_chain=pki.client_cert,
                    private_key=pki.client_key, timeout=5) as member:
            assert works(member)
        with Client(target, root_certificates=pki.ca, timeout=3) as anonymous:
            assert not works(anonymous)
        with Client(target, root_certificates=pki.ca, certificate_chain=pki.other_client_cert,
                    private_key=pki.other_client_key, timeout=3) as intruder:
            assert not works(intruder)
        with Client(target, timeout=3) as plaintext:
            assert not works(plaintext)
    finally:
        server.stop()


def test_certificate_rotation(pki, tmp_path):
    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    shutil.copyfile(pki.server_cert, cert)
    shutil.copyfile(pki.server_key, key)
    server = start(ServeConfig(listen="127.0.0.1:0", tls_cert=str(cert), tls_key=str(key), watch_interval=0))
    target = f"localhost:{server.port}"
    try:
        with Client(target, root_certificates=pki.ca, timeout=5) as old:
            assert works(old)
        new_ca_cert, new_ca_key, new_ca = make_ca(tmp_path, "rotated-ca")
        new_cert, new_key = make_leaf(tmp_path, "rotated-server", new_ca_cert, new_ca_key, server=True)
        shutil.copyfile(new_key, key)
        shutil.copyfile(new_cert, cert)
        with Client(target, root_certificates=new_ca, timeout=5) as rotated:
            assert works(rotated)  # a new connection gets the new certificate
        with Client(target, root_certificates=pki.ca, timeout=3) as stale:
            assert not works(stale)
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("config", "message"),
    [
        (ServeConfig(), "--insecure"),
        (ServeConfig(tls_cert="x.pem"), "go together"),
        (ServeConfig(tls_client_ca="ca.pem", insecure=True), "go together"),
        (ServeConfig(tls_cert="x.pem", tls_key="k.pem", insecure=True), "cannot be combined"),
        (ServeConfig(insecure=True, listen="nowhere"), "HOST:PORT"),
        (ServeConfig(insecure=True, max_workers=0), "--max-workers"),
    ],
)
def test_plaintext_only_when_asked(config, message):
    with pytest.raises(ServeError) as caught:
        NameServer(config)
    assert message in str(caught.value)


def test_health_command_over_mutual_tls(pki):
    server = start(ServeConfig(listen="127.0.0.1:0", tls_cert=str(pki.server_cert), tls_key=str(pki.server_key),
                               tls_client_ca=str(pki.ca), watch_interval=0))
    try:
        base = [sys.executable, "-m", "pciname", "health", "--server", f"localhost:{server.port}", "--timeout", "5"]
        ok = subprocess.run(
            [*base, "--tls-ca", str(pki.ca), "--tls-cert", str(pki.client_cert), "--tls-key", str(pki.client_key)],
            capture_output=True, text=True, cwd=REPO, timeout=60,
        )
        assert (ok.returncode, ok.stdout.strip()) == (0, "SERVING"), ok.stderr
        refused = subprocess.run([*base, "--tls-ca", str(pki.ca)], capture_output=True, text=True, cwd=REPO,
                                 timeout=60)
        assert refused.returncode == 2
        assert refused.stderr.startswith("pciname: error: ") and refused.stderr.count("\n") == 1
    finally:
        server.stop()
