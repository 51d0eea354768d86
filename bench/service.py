"""Speed and load of the gRPC name service, on loopback, measured in one run.

    python bench/service.py [--seconds 5] [--concurrency 8] [--processes 2] [--soak-seconds 60]

Starts ``python -m pciname serve`` on 127.0.0.1 (every profile loaded, from
the package) and prints:

* unary ``Resolve`` requests/s vs the health ``Check`` RPC on the same server,
  same client harness (goal: ratio >= 0.8);
* ``ResolveBatch`` of 1,000 devices: devices/s (goal >= 200,000/s);
* p50/p99 latency of ``Resolve`` at a fixed concurrency;
* server RSS with every profile loaded, after start-up and after the load
  (goal < 150 MB);
* a soak (``--soak-seconds``, default 60; 0 skips it) at the highest rate the
  clients sustain, mixed Resolve/ResolveBatch over several profiles, with a
  reload every 5 s (SIGHUP, alternating the content of a --pciids file so
  each reload swaps in different data): every error is counted (goal: 0).

Clients are separate processes (``--processes``) with ``--concurrency``
threads in all, in closed loops. Exit status 1 if the soak saw any error.
Only loopback addresses are used.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import queue
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

PROFILES = ["preview", "latest", "kubevirt-gpu-device-plugin@v1.2.1", "gpu-operator@v23.9.2", "custom"]


def custom_pciids(name: str) -> str:
    return (
        "# Version: 2030.01.01\n10de  NVIDIA Corporation\n"
        f"\t2236  {name}\n\t1eb8  TU104GL [Tesla T4]\n\t20b5  GA100 [A100 PCIe 80GB]\n"
    )


# -- the server ---------------------------------------------------------------------


class Server:
    def __init__(self, workdir: Path, extra: list[str]) -> None:
        self.custom = workdir / "custom.ids"
        self.custom.write_text(custom_pciids("BENCH NAME A"))
        env = dict(os.environ)
        env["PCINAME_CACHE_DIR"] = str(workdir / "cache")
        env["PYTHONPATH"] = str(REPO) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "pciname",
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--insecure",
                "--metrics-listen",
                "127.0.0.1:0",
                "--log-format",
                "json",
                "--watch-interval",
                "0",
                "--pciids",
                str(self.custom),
                *extra,
            ],
            cwd=REPO,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.logs: queue.Queue = queue.Queue()
        self.entries: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()
        self.port = self.wait("listening")["port"]
        self.metrics_port = None
        self.loaded = self.wait("data loaded")

    def _read(self) -> None:
        for line in self.proc.stderr:
            try:
                entry = json.loads(line)
            except ValueError:
                entry = {"msg": line.strip()}
            self.entries.append(entry)
            self.logs.put(entry)

    def wait(self, msg: str, timeout: float = 120) -> dict:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                entry = self.logs.get(timeout=0.5)
            except queue.Empty:
                if self.proc.poll() is not None:
                    raise SystemExit(f"server exited {self.proc.returncode}: {self.entries}") from None
                continue
            if entry.get("msg") == msg:
                return entry
        raise SystemExit(f"server did not log {msg!r} in {timeout}s")

    def rss_mb(self) -> tuple[float, float]:
        """(VmRSS, VmHWM) in MB."""
        fields = {}
        with open(f"/proc/{self.proc.pid}/status") as status:
            for line in status:
                key, _, value = line.partition(":")
                if key in ("VmRSS", "VmHWM"):
                    fields[key] = int(value.split()[0]) / 1024
        return fields["VmRSS"], fields["VmHWM"]

    def stop(self) -> int:
        self.proc.send_signal(signal.SIGTERM)
        return self.proc.wait(60)


# -- clients (separate processes) ------------------------------------------------------------


def _client_process(target: str, kind: str, seconds: float, threads: int, start_at: float, out) -> None:
    import grpc
    from grpc_health.v1 import health_pb2_grpc

    from pciname.server._proto import pciname_pb2_grpc as pb_grpc

    channel = grpc.insecure_channel(target, options=[("grpc.max_receive_message_length", 64 * 1024 * 1024)])
    grpc.channel_ready_future(channel).result(timeout=30)
    stub = pb_grpc.PciNameStub(channel)
    health = health_pb2_grpc.HealthStub(channel)
    results = []

    def run(index: int) -> None:
        results.append(_closed_loop(_call(kind, index, stub, health), start_at, seconds))

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    channel.close()
    latencies = [x for r in results for x in r[0]]
    out.put(
        (
            len(latencies),
            sum(r[1] for r in results),
            sum(r[2] for r in results),
            [e for r in results for e in r[3]],
            latencies[:: max(1, len(latencies) // 20000)],
        )
    )


EVERYTHING = [f"10de:{i:04x}" for i in range(0x2200, 0x2200 + 1000)]


def _call(kind: str, index: int, stub, health):
    """One client thread's call of ``kind``: it returns how many devices it resolved."""
    from grpc_health.v1 import health_pb2

    from pciname.server._proto import pciname_pb2 as pb

    if kind == "check":
        request = health_pb2.HealthCheckRequest(service="")
        return lambda: (health.Check(request, timeout=10), 1)[1]
    if kind == "resolve":
        request = pb.ResolveRequest(device="10de:2236", profile="latest")
        return lambda: (stub.Resolve(request, timeout=10), 1)[1]
    if kind == "batch":
        request = pb.ResolveBatchRequest(devices=EVERYTHING, profile="latest")

        def batch():
            response = stub.ResolveBatch(request, timeout=30)
            if len(response.results) != len(EVERYTHING):
                raise RuntimeError("short batch")
            return len(response.results)

        return batch
    if kind == "soak":
        return _mixed(index, stub)
    raise ValueError(kind)


def _mixed(index: int, stub):
    """The soak's call: Resolve over the profiles in turn, every tenth a ResolveBatch of 100."""
    from pciname.server._proto import pciname_pb2 as pb

    counter = [index]

    def mixed():
        counter[0] += 1
        profile = PROFILES[counter[0] % len(PROFILES)]
        if counter[0] % 10 == 0:
            devices = EVERYTHING[(counter[0] * 37) % 900 :][:100]
            response = stub.ResolveBatch(pb.ResolveBatchRequest(devices=devices, profile=profile), timeout=30)
            if len(response.results) != len(devices):
                raise RuntimeError("short batch")
            return len(devices)
        device = EVERYTHING[(counter[0] * 7919) % len(EVERYTHING)]
        stub.Resolve(pb.ResolveRequest(device=device, profile=profile), timeout=10)
        return 1

    return mixed


def _closed_loop(call, start_at: float, seconds: float) -> tuple[list[float], int, int, list[str]]:
    """``call`` warmed up, then called back to back from ``start_at`` for
    ``seconds`` (once at least, so a client that was slow to start still
    gives a figure): (latencies, items, errors, the first errors)."""
    for _ in range(3):  # warm-up
        call()
    while time.time() < start_at:
        time.sleep(0.001)
    end = start_at + seconds
    latencies, items, errors, first_errors = [], 0, 0, []
    perf = time.perf_counter
    while time.time() < end or not (latencies or errors):
        t0 = perf()
        try:
            items += call()
        except Exception as error:  # noqa: BLE001 - every failure is counted
            errors += 1
            if len(first_errors) < 3:
                first_errors.append(repr(error)[:300])
            continue
        latencies.append(perf() - t0)
    return latencies, items, errors, first_errors


def load(target: str, kind: str, seconds: float, concurrency: int, processes: int) -> dict:
    ctx = multiprocessing.get_context("spawn")
    out = ctx.Queue()
    start_at = time.time() + 3.0  # every process connected and warmed up by then
    per = [concurrency // processes + (1 if i < concurrency % processes else 0) for i in range(processes)]
    procs = [ctx.Process(target=_client_process, args=(target, kind, seconds, n, start_at, out)) for n in per if n]
    for p in procs:
        p.start()
    gathered = [out.get(timeout=seconds + 120) for _ in procs]
    for p in procs:
        p.join(30)
    calls = sum(g[0] for g in gathered)
    latencies = sorted(x for g in gathered for x in g[4])
    return {
        "calls": calls,
        "items": sum(g[1] for g in gathered),
        "errors": sum(g[2] for g in gathered),
        "first_errors": [e for g in gathered for e in g[3]][:5],
        "per_second": calls / seconds,
        "items_per_second": sum(g[1] for g in gathered) / seconds,
        "p50_ms": statistics.median(latencies) * 1000 if latencies else float("nan"),
        "p99_ms": latencies[int(len(latencies) * 0.99) - 1] * 1000 if latencies else float("nan"),
    }


def merge(runs: list[dict], seconds: float) -> dict:
    """Rounds of one kind as one measurement over ``seconds`` in all."""
    merged = {
        "calls": sum(r["calls"] for r in runs),
        "items": sum(r["items"] for r in runs),
        "errors": sum(r["errors"] for r in runs),
        "first_errors": [e for r in runs for e in r["first_errors"]][:5],
        # latency percentiles: the mean of the rounds' (same concurrency, same length)
        "p50_ms": statistics.mean(r["p50_ms"] for r in runs),
        "p99_ms": statistics.mean(r["p99_ms"] for r in runs),
    }
    merged["per_second"] = merged["calls"] / seconds
    merged["items_per_second"] = merged["items"] / seconds
    return merged


def metrics(port: int) -> dict:
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        text = response.read().decode()
    samples = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            samples[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return samples


# -- main --------------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="length of each measured phase (default 5)")
    parser.add_argument("--concurrency", type=int, default=8, help="client threads in all (default 8)")
    parser.add_argument("--processes", type=int, default=2, help="client processes (default 2)")
    parser.add_argument("--soak-seconds", type=float, default=60.0, help="soak length (default 60; 0: skip)")
    parser.add_argument("--reload-every", type=float, default=5.0, help="seconds between reloads in the soak")
    parser.add_argument("--max-workers", type=int, default=16, help="server --max-workers (default 16)")
    args = parser.parse_args()

    print(
        f"pciname service bench: loopback, {os.cpu_count()} CPUs, python {sys.version.split()[0]}, "
        f"{args.processes} client processes x {args.concurrency} threads in all, {args.seconds:g} s per phase"
    )
    with tempfile.TemporaryDirectory(prefix="pciname-bench-") as tmp:
        server = Server(Path(tmp), ["--max-workers", str(args.max_workers)])
        listening = next(e for e in server.entries if e.get("msg") == "listening")
        server.metrics_port = listening["metrics_port"]
        target = f"127.0.0.1:{server.port}"
        rss, hwm = server.rss_mb()
        print(
            f"\nserver: {server.loaded['profiles']} profiles loaded from {server.loaded['files']} pci.ids files "
            f"in {server.loaded['seconds']:.2f} s"
        )
        print(f"server RSS after start-up: {rss:.1f} MB (peak {hwm:.1f} MB)   goal < 150 MB")

        _measure(server, target, args)
        soak_errors = _soak(server, target, args) if args.soak_seconds > 0 else 0

        code = server.stop()
        print(f"\nserver exit status after SIGTERM: {code}")
    return 1 if soak_errors or code != 0 else 0


def _measure(server: Server, target: str, args: argparse.Namespace) -> None:
    """Check and Resolve in interleaved rounds, then ResolveBatch, and the server's memory after."""
    # Interleaved rounds, so neither side gets the warmer server.
    rounds = {"check": [], "resolve": []}
    for kind in ("check", "resolve", "resolve", "check"):
        rounds[kind].append(load(target, kind, args.seconds / 2, args.concurrency, args.processes))
    check, resolve = (merge(rounds[k], args.seconds) for k in ("check", "resolve"))
    ratio = resolve["per_second"] / check["per_second"]
    print(
        f"\nhealth Check:        {check['per_second']:9.0f} req/s   p50 {check['p50_ms']:.2f} ms   "
        f"p99 {check['p99_ms']:.2f} ms"
    )
    print(
        f"Resolve (unary):     {resolve['per_second']:9.0f} req/s   p50 {resolve['p50_ms']:.2f} ms   "
        f"p99 {resolve['p99_ms']:.2f} ms   (concurrency {args.concurrency})"
    )
    print(f"Resolve / Check:     {ratio:9.2f} x          goal >= 0.8")

    batch = load(target, "batch", args.seconds, max(2, args.processes), args.processes)
    print(
        f"\nResolveBatch x1000:  {batch['items_per_second']:9.0f} devices/s ({batch['per_second']:.0f} batches/s, "
        f"p50 {batch['p50_ms']:.1f} ms)   goal >= 200000 devices/s   ratio {batch['items_per_second'] / 200_000:.2f} x goal"
    )

    rss, hwm = server.rss_mb()
    print(f"\nserver RSS after load: {rss:.1f} MB (peak {hwm:.1f} MB)   goal < 150 MB   ratio {hwm / 150:.2f} x goal")
    errors = check["errors"] + resolve["errors"] + batch["errors"]
    if errors:
        print(
            f"errors in the measured phases: {errors}: {check['first_errors'] + resolve['first_errors'] + batch['first_errors']}"
        )


def _soak(server: Server, target: str, args: argparse.Namespace) -> int:
    """The soak: mixed load with a reload every --reload-every seconds; the errors it saw."""
    before = metrics(server.metrics_port)
    stop = threading.Event()
    reloads = []

    def reloader() -> None:
        flip = 0
        while not stop.wait(args.reload_every):
            flip ^= 1
            tmp_file = server.custom.with_name(".custom.tmp")
            tmp_file.write_text(custom_pciids("BENCH NAME B" if flip else "BENCH NAME A"))
            os.replace(tmp_file, server.custom)
            server.proc.send_signal(signal.SIGHUP)
            reloads.append(time.monotonic())

    thread = threading.Thread(target=reloader, daemon=True)
    thread.start()
    soak = load(target, "soak", args.soak_seconds, args.concurrency, args.processes)
    stop.set()
    thread.join()
    time.sleep(0.5)
    after = metrics(server.metrics_port)

    def delta(name, **labels):
        key = (name, tuple(sorted(labels.items())))
        return after.get(key, 0) - before.get(key, 0)

    ok_reloads = delta("pciname_reloads_total", trigger="signal", result="success")
    bad_reloads = delta("pciname_reloads_total", trigger="signal", result="failure")
    server_errors = sum(v - before.get(k, 0) for k, v in after.items() if k[0] == "pciname_rpc_errors_total")
    soak_errors = soak["errors"] + int(server_errors)
    rss, hwm = server.rss_mb()
    print(
        f"\nsoak {args.soak_seconds:g} s: {soak['per_second']:.0f} req/s ({soak['items_per_second']:.0f} devices/s) "
        f"mixed Resolve/ResolveBatch over {len(PROFILES)} profiles, p50 {soak['p50_ms']:.2f} ms, "
        f"p99 {soak['p99_ms']:.2f} ms"
    )
    print(
        f"  reloads: {len(reloads)} SIGHUPs, {ok_reloads:.0f} succeeded, {bad_reloads:.0f} failed; "
        f"data generation now {after.get(('pciname_data_generation', ()), 0):.0f}"
    )
    print(f"  errors: {soak['errors']} client-side, {server_errors:.0f} server-side   goal 0")
    print(f"  server RSS after soak: {rss:.1f} MB (peak {hwm:.1f} MB)")
    if soak["first_errors"]:
        print(f"  first errors: {soak['first_errors']}")
    return soak_errors


if __name__ == "__main__":
    sys.exit(main())
