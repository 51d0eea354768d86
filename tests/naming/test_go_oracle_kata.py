"""The Kata sandbox device plugin's names against its own Go code.

``tests/go_oracle_kata/main.go`` is NVIDIA's code (go-nvlib's pci.ids parser
and the plugin's ``formatDeviceName``, as v0.0.2 .. v0.0.5 vendor them) with
a driver that prints, per file, every NVIDIA device's raw and formatted name,
or PANIC. :mod:`pciname.naming.kata` must agree on every NVIDIA id of every
real pci.ids file we have (the plugin's own 2025.07.11 among them) and on
generated files full of what go-nvlib's scanner treats specially (duplicate
and upper-case vendor lines, non-hex ids, class sections, short lines that
make it panic, a last line without ``\\n``, lines beginning ``EOF``, Unicode
white space, invalid UTF-8). ``tests/go_oracle_kata_v001/main.go`` is
v0.0.1's own ``getDeviceName``; every Kata profile's advertised names are
checked against the code of its release on every id of its universe.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from pciname.naming import kata
from pciname.naming.algorithms import VENDOR_SECTION, NameIndex
from pciname.naming.gotext import scan_lines
from tests.conftest import NEEDS_GO, PLUGIN_PCIIDS, REAL_PCIIDS_FILES
from tests.go_oracles import ask, oracle as go_oracle

pytestmark = NEEDS_GO

PIECES = [
    "10de",
    "10DE",
    "10dg",
    "1af4",
    "2236",
    "22ab",
    "22AB",
    "zz12",
    "\t",
    "\t\t",
    " ",
    "  ",
    "#",
    "C",
    "C 03",
    "EOF",
    "E",
    "\r",
    "\v",
    "\f",
    "\x85",
    "\xa0",
    "\u3000",
    "\u2028",
    "ß",
    "ı",
    ".",
    "/",
    "-",
    "_",
    "[",
    "]",
    "GA102GL",
    "Rev. A",
    "H100-SXM5",
]
RAW = [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x80"]


@pytest.fixture(scope="module")
def oracle() -> Path:
    return go_oracle("kata")


def go_answers(oracle: Path, paths: list[Path]) -> dict[str, object]:
    """FILE -> "PANIC" or {id: (raw name, formatted name)} as bytes."""
    answers: dict[str, object] = {}
    current: dict[bytes, tuple[bytes, bytes]] = {}
    for line in ask(oracle, *paths).split(b"\n")[:-1]:
        if line.startswith(b"FILE "):
            current = {}
            answers[line[5:].decode()] = current
        elif line == b"PANIC":
            answers[list(answers)[-1]] = "PANIC"
        else:
            ident, _, rest = line.partition(b"\t")
            raw, _, formatted = rest.rpartition(b"\t")
            current[ident] = (raw, formatted)
    return answers


def python_answer(data: bytes) -> object:
    lines = kata.go_nvlib_lines(data.decode("utf-8", "surrogateescape"))
    try:
        devices = kata.go_nvlib_devices(lines)
    except kata.GoNvlibPanic:
        return "PANIC"
    encode = lambda text: text.encode("utf-8", "surrogateescape")  # noqa: E731
    return {encode(i): (encode(n), encode(kata.format_device_name(n))) for i, n in sorted(devices.items())}


def random_file(rng: random.Random) -> bytes:
    lines = []
    for _ in range(rng.randrange(1, 20)):
        parts = [rng.choice(["", "", "\t", "\t\t", "10de  NVIDIA", "C 03  Display"]).encode()]
        for _ in range(rng.randrange(0, 7)):
            parts.append(rng.choice(RAW) if rng.random() < 0.06 else rng.choice(PIECES).encode())
        lines.append(b"".join(parts))
    if rng.random() < 0.7:  # an NVIDIA section go-nvlib can parse
        at = rng.randrange(len(lines) + 1)
        device = rng.choice(["2236", "22ab", "22AB", "1aef", "zz12"])
        lines[at:at] = [b"10de  NVIDIA Corporation", f"\t{device}  {rng.choice(PIECES)} {rng.choice(PIECES)}".encode()]
    return b"\n".join(lines) + rng.choice([b"", b"\n", b"\r\n"])


def test_every_real_file_names_every_nvidia_device_as_go_does(oracle):
    go = go_answers(oracle, REAL_PCIIDS_FILES)
    for path in REAL_PCIIDS_FILES:
        want = go[str(path)]
        assert isinstance(want, dict) and len(want) > 10, path
        assert python_answer(path.read_bytes()) == want, path


def random_files(directory: Path, seed: int, count: int) -> list[Path]:
    rng = random.Random(seed)
    paths = []
    for n in range(count):
        path = directory / f"{n}.ids"
        path.write_bytes(random_file(rng))
        paths.append(path)
    return paths


@pytest.mark.parametrize("seed", range(4))
def test_generated_files_agree_with_go(oracle, tmp_path, seed):
    paths = random_files(tmp_path, seed, 300)
    go = go_answers(oracle, paths)
    mismatches = [(p.read_bytes(), go[str(p)]) for p in paths if python_answer(p.read_bytes()) != go[str(p)]]
    assert not mismatches, mismatches[:2]
    outcomes = {"PANIC" if go[str(p)] == "PANIC" else bool(go[str(p)]) for p in paths}
    assert outcomes == {"PANIC", True, False}  # the files reach every outcome


def test_the_kata_names_differ_from_the_kubevirt_names_where_the_code_says():
    """On the plugin's own pci.ids (2025.07.11), go-nvlib's per-model names
    differ from the KubeVirt plugin's (vendor-section) exactly for the
    devices whose names hold a ``-``; everything else is equal."""
    data = (PLUGIN_PCIIDS / "2025.07.11.ids").read_bytes()
    devices = kata.go_nvlib_devices(kata.go_nvlib_lines(data.decode("utf-8", "surrogateescape")))
    kubevirt = NameIndex(scan_lines(data.decode("utf-8", "surrogateescape")), VENDOR_SECTION)
    differ = {i for i, n in devices.items() if kata.format_device_name(n) != kubevirt.name(i)}
    assert differ == {i for i, n in devices.items() if "-" in n}
    assert len(differ) == 118  # the figure README.md gives
    assert kata.format_device_name(devices["2236"]) == "GA102GL_A10"
    assert kata.format_device_name(kata.UNKNOWN_DEVICE) == kata.UNKNOWN_DEVICE


def test_the_alias_rules_read_like_cmd_main_go():
    # unset: the release's default; set (even to ""): as given; "" means per-model names
    assert kata.effective_alias(None, kata.DEFAULT_PGPU_ALIAS) == "pgpu"
    assert kata.effective_alias("", kata.DEFAULT_PGPU_ALIAS) == ""
    assert kata.effective_alias(None, "") == ""  # v0.0.1 reads P_GPU_ALIAS with os.Getenv
    assert kata.advertised_name("GA102GL_A10", "pgpu") == "pgpu"
    assert kata.advertised_name("GA102GL_A10", "") == "GA102GL_A10"
    assert kata.socket_path("pgpu") == "/var/lib/kubelet/device-plugins/sandbox-pgpu.sock"


def test_the_catalog_names_every_real_file_as_go_does(oracle):
    """The product path (a catalog's go-nvlib table, as every surface reads
    it) gives Go's formatted name for every id Go's parse holds, and
    UNKNOWN_DEVICE for the ids it does not (a 10de id no file names)."""
    from pciname.naming.algorithms import GO_NVLIB
    from pciname.resolution.catalog import catalog_for

    go = go_answers(oracle, REAL_PCIIDS_FILES)
    for path in REAL_PCIIDS_FILES:
        want = go[str(path)]
        assert isinstance(want, dict)
        catalog = catalog_for(path)
        for ident, (_, formatted) in want.items():
            assert catalog.name(GO_NVLIB, ident.decode()).encode("utf-8", "surrogateescape") == formatted, (path, ident)
        unnamed = next(f"{n:04x}" for n in range(0xFFFF, 0, -1) if f"{n:04x}".encode() not in want)
        assert catalog.name(GO_NVLIB, unnamed) == kata.UNKNOWN_DEVICE


@pytest.mark.parametrize("seed", range(2))
def test_generated_files_name_through_the_catalog_as_go_does(oracle, tmp_path, seed):
    """Generated files through the catalog (its ReadBytes lines, its index):
    Go's names where Go's parse succeeds; where Go panics, the catalog
    refuses the file with one line (GoNvlibPanic, a PciIdsError)."""
    from pciname.naming.algorithms import GO_NVLIB
    from pciname.resolution.catalog import catalog_for

    paths = random_files(tmp_path, 100 + seed, 150)
    go = go_answers(oracle, paths)
    panics = 0
    for path in paths:
        want = go[str(path)]
        catalog = catalog_for(path)
        if want == "PANIC":
            panics += 1
            with pytest.raises(kata.GoNvlibPanic, match=r"^line \d+: "):
                catalog.names(GO_NVLIB)
            continue
        assert isinstance(want, dict)
        for ident, (_, formatted) in want.items():
            name = catalog.name(GO_NVLIB, ident.decode("utf-8", "surrogateescape"))
            assert name.encode("utf-8", "surrogateescape") == formatted, (path.read_bytes(), ident)
    assert 0 < panics < len(paths)


@pytest.fixture(scope="module")
def oracle_v001() -> Path:
    return go_oracle("kata_v001")


def _kata_profiles(family: str) -> list[str]:
    from pciname.naming.profiles import load_registry

    registry = load_registry()
    return [p.name for p in [*registry.kata_releases(), *registry.kata_operator_releases()] if p.algorithm == family]


def _per_model(profile_name: str) -> dict[str, str]:
    """device id -> the resource each Kata profile, run with P_GPU_ALIAS=""
    and NVSWITCH_ALIAS="" where it reads one, advertises for every id of its universe."""
    from pciname.naming.profiles import get_profile, with_aliases
    from pciname.resolution.resolver import Resolver

    profile = get_profile(profile_name)
    profile = with_aliases(profile, alias="", nvswitch_alias="" if profile.nvswitch_unset is not None else None)
    view = Resolver().view(profile)
    return {i: view.resource(i) for i in view.universe()}


def test_v0_0_1_names_every_id_as_its_own_getdevicename_does(oracle_v001):
    """v0.0.1 runs getDeviceName (copied from its tag) on the image's
    /usr/pci.ids (2025.07.11): pciname's v0.0.1 profile advertises that
    name, or the id when it is "" (createDevicePlugins), for every NVIDIA id
    of its universe and ids no file has."""
    (name,) = _kata_profiles("vendor-section")
    resources = _per_model(name)
    ids = [*resources, "0000", "fffe"]
    answer = ask(oracle_v001, PLUGIN_PCIIDS / "2025.07.11.ids", stdin="\n".join(ids) + "\n").decode()
    go = dict(line.split("\t", 1) for line in answer.splitlines())
    assert len(go) == len(ids) > 1000
    for device_id in resources:
        assert resources[device_id] == f"nvidia.com/{go[device_id] or device_id}", device_id


@pytest.mark.parametrize("profile_name", _kata_profiles("go-nvlib"))
def test_every_go_nvlib_release_advertises_what_its_code_does(oracle, profile_name):
    """Each go-nvlib release (v0.0.2 .. v0.0.5, and the operator releases
    deploying them) on go-nvlib's embedded pci.ids: formatDeviceName of
    GetDeviceName, UNKNOWN_DEVICE for what the parse lacks, the id only when
    the formatted name is "", for every NVIDIA id of the profile's universe."""
    go = go_answers(oracle, [PLUGIN_PCIIDS / "2025.07.11.ids"])[str(PLUGIN_PCIIDS / "2025.07.11.ids")]
    assert isinstance(go, dict)
    resources = _per_model(profile_name)
    for device_id, resource in resources.items():
        found = go.get(device_id.encode())
        name = kata.UNKNOWN_DEVICE if found is None else found[1].decode("utf-8", "surrogateescape")
        assert resource == f"nvidia.com/{name or device_id}", device_id
    assert sum(1 for i in resources if i.encode() not in go) > 10  # ids the embedded file lacks: UNKNOWN_DEVICE
