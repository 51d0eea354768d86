"""The admission policy path under hostile input (issue 22, findings 1-4
and 13): the AdmissionPolicy RPC's ``kubevirt_cr`` and ``from_cluster`` take
the budget Lint takes (a ``--max-concurrent-lints`` slot, ``--max-lint-nodes``
counted before anything is composed, the caller's deadline checked inside the
work, memory given back), hints cost what their budget allows, and
``admission-policy --from-cr`` reads the nodes lint composed (each alias
once) and leaves out exactly the entries lint reports."""

from __future__ import annotations

import os
import re
import threading

import grpc
import pytest
import yaml
from grpc_health.v1 import health_pb2, health_pb2_grpc

from pciname.lint.hints import MAX_HINT_PAIRS
from pciname.lint.linter import Linter
from pciname.policy.admission import admission_policy, allowed_from_cr, allowed_from_devices
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from pciname.server.config import DEFAULT_MAX_LINT_BYTES, DEFAULT_MAX_LINT_NODES
from tests.cli_run import Ran, pciname_process
from tests.conftest import REPO, ServerSpec, wait_until
from tests.server_util import ServerProcess, metric, peak_rss, scrape

MIB = 1 << 20
#: deploy/'s memory limit for the name service.
DEPLOY_LIMIT = 384 * MIB

LAUGHS = "a0: &a0 [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 9)}]\n" for i in range(1, 10)
)
HEADER = (
    "apiVersion: kubevirt.io/v1\nkind: KubeVirt\nmetadata: {name: kubevirt, namespace: kubevirt}\n"
    "spec:\n  configuration:\n    permittedHostDevices:\n"
)


ERP = "externalResourceProvider: true"


def bomb_cr() -> str:
    """A KubeVirt CR (about 800 bytes) whose one entry holds nine levels of nine aliases."""
    return (
        "bomb:\n" + "".join(f"  {line}\n" for line in LAUGHS.splitlines()) + HEADER + "      pciHostDevices:\n"
        "      - {pciVendorSelector: '10DE:2236', resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true,"
        " extra: *a9}\n"
    )


def mdev_cr(size: int = DEFAULT_MAX_LINT_BYTES - 1024) -> str:
    """A KubeVirt CR of distinct, right mdev entries, just under ``size`` bytes
    (about 8,900 entries in 1 MiB, under the node limit): every one allowed."""
    lines = [HEADER, "      mediatedDevices:\n"]
    total, i = len(HEADER) + 23, 0
    while True:
        line = f"      - {{mdevNameSelector: NVIDIA X{i}-1Q, resourceName: nvidia.com/NVIDIA_X{i}-1Q, {ERP}}}\n"
        if total + len(line) > size:
            break
        lines.append(line)
        total += len(line)
        i += 1
    return "".join(lines)


# -- the library ---------------------------------------------------------------------------------


def test_the_bomb_cr_is_what_the_issue_describes():
    text = bomb_cr()
    assert 700 < len(text) < 1000
    assert yaml.safe_load(text)["spec"]["configuration"]["permittedHostDevices"]["pciHostDevices"][0]["extra"]


def test_from_cr_reads_each_alias_once():
    """The CR with 387 million nodes when expanded: the entry is kept, as lint
    reads it (before: minutes walking the expanded document)."""
    permitted, findings = allowed_from_cr(bomb_cr(), "bomb.yaml", "latest")
    assert findings == []
    (entry,) = permitted["pciHostDevices"]
    assert entry == {
        "pciVendorSelector": "10DE:2236",
        "resourceName": "nvidia.com/GA102GL_A10",
        "externalResourceProvider": True,
    }


def test_an_entry_lint_reports_is_left_out_even_if_a_clean_one_shares_its_name():
    """Finding 13: the second entry gives the A10's name to a T4; lint reports
    it, and the allowed set keeps only the first entry (before: both, the
    command failing)."""
    text = (
        HEADER + "      pciHostDevices:\n"
        "      - {pciVendorSelector: '10DE:2236', resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}\n"
        "      - {pciVendorSelector: '10DE:1EB8', resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}\n"
    )
    permitted, findings = allowed_from_cr(text, "cr.yaml", "latest")
    assert [e["pciVendorSelector"] for e in permitted["pciHostDevices"]] == ["10DE:2236"]
    (finding,) = findings
    assert finding.startswith("cr.yaml:9: wrong-resource-name: ") and "10DE:1EB8" in finding
    result = admission_policy(permitted, "latest", ("Deny",))
    assert result.allowed == ("nvidia.com/GA102GL_A10",)


def test_hints_are_bounded_before_any_is_written():
    """Finding 2: 3,000 allowed names against every known wrong one is far
    over the budget: no hint is written, and the message says so."""
    mdevs = [f"NVIDIA A{i}-24Q" for i in range(3000)]
    permitted, _ = allowed_from_devices([], mdevs, "latest")
    calls = []
    result = admission_policy(permitted, "latest", check=lambda: calls.append(1))
    names = [v["name"] for v in result.objects[0]["spec"]["variables"]]
    assert not [n for n in names if n.startswith("hints")]
    assert "too many for pciname to write hints for" in result.to_yaml()
    assert len(result.allowed) == 3000 and MAX_HINT_PAIRS < 3000 * 1800
    # A small set is within the budget: hints are written, the check asked for each.
    calls.clear()
    permitted, _ = allowed_from_devices(
        ["10de:2236", "10de:1eb8", *[f"10de:{d}" for d in ("2330", "26b9")]], mdevs[:10]
    )
    result = admission_policy(permitted, "latest", check=lambda: calls.append(1))
    assert [v for v in result.objects[0]["spec"]["variables"] if v["name"] == "hints0"]
    assert len(calls) > 1000  # one per hint written


def test_a_check_that_raises_stops_the_hints():
    class Gone(Exception):
        pass

    def gone() -> None:
        raise Gone

    permitted, _ = allowed_from_devices(["10de:2236"], [f"NVIDIA A{i}-24Q" for i in range(20)])
    with pytest.raises(Gone):
        admission_policy(permitted, "latest", check=gone)


def test_lint_hints_share_one_budget_per_run():
    """2,000 VMs asking for mdev names no entry permits, beside 200 working
    ones: each VM's name costs two hints of 200 comparisons (not-permitted's
    closest permitted, unknown-resource-name's closest mdev name), so the
    first 625 are written, then the budget is spent and the rest say so."""
    entries = "".join(
        f"      - {{mdevNameSelector: NVIDIA X{i}-1Q, resourceName: nvidia.com/NVIDIA_X{i}-1Q, {ERP}}}\n"
        for i in range(200)
    )
    vms = "".join(
        f"---\nkind: VirtualMachineInstance\nmetadata: {{name: v{i}}}\nspec:\n  domain:\n    devices:\n"
        f"      gpus: [{{name: g, deviceName: nvidia.com/NVIDIA_Y{i}-1Q}}]\n"
        for i in range(2000)
    )
    linter = Linter("latest")
    linter.add_text(HEADER + "      mediatedDevices:\n" + entries + vms, "many.yaml")
    found = [f for f in linter.run() if f.code == "not-permitted"]
    assert len(found) == 2000
    hinted = [f for f in found if "closest permitted" in f.message or "no permitted name is close" in f.message]
    spent = [f for f in found if "too many to compare within pciname's hint budget" in f.message]
    assert len(hinted) == MAX_HINT_PAIRS // 400 and len(spent) == 2000 - len(hinted)


# -- the CLI ---------------------------------------------------------------------------------------


def _cli(*args: str, timeout: float = 300) -> Ran:
    """In a process of its own: a hang is cut by ``timeout``."""
    return pciname_process(*args, timeout=timeout)


def test_cli_from_cr_answers_an_alias_bomb_as_lint_does(tmp_path):
    """Finding 4 (before: minutes; lint answered in 0.5 s)."""
    cr = tmp_path / "bomb.yaml"
    cr.write_text(bomb_cr())
    done = _cli("admission-policy", "--from-cr", str(cr), "-o", "json")
    assert done.returncode == 0, done.stderr
    assert '"pciname.io/allowed-names": "1"' in done.stdout
    assert _cli("lint", str(cr)).returncode == 0


def test_cli_leaves_out_and_names_a_wrong_entry_sharing_a_name(tmp_path):
    cr = tmp_path / "cr.yaml"
    cr.write_text(
        HEADER + "      pciHostDevices:\n"
        "      - {pciVendorSelector: '10DE:2236', resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}\n"
        "      - {pciVendorSelector: '10DE:1EB8', resourceName: nvidia.com/GA102GL_A10, externalResourceProvider: true}\n"
    )
    done = _cli("admission-policy", "--from-cr", str(cr))
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"pciname: left out: {cr}:9: wrong-resource-name: ")
    assert "pciname.io/allowed-names: '1'" in done.stdout


def test_cli_many_mdev_types_are_answered_without_hints():
    args = [a for i in range(3000) for a in ("--mdev", f"NVIDIA A{i}-24Q")]
    done = _cli("admission-policy", *args, timeout=120)
    assert done.returncode == 0, done.stderr
    assert "too many for pciname to write hints for" in done.stdout


# -- on a server -----------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def server_spec(session_cache):
    """Four workers, one Lint slot, metrics; a stub that takes 64 MiB answers."""
    return ServerSpec(
        config={"metrics_listen": "127.0.0.1:0", "max_workers": 4, "max_concurrent_lints": 1},
        cache=session_cache,
        channel_options=(("grpc.max_receive_message_length", 64 * MIB),),
    )


def _policy(stub, timeout: float = 60, **fields) -> tuple[grpc.StatusCode, str]:
    try:
        stub.AdmissionPolicy(pb.AdmissionPolicyRequest(**fields), timeout=timeout)
        return grpc.StatusCode.OK, ""
    except grpc.RpcError as error:
        return error.code(), error.details()


def test_six_alias_bombs_are_refused_at_once_and_the_server_answers(server, stub):
    """Finding 1: six such requests held --max-workers 4 for minutes, health
    on the main port included; now each is refused by the node count."""
    results: list[tuple[grpc.StatusCode, str]] = []
    threads = [
        threading.Thread(target=lambda: results.append(_policy(stub, timeout=30, kubevirt_cr=bomb_cr())))
        for _ in range(6)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    for code, details in results:
        assert code in (grpc.StatusCode.INVALID_ARGUMENT, grpc.StatusCode.RESOURCE_EXHAUSTED), (code, details)
        if code == grpc.StatusCode.INVALID_ARGUMENT:
            assert "YAML nodes in one request (--max-lint-nodes)" in details and "by kubevirt_cr" in details
    assert any(code == grpc.StatusCode.INVALID_ARGUMENT for code, _ in results)
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        health = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
        assert health.status == health_pb2.HealthCheckResponse.SERVING
    assert stub.Resolve(pb.ResolveRequest(device="10de:2236"), timeout=10).resource_name == "nvidia.com/GA102GL_A10"


def test_kubevirt_cr_takes_a_lint_slot(server, stub):
    with server.service.lint_slots.take():  # a Lint (or another CR) in flight
        code, details = _policy(stub, kubevirt_cr=mdev_cr(4096))
        assert code == grpc.StatusCode.RESOURCE_EXHAUSTED and "(--max-concurrent-lints)" in details
        # Devices and mdev types carry no YAML: they take no slot.
        assert _policy(stub, devices=["10de:2236"])[0] == grpc.StatusCode.OK
    assert _policy(stub, kubevirt_cr=mdev_cr(4096))[0] == grpc.StatusCode.OK


def test_a_passed_deadline_stops_a_large_cr(server, stub):
    """Finding 2 through kubevirt_cr: 10,000 distinct mdev entries in 1 MiB;
    with a 0.5 s deadline the server stops at its next look and records
    DEADLINE_EXCEEDED (before: the work went on for about a minute)."""
    before = scrape(server.metrics_port)
    code, _ = _policy(stub, timeout=0.5, kubevirt_cr=mdev_cr())
    assert code == grpc.StatusCode.DEADLINE_EXCEEDED

    def ended() -> float:
        samples = scrape(server.metrics_port)
        return metric(samples, "pciname_rpc_requests_total", method="AdmissionPolicy", code="DEADLINE_EXCEEDED") - (
            metric(before, "pciname_rpc_requests_total", method="AdmissionPolicy", code="DEADLINE_EXCEEDED")
        )

    wait_until(lambda: ended() == 1, what="the handler's end", timeout=60)
    ok = metric(scrape(server.metrics_port), "pciname_rpc_requests_total", method="AdmissionPolicy", code="OK")
    assert ok == metric(before, "pciname_rpc_requests_total", method="AdmissionPolicy", code="OK")


#: What the largest CR's answer is: its 8,900 allowed names make a policy over etcd's margin.
TOO_LARGE = re.compile(r"the policy would be \d+ bytes, over the 1000000 pciname allows")


def test_the_largest_cr_is_answered(stub):
    """The same CR with time to spare: linted, every entry allowed, no hint
    written, and refused in one line because the policy would not fit in
    etcd; half of it fits."""
    code, details = _policy(stub, timeout=120, kubevirt_cr=mdev_cr())
    assert code == grpc.StatusCode.INVALID_ARGUMENT and TOO_LARGE.fullmatch(details), details
    assert _policy(stub, timeout=120, kubevirt_cr=mdev_cr(DEFAULT_MAX_LINT_BYTES // 2)) == (grpc.StatusCode.OK, "")


def test_eight_largest_crs_at_once_stay_under_the_deploy_limit(session_cache):
    """Finding 3: eight concurrent 1 MiB kubevirt_cr requests took a server
    from 88 MB to 880 MB. Now at most --max-concurrent-lints (2) run, the
    rest are RESOURCE_EXHAUSTED at once, every other RPC is answered within
    its deadline meanwhile, and the peak stays under deploy/'s 384 MiB."""
    env = dict(os.environ, PYTHONPATH=str(REPO), PCINAME_CACHE_DIR=str(session_cache))
    env.pop("PCINAME_SNAPSHOTS", None)
    server = ServerProcess(["--listen", "127.0.0.1:0", "--insecure", "--watch-interval", "0"], env)
    try:
        server.ready(120)
        text = mdev_cr()
        assert text.count("\n") * 5 < DEFAULT_MAX_LINT_NODES
        options = [("grpc.max_receive_message_length", 64 * MIB)]
        with grpc.insecure_channel(server.address, options=options) as channel:
            stub = pb_grpc.PciNameStub(channel)
            assert _policy(stub, devices=["10de:2236"])[0] == grpc.StatusCode.OK  # warm
            start = threading.Barrier(9)
            results: list[tuple[grpc.StatusCode, str]] = []

            def send() -> None:
                start.wait()
                results.append(_policy(stub, timeout=300, kubevirt_cr=text))

            threads = [threading.Thread(target=send) for _ in range(8)]
            for thread in threads:
                thread.start()
            start.wait()
            answered = 0
            while any(t.is_alive() for t in threads):  # other RPCs meanwhile, each within its deadline
                assert stub.Resolve(pb.ResolveRequest(device="10de:2236"), timeout=10).resource_name
                answered += 1
                threads[0].join(0.2)
            for thread in threads:
                thread.join()
            worked = [d for code, d in results if code == grpc.StatusCode.INVALID_ARGUMENT and TOO_LARGE.fullmatch(d)]
            refused = [code for code, _ in results if code == grpc.StatusCode.RESOURCE_EXHAUSTED]
            assert worked and len(worked) + len(refused) == 8, results
            assert answered > 0
        peak = peak_rss(server.proc.pid)
        assert peak < DEPLOY_LIMIT, f"peak RSS {peak >> 20} MiB"
    finally:
        server.close()
