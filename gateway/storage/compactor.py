"""Compaction of an external etcd, as kube-apiserver does it (k8s.io/apiserver storage/etcd3
compact.go): every interval, each gateway tries to take the turn by a transaction on
``compact_rev_key``; the one that takes it compacts to the revision it saw one interval ago, so
several gateways compact once per interval between them and history of one interval is kept.
The embedded storage keeps its own retention instead.
"""

from __future__ import annotations

import asyncio
import logging

from protokube.gateway.storage.backend import StorageError
from protokube.gateway.storage.etcd import EtcdBackend

log = logging.getLogger("protokube.compactor")


async def run_compactor(backend: EtcdBackend, interval: float) -> None:
    turn, revision = 0, 0  # the last turn seen; the revision seen when it was taken
    while True:
        await asyncio.sleep(interval)
        try:
            claimed, turn_now, current = await backend.claim_compaction(turn, revision)
        except StorageError as err:
            log.warning("compaction turn failed: %s", err)
            continue
        if claimed and revision:
            try:
                await backend.compact(revision)
                log.info("compacted storage to revision %d", revision)
            except StorageError as err:  # e.g. compacted already by hand: the next turn goes on
                log.warning("compaction to %d failed: %s", revision, err)
        turn, revision = turn_now, current
