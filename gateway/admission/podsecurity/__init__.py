"""PodSecurity admission (the Pod Security Standards as kube-apiserver 1.32 enforces them):
``levels`` (levels, versions, namespace labels), ``checks`` (the baseline and restricted checks),
``configuration`` (defaults and exemptions) and ``plugin`` (the admission plugin)."""

from __future__ import annotations

from typing import Any

from protokube.gateway.admission.podsecurity import configuration
from protokube.gateway.admission.podsecurity.plugin import PodSecurity
from protokube.gateway.watchcache.cacher import Cacher


def new(raw_configuration: Any, namespaces: Cacher, pods: Cacher | None) -> PodSecurity:
    """The plugin for the AdmissionConfiguration's PodSecurity entry (None: the defaults)."""
    return PodSecurity(configuration.parse(raw_configuration), namespaces, pods)
