"""Generate the Python stubs of ``proto/pciname/v1/pciname.proto``.

    python -m tools.protogen            # rewrite pciname/server/_proto/
    python -m tools.protogen --check    # exit 1 if the committed stubs are stale

The stubs are committed (``pciname/server/_proto/``) so that installing
pciname needs no protoc; ``tests/server/test_server_proto.py`` regenerates them
into a temporary directory and fails when they differ.

protoc runs with ``-I proto`` so the file keeps its full name
``pciname/v1/pciname.proto`` (what reflection serves and other languages
import). That makes grpc's plugin write ``from pciname.v1 import
pciname_pb2``, a package that does not exist; the one post-processing step
here rewrites that line into the relative ``from . import pciname_pb2``, so
the stubs import as ``pciname.server._proto`` without any sys.path hacks.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

PROTO_FILE = "pciname/v1/pciname.proto"
STUB_NAMES = ("pciname_pb2.py", "pciname_pb2.pyi", "pciname_pb2_grpc.py")
_ABSOLUTE_IMPORT = "from pciname.v1 import pciname_pb2 as "
_RELATIVE_IMPORT = "from . import pciname_pb2 as "


#: The source checkout these tools live in.
REPO = Path(__file__).resolve().parents[1]


#: The source checkout these tools live in.
REPO = Path(__file__).resolve().parents[1]


def repo_proto_root() -> Path:
    """``proto/`` of the source checkout this module lives in."""
    return REPO / "proto"


def stubs_dir() -> Path:
    return REPO / "pciname" / "server" / "_proto"


def generate(out_dir: Path, proto_root: Path | None = None) -> list[Path]:
    """Run grpcio-tools' protoc and write the three stub files to ``out_dir``."""
    import grpc_tools
    from grpc_tools import protoc

    proto_root = Path(proto_root or repo_proto_root())
    if not (proto_root / PROTO_FILE).is_file():
        raise FileNotFoundError(f"{proto_root / PROTO_FILE}: not found (run from a source checkout)")
    well_known = Path(grpc_tools.__file__).resolve().parent / "_proto"
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="pciname-protoc-") as tmp:
        status = protoc.main(
            [
                "grpc_tools.protoc",
                f"-I{proto_root}",
                f"-I{well_known}",
                f"--python_out={tmp}",
                f"--pyi_out={tmp}",
                f"--grpc_python_out={tmp}",
                PROTO_FILE,
            ]
        )
        if status != 0:
            raise RuntimeError(f"protoc failed with status {status} on {proto_root / PROTO_FILE}")
        produced = Path(tmp) / Path(PROTO_FILE).parent
        written = []
        for name in STUB_NAMES:
            text = (produced / name).read_text(encoding="utf-8")
            if name == "pciname_pb2_grpc.py":
                if _ABSOLUTE_IMPORT not in text:
                    raise RuntimeError(f"generated {name} lacks the expected import line {_ABSOLUTE_IMPORT!r}")
                text = text.replace(_ABSOLUTE_IMPORT, _RELATIVE_IMPORT)
            target = out_dir / name
            target.write_text(text, encoding="utf-8")
            written.append(target)
    return written


def stale_files(proto_root: Path | None = None, committed: Path | None = None) -> list[str]:
    """Names of the committed stub files that differ from freshly generated ones."""
    committed = Path(committed or stubs_dir())
    with tempfile.TemporaryDirectory(prefix="pciname-stubs-") as tmp:
        generate(Path(tmp), proto_root)
        return [
            name
            for name in STUB_NAMES
            if not (committed / name).is_file() or (committed / name).read_bytes() != (Path(tmp) / name).read_bytes()
        ]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m tools.protogen", description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only report stale stubs (exit 1 if any)")
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files()
        for name in stale:
            print(f"stale: {stubs_dir() / name}", file=sys.stderr)
        return 1 if stale else 0
    with tempfile.TemporaryDirectory(prefix="pciname-stubs-") as tmp:
        for path in generate(Path(tmp)):
            shutil.copyfile(path, stubs_dir() / path.name)
            print(stubs_dir() / path.name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
