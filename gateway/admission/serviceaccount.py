"""The ServiceAccount admission plugin (plugin/pkg/admission/serviceaccount), on pods.

When a pod is created (not a mirror pod):

- ``spec.serviceAccountName`` defaults to ``default``, and the account must exist: 403 ``error
  looking up service account ns/name: serviceaccount "name" not found`` otherwise. The ``default``
  account is looked for again for a moment, as upstream does: the serviceaccount controller makes
  it just after its namespace;
- unless ``automountServiceAccountToken`` is false (the pod's, else the account's), the pod gets
  the projected volume ``kube-api-access-<5 random characters>`` (a bound token, the cluster CA
  from the ConfigMap ``kube-root-ca.crt``, the namespace), mounted read-only at
  /var/run/secrets/kubernetes.io/serviceaccount in every init container and container that has no
  mount there (ephemeral containers come later and mount nothing); a volume named
  ``kube-api-access-…`` already there is the one mounted;
- a pod without ``imagePullSecrets`` takes the account's.

Then, and in the validating phase, the pod is checked: a mirror pod may reference no service
account, secret or token projection; another must name an existing account, and an account
annotated ``kubernetes.io/enforce-mountable-secrets: "true"`` allows only the secrets it lists
(volumes, env, envFrom) and the image pull secrets it lists. Ephemeral containers added through
pods/ephemeralcontainers are held to the same secrets (upstream answers that refusal with a 500,
as its error is not a Status; protokube answers 403, as for the pod's other containers).
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Iterator

from google.protobuf.message import Message

from protokube.gateway.objects.view import ObjectView
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes, forbidden
from protokube.gateway.registry.store import generate_name
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import Resource

POD = "k8s.io.api.core.v1.Pod"
EPHEMERAL_CONTAINERS = "ephemeralcontainers"
DEFAULT_ACCOUNT = "default"
MIRROR_ANNOTATION = "kubernetes.io/config.mirror"
ENFORCE_MOUNTABLE_SECRETS = "kubernetes.io/enforce-mountable-secrets"
MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
VOLUME_PREFIX = "kube-api-access-"
TOKEN_EXPIRATION_SECONDS = 3607  # upstream's warn-only bound token lifetime
PROJECTED_MODE = 0o644
ROOT_CA_CONFIGMAP, ROOT_CA_KEY = "kube-root-ca.crt", "ca.crt"
# How often the default account is looked for before the pod is refused, and how long apart.
DEFAULT_ATTEMPTS = 10
RETRY_INTERVAL = (0.1, 0.2)
GO_TRUE = frozenset({"1", "t", "T", "TRUE", "true", "True"})  # what Go's strconv.ParseBool takes for true
# Volume sources naming a secret, and the field that names it (upstream's VisitPodSecretNames).
SECRET_NAME_FIELDS = {
    "azureFile": "secretName",
    "cephfs": "secretRef",
    "cinder": "secretRef",
    "flexVolume": "secretRef",
    "rbd": "secretRef",
    "secret": "secretName",
    "scaleIO": "secretRef",
    "iscsi": "secretRef",
    "storageos": "secretRef",
    "csi": "nodePublishSecretRef",
}


class ServiceAccount:
    def __init__(self, accounts: Cacher) -> None:
        self.accounts = accounts

    @staticmethod
    def handles(resource: Resource) -> bool:
        """Pods only."""
        return resource.message == POD

    async def admit(self, attributes: Attributes) -> None:
        if attributes.operation != CREATE or not _is_pod(attributes):
            return
        pod = attributes.obj
        assert pod is not None
        if MIRROR_ANNOTATION not in pod.metadata.annotations:
            spec = pod.spec
            if not spec.serviceAccountName:
                spec.serviceAccountName = DEFAULT_ACCOUNT
            account = await self._account(attributes, spec.serviceAccountName)
            if _automount(spec, account):
                mount_token(spec)
            if not spec.imagePullSecrets:
                spec.imagePullSecrets.extend(account.imagePullSecrets)
        await self.validate(attributes)

    async def validate(self, attributes: Attributes) -> None:
        if not _is_pod(attributes):
            return
        pod = attributes.obj
        assert pod is not None
        if attributes.operation == UPDATE and attributes.subresource == EPHEMERAL_CONTAINERS:
            account = await self._named_account(attributes)
            if _enforces_mountable_secrets(account):
                _refuse(attributes, _ephemeral_secret_problem(account, pod.spec))
        elif attributes.operation == CREATE and not attributes.subresource:
            if MIRROR_ANNOTATION in pod.metadata.annotations:
                _refuse(attributes, _mirror_pod_problem(pod.spec))
                return
            account = await self._named_account(attributes)
            if _enforces_mountable_secrets(account):
                _refuse(attributes, _secret_problem(account, pod.spec))

    async def _named_account(self, attributes: Attributes) -> Message:
        """The account the pod names (it must name one)."""
        pod = attributes.obj
        assert pod is not None
        name = pod.spec.serviceAccountName
        if not name:
            raise forbidden(
                attributes, f"no service account specified for pod {attributes.namespace}/{pod.metadata.name}"
            )
        return await self._account(attributes, name)

    async def _account(self, attributes: Attributes, name: str) -> Message:
        """The account, from the watch cache or storage; 403 when there is none."""
        namespace = attributes.namespace
        view = self.accounts.cached(namespace, name) or await self._look_up(namespace, name)
        if view is None:
            reason = f'error looking up service account {namespace}/{name}: serviceaccount "{name}" not found'
            raise forbidden(attributes, reason)
        return view.obj

    async def _look_up(self, namespace: str, name: str) -> ObjectView | None:
        """Storage asked directly; for the default account, a few times (it may be being made)."""
        attempts = DEFAULT_ATTEMPTS if name == DEFAULT_ACCOUNT else 1
        interval = random.uniform(*RETRY_INTERVAL)
        for attempt in range(attempts):
            if attempt:
                await asyncio.sleep(interval)
            view = await self.accounts.get_latest(namespace, name)
            if view is not None:
                return view
        return None


def _is_pod(attributes: Attributes) -> bool:
    return (
        attributes.obj is not None
        and attributes.resource.message == POD
        and attributes.subresource in ("", EPHEMERAL_CONTAINERS)
    )


def _refuse(attributes: Attributes, problem: str) -> None:
    if problem:
        raise forbidden(attributes, problem)


def _automount(spec: Message, account: Message) -> bool:
    """The pod's choice, else the account's, else yes."""
    for source in (spec, account):
        if source.HasField("automountServiceAccountToken"):
            return bool(source.automountServiceAccountToken)
    return True


def mount_token(spec: Message) -> None:
    """The token volume (the pod's own ``kube-api-access-…`` one, else a new one) mounted in every
    init container and container without a mount at MOUNT_PATH."""
    existing = next((v.name for v in spec.volumes if v.name.startswith(VOLUME_PREFIX)), "")
    name = existing or generate_name(VOLUME_PREFIX)
    mounted = False
    for container in [*spec.initContainers, *spec.containers]:
        if not any(mount.mountPath == MOUNT_PATH for mount in container.volumeMounts):
            container.volumeMounts.add(name=name, readOnly=True, mountPath=MOUNT_PATH)
            mounted = True
    if mounted and not existing:
        _add_token_volume(spec, name)


def _add_token_volume(spec: Message, name: str) -> None:
    projected = spec.volumes.add(name=name).volumeSource.projected
    projected.defaultMode = PROJECTED_MODE
    token = projected.sources.add().serviceAccountToken
    token.path = "token"
    token.expirationSeconds = TOKEN_EXPIRATION_SECONDS
    configmap = projected.sources.add().configMap
    configmap.localObjectReference.name = ROOT_CA_CONFIGMAP
    configmap.items.add(key=ROOT_CA_KEY, path=ROOT_CA_KEY)
    namespace_file = projected.sources.add().downwardAPI.items.add(path="namespace")
    namespace_file.fieldRef.apiVersion = "v1"
    namespace_file.fieldRef.fieldPath = "metadata.namespace"


def _enforces_mountable_secrets(account: Message) -> bool:
    return account.metadata.annotations.get(ENFORCE_MOUNTABLE_SECRETS, "") in GO_TRUE


def _env_secret_problem(kind: str, container: Message, mountable: set[str], account: str) -> str:
    """The first secret a container's env or envFrom uses that the account does not list."""
    for env in container.env:
        if env.valueFrom.HasField("secretKeyRef"):
            secret = env.valueFrom.secretKeyRef.localObjectReference.name
            if secret not in mountable:
                return (
                    f'{kind} {container.name} with envVar {env.name} referencing secret.secretName="{secret}" '
                    f"is not allowed because service account {account} does not reference that secret"
                )
    for env_from in container.envFrom:
        if env_from.HasField("secretRef"):
            secret = env_from.secretRef.localObjectReference.name
            if secret not in mountable:
                return (
                    f'{kind} {container.name} with envFrom referencing secret.secretName="{secret}" '
                    f"is not allowed because service account {account} does not reference that secret"
                )
    return ""


def _secret_problem(account: Message, spec: Message) -> str:
    """What the pod uses that an account enforcing mountable secrets does not allow ("" if none)."""
    name = account.metadata.name
    mountable = {secret.name for secret in account.secrets}
    for volume in spec.volumes:
        source = volume.volumeSource
        if source.HasField("secret") and source.secret.secretName not in mountable:
            return (
                f'volume with secret.secretName="{source.secret.secretName}" is not allowed because '
                f"service account {name} does not reference that secret"
            )
    containers = [("init container", c) for c in spec.initContainers] + [("container", c) for c in spec.containers]
    for kind, container in containers:
        problem = _env_secret_problem(kind, container, mountable, name)
        if problem:
            return problem
    pull_secrets = {secret.name for secret in account.imagePullSecrets}
    for index, reference in enumerate(spec.imagePullSecrets):
        if reference.name not in pull_secrets:
            return (
                f'imagePullSecrets[{index}].name="{reference.name}" is not allowed because service account '
                f"{name} does not reference that imagePullSecret"
            )
    return ""


def _ephemeral_secret_problem(account: Message, spec: Message) -> str:
    mountable = {secret.name for secret in account.secrets}
    for container in spec.ephemeralContainers:
        problem = _env_secret_problem(
            "ephemeral container", container.ephemeralContainerCommon, mountable, account.metadata.name
        )
        if problem:
            return problem
    return ""


def _mirror_pod_problem(spec: Message) -> str:
    if spec.serviceAccountName:
        return "a mirror pod may not reference service accounts"
    if next(_secret_names(spec), None) is not None:
        return "a mirror pod may not reference secrets"
    for volume in spec.volumes:
        if any(source.HasField("serviceAccountToken") for source in volume.volumeSource.projected.sources):
            return "a mirror pod may not use ServiceAccountToken volume projections"
    return ""


def _secret_names(spec: Message) -> Iterator[str]:
    """Every secret the pod references (upstream's VisitPodSecretNames over all containers)."""
    for reference in spec.imagePullSecrets:
        yield reference.name
    containers = [
        *spec.initContainers,
        *spec.containers,
        *(c.ephemeralContainerCommon for c in spec.ephemeralContainers),
    ]
    for container in containers:
        for env_from in container.envFrom:
            if env_from.HasField("secretRef"):
                yield env_from.secretRef.localObjectReference.name
        for env in container.env:
            if env.valueFrom.HasField("secretKeyRef"):
                yield env.valueFrom.secretKeyRef.localObjectReference.name
    for volume in spec.volumes:
        source = volume.volumeSource
        for kind, field in SECRET_NAME_FIELDS.items():
            if not source.HasField(kind):
                continue
            volume_source = getattr(source, kind)
            if field == "secretName":
                yield volume_source.secretName
            elif volume_source.HasField(field):
                yield getattr(volume_source, field).name
        for projection in source.projected.sources:
            if projection.HasField("secret"):
                yield projection.secret.localObjectReference.name
