"""Robustness: a bystander's /readyz latency while an expensive CEL object is submitted (issue 34).

A CRD with a quadratic rule over up to 700 short strings (within upstream's static budget) gets an
object of 700 items: its rule runs until the per-call limit stops it (1 million cost, seconds in
Python), off the event loop. Meanwhile one client asks /readyz every 10 ms on its own connection;
its p99 is compared with its p99 when the server is idle (goal: at most 2x).
"""

from __future__ import annotations

import asyncio
import json
import time

from bench.common import Row, at_most, percentile, ratio_row
from bench.loadgen import Connection

GOAL = 2.0
IDLE_SAMPLES = 300
GROUP = "cost.example.com"
SQUARES = f"/apis/{GROUP}/v1/namespaces/default/squares"
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": f"squares.{GROUP}"},
    "spec": {
        "group": GROUP,
        "scope": "Namespaced",
        "names": {"plural": "squares", "singular": "square", "kind": "Square", "listKind": "SquareList"},
        "versions": [
            {
                "name": "v1",
                "served": True,
                "storage": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "properties": {
                            "spec": {
                                "type": "object",
                                "properties": {
                                    "items": {
                                        "type": "array",
                                        "maxItems": 700,
                                        "items": {"type": "string", "maxLength": 8},
                                    }
                                },
                                "x-kubernetes-validations": [
                                    {"rule": "self.items.all(x, self.items.all(y, x == y || x != y))"}
                                ],
                            }
                        },
                    }
                },
            }
        ],
    },
}


async def _readyz(conn: Connection) -> float:
    began = time.perf_counter()
    status, _ = await conn.request("GET", "/readyz")
    assert status == 200, status
    return time.perf_counter() - began


async def _measure(port: int) -> dict:
    admin, bystander, submitter = (Connection("127.0.0.1", port) for _ in range(3))
    status, body = await admin.request(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json.dumps(CRD).encode()
    )
    assert status == 201, body[:300]
    while (await admin.request("GET", SQUARES))[0] != 200:
        await asyncio.sleep(0.05)
    idle = [await _readyz(bystander) for _ in range(IDLE_SAMPLES)]
    items = [f"i{n:06d}" for n in range(700)]
    obj = {"apiVersion": f"{GROUP}/v1", "kind": "Square", "metadata": {"name": "big"}, "spec": {"items": items}}
    began = time.perf_counter()
    submitted = asyncio.ensure_future(submitter.request("POST", SQUARES, json.dumps(obj).encode()))
    during = []
    while not submitted.done():
        during.append(await _readyz(bystander))
        await asyncio.sleep(0.01)
    status, _ = await submitted
    elapsed = time.perf_counter() - began
    for conn in (admin, bystander, submitter):
        conn.close()
    idle_p99, during_p99 = percentile(idle, 0.99), percentile(during, 0.99)
    return {
        "status": status,  # 422: the rule's per-call cost limit
        "evaluation_s": elapsed,
        "idle_p99_s": idle_p99,
        "during_p99_s": during_p99,
        "during_samples": len(during),
        "ratio": during_p99 / idle_p99,
    }


def measure(port: int) -> dict:
    return asyncio.run(_measure(port))


def row(results: dict) -> Row:
    return ratio_row(
        "robustness",
        "bystander /readyz p99 while an expensive CEL object is submitted",
        f"{results['during_p99_s'] * 1000:.1f} ms",
        f"idle {results['idle_p99_s'] * 1000:.1f} ms; {results['status']} after {results['evaluation_s']:.1f} s",
        results["ratio"],
        at_most,
        GOAL,
    )
