"""helm (helm.sh/helm/v3, built with `go install`) as a real client: install, upgrade, rollback,
history, `get manifest` and uninstall of tests/clients/helm/tiny (a Deployment, a Service, a ConfigMap,
a Secret and a post-install/upgrade/rollback hook Job) against a started gateway over TLS.

Nothing runs pods here, so the test plays the Job controller for the hook: it marks each hook Job
complete (as the Job controller would once its pod succeeded), which helm waits for.

helm: $HELM, the PATH's, or built once into .cache/helm/<version>/ with the Go test_client_go finds.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import yaml

from .helpers import ROOT, GatewayProcess, eventually
from .test_client_go import CACHE, find_go

pytestmark = pytest.mark.timeout(2400)  # the first build of helm on a slow machine

HELM_VERSION = "v3.22.0"
CHART = ROOT / "tests" / "clients" / "helm" / "tiny"
NAMESPACE = "helm-test"


@pytest.fixture(scope="module")
def helm_binary() -> str:
    found = os.environ.get("HELM") or shutil.which("helm")
    if found:
        return found
    home = CACHE / "helm" / HELM_VERSION
    binary = home / "helm"
    home.mkdir(parents=True, exist_ok=True)
    with open(home / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not binary.exists():
            go = find_go()
            if go is None:
                pytest.skip("no helm, and no Go toolchain to build it with")
            env = {**os.environ, "GOBIN": str(home), "GOTOOLCHAIN": "auto", "CGO_ENABLED": "0"}
            env["PATH"] = f"{Path(go).parent}:{env.get('PATH', '')}"
            build = subprocess.run(
                [go, "install", f"helm.sh/helm/v3/cmd/helm@{HELM_VERSION}"],
                env=env,
                cwd=home,
                capture_output=True,
                text=True,
                timeout=2200,
            )
            assert build.returncode == 0, f"go install helm failed:\n{build.stdout}\n{build.stderr}"
    return str(binary)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("helm")).start()
    yield process
    process.kill()


class Helm:
    def __init__(self, binary: str, gateway: GatewayProcess, home: Path) -> None:
        self.binary = binary
        self.env = {
            **os.environ,
            "KUBECONFIG": str(gateway.kubeconfig),
            "HELM_CACHE_HOME": str(home / "cache"),
            "HELM_CONFIG_HOME": str(home / "config"),
            "HELM_DATA_HOME": str(home / "data"),
        }

    def __call__(self, *args: str, namespace: str = NAMESPACE, ok: bool = True, timeout: float = 180) -> str:
        """helm's output; with ok=False it must fail, and its output and error are returned."""
        cmd = [self.binary, *args, "--namespace", namespace]
        result = subprocess.run(cmd, env=self.env, capture_output=True, text=True, timeout=timeout)
        output = f"{result.stdout}\n{result.stderr}"
        if not ok:
            assert result.returncode != 0, f"helm {' '.join(args)} succeeded:\n{output}"
            return output
        assert result.returncode == 0, f"helm {' '.join(args)} exited {result.returncode}:\n{output}"
        return result.stdout


class HookJobCompleter:
    """Marks every Job of the namespace complete, as the Job controller would once its pod succeeded
    (no kubelet runs pods here): the status helm waits for before it goes on."""

    def __init__(self, gateway: GatewayProcess, namespace: str = NAMESPACE) -> None:
        self.gateway = gateway
        self.namespace = namespace
        self.completed: list[str] = []
        self.errors: list[str] = []
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self.run, daemon=True)

    def run(self) -> None:
        with self.gateway.client() as client:
            while not self.stop.is_set():
                jobs = client.get(f"/apis/batch/v1/namespaces/{self.namespace}/jobs")
                for job in jobs.json().get("items", []) if jobs.status_code == 200 else []:
                    conditions = job.get("status", {}).get("conditions", [])
                    if any(c["type"] == "Complete" for c in conditions) or job["metadata"].get("deletionTimestamp"):
                        continue
                    if any(c["type"] == "Failed" for c in conditions):
                        continue
                    now = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
                    # A hook whose command echoes "fail" fails (backoffLimit 0: one failed pod).
                    failing = "echo fail" in json.dumps(job["spec"]["template"]["spec"]["containers"])
                    status = {
                        "startTime": job.get("status", {}).get("startTime", now),
                        "ready": 0,
                        "conditions": [
                            {"type": t, "status": "True", "lastProbeTime": now, "lastTransitionTime": now}
                            for t in (("FailureTarget", "Failed") if failing else ("SuccessCriteriaMet", "Complete"))
                        ],
                    }
                    if failing:
                        status["failed"] = 1
                        for condition in status["conditions"]:
                            condition["reason"] = "BackoffLimitExceeded"
                    else:
                        status.update(completionTime=now, succeeded=1)
                    name = job["metadata"]["name"]
                    answer = client.patch(
                        f"/apis/batch/v1/namespaces/{self.namespace}/jobs/{name}/status",
                        json={"metadata": {"resourceVersion": job["metadata"]["resourceVersion"]}, "status": status},
                        headers={"Content-Type": "application/merge-patch+json"},
                    )
                    if answer.status_code == 200:
                        self.completed.append(name)
                    elif answer.status_code != 409:
                        self.errors.append(f"{answer.status_code} {answer.text}")
                time.sleep(0.2)

    def __enter__(self) -> HookJobCompleter:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.thread.join(10)


def documents(manifest: str) -> dict[tuple[str, str], dict]:
    """A rendered manifest's objects by kind and name (helm's hooks left out)."""
    objects = {}
    for doc in yaml.safe_load_all(manifest):
        if doc and "helm.sh/hook" not in doc.get("metadata", {}).get("annotations", {}):
            objects[(doc["kind"], doc["metadata"]["name"])] = doc
    return objects


def test_install_upgrade_rollback_uninstall(helm_binary: str, gateway: GatewayProcess, tmp_path: Path) -> None:
    helm = Helm(helm_binary, gateway, tmp_path)
    with gateway.client() as client, HookJobCompleter(gateway) as jobs:
        assert client.post("/api/v1/namespaces", json={"metadata": {"name": NAMESPACE}}).status_code == 201
        ns = f"/api/v1/namespaces/{NAMESPACE}"
        assert eventually(lambda: client.get(f"{ns}/serviceaccounts/default").status_code == 200)

        helm("install", "rel", str(CHART), "--timeout", "120s")
        assert jobs.completed == ["rel-hook"], jobs.errors
        deployment = client.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/rel-web").json()
        assert deployment["spec"]["replicas"] == 1
        assert deployment["metadata"]["annotations"]["meta.helm.sh/release-name"] == "rel"
        assert deployment["metadata"]["labels"]["app.kubernetes.io/managed-by"] == "Helm"
        assert client.get(f"{ns}/configmaps/rel-config").json()["data"]["message"] == "hello"
        assert client.get(f"{ns}/services/rel-web").json()["spec"]["clusterIP"]
        assert client.get(f"{ns}/secrets/rel-secret").json()["data"]["password"] == "aHVudGVyMg=="
        status = json.loads(helm("status", "rel", "-o", "json"))
        assert status["info"]["status"] == "deployed" and status["version"] == 1, status

        # get manifest round-trips: what helm stored is what the chart renders.
        rendered = helm("template", "rel", str(CHART))
        stored = helm("get", "manifest", "rel")
        assert documents(stored) == documents(rendered)
        assert set(documents(stored)) == {
            ("ConfigMap", "rel-config"),
            ("Secret", "rel-secret"),
            ("Deployment", "rel-web"),
            ("Service", "rel-web"),
        }

        helm("upgrade", "rel", str(CHART), "--set", "replicas=3", "--set", "message=changed", "--timeout", "120s")
        deployment = client.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/rel-web").json()
        assert deployment["spec"]["replicas"] == 3
        assert client.get(f"{ns}/configmaps/rel-config").json()["data"]["message"] == "changed"
        assert jobs.completed == ["rel-hook", "rel-hook"], jobs.errors  # recreated (before-hook-creation)
        assert helm("get", "values", "rel", "-o", "json").strip() == '{"message":"changed","replicas":3}'

        helm("rollback", "rel", "1", "--timeout", "120s")
        deployment = client.get(f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/rel-web").json()
        assert deployment["spec"]["replicas"] == 1
        assert client.get(f"{ns}/configmaps/rel-config").json()["data"]["message"] == "hello"
        history = json.loads(helm("history", "rel", "-o", "json"))
        assert [(h["revision"], h["status"]) for h in history] == [
            (1, "superseded"),
            (2, "superseded"),
            (3, "deployed"),
        ], history
        assert history[2]["description"] == "Rollback to 1"
        releases = client.get(f"{ns}/secrets", params={"labelSelector": "owner=helm,name=rel"}).json()["items"]
        assert sorted(s["metadata"]["name"] for s in releases) == [f"sh.helm.release.v1.rel.v{i}" for i in (1, 2, 3)]

        helm("uninstall", "rel", "--timeout", "120s")
        for path in (
            f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments/rel-web",
            f"{ns}/services/rel-web",
            f"{ns}/configmaps/rel-config",
            f"{ns}/secrets/rel-secret",
        ):
            assert eventually(lambda path=path: client.get(path).status_code == 404), path
        assert client.get(f"{ns}/secrets", params={"labelSelector": "owner=helm"}).json()["items"] == []
        assert "rel" not in helm("list", "-q")
        assert not jobs.errors, jobs.errors


def test_failed_hook_dry_run_and_force(helm_binary: str, gateway: GatewayProcess, tmp_path: Path) -> None:
    """A server-side dry run creates nothing; an upgrade whose hook Job fails leaves the release failed,
    a rollback to the previous revision mends it; --force replaces the objects."""
    helm = Helm(helm_binary, gateway, tmp_path)
    namespace = "helm-test-2"
    with gateway.client() as client, HookJobCompleter(gateway, namespace) as jobs:
        assert client.post("/api/v1/namespaces", json={"metadata": {"name": namespace}}).status_code == 201
        ns = f"/api/v1/namespaces/{namespace}"
        assert eventually(lambda: client.get(f"{ns}/serviceaccounts/default").status_code == 200)

        helm("install", "dry", str(CHART), "--dry-run=server", namespace=namespace)
        assert client.get(f"{ns}/configmaps/dry-config").status_code == 404
        assert client.get(f"{ns}/secrets", params={"labelSelector": "owner=helm"}).json()["items"] == []

        helm("install", "rel", str(CHART), "--timeout", "120s", namespace=namespace)
        failed = helm(
            "upgrade", "rel", str(CHART), "--set", "message=fail", "--timeout", "60s", namespace=namespace, ok=False
        )
        assert "rel-hook" in failed and "failed" in failed.lower(), failed
        assert json.loads(helm("status", "rel", "-o", "json", namespace=namespace))["info"]["status"] == "failed"
        assert client.get(f"{ns}/configmaps/rel-config").json()["data"]["message"] == "fail"  # applied before the hook

        # (--atomic would roll back by itself, but it implies --wait: for pods no kubelet runs here.)
        helm("rollback", "rel", "--timeout", "120s", namespace=namespace)
        history = json.loads(helm("history", "rel", "-o", "json", namespace=namespace))
        assert history[-1]["status"] == "deployed" and history[-1]["description"].startswith("Rollback"), history
        assert client.get(f"{ns}/configmaps/rel-config").json()["data"]["message"] == "hello"

        before = client.get(f"{ns}/configmaps/rel-config").json()["metadata"]["uid"]
        helm(
            "upgrade", "rel", str(CHART), "--force", "--set", "message=forced", "--timeout", "120s", namespace=namespace
        )
        after = client.get(f"{ns}/configmaps/rel-config").json()
        assert after["data"]["message"] == "forced"
        assert after["metadata"]["uid"] == before  # --force replaces by PUT, recreating only on failure
        helm("uninstall", "rel", "--timeout", "120s", namespace=namespace)
        assert eventually(lambda: client.get(f"{ns}/configmaps/rel-config").status_code == 404)
        assert not jobs.errors, jobs.errors
