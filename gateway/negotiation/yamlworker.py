"""YAML bodies parsed where they cannot hold the event loop.

A small body is parsed on the loop (a few milliseconds at most). A larger one — up to the 3 MiB a
body may have, a second or more of Python per megabyte — is parsed in a worker process, started
on first use; the loop only waits for it and unpickles the values. A parse's work is bounded by
the body's size (aliases are shared, never expanded), so a worker always finishes; a request that
ends meanwhile stops waiting for it. One worker: large YAML bodies take turns on one core while
the loop keeps the other.
"""

from __future__ import annotations

import asyncio
import gc
import multiprocessing
import os
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from protokube.schema import yamldecode
from protokube.schema.yamldecode import Document

INLINE_BYTES = 16 * 1024
# The worker runs at a lower scheduling priority: where it shares a core with the serving loop,
# the loop wins the CPU (a bystander's p99 while a 3 MiB body is decoded: bench/bystander.py).
WORKER_NICENESS = 10

_pool: ProcessPoolExecutor | None = None


async def parse(body: bytes) -> Document:
    """yamldecode.parse of ``body``, in the worker process unless it is small (DecodeError as it raises)."""
    if len(body) <= INLINE_BYTES:
        return yamldecode.parse(body)
    try:
        return await asyncio.get_running_loop().run_in_executor(_worker(), _parse_without_collection, body)
    except BrokenProcessPool:  # the worker died (killed from outside): the next body gets a new one
        _discard()
        raise


def _worker() -> ProcessPoolExecutor:
    global _pool
    if _pool is None:  # spawned, not forked: the gateway has threads (gRPC's among them)
        _pool = ProcessPoolExecutor(
            max_workers=1,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=os.nice,
            initargs=(WORKER_NICENESS,),
        )
    return _pool


def _discard() -> None:
    global _pool
    if _pool is not None:
        _pool.shutdown(wait=False, cancel_futures=True)
        _pool = None


def _parse_without_collection(body: bytes) -> Document:
    """In the worker: the values of one body hold no reference cycles, so the cyclic garbage
    collector (which would walk every value built so far, again and again) waits until the end."""
    gc.disable()
    try:
        return yamldecode.parse(body)
    finally:
        gc.enable()
