"""A Kubernetes API server in your tests: the pytest plugin's fixtures (``kube_apiserver``,
``kube_apiserver_module``, ``kube_namespace``; protokube/testing/plugin.py) and ``Server``, the
context manager under them, for other frameworks, scripts and notebooks."""

from protokube.testing.server import Admin, Server, ServerError

__all__ = ["Admin", "Server", "ServerError"]
