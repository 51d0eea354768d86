"""What Lint requests cost a server: peak memory (RSS) per request and with
``--max-concurrent-lints`` of them at once, and how soon a request stops
after its deadline, on loopback.

    python bench/lint_memory.py [--unbounded]

Starts ``python -m pciname serve`` (every profile loaded) once per case and
sends hostile requests just under the default ``--max-lint-bytes`` (1 MiB):

* ``seq``: ``- a`` lines (262,000 nodes: refused by ``--max-lint-nodes``);
* ``at-limit``: ``- a`` lines, just under ``--max-lint-nodes``;
* ``long``: just under the node limit with 8-byte scalars;
* ``entries``: a KubeVirt CR whose ``pciHostDevices`` entries (just under the
  node limit) all hold a wrong name: every one is a finding;
* ``laughs``: nine levels of nine aliases (387 million nodes when expanded).

For each it prints the server's RSS before, its peak (VmHWM) after, the
status and the seconds the server spent; then the peak with the maximum
number of ``at-limit``/``entries`` requests at once, and the seconds a
request sent with a 1 s deadline keeps the server busy after it. Then the
same for ``AdmissionPolicy``: eight ``kubevirt_cr`` requests at once of
about 8,900 distinct, right mdev entries in just under 1 MiB (the largest
allowed set, whose hints the budget refuses), the ``laughs`` CR, and 6,000
``mdev_types``. With
``--unbounded`` the node and concurrency limits are lifted (as before they
existed), for comparison. The README's limits section quotes these figures.
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

MIB = 1 << 20


def cases(max_nodes: int) -> dict[str, str]:
    header = (
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt, namespace: kubevirt}\n"
        "spec:\n  configuration:\n    permittedHostDevices:\n      pciHostDevices:\n"
    )
    entry = "      - {pciVendorSelector: '10DE:2236', resourceName: nvidia.com/GA102GL_A1, externalResourceProvider: true}\n"  # 7 nodes
    laughs = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)
    )
    return {
        "seq": "- a\n" * (MIB // 4 - 1),
        "at-limit": "- a\n" * (max_nodes - 10),
        "long": "- xxxxxxxx\n" * min(max_nodes - 10, MIB // 11 - 1),
        "entries": header + entry * min((max_nodes - 20) // 7, (MIB - len(header)) // len(entry)),
        "laughs": laughs,
    }


def lint(port: int, text: str, timeout: float = 120) -> tuple[str, float]:
    import grpc

    from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc

    request = pb.LintRequest(files=[pb.LintFile(name="hostile.yaml", text=text)])
    started = time.monotonic()
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", 64 * MIB)]) as channel:
        try:
            pb_grpc.PciNameStub(channel).Lint(request, timeout=timeout)
            code = "OK"
        except grpc.RpcError as error:
            code = error.code().name
    return code, time.monotonic() - started


def policy(port: int, timeout: float = 300, **fields: object) -> tuple[str, float]:
    import grpc

    from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc

    started = time.monotonic()
    with grpc.insecure_channel(f"127.0.0.1:{port}", options=[("grpc.max_receive_message_length", 64 * MIB)]) as channel:
        try:
            pb_grpc.PciNameStub(channel).AdmissionPolicy(pb.AdmissionPolicyRequest(**fields), timeout=timeout)  # type: ignore[arg-type]
            code = "OK"
        except grpc.RpcError as error:
            code = error.code().name
    return code, time.monotonic() - started


def mdev_cr(size: int = MIB - 1024) -> str:
    header = (
        "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt, namespace: kubevirt}\n"
        "spec:\n  configuration:\n    permittedHostDevices:\n      mediatedDevices:\n"
    )
    lines, total, i = [header], len(header), 0
    while True:
        line = (
            f"      - {{mdevNameSelector: NVIDIA X{i}-1Q, resourceName: nvidia.com/NVIDIA_X{i}-1Q, "
            "externalResourceProvider: true}\n"
        )
        if total + len(line) > size:
            return "".join(lines)
        lines.append(line)
        total += len(line)
        i += 1


def admission(tmp: Path, extra: list[str]) -> None:
    laughs = cases(1)["laughs"]
    bomb = "bomb:\n" + "".join(f"  {line}\n" for line in laughs.splitlines()) + mdev_cr(600)
    for name, fields in (
        ("cr-laughs", {"kubevirt_cr": bomb}),
        ("cr-largest", {"kubevirt_cr": mdev_cr()}),
        ("mdev-6000", {"mdev_types": [f"NVIDIA A{i}-24Q" for i in range(6000)]}),
    ):
        server = start(tmp / name, extra)
        try:
            before, _ = server.rss_mb()
            code, seconds = policy(server.port, **fields)
            _, peak = server.rss_mb()
            print(f"AdmissionPolicy {name:10}: {code:18} {seconds:5.1f} s  RSS {before:.0f} MB -> peak {peak:.0f} MB")
        finally:
            server.stop()
    server = start(tmp / "cr-x8", extra)
    try:
        before, _ = server.rss_mb()
        text = mdev_cr()
        results: list[tuple[str, float]] = []
        threads = [
            threading.Thread(target=lambda: results.append(policy(server.port, kubevirt_cr=text))) for _ in range(8)
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        _, peak = server.rss_mb()
        print(
            f"8 x AdmissionPolicy cr-largest at once: {sorted(c for c, _ in results)}  RSS {before:.0f} MB -> peak {peak:.0f} MB"
        )
    finally:
        server.stop()
    server = start(tmp / "cr-deadline", extra)
    try:
        code, seconds = policy(server.port, timeout=1.0, kubevirt_cr=mdev_cr())
        print(
            f"AdmissionPolicy cr-largest with a 1 s deadline: {code} after {seconds:.1f} s; the server was busy {busy_seconds(server):.1f} s more"
        )
    finally:
        server.stop()


def busy_seconds(server: Server) -> float:
    """Waits until the server's CPU time stops growing; returns how long that took."""

    def cpu() -> float:
        with open(f"/proc/{server.proc.pid}/stat") as stat:
            fields = stat.read().rpartition(")")[2].split()
        return (int(fields[11]) + int(fields[12])) / 100

    started, last = time.monotonic(), cpu()
    while True:
        time.sleep(0.25)
        now = cpu()
        if now - last < 0.02:
            return time.monotonic() - started - 0.25
        last = now


def start(directory: Path, extra: list[str]) -> Server:
    directory.mkdir()
    return Server(directory, extra)


def main() -> int:
    from pciname.server.config import DEFAULT_MAX_CONCURRENT_LINTS, DEFAULT_MAX_LINT_NODES

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--unbounded", action="store_true", help="lift the node and concurrency limits")
    args = parser.parse_args()
    extra = ["--max-lint-nodes", "2147483647", "--max-concurrent-lints", "64"] if args.unbounded else []
    texts = cases(DEFAULT_MAX_LINT_NODES)
    if args.unbounded:
        del texts["laughs"]  # would not end
    concurrent = DEFAULT_MAX_CONCURRENT_LINTS
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in texts.items():
            server = start(Path(tmp) / name, extra)
            try:
                before, _ = server.rss_mb()
                code, seconds = lint(server.port, text)
                _, peak = server.rss_mb()
                after, _ = server.rss_mb()
                print(
                    f"{name:9} {len(text):>8} bytes: {code:18} {seconds:5.1f} s  RSS {before:.0f} MB -> "
                    f"peak {peak:.0f} MB (+{peak - before:.0f}), {after:.0f} MB after"
                )
            finally:
                server.stop()
        for name in ("at-limit", "entries"):
            server = start(Path(tmp) / f"{name}-x{concurrent}", extra)
            try:
                before, _ = server.rss_mb()
                results: list[tuple[str, float]] = []
                threads = [
                    threading.Thread(target=lambda: results.append(lint(server.port, texts[name])))  # noqa: B023 - joined in this iteration
                    for _ in range(concurrent + 1)
                ]
                for thread in threads:
                    thread.start()
                for thread in threads:
                    thread.join()
                _, peak = server.rss_mb()
                codes = sorted(code for code, _ in results)
                print(
                    f"{concurrent + 1} x {name} at once: {codes}  RSS {before:.0f} MB -> peak {peak:.0f} MB "
                    f"(+{peak - before:.0f})"
                )
            finally:
                server.stop()
        admission(Path(tmp), extra)
        server = start(Path(tmp) / "deadline", extra)
        try:
            code, seconds = lint(server.port, texts["at-limit"], timeout=1.0)
            print(
                f"at-limit with a 1 s deadline: {code} after {seconds:.1f} s; "
                f"the server was busy {busy_seconds(server):.1f} s more"
            )
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
