"""Every error ends here and leaves as a metav1.Status (upstream's panic recovery and error writers).
The warnings admission adds (gateway/admission/warnings.py) leave with the answer, whatever it is.

A StatusError is the client's answer as it stands; a storage failure is a 500 naming what failed; any
other exception is logged with the request id and answered with a 500 that carries no trace.
"""

from __future__ import annotations

import logging

from protokube.gateway import errors
from protokube.gateway.admission import warnings
from protokube.gateway.errors import StatusError
from protokube.gateway.negotiation import negotiate
from protokube.gateway.negotiation.encoders import JSONEncoder
from protokube.gateway.negotiation.negotiate import Encoder, Formats
from protokube.gateway.request import ApiRequest, Handler, Response
from protokube.gateway.responses import add_warnings, status_response
from protokube.gateway.storage.backend import NoSpace, PlainFailure, RequestTooLarge, StorageError, Unavailable

log = logging.getLogger("protokube.gateway")


def storage_error(err: StorageError) -> errors.StatusError:
    """How upstream answers a storage failure: too large a write is the client's (413); storage out
    of reach is the server's, said as etcd says it (503); no space is etcd's error as it is (500,
    no reason: ErrorToAPIStatus of a plain error); anything else is a 500."""
    if isinstance(err, RequestTooLarge):
        return errors.request_entity_too_large(str(err))
    if isinstance(err, Unavailable):
        return errors.service_unavailable(str(err))
    if isinstance(err, NoSpace | PlainFailure):  # not an API status upstream either: 500, its words
        return errors.not_a_status(str(err))
    return errors.internal(str(err))


class ErrorFunnel:
    def __init__(self, next_handler: Handler, formats: Formats) -> None:
        self.next = next_handler
        self.formats = formats

    def _encoder(self, request: ApiRequest) -> Encoder:
        """The negotiated encoder when negotiation itself succeeds, else JSON."""
        try:
            return negotiate.response_encoder(request.header("Accept"), False, self.formats)
        except StatusError:
            return JSONEncoder()

    async def __call__(self, request: ApiRequest) -> Response:
        collected, token = warnings.collect()
        try:
            response = await self.next(request)
        except StatusError as err:
            response = self._status(request, err)
        except StorageError as failure:  # a name of its own: compiled, a name has one type
            log.warning("request %s: storage error: %s", request.request_id, failure)
            response = self._status(request, storage_error(failure))
        except Exception:
            log.exception("request %s failed", request.request_id)
            message = (
                f"an error on the server (request id {request.request_id}) has prevented the request from succeeding"
            )
            response = self._status(request, errors.internal(message))
        finally:
            warnings.stop(token)
        add_warnings(response, collected)
        return response

    def _status(self, request: ApiRequest, error: StatusError) -> Response:
        return status_response(request, error, self._encoder(request))
