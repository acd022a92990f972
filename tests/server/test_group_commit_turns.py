"""A durable commit's answers reach their requests at the loop's next turn: the writer thread's outcome
is one callback that answers them, with no task of the committer to wake in between."""

from __future__ import annotations

import asyncio
from pathlib import Path

from protokube.gen.etcdserverpb import rpc_pb2 as pb
from protokube.server import apply
from protokube.server.backend import SqliteBackend
from protokube.server.groupcommit import GroupCommitter
from protokube.server.lessor import Lessor
from protokube.server.mvcc import MvccStore
from protokube.server.watchhub import WatchHub


class TurnCountingLoop(asyncio.SelectorEventLoop):
    """Counts the loop's turns (ticked by a task) and notes the turn at which another thread's callback
    (the writer thread's outcome of a commit) runs."""

    def __init__(self) -> None:
        super().__init__()
        self.turns = 0
        self.outcome_turns: list[int] = []

    def call_soon_threadsafe(self, callback, *args, context=None):
        def noted(*args):
            self.outcome_turns.append(self.turns)
            callback(*args)

        return super().call_soon_threadsafe(noted, *args, context=context)


async def _tick(loop: TurnCountingLoop) -> None:
    while True:
        loop.turns += 1
        await asyncio.sleep(0)  # once per turn


async def _turns_to_answer(tmp_path: Path) -> list[int]:
    loop = asyncio.get_running_loop()
    assert isinstance(loop, TurnCountingLoop)
    backend = SqliteBackend(tmp_path, in_memory=True)
    store = MvccStore(backend, Lessor(), cluster_id=1, member_id=1)
    committer = GroupCommitter(store, WatchHub(store))
    committer.start()
    ticker = loop.create_task(_tick(loop))
    waited = []
    try:
        for n in range(5):
            request = pb.PutRequest(key=b"/k%d" % n, value=b"v")
            await committer.submit(apply.evaluate_put, request)
            waited.append(loop.turns - loop.outcome_turns[-1])
    finally:
        ticker.cancel()
        await committer.stop()
        backend.close()
    return waited


def test_a_commit_is_answered_at_the_turn_after_it_is_durable(tmp_path: Path) -> None:
    with asyncio.Runner(loop_factory=TurnCountingLoop) as runner:
        waited = runner.run(asyncio.wait_for(_turns_to_answer(tmp_path), 10))
    # With a committer task between the writer's outcome and the answers: 2 turns each.
    assert waited == [1] * 5
