"""ClusterTrustBundleAttest (upstream's plugin/pkg/admission/certificates/ctbattest): creating or
updating a ClusterTrustBundle that names a signer needs ``attest`` on that signer (the resource
``signers`` of certificates.k8s.io, named by the signer or by its domain's ``<domain>/*``).

The new object's signer name is the one checked: validation refuses to change it. An update that
changes only what the garbage collector writes (owner references, finalizers) is not checked, so
that storage migration and garbage collection go on. Refusals are 403s worded as upstream's
admission.NewForbidden. Upstream's plugin does nothing while the ClusterTrustBundle feature gate is
off; the resource is not served then (runtimeconfig.py), so nothing reaches this one either.
"""

from __future__ import annotations

from protokube.gateway import errors
from protokube.gateway.admission.certificates import GROUP, authorized_for_signer
from protokube.gateway.auth.authorization import Authorizer
from protokube.gateway.auth.escalation import only_gc_fields_differ
from protokube.gateway.registry.admission import CREATE, UPDATE, Attributes, forbidden
from protokube.schema import jsonencode
from protokube.schema.registry import Resource

BUNDLES = "clustertrustbundles"


class ClusterTrustBundleAttest:
    def __init__(self, authorizer: Authorizer) -> None:
        self.authorizer = authorizer

    @staticmethod
    def handles(resource: Resource) -> bool:
        """Cluster trust bundles only."""
        return (resource.group, resource.plural) == (GROUP, BUNDLES)

    async def validate(self, attributes: Attributes) -> None:
        resource, bundle, old = attributes.resource, attributes.obj, attributes.old
        if attributes.operation not in (CREATE, UPDATE) or (resource.group, resource.plural) != (GROUP, BUNDLES):
            return
        if bundle is None or not bundle.spec.signerName:
            return
        if old is not None and only_gc_fields_differ(jsonencode.to_dict(bundle), jsonencode.to_dict(old)):
            return
        signer_name = bundle.spec.signerName
        if not authorized_for_signer(self.authorizer, attributes.user, "attest", signer_name):
            reason = f"user not permitted to attest for signerName {errors.go_quote(signer_name)}"
            raise forbidden(attributes, reason)
