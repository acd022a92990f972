"""The webhooks of the stored Mutating/ValidatingWebhookConfigurations, read from their watch
cache and compiled again only when a configuration changed (upstream's configuration managers,
fed by informers). Configurations in name order, webhooks in their order within each."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from google.protobuf.message import Message

from protokube.gateway.admission.webhook.conditions import Condition, compiled
from protokube.gateway.admission.webhook.rules import Rule
from protokube.gateway.selectors import LabelSelector, Requirement
from protokube.gateway.watchcache.cacher import Cacher
from protokube.gateway.webhooks.client import ClientConfig, Service

MUTATING = ("admissionregistration.k8s.io", "v1", "mutatingwebhookconfigurations")
VALIDATING = ("admissionregistration.k8s.io", "v1", "validatingwebhookconfigurations")
_OPERATORS = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}


@dataclass(frozen=True, slots=True)
class Webhook:
    uid: str  # unique among the server's webhooks: configuration and position
    name: str
    configuration: str
    rules: tuple[Rule, ...]
    equivalent: bool  # matchPolicy Equivalent (the default) rather than Exact
    namespace_selector: LabelSelector
    object_selector: LabelSelector
    match_conditions: tuple[Condition, ...]
    client: ClientConfig
    ignore_failures: bool  # failurePolicy Ignore (Fail is the default)
    side_effects: str
    timeout: float  # seconds
    review_version: str  # the first of admissionReviewVersions protokube speaks: v1 or v1beta1
    reinvoke: bool  # reinvocationPolicy IfNeeded (mutating webhooks)


def label_selector(selector: Message) -> LabelSelector:
    """A metav1.LabelSelector message as a selector (validation made sure it is well formed)."""
    requirements = [Requirement(key, "=", (value,)) for key, value in sorted(selector.matchLabels.items())]
    for expression in selector.matchExpressions:
        operator = _OPERATORS.get(expression.operator, "in")
        requirements.append(Requirement(expression.key, operator, tuple(expression.values)))
    return LabelSelector(tuple(requirements))


def _client(config: Message) -> ClientConfig:
    service = None
    if config.HasField("service"):
        ref = config.service
        port = ref.port if ref.HasField("port") else 443
        service = Service(ref.namespace, ref.name, ref.path, port)
    return ClientConfig(config.url, service, bytes(config.caBundle))


def _review_version(versions: list[str]) -> str:
    return next((v for v in versions if v in ("v1", "v1beta1")), "")


def compile_webhook(configuration: str, index: int, hook: Message, mutating: bool) -> Webhook:
    return Webhook(
        uid=f"{configuration}/{index}",
        name=hook.name,
        configuration=configuration,
        rules=tuple(Rule.of(rule) for rule in hook.rules),
        equivalent=(hook.matchPolicy or "Equivalent") == "Equivalent",
        namespace_selector=label_selector(hook.namespaceSelector),
        object_selector=label_selector(hook.objectSelector),
        match_conditions=compiled(hook.matchConditions),
        client=_client(hook.clientConfig),
        ignore_failures=hook.failurePolicy == "Ignore",
        side_effects=hook.sideEffects,
        timeout=float(hook.timeoutSeconds if hook.HasField("timeoutSeconds") else 10),
        review_version=_review_version(list(hook.admissionReviewVersions)),
        reinvoke=mutating and hook.reinvocationPolicy == "IfNeeded",
    )


class Configurations:
    """The webhooks of one configuration resource (``cacher``: its watch cache)."""

    def __init__(self, cacher: Cacher, mutating: bool) -> None:
        self.cacher = cacher
        self.mutating = mutating
        self._seen = -1
        self._webhooks: tuple[Webhook, ...] = ()

    async def webhooks(self) -> tuple[Webhook, ...]:
        """The webhooks; from storage while the watch cache is not ready (the server's own writes
        come before its caches are)."""
        cache = self.cacher.cache
        if not cache.ready.is_set():
            store = self.cacher.store
            listed = await store.page("", "", 0, 0)
            return tuple(self._compile(store.view(kv).obj for kv in listed.kvs))
        if cache.last_change != self._seen:
            self._seen = cache.last_change
            self._webhooks = tuple(self._compile(entry.view.obj for entry in cache.store.values()))
        return self._webhooks

    def _compile(self, configurations: Iterable[Message]) -> list[Webhook]:
        """The webhooks of ``configurations`` (in name order)."""
        found: list[Webhook] = []
        for obj in configurations:
            name = obj.metadata.name
            found += [compile_webhook(name, i, hook, self.mutating) for i, hook in enumerate(obj.Webhooks)]
        return found
