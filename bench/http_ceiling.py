"""HTTP ceiling: the gateway's GET of one pod against a bare Quart app returning the same bytes.

Load comes from ``wrk`` (one thread, N keep-alive connections) in its own process. Three targets at
each concurrency, interleaved so drifts of the machine hit all three alike, each keeping the best of
its rounds (a shared machine's noise only ever slows a run down):

- bare: ``bench.bareapp`` serving the exact JSON bytes the gateway returns for the pod;
- gateway, most recent (no resourceVersion): a consistent read, one storage round trip per batch of
  concurrent reads before the cache answers;
- gateway, ``?resourceVersion=0``: straight from the watch cache.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tempfile
from contextlib import contextmanager
from pathlib import Path

from bench.common import (
    ROOT,
    Row,
    at_least,
    best_rounds,
    clients,
    fmt_ms,
    free_port,
    gateway,
    ratio_row,
    request,
    stop,
    wait_for,
)
from bench.pods import load_pods, pod_dict

CONCURRENCY = (1, 16, 64)
TARGETS = ("bare", "gateway", "gateway_rv0")
GOAL = 0.6


def wrk(url: str, connections: int, seconds: int, headers: tuple[str, ...] = ()) -> dict:
    """Run wrk (whole seconds only); requests/s and latency percentiles (ms) from its report."""
    argv = ["wrk", "-t1", f"-c{connections}", f"-d{seconds}s", "--timeout", "5s", "--latency"]
    argv += [arg for header in headers for arg in ("-H", header)] + [url]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=seconds + 30)
    if done.returncode != 0:
        raise RuntimeError(f"wrk failed: {done.stderr}")
    return parse_wrk(done.stdout)


UNITS = {"us": 0.001, "ms": 1.0, "s": 1000.0}


def parse_wrk(text: str) -> dict:
    rate = re.search(r"Requests/sec:\s+([\d.]+)", text)
    if rate is None:
        raise RuntimeError(f"no Requests/sec in wrk output:\n{text}")
    out: dict = {"per_s": float(rate.group(1))}
    for pct, value, unit in re.findall(r"^\s+(50|75|90|99)%\s+([\d.]+)(us|ms|s)\s*$", text, re.M):
        out[f"p{pct}_ms"] = float(value) * UNITS[unit]
    errors = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", text)
    out["non_2xx"] = int(errors.group(1)) if errors else 0
    socket_errors = re.search(r"Socket errors: (.*)", text)
    out["socket_errors"] = socket_errors.group(1) if socket_errors else ""
    return out


@contextmanager
def bare_app(body: bytes, tmp: Path):
    body_file = tmp / "body.json"
    body_file.write_bytes(body)
    port = free_port()
    argv = [sys.executable, "-m", "bench.bareapp", "--listen", f"127.0.0.1:{port}", "--body", str(body_file)]
    log = (tmp / "bareapp.log").open("w+")
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        url = f"http://127.0.0.1:{port}"
        try:
            wait_for(lambda: proc.poll() is not None or _answers(url), 20, "the bare app")
            if proc.poll() is not None:
                raise RuntimeError("exited")
        except RuntimeError as err:
            log.seek(0)
            raise RuntimeError(f"the bare app did not start ({err}):\n{log.read()[-3000:]}") from None
        yield url
    finally:
        stop(proc)
        log.close()


def _answers(url: str) -> bool:
    import urllib.request

    try:
        with urllib.request.urlopen(url + "/", timeout=1) as response:
            return response.status == 200
    except OSError:
        return False


def run(quick: bool) -> dict:
    seconds, rounds = (1, 1) if quick else (4, 2)
    with tempfile.TemporaryDirectory(prefix="bench-http-") as tmp, gateway(Path(tmp) / "data") as gw:
        load_pods(gw.storage, 0, 1)
        name = pod_dict(0)["metadata"]["name"]
        path = f"/api/v1/namespaces/default/pods/{name}"
        _, body = wait_for(lambda: (r := request(gw, "GET", path))[0] == 200 and r, 20, "the pod in the cache")
        with bare_app(body, Path(tmp)) as bare_url:
            urls = {
                "bare": bare_url + path,
                "gateway": gw.url + path,
                "gateway_rv0": gw.url + path + "?resourceVersion=0",
            }
            for url in urls.values():
                wrk(url, 4, 1)  # warm-up
            results: dict = {"seconds_per_run": seconds, "rounds": rounds, "body_bytes": len(body), "runs": {}}
            for c in CONCURRENCY:

                def measure(target: str, c: int = c) -> dict:
                    return wrk(urls[target], c, seconds)

                results["runs"][str(c)] = best_rounds(rounds, TARGETS, measure)
    return results


def rows(results: dict) -> list[Row]:
    out = []
    for c, run in results["runs"].items():
        bare = run["bare"]
        for target, label in (("gateway", "GET (most recent)"), ("gateway_rv0", "GET ?resourceVersion=0")):
            r = run[target]
            value = f"{r['per_s']:,.0f} req/s"
            limit = f"bare app {bare['per_s']:,.0f} req/s"
            out.append(
                ratio_row("http", f"{label}, {clients(c)}", value, limit, r["per_s"] / bare["per_s"], at_least, GOAL)
            )
        for target, label in (("gateway", "GET p99 (most recent)"), ("gateway_rv0", "GET p99 ?resourceVersion=0")):
            r = run[target]
            if "p99_ms" in r and "p99_ms" in bare:
                out.append(
                    ratio_row(
                        "http",
                        f"{label}, {clients(c)}",
                        fmt_ms(r["p99_ms"]),
                        f"bare app {fmt_ms(bare['p99_ms'])}",
                        r["p99_ms"] / bare["p99_ms"],
                    )
                )
    return out
