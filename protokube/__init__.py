"""protokube: a Kubernetes-compatible API server in Python, built protobuf-first.

Every import name is under this package: ``protokube.gateway`` (the HTTP API), ``protokube.server``
(the etcd-compatible storage), ``protokube.gen`` (the code generated from ``protokube.proto``).
"""

__version__ = "0.1.0"  # the distribution's version (pyproject.toml reads it from here)

from protokube import compiled as _compiled

_compiled.guard()  # compiled modules out of date: their sources run instead
