"""NamespaceLifecycle as kube-apiserver's: no new content in a terminating namespace (with the
NamespaceTerminating cause client-go looks for), the server's own namespaces never deleted, access
reviews answered in any namespace."""

from __future__ import annotations

import httpx

from .helpers import eventually

HOLD = "example.com/hold"


def test_no_new_content_in_a_terminating_namespace(client: httpx.Client, namespace: str) -> None:
    held = client.post(
        f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "held", "finalizers": [HOLD]}}
    )
    assert held.status_code == 201, held.text
    assert client.delete(f"/api/v1/namespaces/{namespace}").status_code == 200
    try:
        assert eventually(
            lambda: client.get(f"/api/v1/namespaces/{namespace}").json()["status"]["phase"] == "Terminating"
        )
        refused = client.post(f"/api/v1/namespaces/{namespace}/configmaps", json={"metadata": {"name": "new"}})
        assert refused.status_code == 403
        assert refused.json()["reason"] == "Forbidden"
        assert refused.json()["message"] == (
            f'configmaps "new" is forbidden: unable to create new content in namespace {namespace} '
            "because it is being terminated"
        )
        assert refused.json()["details"] == {
            "name": "new",
            "kind": "configmaps",
            "causes": [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ],
        }
        # updates of what is there go on (the finalizer's owner lets go)
        released = client.patch(
            f"/api/v1/namespaces/{namespace}/configmaps/held",
            json={"metadata": {"finalizers": None}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
        assert released.status_code == 200, released.text
    finally:
        client.patch(
            f"/api/v1/namespaces/{namespace}/configmaps/held",
            json={"metadata": {"finalizers": None}},
            headers={"Content-Type": "application/merge-patch+json"},
        )
    assert eventually(lambda: client.get(f"/api/v1/namespaces/{namespace}").status_code == 404, timeout=30)


def test_the_servers_namespaces_may_not_be_deleted(client: httpx.Client) -> None:
    for name in ("default", "kube-system", "kube-public"):
        refused = client.delete(f"/api/v1/namespaces/{name}")
        assert refused.status_code == 403
        assert refused.json()["message"] == f'namespaces "{name}" is forbidden: this namespace may not be deleted'
        assert client.get(f"/api/v1/namespaces/{name}").json()["status"]["phase"] == "Active"


def test_access_reviews_in_a_missing_namespace(client: httpx.Client) -> None:
    review = {
        "apiVersion": "authorization.k8s.io/v1",
        "kind": "LocalSubjectAccessReview",
        "metadata": {"namespace": "nowhere"},
        "spec": {"user": "alice", "resourceAttributes": {"namespace": "nowhere", "verb": "get", "resource": "pods"}},
    }
    answered = client.post("/apis/authorization.k8s.io/v1/namespaces/nowhere/localsubjectaccessreviews", json=review)
    assert answered.status_code == 201, answered.text
    assert answered.json()["status"]["allowed"] is False
    missing = client.post("/api/v1/namespaces/nowhere/configmaps", json={"metadata": {"name": "c"}})
    assert missing.status_code == 404
    assert missing.json()["message"] == 'namespaces "nowhere" not found'
