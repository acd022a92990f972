"""Robustness: a bystander's /readyz latency while heavy requests are submitted (issue 34).

One client asks /readyz every 10 ms on its own connection while another submits, one at a time:
- an expensive CEL object: a CRD with a quadratic rule over up to 700 short strings (within
  upstream's static budget) gets an object of 700 items, whose rule runs until the per-call limit
  stops it (1 million cost, seconds in Python), off the event loop;
- a 3 MiB YAML body: a ConfigMap whose data is a flow list of about 700,000 numbers, decoded
  where it cannot hold the event loop — a worker process at a lower scheduling priority — (and
  refused: data values are strings).
Each p99 is compared with the bystander's p99 at the same pace when the server is idle (goal: at most
2x); /readyz probes storage at most every half second (as upstream's etcd checks), idle or not.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Awaitable, Callable

from bench.common import Row, at_most, percentile, ratio_row
from bench.loadgen import Connection

Submission = Callable[[Connection], Awaitable[tuple[int, bytes]]]

GOAL = 2.0
IDLE_SAMPLES = 300
PACE = 0.01  # between two of the bystander's requests
YAML_ITEMS = 1_000_000  # "d, " each: about 3 MiB
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
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


async def _paced(bystander: Connection, samples: int) -> list[float]:
    """The bystander's latencies at its pace (one /readyz every PACE): idle, as during a submission,
    so that both see the same share of the checks that probe storage (at most every half second)."""
    latencies = []
    for _ in range(samples):
        latencies.append(await _readyz(bystander))
        await asyncio.sleep(PACE)
    return latencies


async def _install_crd(admin: Connection) -> None:
    status, body = await admin.request(
        "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json.dumps(CRD).encode()
    )
    assert status == 201, body[:300]
    while (await admin.request("GET", SQUARES))[0] != 200:
        await asyncio.sleep(0.05)


def _expensive_cel(conn: Connection) -> Awaitable[tuple[int, bytes]]:
    items = [f"i{n:06d}" for n in range(700)]
    obj = {"apiVersion": f"{GROUP}/v1", "kind": "Square", "metadata": {"name": "big"}, "spec": {"items": items}}
    return conn.request("POST", SQUARES, json.dumps(obj).encode())


def _big_yaml(conn: Connection) -> Awaitable[tuple[int, bytes]]:
    numbers = ", ".join(str(n % 10) for n in range(YAML_ITEMS))
    body = f"apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: big-yaml}}\ndata: {{k: [{numbers}]}}\n"
    return conn.request("POST", CONFIGMAPS, body.encode(), {"Content-Type": "application/yaml"})


async def _during(bystander: Connection, submitter: Connection, submit: Submission, idle: list[float]) -> dict:
    """The bystander's latencies while ``submit`` runs, against its idle p99."""
    began = time.perf_counter()
    submitted = asyncio.ensure_future(submit(submitter))
    during = []
    while not submitted.done():
        during.append(await _readyz(bystander))
        await asyncio.sleep(PACE)
    status, _ = await submitted
    during_p99, idle_p99 = percentile(during, 0.99), percentile(idle, 0.99)
    return {
        "status": status,
        "submission_s": time.perf_counter() - began,
        "idle_p99_s": idle_p99,
        "during_p99_s": during_p99,
        "idle_p50_s": percentile(idle, 0.5),  # what every request pays, beside the p99's slowest few
        "during_p50_s": percentile(during, 0.5),
        "during_samples": len(during),
        "ratio": during_p99 / idle_p99,
    }


async def _measure(port: int) -> dict:
    admin, bystander, submitter = (Connection("127.0.0.1", port) for _ in range(3))
    await _install_crd(admin)
    idle = await _paced(bystander, IDLE_SAMPLES)
    results = {
        "expensive_cel": await _during(bystander, submitter, _expensive_cel, idle),  # 422: the per-call limit
        "yaml_3mib": await _during(bystander, submitter, _big_yaml, idle),  # 400: not a ConfigMap's data
    }
    for conn in (admin, bystander, submitter):
        conn.close()
    return results


def measure(port: int) -> dict:
    return asyncio.run(_measure(port))


FIGURES = {
    "expensive_cel": "bystander /readyz p99 while an expensive CEL object is submitted",
    "yaml_3mib": "bystander /readyz p99 while a 3 MiB YAML body is submitted",
}


def rows(results: dict) -> list[Row]:
    return [
        ratio_row(
            "robustness",
            figure,
            f"{results[key]['during_p99_s'] * 1000:.1f} ms",
            f"idle {results[key]['idle_p99_s'] * 1000:.1f} ms; p50 {results[key]['idle_p50_s'] * 1000:.2f} -> "
            f"{results[key]['during_p50_s'] * 1000:.2f} ms; "
            f"{results[key]['status']} after {results[key]['submission_s']:.1f} s",
            results[key]["ratio"],
            at_most,
            GOAL,
        )
        for key, figure in FIGURES.items()
    ]
