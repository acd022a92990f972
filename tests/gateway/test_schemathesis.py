"""schemathesis against our own OpenAPI v3 documents, over a running server (robustness): requests
generated from every operation's parameters and bodies, valid and not; no answer may be a 5xx, and
every documented answer (200, 201, 202) must have the documented content type and match its schema.

Upstream documents only its success codes, so 4xx answers are not checked against a schema, and
watches (streams) are read as lists (the `watch` parameter is dropped; /watch/ paths and the proxy
and connect subresources, which stream or hold connections, are left out). Where upstream itself
answers outside its schema, so do we: ComponentStatus has `"creationTimestamp": null` (a zero
metav1.Time in Go's JSON), as have the review kinds' answers (TokenReview, SubjectAccessReview, …).

`make test` tries a few cases per operation of four groups; `make fuzz` more (SCHEMATHESIS_EXAMPLES) of every group.
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Iterator

import pytest
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from .helpers import GatewayProcess

pytestmark = pytest.mark.slow_module  # minutes: taken first by parallel workers (tests/conftest.py)

QUICK_GROUPS = ("api/v1", "apis/apps/v1", "apis/batch/v1", "apis/rbac.authorization.k8s.io/v1")
ALL_GROUPS = (
    *QUICK_GROUPS,
    *(
        f"apis/{group}"
        for group in (
            "admissionregistration.k8s.io/v1",
            "apiextensions.k8s.io/v1",
            "apiregistration.k8s.io/v1",
            "authentication.k8s.io/v1",
            "authorization.k8s.io/v1",
            "autoscaling/v1",
            "autoscaling/v2",
            "certificates.k8s.io/v1",
            "coordination.k8s.io/v1",
            "discovery.k8s.io/v1",
            "events.k8s.io/v1",
            "flowcontrol.apiserver.k8s.io/v1",
            "networking.k8s.io/v1",
            "node.k8s.io/v1",
            "policy/v1",
            "scheduling.k8s.io/v1",
            "storage.k8s.io/v1",
        )
    ),
)
GROUPS = ALL_GROUPS if os.environ.get("SCHEMATHESIS_GROUPS") == "all" else QUICK_GROUPS
EXAMPLES = int(os.environ.get("SCHEMATHESIS_EXAMPLES", "3"))  # per operation, media type and mode
SKIPPED_PATHS = r"/watch/|/proxy|/(attach|exec|portforward|log)$"
# Objects upstream answers with "creationTimestamp": null (its schema says string).
NULL_TIMESTAMPS = ("componentstatuses", "tokenreviews", "subjectaccessreviews", "selfsubject")


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GatewayProcess]:
    process = GatewayProcess(tmp_path_factory.mktemp("schemathesis")).start()
    yield process
    process.kill()


def _check(case, base_url: str) -> None:
    if case.query:
        case.query.pop("watch", None)
    response = case.call(base_url=base_url, timeout=30)
    checks = [not_a_server_error, content_type_conformance]
    if not any(part in case.path for part in NULL_TIMESTAMPS):
        checks.append(response_schema_conformance)
    case.validate_response(response, checks=checks)


def _failures(operation, base_url: str) -> list[str]:
    """Failures found in cases generated for one operation, valid ones and invalid ones, with a
    body of each media type it takes (a PATCH: JSON, merge, strategic merge, apply YAML and CBOR)."""
    found: list[str] = []
    media_types = operation.get_request_payload_content_types() or [None]
    for mode, media_type in itertools.product((GenerationMode.POSITIVE, GenerationMode.NEGATIVE), media_types):
        # An apply needs a fieldManager, which generated queries mostly leave out: give valid ones one.
        applying = mode == GenerationMode.POSITIVE and media_type and media_type.startswith("application/apply")
        query = {"fieldManager": "schemathesis"} if applying else None

        @given(case=operation.as_strategy(mode, media_type=media_type, query=query))
        @settings(
            max_examples=EXAMPLES,
            deadline=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
            database=None,
            derandomize=True,
        )
        def run(case) -> None:
            _check(case, base_url)

        try:
            run()
        except Unsatisfiable:  # nothing to make invalid (an operation without parameters or body)
            continue
        except (Exception, BaseExceptionGroup) as failure:  # what schemathesis found (with the request that shows it)
            found.append(f"{operation.label} ({mode.value}, {media_type}): {failure}"[:2000])
    return found


@pytest.mark.timeout(900)
@pytest.mark.parametrize("group", GROUPS)
def test_no_5xx_and_documented_answers_match_their_schemas(group: str, gateway: GatewayProcess) -> None:
    schema = schemathesis.openapi.from_url(f"{gateway.url}/openapi/v3/{group}").exclude(path_regex=SKIPPED_PATHS)
    operations = [result.ok() for result in schema.get_all_operations()]
    assert operations  # the document loaded, with its operations
    failures = [failure for operation in operations for failure in _failures(operation, gateway.url)]
    assert not failures, "\n\n".join(failures)
