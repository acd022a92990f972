"""Hypothesis profiles: "default" keeps `make test` short, "fuzz" (`make fuzz`) runs many examples.

Pick one with HYPOTHESIS_PROFILE=fuzz (or pytest's --hypothesis-profile=fuzz).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

_QUIET = [HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.filter_too_much]

settings.register_profile("default", max_examples=15, deadline=None, suppress_health_check=_QUIET)
settings.register_profile(
    "fuzz", max_examples=int(os.environ.get("FUZZ_EXAMPLES", "5000")), deadline=None, suppress_health_check=_QUIET
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "default"))
