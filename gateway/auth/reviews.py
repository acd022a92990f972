"""Access reviews and SelfSubjectReview: create-only resources whose answer is computed from the
authorizer or the request's user, never stored (upstream's pkg/registry/authorization/* and
pkg/registry/authentication/selfsubjectreview).

- SubjectAccessReview: may the user in spec do what spec asks?
- SelfSubjectAccessReview: may I? (``kubectl auth can-i``)
- LocalSubjectAccessReview: SubjectAccessReview confined to the namespace in the URL.
- SelfSubjectRulesReview: what may I do in a namespace? (``kubectl auth can-i --list``)
- SelfSubjectReview: who am I? (``kubectl auth whoami``)

As upstream's create handler, the request's fields are recorded in managedFields before the review is
answered; the access reviews answer in the request's object (so with them), the rules review and
SelfSubjectReview in new objects (without them, and without the request's spec).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from protokube.gateway import errors
from protokube.gateway.auth.authorization import Authorizer
from protokube.gateway.auth.rbac import Attributes
from protokube.gateway.errors import FieldError
from protokube.gateway.objects.codec import Codec, Obj
from protokube.gateway.objects.view import ObjectView
from protokube.gateway.params import WriteOptions
from protokube.gateway.registry.ownership import Ownership
from protokube.gateway.registry.store import SERVER_MANAGER, check_namespace, now_seconds
from protokube.gateway.user import UserInfo
from protokube.schema import jsonencode

AUTHORIZATION, AUTHENTICATION = "authorization.k8s.io", "authentication.k8s.io"
# Computes the answer into the review (namespace of the URL, the requesting user); may raise.
Answer = Callable[[Obj, str, UserInfo], None]
EXACTLY_ONE = "exactly one of nonResourceAttributes or resourceAttributes must be specified"


class Review:
    """The storage of one review resource: create answers, nothing else."""

    def __init__(self, codec: Codec, answer: Answer, ownership: Ownership | None) -> None:
        self.codec = codec
        self.answer = answer
        self.ownership = ownership

    async def create(self, namespace: str, obj: Obj, options: WriteOptions) -> ObjectView:
        if namespace:  # as upstream's create handler: the URL's namespace, unless another is named
            check_namespace(obj, namespace)
            obj.metadata.namespace = namespace
        if self.ownership is not None:
            self.ownership.update(None, obj, options.field_manager or SERVER_MANAGER)
        self.answer(obj, namespace, options.user)
        return ObjectView.of(self.codec, obj, 0)


def review_answers(authorizer: Authorizer) -> dict[tuple[str, str, str], Answer]:
    """The answer of each review resource, by resource key."""
    access = AccessReviews(authorizer)
    return {
        (AUTHORIZATION, "v1", "subjectaccessreviews"): access.subject,
        (AUTHORIZATION, "v1", "selfsubjectaccessreviews"): access.self_subject,
        (AUTHORIZATION, "v1", "localsubjectaccessreviews"): access.local_subject,
        (AUTHORIZATION, "v1", "selfsubjectrulesreviews"): access.self_subject_rules,
        (AUTHENTICATION, "v1", "selfsubjectreviews"): self_subject_review,
    }


def _attribute_problems(spec: Any) -> list[FieldError]:
    """upstream's ValidateSelfSubjectAccessReviewSpec (resource xor non-resource attributes)."""
    has_resource, has_non_resource = spec.HasField("resourceAttributes"), spec.HasField("nonResourceAttributes")
    if has_resource and has_non_resource:
        return [
            FieldError.invalid(
                "spec.nonResourceAttributes",
                _go_struct(spec.nonResourceAttributes),
                "cannot be specified in combination with resourceAttributes",
            )
        ]
    if not has_resource and not has_non_resource:
        return [FieldError.invalid("spec.resourceAttributes", None, EXACTLY_ONE)]
    return []


def _subject_problems(spec: Any) -> list[FieldError]:
    """upstream's ValidateSubjectAccessReviewSpec: the self checks, and a user or group to ask about."""
    problems = _attribute_problems(spec)
    if not spec.user and not spec.groups:
        problems.append(FieldError.invalid("spec.user", spec.user, "at least one of user or group must be specified"))
    return problems


def _go_struct(attributes: Any) -> str:
    """A pointer to NonResourceAttributes as Go's %#v shows its value."""
    return f'authorization.NonResourceAttributes{{Path:"{attributes.path}", Verb:"{attributes.verb}"}}'


def _meta_is_empty(metadata: Any, *, except_namespace: bool = False) -> bool:
    """Whether Go would see an empty ObjectMeta (managedFields aside): protobuf clients send empty
    strings and a zero time as set fields, which JSON encoding leaves out."""
    found = jsonencode.to_dict(metadata)
    found.pop("managedFields", None)
    found.pop("creationTimestamp", None)  # null when zero; a set one is a value Go would see
    if except_namespace:
        found.pop("namespace", None)
    return not found and metadata.creationTimestamp.ByteSize() == 0


def _invalid(problems: list[FieldError]) -> errors.StatusError:
    """The access reviews' 422: upstream names the kind of the decoded review, whose kind is empty
    by then (``.authorization.k8s.io "" is invalid``)."""
    return errors.invalid(AUTHORIZATION, "", "", problems)


def _attributes(user: UserInfo, spec: Any) -> Attributes:
    """upstream's AuthorizationAttributesFrom."""
    if spec.HasField("resourceAttributes"):
        asked = spec.resourceAttributes
        return Attributes(
            user, asked.verb, True, asked.group, asked.resource, asked.subresource, asked.namespace, asked.name
        )
    asked = spec.nonResourceAttributes
    return Attributes(user, asked.verb, False, path=asked.path)


def _spec_user(spec: Any) -> UserInfo:
    extra = {key: tuple(value.items) for key, value in spec.extra.items()}
    return UserInfo(spec.user, spec.uid, tuple(spec.groups), extra)


class AccessReviews:
    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    def _decide(self, review: Obj, user: UserInfo) -> None:
        decision = self.authorizer.authorize(_attributes(user, review.spec))
        review.status.allowed = decision.allowed
        if decision.reason:
            review.status.reason = decision.reason

    def subject(self, review: Obj, namespace: str, requester: UserInfo) -> None:
        problems = _subject_problems(review.spec)
        if not _meta_is_empty(review.metadata):
            problems.append(FieldError.invalid("metadata", "", "must be empty"))
        if problems:
            raise _invalid(problems)
        self._decide(review, _spec_user(review.spec))

    def self_subject(self, review: Obj, namespace: str, requester: UserInfo) -> None:
        problems = _attribute_problems(review.spec)
        if not _meta_is_empty(review.metadata):
            problems.append(FieldError.invalid("metadata", "", "must be empty"))
        if problems:
            raise _invalid(problems)
        self._decide(review, requester)

    def local_subject(self, review: Obj, namespace: str, requester: UserInfo) -> None:
        spec = review.spec
        problems = _subject_problems(spec)
        if not _meta_is_empty(review.metadata, except_namespace=True):
            problems.append(FieldError.invalid("metadata", "", "must be empty except for namespace"))
        asked_namespace = spec.resourceAttributes.namespace
        if spec.HasField("resourceAttributes") and asked_namespace != review.metadata.namespace:
            detail = "must match metadata.namespace"
            problems.append(FieldError.invalid("spec.resourceAttributes.namespace", asked_namespace, detail))
        if spec.HasField("nonResourceAttributes"):
            value, detail = _go_struct(spec.nonResourceAttributes), "disallowed on this kind of request"
            problems.append(FieldError.invalid("spec.nonResourceAttributes", value, detail))
        if problems:
            raise _invalid(problems)
        if namespace != review.metadata.namespace:
            raise errors.bad_request(f"spec.resourceAttributes.namespace must match namespace: {namespace}")
        self._decide(review, _spec_user(spec))

    def self_subject_rules(self, review: Obj, namespace: str, requester: UserInfo) -> None:
        """upstream answers 400 without a namespace; rules come from every mode that can list them."""
        if not review.spec.namespace:
            raise errors.bad_request("no namespace on request")
        found = self.authorizer.rules(requester, review.spec.namespace)
        review.Clear()  # the answer is a new review: its status only
        status = review.status
        for rule in found.resource:
            status.resourceRules.add(
                verbs=rule["verbs"],
                apiGroups=rule["apiGroups"],
                resources=rule["resources"],
                resourceNames=rule.get("resourceNames", ()),
            )
        for rule in found.non_resource:
            status.nonResourceRules.add(verbs=rule["verbs"], nonResourceURLs=rule["nonResourceURLs"])
        status.incomplete = bool(found.errors)
        if found.errors:
            status.evaluationError = errors.aggregate(found.errors)


def self_subject_review(review: Obj, namespace: str, requester: UserInfo) -> None:
    """Who the requester is, as the server authenticated it (at this moment), in a new review."""
    review.Clear()
    review.metadata.creationTimestamp.seconds = now_seconds()
    info = review.status.userInfo
    info.username = requester.name
    if requester.uid:
        info.uid = requester.uid
    info.groups.extend(requester.groups)
    for key, values in requester.extra.items():
        info.extra[key].items.extend(values)
