"""protokube: a Kubernetes-compatible API server in Python, built protobuf-first.

The options that carry resource metadata are generated into gen/protokube/options;
``extend_path`` merges that directory into this package so both halves import as
``protokube.*`` (gen/ is put on sys.path by the virtual environment, see the Makefile).
"""

from pkgutil import extend_path

__path__ = extend_path(__path__, __name__)
