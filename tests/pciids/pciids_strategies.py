"""Hypothesis strategies for pci.ids files: ``well_formed`` draws a valid
file in every spelling pciutils allows, with the database it must give
(used by the grammar, loader and lspci-name tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from pciname.pciids.model import Device, DeviceClass, PciDatabase, ProgIf, Subclass, Subsystem, Vendor

_NAME_START = st.sampled_from([b"A", b"z", b"0", b"#", b"[", b'"', b"\\", b"\xc3\xa9", b"\xff", b"\xe2\x82", b"\x0b"])
_NAME_REST = st.binary(max_size=24).map(lambda b: b.replace(b"\n", b"").replace(b"\r", b"").replace(b"\0", b""))
_NAME_TEXT = st.text(st.characters(blacklist_characters="\n\r\0", blacklist_categories=("Cs",)), max_size=12)
_NAME = st.one_of(
    st.tuples(_NAME_START, _NAME_REST).map(b"".join),
    st.tuples(_NAME_START, _NAME_TEXT.map(lambda t: t.encode())).map(b"".join),
)
_BLANKS = st.sampled_from([b"", b" ", b"\t", b"  ", b" \t"])
_TRAIL = st.sampled_from([b"", b"", b" ", b"\t"])


def _spell(value: int, width: int, upper: int) -> bytes:
    digits = f"{value:0{width}x}"
    return "".join(c.upper() if upper >> i & 1 else c for i, c in enumerate(digits)).encode()


def _text(name: bytes) -> str:
    return name.decode("utf-8", "surrogateescape")


@st.composite
def well_formed(draw) -> tuple[bytes, PciDatabase]:
    """A valid pci.ids file in every spelling pciutils allows, and the
    database it must give."""
    out = _Writer(draw)
    db, lines = out.db, out.lines
    if draw(st.booleans()):
        db.version = draw(st.sampled_from(["2026.10.24", "0.0~x", "v 1"]))
        db.date = draw(st.sampled_from(["2026-10-24 03:15:02", "today"]))
        lines += [b"#", b"#\tList of PCI ID's", b"#\tVersion: " + db.version.encode(), b"# Date:\t" + db.date.encode()]
    for block in _blocks(draw):
        getattr(out, block[0])(*block[1:])
    # Comments and blank lines anywhere after the header.
    start = 4 if db.version else 0
    for _ in range(draw(st.integers(0, 4))):
        at = draw(st.integers(start, len(lines)))
        lines.insert(at, draw(st.sampled_from([b"", b" ", b"\t\t", b"#", b"\t# c"])))
    entries = [i for i, line in enumerate(lines) if i >= start and line.strip(b" \t")[:1] not in (b"", b"#")]
    if entries and draw(st.booleans()):
        # A header field after the first entry means nothing.
        lines.insert(draw(st.integers(entries[0] + 1, len(lines))), b" \t#\tVersion: no")
    end = draw(st.sampled_from([b"\n", b"\r\n"]))
    data = end.join(lines) + (end if lines and draw(st.booleans()) else b"")
    return data, db


def _blocks(draw) -> list:
    """The file's blocks, in order: vendors (their devices and subsystems),
    classes (their subclasses and prog-ifs), unknown sections, generic ones."""
    blocks: list = []
    for vid in draw(st.lists(st.integers(0, 0xFFFF), max_size=4, unique=True)):
        devices = draw(st.lists(st.integers(0, 0xFFFF), max_size=3, unique=True))
        subs = {
            d: draw(st.lists(st.tuples(st.integers(0, 0xFFFF), st.integers(0, 0xFFFF)), max_size=3, unique=True))
            for d in devices
        }
        blocks.append(("vendor", vid, devices, subs))
    for cid in draw(st.lists(st.integers(0, 0xFF), max_size=3, unique=True)):
        orphans = draw(st.lists(st.integers(0, 0xFF), max_size=2, unique=True))
        subclasses = draw(st.lists(st.integers(0, 0xFF), max_size=3, unique=True))
        progifs = {
            s: [p for p in draw(st.lists(st.integers(0, 0xFF), max_size=2, unique=True)) if s or p not in orphans]
            for s in subclasses
        }
        blocks.append(("pci_class", cid, orphans, progifs))
    for _ in range(draw(st.integers(0, 2))):
        blocks.append(("unknown",))
    blocks = draw(st.permutations(blocks))
    vendors = [block[1] for block in blocks if block[0] == "vendor"]
    if vendors:  # generic blocks come after the vendors they name
        for _ in range(draw(st.integers(0, 2))):
            blocks.append(
                ("generic", draw(st.sampled_from(vendors)), draw(st.lists(st.integers(0, 0xFFFF), max_size=3)))
            )
    return blocks


class _Writer:
    """Writes a block's lines, drawing their spellings, and adds what they
    mean to the database pciutils must read from them."""

    def __init__(self, draw) -> None:
        self.draw = draw
        self.db = PciDatabase()
        self.lines: list[bytes] = []

    def hexid(self, value: int, width: int) -> bytes:
        return _spell(value, width, self.draw(st.integers(0, 15)))

    def named(self, prefix: bytes) -> str:
        """Append ``prefix`` + blank + name; return the name pciutils keeps."""
        draw = self.draw
        name = draw(_NAME) + draw(_TRAIL)
        sep = draw(st.sampled_from([b" ", b"\t"]))
        self.lines.append(prefix + sep + draw(_BLANKS) + name)
        if name[-1:] in (b" ", b"\t"):
            name = name[:-1]
        return _text(name)

    def vendor(self, vid: int, devices: list[int], subs: dict) -> None:
        hexid, named = self.hexid, self.named
        vendor = self.db.vendors[f"{vid:04x}"] = Vendor(f"{vid:04x}", named(hexid(vid, 4)))
        for did in devices:
            device = vendor.devices[f"{did:04x}"] = Device(f"{did:04x}", named(b"\t" + hexid(did, 4)))
            for sv, sd in subs[did]:
                key = (f"{sv:04x}", f"{sd:04x}")
                sep = self.draw(st.sampled_from([b" ", b"\t"]))
                device.subsystems[key] = Subsystem(*key, named(b"\t\t" + hexid(sv, 4) + sep + hexid(sd, 4)))

    def pci_class(self, cid: int, orphans: list[int], progifs: dict) -> None:
        hexid, named = self.hexid, self.named
        dclass = self.db.classes[f"{cid:02x}"] = DeviceClass(f"{cid:02x}", named(b"C " + hexid(cid, 2)))
        for pid in orphans:
            holder = dclass.subclasses.setdefault("00", Subclass("00", ""))
            holder.prog_ifs[f"{pid:02x}"] = ProgIf(f"{pid:02x}", named(b"\t\t" + hexid(pid, 2)))
        for sid in progifs:
            name = named(b"\t" + hexid(sid, 2))
            subclass = dclass.subclasses.setdefault(f"{sid:02x}", Subclass(f"{sid:02x}", ""))
            subclass.name = name
            for pid in progifs[sid]:
                subclass.prog_ifs[f"{pid:02x}"] = ProgIf(f"{pid:02x}", named(b"\t\t" + hexid(pid, 2)))

    def generic(self, vid: int, ids: list[int]) -> None:
        self.lines.append(b"S " + self.hexid(vid, 4) + self.draw(st.sampled_from([b"", b" ", b"\t"])))
        for sid in ids:
            key = (f"{vid:04x}", f"{sid:04x}")
            if key in self.db.generic_subsystems:
                continue
            self.db.generic_subsystems[key] = self.named(b"\t" + self.hexid(sid, 4))

    def unknown(self) -> None:
        draw = self.draw
        letter = draw(st.sampled_from(b"ABDXYZ"))
        self.lines.append(bytes([letter]) + b" " + draw(_NAME))  # not just "X "
        for _ in range(draw(st.integers(0, 3))):
            self.lines.append(draw(st.sampled_from([b"\t", b"\t\t", b"\t\t\t\t"])) + draw(_NAME_REST))
