"""Service account tokens (upstream's pkg/serviceaccount and the serviceaccounts/token subresource):
signed JWTs that name a service account, issued through TokenRequest or kept in legacy Secrets,
authenticated as ``system:serviceaccount:NS:NAME``, and reviewed through TokenReview."""
