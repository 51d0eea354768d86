"""Start-up of ``pciname serve`` to SERVING, against a bare grpcio server, in one run.

    python bench/serve_start.py [--runs N] [--venv DIR]

Starts, interleaved (the order rotating run by run) and side by side, ``--runs`` times each (default 7):

* a bare Python gRPC server with only the health service (grpcio, 4 worker
  threads): the baseline;
* ``pciname serve`` with an empty cache directory (cold: what every new pod
  of ``deploy/`` is, its cache an ``emptyDir``);
* ``pciname serve`` with the cache a cold start left (warm).

Each is timed from exec to its health service answering SERVING (the
``readiness`` service for ``pciname serve``, ``""`` for the baseline),
polled by a client in this process; the RSS of the process is read then
(``/proc/PID/status``). Prints the medians and the ratios to the baseline
(goals: cold <= 3x, warm <= 2x; RSS warm about 91 MB or less).

Everything runs from a venv with a plain ``pip install .`` of this checkout
(bench/core.py's, built once in ``--venv``, pciname reinstalled on every
run), as users run it. Only loopback addresses are used.
"""

from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.core import Venv  # noqa: E402

BARE = """
import sys
from concurrent import futures
import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
servicer = health.HealthServicer()
servicer.set("", health_pb2.HealthCheckResponse.SERVING)
health_pb2_grpc.add_HealthServicer_to_server(servicer, server)
server.add_insecure_port("127.0.0.1:" + sys.argv[1])
server.start()
server.wait_for_termination()
"""

GOALS = {"cold": 3.0, "warm": 2.0}
RSS_WARM_MB = 91


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def rss_mb(pid: int) -> float:
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def until_serving(port: int, service: str, proc: subprocess.Popen[bytes], started: float) -> float:
    """Seconds from ``started`` until the health service ``service`` on
    ``port`` answers SERVING (each poll waits for the answer, so the
    server is asked again only once it has answered or refused)."""
    import grpc
    from grpc_health.v1 import health_pb2, health_pb2_grpc

    # gRPC backs off reconnecting after a refused connection (1 s at first):
    # short backoffs, so the poll sees the port as soon as it is bound.
    options = [
        ("grpc.initial_reconnect_backoff_ms", 5),
        ("grpc.min_reconnect_backoff_ms", 5),
        ("grpc.max_reconnect_backoff_ms", 10),
    ]
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=options) as channel:
        stub = health_pb2_grpc.HealthStub(channel)
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited {proc.returncode} before SERVING")
            try:
                status = stub.Check(health_pb2.HealthCheckRequest(service=service), timeout=1).status
            except grpc.RpcError:
                status = None
            if status == health_pb2.HealthCheckResponse.SERVING:
                return time.perf_counter() - started
            time.sleep(0.002)  # a poll interval, not a wait for anything


def start_once(cmd: list[str], port: int, service: str, env: dict[str, str]) -> tuple[float, float]:
    started = time.perf_counter()
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        seconds = until_serving(port, service, proc, started)
        return seconds, rss_mb(proc.pid)
    finally:
        proc.terminate()
        proc.wait(timeout=60)


def serve_cmd(venv: Venv, port: int) -> list[str]:
    return [
        str(venv.pciname),
        "serve",
        "--listen",
        f"127.0.0.1:{port}",
        "--insecure",
        "--watch-interval",
        "0",
        "--shutdown-delay",
        "0",
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path(tempfile.gettempdir()) / "pciname-bench-venv",
        help="where the plain-install venv is built once and reused",
    )
    parser.add_argument("--service", default="readiness", help="pciname's health service polled")
    args = parser.parse_args()
    venv = Venv(args.venv)
    venv.prepare()
    base_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    samples: dict[str, list[tuple[float, float]]] = {"bare": [], "cold": [], "warm": []}
    with tempfile.TemporaryDirectory() as work:
        warm_cache = Path(work) / "warm"
        warm_env = dict(base_env, PCINAME_CACHE_DIR=str(warm_cache))
        port = free_port()
        start_once(serve_cmd(venv, port), port, args.service, warm_env)  # leaves the warm cache
        for run in range(args.runs):
            starts = {
                "bare": lambda port: start_once([str(venv.python), "-c", BARE, str(port)], port, "", base_env),
                "cold": lambda port, run=run: start_once(
                    serve_cmd(venv, port), port, args.service, dict(base_env, PCINAME_CACHE_DIR=f"{work}/cold-{run}")
                ),
                "warm": lambda port: start_once(serve_cmd(venv, port), port, args.service, warm_env),
            }
            order = list(starts)[run % 3 :] + list(starts)[: run % 3]  # each goes first, second and third in turn
            for key in order:
                samples[key].append(starts[key](free_port()))
    report(samples, args.runs, args.service)


def report(samples: dict[str, list[tuple[float, float]]], runs: int, service: str) -> None:
    medians = {k: (statistics.median(s for s, _ in v), statistics.median(r for _, r in v)) for k, v in samples.items()}
    labels = {
        "bare": "bare grpcio health server (4 threads), health ''",
        "cold": f"pciname serve, empty cache directory, health {service!r}",
        "warm": f"pciname serve, warm cache, health {service!r}",
    }
    print(f"start to SERVING, median of {runs} runs each, interleaved, from the venv (plain pip install)")
    for key, (seconds, rss) in medians.items():
        spread = ", ".join(f"{s * 1000:.0f}" for s, _ in samples[key])
        print(f"  {labels[key]}: {seconds * 1000:7.1f} ms, RSS {rss:5.1f} MB  (runs, ms: {spread})")
    base = medians["bare"][0]
    print("goals (ratios measured in this run)")
    for key, bound in GOALS.items():
        ratio = medians[key][0] / base
        print(f"  {'met    ' if ratio <= bound else 'NOT met'}  {key}/bare: {ratio:.2f}x, bound {bound:g}x")
    rss = medians["warm"][1]
    print(
        f"  {'met    ' if rss <= RSS_WARM_MB else 'NOT met'}  RSS warm at SERVING: {rss:.1f} MB, bound ~{RSS_WARM_MB} MB"
    )


if __name__ == "__main__":
    main()
