"""The name service under load beside a bare grpcio server, side by side in one run.

    python bench/service_load.py [--seconds 4] [--concurrency 1,8,32,64] [--processes 2]

Starts ``python -m pciname serve`` on 127.0.0.1 and, in a process of its
own, a bare grpcio server (the same generated servicer, the same thread
pool size and message limits) that answers from a dict the very messages
pciname gave for the same requests. Both are loaded in turn by the same
clients (separate processes, closed loops, ``--processes`` of them with the
threads split between them) for ``Resolve`` of one id and ``ResolveBatch``
of 1,000 ids, at each concurrency, and it prints for each server:
requests/s, p50/p99 latency and the server's CPU per request (its
utime+stime from /proc over the phase, divided by the calls), then
pciname's ratio to the bare server. Ratios only: the machine's load is
printed beside them (``/proc/loadavg``), since other work moves every figure.
"""

from __future__ import annotations

import argparse
import os
import pickle
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(BENCH))

import service  # noqa: E402 - bench/service.py: the pciname server and the client harness

DEVICE = "10de:2236"
PROFILE = "latest"
TICKS = os.sysconf("SC_CLK_TCK")


def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of ``pid`` so far (proc(5): fields 14, 15)."""
    with open(f"/proc/{pid}/stat") as stat:
        fields = stat.read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def load_average() -> str:
    with open("/proc/loadavg") as loadavg:
        return " ".join(loadavg.read().split()[:3])


# -- the bare server (its own process) ---------------------------------------------------------


def bare_main(answers_file: str, max_workers: int) -> None:
    """A grpcio server answering Resolve and ResolveBatch from a dict, and nothing else."""
    from concurrent import futures

    import grpc

    from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc

    with open(answers_file, "rb") as handle:
        raw = pickle.load(handle)
    resolve = {key: pb.Resolution.FromString(value) for key, value in raw["resolve"].items()}
    batch = {key: pb.ResolveBatchResponse.FromString(value) for key, value in raw["batch"].items()}

    class Bare(pb_grpc.PciNameServicer):
        def Resolve(self, request, context):  # noqa: N802 - the generated name
            return resolve[(request.device, request.profile)]

        def ResolveBatch(self, request, context):  # noqa: N802 - the generated name
            return batch[(tuple(request.devices), request.profile)]

    server = grpc.server(
        futures.ThreadPoolExecutor(max_workers=max_workers),
        options=[("grpc.max_receive_message_length", 4 * 1024 * 1024), ("grpc.so_reuseport", 0)],
        maximum_concurrent_rpcs=256,
    )
    pb_grpc.add_PciNameServicer_to_server(Bare(), server)
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    print(port, flush=True)
    signal.sigwait({signal.SIGTERM})
    server.stop(0).wait()


class BareServer:
    def __init__(self, answers_file: Path, max_workers: int) -> None:
        env = dict(os.environ, PYTHONPATH=str(REPO))
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--bare", str(answers_file), "--max-workers", str(max_workers)],
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )
        assert self.proc.stdout is not None
        line = self.proc.stdout.readline()
        if not line.strip():
            raise SystemExit(f"the bare server did not start (exit {self.proc.wait()})")
        self.port = int(line)

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


def answers(target: str) -> dict:
    """pciname's own answers to the bench's requests, serialized, keyed as the bare server reads them."""
    import grpc

    from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc

    with grpc.insecure_channel(target) as channel:
        stub = pb_grpc.PciNameStub(channel)
        one = stub.Resolve(pb.ResolveRequest(device=DEVICE, profile=PROFILE), timeout=30)
        many = stub.ResolveBatch(pb.ResolveBatchRequest(devices=service.EVERYTHING, profile=PROFILE), timeout=60)
    return {
        "resolve": {(DEVICE, PROFILE): one.SerializeToString()},
        "batch": {(tuple(service.EVERYTHING), PROFILE): many.SerializeToString()},
    }


# -- one phase ---------------------------------------------------------------------------------


def phase(pid: int, port: int, kind: str, seconds: float, concurrency: int, processes: int) -> dict:
    """One closed-loop phase against the server ``pid`` on ``port``, with its CPU over the phase.

    The clients connect and warm up first and start together at a set time;
    the CPU is read from then to the end of the measured seconds (the
    clients' warm-up calls fall outside it)."""
    start_cpu = [0.0]
    result: dict = {}

    def measured() -> None:
        result.update(service.load(f"127.0.0.1:{port}", kind, seconds, concurrency, min(processes, concurrency)))

    import threading

    thread = threading.Thread(target=measured)
    thread.start()
    time.sleep(3.0)  # service.load starts the clients' loops 3 s after it begins
    start_cpu[0] = cpu_seconds(pid)
    time.sleep(seconds)
    used = cpu_seconds(pid) - start_cpu[0]
    thread.join()
    result["cpu_ms_per_call"] = used * 1000 / max(result["calls"], 1)
    result["load"] = load_average()
    return result


def row(name: str, r: dict) -> str:
    return (
        f"  {name:8} {r['per_second']:9.0f} req/s   p50 {r['p50_ms']:7.2f} ms   p99 {r['p99_ms']:7.2f} ms   "
        f"server CPU {r['cpu_ms_per_call']:7.3f} ms/req   errors {r['errors']}   load {r['load']}"
    )


def compare(kind: str, concurrency: int, ours: dict, bare: dict) -> list[str]:
    throughput = ours["per_second"] / bare["per_second"] if bare["per_second"] else float("nan")
    cpu = ours["cpu_ms_per_call"] / bare["cpu_ms_per_call"] if bare["cpu_ms_per_call"] else float("nan")
    p99 = ours["p99_ms"] / bare["p99_ms"] if bare["p99_ms"] else float("nan")
    return [
        f"{kind} at concurrency {concurrency}:",
        row("bare", bare),
        row("pciname", ours),
        f"  pciname / bare: throughput {throughput:.2f}x   p99 {p99:.2f}x   server CPU per request {cpu:.2f}x",
    ]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=4.0, help="length of each measured phase (default 4)")
    parser.add_argument("--concurrency", default="1,8,32,64", help="client threads in all, a list (default 1,8,32,64)")
    parser.add_argument("--processes", type=int, default=2, help="client processes (default 2)")
    parser.add_argument("--max-workers", type=int, default=16, help="both servers' thread pool (default 16)")
    parser.add_argument("--kinds", default="resolve,batch", help="resolve, batch or both (default both)")
    parser.add_argument("--bare", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.bare:
        bare_main(args.bare, args.max_workers)
        return 0
    levels = [int(level) for level in args.concurrency.split(",")]
    kinds = args.kinds.split(",")
    print(
        f"pciname service under load vs a bare grpcio server: loopback, {os.cpu_count()} CPUs, "
        f"python {sys.version.split()[0]}, {args.processes} client processes, {args.seconds:g} s per phase, "
        f"load {load_average()}"
    )
    with tempfile.TemporaryDirectory(prefix="pciname-bench-") as tmp:
        ours = service.Server(Path(tmp), ["--max-workers", str(args.max_workers)])
        try:
            answers_file = Path(tmp) / "answers.pickle"
            answers_file.write_bytes(pickle.dumps(answers(f"127.0.0.1:{ours.port}")))
            bare = BareServer(answers_file, args.max_workers)
        except BaseException:
            ours.stop()  # not left serving when the bare server cannot start
            raise
        errors = 0
        try:
            for kind in kinds:
                for level in levels:
                    # bare, ours, ours, bare: neither gets the warmer machine
                    runs = {"bare": [], "ours": []}
                    for who in ("bare", "ours", "ours", "bare"):
                        pid, port = (bare.proc.pid, bare.port) if who == "bare" else (ours.proc.pid, ours.port)
                        runs[who].append(phase(pid, port, kind, args.seconds / 2, level, args.processes))
                    merged = {who: _merged(r, args.seconds) for who, r in runs.items()}
                    errors += merged["bare"]["errors"] + merged["ours"]["errors"]
                    print("\n".join(compare(kind, level, merged["ours"], merged["bare"])), flush=True)
        finally:
            bare.stop()
            ours.stop()
    return 1 if errors else 0


def _merged(runs: list[dict], seconds: float) -> dict:
    merged = service.merge(runs, seconds)
    merged["cpu_ms_per_call"] = sum(r["cpu_ms_per_call"] * r["calls"] for r in runs) / max(merged["calls"], 1)
    merged["load"] = runs[-1]["load"]
    return merged


if __name__ == "__main__":
    sys.exit(main())
