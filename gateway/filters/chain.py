"""The order in which a request meets the filters, outermost first (upstream's DefaultBuildHandlerChain).

    unread body → Audit-Id → instrumentation → error funnel → request info → timeout →
    authentication → impersonation → [flow control] → authorization → routing

The bracketed slot is API Priority and Fairness (or the max-in-flight limit when it is off); it sees
who is asking (after impersonation) before anything is authorized, as upstream's
WithPriorityAndFairness does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from protokube.gateway.auth.authentication import Authentication, Authenticator
from protokube.gateway.auth.authorization import Authorization, Authorizer
from protokube.gateway.auth.impersonation import Impersonation
from protokube.gateway.filters.auditid import AuditId
from protokube.gateway.filters.errorfunnel import ErrorFunnel
from protokube.gateway.filters.instrumentation import Instrumentation
from protokube.gateway.filters.requestinfo import WithRequestInfo
from protokube.gateway.filters.timeout import MIN_REQUEST_TIMEOUT, REQUEST_TIMEOUT, RequestTimeout
from protokube.gateway.filters.unreadbody import UnreadBody
from protokube.gateway.metrics import Metrics
from protokube.gateway.negotiation.negotiate import Formats
from protokube.gateway.request import Handler


def build_handler_chain(
    router: Handler,
    *,
    formats: Formats,
    metrics: Metrics,
    authenticators: Sequence[Authenticator],
    anonymous: bool,
    authorizer: Authorizer,
    flow_control: Callable[[Handler], Handler] | None = None,
    request_timeout: float = REQUEST_TIMEOUT,
    min_request_timeout: float = MIN_REQUEST_TIMEOUT,
) -> Handler:
    """Wrap the router in every filter; the last one wrapped runs first."""
    handler = router
    handler = Authorization(handler, authorizer)
    if flow_control is not None:
        handler = flow_control(handler)
    handler = Impersonation(handler, authorizer)
    handler = Authentication(handler, authenticators, anonymous=anonymous)
    handler = RequestTimeout(handler, request_timeout, min_request_timeout)
    handler = WithRequestInfo(handler)
    handler = ErrorFunnel(handler, formats)
    handler = Instrumentation(handler, metrics)
    handler = AuditId(handler)
    handler = UnreadBody(handler)
    return handler
