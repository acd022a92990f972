"""The pytest plugin, as a user's project meets it: a throwaway project run by pytest in a subprocess,
the plugin found through its pytest11 entry point (no -p, no conftest)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from .procs import gone, processes_of

RUN_TIMEOUT = 300


def project(tmp_path: Path, tests: str, ini: str = "") -> Path:
    tmp_path.mkdir(exist_ok=True)
    (tmp_path / "pytest.ini").write_text("[pytest]\n" + textwrap.dedent(ini))
    (tmp_path / "test_cluster.py").write_text(textwrap.dedent(tests))
    return tmp_path


def run_pytest(path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-v", *args],
        cwd=path, capture_output=True, text=True, timeout=RUN_TIMEOUT,
    )  # fmt: skip


FIXTURE_TESTS = """
    import httpx
    import kubernetes

    seen = []

    def test_a_namespace_of_its_own(kube_apiserver, kube_namespace):
        seen.append(kube_namespace)
        assert kube_namespace.startswith("test-a-namespace-of-its-own-")
        api = kubernetes.client.CoreV1Api(kubernetes.config.new_client_from_config(str(kube_apiserver.kubeconfig)))
        api.create_namespaced_config_map(kube_namespace, {"metadata": {"name": "settings"}, "data": {"a": "b"}})
        assert api.read_namespaced_config_map("settings", kube_namespace).data == {"a": "b"}

    def test_the_same_server_and_the_last_namespace_deleted(kube_apiserver, kube_namespace):
        assert kube_namespace != seen[0]
        with kube_apiserver.client() as client:
            old = client.get(f"/api/v1/namespaces/{seen[0]}")
        assert old.status_code == 404 or old.json()["status"]["phase"] == "Terminating"
        assert kube_apiserver.insecure_url is not None  # the ini file asked for it
        assert httpx.get(kube_apiserver.insecure_url + "/readyz").status_code == 200
"""


def test_kube_apiserver_and_kube_namespace_in_a_project(tmp_path: Path) -> None:
    path = project(tmp_path, FIXTURE_TESTS, ini="kube_insecure = true\nkube_storage = memory\n")
    done = run_pytest(path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed" in done.stdout


MARKED_TESTS = """
    import pytest

    pytestmark = pytest.mark.kube_apiserver(storage="embedded", runtime_config="api/all=false,api/v1=true")

    def test_this_modules_server(kube_apiserver_module, kube_namespace, request):
        with kube_apiserver_module.client() as client:
            assert client.get("/apis/apps/v1").status_code == 404  # the marker's --runtime-config
            assert client.get(f"/api/v1/namespaces/{kube_namespace}").status_code == 200  # made on it
        assert "--kube-args" not in request.config.invocation_params.args
"""


def test_a_marked_module_gets_its_own_server_and_a_data_dir_to_inspect(tmp_path: Path) -> None:
    # A short path: the storage's socket is in the data dir, and a Unix socket's path has at most 107 bytes.
    with tempfile.TemporaryDirectory(dir="/tmp") as kept_dir:
        path = project(tmp_path / "project", MARKED_TESTS, ini=f"kube_data_dir = {kept_dir}\n")
        done = run_pytest(path)
        assert done.returncode == 0, done.stdout + done.stderr
        kept = Path(kept_dir) / "test-cluster-py"
        assert "protokube serving on" in (kept / "serve.log").read_text()
        assert (kept / "storage" / "storage.db").exists()


def test_a_server_that_cannot_start_fails_the_test_with_its_own_words(tmp_path: Path) -> None:
    path = project(tmp_path, "def test_cluster(kube_apiserver):\n    pass\n")
    started = time.monotonic()
    done = run_pytest(path, "--kube-args=--no-such-flag")
    assert done.returncode == 1
    assert "1 error" in done.stdout
    assert "protokube serve: unrecognized arguments: --no-such-flag" in done.stdout
    assert time.monotonic() - started < 60  # at once, not after the start timeout


KILLED_TESTS = """
    import pathlib, time

    def test_waits_to_be_killed(kube_apiserver):
        report = pathlib.Path(__file__).with_name("server.txt")
        report.write_text(f"{kube_apiserver.data_dir} {kube_apiserver.port}")
        time.sleep(600)
"""


def test_a_killed_test_run_leaves_no_process_and_no_port(tmp_path: Path) -> None:
    path = project(tmp_path / "project", KILLED_TESTS)
    with open(tmp_path / "output", "wb") as output:
        run = subprocess.Popen(
            [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p", "no:cacheprovider", "-p", "no:timeout"],
            cwd=path, stdout=output, stderr=subprocess.STDOUT,
        )  # fmt: skip
    try:
        report = path / "server.txt"
        deadline = time.monotonic() + RUN_TIMEOUT
        while not report.exists() and run.poll() is None and time.monotonic() < deadline:
            time.sleep(0.1)
        assert report.exists(), (tmp_path / "output").read_text()
        data_dir, port = report.read_text().split()
        assert processes_of(Path(data_dir))  # the server and its storage run
    finally:
        run.kill()
        run.wait()
    assert gone(Path(data_dir), int(port)) == ([], False)
