"""The ``protokube`` command: one entry point, one sub-command per component."""

from __future__ import annotations

import importlib
import sys

# sub-command -> module whose ``main(argv) -> int`` runs it; imported only when chosen.
COMMANDS = {
    "serve": ("gateway.cli", "run the API server: HTTP gateway plus embedded storage"),
    "storage": ("server.cli", "run the etcd-v3-compatible storage service alone"),
    "wire": ("protokube.schema.wire", "annotate protobuf bytes field by field"),
}


def usage() -> str:
    lines = ["usage: protokube COMMAND [options]", "", "commands:"]
    lines += [f"  {name:<9} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"protokube: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(COMMANDS[name][0])
    return module.main(rest)


if __name__ == "__main__":
    sys.exit(main())
