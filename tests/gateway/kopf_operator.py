"""A kopf operator with admission webhooks for tests/gateway/test_kopf_webhooks.py, run as
`kopf run --standalone --all-namespaces tests/gateway/kopf_operator.py` with KUBECONFIG set.

Widgets (example.com/v1) of a size over 100 are refused by a validating webhook; a mutating one
gives a widget without a color the color blue (and records, in an annotation, the namespace of
the object it was shown). kopf serves both on its own HTTPS webhook server
(``KOPF_WEBHOOK_PORT`` on 127.0.0.1, with the certificate and key in ``KOPF_WEBHOOK_CERTS``, signed
by the CA there, which is the caBundle kopf puts in the configurations) and, being the manager of
"auto.kopf.dev", writes the ValidatingWebhookConfiguration and MutatingWebhookConfiguration of that
name itself, one webhook per handler, named ``<handler id>.auto.kopf.dev``."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import kopf

CERTS = Path(os.environ.get("KOPF_WEBHOOK_CERTS", "."))


@kopf.on.startup()
def configure(settings: kopf.OperatorSettings, **_: Any) -> None:
    settings.admission.server = kopf.WebhookServer(
        addr="127.0.0.1",
        port=int(os.environ["KOPF_WEBHOOK_PORT"]),
        host="127.0.0.1",
        certfile=CERTS / "tls.crt",
        pkeyfile=CERTS / "tls.key",
        cafile=CERTS / "ca.crt",
    )
    settings.admission.managed = "auto.kopf.dev"


@kopf.on.validate("example.com", "v1", "widgets", id="size-limit")
def size_limit(spec: kopf.Spec, **_: Any) -> None:
    if spec.get("size", 0) > 100:
        raise kopf.AdmissionError("size must be at most 100", code=422)


@kopf.on.mutate("example.com", "v1", "widgets", id="default-color")
def default_color(spec: kopf.Spec, patch: kopf.Patch, namespace: str | None, **_: Any) -> None:
    if "color" not in spec:
        patch.spec["color"] = "blue"
    # the namespace of the object under review, as kopf sees it (upstream sets it before admission)
    patch.metadata.annotations["example.com/mutated-in"] = namespace or ""
