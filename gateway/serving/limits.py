"""What every server of the gateway is configured with, as kube-apiserver's (k8s.io/apiserver
SecureServingInfo and Go's net/http)."""

from __future__ import annotations

MAX_HEADER_BYTES = 1 << 20  # k8s.io/apiserver SecureServingInfo: MaxHeaderBytes
HEADER_LIMIT = MAX_HEADER_BYTES + 4096  # what Go's net/http accepts: MaxHeaderBytes and 4 KiB of slack
KEEP_ALIVE_TIMEOUT = 75.0  # seconds an idle keep-alive connection is kept
GRACE = 2.0  # seconds in-flight requests get to finish at shutdown
