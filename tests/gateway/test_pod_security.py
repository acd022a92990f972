"""PodSecurity admission as kube-apiserver 1.32: namespace labels choose the level per mode,
enforce refuses pods with upstream's message, warn answers with a Warning header, workloads get
warnings only, invalid labels are refused, exemptions come from the admission configuration."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import httpx
import pytest

from protokube.gateway.admission.podsecurity import plugin
from protokube.gateway.admission.podsecurity.checks import CHECKS, details, evaluate
from protokube.gateway.admission.podsecurity.configuration import parse
from protokube.gateway.admission.podsecurity.levels import LevelVersion, Version
from protokube.gen.k8s.io.api.core.v1 import types_pb2 as core

from .helpers import ROOT, GatewayProcess, Kubectl, deployment, until_cached

LABEL = "pod-security.kubernetes.io/"
NGINX_RESTRICTED = (
    'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
    'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), '
    'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
    'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
    '"Localhost")'
)


def pod(name: str = "p", **spec: object) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name},
        "spec": {"containers": [{"name": "c", "image": "nginx"}], **spec},
    }


def compliant_pod(name: str = "ok") -> dict:
    """A pod the restricted level allows."""
    context = {"allowPrivilegeEscalation": False, "capabilities": {"drop": ["ALL"]}}
    return pod(
        name,
        securityContext={"runAsNonRoot": True, "seccompProfile": {"type": "RuntimeDefault"}},
        containers=[{"name": "c", "image": "nginx", "securityContext": context}],
    )


def label(client: httpx.Client, namespace: str, **modes: str) -> httpx.Response:
    """Set the namespace's PodSecurity labels (enforce="restricted", warn_version="v1.0", ...)."""
    labels = {LABEL + mode.replace("_", "-"): value for mode, value in modes.items()}
    answer = client.patch(
        f"/api/v1/namespaces/{namespace}",
        json={"metadata": {"labels": labels}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert answer.status_code == 200, answer.text
    # Admission reads the namespace from the watch cache (as upstream's plugin reads its lister),
    # which may not have seen the patch yet.
    until_cached(client, "/api/v1/namespaces", answer.json()["metadata"]["resourceVersion"])
    return answer


def warnings_of(response: httpx.Response) -> list[str]:
    """The Warning headers' texts, unquoted."""
    texts = []
    for value in response.headers.get_list("Warning"):
        assert value.startswith('299 - "') and value.endswith('"'), value
        texts.append(value[7:-1].replace('\\"', '"').replace("\\\\", "\\"))
    return texts


# ---- the checks' words (upstream's policy tests) ---------------------------------------------------
def test_the_checks_words() -> None:
    found = core.Pod()
    found.metadata.annotations["container.apparmor.security.beta.kubernetes.io/"] = "bogus"
    found.metadata.annotations["container.apparmor.security.beta.kubernetes.io/b"] = "runtime/default"
    found.metadata.annotations["container.apparmor.security.beta.kubernetes.io/e"] = "unconfined"
    found.metadata.annotations["container.apparmor.security.beta.kubernetes.io/d"] = "localhost/foo"
    for name, ports in (("a", [0]), ("b", [0, 10, 20]), ("c", [0, 10, 30])):
        container = found.spec.containers.add(name=name)
        for port in ports:
            container.ports.add(hostPort=port)
    found.spec.securityContext.sysctls.add(name="kernel.msgmax")
    found.spec.securityContext.sysctls.add(name="net.ipv4.tcp_rmem")
    assert details(evaluate(LevelVersion("baseline"), found.metadata, found.spec)) == (
        "forbidden AppArmor profiles (annotations must not set AppArmor profile type to "
        '"container.apparmor.security.beta.kubernetes.io/="bogus"", '
        '"container.apparmor.security.beta.kubernetes.io/e="unconfined""), '
        'hostPort (containers "b", "c" use hostPorts 10, 20, 30), forbidden sysctls (kernel.msgmax)'
    )
    # net.ipv4.tcp_rmem is allowed from v1.32 only; older versions have fewer checks and sysctls
    assert details(evaluate(LevelVersion("baseline", Version(31)), found.metadata, found.spec)).endswith(
        "forbidden sysctls (kernel.msgmax, net.ipv4.tcp_rmem)"
    )
    # versions past the newest policy version evaluate as it
    later = evaluate(LevelVersion("baseline", Version(40)), found.metadata, found.spec)
    assert later == evaluate(LevelVersion("baseline"), found.metadata, found.spec)


def test_restricted_versions_and_windows_pods() -> None:
    found = core.Pod()
    container = found.spec.containers.add(name="c")
    container.securityContext.runAsUser = 0
    container.securityContext.capabilities.add.append("NET_ADMIN")
    found.spec.volumes.add(name="n").volumeSource.nfs.server = "x"
    found.spec.volumes.add(name="i").volumeSource.image.reference = "x"
    assert details(evaluate(LevelVersion("restricted", Version(21)), found.metadata, found.spec)) == (
        'non-default capabilities (container "c" must not include "NET_ADMIN" in securityContext.capabilities.add), '
        'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), '
        'restricted volume types (volumes "n", "i" use restricted volume types "nfs", "unknown"), '
        'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or '
        '"Localhost")'
    )
    found.spec.os.name = "windows"
    assert details(evaluate(LevelVersion("restricted"), found.metadata, found.spec)) == (
        'restricted volume types (volumes "n", "i" use restricted volume types "nfs", "unknown"), '
        'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), '
        'runAsUser=0 (container "c" must not set runAsUser=0)'
    )


def _detail(check_id: str, found: core.Pod, minor: int = 32) -> str:
    """What one check says of ``found`` at v1.<minor>."""
    [check] = [c for c in CHECKS if c.id == check_id]
    run = check.at(minor)
    assert run is not None
    result = run(found.metadata, found.spec)
    return f"{result.reason} ({result.detail})" if result is not None else ""


def test_each_checks_words() -> None:
    """As upstream's policy tests word them."""
    found = core.Pod()
    found.spec.securityContext.seLinuxOptions.type = "foo"
    found.spec.securityContext.seLinuxOptions.user = "u"
    found.spec.securityContext.seLinuxOptions.role = "r"
    for name, kind in (("d", "container_t"), ("e", "bar"), ("f", "bar"), ("g", "container_engine_t")):
        found.spec.containers.add(name=name).securityContext.seLinuxOptions.type = kind
    assert _detail("seLinuxOptions", found, 31) == (
        'seLinuxOptions (pod and containers "e", "f" set forbidden securityContext.seLinuxOptions: types "bar", '
        '"foo"; user may not be set; role may not be set)'
    )
    assert 'containers "e", "f", "g"' in _detail("seLinuxOptions", found, 30)  # container_engine_t from v1.31

    found = core.Pod()
    for name, mount in (("a", None), ("b", "Default"), ("d", "Unmasked"), ("e", "other")):
        container = found.spec.containers.add(name=name)
        if mount:
            container.securityContext.procMount = mount
    assert _detail("procMount", found) == (
        'procMount (containers "d", "e" must not set securityContext.procMount to "Unmasked", "other")'
    )

    found = core.Pod()
    found.spec.securityContext.windowsOptions.hostProcess = True
    for name, host in (("d", False), ("e", True), ("f", True)):
        found.spec.containers.add(name=name).securityContext.windowsOptions.hostProcess = host
    assert _detail("windowsHostProcess", found) == (
        'hostProcess (pod and containers "e", "f" must not set securityContext.windowsOptions.hostProcess=true)'
    )

    found = core.Pod()
    found.metadata.annotations["seccomp.security.alpha.kubernetes.io/pod"] = "unconfined"
    found.metadata.annotations["container.seccomp.security.alpha.kubernetes.io/a"] = "unconfined"
    found.metadata.annotations["container.seccomp.security.alpha.kubernetes.io/b"] = "unknown"
    found.metadata.annotations["container.seccomp.security.alpha.kubernetes.io/c"] = "localhost/x"
    for name in "abc":
        found.spec.containers.add(name=name)
    found.spec.securityContext.seccompProfile.type = "Unconfined"
    assert _detail("seccompProfile_baseline", found, 18) == (
        "seccompProfile (forbidden annotations container.seccomp.security.alpha.kubernetes.io/a="
        '"unconfined", container.seccomp.security.alpha.kubernetes.io/b="unknown", '
        'seccomp.security.alpha.kubernetes.io/pod="unconfined")'
    )
    assert _detail("seccompProfile_baseline", found, 19) == (
        'seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")'
    )

    found = core.Pod()
    for name, drop, add in (("a", [], ["FOO", "BAR"]), ("b", ["NET_RAW"], ["BAZ"]), ("c", ["ALL"], ["CHOWN"])):
        capabilities = found.spec.containers.add(name=name).securityContext.capabilities
        capabilities.drop.extend(drop)
        capabilities.add.extend(add)
    found.spec.containers.add(name="d").securityContext.capabilities.drop.append("ALL")
    assert _detail("capabilities_restricted", found) == (
        'unrestricted capabilities (containers "a", "b" must set securityContext.capabilities.drop=["ALL"]; '
        'containers "a", "b", "c" must not include "BAR", "BAZ", "CHOWN", "FOO" in securityContext.capabilities.add)'
    )

    found = core.Pod()
    found.spec.volumes.add(name="a").volumeSource.hostPath.path = "/a"
    found.spec.volumes.add(name="b").volumeSource.hostPath.path = "/b"
    found.spec.volumes.add(name="c").volumeSource.emptyDir.SetInParent()
    assert _detail("hostPathVolumes", found) == 'hostPath volumes (volumes "a", "b")'

    found = core.Pod()
    found.spec.securityContext.appArmorProfile.type = "Unconfined"
    found.spec.containers.add(name="a").securityContext.appArmorProfile.type = "Localhost"
    found.spec.containers.add(name="b").securityContext.appArmorProfile.type = "Bogus"
    assert _detail("appArmorProfile", found) == (
        'forbidden AppArmor profiles (pod and container "b" must not set AppArmor profile type to "Bogus", '
        '"Unconfined")'
    )


class _Pods:
    """A pods cache holding ``pods`` (what the namespace check lists)."""

    def __init__(self, pods: list[core.Pod]) -> None:
        self.pods = pods

    async def list(self, flt: object, options: object) -> SimpleNamespace:
        return SimpleNamespace(items=[SimpleNamespace(obj=p) for p in self.pods])


def test_the_namespace_check_bounds_and_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(plugin, "MAX_PODS_TO_CHECK", 150)
    pods = []
    for index in range(250):
        found = core.Pod()
        found.metadata.name = f"p{index:03}"
        found.spec.containers.add(name="c")
        if index % 2:  # the odd ones belong to one ReplicaSet: checked after every other pod
            found.metadata.ownerReferences.add(uid="rs", controller=True)
            found.spec.hostPID = True
        pods.append(found)
    checker = plugin.PodSecurity(parse(None), None, _Pods(pods))  # type: ignore[arg-type]
    said = asyncio.run(checker._existing_pods("n", LevelVersion("baseline")))
    assert said == [
        "new PodSecurity enforce level only checked against the first 150 of 250 existing pods",
        'existing pods in namespace "n" violate the new PodSecurity enforce level "baseline:latest"',
        "p001 (and 24 other pods): host namespaces",
    ]


# ---- on the shared server ------------------------------------------------------------------------
def test_restricted_refuses_a_plain_pod_and_admits_a_compliant_one(client: httpx.Client, namespace: str) -> None:
    label(client, namespace, enforce="restricted")
    refused = client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod())
    assert refused.status_code == 403
    status = refused.json()
    assert status["reason"] == "Forbidden"
    assert status["message"] == f'pods "p" is forbidden: violates PodSecurity "restricted:latest": {NGINX_RESTRICTED}'
    assert status["details"] == {"name": "p", "kind": "pods"}
    assert warnings_of(refused) == []  # no warning on a request refused anyway
    dry = client.post(f"/api/v1/namespaces/{namespace}/pods?dryRun=All", json=pod())
    assert dry.status_code == 403 and dry.json()["message"] == status["message"]
    admitted = client.post(f"/api/v1/namespaces/{namespace}/pods", json=compliant_pod())
    assert admitted.status_code == 201, admitted.text
    assert warnings_of(admitted) == []
    # an ephemeral container is a pod write too (kubectl debug); a status write is not looked at
    debugger = client.patch(
        f"/api/v1/namespaces/{namespace}/pods/ok/ephemeralcontainers",
        json={"spec": {"ephemeralContainers": [{"name": "debugger", "image": "busybox"}]}},
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert debugger.status_code == 403
    assert debugger.json()["message"] == (
        'pods "ok" is forbidden: violates PodSecurity "restricted:latest": allowPrivilegeEscalation != false '
        '(container "debugger" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities '
        '(container "debugger" must set securityContext.capabilities.drop=["ALL"])'
    )
    running = client.patch(
        f"/api/v1/namespaces/{namespace}/pods/ok/status",
        json={"status": {"phase": "Running"}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert running.status_code == 200, running.text


def test_baseline_refuses_privileged_and_host_network(client: httpx.Client, namespace: str) -> None:
    label(client, namespace, enforce="baseline")
    privileged = pod(
        hostNetwork=True, containers=[{"name": "c", "image": "nginx", "securityContext": {"privileged": True}}]
    )
    refused = client.post(f"/api/v1/namespaces/{namespace}/pods", json=privileged)
    assert refused.status_code == 403
    assert refused.json()["message"] == (
        'pods "p" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true), '
        'privileged (container "c" must not set securityContext.privileged=true)'
    )
    assert client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod()).status_code == 201


def test_a_policy_version_label(client: httpx.Client, namespace: str) -> None:
    label(client, namespace, enforce="restricted", enforce_version="v1.0")
    refused = client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod())
    assert refused.json()["message"] == (
        'pods "p" is forbidden: violates PodSecurity "restricted:v1.0": '
        'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true)'
    )


def test_warn_answers_with_a_warning_and_audit_with_nothing(client: httpx.Client, namespace: str) -> None:
    label(client, namespace, warn="restricted")
    warned = client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod("warned"))
    assert warned.status_code == 201, warned.text
    assert warnings_of(warned) == [f'would violate PodSecurity "restricted:latest": {NGINX_RESTRICTED}']
    label(client, namespace, warn="privileged", audit="restricted")
    audited = client.post(f"/api/v1/namespaces/{namespace}/pods", json=pod("audited"))
    assert audited.status_code == 201, audited.text
    assert warnings_of(audited) == []


def test_workloads_are_warned_never_refused(client: httpx.Client, namespace: str) -> None:
    label(client, namespace, enforce="restricted")
    created = client.post(f"/apis/apps/v1/namespaces/{namespace}/deployments", json=deployment("web"))
    assert created.status_code == 201, created.text
    [warning] = warnings_of(created)
    assert warning.startswith('would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false')
    job = {
        "metadata": {"name": "j"},
        "spec": {"template": {"spec": {"restartPolicy": "Never", "hostPID": True, **pod()["spec"]}}},
    }
    created = client.post(f"/apis/batch/v1/namespaces/{namespace}/jobs", json=job)
    assert created.status_code == 201, created.text
    assert "host namespaces (hostPID=true)" in warnings_of(created)[0]
    scaled = client.patch(
        f"/apis/apps/v1/namespaces/{namespace}/deployments/web/scale",
        json={"spec": {"replicas": 1}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert scaled.status_code == 200 and warnings_of(scaled) == []  # subresources are not looked at


def test_invalid_labels_are_refused(client: httpx.Client, namespace: str) -> None:
    created = client.post(
        "/api/v1/namespaces", json={"metadata": {"name": f"{namespace}-bad", "labels": {LABEL + "enforce": "strict"}}}
    )
    assert created.status_code == 422
    status = created.json()
    assert status["message"] == (
        f'Namespace "{namespace}-bad" is invalid: metadata.labels[pod-security.kubernetes.io/enforce]: '
        'Invalid value: "strict": must be one of privileged, baseline, restricted'
    )
    assert status["details"]["causes"] == [
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "strict": must be one of privileged, baseline, restricted',
            "field": "metadata.labels[pod-security.kubernetes.io/enforce]",
        }
    ]
    updated = client.patch(
        f"/api/v1/namespaces/{namespace}",
        json={"metadata": {"labels": {LABEL + "warn-version": "1.30"}}},
        headers={"Content-Type": "application/merge-patch+json"},
    )
    assert updated.status_code == 422
    assert updated.json()["message"] == (
        f'Namespace "{namespace}" is invalid: metadata.labels[pod-security.kubernetes.io/warn-version]: '
        'Invalid value: "1.30": must be "latest" or "v1.x"'
    )


def test_a_stricter_enforce_level_warns_of_existing_pods(client: httpx.Client, namespace: str) -> None:
    pods = f"/api/v1/namespaces/{namespace}/pods"
    for name in ("b", "a", "c"):
        assert client.post(pods, json=pod(name)).status_code == 201
    assert client.post(pods, json=pod("h", hostIPC=True)).status_code == 201
    assert client.post(pods, json=compliant_pod()).status_code == 201
    answer = label(client, namespace, enforce="restricted")
    assert warnings_of(answer) == [
        f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce level "restricted:latest"',
        "a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
        "seccompProfile",
        "h: host namespaces, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, "
        "seccompProfile",
    ]
    assert warnings_of(label(client, namespace, enforce="baseline")) == []  # relaxed: nothing to check
    # updates that change no image are not checked: the labels of a pod the level refuses change
    relabelled = client.patch(
        f"{pods}/a", json={"metadata": {"labels": {"x": "y"}}}, headers={"Content-Type": "application/merge-patch+json"}
    )
    assert relabelled.status_code == 200, relabelled.text
    reimaged = client.patch(
        f"{pods}/h",
        json={"spec": {"containers": [{"name": "c", "image": "nginx:2"}]}},
        headers={"Content-Type": "application/strategic-merge-patch+json"},
    )
    assert reimaged.status_code == 403
    assert reimaged.json()["message"] == (
        'pods "h" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostIPC=true)'
    )


def test_kubectl_run_shows_the_denial_and_the_warning(kubectl: Kubectl, client: httpx.Client, namespace: str) -> None:
    label(client, namespace, enforce="restricted")
    refused = kubectl.run("run", "web", "--image=nginx", "-n", namespace, check=False)
    assert refused.returncode != 0
    reasons = NGINX_RESTRICTED.replace('"c"', '"web"')
    assert (
        f'Error from server (Forbidden): pods "web" is forbidden: violates PodSecurity "restricted:latest": {reasons}'
    ) in refused.stderr
    label(client, namespace, enforce="privileged", warn="baseline")
    warned = kubectl.run("run", "web", "--image=nginx", "--privileged", "-n", namespace)
    assert (
        'Warning: would violate PodSecurity "baseline:latest": '
        'privileged (container "web" must not set securityContext.privileged=true)'
    ) in warned.stderr
    assert "pod/web created" in warned.stdout
    labelled = kubectl.run("label", "namespace", namespace, f"{LABEL}enforce=baseline", "--overwrite")
    assert (
        f'Warning: existing pods in namespace "{namespace}" violate the new PodSecurity enforce level '
        '"baseline:latest"\nWarning: web: privileged\n'
    ) in labelled.stderr


# ---- configured: defaults and exemptions ---------------------------------------------------------
CONFIGURATION = """\
apiVersion: apiserver.config.k8s.io/v1
kind: AdmissionConfiguration
plugins:
- name: PodSecurity
  configuration:
    apiVersion: pod-security.admission.config.k8s.io/v1
    kind: PodSecurityConfiguration
    defaults:
      enforce: baseline
    exemptions:
      usernames: [trusted-ci]
      namespaces: [ops]
      runtimeClasses: [kata]
"""


@pytest.fixture(scope="module")
def configured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[httpx.Client]:
    directory = tmp_path_factory.mktemp("pod-security")
    (directory / "admission.yaml").write_text(CONFIGURATION)
    process = GatewayProcess(directory / "data", f"--admission-control-config-file={directory / 'admission.yaml'}")
    process.start()
    with process.client() as client:
        for name in ("apps", "ops"):
            assert client.post("/api/v1/namespaces", json={"metadata": {"name": name}}).status_code == 201
        runtime_class = {"metadata": {"name": "kata"}, "handler": "kata"}
        assert client.post("/apis/node.k8s.io/v1/runtimeclasses", json=runtime_class).status_code == 201
        yield client
    process.kill()


PRIVILEGED = pod(containers=[{"name": "c", "image": "nginx", "securityContext": {"privileged": True}}])


def test_the_configured_default_level(configured: httpx.Client) -> None:
    refused = configured.post("/api/v1/namespaces/apps/pods", json=PRIVILEGED)
    assert refused.status_code == 403
    assert 'violates PodSecurity "baseline:latest": privileged' in refused.json()["message"]


def test_exempt_users_namespaces_and_runtime_classes(configured: httpx.Client) -> None:
    as_ci = {"Impersonate-User": "trusted-ci", "Impersonate-Group": "system:masters"}
    by_user = configured.post("/api/v1/namespaces/apps/pods", json=pod("by-ci", **PRIVILEGED["spec"]), headers=as_ci)
    assert by_user.status_code == 201, by_user.text
    in_ops = configured.post("/api/v1/namespaces/ops/pods", json=PRIVILEGED)
    assert in_ops.status_code == 201, in_ops.text
    kata = pod("kata", runtimeClassName="kata", containers=PRIVILEGED["spec"]["containers"])
    on_kata = configured.post("/api/v1/namespaces/apps/pods", json=kata)
    assert on_kata.status_code == 201, on_kata.text
    labelled = label(configured, "ops", enforce="restricted", audit="baseline")
    assert warnings_of(labelled) == [
        'namespace "ops" is exempt from Pod Security, and the policy '
        "(enforce=restricted:latest, audit=baseline:latest) will be ignored"
    ]


def test_a_configuration_that_cannot_be_used_stops_the_start(tmp_path: Path) -> None:
    config = tmp_path / "admission.yaml"
    config.write_text(CONFIGURATION.replace("enforce: baseline", "enforce: strict").replace("[trusted-ci]", "[a, a]"))
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "protokube",
            "serve",
            "--data-dir",
            str(tmp_path / "d"),
            f"--admission-control-config-file={config}",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert (
        'PodSecurity invalid: [defaults.enforce: Invalid value: "strict": must be one of privileged, baseline, '
        'restricted, exemptions.usernames[1]: Duplicate value: "a"]'
    ) in result.stderr
