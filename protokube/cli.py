"""The ``protokube`` command: one entry point, one sub-command per component."""

from __future__ import annotations

import importlib
import sys

from protokube import __version__, heap
from protokube.parent import die_with_parent

# sub-command -> ("module:function(argv) -> int", help); the module is imported only when chosen.
COMMANDS = {
    "serve": ("protokube.gateway.cli:main", "run the API server: HTTP gateway plus embedded storage"),
    "gateway": ("protokube.gateway.cli:gateway_main", "run the HTTP gateway alone against --storage HOST:PORT"),
    "storage": ("protokube.server.cli:main", "run the etcd-v3-compatible storage service alone"),
    "certs": (
        "protokube.gateway.security.certscli:main",
        "issue client and serving certificates signed by the server's CA",
    ),
    "apf": ("protokube.gateway.flowcontrol.cli:main", "API Priority and Fairness tools (shuffle-sharding sizing)"),
    "wire": ("protokube.schema.wire:main", "annotate protobuf bytes field by field"),
    "crd-from-proto": (
        "protokube.gateway.apiextensions.fromproto:main",
        "print a CustomResourceDefinition for a .proto kind",
    ),
}
LONG_RUNNING = ("serve", "gateway", "storage")  # they settle their heap once started (protokube/heap.py)


def usage() -> str:
    lines = ["usage: protokube COMMAND [options] | --version", "", "commands:"]
    lines += [f"  {name:<15} {help_}" for name, (_, help_) in COMMANDS.items()]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    die_with_parent()  # when a protokube process started this one as its child
    if not argv or argv[0] in ("-h", "--help"):
        print(usage())
        return 0 if argv else 2
    if argv[0] == "--version":
        print(f"protokube {__version__}")
        return 0
    name, rest = argv[0], argv[1:]
    if name not in COMMANDS:
        print(f"protokube: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module_name, _, function = COMMANDS[name][0].partition(":")
    if name in LONG_RUNNING:
        heap.starting()
    return getattr(importlib.import_module(module_name), function)(rest)


if __name__ == "__main__":
    sys.exit(main())
