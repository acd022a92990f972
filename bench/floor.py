"""The floor ladder: CPU per request of the serving process, from a raw ASGI app up to protokube's requests.

Every row is compared with the raw-ASGI floor of the default server (native) and with the fastest raw server:

- floors: one raw ASGI app (two ASGI messages, the exact bytes of the gateway's GET of one configmap) on
  the gateway's own server (``--http-server native``) and on hypercorn — each served as the gateway is
  served (``protokube.gateway.serving.serve_app`` on the gateway's LaneLoop) —, on granian (uvloop) and on
  uvicorn + httptools (uvloop); and ``bench.bareapp``, a bare Quart app on hypercorn;
- protokube, one gateway process (embedded storage, insecure listener) on the default server: GET of that
  configmap with ``?resourceVersion=0`` and most recent, LIST of 500 configmaps, CREATE, PATCH (merge) —
  each with wrk, the writes from Lua scripts — and watch delivery, as ``bench.watch_fanout`` measures it;
  and the GET ``?resourceVersion=0`` of a second gateway on ``--http-server hypercorn``.

CPU per request is the utime + stime of the serving processes (the server's process tree; the gateway
process alone, not its storage) over a load, divided by the requests wrk counted: steadier than req/s on a
shared machine. Every server runs for the whole section and the targets are measured in alternation.
Issue 30's goals for GET ``?resourceVersion=0`` are judged on these figures: at least 2× a bare Quart app
on hypercorn (its CPU per request over ours) and at least 0.3× the raw-ASGI floor of the default server.

    python -m bench.floor --listen 127.0.0.1:PORT --body FILE [--server native|hypercorn]   # the raw ASGI app
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path
from string import Template

from bench import watch_fanout
from bench.common import (
    ROOT,
    Row,
    at_least,
    best_rounds,
    clients,
    cpu_seconds,
    free_port,
    gateway,
    loadgen,
    ratio_row,
    request,
    stop,
    wait_for,
)
from bench.http_ceiling import parse_wrk
from bench.loadgen import configmap

CONNECTIONS = 16
BODY_ENV = "BENCH_FLOOR_BODY"  # the file of the raw app's body, for the servers that import the app
DATA = {"k": "v" * 200}
LISTED = 500  # configmaps in the listed namespace
PATCHED = 64  # configmaps patched in turn (the writes in flight never meet on one object)
GET_PATH = "/api/v1/namespaces/default/configmaps/floor"
LIST_PATH = "/api/v1/namespaces/floor-list/configmaps"
RAW = ("native", "granian", "uvicorn", "hypercorn")  # raw ASGI app on each server
FLOOR = "native"  # the default server
GET_VS_QUART_GOAL = 2.0  # issue 30: GET ?resourceVersion=0 at least twice as cheap as a bare Quart app
GET_VS_FLOOR_GOAL = 0.3  # ... and at least 0.3 of the raw-ASGI floor's economy (floor CPU / its CPU)
LABELS = {
    "native": "raw ASGI on the native server (the default)",
    "granian": "raw ASGI on granian",
    "uvicorn": "raw ASGI on uvicorn + httptools",
    "hypercorn": "raw ASGI on hypercorn",
    "quart": "bare Quart app on hypercorn",
    "get_rv0": "protokube GET ?resourceVersion=0",
    "get_rv0_hypercorn": "protokube GET ?resourceVersion=0 on --http-server hypercorn",
    "get": "protokube GET (most recent)",
    "list": f"protokube LIST of {LISTED} configmaps",
    "create": "protokube CREATE (configmap)",
    "patch": "protokube PATCH (merge)",
}
WRITE_HEAD = """
local prefix, n = "", 0
function init(args) prefix = args[1] end
"""
CREATE_LUA = Template(
    WRITE_HEAD
    + """wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
local head, tail = '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"', '"},"data":$data}'
function request()
  n = n + 1
  return wrk.format(nil, nil, nil, head .. prefix .. n .. tail)
end
"""
)
PATCH_LUA = Template(
    WRITE_HEAD
    + """wrk.method = "PATCH"
wrk.headers["Content-Type"] = "application/merge-patch+json"
function request()
  n = n + 1
  return wrk.format(nil, "$collection/o" .. (n % $objects), nil, '{"data":{"n":"' .. prefix .. n .. '"}}')
end
"""
)

Scope = dict
Receive = Callable[[], Awaitable[dict]]
Send = Callable[[dict], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]


# --- the raw ASGI app ------------------------------------------------------------------------
def raw_app(body: bytes) -> ASGIApp:
    """An ASGI app answering every request with ``body`` in two messages: the floor under any framework."""
    start = {
        "type": "http.response.start",
        "status": 200,
        "headers": [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())],
    }
    message = {"type": "http.response.body", "body": body}

    async def app(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
        elif scope["type"] == "http":
            await send(start)
            await send(message)

    return app


def app_from_env() -> ASGIApp:
    """The factory granian and uvicorn import: the raw app with the body of the file named by $BENCH_FLOOR_BODY."""
    return raw_app(Path(os.environ[BODY_ENV]).read_bytes())


async def serve_raw(listen: str, body: bytes, server: str) -> None:
    """The raw app on one of the gateway's servers, configured as the gateway's is."""
    from protokube.gateway.serving import listen_socket, serve_app

    shutdown = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, shutdown.set)
    await serve_app(raw_app(body), listen_socket(listen), shutdown, server=server)


# --- servers and loads -----------------------------------------------------------------------
@dataclass
class Target:
    """What one row loads: a URL, the processes whose CPU counts, and a wrk script for writes."""

    url: str
    pids: list[int]
    script: Path | None = None


def server_argv(name: str, port: int, body_file: Path) -> list[str]:
    """How each floor is started: one worker process, uvloop, no access log."""
    factory = "bench.floor:app_from_env"
    bind = ["--host", "127.0.0.1", "--port", str(port), "--log-level", "warning", "--no-access-log"]
    one_worker = ["--workers", "1", "--runtime-threads", "1", "--no-ws"]
    raw = ["bench.floor", "--listen", f"127.0.0.1:{port}", "--body", str(body_file)]
    argv = {
        "granian": ["granian", "--interface", "asgi", "--loop", "uvloop", *one_worker, *bind, "--factory", factory],
        "uvicorn": ["uvicorn", "--loop", "uvloop", "--http", "httptools", *bind, "--factory", factory],
        "native": [*raw, "--server", "native"],
        "hypercorn": [*raw, "--server", "hypercorn"],
        "quart": ["bench.bareapp", "--listen", f"127.0.0.1:{port}", "--body", str(body_file)],
    }[name]
    return [sys.executable, "-m", *argv]


def process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (a server's supervisor and its workers), from /proc's parent links."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # gone meanwhile
        parents[int(stat.parent.name)] = int(text[text.rindex(")") + 2 :].split()[1])
    tree = [pid]
    for p in tree:
        tree += [child for child, parent in parents.items() if parent == p]
    return tree


def answers(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


@contextmanager
def server(name: str, body_file: Path, tmp: Path) -> Iterator[Target]:
    """Start one floor until it answers; its target (the whole process tree counts); stopped afterwards."""
    port = free_port()
    env = {**os.environ, BODY_ENV: str(body_file)}
    with (tmp / f"{name}.log").open("w+") as log:
        argv = server_argv(name, port, body_file)
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}{GET_PATH}"
            try:
                wait_for(lambda: proc.poll() is not None or answers(url), 30, name)
                if proc.poll() is not None:
                    raise RuntimeError(f"exited with {proc.returncode}")
            except RuntimeError as err:
                log.seek(0)
                raise RuntimeError(f"{name} did not start ({err}):\n{log.read()[-3000:]}") from None
            yield Target(url, process_tree(proc.pid))
        finally:
            stop(proc)


def wrk_load(target: Target, connections: int, seconds: int, *args: str) -> dict:
    """wrk against the target (its script given ``args``): rate, latency, requests, CPU µs per request."""
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s", "--latency"]
    argv += ["-s", str(target.script)] if target.script else []
    argv += [target.url, "--", *args] if args else [target.url]
    before = sum(cpu_seconds(pid) for pid in target.pids)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 30)
    cpu = sum(cpu_seconds(pid) for pid in target.pids) - before
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed: {done.stderr}")
    out = parse_wrk(done.stdout)
    count = re.search(r"(\d+) requests in", done.stdout)
    out["requests"] = int(count.group(1)) if count else 0
    out["cpu_us"] = cpu / max(out["requests"], 1) * 1e6
    return out


# --- protokube's targets ---------------------------------------------------------------------
def create_namespace(gw, name: str) -> None:
    body = json.dumps({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}).encode()
    status, answer = request(gw, "POST", "/api/v1/namespaces", body)
    if status != 201:
        raise RuntimeError(f"namespace {name}: {status} {answer[:200]!r}")


def fill(gw, namespace: str, count: int) -> None:
    """``count`` configmaps o0, o1, ... in a new namespace."""
    create_namespace(gw, namespace)
    template = {"apiVersion": "v1", "kind": "ConfigMap", "data": DATA}
    config = {"host": gw.host, "port": gw.port, "clients": 8, "count": count, "template": template}
    result = loadgen("fill", {**config, "collection": f"/api/v1/namespaces/{namespace}/configmaps"}, 120)
    if result["errors"]:
        raise RuntimeError(f"{result['errors']} creates of {count} failed in {namespace}")


def gateway_targets(gw, tmp: Path) -> dict[str, Target]:
    """The objects protokube's rows read and write, and the targets."""
    status, body = request(gw, "POST", "/api/v1/namespaces/default/configmaps", configmap("floor", DATA))
    if status != 201:
        raise RuntimeError(f"create failed: {status} {body[:200]!r}")
    fill(gw, "floor-list", LISTED)
    fill(gw, "floor-patch", PATCHED)
    create_namespace(gw, "floor-create")
    create, patch = tmp / "create.lua", tmp / "patch.lua"
    create.write_text(CREATE_LUA.substitute(data=json.dumps(DATA, separators=(",", ":"))))
    patch.write_text(PATCH_LUA.substitute(collection="/api/v1/namespaces/floor-patch/configmaps", objects=PATCHED))
    pids = [gw.pid]
    return {
        "get_rv0": Target(f"{gw.url}{GET_PATH}?resourceVersion=0", pids),
        "get": Target(gw.url + GET_PATH, pids),
        "list": Target(gw.url + LIST_PATH, pids),
        "create": Target(f"{gw.url}/api/v1/namespaces/floor-create/configmaps", pids, create),
        "patch": Target(gw.url, pids, patch),
    }


def get_target(gw) -> Target:
    """The GET ?resourceVersion=0 row's target on another gateway (its own storage): the configmap made there."""
    status, body = request(gw, "POST", "/api/v1/namespaces/default/configmaps", configmap("floor", DATA))
    if status != 201:
        raise RuntimeError(f"create failed: {status} {body[:200]!r}")
    return Target(f"{gw.url}{GET_PATH}?resourceVersion=0", [gw.pid])


def run(quick: bool) -> dict:
    seconds, rounds, watchers = (2, 1, 200) if quick else (5, 2, 1000)
    results: dict = {"connections": CONNECTIONS, "seconds_per_run": seconds, "rounds": rounds, "watchers": watchers}
    run_ids = itertools.count()
    with tempfile.TemporaryDirectory(prefix="bench-floor-") as tmp, gateway(Path(tmp) / "data") as gw:
        targets = gateway_targets(gw, Path(tmp))
        body, listed = request(gw, "GET", GET_PATH)[1], request(gw, "GET", LIST_PATH)[1]
        results["body_bytes"], results["list_bytes"] = len(body), len(listed)
        body_file = Path(tmp) / "body.json"
        body_file.write_bytes(body)
        with ExitStack() as servers:
            floors = {name: servers.enter_context(server(name, body_file, Path(tmp))) for name in (*RAW, "quart")}
            on_hypercorn = servers.enter_context(gateway(Path(tmp) / "data-hypercorn", "--http-server", "hypercorn"))
            targets = {**floors, **targets, "get_rv0_hypercorn": get_target(on_hypercorn)}

            def measure(name: str, seconds: int = seconds, connections: int = CONNECTIONS) -> dict:
                return wrk_load(targets[name], connections, seconds, f"r{next(run_ids)}-")

            for name in targets:
                measure(name, 1, 4)  # warm-up
            results["runs"] = best_rounds(rounds, list(targets), measure)
        _, cm = request(gw, "POST", watch_fanout.COLLECTION, configmap(watch_fanout.NAME, {"sent": "0.0"}))
        rv = json.loads(cm)["metadata"]["resourceVersion"]
        results["watch"] = watch_fanout.measure(gw, watchers, seconds, rv)
    return results


# --- the rows --------------------------------------------------------------------------------
def rows(results: dict) -> list[Row]:
    """Two rows per target: its CPU per request against the default server's raw floor, and against the
    fastest raw server."""
    runs = dict(results["runs"])
    watch = results["watch"]
    runs["watch"] = {"cpu_us": watch["cpu_us_per_event"], "per_s": watch["events"] / watch["window_seconds"]}
    watchers = f"{results['watchers']} watchers, {watch_fanout.RATE} writes/s"
    labels = {**LABELS, "watch": f"protokube watch delivery ({watchers})"}
    floor = runs[FLOOR]["cpu_us"]
    fastest = min(RAW, key=lambda name: runs[name]["cpu_us"])
    best = runs[fastest]["cpu_us"]
    out = []
    for name, r in runs.items():
        errors = f" ({r['non_2xx']} non-2xx)" if r.get("non_2xx") else ""
        label = labels[name] + errors
        cpu = f"{r['cpu_us']:,.0f} µs"
        if name == "watch":
            figure, value = f"{label}: CPU per delivery", f"{cpu}, {r['per_s']:,.0f} deliveries/s"
        else:
            figure, value = f"{label}, {clients(CONNECTIONS)}: CPU per request", f"{cpu}, {r['per_s']:,.0f} req/s"
        limit = f"{LABELS[FLOOR]} {floor:,.0f} µs"
        out.append(ratio_row("floor", figure, value, limit, r["cpu_us"] / floor))
        if name != fastest:
            limit = f"fastest raw ({fastest}) {best:,.0f} µs"
            out.append(ratio_row("floor", f"{label}: vs the fastest raw server", cpu, limit, r["cpu_us"] / best))
    return out + _get_goal_rows(runs, floor)


def _get_goal_rows(runs: dict[str, dict], floor: float) -> list[Row]:
    """GET ?resourceVersion=0 against issue 30's goals: how many times cheaper than a bare Quart app on
    hypercorn, and what share of the raw-ASGI floor's economy it keeps (both CPU per request)."""
    get, quart = runs["get_rv0"]["cpu_us"], runs["quart"]["cpu_us"]
    cpu = f"{get:,.0f} µs"
    return [
        ratio_row(
            "floor",
            f"{LABELS['get_rv0']}: times cheaper than a bare Quart app on hypercorn",
            cpu,
            f"{LABELS['quart']} {quart:,.0f} µs",
            quart / get,
            at_least,
            GET_VS_QUART_GOAL,
        ),
        ratio_row(
            "floor",
            f"{LABELS['get_rv0']}: the raw-ASGI floor's CPU over its own",
            cpu,
            f"{LABELS[FLOOR]} {floor:,.0f} µs",
            floor / get,
            at_least,
            GET_VS_FLOOR_GOAL,
        ),
    ]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.floor", description="the raw ASGI app on a gateway server")
    parser.add_argument("--listen", required=True)
    parser.add_argument("--body", type=Path, required=True)
    parser.add_argument("--server", choices=("native", "hypercorn"), default="native")
    args = parser.parse_args(argv)
    import uvloop

    from protokube.gateway.lanes import LaneLoop

    uvloop.run(serve_raw(args.listen, args.body.read_bytes(), args.server), loop_factory=LaneLoop)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
