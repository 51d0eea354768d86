"""The Lint RPC's ``notes``: what ``pciname lint`` prints as ``pciname:
note:`` lines on stderr (what the vGPU catalogue and the prefix evidence
cannot check), the same lines, escaped alike, on a real loopback server."""

from __future__ import annotations

import grpc

from pciname.client import Client
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc

NOTE = "pciname: note: "


def cr(selector: str, resource: str) -> str:
    return f"""apiVersion: kubevirt.io/v1
kind: KubeVirt
spec:
  configuration:
    permittedHostDevices:
      mediatedDevices:
      - mdevNameSelector: "{selector}"
        resourceName: {resource}
        externalResourceProvider: true
"""


def cli_notes(paths: list[str], capsys) -> tuple[int, list[str]]:
    from pciname.cli import main

    code = main(["lint", *paths])
    _, err = capsys.readouterr()
    lines = err.splitlines()
    assert all(line.startswith(NOTE) for line in lines), err
    return code, [line.removeprefix(NOTE) for line in lines]


def two_entries(first: str, second: str) -> str:
    text = cr(first, "nvidia.com/X")
    return (
        text
        + f"""      - mdevNameSelector: "{second}"
        resourceName: nvidia.com/Y
        externalResourceProvider: true
"""
    )


# Notes (an A100 string nobody has observed, an inferred V100 prefix, a B
# series type the catalogue lacks), a certain string (no note), and a file
# name with a terminal escape and a tab in it.
FILES = {
    "a100.yaml": two_entries("NVIDIA A100-40C", "NVIDIA A10-24Q"),
    "v100\x1b[2J\t\x9b.yaml": two_entries("NVIDIA V100-8Q", "NVIDIA A2-1B"),
    "clean.yaml": cr("NVIDIA A10-24Q", "nvidia.com/NVIDIA_A10-24Q"),
}


def test_rpc_notes_equal_the_clis(server, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    for name, text in FILES.items():
        (tmp_path / name).write_text(text)
    code, expected = cli_notes(list(FILES), capsys)
    assert code == 1  # the wrong resourceNames are findings; notes do not change the verdict
    assert len(expected) == 3
    assert expected[1].startswith("v100\\x1b[2J\t\\x9b.yaml:7: ")  # escaped, tab kept, as on stderr
    assert not any(c in "".join(expected) for c in "\x1b\x9b")

    request = pb.LintRequest(files=[pb.LintFile(name=n, text=t) for n, t in FILES.items()])
    with grpc.insecure_channel(f"127.0.0.1:{server.port}") as channel:
        response = pb_grpc.PciNameStub(channel).Lint(request, timeout=30)
    assert list(response.notes) == expected

    with Client(f"127.0.0.1:{server.port}", timeout=30) as client:
        result = client.lint(FILES)
    assert result.notes == expected
    assert result.findings and result.text  # findings are still findings, not notes


def test_no_notes_when_everything_is_checked(server, tmp_path, capsys):
    path = tmp_path / "clean.yaml"
    path.write_text(FILES["clean.yaml"])
    assert cli_notes([str(path)], capsys) == (0, [])
    with Client(f"127.0.0.1:{server.port}", timeout=30) as client:
        result = client.lint({str(path): path.read_text()})
    assert result.notes == [] and result.findings == []
