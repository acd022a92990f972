"""Leader election through a coordination.k8s.io Lease, as kube-controller-manager elects itself
(client-go's leaderelection): the controllers that must run once per cluster run only in the
gateway holding the Lease; when it stops renewing, another gateway takes over.

The holder renews every ``retry_period``; a holder that could not renew for ``renew_deadline``
stops its controllers. The others try every ``retry_period`` and take the Lease once its record
has not changed for ``lease_duration`` of their own clock (never comparing clocks across hosts).
A gateway that stops releases the Lease so that another takes over at once. The identity is
stable across restarts of one gateway (host and listen address), so a restarted single gateway
resumes its own Lease without waiting for it to expire.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence

from protokube.gateway.controllers.leadertiming import LeaderElection
from protokube.gateway.errors import StatusError
from protokube.gateway.objects.codec import Obj
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.store import Store
from protokube.gateway.storage.backend import StorageError

log = logging.getLogger("protokube.leaderelection")
NAMESPACE = "kube-system"
Controller = Callable[[], Awaitable[None]]
DEFAULT_TIMING = LeaderElection()


class LeaseHeld(Exception):
    """Someone else holds a Lease that has not expired."""


class LeaderElector:
    def __init__(
        self,
        leases: Store | None,
        name: str,
        identity: str,
        controllers: Sequence[Controller],
        timing: LeaderElection = DEFAULT_TIMING,
    ) -> None:
        self.leases = leases
        self.name = name
        self.identity = identity
        self.controllers = controllers
        self.lease_duration = timing.lease_duration
        self.renew_deadline = timing.renew_deadline
        self.retry_period = timing.retry_period
        self.leading = False
        self._observed: tuple[tuple[str, int, int], float] | None = None  # (holder, renew time), when seen
        self._tasks: list[asyncio.Task[None]] = []

    async def run(self) -> None:
        if self.leases is None:  # no Lease API served (--runtime-config): nothing to elect with
            self._start()
            await asyncio.Event().wait()
        last_renewal: float | None = None
        try:
            while True:
                try:
                    held = await self._try_acquire_or_renew()
                    last_renewal = time.monotonic() if held else last_renewal
                except (StatusError, StorageError) as err:  # storage away: keep leading until the deadline
                    log.warning("lease %s/%s: %s", NAMESPACE, self.name, err)
                    recent = last_renewal is not None and time.monotonic() - last_renewal < self.renew_deadline
                    held = self.leading and recent
                if held:
                    self._start()
                else:
                    self._stop()
                await asyncio.sleep(self.retry_period)
        finally:
            self._stop()

    async def release(self) -> None:
        """On shutdown: give the Lease up so that another gateway takes over without waiting."""
        if not self.leading or self.leases is None:
            return
        self._stop()
        leases = self.leases

        def released(current: Obj | None) -> Obj:
            if current is None or current.spec.holderIdentity != self.identity:
                raise LeaseHeld()
            lease = leases.codec.copy(current)
            lease.spec.holderIdentity = ""
            lease.spec.leaseDurationSeconds = 1
            _set_now(lease.spec.renewTime)
            return lease

        with contextlib.suppress(LeaseHeld, StatusError, StorageError):
            await leases.update(NAMESPACE, self.name, released, WriteOptions())

    async def _try_acquire_or_renew(self) -> bool:
        assert self.leases is not None
        try:
            await self.leases.update(NAMESPACE, self.name, self._claimed, WriteOptions())
        except LeaseHeld:
            return False
        return True

    def _claimed(self, current: Obj | None) -> Obj:
        """The Lease with us as holder (renewed, or taken over), unless another holder is alive."""
        assert self.leases is not None
        if current is None:
            lease = self.leases.codec.new()
            lease.metadata.name = self.name
            lease.metadata.namespace = NAMESPACE
            lease.spec.leaseTransitions = 0
        else:
            lease = self.leases.codec.copy(current)
            holder = lease.spec.holderIdentity
            if holder and holder != self.identity and not self._expired(lease):
                raise LeaseHeld()
            if holder != self.identity:
                lease.spec.leaseTransitions = lease.spec.leaseTransitions + 1
        if current is None or current.spec.holderIdentity != self.identity:
            _set_now(lease.spec.acquireTime)
        lease.spec.holderIdentity = self.identity
        lease.spec.leaseDurationSeconds = int(self.lease_duration)
        _set_now(lease.spec.renewTime)
        return lease

    def _expired(self, lease: Obj) -> bool:
        """Whether the holder's record has stayed the same for a whole lease duration, by our clock."""
        record = (lease.spec.holderIdentity, lease.spec.renewTime.seconds, lease.spec.renewTime.nanos)
        now = time.monotonic()
        if self._observed is None or self._observed[0] != record:
            self._observed = (record, now)
        duration = lease.spec.leaseDurationSeconds or self.lease_duration
        return now - self._observed[1] >= duration

    def _start(self) -> None:
        if self.leading:
            return
        log.info("%s leads %s/%s", self.identity, NAMESPACE, self.name)
        self.leading = True
        self._tasks = [asyncio.create_task(run()) for run in self.controllers]

    def _stop(self) -> None:
        if not self.leading:
            return
        log.warning("%s stopped leading %s/%s", self.identity, NAMESPACE, self.name)
        self.leading = False
        for task in self._tasks:
            task.cancel()
        self._tasks = []


def _set_now(micro_time: Obj) -> None:
    now = time.time()
    micro_time.seconds = int(now)
    micro_time.nanos = int((now % 1) * 1_000_000) * 1000
