"""Admission webhooks (admissionregistration.k8s.io/v1): MutatingAdmissionWebhook and
ValidatingAdmissionWebhook, as k8s.io/apiserver's plugin/webhook packages (1.32) call them.

- ``configurations``: the webhooks of the stored configurations, compiled when they change;
- ``rules`` and ``selection``: which requests a webhook takes (rules, scope, matchPolicy,
  namespaceSelector, objectSelector);
- ``review``: the AdmissionReview sent and the answer read back and verified;
- ``client``: the HTTPS call (clientConfig url or Service through its EndpointSlices, caBundle,
  timeout);
- ``call``: one webhook's call with upstream's denials and failures (failurePolicy);
- ``objects`` and ``patch``: the objects' JSON per version, a JSONPatch applied in place;
- ``dispatch``, ``mutating``, ``validating``: the two plugins.
"""
