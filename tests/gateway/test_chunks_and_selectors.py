"""Chunked lists (Kubernetes API Concepts: "Retrieving large results sets in chunks") and label/field selectors."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import subprocess
import threading
import time

import httpx
import pytest

from .helpers import NO_ROOT_CA_PUBLISHER, GatewayProcess, Kubectl, until_cached, watch_lines

ON_ETCD_TOO = True  # the tests using the shared server run against a real etcd as well


def test_1253_objects_in_pages_of_500_are_one_snapshot(
    server: GatewayProcess, client: httpx.Client, namespace: str
) -> None:
    """The API concepts' example (retrieving large results in chunks), with writes landing between the pages."""
    path = f"/api/v1/namespaces/{namespace}/configmaps"

    async def create_all() -> None:
        async with httpx.AsyncClient(base_url=server.url, timeout=60) as http:
            semaphore = asyncio.Semaphore(16)

            async def one(i: int) -> None:
                async with semaphore:
                    r = await http.post(path, json={"metadata": {"name": f"cm-{i:04d}"}})
                    assert r.status_code == 201

            await asyncio.gather(*(one(i) for i in range(1253)))

    asyncio.run(create_all())
    expected = {f"cm-{i:04d}" for i in range(1253)}
    first = client.get(path, params={"limit": "500"}).json()
    snapshot = first["metadata"]["resourceVersion"]
    assert len(first["items"]) == 500 and first["metadata"]["remainingItemCount"] == 753
    seen = [i["metadata"]["name"] for i in first["items"]]
    token = first["metadata"]["continue"]
    pages = [first]
    for round_ in range(2):
        client.post(path, json={"metadata": {"name": f"zz-new-{round_}"}})  # created after the snapshot
        client.delete(f"{path}/cm-{1200 + round_:04d}")  # deleted after the snapshot
        page = client.get(path, params={"limit": "500", "continue": token}).json()
        assert page["metadata"]["resourceVersion"] == snapshot
        seen += [i["metadata"]["name"] for i in page["items"]]
        pages.append(page)
        token = page["metadata"].get("continue", "")
    assert [len(p["items"]) for p in pages] == [500, 500, 253]
    assert pages[1]["metadata"]["remainingItemCount"] == 253
    assert "remainingItemCount" not in pages[2]["metadata"] and token == ""
    assert seen == sorted(expected)


def test_remaining_item_count_is_absent_with_selectors(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for i in range(5):
        client.post(path, json={"metadata": {"name": f"s{i}", "labels": {"app": "x"}}})
    page = client.get(path, params={"limit": "2", "labelSelector": "app=x"}).json()
    assert len(page["items"]) == 2 and page["metadata"]["continue"]
    assert "remainingItemCount" not in page["metadata"]
    exact = client.get(
        path, params={"limit": "2", "labelSelector": "app=x", "resourceVersion": page["metadata"]["resourceVersion"]}
    ).json()
    assert len(exact["items"]) == 2 and "remainingItemCount" not in exact["metadata"]


@pytest.fixture
def labelled(client: httpx.Client, namespace: str) -> str:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    for name, labels in [
        ("a", {"env": "prod", "tier": "web"}),
        ("b", {"env": "dev", "tier": "web"}),
        ("c", {"env": "prod"}),
        ("d", {}),
    ]:
        created = client.post(path, json={"metadata": {"name": name, "labels": labels}})
    until_cached(client, path, created.json()["metadata"]["resourceVersion"])
    return path


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        ("env=prod", ["a", "c"]),
        ("env==prod", ["a", "c"]),
        ("env!=prod", ["b", "d"]),
        ("env in (prod,dev)", ["a", "b", "c"]),
        ("env notin (prod)", ["b", "d"]),
        ("tier", ["a", "b"]),
        ("!tier", ["c", "d"]),
        ("env=prod,tier=web", ["a"]),
        ("env=prod,!tier", ["c"]),
        ("env in ()", []),  # upstream's parser reads "()" as the empty value: valid, selects env=""
        ("env notin (,dev)", ["a", "c", "d"]),
    ],
)
def test_label_selector_grammar(client: httpx.Client, labelled: str, selector: str, expected: list[str]) -> None:
    for params in ({}, {"resourceVersion": "0"}, {"limit": "10"}):  # cache and storage paths agree
        body = client.get(labelled, params={"labelSelector": selector, **params}).json()
        assert [i["metadata"]["name"] for i in body["items"]] == expected, params


@pytest.mark.parametrize("selector", ["env=prod=x", "env in prod", "=x", "a b", "bad key!=x"])
def test_malformed_label_selector_is_400(client: httpx.Client, labelled: str, selector: str) -> None:
    response = client.get(labelled, params={"labelSelector": selector})
    assert response.status_code == 400, response.text
    assert response.json()["reason"] == "BadRequest"


@pytest.mark.parametrize(
    ("selector", "found"),
    [
        ("env in (prod", "found '', expected: ',' or ')'"),
        ("env in (prod,", "found '', expected: ',', or identifier"),
        ("env in (", "found '', expected: ',', ')' or identifier"),
        ("env in (prod dev)", "found 'dev', expected: ',' or ')'"),
    ],
)
def test_an_unfinished_set_is_worded_as_upstreams_parser_does(
    client: httpx.Client, labelled: str, selector: str, found: str
) -> None:
    """labels.Parser's parseValues and parseIdentifiersList (make anchor-diff: "team in (a")."""
    response = client.get(labelled, params={"labelSelector": selector})
    assert response.status_code == 400, response.text
    assert response.json()["message"] == f"unable to parse requirement: {found}"


def test_field_selectors(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/pods"
    for name, node in [("p1", "n1"), ("p2", "n2"), ("p3", "")]:
        spec = {"containers": [{"name": "c", "image": "i"}]}
        if node:
            spec["nodeName"] = node
        client.post(path, json={"metadata": {"name": name}, "spec": spec})

    def select(selector: str) -> list[str]:
        return [i["metadata"]["name"] for i in client.get(path, params={"fieldSelector": selector}).json()["items"]]

    assert select("metadata.name=p2") == ["p2"]
    assert select("spec.nodeName=n1") == ["p1"]
    assert select("spec.nodeName!=n1") == ["p2", "p3"]
    assert select("spec.nodeName=") == ["p3"]
    assert select("status.phase=Pending,spec.nodeName==n2") == ["p2"]
    assert select(f"metadata.namespace={namespace}") == ["p1", "p2", "p3"]
    unsupported = client.get(path, params={"fieldSelector": "spec.image=x"})
    assert unsupported.status_code == 400
    assert unsupported.json()["message"] == "field label not supported: spec.image"
    assert client.get(path, params={"fieldSelector": "nonsense"}).status_code == 400
    secrets = client.get(f"/api/v1/namespaces/{namespace}/secrets", params={"fieldSelector": "type=Opaque"})
    assert secrets.status_code == 200


def test_job_field_label_status_successful_selects_status_succeeded(client: httpx.Client, namespace: str) -> None:
    jobs = f"/apis/batch/v1/namespaces/{namespace}/jobs"
    template = {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "busybox"}]}}
    for name in ("done", "running"):
        made = client.post(jobs, json={"metadata": {"name": name}, "spec": {"template": template}})
        assert made.status_code == 201, made.text
    job = client.get(f"{jobs}/done").json()
    job["status"] = {"succeeded": 1}
    assert client.put(f"{jobs}/done/status", json=job).status_code == 200
    listed = client.get(jobs, params={"fieldSelector": "status.successful=1"}).json()["items"]
    assert [j["metadata"]["name"] for j in listed] == ["done"]
    listed = client.get(jobs, params={"fieldSelector": "status.successful=0"}).json()["items"]
    assert [j["metadata"]["name"] for j in listed] == ["running"]


def test_watch_delivers_objects_entering_and_leaving_the_selection(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/configmaps"
    rv = client.get(path).json()["metadata"]["resourceVersion"]
    events = watch_lines(
        client, path, stop_after=3, resourceVersion=rv, labelSelector="watched=yes", timeoutSeconds="10"
    )
    client.post(path, json={"metadata": {"name": "m", "labels": {"watched": "no"}}})  # not selected: nothing
    obj = client.put(f"{path}/m", json={"metadata": {"name": "m", "labels": {"watched": "yes"}}}).json()
    client.put(f"{path}/m", json={"metadata": {"name": "m", "labels": {"watched": "yes"}, "annotations": {"a": "1"}}})
    client.put(f"{path}/m", json={"metadata": {"name": "m", "labels": {"watched": "no"}}})
    got = list(events)
    assert [e["type"] for e in got] == ["ADDED", "MODIFIED", "DELETED"]
    assert got[0]["object"]["metadata"]["resourceVersion"] == obj["metadata"]["resourceVersion"]


def test_deletecollection_with_selector(client: httpx.Client, labelled: str) -> None:
    response = client.delete(labelled, params={"labelSelector": "env=prod"})
    assert sorted(i["metadata"]["name"] for i in response.json()["items"]) == ["a", "c"]
    assert [i["metadata"]["name"] for i in client.get(labelled).json()["items"]] == ["b", "d"]


def test_bookmarks(tmp_path) -> None:
    """Periodic bookmarks (every second on this server) and one just before the timeout, each only when
    the cache has moved past what the watch has seen (as upstream's cacheWatcher): a watch whose selection
    the writes miss learns how far they went; a watch of a resource nobody writes gets none."""
    server = GatewayProcess(tmp_path, "--bookmark-interval", "1", NO_ROOT_CA_PUBLISHER).start()
    try:
        with server.client() as client:
            path = "/api/v1/namespaces/default/configmaps"
            rv = client.get(path).json()["metadata"]["resourceVersion"]
            bookmarked = {"resourceVersion": rv, "allowWatchBookmarks": "true"}
            quiet = list(watch_lines(client, path, stop_after=100, timeoutSeconds="3", **bookmarked))
            assert quiet == []
            stop = threading.Event()

            def write_elsewhere() -> None:  # configmaps the watch's selector does not select
                with server.client() as writer:
                    for n in itertools.count():
                        if stop.wait(0.3):
                            return
                        assert writer.post(path, json={"metadata": {"name": f"other-{n}"}}).status_code == 201

            writer = threading.Thread(target=write_elsewhere)
            writer.start()
            began = time.monotonic()
            try:
                selected = {**bookmarked, "labelSelector": "watched=yes"}
                events = list(watch_lines(client, path, stop_after=100, timeoutSeconds="4", **selected))
            finally:
                stop.set()
                writer.join(10)
            assert time.monotonic() - began < 15
            assert events and all(e["type"] == "BOOKMARK" for e in events)
            assert len(events) >= 2
            for event in events:
                obj = event["object"]
                assert obj["kind"] == "ConfigMap" and obj["apiVersion"] == "v1"
                assert obj["metadata"] == {
                    "resourceVersion": obj["metadata"]["resourceVersion"],
                    "creationTimestamp": None,
                }
                assert int(obj["metadata"]["resourceVersion"]) > int(rv)
            versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
            assert versions == sorted(versions)
            without = list(
                watch_lines(
                    client, path, stop_after=100, resourceVersion=rv, timeoutSeconds="2", labelSelector="watched=yes"
                )
            )
            assert without == []
    finally:
        server.kill()


def test_kubectl_chunked_get(kubectl: Kubectl, client: httpx.Client, namespace: str) -> None:
    for i in range(5):
        pod = {"metadata": {"name": f"chunk-{i}"}, "spec": {"containers": [{"name": "c", "image": "i"}]}}
        client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod)
    out = kubectl.run("get", "pods", "-n", namespace, "--chunk-size=2", "-o", "name", "-v=6").stdout
    assert out.split() == [f"pod/chunk-{i}" for i in range(5)]


def test_kubectl_get_watch(kubectl: Kubectl, client: httpx.Client, namespace: str) -> None:
    process = kubectl.popen("get", "configmaps", "-n", namespace, "-w", "-o", "name")
    try:
        time.sleep(2)
        client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "watched"}})
        deadline = time.monotonic() + 15
        line = ""
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if "watched" in line:
                break
        assert line.strip() == "configmap/watched"
    finally:
        process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(5)
