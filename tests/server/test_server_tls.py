"""TLS and mutual TLS, with certificates made here (cryptography), and the
rule that plaintext needs --insecure."""

from __future__ import annotations

import shutil
import subprocess
import sys

import pytest

from pciname.client import Client, ServiceError
from pciname.server import NameServer, ServeConfig, ServeError
from tests.conftest import REPO
from tests.server_util import make_ca, make_leaf, make_pki


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
    server = start(
        ServeConfig(listen="127.0.0.1:0", tls_cert=str(pki.server_cert), tls_key=str(pki.server_key), watch_interval=0)
    )
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
    server = start(
        ServeConfig(
            listen="127.0.0.1:0",
            tls_cert=str(pki.server_cert),
            tls_key=str(pki.server_key),
            tls_client_ca=str(pki.ca),
            watch_interval=0,
        )
    )
    target = f"localhost:{server.port}"
    try:
        with Client(
            target, root_certificates=pki.ca, certificate_chain=pki.client_cert, private_key=pki.client_key, timeout=5
        ) as member:
            assert works(member)
        with Client(target, root_certificates=pki.ca, timeout=3) as anonymous:
            assert not works(anonymous)
        with Client(
            target,
            root_certificates=pki.ca,
            certificate_chain=pki.other_client_cert,
            private_key=pki.other_client_key,
            timeout=3,
        ) as intruder:
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


def test_certificate_replaced_by_a_fifo_keeps_the_old_one(pki, tmp_path):
    """Issue 16: a FIFO in place of the certificate blocked the rotation
    reader for good (no TLS connection ever again, health still SERVING)."""
    import os

    cert, key = tmp_path / "tls.crt", tmp_path / "tls.key"
    shutil.copyfile(pki.server_cert, cert)
    shutil.copyfile(pki.server_key, key)
    server = start(
        ServeConfig(
            listen="127.0.0.1:0", tls_cert=str(cert), tls_key=str(key), watch_interval=0, health_listen="127.0.0.1:0"
        )
    )
    target = f"localhost:{server.port}"
    try:
        assert server.metrics.tls_loaded._value.get() == 1
        cert.unlink()
        os.mkfifo(cert)
        for _ in range(3):  # each new connection asks; none blocks, the old certificate serves
            with Client(target, root_certificates=pki.ca, timeout=5) as old:
                assert works(old)
        assert server.metrics.tls_loaded._value.get() == 0
        with Client(f"127.0.0.1:{server.health_port}", timeout=5) as health:
            assert health.health() == "SERVING"
        new_ca_cert, new_ca_key, new_ca = make_ca(tmp_path, "rotated-ca")
        new_cert, new_key = make_leaf(tmp_path, "rotated-server", new_ca_cert, new_ca_key, server=True)
        shutil.copyfile(new_key, key)
        cert.unlink()
        shutil.copyfile(new_cert, cert)  # put back: the next connection gets it
        with Client(target, root_certificates=new_ca, timeout=5) as rotated:
            assert works(rotated)
        assert server.metrics.tls_loaded._value.get() == 1
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
    server = start(
        ServeConfig(
            listen="127.0.0.1:0",
            tls_cert=str(pki.server_cert),
            tls_key=str(pki.server_key),
            tls_client_ca=str(pki.ca),
            watch_interval=0,
        )
    )
    try:
        base = [sys.executable, "-m", "pciname", "health", "--server", f"localhost:{server.port}", "--timeout", "5"]
        ok = subprocess.run(
            [*base, "--tls-ca", str(pki.ca), "--tls-cert", str(pki.client_cert), "--tls-key", str(pki.client_key)],
            capture_output=True,
            text=True,
            cwd=REPO,
            timeout=60,
        )
        assert (ok.returncode, ok.stdout.strip()) == (0, "SERVING"), ok.stderr
        refused = subprocess.run([*base, "--tls-ca", str(pki.ca)], capture_output=True, text=True, cwd=REPO, timeout=60)
        assert refused.returncode == 2
        assert refused.stderr.startswith("pciname: error: ") and refused.stderr.count("\n") == 1
    finally:
        server.stop()


def cli(*args: str, timeout: float = 60) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pciname", *args], capture_output=True, text=True, cwd=REPO, timeout=timeout
    )


def assert_one_line_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc
    assert "Traceback" not in proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    for needle in needles:
        assert needle in lines[0], proc.stderr


@pytest.fixture(scope="module")
def garbage(tmp_path_factory):
    path = tmp_path_factory.mktemp("garbage") / "garbage.pem"
    path.write_text("this is not PEM\n")
    return path


@pytest.mark.parametrize("which", ["--tls-cert", "--tls-key"])
def test_health_needs_both_halves_of_a_client_certificate(pki, which):
    """One without the other used to abort inside gRPC's C core (exit 134)."""
    half = pki.client_cert if which == "--tls-cert" else pki.client_key
    proc = cli("health", "--server", "127.0.0.1:1", "--timeout", "2", "--tls-ca", str(pki.ca), which, str(half))
    assert_one_line_error(proc, "--tls-cert and --tls-key go together")


def test_client_needs_both_halves_of_a_client_certificate(pki):
    code = (
        "import sys\n"
        "from pciname.client import Client\n"
        "from pciname.errors import PcinameError\n"
        "try:\n"
        f"    Client('127.0.0.1:1', timeout=2, certificate_chain={pki.client_cert.read_bytes()!r}).health()\n"
        "except PcinameError as error:\n"
        "    print(error)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=60)
    assert (proc.returncode, proc.stdout) == (
        0,
        "certificate_chain and private_key go together (mutual TLS needs both)\n",
    )


def test_unusable_tls_files_are_named(pki, garbage):
    serve = ("serve", "--listen", "127.0.0.1:0", "--watch-interval", "0")
    assert_one_line_error(
        cli(*serve, "--tls-cert", str(garbage), "--tls-key", str(pki.server_key)),
        f"TLS certificate {garbage} cannot be used: no PEM certificate in it",
    )
    assert_one_line_error(
        cli(*serve, "--tls-cert", str(pki.server_cert), "--tls-key", str(garbage)),
        f"TLS key {garbage} cannot be used",
        "not a PEM private key",
    )
    assert_one_line_error(
        cli(*serve, "--tls-cert", str(pki.server_cert), "--tls-key", str(pki.client_key)),
        "the key does not belong to the certificate",
    )
    assert_one_line_error(
        cli(
            *serve,
            "--tls-cert",
            str(pki.server_cert),
            "--tls-key",
            str(pki.server_key),
            "--tls-client-ca",
            str(garbage),
        ),
        f"TLS CA bundle {garbage} cannot be used",
    )
    health = ("health", "--server", "127.0.0.1:1", "--timeout", "2")
    assert_one_line_error(cli(*health, "--tls-ca", str(garbage)), f"TLS CA bundle {garbage} cannot be used")
    assert_one_line_error(
        cli(*health, "--tls-cert", str(garbage), "--tls-key", str(pki.client_key)),
        f"TLS certificate {garbage} cannot be used",
    )
    assert_one_line_error(
        cli(*health, "--tls-cert", str(pki.client_cert), "--tls-key", str(garbage)), f"TLS key {garbage} cannot be used"
    )


def test_lookup_server_over_mutual_tls(pki, garbage):
    server = start(
        ServeConfig(
            listen="127.0.0.1:0",
            tls_cert=str(pki.server_cert),
            tls_key=str(pki.server_key),
            tls_client_ca=str(pki.ca),
            watch_interval=0,
        )
    )
    try:
        lookup = ("lookup", "10de:2236", "--server", f"localhost:{server.port}")
        member = ("--tls-ca", str(pki.ca), "--tls-cert", str(pki.client_cert), "--tls-key", str(pki.client_key))
        ok = cli(*lookup, *member)
        assert (ok.returncode, ok.stdout, ok.stderr) == (0, "nvidia.com/GA102GL_A10\n", "")
        anonymous = cli(*lookup, "--tls-ca", str(pki.ca))
        assert anonymous.returncode == 2 and "Traceback" not in anonymous.stderr  # mutual TLS refuses it
        assert_one_line_error(
            cli(*lookup, "--tls-ca", str(pki.ca), "--tls-key", str(pki.client_key)),
            "--tls-cert and --tls-key go together",
        )
        assert_one_line_error(cli(*lookup, "--tls-ca", str(garbage)), "cannot be used")
        assert_one_line_error(cli("lookup", "10de:2236", "--tls-ca", str(pki.ca)), "go with --server")
    finally:
        server.stop()


def test_a_failed_handshake_is_our_one_line_only(pki):
    """Issue 16: gRPC's own TLS log line ("I... ssl_transport_security.cc ...
    Handshake failed") came before our one-line error."""
    import os

    server = start(
        ServeConfig(listen="127.0.0.1:0", tls_cert=str(pki.server_cert), tls_key=str(pki.server_key), watch_interval=0)
    )
    env = {k: v for k, v in os.environ.items() if k != "GRPC_VERBOSITY"}
    env["PYTHONPATH"] = str(REPO)
    try:
        for argv in (
            ["health", "--server", f"localhost:{server.port}", "--tls-ca", str(pki.other_ca)],
            ["lookup", "10de:2236", "--server", f"localhost:{server.port}", "--tls-ca", str(pki.other_ca)],
        ):
            proc = subprocess.run(
                [sys.executable, "-m", "pciname", *argv], capture_output=True, text=True, timeout=60, env=env, cwd=REPO
            )
            assert proc.returncode == 2
            assert proc.stderr.startswith("pciname: error: ") and proc.stderr.count("\n") == 1, proc.stderr
    finally:
        server.stop()
