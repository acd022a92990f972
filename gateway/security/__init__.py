"""Transport security and who is asking: certificates, TLS, kubeconfigs; authentication,
impersonation and authorization live beside them (gateway/auth/)."""
