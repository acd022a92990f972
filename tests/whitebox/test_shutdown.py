"""On shutdown /readyz fails first (its shutdown check) while /livez stays ok, as upstream."""

from __future__ import annotations

import asyncio

from protokube.gateway.app import create_app

from .stack import run, running_server


def test_readyz_fails_once_shutdown_begins() -> None:
    async def scenario() -> None:
        async with running_server() as server:
            client = create_app(server).test_client()
            # Ready once every post-start hook has passed (APF's config consumer may pass after bootstrap).
            for _ in range(500):
                if (ready := await (await client.get("/readyz")).get_data()) == b"ok":
                    break
                await asyncio.sleep(0.01)
            assert ready == b"ok"
            server.close_watches()  # what SIGTERM does first
            readyz = await client.get("/readyz")
            text = (await readyz.get_data()).decode()
            assert readyz.status_code == 500 and "[-]shutdown failed: reason withheld\n" in text
            assert (await client.get("/livez")).status_code == 200

    run(scenario)
