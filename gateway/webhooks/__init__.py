"""Calling webhooks over HTTPS (client configurations, Service resolution, TLS, the transport): what
admission webhooks and CRD conversion webhooks share."""
