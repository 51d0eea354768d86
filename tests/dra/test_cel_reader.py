"""The DRA CEL reader (pciname.dra.cel) and the selector judge
(pciname.dra.selectors) on the fourth hostile round (issue 36): valid CEL
that once crashed it, CEL it read wrongly, its cost (counted, never timed)
and the caller's check it calls as it works. cel-go is the reference
(google/cel-go v0.28.1, 14f6746a286f198c2a976749331b7bf4aa2d4bd2); where
cel-python and Rust's ``cel`` agree with it, each test asks them too."""

from __future__ import annotations

import cel
import celpy
import pytest

from pciname.cli import main
from pciname.dra import audit, cel as reader, selectors
from pciname.dra.facts import choose
from pciname.dra.selectors import MAX_EVALUATIONS, Budget, driver_devices, judge
from tests.cli_run import call

D = 'device.attributes["gpu.nvidia.com"]'
A10 = f'{D}.deviceID == "0x2236"'


def combination():
    return choose()


def engines(expression: str) -> tuple[object, object]:
    """What cel-python and Rust's cel give for a closed expression."""
    env = celpy.Environment()
    return env.program(env.compile(expression)).evaluate({}), cel.compile(expression).execute({})


def lint(tmp_path, expression: str, *options: str) -> tuple[object, str, str]:
    path = tmp_path / "claim.yaml"
    path.write_text(
        "apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: c}\n"
        "spec:\n  spec:\n    devices:\n      requests:\n      - name: gpu1\n        exactly:\n"
        "          deviceClassName: vfio.gpu.nvidia.com\n"
        f"          selectors:\n          - cel: {{expression: '{expression}'}}\n",
        encoding="utf-8",
    )
    return call(main, ["lint", *options, str(path)])


# -- item 2: valid CEL that raised ValueError or RecursionError ------------------------


VALID = {
    "leading-zero": (f"{D}.numa == 010 && {A10}", True),  # cel-go: ParseInt("010", 10, 64) is 10
    "and-chain": (" && ".join(["true"] * 1200) + f" && {A10}", True),
    "or-chain": (" || ".join(["false"] * 1000) + f" || {A10}", True),
    "not-run": ("!" * 1201 + f"false && {A10}", True),  # cel-go drops an even run of '!'
    "not-run-even": ("!" * 1200 + f"({A10})", True),
    "negative": (f"{D}.numa == -1 && {A10}", True),
}


@pytest.mark.parametrize("case", VALID)
def test_valid_cel_is_judged_without_a_traceback(case, tmp_path):
    expression, matches = VALID[case]
    assert judge(expression, combination()).matches is matches
    code, out, err = lint(tmp_path, expression)
    assert "Traceback" not in err and code in (0, 1), err
    assert "dra-selector-matches-nothing" not in out


def test_the_engines_read_a_leading_zero_and_a_run_of_nots_as_cel_go_does():
    assert engines("010 == 10") == (True, True)
    assert engines("!!!false") == (True, True)


@pytest.mark.parametrize(
    ("expression", "why"),
    [
        ("(" * 1200 + A10 + ")" * 1200, "cel-go's limit"),  # parser/parser.go maxRecursionDepth 250
        ("(" * 100 + A10 + ")" * 100, "more than this reader follows"),
        (f'{D}.productName == "\\U00110000"', "\\U00110000 is no Unicode character"),  # unescape.go ValidRune
        (f"{D}.numa == 99999999999999999999", "past int64"),
        (f"{D}.numa == {'1' * 5000}", "past int64"),  # past Python's int() digit limit too
        (f"{A10} && {D}.productName.size() > 0" + " && true" * 2000, "longer than Kubernetes' limit of 10240"),
    ],
)
def test_what_the_reader_does_not_follow_is_a_note_in_one_line(expression, why, tmp_path):
    verdict = judge(expression, combination())
    assert verdict.matches is None and why in verdict.unjudgeable, verdict
    code, out, err = lint(tmp_path, expression)
    assert (code, out) == (0, "")
    notes = [line for line in err.splitlines() if "lint cannot judge this selector" in line]
    assert len(notes) == 1 and why in notes[0] and "Traceback" not in err


# -- item 3: a surrogate escape --------------------------------------------------------


@pytest.mark.parametrize("escape", ["\\uD800", "\\udfff", "\\U0000D800"])
def test_a_surrogate_escape_is_no_valid_cel_and_is_printed_escaped(escape, tmp_path):
    expression = f'{D}.productName == "{escape}"'
    with pytest.raises(reader.Invalid):
        reader.parse(expression)
    code, out, err = lint(tmp_path, expression)
    assert (code, out) == (0, "")
    assert f"the escape {escape} is no Unicode character" in err
    err.encode("utf-8")  # strictly: no lone surrogate reaches any output
    code, out, err = lint(tmp_path, expression, "-o", "json")
    out.encode("utf-8"), err.encode("utf-8")


def test_a_control_character_a_literal_escapes_is_printed_escaped(tmp_path):
    expression = f'{D}.productName == "\\x9b[31mA10\\u200b"'  # an 8-bit CSI, a zero-width space
    assert reader.parse(expression)[3] == ("lit", "\x9b[31mA10\u200b")
    code, out, _ = lint(tmp_path, expression)
    assert code == 1 and "dra-selector-matches-nothing" in out
    assert "\x9b" not in out and "\u200b" not in out
    assert '"\\u009b[31mA10\\u200b"' in out


def test_a_lone_surrogate_character_is_no_valid_cel():
    with pytest.raises(reader.Invalid, match="U\\+D800 is a lone surrogate"):
        reader.parse(f'{D}.productName == "\ud800"')


# -- item 5 and 9: what the reader once read wrongly -----------------------------------


@pytest.mark.parametrize(
    "expression",
    [
        f"has(device.driver) && {A10}",  # driver is a field of the device
        f"!has({D}.foo) && {A10}",  # a missing key under has() is false, not an error
        f"{D}.iommuFDEnabled >= false && {A10}",  # CEL orders booleans
        f"{D}.iommuFDEnabled <= true && {A10}",
        f"{D}.iommuFDEnabled && {A10}",  # a host-dependent bool is either, in && || ! too
        f"!{D}.iommuFDEnabled && {A10}",
        f"({D}.iommuFDEnabled || false) && {A10}",
        f'"\u017f".upperAscii() == "\u017f" && {A10}',  # ext/strings.go upperASCII: ASCII letters only
        f'"\u212a".lowerAscii() == "\u212a" && {A10}',  # the Kelvin sign stays
        f'{D}.productName.lowerAscii() == "ga102gl [a10]"',
        f'{D}.numa != "0" && {A10}',  # != is true unless == is (evalNe)
        f"{D}.deviceID != 1 && {A10}",
        f"size({D}.productName) == 13 && {A10}",
    ],
)
def test_a_selector_a_cel_engine_finds_true_is_no_finding(expression, tmp_path):
    assert judge(expression, combination()).matches is True, judge(expression, combination())
    code, out, _ = lint(tmp_path, expression)
    assert "dra-selector-matches-nothing" not in out


def test_has_of_a_domain_is_not_judged():
    # Kubernetes' device.attributes finds an empty map for any domain, so
    # cel-go's has() is true there; plain maps (both engines here) answer
    # false: the reader gives no verdict either way.
    verdict = judge(f"!has(device.attributes.foo) && {A10}", combination())
    assert verdict.matches is None and "has() of the domain 'foo'" in verdict.unjudgeable


def test_heterogeneous_equality_is_false_and_ordering_across_types_an_error():
    device = {"driver": "gpu.nvidia.com", "attributes": reader.Domains({}), "capacity": reader.Domains({})}
    run = lambda text: reader.evaluate(reader.parse(text), device)  # noqa: E731
    assert run('1 == "a"') == [False]
    assert run('1 != "a"') == [True]
    assert run('1 < "a"') == [reader.ERROR]
    assert run("false < true") == [True]
    assert run('"b" in ["a", 1, true]') == [False]
    assert run("1 in [true]") == [False]  # no bool is an int
    assert run('size("\u00e9") == 1') == [True]  # code points, as cel-go's size


# -- item 7: a version attribute -------------------------------------------------------


def test_a_version_attribute_is_no_string():
    attributes = reader.Attributes({"driverVersion": reader.Version("550.54.15")})
    device = {"driver": "gpu.nvidia.com", "attributes": reader.Domains({"gpu.nvidia.com": attributes})}
    run = lambda text: reader.evaluate(reader.parse(text), device)  # noqa: E731
    assert run(f'{D}.driverVersion == "550.54.15"') == [reader.ERROR]  # Semver.Equal: no such overload
    assert run(f'"550.54.15" == {D}.driverVersion') == [False]  # String.Equal of another type
    assert run(f'{D}.driverVersion != "550.54.15"') == [True]  # evalNe
    assert run(f'{D}.driverVersion.startsWith("550")') == [reader.ERROR]
    with pytest.raises(reader.Unjudgeable):
        run(f'{D}.driverVersion.isGreaterThan(semver("550.0.0"))')
    attributes["driverVersion"] = reader.Host("version")  # as lint predicts a host-dependent one
    assert run(f'{D}.driverVersion == "550.54.15"') == [reader.ERROR]
    assert run(f'"550.54.15" == {D}.driverVersion') == [False]
    with pytest.raises(reader.Unjudgeable):
        run(f'{D}.driverVersion < "551"')


def test_audit_compares_a_version_attribute_as_cel_does():
    resource_slice = {
        "spec": {
            "driver": "gpu.nvidia.com",
            "pool": {"name": "node-1"},
            "devices": [{"name": "gpu-0", "attributes": {"driverVersion": {"version": "550.54.15"}}}],
        }
    }
    (device,) = audit.published([resource_slice], "gpu.nvidia.com")
    assert device["attributes"]["gpu.nvidia.com"]["driverVersion"] == "550.54.15"  # reported as it is
    assert audit.evaluate("device.attributes['gpu.nvidia.com'].driverVersion == '550.54.15'", device) is False


# -- item 4 and the cost: linear, counted, bounded -------------------------------------


class CountedText(str):
    """A str that counts the characters its slices copy."""

    copied = 0

    def __getitem__(self, key):  # type: ignore[override]
        part = str.__getitem__(self, key)
        CountedText.copied += len(part)
        return part


def test_the_tokenizer_copies_no_rest_of_the_text_per_token():
    text = CountedText(" && ".join(f'{D}.deviceID != "0x{i:04x}"' for i in range(200)))
    CountedText.copied = 0
    found = reader.tokens(text)
    assert len(found) > 2000
    assert CountedText.copied <= len(text)


def ids_selector(ids: list[str], op: str) -> str:
    """``deviceID in [ids]`` or a ``||`` of ``deviceID ==``, each ``&& type == "gpu"``
    (never true), with as many ids as Kubernetes' limit takes."""

    def text(parts: list[str]) -> str:
        if op == "in":
            return f'{D}.deviceID in [{", ".join(parts)}] && {D}.type == "gpu"'
        return f'({" || ".join(parts)}) && {D}.type == "gpu"'

    parts: list[str] = []
    for device_id in ids:
        part = f'"{device_id}"' if op == "in" else f'{D}.deviceID == "{device_id}"'
        if len(text([*parts, part])) > reader.MAX_SELECTOR_BYTES:
            break
        parts.append(part)
    return text(parts)


@pytest.mark.parametrize("op", ["in", "=="])
def test_a_10_kib_selector_of_device_ids_is_judged_on_few_devices(op):
    """The hostile round's selector: every known device id, at Kubernetes'
    limit; each id names one device, the rest stand for one another."""
    devices = driver_devices(combination())
    expression = ids_selector(sorted(devices.known), op)
    selectors._VERDICTS.clear()  # judged here, not found in the cache
    assert len(expression) > reader.MAX_SELECTOR_BYTES - 200
    budget = Budget()
    verdict = judge(expression, combination(), budget=budget)
    assert verdict.matches is False and verdict.kept
    evaluated_per_device = budget.spent / len(devices.devices)
    assert evaluated_per_device < len(expression) // 20  # far from the tree on every device


def test_past_the_run_budget_the_selector_is_a_note_and_not_kept():
    # size() of the attributes' map: judged on every device of the release
    expression = " || ".join(f"size({D}) == {100 + i}" for i in range(20))
    budget = Budget(limit=10_000)
    verdict = judge(expression, combination(), budget=budget)
    assert verdict.matches is None and not verdict.kept
    assert "budget of 10,000 CEL evaluations is spent" in verdict.unjudgeable
    assert judge(expression, combination()).matches is False  # another run judges it anew
    assert MAX_EVALUATIONS == 200_000


# -- item 1: the caller's check ---------------------------------------------------------


class Stop(Exception):
    pass


def test_judging_calls_the_check_as_it_goes_and_stops_where_it_raises():
    calls = []

    def check():
        calls.append(1)
        if len(calls) > 3:
            raise Stop

    expression = " || ".join(f'{D}.productName.endsWith("zz{i}")' for i in range(50))
    with pytest.raises(Stop):
        judge(expression, combination(), check=check)
    assert len(calls) == 4
    assert judge(expression, combination()).matches is False  # nothing was kept of the stopped run
