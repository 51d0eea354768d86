"""lspci-compatible names, ``pciname describe`` and ``pciname check``.

The oracle is lspci itself: ``lspci -i FILE -F DUMP`` on a generated dump
(``lspci -x`` format) holding thousands of functions with chosen vendor,
device, subsystem and class ids, compared field by field (``-vmm``) and line
by line (``-v``), in names, ``-n`` and ``-nn`` modes. ``-O hwdb.disable=1``
keeps udev's hwdb out, so lspci's names come from the file alone.
"""

from __future__ import annotations

import json
import random
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from pciname.base.paths import embedded_pciids_path
from pciname.cli import main
from pciname.errors import InvalidDeviceError
from pciname.pciids import loader
from pciname.pciids.names import (
    BOTH,
    NAMES,
    NUMBERS,
    class_name,
    describe,
    device_name,
    parse_class_code,
    parse_device_numbers,
    parse_subsystem,
    prog_if_name,
    subsystem_device_name,
    subsystem_name,
    subsystem_vendor_name,
    vendor_device_name,
    vendor_name,
)
from tests.conftest import PLUGIN_PCIIDS, needs_lspci
from tests.pciids.pciids_strategies import well_formed

LSPCI = shutil.which("lspci")
EMBEDDED = embedded_pciids_path()


@pytest.fixture(scope="module")
def embedded_db():
    return loader.load_bytes(EMBEDDED.read_bytes())


# -- names, by hand (each checked once against lspci 3.9 with data/pci.ids) -------------


def test_vendor_and_device(embedded_db):
    db = embedded_db
    assert vendor_name(db, 0x10DE) == "NVIDIA Corporation"
    assert vendor_name(db, 0x10DE, numeric=BOTH) == "NVIDIA Corporation [10de]"
    assert vendor_name(db, 0x10DE, numeric=NUMBERS) == "10de"
    assert vendor_name(db, 0x1234) == "Vendor 1234"
    assert vendor_name(db, 0x1234, numeric=BOTH) == "Vendor [1234]"
    assert device_name(db, 0x10DE, 0x2236) == "GA102GL [A10]"
    assert device_name(db, 0x10DE, 0xFFFF) == "Device ffff"
    assert device_name(db, 0x10DE, 0xFFFF, numeric=BOTH) == "Device [ffff]"
    assert vendor_device_name(db, 0x10DE, 0x2236) == "NVIDIA Corporation GA102GL [A10]"
    assert vendor_device_name(db, 0x10DE, 0xFFFF) == "NVIDIA Corporation Device ffff"
    assert vendor_device_name(db, 0x1234, 0x5678) == "Device 1234:5678"
    assert vendor_device_name(db, 0x10DE, 0x2236, numeric=BOTH) == "NVIDIA Corporation GA102GL [A10] [10de:2236]"
    assert vendor_device_name(db, 0x10DE, 0xFFFF, numeric=BOTH) == "NVIDIA Corporation Device [10de:ffff]"
    assert vendor_device_name(db, 0x1234, 0x5678, numeric=NUMBERS) == "1234:5678"


def test_subsystems(embedded_db):
    db = embedded_db
    assert subsystem_vendor_name(db, 0x1234) == "Unknown vendor 1234"
    assert subsystem_device_name(db, 0x10DE, 0x2236, 0x10DE, 0x152F) == "Device 152f"
    # a subsystem equal to the device is named like the device
    assert subsystem_device_name(db, 0x10DE, 0x2236, 0x10DE, 0x2236) == "GA102GL [A10]"
    assert subsystem_name(db, 0x10DE, 0x2236, 0x10DE, 0x152F) == "NVIDIA Corporation Device 152f"
    assert subsystem_name(db, 0x10DE, 0x2236, 0x1234, 0x5678) == "Device 1234:5678"
    assert subsystem_name(db, 0x10DE, 0x2236, 0x10DE, 0x152F, numeric=BOTH) == "NVIDIA Corporation Device [10de:152f]"
    # vendor 0000 or device 0000: no per-device lookup
    assert subsystem_device_name(db, 0, 0, 0x10DE, 0x0001) == "Device 0001"


def test_classes_and_prog_ifs(embedded_db):
    db = embedded_db
    assert class_name(db, 0x0302) == "3D controller"
    assert class_name(db, 0x0380) == "Display controller"
    assert class_name(db, 0xFF00) == "Unassigned class [ff00]"  # the class name, with the number
    assert class_name(db, 0xFF00, numeric=BOTH) == "Unassigned class [ff00]"
    assert class_name(db, 0xFF00, numeric=NUMBERS) == "ff00"
    assert class_name(db, 0x0302, numeric=BOTH) == "3D controller [0302]"
    assert class_name(db, 0xFE00) == "Class fe00"
    assert prog_if_name(db, 0x0300, 0x01, no_numbers=True) == "8514 controller"
    assert prog_if_name(db, 0x0C03, 0x30) == "XHCI"
    assert prog_if_name(db, 0x0C03, 0x31, no_numbers=True) is None
    assert prog_if_name(db, 0x0C03, 0x31) == "ProgIf 31"
    assert prog_if_name(db, 0x0C03, 0x31, numeric=BOTH) == "ProgIf [31]"


def test_ide_prog_if_and_orphan_prog_ifs():
    db = loader.load_bytes(b"C 01 Mass storage\n\t01 IDE interface\n\t\t05 listed\nC 03 D\n\t\t01 orphan\n")
    assert prog_if_name(db, 0x0101, 0x05, no_numbers=True) == "listed"
    assert prog_if_name(db, 0x0101, 0x8F, no_numbers=True) == "Master SecP SecO PriP PriO"
    assert prog_if_name(db, 0x0101, 0x00, no_numbers=True) == ""  # lspci -v: "(prog-if 00 [])"
    assert prog_if_name(db, 0x0101, 0x10, no_numbers=True) is None
    # a prog-if right under the class line belongs to subclass 00, which stays unnamed
    assert prog_if_name(db, 0x0300, 0x01, no_numbers=True) == "orphan"
    assert class_name(db, 0x0300) == "D [0300]"


def test_truncation_to_lspci_buffers():
    db = loader.load_bytes(("1234 " + "V" * 60 + "\u00e9" * 40 + "\n\t5678 " + "D" * 127 + "\n").encode())
    vendor = vendor_name(db, 0x1234)
    assert len(vendor.encode()) == 127 and vendor.endswith("\u00e9...")
    assert device_name(db, 0x1234, 0x5678) == "D" * 127  # 127 bytes fit in 128
    assert device_name(db, 0x1234, 0x5678, numeric=BOTH) == "D" * 124 + "..."
    assert device_name(db, 0x1234, 0x5678, size=None, numeric=BOTH) == "D" * 127 + " [5678]"
    # cut inside a character: the bytes are kept, as lspci prints them
    db = loader.load_bytes(("1234 " + "V" + "\u00e9" * 70 + "\n").encode())
    cut = vendor_name(db, 0x1234).encode("utf-8", "surrogateescape")
    assert cut == ("V" + "\u00e9" * 61).encode() + b"\xc3..."


def test_describe(embedded_db):
    names = describe(embedded_db, 0x10DE, 0x2236, (0x10DE, 0x152F), 0x030200)
    assert (names.vendor, names.device, names.svendor, names.sdevice) == (
        "NVIDIA Corporation",
        "GA102GL [A10]",
        "NVIDIA Corporation",
        "Device 152f",
    )
    assert names.subsystem == "NVIDIA Corporation Device 152f"
    assert (names.class_name, names.prog_if) == ("3D controller", None)
    assert describe(embedded_db, 0x10DE, 0x2236, class_code=0x030001).prog_if == "01 [8514 controller]"
    assert describe(embedded_db, 0x10DE, 0x2236, class_code=0x030207).prog_if == "07"
    # lspci shows no subsystem for subvendor 0000 or ffff
    assert describe(embedded_db, 0x10DE, 0x2236, (0, 0x1234)).subsystem is None
    assert describe(embedded_db, 0x10DE, 0x2236, (0xFFFF, 0xFFFF)).svendor is None
    assert describe(embedded_db, 0x10DE, 0x2236).as_dict()["class_code"] is None
    with pytest.raises(InvalidDeviceError):
        describe(embedded_db, 0x10000, 0)
    with pytest.raises(ValueError):
        describe(embedded_db, 0x10DE, 0x2236, numeric=3)


@pytest.mark.parametrize("text", ["10de:2236", "10DE:2236", "0x10de:0x2236", "0X10DE:0x2236", " 10de:2236\n", "2236"])
def test_parse_device_numbers(text):
    assert parse_device_numbers(text) == (0x10DE, 0x2236)


@pytest.mark.parametrize(
    "text", ["", "10de:22", "10de2236", "10de:2236:1", "g0de:2236", "10de-2236", "0x:2236", "1 0de:2236"]
)
def test_parse_device_rejects(text):
    with pytest.raises(InvalidDeviceError, match="malformed device"):
        parse_device_numbers(text)


def test_parse_subsystem_and_class():
    assert parse_subsystem("10DE:152f") == (0x10DE, 0x152F)
    with pytest.raises(InvalidDeviceError, match="malformed subsystem"):
        parse_subsystem("152f")
    assert parse_class_code("030200") == 0x030200
    assert parse_class_code("0x0C0330") == 0x0C0330
    assert parse_class_code("0302") == 0x030200
    for bad in ("03", "03020", "0302000", "zz0200"):
        with pytest.raises(InvalidDeviceError, match="malformed class"):
            parse_class_code(bad)


# -- the CLI --------------------------------------------------------------------------------


def test_describe_cli_text(capsys):
    assert main(["describe", "10DE:2236", "--subsystem", "10de:152f", "--class", "030200"]) == 0
    assert capsys.readouterr().out == (
        "Vendor: NVIDIA Corporation\n"
        "Device: GA102GL [A10]\n"
        "SVendor: NVIDIA Corporation\n"
        "SDevice: Device 152f\n"
        "Subsystem: NVIDIA Corporation Device 152f\n"
        "Class: 3D controller\n"
    )
    assert main(["describe", "0x1234:0x5678", "--class", "0300", "-nn"]) == 0
    assert capsys.readouterr().out == (
        "Vendor: Vendor [1234]\nDevice: Device [5678]\nClass: VGA compatible controller [0300]\n"
        "ProgIf: 00 [VGA controller]\n"
    )


def test_describe_cli_json_and_file(capsys, tmp_path):
    ids = tmp_path / "pci.ids"
    ids.write_bytes(b"10de NVIDIA \xff\n\t2236 A10\n")
    assert main(["describe", "10de:2236", "--pciids", str(ids), "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["vendor"] == "NVIDIA \ufffd" and data["device"] == "A10" and data["vendor_id"] == "10de"
    assert data["subsystem"] is None and data["class_name"] is None and data["pciids"] == str(ids)


def test_describe_cli_prints_the_files_bytes(capsysbinary, tmp_path):
    ids = tmp_path / "pci.ids"
    ids.write_bytes(b"10de NVIDIA \xff\n")
    assert main(["describe", "10de:2236", "--pciids", str(ids)]) == 0
    assert capsysbinary.readouterr().out == b"Vendor: NVIDIA \xff\nDevice: Device 2236\n"


def test_describe_cli_errors(capsys):
    assert main(["describe", "10de:22"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("pciname: error: malformed device '10de:22'") and err.count("\n") == 1
    assert main(["describe", "10de:2236", "--subsystem", "x"]) == 2
    assert "malformed subsystem" in capsys.readouterr().err
    assert main(["describe", "10de:2236", "--pciids", "/nonexistent/pci.ids"]) == 2
    assert capsys.readouterr().err == (
        "pciname: error: /nonexistent/pci.ids: cannot read pci.ids file: No such file or directory\n"
    )


def test_check_cli(capsys, tmp_path):
    good = tmp_path / "good.ids"
    good.write_bytes(
        b"#\tVersion: 2026.10.24\n#\tDate:    2026-10-24 03:15:02\n10de NV\n\t2236 A\n\t\t10de 0001 s\nC 03 D\n"
    )
    bad = tmp_path / "bad.ids"
    bad.write_bytes(b"10de NV\n\t22 A\n\tzzzz B\n10de again\n")
    assert main(["check", str(good)]) == 0
    assert capsys.readouterr().out == (
        f"{good}: ok, version 2026.10.24, date 2026-10-24 03:15:02, 1 vendors, 1 devices, 1 subsystems, 1 classes\n"
    )
    assert main(["check", str(bad), str(good)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        f"{bad}:2:4: Parse error: expected a 4-digit hex device id",
        f"{bad}:3:2: Parse error: expected a 4-digit hex device id",
        f"{bad}:4:1: Duplicate entry",
        f"{bad}: 3 malformed lines, version unknown, date unknown, 1 vendors, 0 devices, 0 subsystems, 0 classes",
        f"{good}: ok, version 2026.10.24, date 2026-10-24 03:15:02, 1 vendors, 1 devices, 1 subsystems, 1 classes",
    ]
    undated = tmp_path / "undated.ids"
    undated.write_bytes(b"10de NV\n")
    assert main(["check", str(undated)]) == 0
    assert "version unknown, date unknown" in capsys.readouterr().out


def test_check_cli_unreadable(capsys, tmp_path):
    assert main(["check", str(tmp_path / "missing.ids")]) == 2
    captured = capsys.readouterr()
    assert (
        captured.err
        == f"pciname: error: {tmp_path / 'missing.ids'}: cannot read pci.ids file: No such file or directory\n"
    )
    assert main(["check", str(tmp_path)]) == 2
    assert "Is a directory" in capsys.readouterr().err


def test_check_cli_embedded_file(capsys):
    assert main(["check", str(EMBEDDED)]) == 0
    assert capsys.readouterr().out.startswith(f"{EMBEDDED}: ok, version ")


# -- against lspci ------------------------------------------------------------------------------

Function = tuple[int, int, int, int, int]  # vendor, device, subvendor, subdevice, 24-bit class


def _slot(index: int) -> str:
    domain, rest = divmod(index, 65536)
    bus, rest = divmod(rest, 256)
    device, function = divmod(rest, 8)
    return f"{domain:04x}:{bus:02x}:{device:02x}.{function}"


def write_dump(path: Path, functions: list[Function]) -> None:
    """An ``lspci -x`` style dump: 64 bytes of config space per function."""
    out = []
    for index, (vendor, device, subvendor, subdevice, code) in enumerate(functions):
        config = bytearray(64)
        config[0:2] = vendor.to_bytes(2, "little")
        config[2:4] = device.to_bytes(2, "little")
        config[9:12] = code.to_bytes(3, "little")  # prog-if, subclass, class
        config[0x2C:0x2E] = subvendor.to_bytes(2, "little")
        config[0x2E:0x30] = subdevice.to_bytes(2, "little")
        out.append(f"{_slot(index)} Generated function {index}")
        out += [f"{row:02x}: " + " ".join(f"{b:02x}" for b in config[row : row + 16]) for row in range(0, 64, 16)]
        out.append("")
    path.write_text("\n".join(out) + "\n")


def lspci(ids: Path, dump: Path, *options: str) -> list[list[str]]:
    """lspci's output, one list of lines per function."""
    done = subprocess.run(
        [LSPCI, "-i", str(ids), "-F", str(dump), "-O", "hwdb.disable=1", "-D", *options],
        capture_output=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    text = done.stdout.decode("utf-8", "surrogateescape")
    return [block.split("\n") for block in text.split("\n\n") if block.strip()]


VMM_NAMES = ("Class", "Vendor", "Device", "SVendor", "SDevice")


def compare_with_lspci(db, ids: Path, functions: list[Function], workdir: Path) -> int:
    """Every function, in every mode: our names must be lspci's. Returns the
    number of fields and lines compared."""
    dump = workdir / "functions.dump"
    write_dump(dump, functions)
    compared = 0
    for numeric, flags in ((NAMES, ()), (NUMBERS, ("-n",)), (BOTH, ("-nn",))):
        expected = {
            _slot(i): describe(db, v, d, (sv, sd), code, numeric=numeric)
            for i, (v, d, sv, sd, code) in enumerate(functions)
        }
        blocks = lspci(ids, dump, "-vmm", *flags)
        assert len(blocks) == len(functions)
        for block in blocks:
            fields = dict(line.split(":\t", 1) for line in block)
            names = expected[fields["Slot"]]
            want = {"Class": names.class_name, "Vendor": names.vendor, "Device": names.device}
            if names.svendor is not None:
                want.update(SVendor=names.svendor, SDevice=names.sdevice)
            assert {k: fields[k] for k in VMM_NAMES if k in fields} == want, fields["Slot"]
            compared += len(want)
        blocks = lspci(ids, dump, "-v", *flags)
        assert len(blocks) == len(functions)
        for block in blocks:
            slot = block[0].split(" ", 1)[0]
            names = expected[slot]
            first = f"{slot} {names.class_name}: {names.vendor_device}"
            if names.prog_if is not None:
                first += f" (prog-if {names.prog_if})"
            assert block[0] == first
            subsystem = [line for line in block if line.startswith("\tSubsystem: ")]
            assert subsystem == ([] if names.subsystem is None else [f"\tSubsystem: {names.subsystem}"]), slot
            compared += 1 + len(subsystem)
    return compared


def sample_functions(db, rng: random.Random, count: int) -> list[Function]:
    """Known and unknown vendors, devices, subsystems and classes, mixed."""
    vendors = sorted(int(v, 16) for v in db.vendors)
    devices = sorted((int(v.id, 16), int(d, 16)) for v in db.vendors.values() for d in v.devices)
    subsystems = sorted(
        (int(v.id, 16), int(d.id, 16), int(s[0], 16), int(s[1], 16))
        for v in db.vendors.values()
        for d in v.devices.values()
        for s in d.subsystems
    )
    generic = sorted((int(s, 16), int(d, 16)) for s, d in db.generic_subsystems)
    classes = sorted(
        (int(c.id, 16), int(s.id, 16), int(p, 16) if p else rng.randrange(256))
        for c in db.classes.values()
        for s in c.subclasses.values()
        for p in list(s.prog_ifs) + [""]
    )
    # the pairs whose "vendor device" line lspci truncates
    long_pairs = [
        (int(v.id, 16), int(d.id, 16))
        for v in db.vendors.values()
        for d in v.devices.values()
        if len(v.name.encode("utf-8", "surrogateescape")) + len(d.name.encode("utf-8", "surrogateescape")) > 120
    ]

    def pick(items, fallback):
        return rng.choice(items) if items else fallback()

    def any_id():
        return rng.choice([0, 0xFFFF, rng.randrange(0x10000)])

    functions: list[Function] = []
    for _ in range(count):
        kind = rng.random()
        if kind < 0.3 and subsystems:
            v, d, sv, sd = rng.choice(subsystems)
        elif kind < 0.45:
            v, d = pick(devices, lambda: (any_id(), any_id()))
            sv, sd = rng.choice([(v, d), (0, 0), (0xFFFF, 0xFFFF), (0, rng.randrange(0x10000))])
        elif kind < 0.55:
            v, d = pick(devices, lambda: (any_id(), any_id()))
            sv, sd = pick(generic, lambda: (pick(vendors, any_id), any_id()))
        elif kind < 0.65:
            v, d = pick(long_pairs, lambda: (any_id(), any_id()))
            sv, sd = pick(vendors, any_id), any_id()
        elif kind < 0.8:
            v, d = pick(vendors, any_id), any_id()  # known vendor, mostly unknown device
            sv, sd = pick(vendors, any_id), any_id()
        else:
            v, d, sv, sd = any_id(), any_id(), any_id(), any_id()
        functions.append((v, d, sv, sd, _a_class(rng, classes)))
    return functions


def _a_class(rng: random.Random, classes: list[tuple[int, int, int]]) -> int:
    """A class code: mostly one the file names, else the IDE prog-if rule's, a subclass or a class unknown."""
    kind = rng.random()
    if kind < 0.6 and classes:
        base, sub, pif = rng.choice(classes)
    elif kind < 0.75:
        base, sub, pif = 0x01, 0x01, rng.randrange(256)  # IDE prog-if rule
    elif kind < 0.9 and classes:
        base, sub, pif = rng.choice(classes)[0], rng.randrange(256), rng.randrange(256)
    else:
        base, sub, pif = rng.randrange(256), rng.randrange(256), rng.randrange(256)
    return base << 16 | sub << 8 | pif


@needs_lspci
def test_lspci_names_embedded_file(embedded_db, tmp_path):
    functions = sample_functions(embedded_db, random.Random(2236), 3000)
    # and every class/subclass/prog-if the file names, once
    for c in embedded_db.classes.values():
        for s in c.subclasses.values():
            for p in list(s.prog_ifs) or ["00"]:
                functions.append((0x10DE, 0x2236, 0x10DE, 0x152F, int(c.id + s.id + p, 16)))
    assert compare_with_lspci(embedded_db, EMBEDDED, functions, tmp_path) > 40000


@needs_lspci
def test_lspci_names_nvidia_only_file(tmp_path):
    # the 2019 plugin image's file: only vendor 10de, no classes
    path = PLUGIN_PCIIDS / "2019-08-14.ids"
    db = loader.load_bytes(path.read_bytes())
    functions = sample_functions(db, random.Random(2019), 1000)
    assert compare_with_lspci(db, path, functions, tmp_path) > 10000


UNUSUAL = (
    "#\tVersion: test\n"
    "10DE\tNVIDIA Corporation \n"  # upper-case hex, tab separator, one trailing blank (dropped)
    "\t2236 \t GA102GL [A10]  \n"  # blanks before the name; of two trailing blanks one is kept
    '\t\t10DE\t152F\tA10 "quoted" \\back\\slash\n'
    "\t\t1028 0001\tDell \t tabbed\n"
    "\t2237  " + "D" * 120 + "\n"  # long: the pair overflows lspci's buffer
    "\t\t10de 0002 " + "S" * 300 + "\n"  # longer than even the 256-byte Subsystem line
    "1028 Dell\n"
    "\t0001 Dell device\n"
    "0000 Vendor zero\n"
    "\t0000 Device zero\n"
    "\t\t10de 0003 never found: lspci skips per-device lookup for vendor 0000\n"
    "1234 " + "\u00e9" * 70 + "\n"  # two-byte characters cut at 127 bytes
    "\t5678 na\xefve \u2603\n"
    "S 10de\n"
    "\t0003 Generic NVIDIA subsystem\n"
    "\t152f Generic, but the per-device entry wins\n"
    "S 1028 \n"
    "\t0001 Generic Dell (the device's own name comes later)\n"
    "X unknown block\n"
    "\tskipped\n"
    "\t\t\t\tskipped too\n"
    "C 03 Display controller\n"
    "\t\t07 prog-if listed right under the class\n"
    "\t00 VGA compatible controller\n"
    "\t\t00 VGA controller\n"
    "\t02 3D controller\n"
    "C 0C\tSerial bus controller\n"
    "\t03  USB controller \n"
    "\t\t30\tXHCI\n"
    "C 01 Mass storage controller\n"
    "\t01 IDE interface\n"
    "\t\t8A listed IDE mode\n"
).encode("utf-8")


@needs_lspci
def test_lspci_names_unusual_file(tmp_path):
    ids = tmp_path / "unusual.ids"
    ids.write_bytes(UNUSUAL + b"1235 invalid \xff\xfe UTF-8 \xe2\x82\n")
    db = loader.load_bytes(ids.read_bytes())
    assert db.issues == [] and len(db.generic_subsystems) == 3
    vendors = [0x10DE, 0x1028, 0x0000, 0x1234, 0x1235, 0xFFFF, 0x4321]
    devices = [0x2236, 0x2237, 0x0001, 0x0000, 0x5678, 0x0002, 0x0003, 0x152F, 0xFFFF]
    classes = [0x030000, 0x030007, 0x030001, 0x030200, 0x038000, 0x0C0330, 0x0C0331, 0x0C0000, 0x0D0000, 0x010100]
    classes += [0x010100 | pif for pif in (0x05, 0x8A, 0x8F, 0x10, 0x80, 0xFF)]
    functions = [
        (v, d, sv, sd, code)
        for v in vendors
        for d in devices
        for sv, sd in [
            (0x10DE, 0x152F),
            (0x10DE, 0x0003),
            (0x1028, 0x0001),
            (0x10DE, 0x0002),
            (v, d),
            (0, 0),
            (0x1234, 0x5678),
        ]
        for code in random.Random(v * 65536 + d).sample(classes, 3)
    ]
    assert compare_with_lspci(db, ids, functions, tmp_path) > 5000
    names = describe(db, 0x10DE, 0x2236, (0x10DE, 0x152F))
    assert names.vendor == "NVIDIA Corporation" and names.device == "GA102GL [A10] "
    assert names.sdevice == 'A10 "quoted" \\back\\slash'
    assert describe(db, 0x10DE, 0x1111, (0x10DE, 0x152F)).sdevice == "Generic, but the per-device entry wins"
    assert describe(db, 0x1028, 0x0001, (0x1028, 0x0001)).sdevice == "Generic Dell (the device's own name comes later)"
    assert describe(db, 0, 0, (0x10DE, 0x0003)).sdevice == "Generic NVIDIA subsystem"


@needs_lspci
@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture]
)
@given(case=well_formed(), seed=st.integers(0, 2**32))
def test_lspci_names_generated_files(case, seed, tmp_path):
    data, db = case
    ids = tmp_path / "generated.ids"
    ids.write_bytes(data)
    rng = random.Random(seed)
    functions = sample_functions(db, rng, 60)
    for sv, sd in db.generic_subsystems:  # each S-block entry, through some device
        functions.append((rng.randrange(0x10000), rng.randrange(0x10000), int(sv, 16), int(sd, 16), 0))
    compare_with_lspci(db, ids, functions, tmp_path)
