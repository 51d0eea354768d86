"""How fast health answers while the gRPC port is saturated, on loopback.

    python bench/health_under_load.py [--seconds 10]

Starts ``python -m pciname serve`` with the defaults and ``--health-listen``
(as deploy/ runs it), then keeps 16 large ``ListDevices`` streams and 20
``Lint`` calls (1 MiB of YAML each) going, and asks health ``liveness``
every 0.2 s on the health port and on the gRPC port (3 s deadline, as
deploy/'s liveness probe). Prints, for each port, the slowest answer and
how many failed. Goal: the health port never fails.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from service import Server  # noqa: E402  (bench/service.py)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp), ["--health-listen", "127.0.0.1:0"])
        health_port = next(e["health_port"] for e in server.entries if e.get("msg") == "listening")
        stop = time.monotonic() + args.seconds
        results: dict[str, list[float | None]] = {"health port": [], "gRPC port": []}
        threads = [threading.Thread(target=_devices, args=(server.port, stop)) for _ in range(16)]
        request = _lint_request()
        threads += [threading.Thread(target=_lint, args=(server.port, stop, request)) for _ in range(20)]
        threads += [
            threading.Thread(target=_probe, args=(health_port, stop, results["health port"])),
            threading.Thread(target=_probe, args=(server.port, stop, results["gRPC port"])),
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        server.stop()
    for name, times in results.items():
        ok = [t for t in times if t is not None]
        print(f"{name:12} {len(times)} checks, {len(times) - len(ok)} failed, slowest {max(ok, default=0):.3f} s")
    return 1 if any(t is None for t in results["health port"]) else 0


OPTIONS = [("grpc.max_receive_message_length", 64 << 20)]


def _devices(port: int, stop: float) -> None:
    """ListDevices of a large vendor, back to back, until ``stop``."""
    import grpc

    from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}", options=OPTIONS) as channel:
        stub = pb_grpc.PciNameStub(channel)
        while time.monotonic() < stop:
            try:
                for _ in stub.ListDevices(pb.ListDevicesRequest(vendor="8086"), timeout=30):
                    pass
            except grpc.RpcError:
                time.sleep(0.05)


def _lint_request():
    """A Lint of 90,000 YAML nodes."""
    from pciname.server._proto import pciname_pb2 as pb

    return pb.LintRequest(files=[pb.LintFile(name="big.yaml", text="- a\n" * 90_000)])


def _lint(port: int, stop: float, request) -> None:
    """``request`` (a Lint), back to back, until ``stop``."""
    import grpc

    from pciname.server._proto import pciname_pb2_grpc as pb_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}", options=OPTIONS) as channel:
        stub = pb_grpc.PciNameStub(channel)
        while time.monotonic() < stop:
            try:
                stub.Lint(request, timeout=30)
            except grpc.RpcError:
                time.sleep(0.05)


def _probe(port: int, stop: float, times: list[float | None]) -> None:
    """A liveness Check every 0.2 s until ``stop``: how long each took (None: it failed)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while time.monotonic() < stop:
            started = time.monotonic()
            try:
                stub.Check(health_pb2.HealthCheckRequest(service="liveness"), timeout=3)
                times.append(time.monotonic() - started)
            except grpc.RpcError:
                times.append(None)
            time.sleep(0.2)


if __name__ == "__main__":
    sys.exit(main())
