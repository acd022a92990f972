"""admissionregistration.k8s.io/v1 defaults: k8s.io/kubernetes
pkg/apis/admissionregistration/v1/defaults.go (1.32)."""

from __future__ import annotations

from google.protobuf.message import Message

from protokube.gateway.registry.defaults.base import defaulter
from protokube.gateway.registry.defaults.values import default, default_message

ADMISSION = "k8s.io.api.admissionregistration.v1"
WEBHOOK_TIMEOUT_SECONDS = 10


def _match(obj: Message) -> None:
    """What webhooks and policies' match resources share: Equivalent, and empty selectors (all)."""
    default(obj, "matchPolicy", "Equivalent")
    default_message(obj, "namespaceSelector")
    default_message(obj, "objectSelector")


@defaulter(f"{ADMISSION}.ValidatingWebhook")
def validating_webhook(obj: Message) -> None:
    default(obj, "failurePolicy", "Fail")
    _match(obj)
    default(obj, "timeoutSeconds", WEBHOOK_TIMEOUT_SECONDS)


@defaulter(f"{ADMISSION}.MutatingWebhook")
def mutating_webhook(obj: Message) -> None:
    validating_webhook(obj)
    default(obj, "reinvocationPolicy", "Never")


@defaulter(f"{ADMISSION}.Rule")
def rule(obj: Message) -> None:
    default(obj, "scope", "*")


@defaulter(f"{ADMISSION}.ServiceReference")
def service_reference(obj: Message) -> None:
    default(obj, "port", 443)


@defaulter(f"{ADMISSION}.ValidatingAdmissionPolicySpec")
def validating_admission_policy_spec(obj: Message) -> None:
    default(obj, "failurePolicy", "Fail")


defaulter(f"{ADMISSION}.MatchResources")(_match)
