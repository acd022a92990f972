"""The order in which a request meets the filters, outermost first (upstream's DefaultBuildHandlerChain).

    Audit-Id → instrumentation → error funnel → request info → authentication →
    [impersonation → flow control → authorization] → routing

The bracketed slots are empty until their issues fill them (security: impersonation,
authorization; API Priority and Fairness: flow control). Each goes between authentication and
routing, in that order, so that it sees what the URL addresses and who is asking.
"""

from __future__ import annotations

from collections.abc import Sequence

from gateway.auth.authentication import Authentication, Authenticator
from gateway.filters import Handler
from gateway.filters.auditid import AuditId
from gateway.filters.errorfunnel import ErrorFunnel
from gateway.filters.instrumentation import Instrumentation
from gateway.filters.requestinfo import WithRequestInfo
from gateway.metrics import Metrics
from gateway.negotiation.negotiate import Formats


def build_handler_chain(
    router: Handler,
    *,
    formats: Formats,
    metrics: Metrics,
    authenticators: Sequence[Authenticator],
    anonymous: bool,
) -> Handler:
    """Wrap the router in every filter; the last one wrapped runs first."""
    handler = router
    handler = Authentication(handler, authenticators, anonymous=anonymous)
    handler = WithRequestInfo(handler)
    handler = ErrorFunnel(handler, formats)
    handler = Instrumentation(handler, metrics)
    handler = AuditId(handler)
    return handler
