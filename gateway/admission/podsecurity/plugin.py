"""The PodSecurity admission plugin (k8s.io/pod-security-admission/admission, as kube-apiserver 1.32
runs it): the namespace's policy applied to pods and to the pod templates of workloads.

- Pods (create, and updates that change a container's image or add one): enforce refuses with
  ``violates PodSecurity "<level>:<version>": <reasons (details)>``; when allowed, the warn level's
  violations come back as a ``would violate PodSecurity ...`` warning. Status and the other
  subresources that do not carry a new spec are not looked at.
- Workloads with a pod template (Deployments, ReplicaSets, StatefulSets, DaemonSets, Jobs,
  CronJobs, ReplicationControllers, PodTemplates): warnings only, never refused.
- Namespaces: labels that do not parse are refused (422) on create, and on update when they
  changed; an update that makes enforce stricter warns of the pods already there that the new
  level would refuse.
- Audit: upstream records violations in the audit log; protokube has no audit log, so they are
  logged (debug).

Exempt usernames, namespaces and runtime classes come from the configuration (configuration.py).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from google.protobuf.message import Message

from protokube.gateway import errors
from protokube.gateway.admission import warnings
from protokube.gateway.admission.podsecurity.checks import Forbidden, details, evaluate, reasons
from protokube.gateway.admission.podsecurity.configuration import PodSecurityConfiguration
from protokube.gateway.admission.podsecurity.levels import (
    PRIVILEGED,
    LevelVersion,
    Policy,
    compare_levels,
    label,
    policy_from_labels,
)
from protokube.gateway.errors import FieldError
from protokube.gateway.params import ListOptions
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes, forbidden
from protokube.gateway.selectors import EVERYTHING, NO_FIELDS, Filter
from protokube.gateway.storage.backend import StorageError
from protokube.gateway.watchcache.cacher import Cacher
from protokube.schema.registry import Resource

log = logging.getLogger(__name__)

NAMESPACES = ("", "namespaces")
PODS = ("", "pods")
# Pod subresources whose writes carry no new spec to look at (any other one is a pod's).
IGNORED_POD_SUBRESOURCES = frozenset({"exec", "attach", "binding", "eviction", "log", "portforward", "proxy", "status"})
# Checking the pods of a namespace whose enforce level gets stricter: at most so many, so long.
MAX_PODS_TO_CHECK = 3000
POD_CHECK_SECONDS = 1.0
PODS_PER_TURN = 100  # pods checked between turns of the event loop
LIST_FAILED = "failed to list pods while checking new PodSecurity enforce level"


@dataclass(frozen=True, slots=True)
class PodShape:
    """What the checks look at: a pod's, or a pod template's, metadata and spec."""

    metadata: Message
    spec: Message


def _template(template: Message) -> PodShape:
    return PodShape(template.metadata, template.spec)


def _optional_template(owner: Message) -> PodShape | None:
    return _template(owner.template) if owner.HasField("template") else None


# The workloads with a pod template, by (group, resource): where their template is.
TEMPLATES: dict[tuple[str, str], Callable[[Message], PodShape | None]] = {
    ("", "podtemplates"): lambda obj: _template(obj.template),
    ("", "replicationcontrollers"): lambda obj: _optional_template(obj.spec),
    ("apps", "replicasets"): lambda obj: _template(obj.spec.template),
    ("apps", "deployments"): lambda obj: _template(obj.spec.template),
    ("apps", "statefulsets"): lambda obj: _template(obj.spec.template),
    ("apps", "daemonsets"): lambda obj: _template(obj.spec.template),
    ("batch", "jobs"): lambda obj: _template(obj.spec.template),
    ("batch", "cronjobs"): lambda obj: _template(obj.spec.jobTemplate.spec.template),
}


class PodSecurity:
    """``pods``: the pods' watch cache (to check a namespace's pods when its level gets stricter)."""

    def __init__(self, configuration: PodSecurityConfiguration, namespaces: Cacher, pods: Cacher | None) -> None:
        self.configuration = configuration
        self.namespaces = namespaces
        self.pods = pods

    @staticmethod
    def handles(resource: Resource) -> bool:
        """Namespaces, pods, and the kinds with a pod template (warnings only)."""
        key = (resource.group, resource.plural)
        return key in (NAMESPACES, PODS) or key in TEMPLATES

    async def validate(self, attributes: Attributes) -> None:
        if attributes.operation not in (CREATE, UPDATE) or attributes.obj is None:
            return
        resource = (attributes.resource.group, attributes.resource.plural)
        if resource == NAMESPACES:
            await self._namespace(attributes)
        elif resource == PODS:
            await self._pod(attributes)
        elif resource in TEMPLATES:
            await self._workload(attributes, TEMPLATES[resource])

    # ---- namespaces ------------------------------------------------------------------------------
    async def _namespace(self, attributes: Attributes) -> None:
        if attributes.subresource:
            return
        namespace = attributes.obj
        assert namespace is not None
        name = namespace.metadata.name  # whether it is exempt: by its name (upstream's request namespace on updates)
        policy, problems = self._policy(namespace.metadata.labels)
        if attributes.operation == CREATE:
            if problems:
                raise errors.invalid("", "Namespace", name, problems)
            if name in self.configuration.namespaces:
                self._warn_exempt(name, policy, namespace.metadata.labels)
            return
        assert attributes.old is not None
        old_policy, old_problems = self._policy(attributes.old.metadata.labels)
        if problems and problems != old_problems:
            raise errors.invalid("", "Namespace", name, problems)
        new, old = policy.enforce, old_policy.enforce
        if new == old or new.level == PRIVILEGED:
            return
        if new.version == old.version and compare_levels(new.level, old.level) < 1:
            return  # relaxed
        if name in self.configuration.namespaces:
            self._warn_exempt(name, policy, namespace.metadata.labels)
            return
        for warning in await self._existing_pods(name, new):
            warnings.add(warning)

    def _warn_exempt(self, name: str, policy: Policy, labels: dict[str, str]) -> None:
        """A policy set on an exempt namespace is ignored: say so (the modes set, not privileged)."""
        if policy.fully_privileged() or policy.equivalent(self.configuration.defaults):
            return
        modes = [
            f"{mode}={getattr(policy, mode)}"
            for mode in ("enforce", "audit", "warn")
            if getattr(policy, mode).level != PRIVILEGED and (label(mode) in labels or label(mode, True) in labels)
        ]
        warnings.add(
            f'namespace "{name}" is exempt from Pod Security, and the policy ({", ".join(modes)}) will be ignored'
        )

    async def _existing_pods(self, namespace: str, enforce: LevelVersion) -> list[str]:
        """upstream's EvaluatePodsInNamespace: the pods the new enforce level would refuse, one
        warning per distinct set of reasons naming the first pod (by name) and how many others."""
        if self.pods is None:
            return []
        try:
            listed = await self.pods.list(Filter(namespace, EVERYTHING, NO_FIELDS), ListOptions())
        except (errors.StatusError, StorageError) as err:
            log.warning("PodSecurity: listing the pods of namespace %s: %s", namespace, err)
            return [LIST_FAILED]
        pods = self._prioritized(view.obj for view in listed.items)
        total = len(pods)
        pods = pods[:MAX_PODS_TO_CHECK]
        checked = len(pods)
        deadline = time.monotonic() + POD_CHECK_SECONDS
        found: dict[str, tuple[str, int]] = {}  # reasons -> (the first pod by name, how many pods)
        for index, pod in enumerate(pods):
            broken = evaluate(enforce, pod.metadata, pod.spec)
            if broken:
                text = reasons(broken)
                first, count = found.get(text, (pod.metadata.name, 0))
                found[text] = (min(first, pod.metadata.name), count + 1)
            if time.monotonic() > deadline:
                checked = index + 1
                break
            if index % PODS_PER_TURN == PODS_PER_TURN - 1:
                await asyncio.sleep(0)  # other requests' turn
        said = []
        if checked < total:
            said.append(
                f"new PodSecurity enforce level only checked against the first {checked} of {total} existing pods"
            )
        if found:
            said.append(
                f'existing pods in namespace "{namespace}" violate the new PodSecurity enforce level "{enforce}"'
            )
        return said + sorted(_naming(first, count, text) for text, (first, count) in found.items())

    def _prioritized(self, pods: Iterable[Message]) -> list[Message]:
        """The pods to check, not exempt by runtime class: one per controller first, then the rest."""
        first, rest, controllers = [], [], set()
        for pod in pods:
            if self._exempt_runtime_class(pod.spec):
                continue
            controller = next((ref.uid for ref in pod.metadata.ownerReferences if ref.controller), None)
            if controller is not None and controller in controllers:
                rest.append(pod)
                continue
            if controller is not None:
                controllers.add(controller)
            first.append(pod)
        return first + rest

    # ---- pods and workloads ----------------------------------------------------------------------
    async def _pod(self, attributes: Attributes) -> None:
        if attributes.subresource in IGNORED_POD_SUBRESOURCES or self._exempt(attributes):
            return
        policy, problems = await self._namespace_policy(attributes.namespace)
        if not problems and policy.fully_privileged():
            return
        pod = attributes.obj
        assert pod is not None
        if attributes.operation == UPDATE and attributes.old is not None and not _significant(pod, attributes.old):
            return
        self._evaluate(attributes, policy, problems, PodShape(pod.metadata, pod.spec), enforce=True)

    async def _workload(self, attributes: Attributes, template_of: Callable[[Message], PodShape | None]) -> None:
        if attributes.subresource or self._exempt(attributes):
            return
        try:
            policy, problems = await self._namespace_policy(attributes.namespace)
        except errors.StatusError as err:  # never refused: upstream records it and lets it be
            log.warning("PodSecurity: %s", err.status.message)
            return
        if not problems and policy.warn.level == PRIVILEGED and policy.audit.level == PRIVILEGED:
            return
        shape = template_of(attributes.obj)  # type: ignore[arg-type]
        if shape is not None:
            self._evaluate(attributes, policy, problems, shape, enforce=False)

    def _exempt(self, attributes: Attributes) -> bool:
        exempt = self.configuration
        return (bool(attributes.namespace) and attributes.namespace in exempt.namespaces) or (
            bool(attributes.user.name) and attributes.user.name in exempt.usernames
        )

    def _exempt_runtime_class(self, spec: Message) -> bool:
        return bool(spec.runtimeClassName) and spec.runtimeClassName in self.configuration.runtime_classes

    def _policy(self, labels: dict[str, str]) -> tuple[Policy, list[FieldError]]:
        return policy_from_labels(labels, self.configuration.defaults)

    async def _namespace_policy(self, name: str) -> tuple[Policy, list[FieldError]]:
        view = self.namespaces.cached("", name) or await self.namespaces.get_latest("", name)
        if view is None:
            raise errors.internal(f'failed to lookup namespace "{name}"')
        return self._policy(view.obj.metadata.labels)

    def _evaluate(
        self, attributes: Attributes, policy: Policy, problems: list[FieldError], shape: PodShape, *, enforce: bool
    ) -> None:
        """Refuse what breaks the enforce level (``enforce``: pods only); else warn of what breaks the
        warn level. Results are shared between modes of the same level and version."""
        if self._exempt_runtime_class(shape.spec):
            return
        if problems:
            log.debug("PodSecurity: namespace %s: failed to parse policy: %s", attributes.namespace, problems)
        results: dict[LevelVersion, list[Forbidden]] = {}

        def broken(level_version: LevelVersion) -> list[Forbidden]:
            if level_version not in results:
                results[level_version] = evaluate(level_version, shape.metadata, shape.spec)
            return results[level_version]

        refused = enforce and broken(policy.enforce)
        if log.isEnabledFor(logging.DEBUG) and broken(policy.audit):
            log.debug(
                'PodSecurity audit: %s %s/%s would violate PodSecurity "%s": %s',
                attributes.resource.plural,
                attributes.namespace,
                attributes.name,
                policy.audit,
                details(broken(policy.audit)),
            )
        if refused:
            raise forbidden(attributes, f'violates PodSecurity "{policy.enforce}": {details(broken(policy.enforce))}')
        if broken(policy.warn):
            warnings.add(f'would violate PodSecurity "{policy.warn}": {details(broken(policy.warn))}')


def _naming(first: str, count: int, text: str) -> str:
    """A namespace check's warning prefixed with the pods it is about."""
    if count == 1:
        return f"{first}: {text}"
    return f"{first} (and {count - 1} other {'pod' if count == 2 else 'pods'}): {text}"


def _significant(pod: Message, old: Message) -> bool:
    """An update worth checking: containers or init containers added, removed or given another
    image, or an ephemeral container added or changed in image (upstream's isSignificantPodUpdate)."""
    spec, old_spec = pod.spec, old.spec
    for field in ("containers", "initContainers"):
        new_list, old_list = getattr(spec, field), getattr(old_spec, field)
        if len(new_list) != len(old_list) or any(a.image != b.image for a, b in zip(new_list, old_list, strict=True)):
            return True
    old_images = {
        e.ephemeralContainerCommon.name: e.ephemeralContainerCommon.image for e in old_spec.ephemeralContainers
    }
    return any(
        old_images.get(e.ephemeralContainerCommon.name) != e.ephemeralContainerCommon.image
        for e in spec.ephemeralContainers
    )
