"""Health endpoints and metrics as kube-apiserver serves them (k8s.io/apiserver pkg/server/healthz,
pkg/endpoints/metrics): /healthz, /livez, /readyz with ?verbose, ?exclude and per-check paths; a
storage failure seen by /readyz; Prometheus text that prometheus-client's own parser reads."""

from __future__ import annotations

import time
from pathlib import Path

import httpx
from prometheus_client.parser import text_string_to_metric_families

from tests.storage.helpers import StorageProcess

from .helpers import GatewayProcess

READYZ_CHECKS = [
    "ping",
    "log",
    "etcd",
    "etcd-readiness",
    "informer-sync",
    "poststarthook/generic-apiserver-start-informers",
    "poststarthook/priority-and-fairness-config-consumer",
    "poststarthook/priority-and-fairness-filter",
    "poststarthook/start-system-namespaces-controller",
    "poststarthook/scheduling/bootstrap-system-priority-classes",
    "poststarthook/rbac/bootstrap-roles",
    "poststarthook/priority-and-fairness-config-producer",
    "autoregister-completion",
    "shutdown",
]
LIVEZ_CHECKS = [c for c in READYZ_CHECKS if c not in ("etcd-readiness", "informer-sync", "shutdown")]


def test_health_endpoints_answer_ok(client: httpx.Client) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        response = client.get(path)
        assert response.status_code == 200 and response.text == "ok"
        assert response.headers["content-type"] == "text/plain; charset=utf-8"
        assert response.headers["x-content-type-options"] == "nosniff"


def test_verbose_lists_every_check(client: httpx.Client) -> None:
    readyz = client.get("/readyz", params={"verbose": ""}).text
    assert readyz == "".join(f"[+]{c} ok\n" for c in READYZ_CHECKS) + "readyz check passed\n"
    livez = client.get("/livez?verbose").text
    assert livez == "".join(f"[+]{c} ok\n" for c in LIVEZ_CHECKS) + "livez check passed\n"
    assert client.get("/healthz?verbose").text.endswith("healthz check passed\n")


def test_single_checks_and_exclusions(client: httpx.Client) -> None:
    for path in ("/readyz/etcd", "/livez/ping", "/readyz/poststarthook/generic-apiserver-start-informers"):
        assert client.get(path).text == "ok", path
    assert client.get("/livez/informer-sync").status_code == 404  # a readiness-only check
    excluded = client.get("/readyz?verbose&exclude=etcd&exclude=nope").text
    assert "[+]etcd excluded: ok\n" in excluded and "[+]etcd-readiness ok\n" in excluded
    assert 'warn: some health checks cannot be excluded: no matches for "nope"\n' in excluded
    assert excluded.endswith("readyz check passed\n")


def test_readyz_fails_when_storage_is_gone(tmp_path: Path) -> None:
    storage = StorageProcess(tmp_path / "storage").start()
    gateway = GatewayProcess(tmp_path / "gateway", "--storage", storage.address).start()
    try:
        with gateway.client() as client:
            assert client.get("/readyz").text == "ok"
            storage.kill()
            # each etcd check answers its last probe's outcome for up to 1 s: they notice apart
            deadline = time.monotonic() + 10
            while "[-]etcd failed" not in (failed := client.get("/readyz?verbose")).text:
                assert time.monotonic() < deadline, "/readyz never noticed the storage is gone"
                time.sleep(0.2)
            failed = client.get("/readyz")
            assert failed.status_code == 500
            assert "[-]etcd failed: reason withheld\n" in failed.text and failed.text.endswith("readyz check failed\n")
            assert "[+]ping ok\n" in failed.text
            single = client.get("/readyz/etcd")
            assert single.status_code == 500 and single.text.startswith("internal server error: ")
            assert client.get("/readyz?exclude=etcd&exclude=etcd-readiness").text == "ok"
    finally:
        gateway.kill()
        storage.kill()


def _storage_ranges(storage: StorageProcess) -> float:
    """Range calls the storage has answered (its /metrics; it was started with --listen-metrics)."""
    url = next(line.split()[-1] for line in storage.log if line.startswith("storage metrics on"))
    samples = {family.name: family.samples for family in text_string_to_metric_families(httpx.get(url).text)}
    return sum(s.value for s in samples["grpc_server_handled"] if s.labels["grpc_method"] == "Range")


def test_readyz_polled_often_probes_storage_at_most_twice_a_second(tmp_path: Path) -> None:
    """As upstream's etcd checks (storagebackend/factory/etcd3.go): each probes at most once per half
    its timeout (1 s here) and answers the last probe's outcome in between; 50 /readyz in a row
    would otherwise be 100 Range calls (two checks each)."""
    storage = StorageProcess(tmp_path / "storage", "--listen-metrics", "127.0.0.1:0").start()
    gateway = GatewayProcess(tmp_path / "gateway", "--storage", storage.address).start()
    try:
        with gateway.client() as client:
            before, began = _storage_ranges(storage), time.monotonic()
            for _ in range(50):
                assert client.get("/readyz").text == "ok"
            probes_allowed = 2 * (int((time.monotonic() - began) / 0.5) + 1)
            ranges = _storage_ranges(storage) - before
            assert ranges <= probes_allowed + 10, (ranges, probes_allowed)  # + what the gateway reads meanwhile
    finally:
        gateway.kill()
        storage.kill()


def families(client: httpx.Client) -> dict[str, list]:
    """Every metric family of /metrics, parsed by prometheus-client's own text parser."""
    text = client.get("/metrics").text
    return {family.name: family.samples for family in text_string_to_metric_families(text)}


def value(samples: list, name: str, **labels: str) -> float:
    return sum(s.value for s in samples if s.name == name and all(s.labels.get(k) == v for k, v in labels.items()))


def test_metrics_cover_requests_storage_and_watches(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    client.post(path, json={"metadata": {"name": "m"}})
    client.get(path)
    client.get(f"{path}/m", params={"dryRun": "All"})
    with client.stream("GET", path, params={"watch": "1", "timeoutSeconds": "30"}) as response:
        assert response.status_code == 200
        lines = response.iter_lines()
        next(lines)  # the initial ADDED event: the watch is registered
        during = families(client)
    found = families(client)
    requests = found["apiserver_request"]
    assert value(requests, "apiserver_request_total", verb="LIST", resource="configmaps", scope="namespace", code="200")
    assert value(requests, "apiserver_request_total", verb="GET", dry_run="All", resource="configmaps", code="200")
    assert value(requests, "apiserver_request_total", verb="WATCH", resource="configmaps", code="200")
    durations = found["apiserver_request_duration_seconds"]
    assert value(durations, "apiserver_request_duration_seconds_count", verb="POST", resource="configmaps") >= 1
    assert value(found["apiserver_response_sizes"], "apiserver_response_sizes_count", verb="LIST") >= 1
    assert value(during["apiserver_longrunning_requests"], "apiserver_longrunning_requests", resource="configmaps") >= 1
    assert value(during["apiserver_registered_watchers"], "apiserver_registered_watchers", kind="ConfigMap") >= 1
    assert value(during["apiserver_current_inflight_requests"], "apiserver_current_inflight_requests") >= 1
    assert value(found["apiserver_watch_events"], "apiserver_watch_events_total", kind="ConfigMap") >= 1
    assert value(found["apiserver_storage_objects"], "apiserver_storage_objects", resource="namespaces") >= 4
    etcd = found["etcd_request_duration_seconds"]
    assert value(etcd, "etcd_request_duration_seconds_count", operation="create", type="configmaps") >= 1
    assert value(found["etcd_requests"], "etcd_requests_total", operation="create", type="configmaps") >= 1


def test_paths_the_server_does_not_serve_are_counted_without_their_names(client: httpx.Client, namespace: str) -> None:
    """A group, resource, subresource or health check named by the client's path alone would make
    a label set per request: they are counted with those labels empty."""
    unserved = [
        "/api/v1/nosuchthings",
        "/apis/nosuch.example.com/v1/widgets",
        f"/api/v1/namespaces/{namespace}/configmaps/m/nosuchsubresource",
        "/healthz/nosuchcheck",
    ]
    for path in unserved:
        assert client.get(path).status_code == 404
    assert client.get("/healthz/etcd").status_code == 200
    samples = families(client)["apiserver_request"]
    named = {(s.labels.get("group"), s.labels.get("resource"), s.labels.get("subresource")) for s in samples}
    # (other modules on this server may serve a widgets resource of a group of their own)
    assert not {(g, r, sub) for g, r, sub in named if g == "nosuch.example.com" or r == "nosuchthings"}
    assert not {sub for _, _, sub in named} & {"nosuchsubresource", "/healthz/nosuchcheck"}
    assert value(samples, "apiserver_request_total", verb="LIST", resource="", scope="cluster", code="404") >= 2
    assert value(samples, "apiserver_request_total", verb="GET", subresource="", component="", code="404") >= 1
    assert value(samples, "apiserver_request_total", verb="GET", subresource="/healthz/etcd", code="200") >= 1
