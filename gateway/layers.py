"""The gateway's layers, bottom-up: the one place their order is written.

Each entry names a folder or top module of gateway/ (``protokube.gateway.<unit>``). A module may
import only from its own unit and from units listed before it, so the imports point down the
table and never back up: the rule upstream's import-boss keeps for k8s.io/apiserver.
tests/tools/test_layers.py reads every module's imports (those under ``if TYPE_CHECKING`` and
those inside functions too) and fails on one that points up; none is allowed. What a lower layer
needs from a higher one is handed down by the composition root (app.py): the validation of kinds
whose rules compile CEL, for instance, lives with admission/, apiextensions/ and flowcontrol/, and
app.py registers it into registry/validation's table. A new folder or top module is placed here first.
"""

from __future__ import annotations

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    # Errors (metav1.Status), string syntax, random UUIDs, the user a request is made by, the event loop's lanes
    # and deadlines, request attributes, patch formats, managed fields, selectors: nothing of the gateway's own
    # below.
    (
        "foundation",
        (
            "errors",
            "syntax",
            "uuids",
            "security",
            "user",
            "loophistogram",
            "lanes",
            "deadlines",
            "requestinfo",
            "patch",
            "fieldmanager",
            "selectors",
        ),
    ),
    # An object on the wire and in storage: its encodings, conversion between versions, the codec a
    # resource is given, table printing.
    ("objects", ("objects", "conversion", "codecs", "printing")),
    # One request: its parsed form, query parameters, content negotiation, responses, its metrics.
    ("request", ("request", "params", "negotiation", "responses", "health", "metrics", "debugflags")),
    # Keys, the guaranteed-update loop and the backends; the watch cache over them and the Cacher
    # reading through it (upstream's storage/cacher); webhook calls.
    ("storage", ("storage", "watchcache", "webhooks")),
    # The generic store with its strategies, validation and defaults; then the services it is
    # handed (authentication, authorization, CEL) and admission, which reads objects through it.
    ("registry", ("registry", "auth", "cel", "admission")),
    # The verbs' handlers over a resource's typed roles, their scope and response representation.
    ("handlers", ("scope", "representation", "handlers", "openapi")),
    # Control loops over stored objects, and the run-time resources of CustomResourceDefinitions.
    ("controllers", ("controllers", "apiextensions")),
    # The HTTP server, the filter chain, routes and routing, API Priority and Fairness over them.
    (
        "serving",
        ("serving", "filters", "routing", "routes", "flowcontrol", "asgi", "websocket", "wireexplorer"),
    ),
    # The composition root and the command line.
    ("app", ("app", "embedded", "runtimeconfig", "workers", "cli")),
)


def order() -> tuple[str, ...]:
    """Every unit, bottom-up."""
    return tuple(unit for _, units in LAYERS for unit in units)
