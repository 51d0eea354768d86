"""A ``--pciids`` file caught mid-write is never served (issue 16, item 2):
one whose last line is incomplete is refused, and so is one that is still
changing (it must stay unchanged for ``SETTLE_SECONDS``) or that changed
while it was loaded; the old data keeps serving."""

from __future__ import annotations

import os
import threading
import time

import grpc
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pciname.errors import PciIdsError
from pciname.server import NameServer, data as data_module
from pciname.server._proto import pciname_pb2 as pb, pciname_pb2_grpc as pb_grpc
from tests.conftest import REPO
from tests.server_util import pciids_text, write_atomically

# files and reloading_server: tests/server/conftest.py's.

FULL = pciids_text("GA102GL [A10]")


def served_a10(running: NameServer) -> str:
    with grpc.insecure_channel(f"127.0.0.1:{running.port}") as channel:
        stub = pb_grpc.PciNameStub(channel)
        return str(stub.Resolve(pb.ResolveRequest(device="10de:2236", profile="custom"), timeout=5).name)


def rejected(caplog: pytest.LogCaptureFixture) -> str:
    (record,) = [r for r in caplog.records if r.getMessage() == "reload rejected"]
    return str(record.fields["error"])  # type: ignore[attr-defined]


def test_a_file_cut_mid_line_is_refused_on_sighup(reloading_server, files, caplog):
    """The issue's example: cut inside the A10's name, then SIGHUP."""
    generation = reloading_server.data.generation
    cut = FULL.index("[A10]") + len("[A1")
    write_atomically(files.custom, FULL[:cut])
    with caplog.at_level("INFO", logger="pciname.server"):
        assert reloading_server.reload("signal") is False
    assert "last line is incomplete" in rejected(caplog) and "rename it into place" in rejected(caplog)
    assert reloading_server.data.generation == generation
    assert served_a10(reloading_server) == "OLD_NAME"
    write_atomically(files.custom, FULL)
    assert reloading_server.reload("signal") is True
    assert served_a10(reloading_server) == "GA102GL_A10"


def test_a_file_still_being_written_is_refused(reloading_server, files, caplog, monkeypatch):
    """A writer that truncates the file and writes it in pieces (each ending a
    line, so the file always looks complete): a reload while it writes is
    refused; once it is done and settled, the reload serves the whole file."""
    monkeypatch.setattr(data_module, "SETTLE_SECONDS", 0.3)
    lines = FULL.splitlines(keepends=True)
    started = threading.Event()

    def writer() -> None:
        with open(files.custom, "w", encoding="utf-8") as out:
            for line in lines:
                out.write(line)
                out.flush()
                os.utime(files.custom)  # a fresh mtime each time, whatever the file system's granularity
                started.set()
                time.sleep(0.1)

    thread = threading.Thread(target=writer)
    thread.start()
    started.wait(5)
    with caplog.at_level("INFO", logger="pciname.server"):
        assert reloading_server.reload("signal") is False
    thread.join()
    assert "still being written" in rejected(caplog)
    assert served_a10(reloading_server) == "OLD_NAME"
    assert reloading_server.reload("signal") is True  # waits for the file to settle, then loads it
    assert served_a10(reloading_server) == "GA102GL_A10"


def test_wait_until_settled_waits_only_for_a_recent_write(tmp_path, monkeypatch):
    slept: list[float] = []
    monkeypatch.setattr(data_module.time, "sleep", slept.append)
    path = tmp_path / "custom.ids"
    path.write_text(FULL)
    old = time.time() - 60
    os.utime(path, (old, old))  # written a minute ago (then renamed into place)
    data_module.wait_until_settled(path, settle=30)
    assert slept == []
    path.write_text(FULL)  # written just now
    data_module.wait_until_settled(path, settle=30)
    assert len(slept) == 1 and 29 < slept[0] <= 30


def test_a_file_that_changed_while_it_was_loaded_is_refused(tmp_path):
    from pciname.resolution.catalog import catalog_for

    path = tmp_path / "custom.ids"
    path.write_text(FULL)
    catalog = catalog_for(path)
    data_module.check_served_file(catalog)
    path.write_text(FULL.replace("A10", "A20"))
    with pytest.raises(PciIdsError, match="changed while it was loaded"):
        data_module.check_served_file(catalog)


# -- generated: any cut that does not end a line is refused, never served -------------


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(1, len(FULL) - 1), junk=st.sampled_from(["", "\t2330  GH100 [H100 SXM5 80GB]"]))
def test_no_cut_short_of_a_line_end_is_loaded(tmp_path, cut, junk):
    """A file cut at any byte (of a whole file, or of a line appended to it)
    that does not end with a newline: the served-file check refuses it."""
    from pciname.resolution.catalog import catalog_for

    text = (FULL + junk)[: cut + (len(junk) and len(FULL))]
    if text.endswith("\n"):
        text = text[:-1]
    path = tmp_path / "cut.ids"
    path.write_text(text)
    with pytest.raises(PciIdsError):
        data_module.check_served_file(catalog_for(path))


def test_the_readme_states_the_settle_delay():

    limits = (REPO / "docs" / "limits-and-security.md").read_text()
    limits = limits.split("### Limits", 1)[1].split("###", 1)[0]
    assert f"unchanged for {data_module.SETTLE_SECONDS:g} s after its" in limits
    grpc = (REPO / "docs" / "grpc.md").read_text()
    assert f"unchanged (size, mtime, inode) for {data_module.SETTLE_SECONDS:g} s" in grpc
