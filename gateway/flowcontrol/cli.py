"""``protokube apf``: tools for administrators of API Priority and Fairness."""

from __future__ import annotations

import sys

from protokube.gateway.flowcontrol.shufflesharding import sizing_main

TOOLS = {"shuffle-sharding": (sizing_main, "probability that a mouse flow is crushed, for a hand size and queues")}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in TOOLS:
        lines = ["usage: protokube apf TOOL [options]", "", "tools:"]
        lines += [f"  {name:<17} {help_}" for name, (_, help_) in TOOLS.items()]
        print("\n".join(lines), file=sys.stderr if argv else sys.stdout)
        return 2
    return TOOLS[argv[0]][0](argv[1:])
