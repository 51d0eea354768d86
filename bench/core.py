"""Speed of the core, as ratios against baselines measured in the same run.

    python bench/core.py [--repeat N] [--venv DIR]

The CLI is timed as users run it: from a venv made with a plain
``pip install .`` of this checkout (not ``-e``: the editable finder adds
about 13 ms to every Python start, baseline included). The venv is built
once in ``--venv`` (default: a directory under the temp dir) and pciname is
reinstalled into it on every run. Prints:

* the wheel: size, and the time ``pip install --no-deps`` of it takes;
* parse of data/pci.ids: fast loader and pyparsing grammar (ms), and the
  ratio to the time lspci needs to load names from the same file
  (``lspci -i FILE -F DUMP`` minus ``lspci -n -F DUMP``, which loads none);
* ``pciname lookup 10de:2236`` wall time, warm, as a ratio to
  ``python -c pass`` from the same venv (goal < 2x), and the same figures
  from the editable install the tests use, labelled as such;
* per profile: a single lookup on an empty cache (cold: a packaged profile
  is answered from its packaged answers, pciname/packaged/, with nothing
  built; goal < 250 ms for the worst profile) and warm;
* ``pciname.resolve()`` in a loop vs a plain dict lookup of the same key
  (goal < 5x);
* ``pciname.resolve_many()`` of every NVIDIA device id vs a loop of
  ``pciname.resolve()`` over them (goal < 2x);
* a bulk ``lookup --stdin`` of every NVIDIA device id, per profile, minus
  the start-up of a single lookup;
* ``pciname serve`` start-up to SERVING with every profile loaded, on an
  empty and on a warm cache (reported, no bound);
* ``python -X importtime`` top 10 (cumulative) of ``pciname lookup
  10de:2236`` and of ``import pciname; pciname.resolve('10de:2236')``, from
  the venv on an empty cache.

Every plugin image's pci.ids ships in the package, so every profile is
measured.
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
sys.path.insert(0, str(REPO))


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def wall(cmd: list[str], env: dict, stdin: bytes | None = None) -> float:
    start = time.perf_counter()
    subprocess.run(cmd, env=env, input=stdin, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def interleaved(
    cmds: dict[str, list[str]], env: dict, repeat: int, stdin: dict[str, bytes] | None = None
) -> dict[str, float]:
    """Median wall ms of each command, runs interleaved so drift hits all alike."""
    samples: dict[str, list[float]] = {name: [] for name in cmds}
    for _ in range(repeat):
        for name, cmd in cmds.items():
            samples[name].append(wall(cmd, env, (stdin or {}).get(name)))
    return {name: median_ms(s) for name, s in samples.items()}


GOALS: list[tuple[str, float, float]] = []  # (what, ratio, bound), printed at the end


def goal(what: str, ratio: float, bound: float) -> str:
    GOALS.append((what, ratio, bound))
    return f"{ratio:.2f}x (goal < {bound:g}x: {'met' if ratio < bound else 'NOT met'})"


def lspci_dump(path: Path, device_ids: list[str]) -> None:
    """An ``lspci -F`` dump of one NVIDIA function per device id."""
    lines = []
    for i, device in enumerate(device_ids):
        bus, slot, fn = i // 256, (i // 8) % 32, i % 8
        lo, hi = device[2:4], device[0:2]
        lines.append(f"{bus:02x}:{slot:02x}.{fn} VGA compatible controller: x")
        lines.append(f"00: de 10 {lo} {hi} 00 00 00 00 a1 00 00 03 00 00 00 00")
        lines.append("")
    path.write_text("\n".join(lines))


def bench_parse(repeat: int) -> None:
    from pciname.base.paths import embedded_pciids_path
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
    print(
        f"  lspci name load:    {lspci_load:8.1f} ms  (lspci -i FILE {times['names']:.1f} ms - lspci -n {times['numeric']:.1f} ms)"
    )
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


def source_tree(into: Path) -> Path:
    """This checkout's files as a fresh clone would have them (tracked, plus
    untracked ones git does not ignore), copied into ``into``: setuptools
    reuses the checkout's ``build/`` and would ship files left there by
    earlier builds (old answer tables) in the wheel."""
    listed = (
        subprocess.run(
            ["git", "-C", str(REPO), "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
            check=True,
            capture_output=True,
        )
        .stdout.decode()
        .split("\0")
    )
    for name in filter(None, listed):
        source = REPO / name
        if source.is_file():
            (into / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, into / name)
    return into


class Venv:
    """A venv with a plain (non-editable) install of this checkout."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.python = root / "bin" / "python"
        self.pciname = root / "bin" / "pciname"

    def prepare(self) -> None:
        if not self.python.exists():
            subprocess.run([sys.executable, "-m", "venv", str(self.root)], check=True)
            subprocess.run([str(self.python), "-m", "pip", "install", "-q", str(REPO)], check=True)
        with tempfile.TemporaryDirectory() as wheels, tempfile.TemporaryDirectory() as tree:
            subprocess.run(
                [str(self.python), "-m", "pip", "wheel", "-q", "--no-deps", "-w", wheels, str(source_tree(Path(tree)))],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            (wheel,) = Path(wheels).glob("pciname-*.whl")
            start = time.perf_counter()
            subprocess.run(
                [str(self.python), "-m", "pip", "install", "-q", "--no-deps", "--force-reinstall", str(wheel)],
                check=True,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            seconds = time.perf_counter() - start
            import zipfile

            with zipfile.ZipFile(wheel) as archive:
                tables = [i for i in archive.infolist() if i.filename.startswith("pciname/packaged/")]
            print(
                f"wheel {wheel.name}: {wheel.stat().st_size / 1e6:.2f} MB (budget 1.5 MB), of which "
                f"{len(tables)} packaged answer files {sum(i.compress_size for i in tables) / 1e6:.2f} MB "
                f"({sum(i.file_size for i in tables) / 1e6:.2f} MB installed); "
                f"pip install --no-deps of it: {seconds:.1f} s; venv {self.root}"
            )


def bench_cli(repeat: int, venv: Venv) -> None:
    """Warm single lookups (default profile, a GPU Operator profile, JSON)
    from the venv, against ``python -c pass`` from the same venv and
    ``lspci -F one-function.dump -i data/pci.ids -nn``; the editable
    install's figures too, labelled."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    forms = {
        "lookup 10de:2236": ["lookup", "10de:2236"],
        "lookup 10de:2236 -p gpu-operator@v23.9.2": ["lookup", "10de:2236", "-p", "gpu-operator@v23.9.2"],
        "lookup 10de:2236 -o json": ["lookup", "10de:2236", "-o", "json"],
    }
    lspci = shutil.which("lspci")
    with tempfile.TemporaryDirectory() as cache:
        env["PCINAME_CACHE_DIR"] = cache
        for argv in forms.values():  # warm: catalogs and answer tables
            subprocess.run([str(venv.pciname), *argv], env=env, capture_output=True, check=False)
        cmds = {"venv: python -c pass": [str(venv.python), "-c", "pass"]}
        for label, argv in forms.items():
            cmds[f"venv: pciname {label}"] = [str(venv.pciname), *argv]
        if lspci:
            dump = Path(cache) / "one.dump"
            lspci_dump(dump, ["2236"])
            cmds["lspci"] = [lspci, "-F", str(dump), "-i", str(REPO / "data" / "pci.ids"), "-nn"]
        editable = shutil.which("pciname")
        if editable:
            cmds["editable: python -c pass"] = [sys.executable, "-c", "pass"]
            cmds["editable: pciname lookup 10de:2236"] = [editable, "lookup", "10de:2236"]
        times = interleaved(cmds, {**bytecode_env(), **env}, repeat * 2)
    base = times["venv: python -c pass"]
    print("CLI start-up, warm (median wall time), from the venv (plain pip install)")
    print(f"  python -c pass {base:6.1f} ms" + (f", lspci one function {times['lspci']:6.1f} ms" if lspci else ""))
    for label in forms:
        warm = times[f"venv: pciname {label}"]
        print(f"  pciname {label:42s} {warm:6.1f} ms  vs python {goal(label + ' / python', warm / base, 2.0)}")
        if lspci:
            print(f"  {'':50s}           vs lspci  {goal(label + ' / lspci', warm / times['lspci'], 2.0)}")
    if editable:
        base, warm = times["editable: python -c pass"], times["editable: pciname lookup 10de:2236"]
        print(
            f"  editable install (the finder inflates the baseline): python -c pass {base:6.1f} ms, "
            f"lookup {warm:6.1f} ms, ratio {warm / base:.2f}x"
        )


def bench_fresh_resolve(repeat: int, venv: Venv) -> None:
    """``python -c "import pciname; pciname.resolve('10de:2236')"`` vs ``python -c pass``,
    on a cache dir that does not exist (and stays so: nothing is built)."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp) / "cache"
        env["PCINAME_CACHE_DIR"] = str(cache)
        code = "import pciname; pciname.resolve('10de:2236')"
        times = interleaved(
            {"pass": [str(venv.python), "-c", "pass"], "resolve": [str(venv.python), "-c", code]}, env, repeat * 2
        )
        built = cache.exists()
    print(
        "fresh process: import pciname; pciname.resolve('10de:2236'), empty cache, from the venv"
        + (" (WARNING: the cache was written)" if built else " (nothing written)")
    )
    print(
        f"  python -c pass {times['pass']:6.1f} ms, import + resolve {times['resolve']:6.1f} ms  "
        f"ratio {goal('fresh import + resolve / python', times['resolve'] / times['pass'], 2.5)}"
    )


def bench_profiles(repeat: int, venv: Venv) -> None:
    """Cold (empty cache) and warm single lookups per profile, from the venv."""
    import pciname

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    profiles = [p.name for p in pciname.profiles() if p.kind in ("plugin", "preview")]
    print("single lookup per profile, from the venv (median wall time)")
    worst = (0.0, "")
    for profile in profiles:
        cmd = [str(venv.pciname), "lookup", "10de:2236", "-p", profile]
        cold = []
        for _ in range(max(1, repeat // 3)):
            with tempfile.TemporaryDirectory() as empty:
                cold.append(wall(cmd, {**env, "PCINAME_CACHE_DIR": empty}))
        with tempfile.TemporaryDirectory() as cache:
            warm_env = {**env, "PCINAME_CACHE_DIR": cache}
            wall(cmd, warm_env)
            warm = median_ms([wall(cmd, warm_env) for _ in range(repeat)])
        cold_ms = median_ms(cold)
        worst = max(worst, (cold_ms, profile))
        print(f"  {profile:36s} cold {cold_ms:6.1f} ms   warm {warm:6.1f} ms")
    print(f"  worst cold: {worst[1]} {worst[0]:.1f} ms ({'met' if worst[0] < 250 else 'NOT met'}: goal < 250 ms)")
    GOALS.append((f"first run, empty cache, worst profile ({worst[1]}) / 250 ms", worst[0] / 250, 1.0))


def bench_resolve(repeat: int) -> None:
    import pciname

    pciname.resolve("10de:2236")
    table = {"10de:2236": pciname.resolve("10de:2236")}
    n = 200_000
    resolve_s = min(timeit.repeat(lambda: pciname.resolve("10de:2236"), number=n, repeat=repeat))
    dict_s = min(timeit.repeat(lambda: table["10de:2236"], number=n, repeat=repeat))
    print("resolve() in a loop (same device)")
    print(f"  dict lookup:        {dict_s / n * 1e9:7.0f} ns")
    print(
        f"  pciname.resolve():  {resolve_s / n * 1e9:7.0f} ns  ratio {goal('resolve() loop / dict', resolve_s / dict_s, 5.0)}"
    )


def bench_resolve_many(repeat: int) -> None:
    import pciname

    for profile in ("latest", "preview"):
        ids = [r.device for r in pciname.devices(profile)]
        for device in ids:
            pciname.resolve(device, profile)
        loop = lambda ids=ids, profile=profile: [pciname.resolve(d, profile) for d in ids]  # noqa: E731
        many = lambda ids=ids, profile=profile: pciname.resolve_many(ids, profile)  # noqa: E731
        loop_s = min(timeit.repeat(loop, number=20, repeat=repeat))
        many_s = min(timeit.repeat(many, number=20, repeat=repeat))
        n = 20 * len(ids)
        ratio = goal(f"resolve_many / resolve() loop ({profile})", many_s / loop_s, 2.0)
        print(f"resolve_many() of every NVIDIA id ({len(ids)}, {profile}) vs a loop of resolve()")
        print(f"  loop: {loop_s / n * 1e9:6.0f} ns/id   resolve_many: {many_s / n * 1e9:6.0f} ns/id   ratio {ratio}")


def bench_bulk(repeat: int, venv: Venv) -> None:
    script = str(venv.pciname)
    import pciname

    ids = sorted({r.device for r in pciname.devices("preview")})
    stdin = "\n".join(ids).encode()
    profiles = [p.name for p in pciname.profiles() if p.kind in ("plugin", "preview")]
    print(f"bulk lookup --stdin of {len(ids)} NVIDIA ids, minus single-lookup start-up (median)")
    with tempfile.TemporaryDirectory() as cache:
        env = {**bytecode_env(), "PCINAME_CACHE_DIR": cache}
        env.pop("PYTHONPATH", None)
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
                f"  (cold, empty cache: {cold * 1000:6.0f} ms total)"
            )


def bench_bulk_vs_lspci(repeat: int, venv: Venv) -> None:
    """``pciname lookup --stdin`` of every NVIDIA id (default profile, warm)
    vs lspci naming the same functions from a -F dump."""
    import pciname

    lspci = shutil.which("lspci")
    if not lspci:
        print("bulk vs lspci: lspci not installed - no ratio")
        return
    ids = sorted({r.device for r in pciname.devices("preview")})
    stdin = "\n".join(ids).encode()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    with tempfile.TemporaryDirectory() as cache:
        env["PCINAME_CACHE_DIR"] = cache
        dump = Path(cache) / "all.dump"
        lspci_dump(dump, [i.partition(":")[2] for i in ids])
        subprocess.run([str(venv.pciname), "lookup", "--stdin"], env=env, input=stdin, capture_output=True, check=False)
        times = interleaved(
            {
                "pciname": [str(venv.pciname), "lookup", "--stdin"],
                "lspci": [lspci, "-F", str(dump), "-i", str(REPO / "data" / "pci.ids"), "-nn"],
            },
            env,
            repeat,
            {"pciname": stdin},
        )
    print(
        f"bulk: pciname lookup --stdin of {len(ids)} NVIDIA ids (default profile, warm) vs lspci -F of as many functions"
    )
    print(
        f"  pciname {times['pciname']:6.1f} ms, lspci {times['lspci']:6.1f} ms  "
        f"ratio {goal('lookup --stdin all ids / lspci', times['pciname'] / times['lspci'], 1.5)}"
    )


def bench_server_startup(venv: Venv) -> None:
    """``pciname serve`` from the venv, from exec to its "data loaded" log
    line (health turns SERVING right after it), with every installed profile
    loaded: on an empty cache and on the warm cache that run leaves."""
    import json

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    print("server start-up to SERVING (every profile loaded), from the venv; no bound")
    with tempfile.TemporaryDirectory() as cache:
        env["PCINAME_CACHE_DIR"] = cache
        for label in ("empty cache", "warm cache"):
            start = time.perf_counter()
            proc = subprocess.Popen(
                [
                    str(venv.pciname),
                    "serve",
                    "--listen",
                    "127.0.0.1:0",
                    "--insecure",
                    "--log-format",
                    "json",
                    "--watch-interval",
                    "0",
                ],
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
            )
            loaded = None
            assert proc.stderr is not None
            for line in proc.stderr:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if entry.get("msg") == "data loaded":
                    loaded = entry
                    break
            wall = (time.perf_counter() - start) * 1000
            proc.terminate()
            proc.wait(timeout=60)
            if loaded is None:
                print(f"  {label}: the server exited {proc.returncode} before loading its data")
                continue
            print(
                f"  {label}: {wall:7.1f} ms to SERVING; {loaded['profiles']} profiles from {loaded['files']} "
                f"pci.ids files, data build {loaded['seconds'] * 1000:.0f} ms"
            )


def importtime_top(cmd: list[str], env: dict, n: int = 10) -> list[tuple[int, int, str]]:
    """The ``n`` imports of ``cmd`` (run with ``-X importtime``) with the
    largest cumulative time: (self us, cumulative us, module)."""
    proc = subprocess.run(cmd, env={**env, "PYTHONPROFILEIMPORTTIME": "1"}, capture_output=True, text=True, check=False)
    rows = []
    for line in proc.stderr.splitlines():
        if line.startswith("import time:") and "|" in line and "self [us]" not in line:
            own, cumulative, name = (part.strip() for part in line[len("import time:") :].split("|"))
            rows.append((int(own), int(cumulative), name))
    return sorted(rows, key=lambda row: -row[1])[:n]


def bench_importtime(venv: Venv) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONDONTWRITEBYTECODE", "PYTHONPATH")}
    with tempfile.TemporaryDirectory() as tmp:
        env["PCINAME_CACHE_DIR"] = str(Path(tmp) / "cache")
        for label, cmd in (
            ("pciname lookup 10de:2236", [str(venv.pciname), "lookup", "10de:2236"]),
            (
                "import pciname; pciname.resolve('10de:2236')",
                [str(venv.python), "-c", "import pciname; pciname.resolve('10de:2236')"],
            ),
        ):
            subprocess.run(cmd, env=env, capture_output=True, check=False)  # bytecode compiled, files cached
            print(f"-X importtime top 10 (cumulative), {label}, empty cache, from the venv")
            for own, cumulative, name in importtime_top(cmd, env):
                print(f"  {cumulative / 1000:7.2f} ms cumulative {own / 1000:7.2f} ms self  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=9)
    parser.add_argument(
        "--venv",
        type=Path,
        default=Path(tempfile.gettempdir()) / "pciname-bench-venv",
        help="where the plain-install venv is built once and reused",
    )
    args = parser.parse_args()
    venv = Venv(args.venv)
    venv.prepare()
    bench_parse(args.repeat)
    bench_cli(args.repeat, venv)
    bench_fresh_resolve(args.repeat, venv)
    bench_profiles(args.repeat, venv)
    bench_resolve(args.repeat)
    bench_resolve_many(max(3, args.repeat // 3))
    bench_bulk_vs_lspci(max(3, args.repeat // 2), venv)
    bench_bulk(max(3, args.repeat // 3), venv)
    bench_server_startup(venv)
    bench_importtime(venv)
    print("goals (ratios measured in this run)")
    for what, ratio, bound in GOALS:
        print(f"  {'met    ' if ratio < bound else 'NOT met'}  {what}: {ratio:.2f}x, bound {bound:g}x")


if __name__ == "__main__":
    main()
