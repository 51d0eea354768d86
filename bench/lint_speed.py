"""``pciname lint`` against PyYAML's C loader on the same file, as whole processes.

    python bench/lint_speed.py [--entries 500] [--vms 1000] [--repeat 3] [--keep FILE] [--before REF]

Generates one YAML file: a KubeVirt CR whose ``pciHostDevices`` hold
``--entries`` NVIDIA devices under the names the plugin gives them, then
``--vms`` VirtualMachines, each asking for one of those names (about 1.8 MB
with the defaults; no finding). Then, each in its own child process
(``RUSAGE_CHILDREN``'s ``ru_maxrss`` and CPU time taken by a small
launcher, the best of ``--repeat`` runs):

* ``load_all``: ``list(yaml.load_all(f, Loader=yaml.CSafeLoader))``;
* ``compose_all``: ``list(yaml.compose_all(f, Loader=yaml.CSafeLoader))``;
* ``lint``: ``python -m pciname lint FILE`` (it must exit 0: no finding);

and the ratios lint/load_all of wall time and of peak memory (issue 42's
goal: at most 3x each). The children run this checkout (``PYTHONPATH``);
``--before REF`` also runs ``pciname lint`` of the commit REF (its files
taken with ``git archive``) in the same run, for a before/after.
The machine's other load shows in the wall times; the ratios are taken in
the same run.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

_LAUNCHER = """
import resource, subprocess, sys, time
start = time.perf_counter()
status = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL).returncode
elapsed = time.perf_counter() - start
usage = resource.getrusage(resource.RUSAGE_CHILDREN)
print(elapsed, usage.ru_maxrss, status, usage.ru_utime + usage.ru_stime)
"""

_LOAD = "import sys, yaml\nwith open(sys.argv[1], 'rb') as f:\n    list(yaml.{}(f, Loader=yaml.CSafeLoader))\n"

_VM = """---
apiVersion: kubevirt.io/v1
kind: VirtualMachine
metadata:
  name: vm-{n:05d}
  namespace: tenant-{ns}
  labels:
    app.kubernetes.io/name: vm-{n:05d}
    app.kubernetes.io/part-of: gpu-fleet
  annotations:
    description: "a generated VM for bench/lint_speed.py, number {n}"
    owner: "team-{ns}@example.com"
    cost-center: "cc-{ns:04d}"
    backup.example.com/schedule: "0 3 * * *"
    backup.example.com/retention: "14d"
spec:
  runStrategy: Always
  template:
    metadata:
      labels:
        kubevirt.io/vm: vm-{n:05d}
    spec:
      domain:
        cpu:
          cores: 8
          sockets: 1
          threads: 1
        memory:
          guest: 32Gi
        resources:
          requests:
            memory: 32Gi
        devices:
          gpus:
          - deviceName: {name}
            name: gpu1
          disks:
          - name: rootdisk
            disk:
              bus: virtio
          - name: cloudinitdisk
            disk:
              bus: virtio
          interfaces:
          - name: default
            masquerade: {{}}
        machine:
          type: q35
        features:
          acpi: {{}}
          smm:
            enabled: true
        firmware:
          bootloader:
            efi:
              secureBoot: false
      terminationGracePeriodSeconds: 180
      evictionStrategy: LiveMigrate
      networks:
      - name: default
        pod: {{}}
      volumes:
      - name: rootdisk
        dataVolume:
          name: vm-{n:05d}-root
      - name: cloudinitdisk
        cloudInitNoCloud:
          userData: |
            #cloud-config
            hostname: vm-{n:05d}
            ssh_authorized_keys:
            - ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGVuZXJhdGVkIGJ5IGJlbmNoL2xpbnRfc3BlZWQucHk bench
"""


def generate(entries: int, vms: int) -> str:
    """The KubeVirt CR (``entries`` NVIDIA devices, each under its own
    resource name) and ``vms`` VirtualMachines asking for those names."""
    import pciname

    chosen: list[tuple[str, str]] = []
    names: set[str] = set()
    for resolution in pciname.devices("latest"):
        name = resolution.resource_name
        if name and name not in names and len(name) <= 48:  # one device per name, none too long for kubelet
            names.add(name)
            chosen.append((resolution.device.split(":")[1].upper(), name))
        if len(chosen) == entries:
            break
    out = [
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata:\n  name: kubevirt\n  namespace: kubevirt\n"
        "spec:\n  configuration:\n    permittedHostDevices:\n      pciHostDevices:\n"
    ]
    for device, name in chosen:
        out.append(
            f"      - pciVendorSelector: 10DE:{device}\n        resourceName: {name}\n        externalResourceProvider: true\n"
        )
    out.extend(_VM.format(n=n, ns=n % 17, name=chosen[n % len(chosen)][1]) for n in range(vms))
    return "".join(out)


def run_child(cmd: list[str], env: dict[str, str]) -> tuple[float, float, int, float]:
    """(wall seconds, peak RSS in MB, exit status, CPU seconds) of one child process."""
    out = subprocess.run(
        # cwd: not the checkout, which ``python -m`` would put first on sys.path (before PYTHONPATH)
        [sys.executable, "-c", _LAUNCHER, *cmd],
        env=env,
        capture_output=True,
        text=True,
        check=True,
        cwd="/",
    ).stdout.split()
    return float(out[0]), int(out[1]) / 1024, int(out[2]), float(out[3])  # ru_maxrss is in KiB on Linux


def best(cmd: list[str], env: dict[str, str], repeat: int) -> tuple[float, float, int, float]:
    runs = [run_child(cmd, env) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs), min(r[3] for r in runs)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--entries", type=int, default=500)
    parser.add_argument("--vms", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--keep", help="write the generated file here and keep it")
    parser.add_argument("--before", metavar="REF", help="also lint with the pciname of this commit")
    args = parser.parse_args()
    env = dict(os.environ, PYTHONPATH=str(REPO))
    text = generate(args.entries, args.vms)
    with open("/proc/loadavg") as loadavg:
        print(f"machine load (1, 5, 15 min): {' '.join(loadavg.read().split()[:3])}")
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(args.keep) if args.keep else Path(tmp) / "fleet.yaml"
        path.write_text(text)
        print(f"input: {path.stat().st_size / 1e6:.2f} MB, {args.entries} entries, {args.vms} VMs")
        runs = [
            ("load_all", [sys.executable, "-c", _LOAD.format("load_all"), str(path)], env),
            ("compose_all", [sys.executable, "-c", _LOAD.format("compose_all"), str(path)], env),
            ("lint", [sys.executable, "-m", "pciname", "lint", str(path)], env),
        ]
        if args.before:
            runs.append((f"lint@{args.before}", runs[-1][1], dict(env, PYTHONPATH=_checkout(args.before, tmp))))
        figures = {}
        for label, cmd, child_env in runs:
            figures[label] = wall, rss, status, cpu = best(cmd, child_env, args.repeat)
            print(f"{label:12} {wall:6.2f} s  {cpu:6.2f} s CPU  {rss:6.1f} MB peak  exit {status}")
    load = figures["load_all"]
    for label in [label for label in figures if label.startswith("lint")]:
        lint = figures[label]
        time_ratio, memory_ratio, cpu_ratio = lint[0] / load[0], lint[1] / load[1], lint[3] / load[3]
        verdict = "met" if time_ratio <= 3 and memory_ratio <= 3 and lint[2] == 0 else "NOT met"
        print(
            f"{label}/load_all: {time_ratio:.2f}x time ({cpu_ratio:.2f}x CPU), {memory_ratio:.2f}x peak memory "
            f"(goal: at most 3x each: {verdict})"
        )
    with open("/proc/loadavg") as loadavg:
        print(f"machine load after: {' '.join(loadavg.read().split()[:3])}")


def _checkout(ref: str, tmp: str) -> str:
    """The files of commit ``ref`` (pciname/ and data/) under ``tmp``: a PYTHONPATH."""
    where = Path(tmp) / "before"
    where.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(REPO), "archive", ref, "pciname", "data"], capture_output=True, check=True
    )
    subprocess.run(["tar", "-x", "-C", str(where)], input=archive.stdout, check=True)
    return str(where)


if __name__ == "__main__":
    main()
