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
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        server = Server(Path(tmp), ["--health-listen", "127.0.0.1:0"])
        health_port = next(e["health_port"] for e in server.entries if e.get("msg") == "listening")
        stop = time.monotonic() + args.seconds
        options = [("grpc.max_receive_message_length", 64 << 20)]

        def devices() -> None:
            with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=options) as channel:
                stub = pb_grpc.PciNameStub(channel)
                while time.monotonic() < stop:
                    try:
                        for _ in stub.ListDevices(pb.ListDevicesRequest(vendor="8086"), timeout=30):
                            pass
                    except grpc.RpcError:
                        time.sleep(0.05)

        text = "- a\n" * 90_000
        request = pb.LintRequest(files=[pb.LintFile(name="big.yaml", text=text)])

        def lint() -> None:
            with grpc.insecure_channel(f"127.0.0.1:{server.port}", options=options) as channel:
                stub = pb_grpc.PciNameStub(channel)
                while time.monotonic() < stop:
                    try:
                        stub.Lint(request, timeout=30)
                    except grpc.RpcError:
                        time.sleep(0.05)

        results: dict[str, list[float | None]] = {"health port": [], "gRPC port": []}

        def probe(name: str, port: int) -> None:
            with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
                stub = health_pb2_grpc.HealthStub(channel)
                while time.monotonic() < stop:
                    started = time.monotonic()
                    try:
                        stub.Check(health_pb2.HealthCheckRequest(service="liveness"), timeout=3)
                        results[name].append(time.monotonic() - started)
                    except grpc.RpcError:
                        results[name].append(None)
                    time.sleep(0.2)

        threads = [threading.Thread(target=devices) for _ in range(16)] + [
            threading.Thread(target=lint) for _ in range(20)
        ]
        threads += [
            threading.Thread(target=probe, args=("health port", health_port)),
            threading.Thread(target=probe, args=("gRPC port", server.port)),
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


if __name__ == "__main__":
    sys.exit(main())
