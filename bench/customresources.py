"""Custom resources: what a CRD's objects cost against ConfigMaps, in one run.

One gateway serves a CronTab CRD (a structural schema with a pattern, bounds and a default, so that
every write is pruned, defaulted and validated) beside the built-in ConfigMaps. Create throughput:
``count`` objects of each kind over 8 connections (ConfigMaps first, then CronTabs, then both again,
each keeping its best). List latency: the whole collection of ``count`` objects as JSON, median of
several GETs (custom objects have no protobuf). Goal: custom objects within 1.5× of ConfigMaps.
"""

from __future__ import annotations

import json
import tempfile
import time
from pathlib import Path

from bench.common import Row, at_least, at_most, fmt_ms, fmt_rate, gateway, loadgen, ratio_row, request

GOAL = 1.5
CLIENTS = 8
CRD = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "crontabs.stable.example.com"},
    "spec": {
        "group": "stable.example.com",
        "scope": "Namespaced",
        "names": {"plural": "crontabs", "singular": "crontab", "kind": "CronTab"},
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
                                    "cronSpec": {
                                        "type": "string",
                                        "pattern": r"^(\d+|\*)(/\d+)?(\s+(\d+|\*)(/\d+)?){4}$",
                                    },
                                    "image": {"type": "string"},
                                    "replicas": {"type": "integer", "minimum": 1, "default": 1},
                                },
                            }
                        },
                    }
                },
            }
        ],
    },
}
KINDS = {
    "configmaps": (
        "/api/v1/namespaces/{ns}/configmaps",
        {"apiVersion": "v1", "kind": "ConfigMap", "data": {"cronSpec": "* * * * */5", "image": "my-cron-image"}},
    ),
    "crontabs": (
        "/apis/stable.example.com/v1/namespaces/{ns}/crontabs",
        {
            "apiVersion": "stable.example.com/v1",
            "kind": "CronTab",
            "spec": {"cronSpec": "* * * * */5", "image": "my-cron-image"},
        },
    ),
}


def _install(gw) -> None:
    status, body = request(
        gw, "POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", json.dumps(CRD).encode()
    )
    assert status == 201, body[:300]
    deadline = time.monotonic() + 30
    while request(gw, "GET", "/apis/stable.example.com/v1/namespaces/default/crontabs")[0] != 200:
        assert time.monotonic() < deadline, "the CRD was not served"
        time.sleep(0.1)


def run(quick: bool) -> dict:
    count = 1_000 if quick else 10_000
    repeats = 3 if quick else 7
    with tempfile.TemporaryDirectory(prefix="bench-crd-") as tmp, gateway(Path(tmp) / "data") as gw:
        _install(gw)
        base = {"host": gw.host, "port": gw.port, "clients": CLIENTS}
        creates: dict[str, dict] = {}
        for round_ in range(2):
            for kind, (collection, template) in KINDS.items():
                ns = f"{kind}-{round_}"
                request(gw, "POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": ns}}).encode())
                config = {**base, "collection": collection.format(ns=ns), "template": template, "count": count // 2}
                result = loadgen("fill", config, 600)
                if kind not in creates or result["per_s"] > creates[kind]["per_s"]:
                    creates[kind] = result
        for kind, (collection, template) in KINDS.items():  # the listed namespace holds ``count`` objects
            config = {**base, "collection": collection.format(ns=f"{kind}-list"), "template": template, "count": count}
            request(gw, "POST", "/api/v1/namespaces", json.dumps({"metadata": {"name": f"{kind}-list"}}).encode())
            loadgen("fill", config, 900)
        requests = [
            {
                "name": kind,
                "accept": "application/json",
                "path": collection.format(ns=f"{kind}-list"),
                "repeats": repeats,
            }
            for kind, (collection, _) in KINDS.items()
        ]
        lists = loadgen("lists", {"host": gw.host, "port": gw.port, "requests": requests}, 600)
    return {"count": count, "creates": creates, "lists": lists}


def rows(results: dict) -> list[Row]:
    creates, lists, count = results["creates"], results["lists"], results["count"]
    cm, ct = creates["configmaps"], creates["crontabs"]
    return [
        ratio_row(
            "customresources",
            f"custom object creates/s, {CLIENTS} clients (errors {ct['errors']})",
            fmt_rate(ct["per_s"]),
            f"configmaps {fmt_rate(cm['per_s'])}",
            ct["per_s"] / cm["per_s"],
            at_least,
            round(1 / GOAL, 2),
        ),
        ratio_row(
            "customresources",
            f"list of {count:,} custom objects (JSON), median",
            fmt_ms(lists["crontabs"]["median_ms"]),
            f"configmaps {fmt_ms(lists['configmaps']['median_ms'])}",
            lists["crontabs"]["median_ms"] / lists["configmaps"]["median_ms"],
            at_most,
            GOAL,
        ),
    ]
