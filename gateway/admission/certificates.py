"""The admission plugins of CertificateSigningRequests (upstream's plugin/pkg/admission/certificates):

- CertificateSubjectRestriction: a request to the ``kubernetes.io/kube-apiserver-client`` signer may
  not ask for the ``system:masters`` organization (the group that may do everything);
- CertificateApproval: a write of the ``approval`` subresource (approve, deny) needs ``approve`` on
  the request's signer;
- CertificateSigning: a write of ``status`` that changes the certificate or the conditions needs
  ``sign`` on the request's signer.

A verb on a signer is the verb on the resource ``signers`` of certificates.k8s.io, named by the signer
name or by its domain's wildcard (``example.com/*``). Both checks read the signer name of the stored
request, which no write can change. Refusals are 403s worded as upstream's admission.NewForbidden.
"""

from __future__ import annotations

from cryptography.x509.oid import NameOID

from protokube.gateway import errors
from protokube.gateway.auth.authorization import Authorizer
from protokube.gateway.auth.rbac import Attributes as Asked
from protokube.gateway.objects.codec import Obj
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes
from protokube.gateway.registry.validation.certificates import parse_request
from protokube.gateway.user import MASTERS, UserInfo
from protokube.schema.registry import Resource

GROUP = "certificates.k8s.io"
CSRS = "certificatesigningrequests"
API_SERVER_CLIENT_SIGNER = "kubernetes.io/kube-apiserver-client"


def _csrs_only(resource: Resource) -> bool:
    """What the plugins here act on: certificate signing requests only."""
    return (resource.group, resource.plural) == (GROUP, CSRS)


def _is_csr(attributes: Attributes, subresource: str) -> bool:
    resource = attributes.resource
    return resource.group == GROUP and resource.plural == CSRS and attributes.subresource == subresource


def _forbidden(attributes: Attributes, reason: str) -> errors.StatusError:
    return errors.forbidden(GROUP, CSRS, attributes.name, reason)


def _issuance_changed(old: Obj, new: Obj) -> bool:
    """Whether the issued certificate or the conditions differ (what only the signer may write)."""
    status, before = new.status, old.status
    return status.certificate != before.certificate or list(status.conditions) != list(before.conditions)


def authorized_for_signer(authorizer: Authorizer, user: UserInfo, verb: str, signer_name: str) -> bool:
    """upstream's IsAuthorizedForSignerName: ``verb`` on the signer itself, else on ``<domain>/*``."""
    domain = signer_name.split("/")[0]
    return any(
        authorizer.authorize(Asked(user, verb, True, GROUP, "signers", name=name)).allowed
        for name in (signer_name, f"{domain}/*")
    )


class CertificateSubjectRestriction:
    handles = staticmethod(_csrs_only)

    async def validate(self, attributes: Attributes) -> None:
        if attributes.operation != CREATE or not _is_csr(attributes, "") or attributes.obj is None:
            return
        spec = attributes.obj.spec
        if spec.signerName != API_SERVER_CLIENT_SIGNER:
            return
        try:
            request = parse_request(spec.request)
        except ValueError:
            return  # validation, which runs first, has refused it
        organizations = request.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)
        if any(organization.value == MASTERS for organization in organizations):
            reason = f"use of {API_SERVER_CLIENT_SIGNER} signer with {MASTERS} group is not allowed"
            raise _forbidden(attributes, reason)


class CertificateApproval:
    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    handles = staticmethod(_csrs_only)

    async def validate(self, attributes: Attributes) -> None:
        if attributes.operation != UPDATE or not _is_csr(attributes, "approval") or attributes.old is None:
            return
        signer_name = attributes.old.spec.signerName
        if not authorized_for_signer(self.authorizer, attributes.user, "approve", signer_name):
            reason = f"user not permitted to approve requests with signerName {errors.go_quote(signer_name)}"
            raise _forbidden(attributes, reason)


class CertificateSigning:
    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    handles = staticmethod(_csrs_only)

    async def validate(self, attributes: Attributes) -> None:
        old, new = attributes.old, attributes.obj
        if attributes.operation != UPDATE or not _is_csr(attributes, "status") or old is None or new is None:
            return
        if not _issuance_changed(old, new):
            return
        signer_name = old.spec.signerName
        if not authorized_for_signer(self.authorizer, attributes.user, "sign", signer_name):
            reason = f"user not permitted to sign requests with signerName {errors.go_quote(signer_name)}"
            raise _forbidden(attributes, reason)
