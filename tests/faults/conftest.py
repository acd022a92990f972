"""Options of the fault tests: how many kill -9 cycles (5 in `make test`, 50 in `make soak`)."""

from __future__ import annotations

import os

import pytest


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--crash-cycles",
        type=int,
        default=int(os.environ.get("CRASH_CYCLES", "5")),
        help="kill -9 cycles per crash-safety test (env CRASH_CYCLES; 5 by default)",
    )


@pytest.fixture
def crash_cycles(request: pytest.FixtureRequest) -> int:
    return request.config.getoption("--crash-cycles")
