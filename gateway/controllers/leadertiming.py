"""kube-controller-manager's leader election timing: the values of its three flags, apart from the
election itself (leaderelection.py) so that reading the flags imports nothing else."""

from __future__ import annotations

from dataclasses import dataclass

LEASE_DURATION, RENEW_DEADLINE, RETRY_PERIOD = 15.0, 10.0, 2.0


@dataclass(frozen=True)
class LeaderElection:
    """kube-controller-manager's --leader-elect-lease-duration, -renew-deadline, -retry-period."""

    lease_duration: float = LEASE_DURATION
    renew_deadline: float = RENEW_DEADLINE
    retry_period: float = RETRY_PERIOD
