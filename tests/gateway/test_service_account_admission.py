"""The ServiceAccount admission plugin and the controllers it needs: every namespace gets a
``default`` ServiceAccount and the ``kube-root-ca.crt`` ConfigMap (made again when deleted or
changed); pods get their service account, the ``kube-api-access-…`` projected volume and its
mounts, as kube-apiserver 1.32 gives them; a missing account is refused with upstream's words.

On a server of this module's with every controller (the shared one runs without the root CA
publisher): its ``client`` and ``namespace`` fixtures stand for conftest's.
"""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import ROOT, GatewayProcess, eventually, kubectl_path

MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_NAME = re.compile(r"kube-api-access-[bcdfghjklmnpqrstvwxz2456789]{5}")
DESCRIPTION = (
    "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as "
    "the internal service IP or kubernetes.default.svc. No other usage is guaranteed across distributions of "
    "Kubernetes clusters."
)
TOKEN_SOURCES = [
    {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
    {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
    {
        "downwardAPI": {
            "items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]
        }
    },
]


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("service-accounts")).start()
    yield process
    process.kill()


@pytest.fixture(scope="module")
def client(cluster: GatewayProcess) -> Iterator[httpx.Client]:
    with cluster.client() as c:
        yield c


_counter = itertools.count()


@pytest.fixture
def namespace(client: httpx.Client) -> Iterator[str]:
    name = f"sa{next(_counter)}"
    assert client.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    yield name
    client.delete(f"/api/v1/namespaces/{name}")


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": name}, "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec}}


def default_account(client: httpx.Client, namespace: str) -> dict[str, Any]:
    """The namespace's default ServiceAccount, once the controller has made it."""
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts/default"
    answer = eventually(lambda: client.get(path).status_code == 200 and client.get(path))
    assert answer, f"no default ServiceAccount in {namespace}"
    return answer.json()


def create_pod(client: httpx.Client, namespace: str, body: dict[str, Any], **params: str) -> httpx.Response:
    default_account(client, namespace)
    return client.post(f"/api/v1/namespaces/{namespace}/pods", json=body, params=params)


def token_volumes(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in spec.get("volumes", []) if v["name"].startswith("kube-api-access-")]


# ---- the controllers ----------------------------------------------------------------------------


def test_a_new_namespace_gets_the_default_account_and_the_root_ca(
    cluster: GatewayProcess, client: httpx.Client, namespace: str
) -> None:
    account = default_account(client, namespace)
    assert account["metadata"]["name"] == "default"
    assert "secrets" not in account and "automountServiceAccountToken" not in account
    configmap = eventually(lambda: _root_ca(client, namespace))
    assert configmap["data"] == {"ca.crt": (cluster.data_dir / "pki" / "ca.crt").read_text()}
    assert configmap["metadata"]["annotations"] == {"kubernetes.io/description": DESCRIPTION}
    assert configmap["metadata"]["managedFields"][0]["manager"] == "kube-controller-manager"


def test_the_system_namespaces_have_them_too(client: httpx.Client) -> None:
    for namespace in ("default", "kube-system", "kube-public", "kube-node-lease"):
        assert default_account(client, namespace)
        assert eventually(lambda n=namespace: _root_ca(client, n))


def _root_ca(client: httpx.Client, namespace: str) -> dict[str, Any] | None:
    answer = client.get(f"/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt")
    return answer.json() if answer.status_code == 200 else None


def test_deleted_ones_come_back(client: httpx.Client, namespace: str) -> None:
    account = default_account(client, namespace)
    configmap = eventually(lambda: _root_ca(client, namespace))
    assert client.delete(f"/api/v1/namespaces/{namespace}/serviceaccounts/default").status_code == 200
    assert client.delete(f"/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt").status_code == 200
    again = eventually(
        lambda: (a := default_account(client, namespace))["metadata"]["uid"] != account["metadata"]["uid"] and a
    )
    assert again, "the default ServiceAccount was not made again"
    remade = eventually(
        lambda: (c := _root_ca(client, namespace)) and c["metadata"]["uid"] != configmap["metadata"]["uid"] and c
    )
    assert remade and remade["data"] == configmap["data"]


def test_a_changed_root_ca_is_put_back(client: httpx.Client, namespace: str) -> None:
    configmap = eventually(lambda: _root_ca(client, namespace))
    changed = {**configmap, "data": {"ca.crt": "not a CA", "extra": "x"}}
    changed["metadata"] = {**configmap["metadata"], "annotations": {"mine": "yes"}}
    path = f"/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt"
    assert client.put(path, json=changed).status_code == 200
    reset = eventually(lambda: (c := _root_ca(client, namespace))["data"] == configmap["data"] and c)
    assert reset, "kube-root-ca.crt kept the changed data"
    assert reset["metadata"]["annotations"] == {"mine": "yes", "kubernetes.io/description": DESCRIPTION}


def test_another_account_is_left_alone(client: httpx.Client, namespace: str) -> None:
    """Only ``default`` is the controller's: a deleted account of another name stays deleted."""
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts"
    assert client.post(path, json={"metadata": {"name": "builder"}}).status_code == 201
    assert client.delete(f"{path}/builder").status_code == 200
    default_account(client, namespace)
    assert client.get(f"{path}/builder").status_code == 404


def test_a_deleted_namespace_goes_with_them(client: httpx.Client) -> None:
    """The namespace controller empties it, and neither controller makes them again meanwhile."""
    name = "sa-going"
    assert client.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
    default_account(client, name)
    assert eventually(lambda: _root_ca(client, name))
    assert client.delete(f"/api/v1/namespaces/{name}").status_code == 200
    assert eventually(lambda: client.get(f"/api/v1/namespaces/{name}").status_code == 404, timeout=30)
    assert client.get(f"/api/v1/namespaces/{name}/serviceaccounts").json()["items"] == []
    assert client.get(f"/api/v1/namespaces/{name}/configmaps").json()["items"] == []


def test_controllers_left_out_do_not_run(server: GatewayProcess) -> None:
    """The shared server runs with --controllers=*,-root-ca-certificate-publisher-controller."""
    with server.client() as shared:
        name = "sa-no-root-ca"
        assert shared.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
        try:
            default_account(shared, name)
            configmaps = shared.get(f"/api/v1/namespaces/{name}/configmaps").json()["items"]
            assert configmaps == []
        finally:
            shared.delete(f"/api/v1/namespaces/{name}")


@pytest.mark.parametrize("value", ["*,-no-such-controller", "no-such-controller", "*,serviceaccount,-nope"])
def test_an_unknown_controller_stops_the_start(tmp_path: Path, value: str) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "protokube", "serve", "--data-dir", str(tmp_path), f"--controllers={value}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    unknown = value.rpartition(",")[2].removeprefix("-")
    assert f'"{unknown}" is not in the list of known controllers' in result.stderr


# ---- the admission plugin -----------------------------------------------------------------------


def test_a_pod_gets_the_default_account_and_the_token_volume(client: httpx.Client, namespace: str) -> None:
    body = pod(initContainers=[{"name": "init", "image": "busybox"}])
    body["spec"]["containers"].append({"name": "sidecar", "image": "busybox"})
    created = create_pod(client, namespace, body)
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assert spec["serviceAccountName"] == "default"
    assert spec["serviceAccount"] == "default"  # the deprecated alias, as upstream writes it
    [volume] = spec["volumes"]
    assert VOLUME_NAME.fullmatch(volume["name"]), volume["name"]
    assert volume["projected"] == {"sources": TOKEN_SOURCES, "defaultMode": 420}
    mount = {"name": volume["name"], "readOnly": True, "mountPath": MOUNT_PATH}
    for container in [*spec["initContainers"], *spec["containers"]]:
        assert container["volumeMounts"] == [mount], container["name"]
    stored = client.get(f"/api/v1/namespaces/{namespace}/pods/p").json()
    assert stored["spec"] == spec


def test_a_mount_at_the_path_and_an_own_token_volume_are_kept(client: httpx.Client, namespace: str) -> None:
    own = {"name": "mine", "mountPath": MOUNT_PATH}
    body = pod(volumes=[{"name": "mine", "emptyDir": {}}])
    body["spec"]["containers"] = [
        {"name": "a", "image": "nginx", "volumeMounts": [own]},
        {"name": "b", "image": "nginx"},
    ]
    spec = create_pod(client, namespace, body).json()["spec"]
    a, b = spec["containers"]
    assert a["volumeMounts"] == [own]
    [volume] = token_volumes(spec)
    assert b["volumeMounts"] == [{"name": volume["name"], "readOnly": True, "mountPath": MOUNT_PATH}]

    everyone_mounts = pod("q", volumes=[{"name": "mine", "emptyDir": {}}])
    everyone_mounts["spec"]["containers"][0]["volumeMounts"] = [own]
    spec = create_pod(client, namespace, everyone_mounts).json()["spec"]
    assert token_volumes(spec) == []  # no container needs it

    reused = pod("r", volumes=[{"name": "kube-api-access-own", "emptyDir": {}}])
    spec = create_pod(client, namespace, reused).json()["spec"]
    assert spec["volumes"] == [{"name": "kube-api-access-own", "emptyDir": {}}]
    mount = {"name": "kube-api-access-own", "readOnly": True, "mountPath": MOUNT_PATH}
    assert spec["containers"][0]["volumeMounts"] == [mount]


@pytest.mark.parametrize(
    ("pod_automount", "account_automount", "mounted"),
    [(False, None, False), (None, False, False), (True, False, True), (False, True, False), (None, True, True)],
)
def test_automount_service_account_token(
    client: httpx.Client,
    namespace: str,
    pod_automount: bool | None,
    account_automount: bool | None,
    mounted: bool,
) -> None:
    """The pod's choice wins, then the account's; the default is to mount."""
    account: dict[str, Any] = {"metadata": {"name": "robot"}}
    if account_automount is not None:
        account["automountServiceAccountToken"] = account_automount
    assert client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json=account).status_code == 201
    spec: dict[str, Any] = {"serviceAccountName": "robot"}
    if pod_automount is not None:
        spec["automountServiceAccountToken"] = pod_automount
    created = create_pod(client, namespace, pod(**spec))
    assert created.status_code == 201, created.text
    answer = created.json()["spec"]
    assert bool(token_volumes(answer)) is mounted
    assert ("volumeMounts" in answer["containers"][0]) is mounted


def test_a_missing_account_is_refused(client: httpx.Client, namespace: str) -> None:
    refused = create_pod(client, namespace, pod(serviceAccountName="missing"))
    assert refused.status_code == 403
    assert refused.json() == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": f'pods "p" is forbidden: error looking up service account {namespace}/missing: '
        'serviceaccount "missing" not found',
        "reason": "Forbidden",
        "details": {"name": "p", "kind": "pods"},
        "code": 403,
    }
    generated = create_pod(client, namespace, {**pod(serviceAccount="gone"), "metadata": {"generateName": "web-"}})
    assert generated.status_code == 403  # the deprecated field names the account when the other is empty
    assert generated.json()["message"] == (
        f'pods "web-" is forbidden: error looking up service account {namespace}/gone: serviceaccount "gone" not found'
    )


def test_the_deprecated_field_names_the_account(client: httpx.Client, namespace: str) -> None:
    path = f"/api/v1/namespaces/{namespace}/serviceaccounts"
    assert client.post(path, json={"metadata": {"name": "old-style"}}).status_code == 201
    spec = create_pod(client, namespace, pod(serviceAccount="old-style")).json()["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("old-style", "old-style")
    spec = create_pod(client, namespace, pod("q", serviceAccount="old-style", serviceAccountName="default")).json()
    assert (spec["spec"]["serviceAccountName"], spec["spec"]["serviceAccount"]) == ("default", "default")


def test_the_accounts_image_pull_secrets_are_taken(client: httpx.Client, namespace: str) -> None:
    account = {"metadata": {"name": "puller"}, "imagePullSecrets": [{"name": "registry"}]}
    assert client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json=account).status_code == 201
    spec = create_pod(client, namespace, pod(serviceAccountName="puller")).json()["spec"]
    assert spec["imagePullSecrets"] == [{"name": "registry"}]
    own = [{"name": "own"}]
    spec = create_pod(client, namespace, pod("q", serviceAccountName="puller", imagePullSecrets=own)).json()["spec"]
    assert spec["imagePullSecrets"] == own


def test_an_account_enforcing_mountable_secrets(client: httpx.Client, namespace: str) -> None:
    account = {
        "metadata": {"name": "strict", "annotations": {"kubernetes.io/enforce-mountable-secrets": "true"}},
        "secrets": [{"name": "allowed"}],
        "imagePullSecrets": [{"name": "pull"}],
    }
    assert client.post(f"/api/v1/namespaces/{namespace}/serviceaccounts", json=account).status_code == 201
    why = "is not allowed because service account strict does not reference that"
    cases = [
        (
            {"volumes": [{"name": "s", "secret": {"secretName": "other"}}]},
            f'volume with secret.secretName="other" {why} secret',
        ),
        (
            {
                "containers": [
                    {
                        "name": "c",
                        "image": "x",
                        "env": [{"name": "E", "valueFrom": {"secretKeyRef": {"name": "other", "key": "k"}}}],
                    }
                ]
            },
            f'container c with envVar E referencing secret.secretName="other" {why} secret',
        ),
        (
            {"initContainers": [{"name": "i", "image": "x", "envFrom": [{"secretRef": {"name": "other"}}]}]},
            f'init container i with envFrom referencing secret.secretName="other" {why} secret',
        ),
        (
            {"imagePullSecrets": [{"name": "pull"}, {"name": "other"}]},
            f'imagePullSecrets[1].name="other" {why} imagePullSecret',
        ),
    ]
    for extra, message in cases:
        refused = create_pod(client, namespace, pod(serviceAccountName="strict", **extra))
        assert refused.status_code == 403, refused.text
        assert refused.json()["message"] == f'pods "p" is forbidden: {message}'
    allowed = pod(serviceAccountName="strict", volumes=[{"name": "s", "secret": {"secretName": "allowed"}}])
    created = create_pod(client, namespace, allowed)
    assert created.status_code == 201, created.text
    assert created.json()["spec"]["imagePullSecrets"] == [{"name": "pull"}]  # the account's, which it allows

    debug = {"name": "debug", "image": "busybox", "envFrom": [{"secretRef": {"name": "other"}}]}
    current = client.get(f"/api/v1/namespaces/{namespace}/pods/p").json()
    current["spec"]["ephemeralContainers"] = [debug]
    refused = client.put(f"/api/v1/namespaces/{namespace}/pods/p/ephemeralcontainers", json=current)
    assert refused.status_code == 403, refused.text
    message = f'ephemeral container debug with envFrom referencing secret.secretName="other" {why} secret'
    assert refused.json()["message"] == f'pods "p" is forbidden: {message}'


def test_an_unenforced_account_allows_any_secret(client: httpx.Client, namespace: str) -> None:
    body = pod(volumes=[{"name": "s", "secret": {"secretName": "anything"}}])
    assert create_pod(client, namespace, body).status_code == 201


def test_mirror_pods(client: httpx.Client, namespace: str) -> None:
    """A kubelet's mirror pod is not changed, and may reference no account nor secret."""
    mirror = {"kubernetes.io/config.mirror": "abc"}
    body = pod()
    body["metadata"]["annotations"] = mirror
    created = create_pod(client, namespace, body)
    assert created.status_code == 201, created.text
    spec = created.json()["spec"]
    assert "serviceAccountName" not in spec and "volumes" not in spec
    cases = [
        ({"serviceAccountName": "default"}, "a mirror pod may not reference service accounts"),
        ({"volumes": [{"name": "s", "secret": {"secretName": "x"}}]}, "a mirror pod may not reference secrets"),
        ({"imagePullSecrets": [{"name": "x"}]}, "a mirror pod may not reference secrets"),
        (
            {"volumes": [{"name": "t", "projected": {"sources": [{"serviceAccountToken": {"path": "t"}}]}}]},
            "a mirror pod may not use ServiceAccountToken volume projections",
        ),
    ]
    for extra, message in cases:
        body = pod("q", **extra)
        body["metadata"]["annotations"] = mirror
        refused = create_pod(client, namespace, body)
        assert refused.status_code == 403, refused.text
        assert refused.json()["message"] == f'pods "q" is forbidden: {message}'


def test_a_dry_run_pod_gets_the_volume_and_nothing_is_stored(client: httpx.Client, namespace: str) -> None:
    created = create_pod(client, namespace, pod(), dryRun="All")
    assert created.status_code == 201, created.text
    assert token_volumes(created.json()["spec"])
    assert client.get(f"/api/v1/namespaces/{namespace}/pods/p").status_code == 404


def test_updates_leave_the_pod_as_created(client: httpx.Client, namespace: str) -> None:
    spec = create_pod(client, namespace, pod()).json()["spec"]
    path = f"/api/v1/namespaces/{namespace}/pods/p"
    patched = client.patch(
        path, json={"metadata": {"labels": {"a": "b"}}}, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert patched.status_code == 200, patched.text
    assert patched.json()["spec"] == spec
    changed = client.patch(
        path, json={"spec": {"serviceAccountName": "other"}}, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert changed.status_code == 422  # pod validation: the account is immutable


@pytest.mark.skipif(kubectl_path() is None, reason="kubectl is not installed")
def test_kubectl_run(cluster: GatewayProcess, client: httpx.Client, namespace: str, tmp_path: Path) -> None:
    default_account(client, namespace)
    env = {**os.environ, "KUBECONFIG": str(cluster.kubeconfig), "HOME": str(tmp_path)}
    kubectl = kubectl_path()
    assert kubectl is not None
    run = subprocess.run(
        [kubectl, "run", "web", "--image=nginx", "-n", namespace], capture_output=True, text=True, env=env, timeout=60
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "pod/web created"
    spec = client.get(f"/api/v1/namespaces/{namespace}/pods/web").json()["spec"]
    assert spec["serviceAccountName"] == "default"
    [volume] = token_volumes(spec)
    assert spec["containers"][0]["volumeMounts"] == [
        {"name": volume["name"], "readOnly": True, "mountPath": MOUNT_PATH}
    ]
    refused = subprocess.run(
        [
            kubectl,
            "run",
            "web2",
            "--image=nginx",
            "-n",
            namespace,
            "--overrides",
            '{"spec":{"serviceAccountName":"nope"}}',
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert refused.returncode == 1
    assert refused.stderr.strip() == (
        f'Error from server (Forbidden): pods "web2" is forbidden: error looking up service account {namespace}/nope: '
        'serviceaccount "nope" not found'
    )
