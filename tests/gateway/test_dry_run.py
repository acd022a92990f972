"""dryRun=All on every write path: each stage runs (defaulting, validation, admission, generated
values) and the answer is what would have been stored, but nothing is: no object changes, no watch
event is sent, no resourceVersion moves. Bad dryRun values are refused as upstream refuses them.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

import httpx
import pytest

from .helpers import Kubectl, deployment, watch_lines
from .test_certificates import CSRS, csr

DRY = {"dryRun": "All"}
APPS = "/apis/apps/v1"
MERGE = {"Content-Type": "application/merge-patch+json"}
JSON_PATCH = {"Content-Type": "application/json-patch+json"}
STRATEGIC = {"Content-Type": "application/strategic-merge-patch+json"}
APPLY = {"Content-Type": "application/apply-patch+yaml"}


class Watches:
    """One watch per path from its current resourceVersion, each stopping at its first event."""

    def __init__(self, client: httpx.Client, paths: dict[str, str], selectors: dict[str, str]) -> None:
        """``selectors``: field selectors of the cluster-wide watches (other tests' objects change too)."""
        self.first: dict[str, dict] = {}
        self.threads = []
        for what, path in paths.items():
            params = {"fieldSelector": selectors[what]} if what in selectors else {}
            version = client.get(path, params=params).json()["metadata"]["resourceVersion"]
            thread = threading.Thread(target=self._watch, args=(client, what, path, version, params), daemon=True)
            thread.start()
            self.threads.append(thread)

    def _watch(self, client: httpx.Client, what: str, path: str, version: str, params: dict[str, str]) -> None:
        with httpx.Client(base_url=client.base_url) as own:
            for event in watch_lines(own, path, stop_after=1, timeout=30, resourceVersion=version, **params):
                self.first[what] = event

    def join(self) -> dict[str, dict]:
        for thread in self.threads:
            thread.join(35)
        return self.first


def ok(response: httpx.Response, code: int = 200) -> dict:
    assert response.status_code == code, response.text
    return response.json()


def test_dry_runs_store_nothing_and_send_no_events(client: httpx.Client, namespace: str) -> None:
    ns = namespace
    cms, pods = f"/api/v1/namespaces/{ns}/configmaps", f"/api/v1/namespaces/{ns}/pods"
    deploys = f"{APPS}/namespaces/{ns}/deployments"
    cm = ok(client.post(cms, json={"metadata": {"name": "cm", "finalizers": []}, "data": {"a": "1"}}), 201)
    on_node = {
        "metadata": {"name": "p"},
        "spec": {"nodeName": "n1", "containers": [{"name": "c", "image": "nginx"}]},
    }
    ok(client.post(pods, json=on_node), 201)
    ok(client.post(deploys, json=deployment("web")), 201)
    ok(client.post(CSRS, json=csr(f"dry-{ns}")), 201)
    before = {
        "cm": client.get(f"{cms}/cm").json(),
        "pod": client.get(f"{pods}/p").json(),
        "deploy": client.get(f"{deploys}/web").json(),
        "csr": client.get(f"{CSRS}/dry-{ns}").json(),
        "ns": client.get(f"/api/v1/namespaces/{ns}").json(),
    }
    watches = Watches(
        client,
        {
            "configmaps": cms,
            "pods": pods,
            "deployments": deploys,
            "csrs": CSRS,
            "namespaces": "/api/v1/namespaces",
        },
        {"namespaces": f"metadata.name={ns}"},
    )

    # ---- the dry runs -------------------------------------------------------------------------
    made = ok(client.post(cms, params=DRY, json={"metadata": {"generateName": "gen-"}, "data": {"x": "y"}}), 201)
    assert made["metadata"]["name"].startswith("gen-") and len(made["metadata"]["name"]) == 9
    assert made["metadata"]["uid"] and made["metadata"]["creationTimestamp"]
    assert "resourceVersion" not in made["metadata"]
    pod = ok(client.post(pods, params=DRY, json={**on_node, "metadata": {"name": "p2"}}), 201)
    assert pod["status"] == {"phase": "Pending", "qosClass": "BestEffort"}  # the kind's preparation ran
    dup = client.post(cms, params=DRY, json={"metadata": {"name": "cm"}})
    assert dup.status_code == 409  # storage is asked whether the name is taken
    invalid = client.post(cms, params=DRY, json={"metadata": {"name": "Not_Valid"}})
    assert invalid.status_code == 422  # validation runs

    replaced = ok(client.put(f"{cms}/cm", params=DRY, json={**cm, "data": {"a": "2"}}))
    assert (
        replaced["data"] == {"a": "2"} and replaced["metadata"]["resourceVersion"] == cm["metadata"]["resourceVersion"]
    )
    ok(client.patch(f"{cms}/cm", params=DRY, headers=MERGE, content=b'{"data":{"b":"3"}}'))
    ok(
        client.patch(
            f"{cms}/cm", params=DRY, headers=JSON_PATCH, content=b'[{"op":"add","path":"/data/c","value":"4"}]'
        )
    )
    ok(client.patch(f"{cms}/cm", params=DRY, headers=STRATEGIC, content=b'{"metadata":{"labels":{"l":"v"}}}'))
    applied = ok(
        client.patch(
            f"{cms}/applied",
            params={**DRY, "fieldManager": "tester"},
            headers=APPLY,
            content=b"apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  k: v\n",
        ),
        201,
    )
    assert applied["metadata"]["managedFields"][0]["manager"] == "tester"
    status = ok(client.get(f"{pods}/p"))
    status["status"]["phase"] = "Running"
    ok(client.put(f"{pods}/p/status", params=DRY, json=status))
    ok(client.patch(f"{deploys}/web/scale", params=DRY, headers=MERGE, content=b'{"spec":{"replicas":7}}'))
    ok(client.patch(f"{deploys}/web/status", params=DRY, headers=MERGE, content=b'{"status":{"replicas":3}}'))
    approval = ok(client.get(f"{CSRS}/dry-{ns}"))
    approval["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Dry"}]}
    ok(client.put(f"{CSRS}/dry-{ns}/approval", params=DRY, json=approval))

    graceful = ok(client.delete(f"{pods}/p", params=DRY))
    assert graceful["metadata"]["deletionGracePeriodSeconds"] == 30  # what a delete would have done
    fg = ok(client.delete(f"{deploys}/web", params={**DRY, "propagationPolicy": "Foreground"}))
    assert fg["metadata"]["finalizers"] == ["foregroundDeletion"]
    removed = ok(client.request("DELETE", f"{cms}/cm", json={"kind": "DeleteOptions", "dryRun": ["All"]}))
    assert removed["status"] == "Success"
    collection = ok(client.delete(cms, params=DRY))
    assert [item["metadata"]["name"] for item in collection["items"]] == ["cm"]
    ns_deleted = ok(client.delete(f"/api/v1/namespaces/{ns}", params=DRY))
    assert ns_deleted["status"]["phase"] == "Terminating"

    # ---- nothing changed ------------------------------------------------------------------------
    assert client.get(f"{cms}/{made['metadata']['name']}").status_code == 404
    assert client.get(f"{pods}/p2").status_code == 404
    assert client.get(f"{cms}/applied").status_code == 404
    after = {
        "cm": client.get(f"{cms}/cm").json(),
        "pod": client.get(f"{pods}/p").json(),
        "deploy": client.get(f"{deploys}/web").json(),
        "csr": client.get(f"{CSRS}/dry-{ns}").json(),
        "ns": client.get(f"/api/v1/namespaces/{ns}").json(),
    }
    assert after == before

    # ---- and no event: the first event each watch sees is the real write made now -----------------
    sentinels: dict[str, Callable[[], httpx.Response]] = {
        "configmaps": lambda: client.post(cms, json={"metadata": {"name": "sentinel"}}),
        "pods": lambda: client.post(pods, json={**on_node, "metadata": {"name": "sentinel"}}),
        "deployments": lambda: client.post(deploys, json=deployment("sentinel")),
        "csrs": lambda: client.post(CSRS, json=csr(f"sentinel-{ns}")),
        "namespaces": lambda: client.patch(
            f"/api/v1/namespaces/{ns}", headers=MERGE, content=b'{"metadata":{"labels":{"sentinel":"yes"}}}'
        ),
    }
    for write in sentinels.values():
        assert write().status_code in (200, 201)
    first = watches.join()
    assert {what: (e["type"], e["object"]["metadata"]["name"]) for what, e in first.items()} == {
        "configmaps": ("ADDED", "sentinel"),
        "pods": ("ADDED", "sentinel"),
        "deployments": ("ADDED", "sentinel"),
        "csrs": ("ADDED", f"sentinel-{ns}"),
        "namespaces": ("MODIFIED", ns),
    }


@pytest.mark.parametrize(
    ("method", "path", "kind"),
    [
        ("POST", "/api/v1/namespaces/default/configmaps", "CreateOptions"),
        ("PUT", "/api/v1/namespaces/default/configmaps/x", "UpdateOptions"),
        ("PATCH", "/api/v1/namespaces/default/configmaps/x", "PatchOptions"),
        ("DELETE", "/api/v1/namespaces/default/configmaps/x", "DeleteOptions"),
        ("DELETE", "/api/v1/namespaces/default/configmaps", "DeleteOptions"),
    ],
)
@pytest.mark.parametrize(
    ("query", "shown"), [("dryRun=true", '"true"'), ("dryRun", '""'), ("dryRun=All&dryRun=x", '"All", "x"')]
)
def test_bad_dry_run_values(client: httpx.Client, method: str, path: str, kind: str, query: str, shown: str) -> None:
    # No body: the options are refused before it would be read (a body left unread makes the server
    # drop the connection, at times before answering: a fault of its own, not of dry-run).
    answer = client.request(method, f"{path}?{query}", headers=MERGE if method == "PATCH" else {})
    assert answer.status_code == 422, answer.text
    assert answer.json()["message"] == (
        f'{kind}.meta.k8s.io "" is invalid: dryRun: Unsupported value: []string{{{shown}}}: supported values: "All"'
    )


def test_kubectl_dry_run_server(client: httpx.Client, kubectl: Kubectl, namespace: str) -> None:
    ok(client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "keep"}}), 201)
    done = kubectl.run("delete", "configmap", "keep", "-n", namespace, "--dry-run=server")
    assert 'configmap "keep" deleted (server dry run)' in done.stdout
    assert client.get(f"/api/v1/namespaces/{namespace}/configmaps/keep").status_code == 200
    made = kubectl.run(
        "create", "configmap", "new", "-n", namespace, "--from-literal=a=b", "--dry-run=server", "-o", "json"
    )
    assert '"name": "new"' in made.stdout
    assert client.get(f"/api/v1/namespaces/{namespace}/configmaps/new").status_code == 404
