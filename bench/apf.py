"""API Priority and Fairness: what it costs a GET, and what it buys a small client under a flood.

- Cost: ``wrk`` GETs of one configmap from the watch cache, as a user classified to global-default
  (impersonated on the plain-HTTP port), against two gateways started side by side — APF on, and
  ``--enable-priority-and-fairness=false`` — alternating rounds, each keeping its best. The goal
  (APF on ≥ 0.9 × APF off) is judged on GETs per CPU-second of the gateway process, what it serves
  when it has a core to itself; requests per wall-clock second are shown too (on a shared machine
  they move with everything else that runs). And the same GET handed to two gateway apps in one
  process (bench/apf_inprocess.py): the app's CPU per GET with APF on and off, without hypercorn,
  the kernel and wrk, a figure that moves much less than the rounds above.
- Fairness: one priority level of 3 seats (a gateway of 6 seats in all) shared by an elephant, 60
  connections (20× the level) creating configmaps back to back (each holds its seat for a storage
  round trip; after a 429 a connection waits the 1 s of Retry-After), and a mouse reading one
  configmap (from the watch cache) every 20 ms, each in a load-generator process of its own; rounds
  of the mouse alone and under the flood, each keeping its best.
  Figure: the mouse's p99 under the flood against its p99 alone (goal: ≤ 2×), how long each
  waited in its queue (the server's apiserver_flowcontrol_request_wait_duration_seconds), and what
  bounds the mouse's wait: a seat comes back only when an elephant's write ends, whose execution
  is mostly its storage round trip (apiserver_flowcontrol_request_execution_seconds against
  etcd_request_duration_seconds). The gateway is one event loop: the elephant's executing
  requests run in its background lane (gateway/lanes.py), or the mouse would wait for
  their steps at each of its awaits.
- Isolation, as upstream's own APF test measures it (TestConcurrencyIsolation): each elephant write
  holds its seat 200 ms without CPU (a validating webhook that waits), so the elephant fills its level
  while the server's CPU is not saturated, and the mouse reads in a level of its own (goal: its p99
  ≤ 2× alone); a reader in the elephant's level is shown beside it.
- The first scenario on ``--gateways 2`` (no goal: each process has its own seats, and a 2-core
  machine shares its cores between the gateways, the load generators and storage).
"""

from __future__ import annotations

import json
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection
from pathlib import Path

from bench.admission import ADMISSION, configmap_create_webhook
from bench.common import (
    Gateway,
    Row,
    at_least,
    at_most,
    clients,
    cpu_seconds,
    fmt_ms,
    fmt_rate,
    gateway,
    loadgen,
    ratio_row,
    request,
    run_json,
    wait_for,
)
from bench.http_ceiling import wrk
from tests.gateway.webhookserver import WebhookServer, slow

CONCURRENCY = 16
COST_GOAL = 0.9
FAIRNESS_GOAL = 2.0
ELEPHANTS = 60
FC = "/apis/flowcontrol.apiserver.k8s.io/v1"
SLOW_SECONDS = 0.2  # upstream's fakeworkDuration
SMALL = ("--max-requests-inflight", "4", "--max-mutating-requests-inflight", "2")
ALLOW = ("--authorization-mode", "AlwaysAllow")  # impersonated users may read and write
LEVEL = {
    "metadata": {"name": "bench"},
    "spec": {
        "type": "Limited",
        "limited": {
            # The built-in levels have 245 shares; with this one and bench-other, 490 of 1,225 shares
            # of 6 seats: ceil(2.4) = 3 seats each.
            "nominalConcurrencyShares": 490,
            "lendablePercent": 0,
            "borrowingLimitPercent": 0,
            "limitResponse": {"type": "Queue", "queuing": {"queues": 16, "handSize": 4, "queueLengthLimit": 8}},
        },
    },
}


def schema(user: str, level: str = "bench") -> dict:
    """A FlowSchema per user (the server's metrics then tell them apart)."""
    return {
        "metadata": {"name": user},
        "spec": {
            "priorityLevelConfiguration": {"name": level},
            "matchingPrecedence": 500,
            "distinguisherMethod": {"type": "ByUser"},
            "rules": [
                {
                    "subjects": [{"kind": "User", "user": {"name": user}}],
                    "resourceRules": [
                        {
                            "verbs": ["*"],
                            "apiGroups": ["*"],
                            "resources": ["*"],
                            "namespaces": ["*"],
                            "clusterScope": True,
                        }
                    ],
                }
            ],
        },
    }


CONFIGMAP = "/api/v1/namespaces/default/configmaps/bench"


def _create(gw, path: str, body: dict) -> None:
    status, answer = request(gw, "POST", path, json.dumps(body).encode())
    if status != 201:
        raise RuntimeError(f"POST {path}: {status} {answer[:300]!r}")


def cost(quick: bool, tmp: Path) -> dict:
    seconds, rounds = (2, 2) if quick else (5, 3)
    url = CONFIGMAP + "?resourceVersion=0"
    with (
        gateway(tmp / "on", *ALLOW) as on,
        gateway(tmp / "off", *ALLOW, "--enable-priority-and-fairness=false") as off,
    ):
        for gw in (on, off):
            _create(gw, "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "bench"}})
            wrk(gw.url + url, 4, 1)  # warm-up (and the configmap in the cache)
        best: dict[str, dict] = {}
        for _ in range(rounds):  # alternating; each keeps its best round (noise only slows)
            for name, gw in (("on", on), ("off", off)):
                cpu = cpu_seconds(gw.pid)
                r = wrk(gw.url + url, CONCURRENCY, seconds, ("Impersonate-User: bench-user",))
                r["per_cpu_s"] = r["per_s"] * seconds / max(cpu_seconds(gw.pid) - cpu, 1e-9)
                if name not in best or r["per_cpu_s"] > best[name]["per_cpu_s"]:
                    best[name] = r
    return {"seconds_per_run": seconds, "rounds": rounds, "clients": CONCURRENCY, **best}


def _setup(gw: Gateway) -> dict:
    """The configmap the readers read, the two levels and a FlowSchema per user; the loads' common config."""
    _create(gw, "/api/v1/namespaces/default/configmaps", {"metadata": {"name": "bench"}})
    _create(gw, f"{FC}/prioritylevelconfigurations", LEVEL)
    _create(gw, f"{FC}/prioritylevelconfigurations", {**LEVEL, "metadata": {"name": "bench-other"}})
    for user in ("elephant", "mouse"):
        _create(gw, f"{FC}/flowschemas", schema(user))
    _create(gw, f"{FC}/flowschemas", schema("bystander", "bench-other"))
    base = {"host": gw.host, "port": gw.port, "path": CONFIGMAP + "?resourceVersion=0", "namespace": "default"}
    base |= {"elephant": "elephant", "mouse": "mouse", "interval": 0.02, "backoff": 1.0}
    loadgen("fairness", {**base, "elephants": 0, "seconds": 1}, 60)  # warm-up
    return base


def _rounds(gw: Gateway, base: dict, seconds: int, rounds: int, figures: bool = True) -> dict:
    """Rounds of the mouse alone, then under the flood; each keeps its best round (the lowest p99:
    a p99 of a few hundred requests moves with whatever else the machine does). ``figures``: also
    the server's histograms (FIGURES) summed over the flooded rounds."""
    base = {**base, "seconds": seconds}
    idle: dict | None = None
    flooded: dict | None = None
    spent: dict[str, list[float]] = {}  # seconds, count: of the flooded rounds, by FIGURES name
    for _ in range(rounds):
        alone = loadgen("fairness", {**base, "elephants": 0}, seconds + 60)
        if idle is None or alone["mouse"]["p99_ms"] < idle["mouse"]["p99_ms"]:
            idle = alone
        before = server_figures(gw) if figures else {}
        under = flood(base, seconds)
        for name, (total, count) in (server_figures(gw) if figures else {}).items():
            total_before, count_before = before.get(name, (0.0, 0.0))
            sums = spent.setdefault(name, [0.0, 0.0])
            sums[0] += total - total_before
            sums[1] += count - count_before
        if flooded is None or under["mouse"]["p99_ms"] < flooded["mouse"]["p99_ms"]:
            flooded = under
    mean_ms = {name: total / count * 1000 if count else float("nan") for name, (total, count) in spent.items()}
    return {"seconds": seconds, "rounds": rounds, "elephants": ELEPHANTS, "idle": idle, "flood": flooded,
            "mean_ms": mean_ms}  # fmt: skip


def fairness(quick: bool, tmp: Path) -> dict:
    """The bench's scenario: the mouse shares the elephant's level, whose writes saturate the CPU."""
    seconds, rounds = (4, 2) if quick else (6, 3)
    with gateway(tmp / "fair", *SMALL, *ALLOW) as gw:
        return _rounds(gw, _setup(gw), seconds, rounds)


def isolation(quick: bool, tmp: Path) -> dict:
    """As upstream's own test (test/integration/apiserver/flowcontrol TestConcurrencyIsolation, whose
    authorizer sleeps 200 ms for its clients): each elephant write holds its seat SLOW_SECONDS without
    CPU (a validating webhook that waits), so the elephant fills its level while the server's CPU is not
    saturated; the mouse reads in a level of its own (the bystander's), the other reader in the
    elephant's (the mouse's): what the full level costs a reader that shares it."""
    seconds, rounds = (3, 2) if quick else (6, 3)
    hooks = WebhookServer().start()
    hooks.handlers["/slow"] = slow(SLOW_SECONDS)
    try:
        with gateway(tmp / "isolation", *SMALL, *ALLOW) as gw:
            base = _setup(gw)
            slow_hook = configmap_create_webhook(hooks, "bench-slow", "slow.bench.example.com", "/slow")
            _create(gw, f"{ADMISSION}/validatingwebhookconfigurations", slow_hook)
            probe = "/api/v1/namespaces/default/configmaps?dryRun=All"
            wait_for(
                lambda: (
                    request(gw, "POST", probe, json.dumps({"metadata": {"name": "probe"}}).encode())
                    and hooks.reviews.get("/slow")
                ),
                30,
                "the slow webhook to be called",
            )
            return _rounds(gw, {**base, "mouse": "bystander", "other": "mouse"}, seconds, rounds, figures=False)
    finally:
        hooks.stop()


def two_gateways(quick: bool, tmp: Path) -> dict:
    """The bench's scenario on ``--gateways 2``: two processes on one port (SO_REUSEPORT), each with
    its own seats; a connection is served by one of them."""
    seconds, rounds = (3, 2) if quick else (6, 3)
    with gateway(tmp / "two", *SMALL, *ALLOW, "--gateways", "2") as gw:
        base = _setup(gw)
        wait_for(lambda: all(_classified(gw, user) for user in ("elephant", "mouse") for _ in range(8)), 30,
                 "both gateways to classify the users")  # fmt: skip
        return _rounds(gw, base, seconds, rounds, figures=False)


def _classified(gw: Gateway, user: str) -> bool:
    """Whether a fresh connection's request as ``user`` was classified by the FlowSchema named for it."""
    uid = json.loads(request(gw, "GET", f"{FC}/flowschemas/{user}")[1])["metadata"]["uid"]
    conn = HTTPConnection(gw.host, gw.port, timeout=30)
    try:
        conn.request("GET", CONFIGMAP, headers={"Impersonate-User": user})
        response = conn.getresponse()
        response.read()
        return response.getheader("X-Kubernetes-PF-FlowSchema-UID") == uid
    finally:
        conn.close()


def flood(base: dict, seconds: int) -> dict:
    """The elephant in a process of its own: the mouse's figures are then the server's, not the turns
    its requests would wait for in a client event loop shared with 60 connections. A bystander reads
    as the mouse does at the same time, in another level: what the flood costs a request that APF
    does not make wait (the machine's CPU), to tell apart from the mouse's cost of sharing the
    elephant's level."""
    with ThreadPoolExecutor(2) as pool:
        herd = pool.submit(loadgen, "fairness", {**base, "elephants": ELEPHANTS, "mouse": ""}, seconds + 60)
        time.sleep(0.5)  # the flood is on before the readers start
        timed = {**base, "elephants": 0, "seconds": seconds - 1}
        other = pool.submit(loadgen, "fairness", {**timed, "mouse": base.get("other", "bystander")}, seconds + 60)
        flooded = loadgen("fairness", timed, seconds + 60)
        flooded["elephant"] = herd.result()["elephant"]
        flooded["bystander"] = other.result()["mouse"]
    return flooded


# The server's histograms read after each flooded round: (metric, labels it must have, figure).
WAIT = "apiserver_flowcontrol_request_wait_duration_seconds"
EXECUTION = "apiserver_flowcontrol_request_execution_seconds"
FIGURES = (
    (WAIT, {"execute": "true", "flow_schema": "mouse"}, "mouse wait"),
    (WAIT, {"execute": "true", "flow_schema": "elephant"}, "elephant wait"),
    (EXECUTION, {"type": "regular", "flow_schema": "elephant"}, "elephant execution"),
    ("etcd_request_duration_seconds", {"operation": "create", "type": "configmaps"}, "elephant storage"),
)


def server_figures(gw) -> dict[str, tuple[float, float]]:
    """(sum of seconds, count) of each of FIGURES, from /metrics."""
    from prometheus_client.parser import text_string_to_metric_families

    _, text = request(gw, "GET", "/metrics")
    found: dict[str, tuple[float, float]] = {}
    for family in text_string_to_metric_families(text.decode()):
        for metric, labels, figure in FIGURES:
            if family.name != metric:
                continue
            sums = {s.name: s.value for s in family.samples if labels.items() <= s.labels.items()}
            found[figure] = (sums.get(f"{metric}_sum", 0.0), sums.get(f"{metric}_count", 0.0))
    return found


def inprocess(quick: bool) -> dict:
    """The app's CPU per GET with APF on and off, in a process of its own (bench/apf_inprocess.py)."""
    requests, rounds = (1000, 3) if quick else (3000, 5)
    return run_json([sys.executable, "-m", "bench.apf_inprocess", str(requests), str(rounds)], 300)


def run(quick: bool) -> dict:
    with tempfile.TemporaryDirectory(prefix="bench-apf-") as tmp:
        return {
            "cost": cost(quick, Path(tmp)),
            "inprocess": inprocess(quick),
            "fairness": fairness(quick, Path(tmp)),
            "isolation": isolation(quick, Path(tmp)),
            "two_gateways": two_gateways(quick, Path(tmp)),
        }


def rows(results: dict) -> list[Row]:
    c = results["cost"]
    on, off = c["on"], c["off"]
    who = f"{clients(c['clients'])}, global-default"
    out = [
        ratio_row(
            "apf",
            f"GETs per CPU-second with APF ({who})",
            fmt_rate(on["per_cpu_s"]),
            f"APF off {fmt_rate(off['per_cpu_s'])}",
            on["per_cpu_s"] / off["per_cpu_s"],
            at_least,
            COST_GOAL,
        ),
        ratio_row(
            "apf",
            f"GET/s with APF, wall clock ({who})",
            fmt_rate(on["per_s"]),
            f"APF off {fmt_rate(off['per_s'])}",
            on["per_s"] / off["per_s"],
        ),
    ]
    app = results["inprocess"]
    added = app["on_us"] - app["off_us"]
    out.append(
        ratio_row(
            "apf",
            f"CPU per GET through the gateway app in-process, no HTTP server (APF adds {added:.0f} µs)",
            f"{app['on_us']:.0f} µs",
            f"APF off {app['off_us']:.0f} µs",
            app["off_us"] / app["on_us"],
        )
    )
    f = results["fairness"]
    idle, flood = f["idle"]["mouse"], f["flood"]["mouse"]
    elephant = f["flood"]["elephant"]
    refused, answered = elephant.get("429", 0), sum(elephant.values())
    mouse_errors = sum(n for code, n in flood["codes"].items() if code != "200")
    out.append(
        ratio_row(
            "apf",
            f"mouse p99 beside a 20× elephant ({refused:,} of {answered:,} elephant writes refused, "
            f"{mouse_errors} mouse errors)",
            fmt_ms(flood["p99_ms"]),
            f"mouse alone {fmt_ms(idle['p99_ms'])}",
            flood["p99_ms"] / idle["p99_ms"],
            at_most,
            FAIRNESS_GOAL,
        )
    )
    bystander = f["flood"]["bystander"]
    out.append(
        ratio_row(
            "apf",
            "mouse p99 beside the elephant, against a reader of another level at the same time",
            fmt_ms(flood["p99_ms"]),
            f"other level {fmt_ms(bystander['p99_ms'])}",
            flood["p99_ms"] / bystander["p99_ms"],
        )
    )
    ms = f["mean_ms"]
    for figure, value, label, limit in (
        ("mouse's mean wait in its queue (the rest of its time is the event loop's)", "mouse wait", "elephant's",
         "elephant wait"),
        ("the mouse's mean wait against an elephant write's mean execution (a seat comes back when one ends)",
         "mouse wait", "elephant's", "elephant execution"),
        ("an elephant write's storage round trip (gRPC to storage and back), against its whole execution",
         "elephant storage", "execution", "elephant execution"),
    ):  # fmt: skip
        out.append(ratio_row("apf", figure, fmt_ms(ms[value]), f"{label} {fmt_ms(ms[limit])}", ms[value] / ms[limit]))
    return out + _mouse_rows(results)


def _mouse_rows(results: dict) -> list[Row]:
    """The isolation and two-gateway scenarios' mouse p99 against alone, and the other reader's."""
    out = []
    for key, figure, goal in (
        ("isolation", "mouse p99 in a level of its own beside an elephant whose writes wait 200 ms", FAIRNESS_GOAL),
        ("two_gateways", "mouse p99 beside a 20× elephant, --gateways 2", 0.0),
    ):
        r = results[key]
        idle, flood = r["idle"]["mouse"], r["flood"]["mouse"]
        elephant = r["flood"]["elephant"]
        refused, answered = elephant.get("429", 0), sum(elephant.values())
        out.append(
            ratio_row(
                "apf",
                f"{figure} ({refused:,} of {answered:,} elephant writes refused)",
                fmt_ms(flood["p99_ms"]),
                f"mouse alone {fmt_ms(idle['p99_ms'])}",
                flood["p99_ms"] / idle["p99_ms"],
                *((at_most, goal) if goal else ()),
            )
        )
    other = results["isolation"]["flood"]["bystander"]
    out.append(
        ratio_row(
            "apf",
            "a reader in the slow elephant's level, against the mouse in its own",
            fmt_ms(other["p99_ms"]),
            f"mouse {fmt_ms(results['isolation']['flood']['mouse']['p99_ms'])}",
            other["p99_ms"] / results["isolation"]["flood"]["mouse"]["p99_ms"],
        )
    )
    return out
