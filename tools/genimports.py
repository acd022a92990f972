"""``make gen``'s last step: protoc's Python output in gen/ becomes the package ``protokube.gen``.

protoc writes each generated module's imports from its .proto path (``from k8s.io.api.core.v1 import
types_pb2``, ``from mvccpb import kv_pb2``) and names that module in the descriptors it builds; both
get the ``protokube.gen.`` prefix here, so the code imports under the one top-level name the
distribution installs. The .proto file names inside the descriptors are untouched (upstream's).
Only the modules of this project's .proto files (those under proto/) are prefixed, so the same step
serves protoc's output for a .proto of one's own that imports them. ``--package`` also writes the
folder's __init__.py, making it a regular package (its subfolders stay namespace packages).

    python -m tools.genimports [--package] DIR
"""

from __future__ import annotations

import argparse
import re
from pathlib import Path

PACKAGE = "protokube.gen"
PROTO = Path(__file__).resolve().parents[1] / "proto"
INIT = '"""The generated code (`make gen`): protoc\'s modules of every file of proto/, the descriptor set."""\n'


def rewrite(text: str, tops: list[str]) -> str:
    """Prefix the imports of (and the module names built by) modules of ``tops`` with PACKAGE; idempotent."""
    names = "|".join(re.escape(top) for top in tops)
    prefix = re.escape(PACKAGE) + r"\."
    text = re.sub(rf"^(from|import) (?!{prefix})((?:{names})(?:\.\w+)*) ", rf"\1 {PACKAGE}.\2 ", text, flags=re.M)
    return re.sub(
        rf"(BuildTopDescriptorsAndMessages\(DESCRIPTOR, ')(?!{prefix})((?:{names})\.)", rf"\1{PACKAGE}.\2", text
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Prefix protoc's imports of this project's modules with protokube.gen."
    )
    parser.add_argument("dir", type=Path, help="protoc's --python_out (and --pyi_out, --grpc_python_out) folder")
    parser.add_argument("--package", action="store_true", help="write DIR/__init__.py too (gen/ itself)")
    args = parser.parse_args()
    tops = sorted(path.name for path in PROTO.iterdir() if path.is_dir())
    for path in sorted([*args.dir.rglob("*.py"), *args.dir.rglob("*.pyi")]):
        text = path.read_text()
        new = rewrite(text, tops)
        if new != text:
            path.write_text(new)
    if args.package:
        (args.dir / "__init__.py").write_text(INIT)


if __name__ == "__main__":
    main()
