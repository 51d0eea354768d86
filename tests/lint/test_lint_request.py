"""The lint request (:mod:`pciname.capabilities.lint`): its release and
profile choice on both spellings, its answer equal to what ``pciname lint``
prints, the files' errors in their order, and the hooks the server bounds
a request with (``check``, ``stream``, ``refuse``)."""

from __future__ import annotations

import pytest

from pciname.capabilities.lint import LintRequest, answer, file_reader
from pciname.cli import main
from pciname.cozystack.releases import newest
from pciname.errors import PcinameError
from tests.kube_documents import ONE_WRONG_NAME_CR as CR

POOL = """nodeGroups:
  gpu:
    minReplicas: 0
    maxReplicas: 2
    instanceType: u1.large
    ephemeralStorage: 20Gi
    gpus:
    - name: nvidia.com/GA102GL_A10
    - name: nvidia.com/TYPO
"""
BAD = "a: [\n"


def both(**fields):
    """The request every surface builds: one, it carries no surface (a rule
    that names a field spells it per surface as it is reported)."""
    return [LintRequest(**fields)]


@pytest.mark.parametrize(
    ("fields", "release", "profile"),
    [
        ({}, None, None),
        ({"cozystack": "v1.4.0"}, "v1.4.0", "cozystack@v1.4.0"),
        ({"cozystack": "latest"}, newest().version, newest().profile),
        ({"cozystack": "  "}, None, None),
        ({"cozystack": "v1.4.0", "profile": "latest"}, "v1.4.0", "latest"),
        ({"profile": "cozystack@v1.5.0"}, None, "cozystack@v1.5.0"),
        ({"cozystack": "v1.5.0", "profile": "cozystack@v1.5.0"}, "v1.5.0", "cozystack@v1.5.0"),
    ],
)
def test_the_release_and_profile_chosen_on_both_spellings(fields, release, profile):
    for request in both(**fields):
        checked = request.validated()
        assert (checked.release, checked.chosen_profile) == (release, profile)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"cozystack": "bogus"}, "malformed Cozystack version 'bogus'"),
        ({"cozystack": "v9.9.9"}, "unknown Cozystack release 'v9.9.9'"),
        (
            {"cozystack": "v1.5.0", "profile": "cozystack@v1.6.0"},
            "profile cozystack@v1.6.0 is Cozystack v1.6.0, but Cozystack v1.5.0 was asked for: give one",
        ),
    ],
)
def test_a_bad_release_is_refused_alike_on_both_spellings(fields, message):
    for request in both(**fields):
        with pytest.raises(PcinameError, match=message.replace("(", r"\(")):
            request.validated()


def test_the_answer_is_what_the_command_prints(tmp_path, capsys):
    cr, pool = tmp_path / "cr.yaml", tmp_path / "pool.yaml"
    cr.write_text(CR)
    pool.write_text(POOL)
    request = LintRequest(((str(cr), CR), (str(pool), POOL)), cozystack="v1.4.0").validated()
    result = answer(request, request.chosen_profile)
    codes = [f.code for f in result.findings]
    assert "wrong-resource-name" in codes and "field-not-in-release" in codes
    assert result.documents == 2 and result.errors == ()
    assert main(["lint", str(cr), str(pool), "--cozystack", "v1.4.0"]) == 1
    assert capsys.readouterr().out == "".join(f.format() + "\n" for f in result.findings)


def test_a_blank_cozystack_option_keeps_meaning_the_newest_release(tmp_path, capsys):
    """``pciname lint --cozystack ''`` has always meant ``--cozystack latest``
    (its profile too); the request reads a blank release as none asked for,
    so the command says ``latest`` for it."""
    pool = tmp_path / "pool.yaml"
    pool.write_text(POOL)
    main(["lint", str(pool), "--cozystack", "latest"])
    latest = capsys.readouterr()
    main(["lint", str(pool), "--cozystack", ""])
    assert capsys.readouterr() == latest
    main(["lint", str(pool)])
    assert capsys.readouterr() != latest  # without it: the default profile's (the TYPO finding names it)


def test_unreadable_files_are_answered_in_their_order_beside_the_findings(tmp_path):
    missing = tmp_path / "missing.yaml"
    files = (("bad.yaml", BAD), file_reader(str(missing)), ("cr.yaml", CR), ("again.yaml", BAD))
    result = answer(LintRequest(files).validated(), "latest")
    assert [e.file for e in result.errors] == ["bad.yaml", str(missing), "again.yaml"]
    assert "cannot read" in str(result.errors[1])
    assert [f.file for f in result.findings] == ["cr.yaml"]


def test_refuse_stops_before_anything_is_linted():
    class Refused(Exception):
        pass

    seen: list[int] = []

    def refuse(errors):
        seen.append(len(errors))
        return Refused()

    with pytest.raises(Refused):
        answer(LintRequest((("a", BAD), ("b", CR), ("c", BAD))).validated(), "latest", refuse=refuse)
    assert seen == [2]


def test_the_check_is_asked_per_file_and_step_and_the_stream_reads_each_file():
    asked: list[str] = []
    read: list[str | bytes] = []

    def stream(text):
        read.append(text)
        return text

    request = LintRequest((("a", CR), ("b", POOL))).validated()
    answer(request, "latest", check=lambda: asked.append("check"), stream=stream)
    assert read == [CR, POOL] and len(asked) >= 4  # before each file, before and after the run

    class Stop(Exception):
        pass

    def stop():
        raise Stop

    with pytest.raises(Stop):
        answer(request, "latest", check=stop)
