"""Speed of the core, as ratios against baselines measured in the same run.

    python bench/core.py [--repeat N]

Prints:
* parse of data/pci.ids: fast loader and pyparsing grammar (ms), and the
  ratio to the time lspci needs to load names from the same file
  (``lspci -i FILE -F DUMP`` minus ``lspci -n -F DUMP``, which loads none);
* ``pciname lookup 10de:2236`` wall time, cold (empty cache) and warm,
  as a ratio to ``python -c pass`` on the same interpreter (goal < 2x);
* ``pciname.resolve()`` in a loop vs a plain dict lookup of the same key
  (goal < 5x);
* a bulk ``lookup --stdin`` of every NVIDIA device id, per profile, minus
  the start-up of a single lookup (goal: well under a second).

The shared snapshots (``../shared/pciids/kubevirt-gpu-device-plugin``) are
used when present so that every profile can be measured.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SHARED_SNAPSHOTS = REPO.parent / "shared" / "pciids" / "kubevirt-gpu-device-plugin"
sys.path.insert(0, str(REPO))


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def wall(cmd: list[str], env: dict, stdin: bytes | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def interleaved(cmds: dict[str, list[str]], env: dict, repeat: int, stdin: dict[str, bytes] | None = None) -> dict[str, float]:
    """Median wall ms of each command, runs interleaved so drift hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            samples[name].append(wall(cmd, env, (stdin or {}).get(name)))
    return {name: median_ms(s) for name, s in samples.items()}


def bench_parse(repeat: int) -> None:
    from pciname.paths import embedded_pciids_path
    from pciname.pciids.loader import load_bytes

    path = embedded_pciids_path()
    data = path.read_bytes()
    loader_ms = median_ms([timeit.timeit(lambda: load_bytes(data), number=1) for _ in range(repeat)])
    lines = data.count(b"\n")
    print(f"parse data/pci.ids ({len(data) / 1e6:.2f} MB, {lines} lines)")
    print(f"  fast loader:        {loader_ms:8.1f} ms")
    try:
        from pciname.pciids.grammar import check_bytes
    except ImportError:
        grammar_ms = None
    else:
        grammar_ms = median_ms([timeit.timeit(lambda: check_bytes(data), number=1) for _ in range(max(1, repeat // 4))])
        print(f"  pyparsing grammar:  {grammar_ms:8.1f} ms")
    lspci = shutil.which("lspci")
    if not lspci:
        print("  lspci: not installed (apt-get install pciutils) - no ratio")
        return
    with tempfile.TemporaryDirectory() as tmp:
        dump = Path(tmp) / "one.dump"
        # One NVIDIA function: config space header in `lspci -x` form.
        dump.write_text("00:00.0 VGA compatible controller: x\n00: de 10 36 22 00 00 00 00 a1 00 00 03 00 00 00 00\n")
        env = {**os.environ, "LC_ALL": "C"}
        times = interleaved(
            {
                "names": [lspci, "-i", str(path), "-F", str(dump)],
                "numeric": [lspci, "-n", "-F", str(dump)],
            },
            env,
            repeat * 4,
        )
    lspci_load = max(times["names"] - times["numeric"], 0.01)
    print(f"  lspci name load:    {lspci_load:8.1f} ms  (lspci -i FILE {times['names']:.1f} ms - lspci -n {times['numeric']:.1f} ms)")
    print(f"  ratio loader/lspci: {loader_ms / lspci_load:8.1f}x")
    if grammar_ms:
        print(f"  ratio grammar/lspci:{grammar_ms / lspci_load:8.1f}x")


def bytecode_env() -> dict:
    """The environment for timed runs, with pciname's bytecode compiled.

    ``pip install`` compiles an installed package's bytecode; a process run
    with PYTHONDONTWRITEBYTECODE against a checkout would instead compile
    pciname's sources on every start, which is not how it runs for users.
    """
    import compileall
    import pciname

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    compileall.compile_dir(Path(pciname.__file__).parent, quiet=1)
    return env


def bench_cli(repeat: int) -> None:
    script = shutil.which("pciname")
    if script is None:
        print("pciname is not installed (pip install .): skipping the CLI figures")
        return
    with tempfile.TemporaryDirectory() as cache:
        env = {**bytecode_env(), "PCINAME_CACHE_DIR": cache}
        cold = wall([script, "lookup", "10de:2236"], env)
        times = interleaved(
            {
                "python -c pass": [sys.executable, "-c", "pass"],
                "pciname lookup 10de:2236": [script, "lookup", "10de:2236"],
            },
            env,
            repeat * 2,
        )
    base = times["python -c pass"]
    warm = times["pciname lookup 10de:2236"]
    print("CLI start-up (median wall time)")
    print(f"  python -c pass:                   {base:7.1f} ms")
    print(f"  pciname lookup 10de:2236 (warm):  {warm:7.1f} ms  ratio {warm / base:.2f}x (goal < 2x)")
    print(f"  pciname lookup 10de:2236 (cold):  {cold * 1000:7.1f} ms  (first run: parses and caches the file)")


def bench_resolve(repeat: int) -> None:
    import pciname

    pciname.resolve("10de:2236")
    table = {"10de:2236": pciname.resolve("10de:2236")}
    n = 200_000
    resolve_s = min(timeit.repeat(lambda: pciname.resolve("10de:2236"), number=n, repeat=repeat))
    dict_s = min(timeit.repeat(lambda: table["10de:2236"], number=n, repeat=repeat))
    print("resolve() in a loop (same device)")
    print(f"  dict lookup:        {dict_s / n * 1e9:7.0f} ns")
    print(f"  pciname.resolve():  {resolve_s / n * 1e9:7.0f} ns  ratio {resolve_s / dict_s:.2f}x (goal < 5x)")


def bench_bulk(repeat: int) -> None:
    script = shutil.which("pciname")
    if script is None:
        return
    import pciname

    ids = sorted({r.device for r in pciname.devices("embedded")})
    if SHARED_SNAPSHOTS.is_dir():
        os.environ["PCINAME_SNAPSHOTS"] = str(SHARED_SNAPSHOTS)
    stdin = "\n".join(ids).encode()
    profiles = ["embedded"] + [p.name for p in pciname.profiles() if p.kind == "plugin" and p.installed]
    print(f"bulk lookup --stdin of {len(ids)} NVIDIA ids, minus single-lookup start-up (median)")
    with tempfile.TemporaryDirectory() as cache:
        env = {**bytecode_env(), "PCINAME_CACHE_DIR": cache}
        for profile in profiles:
            with tempfile.TemporaryDirectory() as empty:  # cold: nothing parsed yet
                cold = wall([script, "lookup", "--stdin", "-p", profile], {**env, "PCINAME_CACHE_DIR": empty}, stdin)
            times = interleaved(
                {
                    "single": [script, "lookup", "10de:2236", "-p", profile],
                    "bulk": [script, "lookup", "--stdin", "-p", profile],
                },
                env,
                repeat,
                {"bulk": stdin},
            )
            print(
                f"  {profile:36s} bulk {times['bulk'] - times['single']:6.1f} ms on top of start-up"
                f"  (cold, parsing the file: {cold * 1000:6.0f} ms total)"
            )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    bench_parse(args.repeat)
    bench_cli(args.repeat)
    bench_resolve(args.repeat)
    bench_bulk(max(3, args.repeat // 3))


if __name__ == "__main__":
    main()
